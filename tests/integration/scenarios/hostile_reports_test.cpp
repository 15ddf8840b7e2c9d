// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Hostile and buggy clients' error reports (issue #13, "error reports are evidence, not
// verdicts"): what a client says about a data server in LAYOUTRETURN's ff_ioerr4 or in
// LAYOUTERROR makes the MDS probe that data server at once; only the fleet's own evidence
// (probes, the MDS's own I/O timeouts) takes a data server out of placement. Reports are
// rate-limited per client, and a READ layout's WRITE/COMMIT errors say nothing about the
// mirrors' contents. Observed on the wire (OPEN and LAYOUTGET statuses), in the fleet's
// health (`ganesha-ff list`) and in the export's counters (`ganesha-ff stats`).
#include "admin_cli_support.hpp"
#include "layout_test_support.hpp"

#include <map>
#include <sstream>

using namespace flexfiles::layout_test;
namespace admin_cli = flexfiles::admin_cli;
using namespace std::chrono_literals;

namespace {

class HostileReports : public FlexfilesCluster {
protected:
    void SetUp() override {
        start_cluster({.with_dbus = true});
        ASSERT_TRUE(eventually(
            [&] { return cluster_->mds().log_contains("3 of 3 data server(s) Up"); }, 10s));
    }

    // `ganesha-ff <args>` against the MDS's dbus; its output, or a test failure.
    std::string cli(std::vector<std::string> args) {
        const CommandResult r = admin_cli::run(*cluster_->dbus(), std::move(args));
        EXPECT_TRUE(r.ok()) << r.output;
        return r.output;
    }

    // The export's counters, name -> value (`ganesha-ff --json stats`).
    std::map<std::string, std::uint64_t> stats() { return admin_cli::counters(*cluster_->dbus()); }

    // Data servers `ganesha-ff list` does not show Up.
    std::vector<std::string> servers_not_up() {
        std::istringstream in(cli({"list"}));
        std::vector<std::string> out;
        std::string line;
        std::getline(in, line); // header
        while (std::getline(in, line))
            if (line.find(" up ") == std::string::npos)
                out.push_back(line);
        return out;
    }

    static DeviceError device_error(const DeviceId& dev, nfsstat4 status, nfs_opnum4 op) {
        DeviceError e;
        std::memcpy(e.deviceid.data(), dev.data(), dev.size());
        e.status = status;
        e.opnum = op;
        return e;
    }
};

} // namespace

// One client returns its RW layout again and again with ff_ioerr4 entries that blame both
// mirrors' data servers (NFS4ERR_STALE on WRITE) while a second client creates files. The
// data servers answer their probes, so they stay Up and every create succeeds; the reports
// beyond the per-client budget are counted and do nothing.
TEST_F(HostileReports, AStormOfErrorReportsLeavesCreatesWorking) {
    auto hostile = open_session();
    auto victim = open_session();
    OpenFile file = create_rw(*hostile, "/ff/storm");
    const Layout first = must_layoutget(*hostile, file.fh, file.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(first.mirrors.size(), 2u);
    const std::vector<std::pair<DeviceId, nfsstat4>> blame{
        {first.mirrors[0][0].deviceid, NFS4ERR_STALE},
        {first.mirrors[1][0].deviceid, NFS4ERR_STALE}};
    const std::size_t mark = cluster_->mds().log_offset();

    constexpr int kRounds = 40;
    int failed_creates = 0;
    std::string first_failure;
    auto slowest = std::chrono::steady_clock::duration::zero();
    for (int i = 0; i < kRounds; i++) {
        const LayoutGetResult lg = layoutget(*hostile, file.fh, file.stateid, LAYOUTIOMODE4_RW);
        if (lg.layout)
            layoutreturn(*hostile, file.fh, lg.layout->stateid, ff_layoutreturn_body(blame, {}));
        const auto start = std::chrono::steady_clock::now();
        try {
            OpenFile made = create_rw(*victim, "/ff/made" + std::to_string(i));
            close_file(*victim, made);
        } catch (const std::exception& e) {
            if (failed_creates++ == 0)
                first_failure = e.what();
        }
        slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
    }

    EXPECT_EQ(failed_creates, 0) << "first failure: " << first_failure;
    // The client library retries NFS4ERR_DELAY; a create that needed a retry took >= 1 s.
    EXPECT_LT(slowest, 1s) << "a create was delayed: a report took data servers out of placement";
    EXPECT_TRUE(servers_not_up().empty()) << ::testing::PrintToString(servers_not_up());
    EXPECT_FALSE(cluster_->mds().log_contains("-> Suspect", mark))
        << "a client's report changed a data server's health";
    EXPECT_TRUE(cluster_->mds().log_contains("probing it now", mark))
        << "no report made the MDS probe the data server it names";
    const auto s = stats();
    EXPECT_GT(s.at("layout.ds_reports_rate_limited"), 0u);
    EXPECT_GT(s.at("layout.ds_reports_probed"), 0u);
    EXPECT_LE(s.at("layout.ds_reports_probed"),
              s.at("layout.ds_errors_reported") - s.at("layout.ds_reports_rate_limited"));
    close_file(*hostile, file);
}

// A READ layout's holder reports a WRITE error on one mirror (it could not have written
// through a READ layout): counted and ignored. No mirror is marked stale, no layout is
// recalled, and the next RW layout still names both mirrors.
TEST_F(HostileReports, AReadLayoutsWriteErrorMarksNothingStale) {
    auto writer = open_session();
    auto reader = open_session();
    OpenFile mine = create_rw(*writer, "/ff/shared");
    close_file(*writer, mine);
    OpenFile theirs = open_path(*reader, "/ff/shared", {});
    const Layout r = must_layoutget(*reader, theirs.fh, theirs.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(r.mirrors.size(), 2u);
    const std::size_t mark = cluster_->mds().log_offset();

    for (nfs_opnum4 op : {NFS4_OP_WRITE, NFS4_OP_COMMIT}) {
        Compound c;
        c.putfh(theirs.fh).layouterror(0, NFS4_UINT64_MAX, r.stateid,
                                       {device_error(r.mirrors[0][0].deviceid, NFS4ERR_IO, op)});
        const CompoundResult res = reader->send(c);
        ASSERT_TRUE(res.replied()) << res.error;
        EXPECT_EQ(res.status_of(1), std::optional<std::uint32_t>(NFS4_OK));
    }

    EXPECT_FALSE(cluster_->mds().log_contains("marked stale", mark));
    EXPECT_FALSE(cluster_->mds().log_contains("recalling", mark));
    EXPECT_EQ(stats().at("layout.ds_reports_read_layout_writes"), 2u);
    OpenFile again = open_path(*writer, "/ff/shared", {.access = OPEN4_SHARE_ACCESS_BOTH});
    const Layout rw = must_layoutget(*writer, again.fh, again.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(rw.mirrors.size(), 2u) << "a mirror was left out after a READ layout's report";
    close_file(*writer, again);
    close_file(*reader, theirs);
}
