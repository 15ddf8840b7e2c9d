// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A client that retries a failing operation without end (issue #18: the Linux client's
// LAYOUTCOMMIT answered NFS4ERR_OLD_STATEID about 2,000 times a second) is noticed: the
// series' patch 0014 counts a second in which one client fails one operation the same way
// 500 times and logs it once, naming the client, the operation, the status and the file.
// Other clients are served meanwhile, and a client failing now and then is not reported.
#include "layout_test_support.hpp"

using namespace flexfiles::layout_test;
using namespace std::chrono_literals;

namespace {

class RetryStorm : public FlexfilesCluster {};

// PUTFH, LAYOUTCOMMIT with a seqid newer than the server's: NFS4ERR_BADLAYOUT each time.
std::optional<std::uint32_t> bad_commit(Session& s, const OpenFile& f, const Layout& l) {
    stateid4 future = l.stateid;
    future.seqid += 100;
    return layoutcommit(s, f.fh, future, std::nullopt).status;
}

} // namespace

TEST_F(RetryStorm, AClientFailingTheSameOperationThousandsOfTimesASecondIsLogged) {
    auto stormy = open_session();
    OpenFile f = create_rw(*stormy, "/ff/storm");
    const Layout l = must_layoutget(*stormy, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    const std::size_t mark = cluster_->mds().log_offset();

    // Now and then: no report.
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(bad_commit(*stormy, f, l), std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));
    std::this_thread::sleep_for(1100ms);
    EXPECT_FALSE(cluster_->mds().log_contains("retries a failing operation", mark));

    // A tight loop, as the Linux client's: noticed within a few seconds.
    const auto start = std::chrono::steady_clock::now();
    unsigned sent = 0;
    while (std::chrono::steady_clock::now() - start < 6s &&
           !cluster_->mds().log_contains("retries a failing operation", mark)) {
        for (int i = 0; i < 200; i++, sent++)
            ASSERT_EQ(bad_commit(*stormy, f, l), std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(cluster_->mds().log_contains("retries a failing operation", mark))
        << sent << " failing LAYOUTCOMMITs in " << seconds << " s were not noticed";
    EXPECT_TRUE(cluster_->mds().log_contains("x LAYOUTCOMMIT answered NFS4ERR_BADLAYOUT", mark));
    EXPECT_TRUE(cluster_->mds().log_contains(
        "last on fileid " + std::to_string(f.attrs.fileid.value_or(0)), mark));

    // Meanwhile another client is served.
    auto other = open_session();
    OpenFile g = create_rw(*other, "/ff/calm");
    close_file(*other, g);
    close_file(*stormy, f);
}
