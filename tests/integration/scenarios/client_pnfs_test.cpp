// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The client library as a pNFS flex-files client (tools/client: nfs3.hpp, flex_file.hpp)
// against real servers.
//
//   ClientNfs3.*  the NFSv3 data-server client alone against a harness data server, checked
//                 against the harness's own NFSv3 client (libnfs): same post-op attributes,
//                 NFS3ERR_ACCES after a chown, MOUNT.
//   ClientPnfs.*  1 MDS (FLEXFILES over VFS, Mirrors = 2) + 3 data servers: OPEN, LAYOUTGET,
//                 GETDEVICEINFO, NFSv3 WRITE to both mirrors, COMMIT, LAYOUT_WCC + GETATTR,
//                 LAYOUTCOMMIT, LAYOUTRETURN with error and statistics reports, CLOSE;
//                 READ layouts; a conflicting open that fences and recalls; the ff-client
//                 CLI's put and get.
#include "client/flex_file.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"
#include "client/xdr_stream.hpp"
#include "ff_harness/harness.hpp"

#include <gtest/gtest.h>

extern "C" {
#include "fsal_api.h" // FSAL_OBJ_OPS_HAS_LAYOUTERROR: the core patch for LAYOUTERROR
}

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace std::chrono_literals;
namespace fh = flexfiles::harness;
namespace fc = flexfiles::client;
namespace v3 = flexfiles::client::nfs3;

namespace {

constexpr std::size_t kMiB = 1u << 20;

std::vector<char> pattern(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<char>(seed * 131 + i * 7 + (i >> 12));
    }
    return v;
}

fh::Nfs3SetAttrs owned_by(std::uint32_t uid) {
    fh::Nfs3SetAttrs a;
    a.uid = uid;
    a.gid = uid;
    return a;
}

fc::FlexOpenOptions create_options(bool truncate = false) {
    fc::FlexOpenOptions o;
    o.create = true;
    o.truncate = truncate;
    return o;
}

fc::FileHandle to_fh(const fh::Nfs3Fh& f) {
    return fc::FileHandle{std::vector<char>(f.bytes.begin(), f.bytes.end())};
}

// The harness's fattr3 and ours must agree field by field.
void expect_same_attrs(const fh::Nfs3Attr& h, const v3::Fattr& c) {
    EXPECT_EQ(h.type, c.type);
    EXPECT_EQ(h.mode & 07777, c.mode & 07777);
    EXPECT_EQ(h.nlink, c.nlink);
    EXPECT_EQ(h.uid, c.uid);
    EXPECT_EQ(h.gid, c.gid);
    EXPECT_EQ(h.size, c.size);
    EXPECT_EQ(h.used, c.used);
    EXPECT_EQ(h.fileid, c.fileid);
    EXPECT_EQ(h.mtime.seconds, c.mtime.seconds);
    EXPECT_EQ(h.mtime.nseconds, c.mtime.nseconds);
    EXPECT_EQ(h.ctime.seconds, c.ctime.seconds);
    EXPECT_EQ(h.ctime.nseconds, c.ctime.nseconds);
}

// ---- The NFSv3 data-server client alone ----------------------------------------------

class ClientNfs3 : public ::testing::Test {
protected:
    void SetUp() override {
        fh::ClusterOptions o;
        o.data_servers = 1;
        o.start_mds = false;
        cluster_ = std::make_unique<fh::Cluster>(o);
    }

    std::unique_ptr<v3::Client> connect() {
        v3::ClientOptions o;
        o.host = cluster_->ds(0).address();
        o.port = cluster_->ds(0).nfs_port();
        o.timeout = 5s;
        return v3::Client::connect(o);
    }

    std::unique_ptr<fh::Cluster> cluster_;
};

TEST_F(ClientNfs3, MountGivesTheSameRootAsLibnfs) {
    fh::Nfs3Client theirs(cluster_->ds(0).nfs3_url());
    const fc::FileHandle root = v3::mount(cluster_->ds(0).address(), cluster_->ds(0).mnt_port(),
                                          cluster_->ds_info()[0].export_path.string());
    EXPECT_EQ(root, to_fh(theirs.root()));

    bool refused = false;
    try {
        v3::mount(cluster_->ds(0).address(), cluster_->ds(0).mnt_port(), "/no/such/export");
    } catch (const fc::NfsError& e) {
        refused = e.status() != 0;
    }
    EXPECT_TRUE(refused) << "MOUNT of a path that is not exported";
}

