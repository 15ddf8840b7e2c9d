// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Two MDSs active at once on one CephFS namespace and one fleet of data servers
// (docs/scale-out.md). Each has its own layout store and identity; a file's data-file map
// is on its namespace object (Map_In_Namespace), so a client of either MDS finds the data
// files of a file the other placed:
//   - a file written through MDS 1 is read through MDS 2 from the same data files, and
//     MDS 2 answers its size from the data servers (it has no LAYOUTCOMMIT or LAYOUT_WCC of
//     its own), also while MDS 1's client still writes under its RW layout;
//   - removing it through MDS 2 removes the data files MDS 1 made;
//   - a file placed by both at once (made behind their backs, written through both) ends
//     with one map holding both writes, and the losing placement's data files go;
//   - a fence by one MDS (new data-file owners, on the namespace object) reaches the
//     layouts the other hands out next;
//   - an open for write through one MDS fences the RW layouts the other granted, which it
//     finds by that MDS's writer mark on the namespace object.
//
// Cluster: a single-node Ceph (CephCluster), 3 NFSv3 data servers, MDS 1 at .1 and MDS 2
// at .2 exporting "/" of the CephFS at /ff (FLEXFILES over CEPH, Mirrors = 2,
// Map_In_Namespace = true, WCC_Max_Age = 200 ms); our NFSv4.2 pNFS client.
#include "ceph_support.hpp"
#include "client/flex_file.hpp"
#include "client/pnfs_client.hpp"
#include "model/map_text.hpp"

#include <fcntl.h>
#include <filesystem>
#include <thread>

using namespace flexfiles::ceph_test;
using namespace std::chrono_literals;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kWccMaxAge{200};

class TwoMdsOnCephfs : public CephFlexfilesCluster {
protected:
    void SetUp() override {
        mds2_ = &start_two_mds([](FlexfilesClusterSpec& s) {
            s.flexfiles_extra +=
                "        WCC_Max_Age = " + std::to_string(kWccMaxAge.count()) + ";\n";
        });
    }

    // The file's map as it is on the CephFS.
    std::optional<flexfiles::mds::DataFileMap> map_on_cephfs(const std::string& path) {
        CephClient behind(*ceph_);
        const auto text = behind.xattr(path, "user.flexfiles.map");
        if (!text)
            return std::nullopt;
        auto parsed = flexfiles::mds::parse_map_text(*text);
        EXPECT_TRUE(parsed.map.has_value()) << parsed.error;
        return parsed.map;
    }

    // Whether data file `name` exists on the data server with Id `ds_id`.
    bool on_data_server(std::uint64_t ds_id, const std::string& name) const {
        return fs::exists(cluster_->ds_info().at(ds_id - 1).export_path / name);
    }

    GaneshaServer* mds2_ = nullptr;
};

std::vector<std::vector<char>> data_file_fhs(const fc::FlexFile& f) {
    std::vector<std::vector<char>> out;
    for (const fc::FlexDataFile& d : f.data_files())
        out.push_back(d.ds.fh().bytes);
    return out;
}

// Writes `data` through an RW layout from the session's MDS and LAYOUTCOMMITs it; returns
// the data files' filehandles.
std::vector<std::vector<char>> write_file(Session& s, const std::string& path,
                                          const std::vector<char>& data) {
    fc::PnfsClient pnfs(s);
    auto f = fc::FlexFile::open(pnfs, path, create_new());
    EXPECT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    f->write(0, data);
    EXPECT_TRUE(f->commit().ok());
    f->layoutcommit();
    auto fhs = data_file_fhs(*f);
    f->layoutreturn(false);
    f->close();
    return fhs;
}

} // namespace

