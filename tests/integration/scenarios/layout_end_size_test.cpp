// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A file's size after its RW layout ends without LAYOUTCOMMIT or LAYOUT_WCC (a client that
// crashed, lost its lease, or simply returned the layout without telling): the data
// servers hold the bytes, so the MDS must ask them once before it answers from its cache
// again. Before, the cache kept the size it had from the create (0), and with no RW
// layout out GETATTR served it without asking anyone.
#include "layout_test_support.hpp"

using namespace flexfiles::layout_test;
using namespace std::chrono_literals;

namespace {

class LayoutEndSize : public FlexfilesCluster {
public:
    using FlexfilesCluster::ds_of;
    using FlexfilesCluster::open_session;
};

std::uint64_t size_of(Session& s, const FileHandle& fh) {
    Compound c;
    c.putfh(fh).getattr(AttrMask{FATTR4_SIZE});
    CompoundResult r = s.send(c);
    r.check("getattr");
    return r.attrs(1).size.value_or(~0ull);
}

} // namespace

namespace {

void returned_without_commit(LayoutEndSize& t) {
    auto writer = t.open_session();
    OpenFile f = create_rw(*writer, "/ff/uncommitted");
    EXPECT_EQ(size_of(*writer, f.fh), 0u); // the cache now knows the file: size 0
    const Layout l = must_layoutget(*writer, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(l.mirrors.size(), 2u);

    const auto data = pattern(100 * 1024, 3);
    for (const auto& mirror : l.mirrors) {
        const DataServerInfo* info = t.ds_of(*writer, mirror[0]);
        ASSERT_NE(info, nullptr);
        Nfs3Client ds(info->nfs3_url(), mirror[0].creds());
        ASSERT_EQ(ds.write(mirror[0].fh_vers[0], 0, data).status, Nfs3Status::ok);
    }
    // Returned with no body, no LAYOUTCOMMIT, no LAYOUT_WCC.
    ASSERT_EQ(layoutreturn(*writer, f.fh, l.stateid).status, std::optional<std::uint32_t>(NFS4_OK));
    std::this_thread::sleep_for(1200ms); // past WCC_Max_Age (1 s by default)

    auto reader = t.open_session();
    EXPECT_EQ(size_of(*reader, f.fh), data.size())
        << "the MDS answered its cached size after an RW layout ended unreported";
    close_file(*writer, f);
}

} // namespace

TEST_F(LayoutEndSize, AnRwLayoutReturnedWithoutCommitMakesTheMdsAskTheDataServers) {
    returned_without_commit(*this);
}

// The same with MDCACHE keeping attributes (the README's configuration): the return drops
// MDCACHE's copy of a file whose writes the MDS has not seen, so the next GETATTR reaches
// the FSAL, which asks the data servers.
class LayoutEndSizeMdcacheHolds : public LayoutEndSize {
protected:
    void SetUp() override {
        FlexfilesClusterSpec spec;
        spec.attr_expiration_time = std::nullopt;
        start_cluster(spec);
    }
};

TEST_F(LayoutEndSizeMdcacheHolds, AnRwLayoutReturnedWithoutCommitDropsMdcachesAttributes) {
    returned_without_commit(*this);
}

// A layout of the MDS's previous instance (issue #16's kernel run): the Linux client keeps
// the layout stateid it copied into a LAYOUTCOMMIT in flight across an MDS restart and
// sends it again after every answer that is not final. NFS4ERR_STALE_STATEID was not
// (it only starts a lease recovery that finds nothing to do): the client sent that
// LAYOUTCOMMIT about 500 times a second, forever, and the write never finished. No layout
// of the caller's matches it any more, so the answer is NFS4ERR_BADLAYOUT (RFC 8881
// section 18.42.3), which the client takes as final. What it wrote through that layout
// after the MDS had last asked the data servers is not lost either: until the previous
// instance's clients can no longer write (grace over and one lease after the start), the
// MDS treats every file as written behind its back, and it asks once more after that.
TEST_F(LayoutEndSize, ALayoutOfThePreviousMdsInstanceIsFencedBadlayoutAndItsWritesAreSeen) {
    auto writer = open_session();
    OpenFile f = create_rw(*writer, "/ff/across-restart");
    const Layout l = must_layoutget(*writer, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(l.mirrors.size(), 2u);
    std::vector<const DataServerInfo*> ds;
    for (const auto& mirror : l.mirrors) {
        ds.push_back(ds_of(*writer, mirror[0]));
        ASSERT_NE(ds.back(), nullptr);
    }

    // Written through the layout, never reported (no LAYOUTCOMMIT, no LAYOUT_WCC).
    const auto data = pattern(100 * 1024, 5);
    for (std::size_t m = 0; m < l.mirrors.size(); m++) {
        Nfs3Client c(ds[m]->nfs3_url(), l.mirrors[m][0].creds());
        ASSERT_EQ(c.write(l.mirrors[m][0].fh_vers[0], 0, data).status, Nfs3Status::ok);
    }

    // A crash: a clean stop fences every RW layout it revokes; after a crash the new
    // instance fences what the layout store marks as under an RW layout before it serves.
    ASSERT_TRUE(cluster_->mds().signal(SIGKILL));
    cluster_->mds().restart();
    EXPECT_TRUE(cluster_->mds().log_contains(
        "1 file(s) were under RW layouts of the previous instance: 2 data file(s) fenced"));

    // The client has not noticed the restart yet: its next WRITEs are refused.
    for (std::size_t m = 0; m < l.mirrors.size(); m++) {
        Nfs3Client c(ds[m]->nfs3_url(), l.mirrors[m][0].creds());
        EXPECT_EQ(c.write(l.mirrors[m][0].fh_vers[0], 0, data).status, Nfs3Status::acces)
            << "mirror " << m;
    }
    auto reconnected = open_session();
    EXPECT_EQ(layoutcommit(*reconnected, f.fh, l.stateid, data.size() - 1).status,
              std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT))
        << "a layout stateid of the previous instance";
    // What it wrote before the crash is the file's size.
    EXPECT_EQ(size_of(*reconnected, f.fh), data.size());
}