TEST_F(ClientNfs3, WriteReadCommitGetattrKeepThePostOpAttributes) {
    fh::Nfs3Client theirs(cluster_->ds(0).nfs3_url());
    const auto created = theirs.create(theirs.root(), "direct", 0640);
    ASSERT_EQ(created.status, fh::Nfs3Status::ok);
    ASSERT_TRUE(created.fh.has_value());
    const fc::FileHandle file = to_fh(*created.fh);
    auto ds = connect();
    const fc::AuthSys root{}; // the file belongs to root, mode 0640

    // UNSTABLE then FILE_SYNC writes, several in flight.
    const auto data = pattern(3 * 65536 + 100, 1);
    auto w0 =
        ds->write_async(root, file, 0, std::span(data).subspan(0, 65536), v3::Stable::unstable);
    auto w1 = ds->write_async(root, file, 65536, std::span(data).subspan(65536, 65536),
                              v3::Stable::unstable);
    auto w2 =
        ds->write_async(root, file, 131072, std::span(data).subspan(131072), v3::Stable::file_sync);
    const v3::WriteResult r0 = w0.get(), r1 = w1.get(), r2 = w2.get();
    for (const v3::WriteResult* r : {&r0, &r1, &r2}) {
        ASSERT_TRUE(r->ok()) << r->describe();
        ASSERT_TRUE(r->wcc.after.has_value()) << "WRITE reply without post-op attributes";
        EXPECT_EQ(r->wcc.after->mode & 07777, 0640u);
        EXPECT_EQ(r->wcc.after->uid, 0u);
    }
    EXPECT_EQ(r0.count, 65536u);
    EXPECT_EQ(r2.count, data.size() - 131072);
    EXPECT_EQ(r2.committed, v3::Stable::file_sync);

    const v3::CommitResult c = ds->commit(root, file);
    ASSERT_TRUE(c.ok()) << c.describe();
    ASSERT_TRUE(c.wcc.after.has_value());
    EXPECT_EQ(c.wcc.after->size, data.size());
    EXPECT_EQ(c.verf, r0.verf) << "no restart: the COMMIT verifier is the WRITE verifier";

    // Our GETATTR, COMMIT's post-op attributes and libnfs's GETATTR agree.
    const v3::GetattrResult ours = ds->getattr(root, file);
    ASSERT_TRUE(ours.ok()) << ours.describe();
    const fh::Nfs3GetattrResult libnfs = theirs.getattr(*created.fh);
    ASSERT_EQ(libnfs.status, fh::Nfs3Status::ok);
    expect_same_attrs(libnfs.attr, *ours.attrs);
    expect_same_attrs(libnfs.attr, *c.wcc.after);
    EXPECT_EQ(ours.attrs->size, data.size());

    // READ back through ours, in two pieces; the second ends the file.
    const v3::ReadResult a = ds->read(root, file, 0, 100000);
    const v3::ReadResult b = ds->read(root, file, 100000, 1u << 20);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_FALSE(a.eof);
    EXPECT_TRUE(b.eof);
    ASSERT_TRUE(b.attrs.has_value());
    EXPECT_EQ(b.attrs->size, data.size());
    std::vector<char> back = a.data;
    back.insert(back.end(), b.data.begin(), b.data.end());
    EXPECT_EQ(back, data);
}

TEST_F(ClientNfs3, FencedWriteGetsAccesWithoutAttributes) {
    fh::Nfs3Client theirs(cluster_->ds(0).nfs3_url());
    const auto created = theirs.create(theirs.root(), "fenced", 0640);
    ASSERT_TRUE(created.fh.has_value());
    ASSERT_EQ(theirs.setattr(*created.fh, owned_by(1000001)).status, fh::Nfs3Status::ok);
    const fc::FileHandle file = to_fh(*created.fh);
    auto ds = connect();
    fc::AuthSys owner;
    owner.uid = owner.gid = 1000001;
    const auto data = pattern(4096, 2);
    const v3::WriteResult ok = ds->write(owner, file, 0, data, v3::Stable::file_sync);
    ASSERT_TRUE(ok.ok()) << ok.describe();
    ASSERT_TRUE(ok.wcc.after.has_value());
    EXPECT_EQ(ok.wcc.after->uid, 1000001u);

    // Fence: root gives the data file to another synthetic owner.
    ASSERT_EQ(theirs.setattr(*created.fh, owned_by(1000002)).status, fh::Nfs3Status::ok);
    const v3::WriteResult denied = ds->write(owner, file, 0, data, v3::Stable::file_sync);
    ASSERT_TRUE(denied.replied()) << denied.describe();
    EXPECT_EQ(denied.status, v3::Status::acces) << denied.describe();
    EXPECT_FALSE(denied.wcc.after.has_value());
    // GETATTR still answers, and shows who owns the data file now.
    const v3::GetattrResult g = ds->getattr(owner, file);
    ASSERT_TRUE(g.ok()) << g.describe();
    EXPECT_EQ(g.attrs->uid, 1000002u);
    EXPECT_EQ(g.attrs->size, data.size());
}