TEST_F(TwoMdsOnCephfs, AFileWrittenThroughOneMdsIsReadThroughTheOtherFromTheSameDataFiles) {
    const auto data = bytes(512 * 1024, 9);
    auto one = open_session();
    const auto written_fhs = write_file(*one, "/ff/shared", data);
    ASSERT_EQ(written_fhs.size(), 2u);

    const auto map = map_on_cephfs("/shared");
    ASSERT_TRUE(map.has_value()) << "the map is on the namespace object";
    ASSERT_EQ(map->files.size(), 2u);
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(std::vector<char>(map->files[m].fh.begin(), map->files[m].fh.end()),
                  written_fhs[m]);

    auto two = session_of(*mds2_);
    fc::PnfsClient pnfs(*two);
    auto f = fc::FlexFile::open(pnfs, "/ff/shared", {});
    EXPECT_EQ(f->getattr().attrs.size, std::optional<std::uint64_t>(data.size()))
        << "MDS 2 asks the data servers";
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(data_file_fhs(*f), written_fhs) << "MDS 2 hands out MDS 1's data files";
    EXPECT_EQ(f->read_all(0), data);
    EXPECT_EQ(f->read_all(1), data);
    f->layoutreturn(false);
    f->close();
}

TEST_F(TwoMdsOnCephfs, TheOtherMdsAnswersTheSizeTheDataServersHoldUnderAnRwLayout) {
    auto one = open_session();
    fc::PnfsClient pnfs1(*one);
    auto writer = fc::FlexFile::open(pnfs1, "/ff/growing", create_new());
    ASSERT_EQ(writer->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    writer->write(0, bytes(4096, 1));

    auto two = session_of(*mds2_);
    EXPECT_EQ(stat_path(*two, "/ff/growing").attrs.size, std::optional<std::uint64_t>(4096));

    // MDS 1's client writes on, telling nobody: within WCC_Max_Age MDS 2 asks again.
    writer->write(4096, bytes(100000, 2));
    std::optional<std::uint64_t> seen;
    EXPECT_TRUE(eventually(
        [&] {
            seen = stat_path(*two, "/ff/growing").attrs.size;
            return seen == std::optional<std::uint64_t>(104096);
        },
        kWccMaxAge * 5))
        << "MDS 2 said " << (seen ? std::to_string(*seen) : "no size");
    writer->layoutreturn(false);
    writer->close();
}

TEST_F(TwoMdsOnCephfs, RemovingAFileThroughTheOtherMdsRemovesItsDataFiles) {
    auto one = open_session();
    write_file(*one, "/ff/doomed", bytes(8192, 3));
    const auto map = map_on_cephfs("/doomed");
    ASSERT_TRUE(map.has_value());
    for (const auto& df : map->files)
        ASSERT_TRUE(on_data_server(df.ds_id, df.name)) << df.name;

    auto two = session_of(*mds2_);
    remove_path(*two, "/ff/doomed");
    for (const auto& df : map->files)
        EXPECT_TRUE(eventually([&] { return !on_data_server(df.ds_id, df.name); }, 10s))
            << df.name << " is still on data server " << df.ds_id;
}

TEST_F(TwoMdsOnCephfs, AFilePlacedByBothAtOnceEndsWithOneMapAndNoWriteIsLost) {
    {
        // Made behind both MDSs' backs: no data files yet, so the first WRITE through an
        // MDS places them.
        CephClient behind(*ceph_);
        const int fd = ceph_open(behind.get(), "/unplaced", O_CREAT | O_RDWR, 0666);
        ASSERT_GE(fd, 0);
        ceph_close(behind.get(), fd);
    }
    auto one = open_session();
    auto two = session_of(*mds2_);
    OpenOptions rw;
    rw.access = OPEN4_SHARE_ACCESS_BOTH;
    OpenFile f1 = open_path(*one, "/ff/unplaced", rw);
    OpenFile f2 = open_path(*two, "/ff/unplaced", rw);
    const auto first = bytes(4096, 1);
    const auto second = bytes(4096, 2);
    // Both MDSs place the file at once, each for a WRITE through it (FILE_SYNC).
    std::thread t([&] { write_file(*one, f1, 0, first); });
    write_file(*two, f2, 4096, second);
    t.join();

    const auto map = map_on_cephfs("/unplaced");
    ASSERT_TRUE(map.has_value());
    std::vector<char> both = first;
    both.insert(both.end(), second.begin(), second.end());
    for (Session* s : {one.get(), two.get()}) {
        fc::PnfsClient pnfs(*s);
        auto f = fc::FlexFile::open(pnfs, "/ff/unplaced", {});
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
        ASSERT_EQ(f->data_files().size(), map->files.size());
        for (std::size_t m = 0; m < map->files.size(); m++) {
            EXPECT_EQ(f->data_files()[m].ds.fh().bytes,
                      std::vector<char>(map->files[m].fh.begin(), map->files[m].fh.end()))
                << "both MDSs hand out the namespace's placement";
            EXPECT_EQ(f->read_all(m), both) << "mirror " << m << ": both writes are there";
        }
        f->layoutreturn(false);
        f->close();
    }

    // Only the winner's data files stay on the data servers.
    const auto in_map = [&](const fs::path& p) {
        for (const auto& df : map->files)
            if (p.filename() == df.name)
                return true;
        return false;
    };
    EXPECT_TRUE(eventually(
        [&] {
            for (const auto& info : cluster_->ds_info())
                for (const auto& e : fs::directory_iterator(info.export_path))
                    if (e.path().filename().string().starts_with("ff-") && !in_map(e.path()))
                        return false;
            return true;
        },
        10s))
        << "a data file of the losing placement is left on a data server";
    close_file(*one, f1);
    close_file(*two, f2);
}

TEST_F(TwoMdsOnCephfs, AFenceByOneMdsReachesTheLayoutsTheOtherHandsOut) {
    // A writes through an RW layout from MDS 1; C, a client of MDS 2, has had one too.
    auto a = open_session();
    fc::PnfsClient pa(*a);
    auto fa = fc::FlexFile::open(pa, "/ff/fenced", create_new());
    ASSERT_EQ(fa->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    fa->write(0, bytes(4096, 1));
    auto c = session_of(*mds2_);
    fc::PnfsClient pc(*c);
    auto fc1 = fc::FlexFile::open(pc, "/ff/fenced", {});
    ASSERT_EQ(fc1->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    const auto before = fc1->data_files().at(0).ds.uid();
    fc1->layoutreturn(false);

    // B opens it for write through MDS 1, which fences A's layout: new owners, published.
    auto b = open_session();
    OpenOptions rw;
    rw.access = OPEN4_SHARE_ACCESS_BOTH;
    OpenFile fb = open_path(*b, "/ff/fenced", rw);
    const auto map = map_on_cephfs("/fenced");
    ASSERT_TRUE(map.has_value());
    ASSERT_NE(std::optional<std::uint32_t>(map->files.at(0).fencing_uid), before)
        << "MDS 1 fenced the file";

    // MDS 2's next layout carries the new owner, and writes.
    ASSERT_EQ(fc1->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(fc1->data_files().at(0).ds.uid(),
              std::optional<std::uint32_t>(map->files.at(0).fencing_uid));
    const fc::IoOutcome w = fc1->try_write(0, bytes(4096, 2), fc::nfs3::Stable::file_sync);
    EXPECT_TRUE(w.ok()) << w.describe();
    fc1->layoutreturn(false);
    fc1->close();
    close_file(*b, fb);
    fa->close();
}

TEST_F(TwoMdsOnCephfs, AnOpenForWriteThroughOneMdsFencesTheRwLayoutsOfTheOther) {
    // A writes through an RW layout from MDS 1.
    auto a = open_session();
    fc::PnfsClient pa(*a);
    auto fa = fc::FlexFile::open(pa, "/ff/contended", create_new());
    ASSERT_EQ(fa->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(fa->try_write(0, bytes(4096, 1), fc::nfs3::Stable::file_sync).ok());

    // B opens it for write through MDS 2, which never granted A anything: it finds MDS 1's
    // writer mark on the namespace object and fences.
    auto b = session_of(*mds2_);
    OpenOptions rw;
    rw.access = OPEN4_SHARE_ACCESS_BOTH;
    OpenFile fb = open_path(*b, "/ff/contended", rw);
    EXPECT_TRUE(mds2_->log_contains("and 1 other MDS(s) may"));

    // A's layout writes no more; a new one from MDS 1 (the namespace's map) does.
    const fc::IoOutcome old = fa->try_write(0, bytes(4096, 2), fc::nfs3::Stable::file_sync);
    EXPECT_FALSE(old.ok()) << "A's old layout still writes after the fence";
    fa->layoutreturn(false);
    ASSERT_EQ(fa->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    const fc::IoOutcome fresh = fa->try_write(0, bytes(4096, 3), fc::nfs3::Stable::file_sync);
    EXPECT_TRUE(fresh.ok()) << fresh.describe();
    fa->layoutreturn(false);
    fa->close();
    close_file(*b, fb);
}
