// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Reading Linux's /proc/self/mountstats: per-operation calls of one mount, by mount point.
#include "ff_kernel_client/mount_stats.hpp"

#include <gtest/gtest.h>

using flexfiles::kernel_client::parse_mount_op_counts;

namespace {

// Two mounts as Linux 6.1 prints them (abridged: the real blocks have more lines).
constexpr const char* kMountstats =
    "device rootfs mounted on / with fstype rootfs\n"
    "device 127.16.0.1:/ff mounted on /ff with fstype nfs4 statvers=1.1\n"
    "\topts:\trw,vers=4.2,rsize=1048576\n"
    "\tnfsv4:\tbm0=0xfdffafff,sessions,pnfs=LAYOUT_FLEX_FILES,lease_time=60\n"
    "\tper-op statistics\n"
    "\t        NULL: 1 1 0 44 24 47 15 66 0\n"
    "\t       WRITE: 32 32 0 33558528 4352 23078 1829 25122 0\n"
    "\t   LAYOUTGET: 3 3 0 492 468 0 5 7 0\n"
    "\tGETDEVICEINFO: 2 2 0 492 468 0 5 7 0\n"
    "\n"
    "device 127.16.0.1:/ff2 mounted on /ff2 with fstype nfs4 statvers=1.1\n"
    "\tper-op statistics\n"
    "\t   LAYOUTGET: 9 9 0 492 468 0 5 7 0\n";

} // namespace

TEST(MountStats, CountsTheNamedMountOnly) {
    auto ff = parse_mount_op_counts(kMountstats, "/ff");
    EXPECT_EQ(ff["WRITE"], 32u);
    EXPECT_EQ(ff["LAYOUTGET"], 3u) << "not /ff2's 9";
    EXPECT_EQ(ff["GETDEVICEINFO"], 2u) << "a name as wide as its column";
    EXPECT_EQ(ff.count("opts"), 0u) << "only lines under per-op statistics";
    EXPECT_EQ(parse_mount_op_counts(kMountstats, "/ff2")["LAYOUTGET"], 9u);
    EXPECT_TRUE(parse_mount_op_counts(kMountstats, "/mnt").empty());
}
