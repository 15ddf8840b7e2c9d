// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A mirror that misses a write through one MDS, on a namespace two MDSs share
// (docs/scale-out.md, "Stale mirrors"):
//   - the MDS whose write missed it marks it stale on the file's namespace object too
//     (flexfiles.stale.<mirror>), before its client hears success;
//   - the other MDS then leaves it out of its layouts and never reads from it, although
//     nothing reached it but the mark;
//   - the marking MDS resilvers it (no other MDS writes the file), removes the mark, and
//     the other MDS hands the mirror out again;
//   - an RW layout the other MDS granted meanwhile is fenced by the resilvering MDS before
//     it copies (its client could write the in-sync mirror behind its back).
//
// Cluster: as two_mds_test.cpp (single-node Ceph, 3 NFSv3 data servers, MDS 1 and MDS 2
// on one CephFS, Mirrors = 2, Map_In_Namespace), with DS_IO_Timeout = 1 s so that a write
// to a stopped data server fails fast. The writes go through the MDSs (NFSv4.2 WRITE, no
// layout); the reads and layouts are our pNFS client's.
#include "ceph_support.hpp"
#include "client/flex_file.hpp"
#include "client/pnfs_client.hpp"
#include "model/map_text.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace flexfiles::ceph_test;
using namespace std::chrono_literals;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;

namespace {

class TwoMdsStaleMirror : public CephFlexfilesCluster {
protected:
    void SetUp() override {
        mds2_ = &start_two_mds([](FlexfilesClusterSpec& s) {
            s.flexfiles_extra += "        DS_IO_Timeout = 1000;\n";
        });
    }

    std::optional<flexfiles::mds::DataFileMap> map_on_cephfs(const std::string& path) {
        CephClient behind(*ceph_);
        const auto text = behind.xattr(path, "user.flexfiles.map");
        if (!text)
            return std::nullopt;
        return flexfiles::mds::parse_map_text(*text).map;
    }

    bool stale_on_cephfs(const std::string& path, std::uint32_t mirror) {
        CephClient behind(*ceph_);
        return behind.xattr(path, "user.flexfiles.stale." + std::to_string(mirror)).has_value();
    }

