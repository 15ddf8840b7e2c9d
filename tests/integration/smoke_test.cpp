// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Smoke test: the servers a flexible-file deployment is made of start here and answer.
#include "client/compound.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <chrono>
#include <ctime>
#include <gtest/gtest.h>
#include <set>
#include <sys/stat.h>

using namespace flexfiles::harness;
using namespace std::chrono_literals;
namespace fc = flexfiles::client;

namespace {

std::vector<std::uint8_t> pattern(std::size_t size, std::uint8_t seed) {
    std::vector<std::uint8_t> out(size);
    for (std::size_t i = 0; i < size; ++i)
        out[i] = static_cast<std::uint8_t>(seed * 31 + i * 7);
    return out;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    return out;
}

void expect_no_errors(Cluster& cluster) {
    for (auto* server : cluster.servers()) {
        const auto errors = server->error_lines();
        EXPECT_TRUE(errors.empty()) << server->name() << " logged errors:\n" << joined(errors);
    }
}

} // namespace

// Three NFSv3 data servers (VFS) on three addresses each take CREATE + WRITE + GETATTR.
// The WRITE reply's post-op attributes are what LAYOUT_WCC carries to the MDS, so they
// must be there and right: size, mode, owner, times; GETATTR must agree with them.
TEST(Smoke, DataServersAnswerNfsv3CreateWriteGetattr) {
    ClusterOptions options;
    options.data_servers = 3;
    options.start_mds = false;
    Cluster cluster(options);
    ASSERT_EQ(cluster.ds_count(), 3U);

    std::set<std::string> addresses;
    for (const auto& info : cluster.ds_info())
        addresses.insert(info.address);
    EXPECT_EQ(addresses.size(), 3U) << "data servers must bind distinct addresses";

    for (unsigned i = 0; i < cluster.ds_count(); ++i) {
        GaneshaServer& ds = cluster.ds(i);
        SCOPED_TRACE(ds.name() + " at " + ds.address());
        const std::time_t before = std::time(nullptr);
        Nfs3Client client(ds.nfs3_url());

        const std::string name = "smoke-" + std::to_string(i);
        const auto data = pattern(4096 + 1000 * i, static_cast<std::uint8_t>(i));
        const auto created = client.create(client.root(), name, 0640);
        ASSERT_EQ(created.status, Nfs3Status::ok);
        ASSERT_TRUE(created.fh.has_value()) << "CREATE returned no filehandle";

        const auto written = client.write(*created.fh, 0, data, Nfs3Stable::file_sync);
        ASSERT_EQ(written.status, Nfs3Status::ok);
        EXPECT_EQ(written.count, data.size());
        EXPECT_EQ(written.committed, Nfs3Stable::file_sync);
        ASSERT_TRUE(written.file_wcc.after.has_value()) << "WRITE reply has no post-op attributes";
        const Nfs3Attr& post = *written.file_wcc.after;
        EXPECT_EQ(post.type, Nfs3Type::reg);
        EXPECT_EQ(post.size, data.size());
        EXPECT_GE(post.used, data.size());
        EXPECT_EQ(post.mode & 07777, 0640U);
        EXPECT_EQ(post.uid, 0U) << "No_Root_Squash: root's file stays root's";
        EXPECT_EQ(post.gid, 0U);
        EXPECT_GE(static_cast<std::time_t>(post.mtime.seconds), before - 1);
        EXPECT_LE(static_cast<std::time_t>(post.mtime.seconds), std::time(nullptr) + 1);
        EXPECT_GE(post.ctime, post.mtime);

        const auto got = client.getattr(*created.fh);
        ASSERT_EQ(got.status, Nfs3Status::ok);
        EXPECT_EQ(got.attr, post) << "GETATTR disagrees with the WRITE reply";

        // The server wrote the file where its export says.
        struct stat st {};
        const auto on_disk = ds.export_path() / name;
        ASSERT_EQ(stat(on_disk.c_str(), &st), 0) << on_disk;
        EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), data.size());
        EXPECT_EQ(static_cast<std::uint64_t>(st.st_ino), post.fileid);
        EXPECT_EQ(static_cast<std::uint32_t>(st.st_mtim.tv_sec), post.mtime.seconds);

        const auto read = client.read(*created.fh, 0, static_cast<std::uint32_t>(data.size() + 10));
        ASSERT_EQ(read.status, Nfs3Status::ok);
        EXPECT_EQ(read.data, data);
        EXPECT_TRUE(read.eof);

        EXPECT_EQ(client.remove(client.root(), name).status, Nfs3Status::ok);
        EXPECT_EQ(client.lookup(client.root(), name).status, Nfs3Status::noent);
        EXPECT_FALSE(std::filesystem::exists(on_disk));
    }
    expect_no_errors(cluster);
}

// The metadata server: FLEXFILES stacked over VFS, over the three data servers, serves
// NFSv4.2 (and not NFSv3, which this MDS does not enable). Our client opens a session
// (EXCHANGE_ID, CREATE_SESSION, SEQUENCE) and GETATTRs the root and the export's root.
TEST(Smoke, MetadataServerServesNfsv42) {
    ClusterOptions options;
    options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        mds.exports[0].pseudo = "/ff";
        FlexfilesOptions ff;
        ff.mirrors = 2;
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
    };
    Cluster cluster(options);
    GaneshaServer& mds = cluster.mds();
    EXPECT_TRUE(mds.log_contains("FLEXFILES export 1 (/ff)")) << "the export is not FLEXFILES";

    const auto v3 = rpc_null_ping(mds.address(), mds.nfs_port(), kNfsProgram, 3, 2000ms);
    EXPECT_FALSE(v3.ok) << "the MDS must not serve NFSv3";

    fc::SessionOptions so;
    so.host = mds.address();
    so.port = mds.nfs_port();
    so.minor_version = 2;
    auto session = fc::Session::open(so);
    ASSERT_NE(session, nullptr);

    fc::Compound c;
    c.putrootfh()
        .getattr({FATTR4_TYPE, FATTR4_FILEID})
        .lookup("ff")
        .getfh()
        .getattr({FATTR4_TYPE, FATTR4_MODE, FATTR4_FS_LAYOUT_TYPES});
    fc::CompoundResult r = session->send(c);
    ASSERT_NO_THROW(r.check("GETATTR of the root and /ff"));
    const fc::Fattr root = r.attrs(1);
    ASSERT_TRUE(root.type.has_value());
    EXPECT_EQ(*root.type, static_cast<uint32_t>(NF4DIR));
    const fc::Fattr ff = r.attrs(4);
    ASSERT_TRUE(ff.type.has_value());
    EXPECT_EQ(*ff.type, static_cast<uint32_t>(NF4DIR));
    EXPECT_FALSE(r.fh(3).empty());
    EXPECT_TRUE(session->close());

    expect_no_errors(cluster);
}
