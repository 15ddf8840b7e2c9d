// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Layouts that end without their holder returning them (issue #13, items 3 and 7):
//   * a client whose lease expires while it can still reach the data servers is fenced: its
//     next data-server WRITE with the layout's credentials gets NFS3ERR_ACCES;
//   * a LAYOUTGET whose reply cannot be sent (the session's ca_maxresponsesize is too
//     small) leaves no grant behind: a later open for write fences and recalls nobody;
//   * a fence that fails on one mirror (its data server frozen) marks that mirror stale and
//     is retried until it lands, after which the old credentials are refused there too.
// Counters come from `ganesha-ff --json stats` (dbus GetStats).
#include "admin_cli_support.hpp"
#include "layout_test_support.hpp"

#include <csignal>
#include <filesystem>
#include <map>
#include <mutex>

using namespace flexfiles::layout_test;
namespace admin_cli = flexfiles::admin_cli;
using namespace std::chrono_literals;

namespace {

constexpr unsigned kLeaseSeconds = 5;

class HostileFencing : public FlexfilesCluster {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(admin_cli::binary())) << admin_cli::binary();
        // Every file on data servers 1 and 2: freezing one freezes a mirror of each.
        start_cluster({.with_dbus = true, .only = {0, 1}, .lease = kLeaseSeconds});
        wait_for_dbus();
    }

    void TearDown() override {
        for (unsigned i = 0; cluster_ && i < cluster_->ds_count(); i++)
            cluster_->ds(i).signal(SIGCONT);
    }

    std::unique_ptr<Session> open_session(bool renew = true, std::uint32_t max_response = 0) {
        SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = 2;
        o.renew_lease = renew;
        if (max_response != 0) {
            o.fore.max_response = max_response;
            o.fore.max_response_cached = std::min(o.fore.max_response_cached, max_response);
        }
        return Session::open(o);
    }

    CommandResult cli(std::vector<std::string> args) {
        return admin_cli::run(*cluster_->dbus(), std::move(args));
    }

    void wait_for_dbus() {
        ASSERT_TRUE(admin_cli::wait_until_registered(*cluster_->dbus()))
            << "the FLEXFILES dbus interface never appeared";
    }

    // `ganesha-ff --json stats`: name -> value (a counter the server lacks reads as 0).
    std::map<std::string, std::uint64_t> stats() { return admin_cli::counters(*cluster_->dbus()); }
    std::uint64_t stat(const std::string& name) { return stats()[name]; }

    const DataServerInfo* ds_of(Session& s, const LayoutDs& entry) {
        DeviceInfoResult info = getdeviceinfo(s, entry.deviceid);
        if (info.status != NFS4_OK || !info.addr || info.addr->netaddrs.empty())
            return nullptr;
        for (const auto& d : cluster_->ds_info()) {
            const std::string uaddr = d.address + "." + std::to_string(d.nfs_port >> 8) + "." +
                                      std::to_string(d.nfs_port & 0xff);
            if (uaddr == info.addr->netaddrs[0].second)
                return &d;
        }
        return nullptr;
    }

    // NFSv3 WRITE of `data` at 0 to mirror `m` of `l` with `l`'s credentials.
    Nfs3Status write_mirror(const DataServerInfo& ds, const Layout& l, std::size_t m,
                            const std::vector<std::uint8_t>& data) {
        Nfs3Client c(ds.nfs3_url(), l.mirrors[m][0].creds());
        return c.write(l.mirrors[m][0].fh_vers[0], 0, data).status;
    }
};

// OPEN and GETFH in two compounds (each reply fits a session with the smallest
// ca_maxresponsesize Ganesha accepts).
OpenFile open_in_steps(Session& s, const std::string& dir, const std::string& name) {
    OpenArgs args;
    args.name = name;
    args.share_access = OPEN4_SHARE_ACCESS_BOTH;
    args.clientid = s.clientid();
    args.owner = "hostile-fencing open-owner";
    args.create = true;
    args.create_mode = UNCHECKED4;
    args.create_attrs.mode = 0644;
    Compound open;
    open.walk(dir).open(args);
    CompoundResult r = s.send(open);
    r.check("open " + name);
    OpenFile f;
    f.path = dir + "/" + name;
    f.stateid = r.stateid(open.size() - 1);
    Compound getfh;
    getfh.walk(f.path).getfh();
    CompoundResult g = s.send(getfh);
    g.check("getfh " + f.path);
    f.fh = g.fh(getfh.size() - 1);
    return f;
}

OpenOptions rw(bool create) {
    OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    o.create = create;
    return o;
}

} // namespace

