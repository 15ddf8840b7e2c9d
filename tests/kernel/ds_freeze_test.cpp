// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A data server frozen (SIGSTOP) under a kernel client's write (issue #18): the client
// creates a file, the data server holding one of its mirrors is frozen, the client writes
// 8 MiB (dd bs=256k conv=fsync), and the data server resumes after an outage longer than
// the client's data-server timeouts. The write must finish, the bytes must be right, the
// client must not spin on LAYOUTCOMMIT, and the mirror that missed writes must be
// resilvered. Once, the second outage on the same MDS left the client sending LAYOUTCOMMIT
// about 2,000 times a second forever (NFS4ERR_OLD_STATEID after the stale mark's recall).
#include "kernel_test_support.hpp"

#include <csignal>

using namespace kernel_test;

namespace {

// How long after the data server resumes a write may still take to finish.
constexpr auto kAfterResume = 120s;
// LAYOUTCOMMITs one 8 MiB write may cost: a handful per layout, not thousands.
constexpr unsigned long kMaxLayoutCommits = 64;

struct OutageResult {
    long write_seconds = -1;
    unsigned long layoutcommits = 0;
    unsigned long layouterrors = 0;
    unsigned long layoutreturns = 0;
};

// One outage of `outage` on the data server of one of `name`'s mirrors during its write.
OutageResult write_through_an_outage(Cluster& cluster, GuestVm& vm, const std::string& name,
                                     std::chrono::seconds outage) {
    GaneshaServer& mds = cluster.mds();
    const std::string path = "/mnt/" + name;
    vm.must(": > " + path + " && dd if=/dev/urandom of=/tmp/" + name +
            " bs=256k count=32 2>/dev/null");
    const auto placed = data_files_on_disk(cluster, mds_fileid(mds, name));
    EXPECT_EQ(placed.size(), 2u) << name << ": one data file per mirror";
    if (placed.size() != 2)
        return {};
    const unsigned frozen = placed[0].ds;
    const auto ops_before = mount_op_counts(vm, "/mnt");

    const auto freeze_at = std::chrono::steady_clock::now();
    EXPECT_TRUE(cluster.ds(frozen).signal(SIGSTOP));
    // The write runs in the background; its status and duration land in files.
    vm.must("(start=$(date +%s); dd if=/tmp/" + name + " of=" + path +
            " bs=256k conv=fsync > /tmp/" + name + ".dd 2>&1; echo $? > /tmp/" + name +
            ".rc; echo $(( $(date +%s) - start )) > /tmp/" + name + ".secs) &");
    std::this_thread::sleep_until(freeze_at + outage);
    EXPECT_TRUE(cluster.ds(frozen).signal(SIGCONT));

    OutageResult r;
    const bool finished =
        eventually([&] { return vm.run("test -s /tmp/" + name + ".secs").ok(); }, kAfterResume, 1s);
    EXPECT_TRUE(finished) << name << ": the write did not finish " << kAfterResume.count()
                          << " s after the data server resumed; dd says: "
                          << vm.run("cat /tmp/" + name + ".dd").output;
    if (!finished)
        return r;
    EXPECT_EQ(vm.must("cat /tmp/" + name + ".rc"), "0\n") << vm.must("cat /tmp/" + name + ".dd");
    r.write_seconds = std::stol(vm.must("cat /tmp/" + name + ".secs"));

    auto ops = mount_op_counts(vm, "/mnt");
    r.layoutcommits = ops["LAYOUTCOMMIT"] - ops_before.at("LAYOUTCOMMIT");
    r.layouterrors = ops["LAYOUTERROR"] - ops_before.at("LAYOUTERROR");
    r.layoutreturns = ops["LAYOUTRETURN"] - ops_before.at("LAYOUTRETURN");
    EXPECT_LE(r.layoutcommits, kMaxLayoutCommits) << name << ": the client spun on LAYOUTCOMMIT";

    // Every byte, read back cold.
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(vm.must("cmp /tmp/" + name + " " + path + " && echo same", 120s), "same\n");

    // The mirror that missed writes is brought back: both data files equal the bytes.
    const std::string want = vm.must("md5sum /tmp/" + name + " | cut -c1-32");
    const bool resilvered = eventually(
        [&] {
            return md5_file(placed[0].path) + "\n" == want &&
                   md5_file(placed[1].path) + "\n" == want;
        },
        120s, 1s);
    EXPECT_TRUE(resilvered) << name << ": the mirrors differ: " << md5_file(placed[0].path) << " "
                            << md5_file(placed[1].path) << " want " << want;
    observe(Observation() << name << ": " << outage.count() << " s outage of "
                          << cluster.ds_info()[frozen].name << ": write took " << r.write_seconds
                          << " s, LAYOUTCOMMIT " << r.layoutcommits << ", LAYOUTERROR "
                          << r.layouterrors << ", LAYOUTRETURN " << r.layoutreturns
                          << ", resilvered " << (resilvered ? "yes" : "no"));
    return r;
}

} // namespace

// 40 s, then 100 s, then 200 s on the same MDS: the second outage is the one that hung.
TEST(KernelDsFreeze, ThreeOutagesInARowOnOneMds) {
    Cluster cluster(kernel_cluster());
    GuestVm vm;
    vm.must(mount_v4(cluster.mds(), "/mnt"));
    for (const auto outage : {40s, 100s, 200s}) {
        const std::string name = "out" + std::to_string(outage.count());
        write_through_an_outage(cluster, vm, name, outage);
        if (HasFailure())
            break;
    }
}

TEST(KernelDsFreeze, AHundredSecondOutageOnAFreshMds) {
    Cluster cluster(kernel_cluster());
    GuestVm vm;
    vm.must(mount_v4(cluster.mds(), "/mnt"));
    write_through_an_outage(cluster, vm, "fresh100", 100s);
}
