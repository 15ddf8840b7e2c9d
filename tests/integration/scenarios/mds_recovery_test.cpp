// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the MDS's layout store makes recoverable (fsal_flexfiles/mds):
//   * an MDS killed in the middle of a create: the data files it was making are recorded
//     before they are made, so the restarted MDS queues them for removal and the reaper
//     removes them; the namespace object left without data files gets new ones on first
//     write;
//   * a regular file without data files (made behind the MDS's back) gets them on its
//     first write; data files of its fileid the store has no record of (old-form names, or
//     this export's own form planted behind its back) are never replaced or removed: an
//     unknown one under a name the create needs refuses the create (a collision).
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

TEST(MdsRecovery, FileWithoutDataFilesGetsThemOnFirstWriteLeavingUnknownDataFilesAlone) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    const std::uint64_t identity = store_identity(mds);
    ASSERT_NE(identity, 0u) << "the MDS did not log its export identity";
    const std::string planted = "bytes of a data file this export has no record of";

    // A regular file the MDS never placed (made on its disk directly), and on every data
    // server an old-form data file under each name its fileid had before identities.
    { std::ofstream(mds.export_path() / "adopted"); }
    struct stat st {};
    ASSERT_EQ(stat((mds.export_path() / "adopted").c_str(), &st), 0);
    const std::uint64_t fileid = st.st_ino;
    for (unsigned i = 0; i < cluster.ds_count(); ++i)
        for (std::uint32_t m = 0; m < 2; ++m)
            std::ofstream(legacy_data_file_path(cluster, i, fileid, m)) << planted;

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
    EXPECT_FALSE(mds.log_contains("leftover data file(s) of the same name", mark));
    unsigned holding = 0, untouched = 0;
    for (const auto& df : data_files_on_disk(cluster, fileid)) {
        const auto bytes = read_whole(df.path);
        if (bytes == data)
            ++holding;
        else if (std::string(bytes.begin(), bytes.end()) == planted)
            ++untouched;
        else
            ADD_FAILURE() << df.path << " is neither a new data file nor an untouched one";
    }
    EXPECT_EQ(holding, 2U) << "one data file per mirror holds the bytes";
    EXPECT_EQ(untouched, 2U * cluster.ds_count()) << "every old-form data file is left alone";
    EXPECT_EQ(data_files_on_disk(cluster, fileid, identity).size(), 2U);

    // Another such file, and on every data server a data file under each name of this
    // export's own form it could get, which the store never made: its first write is
    // refused (I/O error) and nothing planted is touched.
    { std::ofstream(mds.export_path() / "collides"); }
    ASSERT_EQ(stat((mds.export_path() / "collides").c_str(), &st), 0);
    const std::uint64_t other = st.st_ino;
    for (unsigned i = 0; i < cluster.ds_count(); ++i)
        for (std::uint32_t m = 0; m < 2; ++m)
            std::ofstream(data_file_path(cluster, i, identity, other, m)) << planted;
    const auto collides = client.lookup(client.root(), "collides");
    ASSERT_EQ(collides.status, Nfs3Status::ok);
    const auto w = client.write(collides.fh, 0, data, Nfs3Stable::file_sync);
    EXPECT_EQ(w.status, Nfs3Status::io);
    EXPECT_TRUE(mds.log_contains("has no record of making it: left alone, create refused", mark));
    const auto on_disk = data_files_on_disk(cluster, other);
    EXPECT_EQ(on_disk.size(), 2U * cluster.ds_count());
    for (const auto& df : on_disk) {
        const auto bytes = read_whole(df.path);
        EXPECT_EQ(std::string(bytes.begin(), bytes.end()), planted) << df.path;
    }
    // The collision (CRIT), and Ganesha's own line for the I/O error it answered.
    const auto errors = mds.error_lines({"has no record of making it", "converted to NFS3ERR_IO"});
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}