    // A data file's bytes as its data server's disk holds them.
    std::vector<char> on_disk(const flexfiles::mds::DataFile& df) const {
        std::ifstream in(cluster_->ds_info().at(df.ds_id - 1).export_path / df.name,
                         std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

    GaneshaServer& ds_of(const flexfiles::mds::DataFile& df) { return cluster_->ds(df.ds_id - 1); }

    // PUTFH, WRITE (FILE_SYNC) through the MDS; its status.
    static std::optional<std::uint32_t> mds_write(Session& s, const OpenFile& f,
                                                  const std::vector<char>& data) {
        Compound c;
        c.putfh(f.fh).write(f.stateid, 0, data, FILE_SYNC4);
        return s.send(c).status_of(1);
    }

    // READs through the MDS until EOF (with the anonymous stateid, as an NFSv4 client
    // without an open may).
    static std::vector<char> mds_read(Session& s, const OpenFile& f) {
        std::vector<char> out;
        const stateid4 anonymous{};
        for (;;) {
            Compound c;
            c.putfh(f.fh).read(anonymous, out.size(), 128 * 1024);
            CompoundResult r = s.send(c);
            r.check("read");
            const READ4resok& ok = r.read(1);
            out.insert(out.end(), ok.data.data_val, ok.data.data_val + ok.data.data_len);
            if (ok.eof || ok.data.data_len == 0)
                return out;
        }
    }

    // The mirrors of a new READ layout of `path` from the session's MDS.
    static std::vector<std::vector<char>> read_layout_fhs(Session& s, const std::string& path) {
        fc::PnfsClient pnfs(s);
        auto f = fc::FlexFile::open(pnfs, path, {});
        EXPECT_EQ(f->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
        std::vector<std::vector<char>> out;
        for (const fc::FlexDataFile& d : f->data_files())
            out.push_back(d.ds.fh().bytes);
        f->layoutreturn(false);
        f->close();
        return out;
    }

    static std::vector<char> fh_of(const flexfiles::mds::DataFile& df) {
        return {df.fh.begin(), df.fh.end()};
    }

    GaneshaServer* mds2_ = nullptr;
};

} // namespace

TEST_F(TwoMdsStaleMirror, AMirrorOneMdsMarkedStaleIsLeftOutByTheOtherUntilResilvered) {
    const auto v1 = bytes(256 * 1024, 1);
    const auto v2 = bytes(256 * 1024, 2);
    auto one = open_session();
    OpenFile f1 = create_rw(*one, "/ff/degraded");
    ASSERT_EQ(mds_write(*one, f1, v1), std::optional<std::uint32_t>(NFS4_OK));
    const auto map = map_on_cephfs("/degraded");
    ASSERT_TRUE(map.has_value());
    ASSERT_EQ(map->files.size(), 2u);
    const flexfiles::mds::DataFile& away = map->files[0];

    auto two = session_of(*mds2_);
    EXPECT_EQ(read_layout_fhs(*two, "/ff/degraded").size(), 2u) << "both mirrors in sync";

    // Mirror 0's data server stops; MDS 1's write misses it and succeeds on mirror 1.
    const std::size_t mark = cluster_->mds().log_offset();
    ds_of(away).stop();
    ASSERT_EQ(mds_write(*one, f1, v2), std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_TRUE(stale_on_cephfs("/degraded", 0)) << "the mark is not on the namespace object";
    EXPECT_FALSE(stale_on_cephfs("/degraded", 1));

    // MDS 2 leaves mirror 0 out, although it saw no write fail.
    const auto while_stale = read_layout_fhs(*two, "/ff/degraded");
    ASSERT_EQ(while_stale.size(), 1u) << "MDS 2 hands out the stale mirror";
    EXPECT_EQ(while_stale[0], fh_of(map->files[1]));

    // Back, the data server still holds v1 on mirror 0 until the copy: MDS 2's reads
    // through it are v2 every time (they rotate over the mirrors it reads).
    OpenFile f2 = open_path(*two, "/ff/degraded", {});
    ds_of(away).start();
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(mds_read(*two, f2), v2) << "read " << i << " through MDS 2";

    // MDS 1 copies mirror 1 over mirror 0 and removes the mark; MDS 2 follows.
    EXPECT_TRUE(eventually([&] { return !stale_on_cephfs("/degraded", 0); }, 30s))
        << "the mark never left the namespace object";
    EXPECT_TRUE(cluster_->mds().log_contains("in sync again", mark));
    EXPECT_EQ(on_disk(map->files[0]), v2);
    EXPECT_EQ(on_disk(map->files[1]), v2);
    EXPECT_EQ(read_layout_fhs(*two, "/ff/degraded").size(), 2u)
        << "MDS 2 still leaves the resilvered mirror out";
    EXPECT_EQ(mds_read(*two, f2), v2);
    close_file(*two, f2);
    close_file(*one, f1);
}

TEST_F(TwoMdsStaleMirror, TheResilveringMdsFencesTheRwLayoutsOfTheOtherFirst) {
    const auto v1 = bytes(128 * 1024, 3);
    const auto v2 = bytes(128 * 1024, 4);
    auto one = open_session();
    OpenFile f1 = create_rw(*one, "/ff/fenced");
    ASSERT_EQ(mds_write(*one, f1, v1), std::optional<std::uint32_t>(NFS4_OK));
    const auto map = map_on_cephfs("/fenced");
    ASSERT_TRUE(map.has_value());
    ASSERT_EQ(map->files.size(), 2u);

    const std::size_t mark = cluster_->mds().log_offset();
    ds_of(map->files[0]).stop();
    ASSERT_EQ(mds_write(*one, f1, v2), std::optional<std::uint32_t>(NFS4_OK));
    close_file(*one, f1);

    // MDS 2's client holds an RW layout (the in-sync mirror only) when the data server
    // comes back: MDS 1 cannot know whether it writes, so it fences it before copying.
    auto two = session_of(*mds2_);
    fc::PnfsClient pnfs(*two);
    auto writer = fc::FlexFile::open(pnfs, "/ff/fenced", {}); // OPEN4_SHARE_ACCESS_BOTH
    ASSERT_EQ(writer->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_EQ(writer->data_files().size(), 1u) << "MDS 2 hands out the stale mirror";
    ds_of(map->files[0]).start();

    EXPECT_TRUE(eventually([&] { return !stale_on_cephfs("/fenced", 0); }, 30s))
        << "never resilvered";
    EXPECT_TRUE(cluster_->mds().log_contains("before resilvering", mark))
        << "resilvered without fencing MDS 2's RW layout";
    const fc::IoOutcome late = writer->try_write(0, bytes(4096, 5), fc::nfs3::Stable::file_sync);
    EXPECT_FALSE(late.ok()) << "the RW layout MDS 2 granted still writes after the copy";
    EXPECT_EQ(on_disk(map->files[0]), v2);
    EXPECT_EQ(on_disk(map->files[1]), v2);
    writer->layoutreturn(false);
    writer->close();
}
