// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The MDS's data path through the proxy (fsal_flexfiles/mds): a client without a layout
// (NFSv3 to the MDS) creates, writes, reads, truncates and removes files; the bytes live
// in data files on the data servers (checked on their export folders), the namespace
// object stays empty, and the map file -> data files survives an MDS restart.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2) + 3 NFSv3 data
// servers. GETATTR through the MDS is not checked for sizes here (wcc_getattr_test owns that).
#include "mds_test_support.hpp"

using namespace mds_test;

namespace {

void expect_no_errors(Cluster& cluster) {
    for (auto* server : cluster.servers()) {
        const auto errors = server->error_lines();
        EXPECT_TRUE(errors.empty()) << server->name() << " logged errors:\n" << joined(errors);
    }
}

} // namespace

// Create through the MDS places one data file per mirror on two distinct data servers,
// owned by the synthetic fencing owner; bytes written through the MDS are in both data
// files and read back equal; the namespace object holds none; remove removes them.
TEST(MdsDataPath, CreateWriteReadRemove) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());

    const Created f = create_file(client, "file-a");
    ASSERT_NE(f.fileid, 0U);
    auto placed = data_files_on_disk(cluster, f.fileid);
    ASSERT_EQ(placed.size(), 2U) << "one data file per mirror";
    EXPECT_NE(placed[0].ds, placed[1].ds) << "mirrors on distinct data servers";
    std::set<std::uint32_t> mirrors{placed[0].mirror, placed[1].mirror};
    EXPECT_EQ(mirrors, (std::set<std::uint32_t>{0, 1}));
    const std::uint32_t owner =
        kFencingMin + static_cast<std::uint32_t>(f.fileid % (kFencingMax - kFencingMin + 1));
    for (const auto& df : placed) {
        struct stat st {};
        ASSERT_EQ(stat(df.path.c_str(), &st), 0) << df.path;
        EXPECT_EQ(st.st_size, 0);
        EXPECT_EQ(st.st_mode & 07777, 0640U) << df.path;
        EXPECT_EQ(st.st_uid, owner) << df.path << ": owned by the file's fencing uid";
        EXPECT_EQ(st.st_gid, owner) << df.path << ": owned by the file's fencing gid";
    }
    EXPECT_TRUE(fs::exists(layout_store(mds))) << "the map is persisted in the layout store";

    // Bytes: 300 KiB from 0, then 10 KiB past a hole.
    const auto head = pattern(300 * 1024, 1);
    const auto tail = pattern(10 * 1024, 2);
    const std::uint64_t tail_at = 1024 * 1024;
    write_all(client, f.fh, 0, head);
    write_all(client, f.fh, tail_at, tail);

    EXPECT_EQ(read_all(client, f.fh, 0, head.size()), head);
    EXPECT_EQ(read_all(client, f.fh, tail_at, tail.size()), tail);
    // Past the end: nothing, EOF.
    const auto past = client.read(f.fh, tail_at + tail.size(), 4096);
    EXPECT_EQ(past.status, Nfs3Status::ok);
    EXPECT_TRUE(past.data.empty());
    EXPECT_TRUE(past.eof);
    // The hole reads as zeros.
    const auto hole = read_all(client, f.fh, head.size(), 4096);
    EXPECT_EQ(hole, std::vector<std::uint8_t>(4096, 0));

    std::vector<std::uint8_t> expected(tail_at + tail.size(), 0);
    std::copy(head.begin(), head.end(), expected.begin());
    std::copy(tail.begin(), tail.end(), expected.begin() + static_cast<std::ptrdiff_t>(tail_at));
    for (const auto& df : placed)
        EXPECT_EQ(read_whole(df.path), expected) << df.path << ": every mirror holds the bytes";
    EXPECT_EQ(fs::file_size(mds.export_path() / "file-a"), 0U)
        << "the namespace object on the MDS holds no bytes";
    // GETATTR through the MDS: the size of the data files (the GETATTR overlay puts it there).
    const auto got = client.getattr(f.fh);
    ASSERT_EQ(got.status, Nfs3Status::ok);
    EXPECT_EQ(got.attr.size, expected.size());

    // COMMIT goes to the mirrors too.
    EXPECT_EQ(client.commit(f.fh).status, Nfs3Status::ok);

    // Remove: the data files go with the last link.
    EXPECT_EQ(client.remove(client.root(), "file-a").status, Nfs3Status::ok);
    EXPECT_EQ(client.lookup(client.root(), "file-a").status, Nfs3Status::noent);
    for (const auto& df : placed)
        EXPECT_FALSE(fs::exists(df.path)) << df.path << " survived the remove";
    EXPECT_TRUE(all_data_files(cluster).empty());
    expect_no_errors(cluster);
}

