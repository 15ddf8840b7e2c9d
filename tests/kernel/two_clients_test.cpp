// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Two Linux kernel clients (two guests at once) on one FLEXFILES export:
//  - one writes a growing file through its RW layout; the other's stat sees the size the
//    data servers hold within WCC_Max_Age (the Linux client sends no LAYOUT_WCC, so the
//    MDS must ask the data servers), and after the writer closes, the reader reads every
//    byte (close-to-open);
//  - a second client opens the file for write while the first holds an RW layout: the
//    first's layout is recalled (its data files fenced), its I/O goes on through a new
//    layout or the MDS, and no byte is lost or doubled.
#include "kernel_test_support.hpp"

using namespace kernel_test;

namespace {

constexpr unsigned kChunk = 64 * 1024;

// The guests' attribute caches are off: what stat shows is what the MDS answers now.
std::string mount_uncached(GaneshaServer& mds) {
    std::string m = mount_v4(mds, "/mnt");
    return m.replace(m.find("vers=4.2,"), 9, "vers=4.2,actimeo=0,");
}

std::uint64_t data_file_size(Cluster& cluster, std::uint64_t fileid) {
    std::uint64_t size = 0;
    for (const auto& f : data_files_on_disk(cluster, fileid))
        size = std::max<std::uint64_t>(size, fs::file_size(f.path));
    return size;
}

// In the background, the guest writes `chunks` random 64 KiB chunks to /mnt/<name> through
// one open, one a second, each flushed to the data servers (dd conv=fsync on the open
// descriptor), then closes it and writes /tmp/<name>.done. The bytes are in /tmp/<name>,
// the writer's messages in /tmp/<name>.log.
void start_chunk_writer(GuestVm& vm, const std::string& name, unsigned chunks) {
    const std::string n = std::to_string(chunks);
    vm.must("dd if=/dev/urandom of=/tmp/" + name + " bs=64k count=" + n + " 2>/dev/null");
    const std::string one_chunk =
        "dd if=/tmp/" + name + " bs=65536 skip=$i count=1 conv=fsync 2>/dev/null >&4";
    const std::string writer = "exec 4>/mnt/" + name + "; i=0; while [ $i -lt " + n + " ]; do " +
                               one_chunk + "; i=$((i+1)); sleep 1; done; " +
                               "exec 4>&-; echo closed > /tmp/" + name + ".done";
    vm.must("(" + writer + ") > /tmp/" + name + ".log 2>&1 &");
}

} // namespace

TEST(KernelTwoClients, AReaderSeesAGrowingFilesSizeAndEveryByteAfterClose) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm writer(GuestOptions{.name = "writer"});
    GuestVm reader(GuestOptions{.name = "reader"});
    writer.must(mount_uncached(mds));
    reader.must(mount_uncached(mds));

    // The writer keeps the file open and appends a chunk every second, then closes it.
    start_chunk_writer(writer, "grow", 24);
    ASSERT_TRUE(eventually([&] { return mds_fileid(mds, "grow") != 0; }, 30s));
    const std::uint64_t fileid = mds_fileid(mds, "grow");

    // Three times while it grows: the size on the data servers now, then the reader's.
    unsigned seen = 0;
    for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(
            eventually([&] { return data_file_size(cluster, fileid) >= (round + 2) * 2 * kChunk; },
                       60s, 200ms));
        const std::uint64_t on_ds = data_file_size(cluster, fileid);
        const auto asked = std::chrono::steady_clock::now();
        // WCC_Max_Age is 1 s: allow it, plus a guest's slow stat under emulation.
        const bool caught_up = eventually(
            [&] { return std::stoull(reader.must("stat -c %s /mnt/grow")) >= on_ds; }, 5s, 100ms);
        EXPECT_TRUE(caught_up) << "round " << round << ": the data servers hold " << on_ds
                               << " bytes, the reader still sees "
                               << reader.must("stat -c %s /mnt/grow");
        seen += caught_up;
        observe(Observation() << "round " << round << ": data servers " << on_ds
                              << " bytes, reader caught up after "
                              << std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - asked)
                                     .count()
                              << " ms");
    }
    EXPECT_EQ(seen, 3u);

    ASSERT_TRUE(eventually([&] { return writer.run("test -s /tmp/grow.done").ok(); }, 120s, 1s))
        << writer.run("cat /tmp/grow.log").output;
    const std::string want = writer.must("md5sum /tmp/grow | cut -c1-32");
    EXPECT_EQ(reader.must("stat -c %s /mnt/grow"), std::to_string(24 * kChunk) + "\n");
    EXPECT_EQ(reader.must("md5sum /mnt/grow | cut -c1-32"), want) << "close-to-open";
}

TEST(KernelTwoClients, ASecondWriterRecallsTheFirstsLayoutAndNoByteIsLost) {
    Cluster cluster(kernel_cluster());
    GaneshaServer& mds = cluster.mds();
    GuestVm first(GuestOptions{.name = "first"});
    GuestVm second(GuestOptions{.name = "second"});
    first.must(mount_v4(mds, "/mnt"));
    second.must(mount_v4(mds, "/mnt"));

    // The first client writes chunks 0..29 of the file over 30 s through one open.
    start_chunk_writer(first, "shared", 30);
    ASSERT_TRUE(eventually([&] { return mds_fileid(mds, "shared") != 0; }, 30s));
    const std::uint64_t fileid = mds_fileid(mds, "shared");
    ASSERT_TRUE(
        eventually([&] { return data_file_size(cluster, fileid) >= 4 * kChunk; }, 60s, 200ms));
    const auto log_from = mds.log_offset();

    // The second client opens it for write and writes chunks 40..49, away from the first's.
    second.must("dd if=/dev/urandom of=/tmp/b bs=64k count=10 2>/dev/null");
    second.must("dd if=/tmp/b of=/mnt/shared bs=65536 seek=40 conv=notrunc,fsync 2>&1", 300s);
    EXPECT_TRUE(eventually(
        [&] { return mds.log_contains("while 1 other client(s) hold RW layouts", log_from); }, 10s))
        << "the second open fenced the first client and recalled its layout";

    ASSERT_TRUE(eventually([&] { return first.run("test -s /tmp/shared.done").ok(); }, 180s, 1s))
        << first.run("cat /tmp/shared.log").output;
    EXPECT_EQ(first.must("cat /tmp/shared.log"), "");

    // Every byte of both, in place, read back cold by a third view (the second client).
    second.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(second.must("stat -c %s /mnt/shared"), std::to_string(50 * kChunk) + "\n");
    const auto region = [&](GuestVm& vm, unsigned skip, unsigned count) {
        return vm.must("dd if=/mnt/shared bs=65536 skip=" + std::to_string(skip) +
                       " count=" + std::to_string(count) + " 2>/dev/null | md5sum | cut -c1-32");
    };
    EXPECT_EQ(region(second, 0, 30), first.must("md5sum /tmp/shared | cut -c1-32"))
        << "the first client's 30 chunks";
    EXPECT_EQ(region(second, 40, 10), second.must("md5sum /tmp/b | cut -c1-32"))
        << "the second client's 10 chunks";
    EXPECT_EQ(second.must("dd if=/mnt/shared bs=65536 skip=30 count=10 2>/dev/null | "
                          "tr -d '\\000' | wc -c"),
              "0\n")
        << "the gap between them stays zeros";
    // The first client's own view agrees after its close.
    first.must("echo 3 > /proc/sys/vm/drop_caches");
    EXPECT_EQ(region(first, 0, 30), first.must("md5sum /tmp/shared | cut -c1-32"));
}
