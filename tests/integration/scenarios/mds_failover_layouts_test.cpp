// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Layouts across a failover (docs/failover.md): the MDS keeps its grants in memory, so the
// files it handed RW layouts out on are marked in the layout store first, and the standby
// of a killed MDS fences every marked file before it serves anyone. A client of the dead
// MDS that writes on through its layout, without ever talking to the standby, gets
// NFS3ERR_ACCES from the data servers; a new layout from the standby writes. A file whose
// RW layout was returned before the kill is not fenced once its mark was dropped (lazily,
// with the next file's mark).
//
// Cluster: a failover pair (failover_support.hpp) exporting /ff (FLEXFILES over VFS,
// Mirrors = 2) + 3 NFSv3 data servers; our NFSv4.2 client.
#include "failover_support.hpp"
#include "layout_test_support.hpp"

#include <sys/stat.h>

using namespace flexfiles::layout_test;
using namespace flexfiles::failover_test;
using namespace std::chrono_literals;

namespace {

OpenOptions rw_create() {
    OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    o.create = true;
    return o;
}

class MdsFailoverLayouts : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesClusterSpec spec;
        spec.more = [](ServerOptions& mds) {
            make_failover_member(mds);
            mds.lease_lifetime = 5;
            mds.grace_period = 5;
        };
        start_cluster(spec);
    }

    // The data server of each mirror of `l`, asked of the MDS `s` is a session of.
    std::vector<const DataServerInfo*> data_servers(Session& s, const Layout& l) {
        std::vector<const DataServerInfo*> out;
        for (const auto& mirror : l.mirrors) {
            const DeviceInfoResult info = getdeviceinfo(s, mirror[0].deviceid);
            EXPECT_TRUE(info.status == NFS4_OK && info.addr && !info.addr->netaddrs.empty());
            out.push_back(info.addr && !info.addr->netaddrs.empty()
                              ? ds_at(info.addr->netaddrs[0].second)
                              : nullptr);
            EXPECT_NE(out.back(), nullptr);
        }
        return out;
    }

    // `path` created with an RW layout from `s`'s MDS, written through on both mirrors.
    struct WrittenLayout {
        OpenFile file;
        Layout layout;
        std::vector<const DataServerInfo*> ds; // per mirror
    };
    WrittenLayout write_through_rw_layout(Session& s, const std::string& path,
                                          const std::vector<std::uint8_t>& data) {
        WrittenLayout w{open_path(s, path, rw_create()), {}, {}};
        w.layout = must_layoutget(s, w.file.fh, w.file.stateid, LAYOUTIOMODE4_RW);
        EXPECT_EQ(w.layout.mirrors.size(), 2u) << path;
        w.ds = data_servers(s, w.layout);
        for (std::size_t m = 0; m < w.layout.mirrors.size(); m++)
            EXPECT_EQ(write_mirror(w.ds, w.layout, m, data), Nfs3Status::ok)
                << path << " mirror " << m;
        return w;
    }

    // NFSv3 WRITE of `data` at 0 to mirror `m` of `l` with `l`'s credentials.
    static Nfs3Status write_mirror(const std::vector<const DataServerInfo*>& ds, const Layout& l,
                                   std::size_t m, const std::vector<std::uint8_t>& data) {
        if (ds.at(m) == nullptr)
            return Nfs3Status::serverfault;
        Nfs3Client c(ds[m]->nfs3_url(), l.mirrors[m][0].creds());
        return c.write(l.mirrors[m][0].fh_vers[0], 0, data).status;
    }
};

std::string log_tail(const GaneshaServer& s) {
    std::string out;
    for (const auto& line : s.log_tail(40))
        out += line + "\n";
    return out;
}

} // namespace

