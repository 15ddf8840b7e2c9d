// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The MDS's data path when data servers fail (fsal_flexfiles/mds): placement avoids a data
// server that is down, a create fails cleanly when fewer than Mirrors are Up, an MDS starts
// with a data server unreachable, a removal that failed while a data server was frozen
// (SIGSTOP) is retried by the reaper after SIGCONT, a write degrades (the failing mirror is
// marked stale) when one mirror fails and fails when all do, a read falls back to another
// mirror.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2, DS_IO_Timeout = 1 s)
// + 3 NFSv3 data servers; the tests drive the MDS over NFSv3.
#include "mds_test_support.hpp"

#include <algorithm>
#include <csignal>

using namespace mds_test;

namespace {

bool mds_noticed_down(Cluster& c, unsigned index, std::size_t from) {
    return mds_logged_health(c, index, {"-> Suspect", "-> Down"}, from, 15s);
}

bool mds_noticed_up(Cluster& c, unsigned index, std::size_t from) {
    return mds_logged_health(c, index, {"-> Up"}, from, 30s);
}

// Lines these tests provoke on purpose: the fleet reports a data server going Down as an
// error, and Ganesha's NFSv3 layer logs every I/O error it returns at CRIT.
void expect_mds_without_errors(Cluster& cluster) {
    const auto errors = cluster.mds().error_lines({"-> Down", "nfs3_Errno_verbose"});
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

} // namespace

// One data server stopped: new files go to the two others. Two stopped: a create fails
// with JUKEBOX (the data servers may come back: nothing is full), says why in the log
// (naming the file and the count), and leaves nothing: no namespace object, no data file.
// With a data server back, creates work again.
TEST(MdsFailures, PlacementAvoidsDownDataServersAndRefusesWhenTooFewAreUp) {
    Cluster cluster(flexfiles_cluster(fast_failures()));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());

    std::size_t mark = mds.log_offset();
    cluster.ds(0).stop();
    ASSERT_TRUE(mds_noticed_down(cluster, 0, mark)) << "the MDS did not notice ds1 going away";

    for (int i = 0; i < 3; ++i) {
        const Created f = create_file(client, "one-down-" + std::to_string(i));
        const auto placed = data_files_on_disk(cluster, f.fileid);
        ASSERT_EQ(placed.size(), 2U);
        for (const auto& df : placed)
            EXPECT_NE(df.ds, 0U) << "a data file was placed on the stopped data server";
        const auto data = pattern(7000, static_cast<unsigned>(i));
        write_all(client, f.fh, 0, data);
        EXPECT_EQ(read_all(client, f.fh, 0, 7000), data);
    }

    mark = mds.log_offset();
    cluster.ds(1).stop();
    ASSERT_TRUE(mds_noticed_down(cluster, 1, mark)) << "the MDS did not notice ds2 going away";
    const auto before = all_data_files(cluster);
    const auto refused = client.create(client.root(), "two-down", 0644);
    EXPECT_EQ(refused.status, Nfs3Status::jukebox);
    EXPECT_TRUE(mds.log_contains("cannot create file \"two-down\"", mark));
    EXPECT_TRUE(
        mds.log_contains("need 2 data servers that are Up and not drained, have 1 of 3", mark));
    EXPECT_EQ(client.lookup(client.root(), "two-down").status, Nfs3Status::noent);
    EXPECT_FALSE(fs::exists(mds.export_path() / "two-down")) << "the namespace object was left";
    EXPECT_EQ(all_data_files(cluster), before) << "a data file was left behind";

    mark = mds.log_offset();
    cluster.ds(0).start();
    ASSERT_TRUE(mds_noticed_up(cluster, 0, mark)) << "the MDS did not see ds1 come back";
    const Created back = create_file(client, "one-back");
    EXPECT_EQ(data_files_on_disk(cluster, back.fileid).size(), 2U);
    expect_mds_without_errors(cluster);
}

// A data server unreachable when the MDS starts does not refuse the export: the MDS says
// so and places files on the others.
TEST(MdsFailures, MdsStartsWithADataServerUnreachable) {
    ClusterOptions options = flexfiles_cluster(fast_failures());
    options.start_mds = false;
    Cluster cluster(options);
    cluster.ds(2).stop();
    GaneshaServer& mds = cluster.start_mds();

    EXPECT_TRUE(mds.log_contains(ds_label(cluster, 2)));
    EXPECT_TRUE(mds.log_contains("no new files are placed on it until it is Up"));
    EXPECT_TRUE(mds.log_contains("2 of 3 data server(s) Up, Mirrors = 2"));
    Nfs3Client client(mds.nfs3_url());
    for (int i = 0; i < 3; ++i) {
        const Created f = create_file(client, "f" + std::to_string(i));
        const auto placed = data_files_on_disk(cluster, f.fileid);
        ASSERT_EQ(placed.size(), 2U);
        for (const auto& df : placed)
            EXPECT_NE(df.ds, 2U);
        write_all(client, f.fh, 0, pattern(1000, 7));
        EXPECT_EQ(read_all(client, f.fh, 0, 1000), pattern(1000, 7));
    }
    expect_mds_without_errors(cluster);
}