// ---- The pNFS client against the FLEXFILES MDS -----------------------------------------

class ClientPnfs : public ::testing::Test {
protected:
    void SetUp() override {
        fh::ClusterOptions options;
        options.configure_mds = [](fh::ServerOptions& mds,
                                   const std::vector<fh::DataServerInfo>& ds) {
            mds.exports[0].pseudo = "/ff";
            fh::FlexfilesOptions ff;
            ff.mirrors = 2;
            mds.exports[0].fsal = fh::flexfiles_fsal_block(ds, ff);
        };
        cluster_ = std::make_unique<fh::Cluster>(options);
    }

    std::unique_ptr<fc::Session> open_session() {
        fc::SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = 2;
        o.timeout = 10s;
        return fc::Session::open(o);
    }

    // LAYOUTGET through `f`; a fatal failure if the MDS grants none.
    void must_get_layout(fc::FlexFile& f, std::uint32_t iomode) {
        const std::uint32_t st = f.layoutget(iomode);
        ASSERT_EQ(st, NFS4_OK) << fc::status_name(st);
    }

    const fh::DataServerInfo* ds_at(const fc::UniversalAddress& a) const {
        for (const auto& info : cluster_->ds_info()) {
            if (info.address == a.host && info.nfs_port == a.port) {
                return &info;
            }
        }
        return nullptr;
    }

    std::unique_ptr<fh::Cluster> cluster_;
};

TEST_F(ClientPnfs, Put4MiBThroughTheLayoutThenLayoutWccGetattrGivesTheExactSize) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/put4m", create_options(true));
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }

    const fc::FlexLayout& l = f->layout();
    ASSERT_EQ(l.mirrors.size(), 2u);
    ASSERT_EQ(f->data_files().size(), 2u);
    EXPECT_NE(f->data_files()[0].address, f->data_files()[1].address)
        << "the two mirrors are on distinct data servers";
    for (const fc::FlexDataFile& d : f->data_files()) {
        EXPECT_NE(ds_at(d.address), nullptr) << d.address.host << ":" << d.address.port;
        EXPECT_TRUE(d.ds.uid().has_value()) << "numeric ffds_user: " << d.ds.user;
        EXPECT_GT(d.wsize, 0u);
    }
    EXPECT_EQ(pnfs.getdeviceinfo_calls(), 2u) << "one GETDEVICEINFO per device";

    const auto data = pattern(4 * kMiB, 3);
    const fc::IoOutcome w = f->try_write(0, data, v3::Stable::unstable);
    ASSERT_TRUE(w.ok()) << w.describe();
    const fc::IoOutcome c = f->commit();
    ASSERT_TRUE(c.ok()) << c.describe();
    EXPECT_EQ(c.calls.size(), 2u) << "one COMMIT per data file";
    for (const fc::FlexDataFile& d : f->data_files()) {
        ASSERT_TRUE(d.attrs.has_value()) << "mirror " << d.mirror << ": no post-op attributes";
        EXPECT_EQ(d.attrs->size, data.size());
        EXPECT_EQ(d.attrs->uid, *d.ds.uid()) << "the data file belongs to the layout's owner";
        EXPECT_FALSE(d.uncommitted);
        EXPECT_EQ(d.write_bytes, data.size());
    }

    // The body the MDS gets: every Table 1 attribute of both data files.
    const fc::FlexLayoutWcc body = f->layout_wcc();
    ASSERT_EQ(body.mirrors.size(), 2u);
    for (const auto& m : body.mirrors) {
        ASSERT_EQ(m.data_servers.size(), 1u);
        EXPECT_EQ(m.data_servers[0].attrs.mask(), fc::layout_wcc_table1_attrs());
        EXPECT_EQ(m.data_servers[0].attrs.size, std::optional<std::uint64_t>(data.size()));
    }

    const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
    ASSERT_TRUE(g.wcc_status.has_value());
    EXPECT_EQ(*g.wcc_status, NFS4_OK) << fc::status_name(*g.wcc_status);
    EXPECT_EQ(g.compounds, 1);
    ASSERT_TRUE(g.attrs.size.has_value());
    EXPECT_EQ(*g.attrs.size, data.size()) << "GETATTR right after LAYOUT_WCC";
    ASSERT_TRUE(g.attrs.space_used.has_value());
    EXPECT_GE(*g.attrs.space_used, data.size());

    // Both mirrors hold the bytes.
    EXPECT_EQ(f->read_all(0), data);
    EXPECT_EQ(f->read_all(1), data);

    const std::optional<std::uint64_t> committed = f->layoutcommit();
    if (committed) {
        EXPECT_EQ(*committed, data.size());
    }
    EXPECT_NO_THROW(f->layoutreturn(false));
    EXPECT_FALSE(f->has_layout());
    f->close();

    // Another file through the same client: devices already known are not asked again.
    auto f2 = fc::FlexFile::open(pnfs, "/ff/put4m-2", create_options());
    ASSERT_EQ(f2->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_LE(pnfs.getdeviceinfo_calls(), 3u) << "3 data servers, one GETDEVICEINFO each";
    f2->layoutreturn(false);
    f2->close();
    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}

