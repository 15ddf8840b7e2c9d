// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Op 77 LAYOUT_WCC with a granted flex-files layout: the statuses that need one.
//   * the layout's stateid with an older seqid        NFS4ERR_OLD_STATEID (protocols/)
//   * another client's layout stateid                 NFS4ERR_BAD_STATEID (protocols/)
//   * a body matching the layout                      NFS4_OK            (the FSAL, pnfs/)
//   * a body that is not an ff_layout_wcc4             NFS4ERR_BADXDR     (the FSAL, pnfs/)
// The first two are decided by the op handler before the FSAL sees the body; the last two
// by the FSAL's layout_wcc method.
#include "client/layout_wcc.hpp"
#include "layout_test_support.hpp"

using namespace flexfiles::layout_test;

namespace {

class LayoutWccStateid : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        session_ = open_session(2);
        file_ = create_rw(*session_, "/ff/wcc");
        layout_ = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    }

    // A body naming every data file of the layout, with the attributes the data servers
    // gave for a write of `data` (as a client would send them after its I/O).
    std::vector<char> body_after_write(const std::vector<std::uint8_t>& data) {
        FlexLayoutWcc body;
        for (const auto& mirror : layout_.mirrors) {
            const LayoutDs& entry = mirror[0];
            const DataServerInfo* info = ds_of(*session_, entry);
            EXPECT_NE(info, nullptr);
            if (info == nullptr)
                return {};
            Nfs3Client ds(info->nfs3_url(), entry.creds());
            const Nfs3WriteResult w = ds.write(entry.fh_vers[0], 0, data);
            EXPECT_EQ(w.status, Nfs3Status::ok);
            EXPECT_TRUE(w.file_wcc.after.has_value());
            if (!w.file_wcc.after)
                return {};
            const Nfs3Attr& a = *w.file_wcc.after;
            DataServerWcc d;
            std::memcpy(d.deviceid.data(), entry.deviceid.data(), NFS4_DEVICEID4_SIZE);
            d.stateid = entry.stateid;
            d.fh_versions.push_back(
                FileHandle{{entry.fh_vers[0].bytes.begin(), entry.fh_vers[0].bytes.end()}});
            d.attrs.size = a.size;
            d.attrs.space_used = a.used;
            d.attrs.mode = a.mode;
            d.attrs.owner = std::to_string(a.uid);
            d.attrs.owner_group = std::to_string(a.gid);
            d.attrs.time_access = NfsTime{a.atime.seconds, a.atime.nseconds};
            d.attrs.time_modify = NfsTime{a.mtime.seconds, a.mtime.nseconds};
            d.attrs.time_metadata = NfsTime{a.ctime.seconds, a.ctime.nseconds};
            MirrorWcc m;
            m.data_servers.push_back(std::move(d));
            body.mirrors.push_back(std::move(m));
        }
        return encode_flex_layout_wcc(body);
    }

    std::unique_ptr<Session> session_;
    OpenFile file_;
    Layout layout_;
};

} // namespace

TEST_F(LayoutWccStateid, OlderSeqidOfTheLayoutStateidIsOldStateid) {
    // A LAYOUTRETURN that returns nothing (a READ return; the layout is RW) moves the
    // layout stateid's seqid on and leaves the layout in place. (A second LAYOUTGET on the
    // layout stateid would too, but trips a Ganesha 4.3 bug: see layout_get_test.cpp.)
    const ReturnResult nothing =
        layoutreturn(*session_, file_.fh, layout_.stateid, {}, LAYOUTIOMODE4_READ);
    ASSERT_EQ(nothing.status, std::optional<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(nothing.stateid_present) << "the RW segment is still held";
    ASSERT_EQ(nothing.stateid.seqid, layout_.stateid.seqid + 1);
    // The current stateid works; the older one is refused as old.
    EXPECT_NE(layout_wcc(*session_, file_.fh, nothing.stateid, {}),
              std::optional<std::uint32_t>(NFS4ERR_OLD_STATEID));
    EXPECT_EQ(layout_wcc(*session_, file_.fh, layout_.stateid, {}),
              std::optional<std::uint32_t>(NFS4ERR_OLD_STATEID));
}

TEST_F(LayoutWccStateid, AnotherClientsLayoutStateidIsBadStateid) {
    auto other = open_session(2);
    OpenFile theirs = open_path(*other, "/ff/wcc", {});
    (void)theirs;
    EXPECT_EQ(layout_wcc(*other, file_.fh, layout_.stateid, {}),
              std::optional<std::uint32_t>(NFS4ERR_BAD_STATEID));
}

TEST_F(LayoutWccStateid, BodyMatchingTheLayoutIsAccepted) {
    const std::vector<char> body = body_after_write(pattern(5000, 1));
    ASSERT_FALSE(body.empty());
    EXPECT_EQ(layout_wcc(*session_, file_.fh, layout_.stateid, body),
              std::optional<std::uint32_t>(NFS4_OK));
    // What it carried is what GETATTR says now.
    const StatResult st = stat_path(*session_, "/ff/wcc");
    ASSERT_TRUE(st.attrs.size.has_value());
    EXPECT_EQ(*st.attrs.size, 5000u);
}

TEST_F(LayoutWccStateid, BodyThatIsNotAnFfLayoutWcc4IsBadxdr) {
    const std::vector<char> garbage{0, 0, 0, 9, 'x'};
    EXPECT_EQ(layout_wcc(*session_, file_.fh, layout_.stateid, garbage),
              std::optional<std::uint32_t>(NFS4ERR_BADXDR));
}