// Files spread over the data servers (round-robin placement), each with its own data files.
// A READ larger than the data servers' Rsize goes to them in Rsize chunks and comes back
// whole, in order, with EOF where the file ends (the first chunk's buffer is the answer,
// later ones are appended to it).
TEST(MdsDataPath, ReadsLargerThanTheDataServersRsizeComeBackWhole) {
    MdsSettings s = with_mirrors(1);
    s.ds_extra = "            Rsize = 16384;\n";
    Cluster cluster(flexfiles_cluster(s));
    Nfs3Client client(cluster.mds().nfs3_url());
    const Created f = create_file(client, "chunked");
    const auto data = pattern(100 * 1024 + 123, 7);
    write_all(client, f.fh, 0, data);

    const auto whole = client.read(f.fh, 0, 256 * 1024);
    ASSERT_EQ(whole.status, Nfs3Status::ok);
    EXPECT_EQ(whole.data, data) << "7 chunks of 16 KiB, the last one short";
    EXPECT_TRUE(whole.eof);
    const auto middle = client.read(f.fh, 5000, 40000);
    ASSERT_EQ(middle.status, Nfs3Status::ok);
    EXPECT_EQ(middle.data, std::vector<std::uint8_t>(data.begin() + 5000, data.begin() + 45000));
    EXPECT_FALSE(middle.eof);
    expect_no_errors(cluster);
}

TEST(MdsDataPath, ManyFilesSpreadOverTheDataServers) {
    Cluster cluster(flexfiles_cluster(with_mirrors(1)));
    Nfs3Client client(cluster.mds().nfs3_url());
    std::set<unsigned> used;
    std::vector<Created> files;
    for (int i = 0; i < 6; ++i) {
        files.push_back(create_file(client, "f" + std::to_string(i)));
        const auto placed = data_files_on_disk(cluster, files.back().fileid);
        ASSERT_EQ(placed.size(), 1U);
        used.insert(placed[0].ds);
        const auto data = pattern(5000 + i, static_cast<unsigned>(i));
        write_all(client, files.back().fh, 0, data);
        EXPECT_EQ(read_whole(placed[0].path), data);
    }
    EXPECT_EQ(used.size(), 3U) << "6 files with one mirror each use all 3 data servers";
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(read_all(client, files[static_cast<std::size_t>(i)].fh, 0, 10000),
                  pattern(5000 + i, static_cast<unsigned>(i)));
    expect_no_errors(cluster);
}

// SETATTR(size) through the MDS truncates and extends every data file.
TEST(MdsDataPath, SizeChangesReachEveryDataFile) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    Nfs3Client client(cluster.mds().nfs3_url());
    const Created f = create_file(client, "sized");
    const auto data = pattern(100000, 3);
    write_all(client, f.fh, 0, data);
    const auto placed = data_files_on_disk(cluster, f.fileid);
    ASSERT_EQ(placed.size(), 2U);

    EXPECT_EQ(client.setattr(f.fh, size_attr(1000)).status, Nfs3Status::ok);
    for (const auto& df : placed)
        EXPECT_EQ(fs::file_size(df.path), 1000U) << df.path;
    EXPECT_EQ(read_all(client, f.fh, 0, 5000),
              std::vector<std::uint8_t>(data.begin(), data.begin() + 1000));

    EXPECT_EQ(client.setattr(f.fh, size_attr(5000)).status, Nfs3Status::ok);
    for (const auto& df : placed)
        EXPECT_EQ(fs::file_size(df.path), 5000U) << df.path;
    auto back = read_all(client, f.fh, 0, 6000);
    ASSERT_EQ(back.size(), 5000U);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 1000, back.begin()));
    EXPECT_EQ(std::vector<std::uint8_t>(back.begin() + 1000, back.end()),
              std::vector<std::uint8_t>(4000, 0));

    // A mode change never reaches the data files (they keep the fencing owner's mode).
    EXPECT_EQ(client.setattr(f.fh, mode_attr(0600)).status, Nfs3Status::ok);
    for (const auto& df : placed) {
        struct stat st {};
        ASSERT_EQ(stat(df.path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0640U);
    }
    EXPECT_EQ(fs::file_size(cluster.mds().export_path() / "sized"), 0U);
    expect_no_errors(cluster);
}

