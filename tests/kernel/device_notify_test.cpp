// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Device notifications with the Linux kernel client. GETDEVICEINFO grants Linux the
// notifications it asks for, so it caches each data server's address; when an administrator
// drains a data server (ganesha-ff drain), the MDS sends CB_NOTIFY_DEVICEID (CHANGE), and
// Linux must drop the cached device and ask for it again. Stock Ganesha's encoding (the type
// as the mask word, patch 0016) was answered NFS4ERR_INVAL, and Linux kept what it cached.
#include "admin_cli_support.hpp"
#include "kernel_test_support.hpp"

using namespace kernel_test;
namespace admin_cli = flexfiles::admin_cli;

TEST(KernelDeviceNotify, ADrainedDataServerIsAskedForAgain) {
    ASSERT_TRUE(fs::exists(admin_cli::binary())) << admin_cli::binary();
    ClusterOptions o = kernel_cluster();
    o.with_dbus = true;
    Cluster cluster(o);
    GaneshaServer& mds = cluster.mds();
    ASSERT_TRUE(admin_cli::wait_until_registered(*cluster.dbus()));
    GuestVm vm;
    vm.must(mount_v4(mds, "/mnt"));

    vm.must("dd if=/dev/urandom of=/mnt/a bs=64k count=4 conv=fsync 2>/dev/null");
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches && cat /mnt/a > /dev/null");
    const auto before = mount_op_counts(vm, "/mnt")["GETDEVICEINFO"];
    ASSERT_EQ(before, 2u) << "one GETDEVICEINFO per mirror's data server, then cached";

    // Drain the data server of mirror 0 (Data_Server Id = cluster index + 1).
    const auto placed = data_files_on_disk(cluster, mds_fileid(mds, "a"));
    ASSERT_EQ(placed.size(), 2u);
    const std::string id = std::to_string(placed[0].ds + 1);
    const auto drained = admin_cli::run(*cluster.dbus(), {"drain", id});
    ASSERT_TRUE(drained.ok()) << drained.output;

    // The file's layout still names the drained server (its data stays there): reading the
    // file again needs its address, which Linux must now ask for.
    const bool asked_again = eventually(
        [&] {
            vm.must("echo 3 > /proc/sys/vm/drop_caches && cat /mnt/a > /dev/null");
            return mount_op_counts(vm, "/mnt")["GETDEVICEINFO"] > before;
        },
        10s, 500ms);
    const auto after = mount_op_counts(vm, "/mnt")["GETDEVICEINFO"];
    observe(Observation() << "drain of data server " << id << ": GETDEVICEINFO " << before << " -> "
                          << after);
    EXPECT_TRUE(asked_again) << "Linux kept the drained data server's cached device: the "
                                "CB_NOTIFY_DEVICEID did not reach it";
    EXPECT_EQ(vm.must("dd if=/mnt/a bs=64k count=4 2>/dev/null | wc -c"), "262144\n");
}
