// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The single-node Ceph the `ceph` scenarios run on (testing/harness: CephCluster) serves a
// CephFS that two independent clients see alike: what one writes, and the extended
// attributes it sets (where several metadata servers on one namespace keep a file's
// data-file map: Map_In_Namespace), the other reads back; and nothing is left running
// after it.
#include "ceph_support.hpp"

#include <cephfs/libcephfs.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <string>
#include <sys/xattr.h>
#include <vector>

using namespace flexfiles::ceph_test;

TEST(CephCluster, TwoClientsSeeOneFileSystemWithItsExtendedAttributes) {
    std::vector<pid_t> daemons;
    {
        CephCluster ceph;
        daemons = ceph.pids();
        ASSERT_EQ(daemons.size(), 4u) << "mon, osd, mgr, mds";
        std::cout << "[ observed ] single-node Ceph with CephFS active in "
                  << ceph.startup_time().count() << " ms" << std::endl;

        const std::string data(100000, 'x');
        const std::string map = "mirror 0: ds 3 ff-0001-m0; mirror 1: ds 5 ff-0001-m1";
        {
            CephClient a(ceph);
            ASSERT_EQ(ceph_mkdir(a.get(), "/namespace", 0755), 0);
            const int fd = ceph_open(a.get(), "/namespace/f", O_CREAT | O_RDWR, 0644);
            ASSERT_GE(fd, 0);
            ASSERT_EQ(ceph_write(a.get(), fd, data.data(), data.size(), 0),
                      static_cast<int>(data.size()));
            ASSERT_EQ(ceph_fsync(a.get(), fd, 0), 0);
            ASSERT_EQ(ceph_close(a.get(), fd), 0);
            ASSERT_EQ(ceph_setxattr(a.get(), "/namespace/f", "user.flexfiles.map", map.data(),
                                    map.size(), XATTR_CREATE),
                      0);
        }
        CephClient b(ceph);
        struct ceph_statx stx {};
        ASSERT_EQ(ceph_statx(b.get(), "/namespace/f", &stx, CEPH_STATX_SIZE, 0), 0);
        EXPECT_EQ(stx.stx_size, data.size());
        std::string got(256, '\0');
        const int n =
            ceph_getxattr(b.get(), "/namespace/f", "user.flexfiles.map", got.data(), got.size());
        ASSERT_GT(n, 0);
        got.resize(static_cast<std::size_t>(n));
        EXPECT_EQ(got, map);
        const int fd = ceph_open(b.get(), "/namespace/f", O_RDONLY, 0);
        ASSERT_GE(fd, 0);
        std::string back(data.size(), '\0');
        EXPECT_EQ(ceph_read(b.get(), fd, back.data(), back.size(), 0),
                  static_cast<int>(data.size()));
        EXPECT_EQ(back, data);
        ceph_close(b.get(), fd);
    }
    // Stopped by PID: no daemon outlives the cluster.
    for (pid_t p : daemons)
        EXPECT_NE(kill(p, 0), 0) << "ceph daemon " << p << " still running";
}