// Data files go with the file's last link, not before: removing one of two links keeps
// them (the second link is made on the MDS's disk, behind Ganesha's back).
TEST(MdsDataPath, DataFilesGoWithTheLastLink) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());
    const Created keep = create_file(client, "new");
    const Created gone = create_file(client, "old");
    write_all(client, keep.fh, 0, pattern(3000, 4));
    write_all(client, gone.fh, 0, pattern(3000, 5));
    ASSERT_EQ(data_files_on_disk(cluster, gone.fileid).size(), 2U);
    ASSERT_EQ(::link((mds.export_path() / "old").c_str(), (mds.export_path() / "old2").c_str()), 0);
    EXPECT_EQ(client.remove(client.root(), "old").status, Nfs3Status::ok);
    EXPECT_EQ(data_files_on_disk(cluster, gone.fileid).size(), 2U)
        << "a link remains: the data files stay";
    EXPECT_EQ(client.remove(client.root(), "old2").status, Nfs3Status::ok);
    EXPECT_TRUE(data_files_on_disk(cluster, gone.fileid).empty()) << "the last link went";
    EXPECT_EQ(data_files_on_disk(cluster, keep.fileid).size(), 2U);
    EXPECT_EQ(read_all(client, keep.fh, 0, 3000), pattern(3000, 4));
    expect_no_errors(cluster);
}

// The map survives an MDS restart: files written before are readable after, and removing
// them after the restart removes their data files.
TEST(MdsDataPath, FilesWrittenBeforeAnMdsRestartAreReadableAfter) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    std::vector<Created> files;
    {
        Nfs3Client client(mds.nfs3_url());
        for (int i = 0; i < 4; ++i) {
            files.push_back(create_file(client, "r" + std::to_string(i)));
            write_all(client, files.back().fh, 0, pattern(20000 + 1000 * i, 10 + i));
        }
    }
    std::map<std::uint64_t, std::vector<DataFileOnDisk>> before;
    for (const auto& f : files)
        before[f.fileid] = data_files_on_disk(cluster, f.fileid);

    mds.restart();
    EXPECT_TRUE(mds.log_contains("layout store")) << "the store is reopened";

    Nfs3Client client(mds.nfs3_url());
    for (int i = 0; i < 4; ++i) {
        const auto& f = files[static_cast<std::size_t>(i)];
        // The handle from before the restart is still valid (VFS handles are persistent).
        EXPECT_EQ(read_all(client, f.fh, 0, 30000), pattern(20000 + 1000 * i, 10 + i))
            << "file r" << i;
        EXPECT_EQ(data_files_on_disk(cluster, f.fileid).size(), 2U);
    }
    // Written after the restart: goes to the same data files, no new ones.
    write_all(client, files[0].fh, 20000, pattern(500, 99));
    const auto placed = data_files_on_disk(cluster, files[0].fileid);
    ASSERT_EQ(placed.size(), before[files[0].fileid].size());
    for (std::size_t i = 0; i < placed.size(); ++i)
        EXPECT_EQ(placed[i].path, before[files[0].fileid][i].path);
    for (const auto& df : placed)
        EXPECT_EQ(fs::file_size(df.path), 20500U);

    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(client.remove(client.root(), "r" + std::to_string(i)).status, Nfs3Status::ok);
    EXPECT_TRUE(all_data_files(cluster).empty()) << "the restarted MDS removed the data files";
    expect_no_errors(cluster);
}

// A hundred files: every one gets its own two data files (names from distinct fileids),
// and all of them go with their files. Prints what a create, a write and a remove through
// the MDS cost here (each create makes two data files and commits the map durably).
TEST(MdsDataPath, HundredFilesComeAndGo) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    Nfs3Client client(cluster.mds().nfs3_url());
    constexpr int kFiles = 100;
    using Clock = std::chrono::steady_clock;
    const auto data = pattern(4096, 77);
    std::vector<Created> files;
    Clock::duration creating{}, writing{}, removing{};
    for (int i = 0; i < kFiles; ++i) {
        auto t0 = Clock::now();
        files.push_back(create_file(client, "h" + std::to_string(i)));
        auto t1 = Clock::now();
        write_all(client, files.back().fh, 0, data);
        creating += t1 - t0;
        writing += Clock::now() - t1;
    }
    EXPECT_EQ(all_data_files(cluster).size(), 2U * kFiles);
    std::set<std::uint64_t> ids;
    for (const auto& f : files)
        ids.insert(f.fileid);
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(kFiles));
    for (int i = 0; i < kFiles; i += 17)
        EXPECT_EQ(read_all(client, files[static_cast<std::size_t>(i)].fh, 0, 8192), data);
    for (int i = 0; i < kFiles; ++i) {
        auto t0 = Clock::now();
        EXPECT_EQ(client.remove(client.root(), "h" + std::to_string(i)).status, Nfs3Status::ok);
        removing += Clock::now() - t0;
    }
    EXPECT_TRUE(all_data_files(cluster).empty());
    auto us = [](Clock::duration d) {
        return std::chrono::duration_cast<std::chrono::microseconds>(d).count() / kFiles;
    };
    std::printf("[ figures  ] per file, Mirrors = 2: CREATE %lld us, WRITE 4 KiB %lld us, "
                "REMOVE %lld us\n",
                static_cast<long long>(us(creating)), static_cast<long long>(us(writing)),
                static_cast<long long>(us(removing)));
    expect_no_errors(cluster);
}