// LAYOUT_WCC gives the MDS the size first, so the LAYOUTCOMMIT that follows changes nothing
// it can see ("size unchanged"); the size must still be the file's after LAYOUTRETURN and
// CLOSE, when whatever the MDS keeps per layout is gone.
TEST_F(ClientPnfs, SizeSurvivesLayoutWccLayoutCommitReturnAndClose) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/survive", create_options(true));
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }
    const auto data = pattern(100000, 9);
    f->write(0, data);
    ASSERT_TRUE(f->commit().ok());
    const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
    ASSERT_EQ(g.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(g.attrs.size, std::optional<std::uint64_t>(data.size()));
    f->layoutcommit();
    f->layoutreturn(false);
    f->close();
    EXPECT_EQ(fc::stat_path(*s, "/ff/survive").attrs.size,
              std::optional<std::uint64_t>(data.size()))
        << "the size LAYOUT_WCC reported (and LAYOUTCOMMIT confirmed) was lost";
}

// Without LAYOUT_WCC the MDS asks the data servers itself, once what it knows of a file
// under a write layout is older than WCC_Max_Age (1 s by default): weak cache consistency.
TEST_F(ClientPnfs, GetattrWithoutLayoutWccAsksTheDataServersAfterWccMaxAge) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/nowcc", create_options(true));
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }
    const auto data = pattern(kMiB + 12345, 4);
    f->write(0, data, v3::Stable::file_sync);
    std::this_thread::sleep_for(1100ms);
    const fc::WccGetattr g = f->getattr(); // the MDS has to ask the data servers
    EXPECT_FALSE(g.wcc_status.has_value());
    ASSERT_TRUE(g.attrs.size.has_value());
    EXPECT_EQ(*g.attrs.size, data.size());
    f->layoutreturn(false);
    f->close();
}

TEST_F(ClientPnfs, LayoutCommitGivesTheNewSizeAndTheReportCountsTheIo) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/stats", create_options());
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }
    const auto data = pattern(300000, 5);
    f->write(0, data);
    ASSERT_TRUE(f->commit().ok());
    const auto newsize = f->layoutcommit();
    ASSERT_TRUE(newsize.has_value()) << "the file grew: LAYOUTCOMMIT says so";
    EXPECT_EQ(*newsize, data.size());

    const fc::FlexLayoutReturn report = f->return_report();
    ASSERT_EQ(report.iostats_report.size(), 2u);
    for (const fc::FlexIoStats& st : report.iostats_report) {
        EXPECT_EQ(st.write_bytes, data.size());
        EXPECT_GE(st.write_count, 1u);
        EXPECT_FALSE(st.uaddr.empty());
    }
    EXPECT_TRUE(report.ioerr_report.empty());
    EXPECT_NO_THROW(f->layoutreturn(false)); // an ff_layoutreturn4 with empty reports
    EXPECT_FALSE(f->has_layout());
    f->close();
}

