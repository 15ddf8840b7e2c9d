// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The Linux kernel client (Debian 12's Linux 6.1 in a QEMU guest, testing/kernel_client/)
// against two MDSs on one CephFS namespace: the guest mounts MDS 1 at /a and MDS 2 at /b.
// A file written with pNFS through /a is read back cold through /b, byte for byte and from
// the data servers (a layout from MDS 2, which never saw the file's create), with the size
// MDS 2 answers; removed through /b, its data files leave the data servers.
//
// Cluster: a single-node Ceph, 3 NFSv3 data servers, MDS 1 and MDS 2 (FLEXFILES over CEPH,
// Mirrors = 2, Map_In_Namespace = true, rados_cluster).
#include "ceph_support.hpp"
#include "ff_kernel_client/guest_vm.hpp"
#include "ff_kernel_client/mount_stats.hpp"

using namespace flexfiles::ceph_test;
using namespace std::chrono_literals;
using flexfiles::kernel_client::GuestVm;
namespace fs = std::filesystem;

namespace {

class KernelTwoMds : public CephFlexfilesCluster {
protected:
    void SetUp() override { two_ = &start_two_mds(); }
    GaneshaServer* two_ = nullptr;
};

// "mkdir -p DIR && mount ..." of the MDS's export over NFSv4.2.
std::string mount(const GaneshaServer& mds, const std::string& dir) {
    return "mkdir -p " + dir + " && mount -t nfs4 -o vers=4.2,addr=" + mds.address() +
           ",clientaddr=10.0.2.15,port=" + std::to_string(mds.nfs_port()) + " " + mds.address() +
           ":/ff " + dir;
}

std::string md5(GuestVm& vm, const std::string& path) {
    return vm.must("md5sum " + path).substr(0, 32);
}

std::size_t data_files_on(const Cluster& cluster) {
    std::size_t n = 0;
    for (const auto& info : cluster.ds_info())
        for (const auto& e : fs::directory_iterator(info.export_path))
            n += e.path().filename().string().starts_with("ff-") ? 1 : 0;
    return n;
}

} // namespace

TEST_F(KernelTwoMds, AFileWrittenThroughOneMdsIsReadAndRemovedThroughTheOther) {
    GaneshaServer& two = *two_;
    GuestVm vm;
    vm.must(mount(cluster_->mds(), "/a"));
    vm.must(mount(two, "/b"));

    vm.must("dd if=/dev/urandom of=/tmp/src bs=1M count=8 2>/dev/null && "
            "dd if=/tmp/src of=/a/f bs=1M conv=fsync 2>&1",
            300s);
    const std::string written = md5(vm, "/tmp/src");
    EXPECT_EQ(data_files_on(*cluster_), 2u) << "one data file per mirror";
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");

    EXPECT_EQ(vm.must("stat -c %s /b/f"), "8388608\n") << "the size MDS 2 answers";
    EXPECT_EQ(md5(vm, "/b/f"), written) << "read back cold through MDS 2";
    // Linux asks for layouts inside its OPEN compounds; the devices of a layout from MDS 2
    // it asks MDS 2 about (one NFS client per server).
    const auto ops = flexfiles::kernel_client::mount_op_counts(vm, "/b");
    EXPECT_GT(ops.at("GETDEVICEINFO"), 0u) << "MDS 2 handed out a layout of MDS 1's file";

    vm.must("rm /b/f");
    const auto removed_at = std::chrono::steady_clock::now();
    EXPECT_TRUE(eventually([&] { return data_files_on(*cluster_) == 0; }, 60s))
        << "the data files MDS 1 made are still on the data servers";
    std::cout << "[ observed ] data files gone "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - removed_at)
                     .count()
              << " ms after rm" << std::endl;
}
