// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The MDS restarts while a kernel client writes through its layouts: the client reclaims
// its state in the grace period (RECLAIM_COMPLETE sent again), the write finishes, and the
// file holds every byte afterwards, on both mirrors. Once after a clean stop, once after a
// crash that catches a LAYOUTCOMMIT in flight: Linux sends that LAYOUTCOMMIT again, with
// the stateid of the previous instance, after it has reclaimed. And once across a
// failover: the MDS is killed and the standby of its pair, configured alike on the same
// storage (docs/failover.md), takes over its address; to the client that is a restart.
// After a crash (and on the standby) the file's RW layout is fenced before anyone is
// served, and Linux goes on with a new layout.
#include "failover_support.hpp"
#include "kernel_test_support.hpp"

#include <csignal>
#include <thread>

using namespace kernel_test;
using namespace flexfiles::failover_test;

namespace {

enum class Restart { clean, crash_during_layoutcommit, failover };

void write_across_a_restart(Restart how) {
    ClusterOptions o = kernel_cluster();
    const auto base = o.configure_mds;
    o.configure_mds = [base, how](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        base(mds, ds);
        mds.lease_lifetime = 15;
        mds.grace_period = 20;
        if (how == Restart::failover)
            make_failover_member(mds);
    };
    Cluster cluster(o);
    GaneshaServer* serving = &cluster.mds();
    GaneshaServer& mds = cluster.mds();
    GuestVm vm;
    vm.must(mount_v4(mds, "/mnt"));
    auto before = mount_op_counts(vm, "/mnt");

    // 24 MiB in 256 KiB writes, flushed every 2 MiB, so the restart lands mid-write.
    vm.must("dd if=/dev/urandom of=/tmp/src bs=1M count=24 2>/dev/null");
    vm.must(R"SH(( (start=$(date +%s); i=0
while [ $i -lt 12 ]; do
    dd if=/tmp/src of=/mnt/big bs=256k skip=$((i*8)) seek=$((i*8)) count=8 conv=notrunc,fsync 2>&1 || exit 1
    i=$((i+1))
done; echo $(( $(date +%s) - start )) > /tmp/secs) > /tmp/write.log 2>&1; echo $? > /tmp/rc ) &)SH");
    ASSERT_TRUE(eventually([&] { return mds_fileid(mds, "big") != 0; }, 60s));
    const std::uint64_t fileid = mds_fileid(mds, "big");
    ASSERT_TRUE(eventually(
        [&] {
            for (const auto& f : data_files_on_disk(cluster, fileid))
                if (fs::file_size(f.path) >= (4u << 20))
                    return true;
            return false;
        },
        120s, 200ms));

    // A restart with a grace period: the client's state must be reclaimed, not lost.
    mds.mutable_options().graceless = false;
    const auto restart_at = std::chrono::steady_clock::now();
    if (how == Restart::crash_during_layoutcommit) {
        // Frozen, the MDS holds the next flush's LAYOUTCOMMIT unanswered (the client writes
        // 2 MiB to the data servers in well under the pause), then dies with it.
        ASSERT_TRUE(mds.signal(SIGSTOP));
        std::this_thread::sleep_for(4s);
        ASSERT_TRUE(mds.signal(SIGKILL));
    }
    Takeover takeover;
    if (how == Restart::failover) {
        takeover = fail_over(mds);
        serving = takeover.standby.get();
    } else {
        mds.restart();
    }
    observe(Observation() << (how == Restart::failover ? "the standby took over in "
                                                       : "MDS restarted in ")
                          << std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - restart_at)
                                 .count()
                          << " ms");

    ASSERT_TRUE(eventually([&] { return vm.run("test -s /tmp/rc").ok(); }, 300s, 1s))
        << vm.run("cat /tmp/write.log").output;
    EXPECT_EQ(vm.must("cat /tmp/rc"), "0\n") << vm.must("cat /tmp/write.log");
    observe(Observation() << "the write took " << vm.run("cat /tmp/secs").output);
    auto after = mount_op_counts(vm, "/mnt");
    EXPECT_GT(after["RECLAIM_COMPLETE"], before["RECLAIM_COMPLETE"])
        << "the client reclaimed after the restart";
    // 12 flushes and a close: a LAYOUTCOMMIT sent again without end is a livelock.
    const auto commits = after["LAYOUTCOMMIT"] - before["LAYOUTCOMMIT"];
    observe(Observation() << "LAYOUTCOMMIT sent: " << commits);
    EXPECT_LT(commits, 100u);
    // The file's RW layout was out when the MDS went away: after a crash the new instance
    // fences it before serving (layout/rw_grant_marks.hpp); a clean stop fenced it already.
    EXPECT_EQ(serving->log_contains("1 file(s) were under RW layouts of the previous instance"),
              how != Restart::clean);
    EXPECT_FALSE(serving->log_contains("retries a failing operation"))
        << "the MDS saw a retry storm";

    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(vm.must("cmp /tmp/src /mnt/big && echo same", 120s), "same\n");
    const std::string want = vm.must("md5sum /tmp/src | cut -c1-32");
    const auto placed = data_files_on_disk(cluster, fileid);
    ASSERT_EQ(placed.size(), 2u);
    EXPECT_TRUE(eventually(
        [&] {
            return md5_file(placed[0].path) + "\n" == want &&
                   md5_file(placed[1].path) + "\n" == want;
        },
        60s, 1s))
        << "both mirrors hold the file";
}

} // namespace

TEST(KernelMdsRestart, AWriteAcrossAnMdsRestartReclaimsAndCompletes) {
    write_across_a_restart(Restart::clean);
}

TEST(KernelMdsRestart, ALayoutcommitCaughtInAnMdsCrashEndsAndTheWriteCompletes) {
    write_across_a_restart(Restart::crash_during_layoutcommit);
}

TEST(KernelMdsRestart, TheStandbyOfAKilledMdsTakesOverAndTheWriteCompletes) {
    write_across_a_restart(Restart::failover);
}