// RFC 8435 ff_iostats4 with RFC 7862 io_info4 (64-bit ii_count), as the Linux client sends
// it. Ganesha 4.3's xdr_io_info4 reads a 32-bit count: a server decoding lrf_body with it
// refuses this body (BADXDR) and takes the 32-bit one.
TEST_F(ClientPnfs, LayoutReturnTakesRfcIoStatistics) {
    auto s = open_session();
    fc::PnfsOptions rfc_options;
    fc::PnfsClient pnfs(*s, rfc_options);
    auto f = fc::FlexFile::open(pnfs, "/ff/iostats", create_options());
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }
    f->write(0, pattern(70000, 10));
    try {
        f->layoutreturn(true);
    } catch (const fc::NfsError& e) {
        ADD_FAILURE() << "LAYOUTRETURN with RFC 8435/7862 ff_iostats4 refused: " << e.what();
        f->layoutreturn(false);
    }
    EXPECT_FALSE(f->has_layout());
    f->close();

    // The same report in stock Ganesha 4.3's 32-bit dialect (io_info4.ii_count as 32 bits)
    // no longer decodes: patch 0008 made the server follow RFC 7862.
    fc::PnfsOptions g_options;
    g_options.iostats_counts = fc::IoInfoCount::ganesha43_u32;
    fc::PnfsClient g(*s, g_options);
    auto h = fc::FlexFile::open(g, "/ff/iostats", fc::FlexOpenOptions{});
    ASSERT_EQ(h->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    h->write(0, pattern(70000, 11));
    try {
        h->layoutreturn(true);
        ADD_FAILURE() << "a 32-bit io_info4 count was accepted";
    } catch (const fc::NfsError& e) {
        EXPECT_EQ(e.status(), static_cast<std::uint32_t>(NFS4ERR_BADXDR)) << e.what();
        h->layoutreturn(false);
    }
    EXPECT_FALSE(h->has_layout());
    h->close();
}

TEST_F(ClientPnfs, ReadLayoutReadsEveryMirror) {
    auto s = open_session();
    const auto data = pattern(2 * kMiB + 7, 6);
    {
        fc::OpenOptions o;
        o.access = OPEN4_SHARE_ACCESS_BOTH;
        o.create = true;
        fc::OpenFile w = fc::open_path(*s, "/ff/readme", o);
        fc::write_all(*s, w, 0, data); // through the MDS
        fc::close_file(*s, w);
    }
    fc::PnfsClient pnfs(*s);
    fc::FlexOpenOptions ro;
    ro.access = OPEN4_SHARE_ACCESS_READ;
    auto f = fc::FlexFile::open(pnfs, "/ff/readme", ro);
    must_get_layout(*f, LAYOUTIOMODE4_READ);
    if (HasFatalFailure()) {
        return;
    }
    EXPECT_EQ(f->layout().iomode, static_cast<std::uint32_t>(LAYOUTIOMODE4_READ));
    for (std::size_t m = 0; m < f->layout().mirrors.size(); ++m) {
        EXPECT_EQ(f->read_all(m), data) << "mirror " << m;
    }
    for (const fc::FlexDataFile& d : f->data_files()) {
        ASSERT_TRUE(d.attrs.has_value()) << "READ replies carry post-op attributes";
        EXPECT_EQ(d.attrs->size, data.size());
        EXPECT_GE(d.read_ops, 1u);
    }
    // A READ layout does not allow writing through it: its uid is not the data files'
    // owner, and the data servers refuse its WRITEs (hostile_authority_test).
    f->layoutreturn(false);
    f->close();
}