// A removal that fails while a data server is frozen stays queued and is retried by the
// reaper once the data server answers again; it is logged, never dropped.
TEST(MdsFailures, ReaperRetriesARemovalThatFailedWhileADataServerWasStopped) {
    Cluster cluster(flexfiles_cluster(fast_failures()));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());
    const Created f = create_file(client, "doomed");
    write_all(client, f.fh, 0, pattern(50000, 3));
    const auto placed = data_files_on_disk(cluster, f.fileid);
    ASSERT_EQ(placed.size(), 2U);
    const DataFileOnDisk frozen = placed[0];
    const DataFileOnDisk healthy = placed[1];

    const std::size_t mark = mds.log_offset();
    ASSERT_TRUE(cluster.ds(frozen.ds).signal(SIGSTOP));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(client.remove(client.root(), "doomed").status, Nfs3Status::ok);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s)
        << "a frozen data server must not hold the REMOVE for long";
    EXPECT_EQ(client.lookup(client.root(), "doomed").status, Nfs3Status::noent);
    EXPECT_FALSE(fs::exists(healthy.path)) << "the healthy mirror's data file is removed at once";
    EXPECT_TRUE(fs::exists(frozen.path)) << "the frozen data server cannot have removed it";
    EXPECT_TRUE(mds.log_contains("queued for the reaper", mark) ||
                mds.log_contains("left to the reaper", mark));

    // Stay frozen long enough for the reaper to fail at least once more.
    std::this_thread::sleep_for(3s);
    EXPECT_TRUE(fs::exists(frozen.path));
    ASSERT_TRUE(cluster.ds(frozen.ds).signal(SIGCONT));
    EXPECT_TRUE(eventually([&] { return !fs::exists(frozen.path); }, 45s, 200ms))
        << frozen.path << " was never removed";
    EXPECT_TRUE(eventually(
        [&] {
            return mds.log_contains(frozen.path.filename().string(), mark) &&
                   mds.log_contains("failed attempt(s)", mark);
        },
        45s))
        << "the reaper did not report the retried removal";
    EXPECT_TRUE(mds.log_contains("removal attempt 1 failed", mark) ||
                mds.log_contains("left to the reaper", mark));
    EXPECT_TRUE(all_data_files(cluster).empty());
    expect_mds_without_errors(cluster);
}

// With one mirror's data server frozen: READ is served by the other mirror; WRITE fails
// with an I/O error naming the file and the data server. Once it answers again, writes
// work and every mirror holds the new bytes.
// A frozen data server: reads fall back to the other mirror; a write succeeds on the other
// mirror and marks the frozen one stale (mirror_resilver_test.cpp follows a stale mirror
// through); with both frozen a write fails, since no in-sync mirror took it. Once they
// resume, writes reach both mirrors and the data files end up equal.
TEST(MdsFailures, WriteDegradesWhenAMirrorFailsAndFailsWhenAllDo) {
    Cluster cluster(flexfiles_cluster(fast_failures()));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());
    const Created f = create_file(client, "mirrored");
    const auto data = pattern(40000, 8);
    write_all(client, f.fh, 0, data);
    auto placed = data_files_on_disk(cluster, f.fileid);
    ASSERT_EQ(placed.size(), 2U);
    std::sort(placed.begin(), placed.end(),
              [](const auto& a, const auto& b) { return a.mirror < b.mirror; });
    const unsigned frozen = placed[0].ds;
    const unsigned other = placed[1].ds;

    const std::size_t mark = mds.log_offset();
    ASSERT_TRUE(cluster.ds(frozen).signal(SIGSTOP));
    for (int i = 0; i < 3; ++i) // whichever mirror a read starts with
        EXPECT_EQ(read_all(client, f.fh, 0, data.size()), data) << "read " << i;

    auto expected = data;
    const auto head = pattern(4096, 9);
    std::copy(head.begin(), head.end(), expected.begin());
    const auto w = client.write(f.fh, 0, head, Nfs3Stable::file_sync);
    EXPECT_EQ(w.status, Nfs3Status::ok) << "mirror 1 took it: the write is durable there";
    EXPECT_TRUE(mds.log_contains(
        "file " + std::to_string(f.fileid) + ": mirror(s) 0 missed a WRITE", mark));
    EXPECT_TRUE(mds.log_contains(ds_label(cluster, frozen), mark));
    EXPECT_EQ(read_all(client, f.fh, 0, expected.size()), expected);

    ASSERT_TRUE(cluster.ds(other).signal(SIGSTOP));
    const auto lost = client.write(f.fh, 8192, pattern(4096, 11), Nfs3Stable::file_sync);
    EXPECT_EQ(lost.status, Nfs3Status::io) << "no in-sync mirror took it";
    EXPECT_FALSE(mds.log_contains("mirror(s) 1 missed", mark)) << "the last in-sync mirror stays";

    ASSERT_TRUE(cluster.ds(frozen).signal(SIGCONT));
    ASSERT_TRUE(cluster.ds(other).signal(SIGCONT));
    const auto fresh = pattern(40000, 10);
    EXPECT_TRUE(eventually(
        [&] {
            return client.write(f.fh, 0, fresh, Nfs3Stable::file_sync).status == Nfs3Status::ok;
        },
        45s, 500ms))
        << "writes never worked again after SIGCONT";
    EXPECT_EQ(read_all(client, f.fh, 0, fresh.size()), fresh);
    for (const auto& df : placed)
        EXPECT_TRUE(eventually([&] { return read_whole(df.path) == fresh; }, 30s)) << df.path;
    expect_mds_without_errors(cluster);
}
