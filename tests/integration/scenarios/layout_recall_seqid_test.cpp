// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The layout stateid's seqid across a recall (issue #18). CB_LAYOUTRECALL moves the seqid
// on (RFC 8881 section 12.5.3), and a client that is still flushing when the recall
// arrives sends LAYOUTCOMMIT with the seqid it holds. Stock Ganesha answered that
// NFS4ERR_OLD_STATEID, and the Linux client retried it some 2,000 times a second, never
// returning the layout. The series' patch 0012 accepts, for LAYOUTCOMMIT and LAYOUTGET, an
// older seqid of the caller's current layout state of the file, as Linux knfsd does
// (nfsd4_preprocess_layout_stateid refuses only a seqid newer than the server's). A newer
// seqid stays BAD_STATEID, and another client's layout stateid stays refused.
#include "layout_test_support.hpp"

#include <atomic>
#include <cstring>

using namespace flexfiles::layout_test;
using namespace std::chrono_literals;

namespace {

class LayoutRecallSeqid : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        session_ = open_session();
        session_->set_callback_handler([this](const nfs_cb_argop4& op, nfs_cb_resop4&) {
            if (op.argop != NFS4_OP_CB_LAYOUTRECALL)
                return NFS4ERR_NOTSUPP;
            recalled_seqid_ = op.nfs_cb_argop4_u.opcblayoutrecall.clora_recall.layoutrecall4_u
                                  .lor_layout.lor_stateid.seqid;
            recalls_++;
            return NFS4_OK; // "I will return it" (after flushing: the LAYOUTCOMMIT below)
        });
        file_ = create_rw(*session_, "/ff/recalled");
        layout_ = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
        ASSERT_EQ(layout_.mirrors.size(), 2u);
    }

    // Another client opens the file for write: the MDS fences this client's data files
    // and recalls its RW layout (pnfs/fencing.cpp), which moves the layout stateid on.
    void provoke_recall() {
        other_ = open_session();
        OpenFile theirs = create_rw(*other_, "/ff/recalled");
        ASSERT_TRUE(eventually([&] { return recalls_.load() > 0; }, 5s)) << "no CB_LAYOUTRECALL";
        ASSERT_GT(recalled_seqid_.load(), layout_.stateid.seqid) << "the recall moved no seqid";
        std::this_thread::sleep_for(200ms);
        ASSERT_EQ(recalls_.load(), 1) << "one recall expected";
    }

    std::unique_ptr<Session> session_, other_;
    OpenFile file_;
    Layout layout_;
    std::atomic<int> recalls_{0};
    std::atomic<std::uint32_t> recalled_seqid_{0};
};

const std::optional<std::uint32_t> kOk{NFS4_OK};

} // namespace

// LAYOUTCOMMIT with the pre-recall seqid is answered OK, and so is the LAYOUTRETURN that
// follows with the recall's seqid.
TEST_F(LayoutRecallSeqid, LayoutcommitWithThePreRecallSeqidIsAccepted) {
    write_all(*session_, file_, 0, std::vector<char>(4096, 'a')); // through the MDS
    provoke_recall();

    const CommitResult c = layoutcommit(*session_, file_.fh, layout_.stateid, 4096);
    EXPECT_EQ(c.status, kOk) << "LAYOUTCOMMIT with seqid " << layout_.stateid.seqid
                             << " after the recall's " << recalled_seqid_.load();
    stateid4 current = layout_.stateid;
    current.seqid = recalled_seqid_.load();
    EXPECT_EQ(layoutreturn(*session_, file_.fh, current).status, kOk);

    // Once returned, the layout is gone: a late LAYOUTCOMMIT through it is BADLAYOUT.
    EXPECT_EQ(layoutcommit(*session_, file_.fh, current, 4096).status,
              std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));
}

// LAYOUTGET with the pre-recall seqid of its own layout state is not OLD_STATEID either.
TEST_F(LayoutRecallSeqid, LayoutgetWithThePreRecallSeqidIsNotOld) {
    provoke_recall();
    const LayoutGetResult r = layoutget(*session_, file_.fh, layout_.stateid, LAYOUTIOMODE4_RW);
    ASSERT_TRUE(r.status.has_value()) << r.error;
    EXPECT_NE(*r.status, static_cast<std::uint32_t>(NFS4ERR_OLD_STATEID));
}

// LAYOUTRETURN keeps the rule RFC 8881 section 12.5.5.2.1 gives it: the seqid from before
// the recall is OLD_STATEID (Linux then takes the server's seqid), the recall's is OK.
TEST_F(LayoutRecallSeqid, LayoutreturnWithThePreRecallSeqidIsOld) {
    provoke_recall();
    EXPECT_EQ(layoutreturn(*session_, file_.fh, layout_.stateid).status,
              std::optional<std::uint32_t>(NFS4ERR_OLD_STATEID));
    stateid4 current = layout_.stateid;
    current.seqid = recalled_seqid_.load();
    EXPECT_EQ(layoutreturn(*session_, file_.fh, current).status, kOk);
}

// LAYOUTERROR with the pre-recall seqid is answered OK too. The Linux client re-sends an
// OLD_STATEID LAYOUTERROR with the same seqid every second (nfs42_layouterror_done) while
// it holds the layout segment, and its own LAYOUTRETURN waits for that segment.
TEST_F(LayoutRecallSeqid, LayouterrorWithThePreRecallSeqidIsAccepted) {
    provoke_recall();
    DeviceError e;
    std::memcpy(e.deviceid.data(), layout_.mirrors[0][0].deviceid.data(), e.deviceid.size());
    e.status = NFS4ERR_NXIO;
    e.opnum = NFS4_OP_READ;
    Compound c;
    c.putfh(file_.fh).layouterror(0, NFS4_UINT64_MAX, layout_.stateid, {e});
    CompoundResult r = session_->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    EXPECT_EQ(r.status_of(1), kOk) << "LAYOUTERROR with seqid " << layout_.stateid.seqid
                                   << " after the recall's " << recalled_seqid_.load();
}

// What stays refused: a seqid newer than the server's, and another client's layout. A
// LAYOUTCOMMIT without a layout of the caller's is NFS4ERR_BADLAYOUT (RFC 8881 section
// 18.42.3, and what knfsd answers): the Linux client drops such a commit quietly, where
// BAD_STATEID failed the application's fsync with EIO.
TEST_F(LayoutRecallSeqid, NewerSeqidsAndOtherClientsLayoutsStayRefused) {
    provoke_recall();
    stateid4 future = layout_.stateid;
    future.seqid = recalled_seqid_.load() + 1;
    EXPECT_EQ(layoutcommit(*session_, file_.fh, future, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));

    // Another client with this client's layout stateid: the current seqid is not its
    // layout (BADLAYOUT; stock Ganesha accepted it), an older one stays OLD_STATEID.
    stateid4 current = layout_.stateid;
    current.seqid = recalled_seqid_.load();
    EXPECT_EQ(layoutcommit(*other_, file_.fh, current, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));
    EXPECT_EQ(layoutcommit(*other_, file_.fh, layout_.stateid, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4ERR_OLD_STATEID));
}
