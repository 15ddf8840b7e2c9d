// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fencing (RFC 8435 section 2.2) by the FLEXFILES MDS: when a second client opens for
// write a file on which a first client holds an RW layout, the MDS gives the data files a
// new synthetic owner before the OPEN returns (the first client's data-server WRITEs get
// NFS3ERR_ACCES from then on), recalls the first client's layout (CB_LAYOUTRECALL), and
// later layouts carry the new owner.
#include "layout_test_support.hpp"

#include <atomic>
#include <mutex>

using namespace flexfiles::layout_test;

namespace {

struct Recall {
    layouttype4 type = LAYOUT4_NFSV4_1_FILES;
    layoutiomode4 iomode = LAYOUTIOMODE4_READ;
    bool changed = false;
    layoutrecall_type4 recall_type = LAYOUTRECALL4_ALL;
    std::vector<char> fh;
    stateid4 stateid{};
};

// Records the CB_LAYOUTRECALLs a session receives (and answers them NFS4_OK: the layout
// will be returned).
class RecallLog {
public:
    void attach(Session& s) {
        s.set_callback_handler([this](const nfs_cb_argop4& op, nfs_cb_resop4&) -> nfsstat4 {
            if (op.argop != NFS4_OP_CB_LAYOUTRECALL)
                return NFS4ERR_NOTSUPP;
            const CB_LAYOUTRECALL4args& a = op.nfs_cb_argop4_u.opcblayoutrecall;
            Recall r;
            r.type = a.clora_type;
            r.iomode = a.clora_iomode;
            r.changed = a.clora_changed;
            r.recall_type = a.clora_recall.lor_recalltype;
            if (r.recall_type == LAYOUTRECALL4_FILE) {
                const layoutrecall_file4& f = a.clora_recall.layoutrecall4_u.lor_layout;
                r.fh.assign(f.lor_fh.nfs_fh4_val, f.lor_fh.nfs_fh4_val + f.lor_fh.nfs_fh4_len);
                r.stateid = f.lor_stateid;
            }
            std::lock_guard lock(mu_);
            recalls_.push_back(std::move(r));
            return NFS4_OK;
        });
    }
    std::vector<Recall> recalls() const {
        std::lock_guard lock(mu_);
        return recalls_;
    }

private:
    mutable std::mutex mu_;
    std::vector<Recall> recalls_;
};

class Fencing : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        first_ = open_session(2);
        second_ = open_session(2);
        first_recalls_.attach(*first_);
        second_recalls_.attach(*second_);
        OpenOptions o;
        o.access = OPEN4_SHARE_ACCESS_BOTH;
        o.create = true;
        first_file_ = open_path(*first_, "/ff/shared", o);
        first_layout_ =
            must_layoutget(*first_, first_file_.fh, first_file_.stateid, LAYOUTIOMODE4_RW);
        ASSERT_EQ(first_layout_.mirrors.size(), 2u);
    }

    // NFSv3 WRITE of `data` to every data file of `l`, with `l`'s credentials; the status
    // of each.
    std::vector<Nfs3Status> write_all_mirrors(Session& s, const Layout& l,
                                              const std::vector<std::uint8_t>& data) {
        std::vector<Nfs3Status> out;
        for (const auto& mirror : l.mirrors) {
            const DataServerInfo* info = ds_of(s, mirror[0]);
            EXPECT_NE(info, nullptr);
            if (info == nullptr)
                continue;
            Nfs3Client ds(info->nfs3_url(), mirror[0].creds());
            out.push_back(ds.write(mirror[0].fh_vers[0], 0, data).status);
        }
        return out;
    }

    std::unique_ptr<Session> first_, second_;
    RecallLog first_recalls_, second_recalls_;
    OpenFile first_file_;
    Layout first_layout_;
};

const std::vector<Nfs3Status> kBothOk{Nfs3Status::ok, Nfs3Status::ok};
const std::vector<Nfs3Status> kBothFenced{Nfs3Status::acces, Nfs3Status::acces};

} // namespace