// (a) Lease expiry with the data servers still reachable.
TEST_F(HostileFencing, AnExpiredLeaseFencesTheLayout) {
    auto a = open_session(/*renew=*/false);
    OpenFile af = open_path(*a, "/ff/expiring", rw(true));
    const Layout al = must_layoutget(*a, af.fh, af.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(al.mirrors.size(), 2u);
    std::vector<const DataServerInfo*> ds;
    for (std::size_t m = 0; m < 2; m++) {
        ds.push_back(ds_of(*a, al.mirrors[m][0]));
        ASSERT_NE(ds.back(), nullptr);
    }
    const auto data = pattern(4096, 3);
    for (std::size_t m = 0; m < 2; m++)
        ASSERT_EQ(write_mirror(*ds[m], al, m, data), Nfs3Status::ok);
    auto before = stats();
    ASSERT_EQ(before["layout.segments_granted_now"], 1u);

    // A sends nothing more: its lease runs out and the server takes the layout away.
    ASSERT_TRUE(eventually([&] { return stat("layout.segments_granted_now") == 0; },
                           std::chrono::seconds(4 * kLeaseSeconds)))
        << "the expired client's layout was never revoked";

    // Its data-server WRITEs with the layout's credentials are refused from now on.
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(write_mirror(*ds[m], al, m, data), Nfs3Status::acces) << "mirror " << m;
    auto after = stats();
    EXPECT_EQ(after["layout.revoke_fencings"], before["layout.revoke_fencings"] + 1);
    EXPECT_EQ(after["layout.fenced_data_files"], before["layout.fenced_data_files"] + 2);
    EXPECT_TRUE(cluster_->mds().log_contains("ended without being returned"));

    // The next writer gets a layout with the new owner, which works.
    auto b = open_session();
    OpenFile bf = open_path(*b, "/ff/expiring", rw(false));
    const Layout bl = must_layoutget(*b, bf.fh, bf.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(bl.mirrors.size(), 2u);
    EXPECT_NE(bl.mirrors[0][0].user, al.mirrors[0][0].user);
    for (std::size_t m = 0; m < 2; m++)
        EXPECT_EQ(write_mirror(*ds[m], bl, m, data), Nfs3Status::ok) << "mirror " << m;
}

// (b) A LAYOUTGET that the server cannot send leaves no grant behind.
TEST_F(HostileFencing, AnUnsentLayoutLeavesNoPhantomGrant) {
    auto small = open_session(true, 256); // NFS41_MIN_RESPONSE_SIZE: no room for a layout
    OpenFile sf = open_in_steps(*small, "/ff", "phantom");
    auto before = stats();
    const LayoutGetResult r = layoutget(*small, sf.fh, sf.stateid, LAYOUTIOMODE4_RW);
    ASSERT_TRUE(r.status.has_value()) << r.error;
    EXPECT_NE(*r.status, static_cast<std::uint32_t>(NFS4_OK)) << "the layout did fit the reply";
    auto unsent = stats();
    EXPECT_EQ(unsent["layout.segments_granted_now"], 0u) << "a grant outlived its layout state";
    EXPECT_EQ(unsent["layout.segments_unsent"], before["layout.segments_unsent"] + 1);

    // Another client opens for write: nothing to fence, nobody to recall.
    auto other = open_session();
    OpenFile of = open_path(*other, "/ff/phantom", rw(false));
    (void)of;
    std::this_thread::sleep_for(300ms);
    auto after = stats();
    EXPECT_EQ(after["layout.fencings"], before["layout.fencings"]);
    EXPECT_EQ(after["layout.fenced_data_files"], before["layout.fenced_data_files"]);
    EXPECT_EQ(after["layout.recalls_sent"] + after["layout.recalls_not_found"],
              before["layout.recalls_sent"] + before["layout.recalls_not_found"]);
}

// (c) A fence that fails on one mirror: that mirror is marked stale, the fence is retried
// and lands once the data server answers again.
TEST_F(HostileFencing, AFenceThatFailsOnAMirrorMarksItStaleAndIsRetried) {
    auto a = open_session();
    OpenFile af = open_path(*a, "/ff/frozen", rw(true));
    const Layout al = must_layoutget(*a, af.fh, af.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(al.mirrors.size(), 2u);
    const DataServerInfo* ds0 = ds_of(*a, al.mirrors[0][0]);
    const DataServerInfo* ds1 = ds_of(*a, al.mirrors[1][0]);
    ASSERT_NE(ds0, nullptr);
    ASSERT_NE(ds1, nullptr);
    const auto data = pattern(4096, 5);
    ASSERT_EQ(write_mirror(*ds1, al, 1, data), Nfs3Status::ok);
    auto before = stats();

    // Mirror 1's data server freezes; B opens for write and so fences A.
    ASSERT_TRUE(cluster_->ds(ds1->index).signal(SIGSTOP));
    auto b = open_session();
    OpenFile bf = open_path(*b, "/ff/frozen", rw(false));
    (void)bf;
    auto fenced = stats();
    EXPECT_EQ(fenced["layout.fencings"], before["layout.fencings"] + 1);
    EXPECT_EQ(fenced["layout.fence_failures"], before["layout.fence_failures"] + 1);
    EXPECT_EQ(write_mirror(*ds0, al, 0, data), Nfs3Status::acces) << "mirror 0 was fenced";
    // Mirror 1 may have taken A's writes: it is stale until resilvered.
    EXPECT_EQ(fenced["resilver.stale_mirrors"], 1u);
    EXPECT_EQ(fenced["fence_retry.pending"], 1u);

    // The data server comes back: the retry lands and A is refused there too.
    ASSERT_TRUE(cluster_->ds(ds1->index).signal(SIGCONT));
    ASSERT_TRUE(eventually([&] { return stat("fence_retry.completed") >= 1; }, 20s))
        << "the fence was never retried";
    EXPECT_EQ(stat("fence_retry.pending"), 0u);
    EXPECT_EQ(write_mirror(*ds1, al, 1, data), Nfs3Status::acces) << "mirror 1 was not fenced";
    // One recall for the fence: marking the mirror stale recalled A's layout, and the open
    // must not recall it again (two recalls of one file race in Ganesha's layoutrecall()).
    // Not counted: the resilverer's own, once it has waited Resilver_Recall_After on A's
    // RW layout (a loaded machine may take that long to get here).
    const auto recalls = [](std::map<std::string, std::uint64_t> c) {
        return c["layout.recalls_sent"] + c["layout.recalls_not_found"] +
               c["layout.recalls_failed"] - c["resilver.recalls"];
    };
    EXPECT_EQ(recalls(stats()), recalls(before) + 1);
}