TEST_F(MdsFailoverLayouts, RwLayoutsOfTheKilledMdsAreFencedByTheStandbyAndReturnedOnesAreNot) {
    const auto data = pattern(4096, 7);
    auto a = open_session();

    // Held at the kill: an RW layout its client never returns.
    const WrittenLayout held = write_through_rw_layout(*a, "/ff/held", data);
    const Layout& hl = held.layout;
    const auto& hds = held.ds;
    // Returned before the kill.
    const WrittenLayout done = write_through_rw_layout(*a, "/ff/returned", data);
    const Layout& dl = done.layout;
    const auto& dds = done.ds;
    ASSERT_FALSE(HasFailure());
    ASSERT_EQ(layoutreturn(*a, done.file.fh, dl.stateid).status,
              std::optional<std::uint32_t>(NFS4_OK));
    // Its mark is dropped with the next file's (layout/rw_grant_marks.hpp: lazily).
    OpenFile later = open_path(*a, "/ff/later", rw_create());
    must_layoutget(*a, later.fh, later.stateid, LAYOUTIOMODE4_RW);

    Takeover t = fail_over(cluster_->mds());
    GaneshaServer& standby = *t.standby;
    EXPECT_TRUE(standby.log_contains("2 file(s) were under RW layouts of the previous instance: "
                                     "4 data file(s) fenced"))
        << log_tail(standby);

    // The dead MDS's layout writes no more, though its client never heard of the failover.
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(write_mirror(hds, hl, m, data), Nfs3Status::acces) << "held layout, mirror " << m;
    // The returned one was not fenced: its credentials still open the data files.
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(write_mirror(dds, dl, m, data), Nfs3Status::ok)
            << "returned layout, mirror " << m;

    // A new client of the standby (after its grace period) gets a layout that writes.
    SessionOptions o;
    o.host = standby.address();
    o.port = standby.nfs_port();
    o.minor_version = 2;
    auto b = Session::open(o);
    std::optional<OpenFile> again;
    ASSERT_TRUE(eventually(
        [&] {
            try {
                again = open_path(*b, "/ff/held", rw_create());
                return true;
            } catch (const std::exception&) {
                return false; // NFS4ERR_GRACE until the grace period is over
            }
        },
        60s));
    const Layout nl = must_layoutget(*b, again->fh, again->stateid, LAYOUTIOMODE4_RW);
    const auto nds = data_servers(*b, nl);
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(write_mirror(nds, nl, m, data), Nfs3Status::ok) << "new layout, mirror " << m;
}

TEST_F(MdsFailoverLayouts, AFenceAStandbyCannotSendIsRetriedAndTheMirrorMarkedStale) {
    const auto data = pattern(4096, 9);
    auto a = open_session();
    const WrittenLayout held = write_through_rw_layout(*a, "/ff/held", data);
    const Layout& hl = held.layout;
    const auto& hds = held.ds;
    ASSERT_FALSE(HasFailure());

    // Mirror 0's data server is frozen while the standby starts: its fence cannot land.
    unsigned frozen = 0;
    for (unsigned i = 0; i < cluster_->ds_count(); i++)
        if (cluster_->ds_info()[i].name == hds[0]->name)
            frozen = i;
    ASSERT_TRUE(cluster_->ds(frozen).signal(SIGSTOP));
    Takeover t = fail_over(cluster_->mds());
    GaneshaServer& standby = *t.standby;
    EXPECT_TRUE(standby.log_contains("1 file(s) were under RW layouts of the previous instance: "
                                     "1 data file(s) fenced (new owner), 1 retried in the "
                                     "background (1 mirror(s) marked stale meanwhile)"))
        << log_tail(standby);
    EXPECT_EQ(write_mirror(hds, hl, 1, data), Nfs3Status::acces) << "the mirror fenced at once";

    // Once the data server is back, the retry lands there too.
    ASSERT_TRUE(cluster_->ds(frozen).signal(SIGCONT));
    EXPECT_TRUE(
        eventually([&] { return write_mirror(hds, hl, 0, data) == Nfs3Status::acces; }, 30s))
        << "the fence of mirror 0 was never retried";
}