TEST_F(ClientPnfs, ConflictingOpenFencesAndRecallsTheLayout) {
    auto a = open_session();
    auto b = open_session();
    std::atomic<int> recalls{0};
    fc::PnfsOptions po;
    po.on_recall = [&](const fc::FileHandle&) { recalls++; };
    fc::PnfsClient pnfs(*a, po);
    auto f = fc::FlexFile::open(pnfs, "/ff/shared", create_options());
    must_get_layout(*f, LAYOUTIOMODE4_RW);
    if (HasFatalFailure()) {
        return;
    }
    const auto data = pattern(65536, 7);
    f->write(0, data, v3::Stable::file_sync);
    const std::uint32_t old_uid = *f->data_files()[0].ds.uid();

    // Another client opens the file for writing: the MDS fences the data files (new owner)
    // and recalls A's layout.
    fc::OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    fc::OpenFile other = fc::open_path(*b, "/ff/shared", both);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!f->recalled() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(f->recalled()) << "no CB_LAYOUTRECALL within 10 s";
    EXPECT_GE(recalls.load(), 1);
    EXPECT_GE(pnfs.layout_recalls(), 1u);
    EXPECT_THROW(f->write(0, data), fc::LayoutRecalled);

    // The old credentials are fenced on the data servers: a raw write gets NFS3ERR_ACCES.
    const fc::FlexDataFile& d0 = f->data_files()[0];
    const auto ds = pnfs.data_server(d0.address);
    const v3::WriteResult denied =
        ds->write(d0.ds.credentials(), d0.ds.fh(), 0, data, v3::Stable::file_sync);
    EXPECT_EQ(denied.status, v3::Status::acces) << denied.describe();
    // GETATTR still works and shows the new owner, which LAYOUT_WCC can report.
    const fc::IoOutcome refreshed = f->refresh_attrs();
    ASSERT_TRUE(refreshed.ok()) << refreshed.describe();
    EXPECT_NE(f->data_files()[0].attrs->uid, old_uid);

    // Return the recalled layout; a new one carries the new owner and works again.
    f->layoutreturn(false);
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_NE(*f->data_files()[0].ds.uid(), old_uid);
    EXPECT_NO_THROW(f->write(0, data, v3::Stable::file_sync));
    f->layoutreturn(false);
    f->close();
    fc::close_file(*b, other);
}

// ---- The CLI ----------------------------------------------------------------------

std::filesystem::path ff_client_binary() {
    if (const char* env = std::getenv("FF_CLIENT_BIN")) {
        return env;
    }
    // <build>/tests/integration/<this test> -> <build>/tools/ff-client
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    return self.parent_path().parent_path().parent_path() / "tools" / "ff-client";
}

