// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Debian 12's Linux kernel client against a FLEXFILES export, as a new user would use it:
// NFSv4.2 with pNFS (the guest's NFSv3 READ/WRITE/COMMIT go to the data servers, both
// mirrors get the bytes), POSIX namespace operations, and NFSv3 and NFSv4.0 mounts of the
// same export, whose I/O goes through the MDS.
#include "kernel_test_support.hpp"

using namespace kernel_test;

namespace {

std::string guest_md5(GuestVm& vm, const std::string& path) {
    return vm.must("md5sum " + path + " | cut -c1-32").substr(0, 32);
}

} // namespace

TEST(KernelInterop, Vers42UsesFlexFilesLayoutsAndBothMirrorsGetTheBytes) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm vm;
    vm.must(mount_v4(mds, "/mnt"));

    const auto before = guest_nfs3_calls(vm);
    // 16 MiB of random bytes, written with pNFS, flushed, then read back cold.
    vm.must("dd if=/dev/urandom of=/tmp/src bs=1M count=16 2>/dev/null && "
            "dd if=/tmp/src of=/mnt/big bs=1M conv=fsync 2>&1",
            300s);
    const std::string written = guest_md5(vm, "/tmp/src");
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(guest_md5(vm, "/mnt/big"), written) << "the bytes read back cold";

    const std::string stats = mount_stats_block(vm, "/mnt");
    EXPECT_NE(stats.find("pnfs=LAYOUT_FLEX_FILES"), std::string::npos) << stats;
    const auto after = guest_nfs3_calls(vm);
    ASSERT_GT(after.size(), kNfs3Commit);
    const auto diff = [&](std::size_t i) { return after[i] - (before.size() > i ? before[i] : 0); };
    EXPECT_GT(diff(kNfs3Write), 0u) << "the guest wrote to the data servers itself";
    EXPECT_GT(diff(kNfs3Read), 0u) << "the guest read from a data server itself";
    // Linux 6.1 asks for the layout inside its OPEN compound (layoutget on open), and it
    // counts its data-server READs and WRITEs in the MDS mount's per-op statistics too:
    // /proc/net/rpc/nfs's proc3 line (no NFSv3 mount here) is what it sent the data servers.
    auto ops = mount_op_counts(vm, "/mnt");
    EXPECT_GT(ops["GETDEVICEINFO"], 0u);
    EXPECT_GE(diff(kNfs3Write), 16u) << "16 MiB in data-server WRITEs of at most 1 MiB";
    observe(Observation() << "GETDEVICEINFO " << ops["GETDEVICEINFO"] << ", LAYOUTGET "
                          << ops["LAYOUTGET"] << ", LAYOUTCOMMIT " << ops["LAYOUTCOMMIT"]
                          << ", data-server WRITE " << diff(kNfs3Write) << ", READ "
                          << diff(kNfs3Read) << ", COMMIT " << diff(kNfs3Commit));

    // Both mirrors hold exactly the bytes the guest wrote.
    const auto placed = data_files_on_disk(cluster, mds_fileid(mds, "big"));
    ASSERT_EQ(placed.size(), 2u) << "one data file per mirror";
    for (const auto& f : placed) {
        EXPECT_EQ(fs::file_size(f.path), 16u << 20) << f.path;
        EXPECT_EQ(md5_file(f.path), written) << f.path;
    }
}

TEST(KernelInterop, PosixNamespaceOperationsBehaveAsOnALocalFileSystem) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm vm;
    vm.must(mount_v4(mds, "/mnt"));

    // Each line checks itself: the script stops at the first that fails, and says which.
    const std::string out = vm.run(R"SH(set -e
cd /mnt
step() { echo "step: $*"; }
step truncate-shrink
dd if=/dev/urandom of=f bs=1k count=300 2>/dev/null
truncate -s 100000 f; [ "$(stat -c %s f)" = 100000 ]
dd if=f bs=1 skip=99990 count=10 2>/dev/null | wc -c | grep -qx 10
step extend-reads-zeros
truncate -s 1048576 f; [ "$(stat -c %s f)" = 1048576 ]
[ "$(dd if=f bs=1k skip=500 count=4 2>/dev/null | tr -d '\000' | wc -c)" = 0 ]
step append
printf 'abc' >> f; [ "$(stat -c %s f)" = 1048579 ]
[ "$(tail -c 3 f)" = abc ]
step rename
mv f g; [ ! -e f ]; [ -f g ]
step hard-link
ln g h; [ "$(stat -c %h g)" = 2 ]; [ "$(stat -c %i g)" = "$(stat -c %i h)" ]
step symlink
ln -s g s; [ "$(readlink s)" = g ]; [ "$(tail -c 3 s)" = abc ]
step chmod
chmod 0600 g; [ "$(stat -c %a g)" = 600 ]
step mkdir-rmdir
mkdir d; mv h d/h; [ -f d/h ]; rm d/h; rmdir d; [ ! -e d ]
step remove
rm g s; [ -z "$(ls -A /mnt)" ]
echo all-steps-passed
)SH",
                                   300s)
                                .output;
    EXPECT_NE(out.find("all-steps-passed"), std::string::npos) << out;
    // Every file removed: no data file left on the data servers once the reaper ran.
    EXPECT_TRUE(eventually([&] { return all_data_files(cluster).empty(); }, 20s)) << joined(
        std::vector<std::string>(all_data_files(cluster).begin(), all_data_files(cluster).end()));
}

