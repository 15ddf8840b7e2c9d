// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the MDS's layout store makes recoverable (fsal_flexfiles/mds):
//   * an MDS killed in the middle of a create: the data files it was making are recorded
//     before they are made, so the restarted MDS queues them for removal and the reaper
//     removes them; the namespace object left without data files gets new ones on first
//     write;
//   * a regular file without data files (made behind the MDS's back) gets them on its
//     first write, and a leftover data file of the same name on a data server is replaced.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4) + 3 NFSv3 data servers.
#include "mds_test_support.hpp"

#include <csignal>
#include <future>

using namespace mds_test;

TEST(MdsRecovery, CreateInterruptedByAnMdsCrashLeavesNothingBehind) {
    MdsSettings s = with_mirrors(3); // every data server holds a mirror, ds1 included
    s.io_timeout_ms = 3000;
    Cluster cluster(flexfiles_cluster(s));
    GaneshaServer& mds = cluster.mds();

    // Freeze ds1 so the create waits for it; kill the MDS while it waits.
    ASSERT_TRUE(cluster.ds(0).signal(SIGSTOP));
    auto create = std::async(std::launch::async, [&] {
        try {
            Nfs3Client client(mds.nfs3_url());
            return client.create(client.root(), "crashed", 0644).status;
        } catch (const std::exception&) {
            return Nfs3Status::serverfault; // the MDS died under the call: expected
        }
    });
    ASSERT_TRUE(eventually([&] { return fs::exists(mds.export_path() / "crashed"); }, 2s, 10ms))
        << "the namespace object was not created";
    std::this_thread::sleep_for(300ms); // the CREATEs are on their way to the data servers
    ASSERT_TRUE(mds.signal(SIGKILL));
    EXPECT_NE(create.get(), Nfs3Status::ok) << "the create cannot have completed";
    ASSERT_TRUE(cluster.ds(0).signal(SIGCONT));

    struct stat st {};
    ASSERT_EQ(stat((mds.export_path() / "crashed").c_str(), &st), 0);
    const std::uint64_t fileid = st.st_ino;
    EXPECT_FALSE(data_files_on_disk(cluster, fileid).empty())
        << "the interrupted create made no data file: the test did not interrupt anything";

    mds.restart();
    EXPECT_TRUE(mds.log_contains("data file(s) of creates interrupted by a restart queued for "
                                 "removal"));
    EXPECT_TRUE(eventually([&] { return data_files_on_disk(cluster, fileid).empty(); }, 30s))
        << "the reaper did not remove the interrupted create's data files";

    // The namespace object is still there, without data files: its first write places them.
    Nfs3Client client(mds.nfs3_url());
    const auto found = client.lookup(client.root(), "crashed");
    ASSERT_EQ(found.status, Nfs3Status::ok);
    const auto data = pattern(9000, 5);
    write_all(client, found.fh, 0, data);
    EXPECT_EQ(read_all(client, found.fh, 0, data.size()), data);
    const auto placed = data_files_on_disk(cluster, fileid);
    EXPECT_EQ(placed.size(), 3U);
    for (const auto& df : placed)
        EXPECT_EQ(read_whole(df.path), data) << df.path;
    const auto errors = mds.error_lines({"-> Down"});
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

TEST(MdsRecovery, FileWithoutDataFilesGetsThemOnFirstWriteReplacingLeftovers) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();

    // A regular file the MDS never placed (made on its disk directly), and on every data
    // server a leftover data file under each name it could get.
    { std::ofstream(mds.export_path() / "adopted"); }
    struct stat st {};
    ASSERT_EQ(stat((mds.export_path() / "adopted").c_str(), &st), 0);
    const std::uint64_t fileid = st.st_ino;
    for (unsigned i = 0; i < cluster.ds_count(); ++i)
        for (std::uint32_t m = 0; m < 2; ++m)
            std::ofstream(data_file_path(cluster, i, fileid, m)) << "stale bytes of a former file";

    const std::size_t mark = mds.log_offset();
    Nfs3Client client(mds.nfs3_url());
    const auto found = client.lookup(client.root(), "adopted");
    ASSERT_EQ(found.status, Nfs3Status::ok);
    // Nothing to read yet: no data files, no bytes.
    const auto empty = client.read(found.fh, 0, 100);
    EXPECT_EQ(empty.status, Nfs3Status::ok);
    EXPECT_TRUE(empty.data.empty());
    EXPECT_TRUE(empty.eof);

    const auto data = pattern(12345, 6);
    write_all(client, found.fh, 0, data);
    EXPECT_EQ(read_all(client, found.fh, 0, data.size() + 10), data);
    EXPECT_TRUE(mds.log_contains("leftover data file(s) of the same name", mark));
    unsigned holding = 0;
    for (const auto& df : data_files_on_disk(cluster, fileid)) {
        const auto bytes = read_whole(df.path);
        if (bytes == data)
            ++holding;
        else
            EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "stale bytes of a former file")
                << df.path << " is neither a new data file nor an untouched leftover";
    }
    EXPECT_EQ(holding, 2U) << "one data file per mirror holds the bytes";
    const auto errors = mds.error_lines();
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}