TEST_F(ClientPnfs, CliPutAndGetThroughTheLayout) {
    const auto bin = ff_client_binary();
    ASSERT_TRUE(std::filesystem::exists(bin)) << bin;
    const auto dir = cluster_->dir() / "cli";
    std::filesystem::create_directories(dir);
    const auto local = dir / "in.bin";
    const auto data = pattern(3 * kMiB + 5, 8);
    std::ofstream(local, std::ios::binary)
        .write(data.data(), static_cast<std::streamsize>(data.size()));

    const std::vector<std::string> base = {bin.string(),
                                           "--server",
                                           cluster_->mds().address(),
                                           "--port",
                                           std::to_string(cluster_->mds().nfs_port()),
                                           "--minor",
                                           "2"};
    auto run = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = base;
        argv.insert(argv.end(), args.begin(), args.end());
        return fh::run_command(argv, {}, 60s);
    };
    const fh::CommandResult put =
        run({"put", local.string(), "/ff/cli", "--wcc", "on", "--mirrors-check"});
    ASSERT_TRUE(put.ok()) << put.output;
    const bool layouts = put.output.find("via layout") != std::string::npos;
    if (layouts) {
        EXPECT_NE(put.output.find("LAYOUT_WCC: NFS4_OK"), std::string::npos) << put.output;
        EXPECT_NE(put.output.find("mirror 0: " + std::to_string(data.size()) + " bytes, identical"),
                  std::string::npos)
            << put.output;
        EXPECT_NE(put.output.find("mirror 1:"), std::string::npos) << put.output;
    }
    EXPECT_NE(put.output.find("size=" + std::to_string(data.size())), std::string::npos)
        << put.output;
    EXPECT_NE(put.output.find("size check: ok"), std::string::npos) << put.output;

    // Without LAYOUT_WCC the MDS has to learn the size from the data servers itself.
    const fh::CommandResult off = run({"put", local.string(), "/ff/cli-off", "--wcc", "off"});
    EXPECT_TRUE(off.ok()) << off.output;
    EXPECT_NE(off.output.find(layouts ? "LAYOUT_WCC: off" : "LAYOUT_WCC: not sent"),
              std::string::npos)
        << off.output;

    for (const std::string via : {"layout", "mds"}) {
        const auto out = dir / ("out-" + via + ".bin");
        const fh::CommandResult get = run({"get", "/ff/cli", out.string(), "--via", via});
        ASSERT_TRUE(get.ok()) << get.output;
        std::ifstream in(out, std::ios::binary);
        const std::vector<char> back((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
        EXPECT_EQ(back.size(), data.size()) << via;
        EXPECT_TRUE(back == data) << via;
    }

    // --trace names the pNFS ops and their statuses.
    const fh::CommandResult traced = run({"--trace", "layout", "/ff/cli"});
    if (layouts) {
        ASSERT_TRUE(traced.ok()) << traced.output;
        for (const char* op : {"LAYOUTGET", "GETDEVICEINFO", "LAYOUTRETURN"}) {
            EXPECT_NE(traced.output.find(op), std::string::npos) << op << "\n" << traced.output;
        }
        EXPECT_NE(traced.output.find("mirror 1"), std::string::npos) << traced.output;
    }

    // Usage errors exit 2.
    EXPECT_EQ(WEXITSTATUS(run({"put", local.string()}).wait_status), 2);
    EXPECT_EQ(WEXITSTATUS(run({"put", local.string(), "/ff/x", "--wcc", "maybe"}).wait_status), 2);
}

// The shell: commands from standard input on one session; `wcc off` and `wcc on` switch
// LAYOUT_WCC for the puts after them; an unknown command is reported and the shell goes
// on; quit ends it; the exit status is the first failure's.
TEST_F(ClientPnfs, CliShellSwitchesLayoutWccOffAndOn) {
    const auto bin = ff_client_binary();
    ASSERT_TRUE(std::filesystem::exists(bin)) << bin;
    const auto dir = cluster_->dir() / "shell";
    std::filesystem::create_directories(dir);
    const auto local = dir / "in.bin";
    const auto data = pattern(300000, 3);
    std::ofstream(local, std::ios::binary)
        .write(data.data(), static_cast<std::streamsize>(data.size()));
    const auto script = dir / "script";
    std::ofstream(script) << "wcc            # on by default\n"
                          << "wcc off\n"
                          << "put " << local.string() << " /ff/sh-off\n"
                          << "bogus\n"
                          << "wcc on\n"
                          << "put " << local.string() << " /ff/sh-on\n"
                          << "stat /ff/sh-off\n"
                          << "quit\n"
                          << "put " << local.string() << " /ff/never\n";

    const fh::CommandResult r = fh::run_command(
        {"/bin/sh", "-c", "exec \"$0\" --server \"$1\" --port \"$2\" shell < \"$3\"", bin.string(),
         cluster_->mds().address(), std::to_string(cluster_->mds().nfs_port()), script.string()},
        {}, 60s);
    EXPECT_EQ(WEXITSTATUS(r.wait_status), 2) << "bogus is the first failure\n" << r.output;
    const std::string& out = r.output;
    const auto at = [&out](const std::string& what) { return out.find(what); };
    ASSERT_NE(at("wcc on: put reports"), std::string::npos) << out;
    ASSERT_NE(at("wcc off: put sends no LAYOUT_WCC"), std::string::npos) << out;
    EXPECT_NE(at("unknown command 'bogus'"), std::string::npos) << out;
    // The puts: the first without LAYOUT_WCC, the second with it.
    const auto off = at("LAYOUT_WCC: off");
    const auto on = at("LAYOUT_WCC: NFS4_OK");
    ASSERT_NE(off, std::string::npos) << out;
    ASSERT_NE(on, std::string::npos) << out;
    EXPECT_LT(off, on) << out;
    EXPECT_EQ(out.find("LAYOUT_WCC: off", off + 1), std::string::npos) << out;
    EXPECT_NE(at("size=300000"), std::string::npos) << "stat after the puts\n" << out;

    // Nothing ran after quit.
    const auto stat = [&](const std::string& path) {
        return fh::run_command({bin.string(), "--server", cluster_->mds().address(), "--port",
                                std::to_string(cluster_->mds().nfs_port()), "stat", path},
                               {}, 60s);
    };
    EXPECT_EQ(WEXITSTATUS(stat("/ff/sh-on").wait_status), 0);
    const fh::CommandResult never = stat("/ff/never");
    EXPECT_EQ(WEXITSTATUS(never.wait_status), 1) << never.output;
    EXPECT_NE(never.output.find("NOENT"), std::string::npos) << never.output;
}

} // namespace