TEST(KernelInterop, Nfs3AndNfs40MountsOfTheSameExportGoThroughTheMds) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm vm;
    vm.must(mount_v4(mds, "/m42") + " && " + mount_v3(mds, "/m3") + " && " +
            mount_v4(mds, "/m40", 0));
    vm.must("dd if=/dev/urandom of=/tmp/a bs=64k count=20 2>/dev/null && "
            "dd if=/dev/urandom of=/tmp/b bs=64k count=20 2>/dev/null");
    vm.must("cp /tmp/a /m3/from-v3 && cp /tmp/b /m40/from-v40 && sync", 300s);
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(guest_md5(vm, "/m42/from-v3"), guest_md5(vm, "/tmp/a"));
    EXPECT_EQ(guest_md5(vm, "/m42/from-v40"), guest_md5(vm, "/tmp/b"));
    EXPECT_EQ(guest_md5(vm, "/m3/from-v40"), guest_md5(vm, "/tmp/b"));
    EXPECT_EQ(guest_md5(vm, "/m40/from-v3"), guest_md5(vm, "/tmp/a"));

    // The v3 and v4.0 writes went to the MDS, which put them on both mirrors.
    EXPECT_GT(mount_op_counts(vm, "/m40")["WRITE"], 0u);
    for (const char* name : {"from-v3", "from-v40"}) {
        const auto placed = data_files_on_disk(cluster, mds_fileid(mds, name));
        ASSERT_EQ(placed.size(), 2u) << name;
        EXPECT_EQ(md5_file(placed[0].path), md5_file(placed[1].path)) << name;
        EXPECT_EQ(fs::file_size(placed[0].path), 20u * 65536) << name;
    }
}

// GETDEVICEINFO grants the device notifications Linux asks for (CHANGE | DELETE), so the
// client caches each data server's address: once per device, not twice per file. It used
// to mark every device "no cache" and ask again with every layout.
TEST(KernelInterop, SmallFilesReuseTheCachedDevices) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm vm;
    vm.must(mount_v4(mds, "/mnt"));
    constexpr int kFiles = 40;
    vm.must("i=0; while [ $i -lt " + std::to_string(kFiles) +
                " ]; do echo file-$i > /mnt/small-$i || exit 1; i=$((i+1)); done",
            300s);
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(vm.must("cat /mnt/small-17"), "file-17\n");
    auto ops = mount_op_counts(vm, "/mnt");
    observe(Observation() << kFiles << " small files: GETDEVICEINFO " << ops["GETDEVICEINFO"]
                          << " (" << static_cast<double>(ops["GETDEVICEINFO"]) / kFiles
                          << " per file), OPEN " << ops["OPEN"] << ", LAYOUTGET "
                          << ops["LAYOUTGET"] << ", LAYOUTCOMMIT " << ops["LAYOUTCOMMIT"]
                          << ", LAYOUTRETURN " << ops["LAYOUTRETURN"]);
    EXPECT_LE(ops["GETDEVICEINFO"], cluster.ds_count())
        << "one GETDEVICEINFO per data server at most";
    // Every file made it to both mirrors.
    for (int i : {0, 17, kFiles - 1}) {
        const auto placed =
            data_files_on_disk(cluster, mds_fileid(mds, "small-" + std::to_string(i)));
        ASSERT_EQ(placed.size(), 2u);
        for (const auto& f : placed)
            EXPECT_EQ(fs::file_size(f.path), ("file-" + std::to_string(i) + "\n").size()) << f.path;
    }
}