TEST_F(Fencing, ConflictingOpenFencesAndRecallsTheFirstWriter) {
    const auto data = pattern(8192, 1);
    ASSERT_EQ(write_all_mirrors(*first_, first_layout_, data), kBothOk);

    // The second client opens the file for write.
    OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    OpenFile second_file = open_path(*second_, "/ff/shared", o);

    // From the moment the OPEN returned, the first client's data-server WRITEs are refused.
    EXPECT_EQ(write_all_mirrors(*first_, first_layout_, data), kBothFenced);

    // Its layout is recalled: that file, that layout stateid, clora_changed set.
    ASSERT_TRUE(
        eventually([&] { return !first_recalls_.recalls().empty(); }, std::chrono::seconds(5)))
        << "no CB_LAYOUTRECALL reached the first client";
    const Recall r = first_recalls_.recalls().front();
    EXPECT_EQ(r.type, LAYOUT4_FLEX_FILES);
    EXPECT_EQ(r.recall_type, LAYOUTRECALL4_FILE);
    EXPECT_EQ(r.iomode, LAYOUTIOMODE4_ANY);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.fh, first_file_.fh.bytes);
    EXPECT_EQ(std::memcmp(r.stateid.other, first_layout_.stateid.other, sizeof(r.stateid.other)),
              0);
    EXPECT_TRUE(second_recalls_.recalls().empty()) << "the opener's layouts are not recalled";

    // The second client's layout carries the new owner, which works on both mirrors.
    const Layout second_layout =
        must_layoutget(*second_, second_file.fh, second_file.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(second_layout.mirrors.size(), 2u);
    for (std::size_t m = 0; m < 2; m++) {
        EXPECT_EQ(second_layout.mirrors[m][0].fh_vers[0], first_layout_.mirrors[m][0].fh_vers[0])
            << "same data files";
        EXPECT_NE(second_layout.mirrors[m][0].user, first_layout_.mirrors[m][0].user);
        EXPECT_NE(second_layout.mirrors[m][0].group, first_layout_.mirrors[m][0].group);
        const Nfs3Credentials c = second_layout.mirrors[m][0].creds();
        EXPECT_GE(c.uid, kFencingMin);
        EXPECT_LE(c.uid, kFencingMax);
    }
    EXPECT_EQ(write_all_mirrors(*second_, second_layout, data), kBothOk);

    // The first client answers the recall, reporting the refusals; the MDS knows them for
    // what they are (a fenced layout: nothing to repair), and a new layout works again.
    const auto body = ff_layoutreturn_body({{first_layout_.mirrors[0][0].deviceid, NFS4ERR_ACCESS},
                                            {first_layout_.mirrors[1][0].deviceid, NFS4ERR_ACCESS}},
                                           {});
    const ReturnResult ret = layoutreturn(*first_, first_file_.fh, r.stateid, body);
    EXPECT_EQ(ret.status, std::optional<std::uint32_t>(NFS4_OK));
    const Layout renewed =
        must_layoutget(*first_, first_file_.fh, first_file_.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(renewed.mirrors[0][0].user, second_layout.mirrors[0][0].user);
    EXPECT_EQ(write_all_mirrors(*first_, renewed, data), kBothOk);

    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}

TEST_F(Fencing, ReadOnlyOpenBySomeoneElseFencesNobody) {
    OpenFile reader = open_path(*second_, "/ff/shared", {}); // OPEN4_SHARE_ACCESS_READ
    (void)reader;
    EXPECT_EQ(write_all_mirrors(*first_, first_layout_, pattern(100, 2)), kBothOk);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(first_recalls_.recalls().empty());
}

TEST_F(Fencing, TheHoldersOwnSecondOpenFencesNobody) {
    // Same client, another open owner: not a conflict.
    Compound c;
    OpenArgs args;
    args.name = "shared";
    args.share_access = OPEN4_SHARE_ACCESS_BOTH;
    args.clientid = first_->clientid();
    args.owner = "second open-owner of the first client";
    c.walk("/ff").open(args);
    CompoundResult r = first_->send(c);
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(write_all_mirrors(*first_, first_layout_, pattern(100, 3)), kBothOk);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(first_recalls_.recalls().empty());
}

TEST_F(Fencing, AWriterWithoutLayoutsIsNotFencedByLaterOpens) {
    // The first client returns its layout; a write-open by the second then fences nobody.
    ASSERT_EQ(layoutreturn(*first_, first_file_.fh, first_layout_.stateid).status,
              std::optional<std::uint32_t>(NFS4_OK));
    OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    OpenFile second_file = open_path(*second_, "/ff/shared", o);
    const Layout second_layout =
        must_layoutget(*second_, second_file.fh, second_file.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(second_layout.mirrors[0][0].user, first_layout_.mirrors[0][0].user)
        << "no fencing happened: the owner did not change";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(first_recalls_.recalls().empty());
}

// The other side of fencing: a client reports NFS4ERR_ACCESS with the *current* owner (the
// data file's owner was changed behind the MDS's back). The MDS sets it back, and the
// layout's credentials work again.
TEST_F(Fencing, AccessErrorWithTheCurrentOwnerRepairsTheDataFile) {
    const LayoutDs& entry = first_layout_.mirrors[0][0];
    const DataServerInfo* info = ds_of(*first_, entry);
    ASSERT_NE(info, nullptr);
    Nfs3Client root(info->nfs3_url());
    Nfs3SetAttrs chown;
    chown.uid = 4242;
    chown.gid = 4242;
    ASSERT_EQ(root.setattr(entry.fh_vers[0], chown).status, Nfs3Status::ok);
    Nfs3Client as_layout(info->nfs3_url(), entry.creds());
    ASSERT_EQ(as_layout.write(entry.fh_vers[0], 0, pattern(10, 1)).status, Nfs3Status::acces);

    const auto body = ff_layoutreturn_body({{entry.deviceid, NFS4ERR_ACCESS}}, {});
    ASSERT_EQ(layoutreturn(*first_, first_file_.fh, first_layout_.stateid, body).status,
              std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_TRUE(eventually(
        [&] {
            return as_layout.write(entry.fh_vers[0], 0, pattern(10, 1)).status == Nfs3Status::ok;
        },
        std::chrono::seconds(5)))
        << "the data file's owner was not set back to the layout's";
    const Nfs3GetattrResult a = root.getattr(entry.fh_vers[0]);
    ASSERT_EQ(a.status, Nfs3Status::ok);
    EXPECT_EQ(a.attr.uid, entry.creds().uid);
    EXPECT_EQ(a.attr.gid, entry.creds().gid);
}
