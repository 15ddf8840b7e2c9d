// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The FLEXFILES dbus management interface (fsal_flexfiles/dbus/, org.ganesha.nfsd.flexfiles
// on /org/ganesha/nfsd/FlexFiles) through the admin CLI tools/ganesha-ff, and dbus-send
// for calls the CLI cannot make (wrong argument types).
//
// Cluster: 1 MDS (FLEXFILES over VFS, Mirrors = 1) + 4 NFSv3 data servers of which the
// export lists the first 3 (Id 1..3); the 4th is there for AddDataServer. A private bus:
// the MDS owns org.ganesha.nfsd on it, data server i owns ds<i>.org.ganesha.nfsd.
// Placement is round-robin over Up, undrained data servers, so files spread evenly.
#include "client/file_ops.hpp"
#include "client/flex_file.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"
#include "ff_harness/admin_cli.hpp"
#include "ff_harness/harness.hpp"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <sys/wait.h>

using namespace std::chrono_literals;
namespace fh = flexfiles::harness;
namespace admin_cli = flexfiles::admin_cli;
namespace fc = flexfiles::client;
namespace v3 = flexfiles::client::nfs3;

namespace {

// ganesha-ff's exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitInvalid = 3;
constexpr int kExitUnreachable = 4;

int exit_status(const fh::CommandResult& r) {
    return WIFEXITED(r.wait_status) ? WEXITSTATUS(r.wait_status) : -1;
}

// One row of `ganesha-ff list`.
struct DsRow {
    unsigned id = 0;
    std::string address; // host:port
    std::string state;
    bool drained = false;
    std::string deviceid;
    unsigned data_files = 0;
};

class DbusMgmt : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(admin_cli::binary())) << admin_cli::binary();
        fh::ClusterOptions options;
        options.data_servers = 4;
        options.with_dbus = true;
        options.configure_mds = [prefix = prefix_,
                                 two = two_exports_](fh::ServerOptions& mds,
                                                     const std::vector<fh::DataServerInfo>& ds) {
            mds.dbus_name_prefix = prefix;
            mds.exports[0].pseudo = "/ff";
            fh::FlexfilesOptions ff;
            ff.mirrors = 1;
            ff.only = {0, 1, 2};
            ff.extra = "        WCC_Max_Age = 60000;\n";
            if (two) {
                // A second FLEXFILES export (Export_Id 2, /ff2) on data servers of its own.
                ff.only = {0, 1};
                fh::ExportSpec second = mds.exports[0];
                second.export_id = 2;
                second.path.clear();
                second.pseudo = "/ff2";
                fh::FlexfilesOptions ff2 = ff;
                ff2.only = {2, 3};
                ff2.extra += "        DS_Direct_Connections = 0;\n";
                second.fsal = fh::flexfiles_fsal_block(ds, ff2);
                mds.exports.push_back(second);
            }
            mds.exports[0].fsal = fh::flexfiles_fsal_block(ds, ff);
        };
        cluster_ = std::make_unique<fh::Cluster>(options);
        fc::SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = 2;
        o.timeout = 10s;
        session_ = fc::Session::open(o);
        pnfs_ = std::make_unique<fc::PnfsClient>(*session_);
        wait_until_registered();
    }

    void TearDown() override {
        pnfs_.reset();
        session_.reset();
        // Ganesha logs every method that answers a dbus error at MAJ level (the calls with
        // bad arguments here); data server 5 exists only to be unreachable.
        // The restart in one test names data server 4, which it left holding data files.
        const std::vector<std::string> expected{"on (org.ganesha.nfsd.flexfiles) failed", "ds 5 (",
                                                "on data server 4, which is not configured"};
        if (cluster_) {
            EXPECT_TRUE(cluster_->mds().error_lines(expected).empty())
                << ::testing::PrintToString(cluster_->mds().error_lines(expected));
        }
    }

    // The interface is registered by a thread once the server's initialisation is done,
    // which can be a moment after the server answers NFS.
    void wait_until_registered() {
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < until) {
            if (exit_status(cli({"exports"})) == kExitOk)
                return;
            std::this_thread::sleep_for(100ms);
        }
        FAIL() << "the FLEXFILES dbus interface never appeared: " << cli({"exports"}).output;
    }

    fh::CommandResult cli(std::vector<std::string> args) {
        std::vector<std::string> argv{admin_cli::binary().string()};
        if (!prefix_.empty())
            argv.insert(argv.end(), {"--prefix", prefix_});
        argv.insert(argv.end(), args.begin(), args.end());
        return fh::run_command(argv, cluster_->dbus()->env(), 60s);
    }

    // `ganesha-ff list`, parsed from its table (also checks the table's shape).
    std::map<unsigned, DsRow> list() {
        const fh::CommandResult r = cli({"list"});
        EXPECT_EQ(exit_status(r), kExitOk) << r.output;
        std::map<unsigned, DsRow> rows;
        std::istringstream in(r.output);
        std::string line;
        std::getline(in, line);
        EXPECT_EQ(line.rfind("ID", 0), 0u) << r.output;
        while (std::getline(in, line)) {
            std::istringstream cols(line);
            DsRow row;
            std::string path, drained;
            if (!(cols >> row.id >> row.address >> path >> row.state >> drained >> row.deviceid >>
                  row.data_files)) {
                ADD_FAILURE() << "unparsable row: " << line;
                continue;
            }
            row.drained = drained == "yes";
            rows[row.id] = row;
        }
        return rows;
    }

    // `ganesha-ff stats --json` as name -> value (of one export, when the server has two).
    std::map<std::string, std::uint64_t> stats(std::optional<unsigned> export_id = {}) {
        std::vector<std::string> args{"--json", "stats"};
        if (export_id)
            args.insert(args.begin(), {"--export", std::to_string(*export_id)});
        const fh::CommandResult r = cli(args);
        EXPECT_EQ(exit_status(r), kExitOk) << r.output;
        const std::map<std::string, std::uint64_t> out = admin_cli::counters_of(r.output);
        EXPECT_FALSE(out.empty()) << r.output;
        return out;
    }

    // Opens (creating) /ff/<name>, or any path given from the root ("/ff2/x").
    std::unique_ptr<fc::FlexFile> open(const std::string& name) {
        fc::FlexOpenOptions o;
        o.create = true;
        return fc::FlexFile::open(*pnfs_, name.starts_with('/') ? name : "/ff/" + name, o);
    }

    // Creates (and so places) `n` files named prefix0, prefix1, ...
    void create_files(const std::string& prefix, unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            open(prefix + std::to_string(i))->close();
    }

    // Writes through an RW layout and hands the MDS the WRITE replies' attributes in a
    // LAYOUT_WCC (one compound with GETATTR).
    void write_with_layout_wcc(const std::string& name, std::uint32_t expect_status = NFS4_OK) {
        auto f = open(name);
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
        const std::vector<char> data(64 * 1024, 'x');
        const fc::IoOutcome w = f->try_write(0, data, v3::Stable::file_sync);
        ASSERT_TRUE(w.ok()) << w.describe();
        const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
        ASSERT_TRUE(g.wcc_status.has_value());
        EXPECT_EQ(*g.wcc_status, expect_status) << fc::status_name(*g.wcc_status);
        f->layoutreturn(false);
        f->close();
    }

    static unsigned total_files(const std::map<unsigned, DsRow>& rows) {
        unsigned n = 0;
        for (const auto& [id, r] : rows)
            n += r.data_files;
        return n;
    }

    std::string ds_block(unsigned id, const fh::DataServerInfo& ds) const {
        return "Id = " + std::to_string(id) + "; Address = " + ds.address +
               "; NFS_Port = " + std::to_string(ds.nfs_port) +
               "; MNT_Port = " + std::to_string(ds.mnt_port) + "; Export_Path = \"" +
               ds.export_path.string() + "\"";
    }

    // The MDS's Dbus_Name_Prefix (empty: none, the bus name is org.ganesha.nfsd).
    std::string prefix_;
    // Two FLEXFILES exports: /ff on data servers 1-2, /ff2 on data servers 3-4 (with
    // DS_Direct_Connections = 0).
    bool two_exports_ = false;
    std::unique_ptr<fh::Cluster> cluster_;
    std::unique_ptr<fc::Session> session_;
    std::unique_ptr<fc::PnfsClient> pnfs_;
};

// The same with NFS_CORE_PARAM { Dbus_Name_Prefix = "mds"; }: the CLI's --prefix.
class DbusMgmtPrefixed : public DbusMgmt {
protected:
    DbusMgmtPrefixed() { prefix_ = "mds"; }
};

// Two FLEXFILES exports in one server: each export's counters count its own operations.
class DbusMgmtTwoExports : public DbusMgmt {
protected:
    DbusMgmtTwoExports() { two_exports_ = true; }
};

TEST_F(DbusMgmtTwoExports, EachExportReportsItsOwnCounters) {
    const fh::CommandResult exports = cli({"exports"});
    ASSERT_EQ(exit_status(exports), kExitOk) << exports.output;
    EXPECT_NE(exports.output.find("/ff2"), std::string::npos) << exports.output;

    const std::vector<std::string> moved{"wcc.layout_wcc_ops", "wcc.entries_applied",
                                         "layout.layoutgets_rw", "data_path.files_placed"};
    // A LAYOUT_WCC through export `busy` moves its counters and none of `idle`'s.
    const auto check = [&](unsigned busy, unsigned idle, const std::string& path) {
        const auto busy_before = stats(busy);
        const auto idle_before = stats(idle);
        write_with_layout_wcc(path);
        const auto busy_after = stats(busy);
        const auto idle_after = stats(idle);
        for (const std::string& name : moved) {
            ASSERT_EQ(busy_after.count(name), 1u) << name;
            EXPECT_EQ(busy_after.at(name), busy_before.at(name) + 1)
                << "export " << busy << " " << name;
        }
        for (const auto& [name, value] : idle_before)
            EXPECT_EQ(idle_after.at(name), value) << "export " << idle << " " << name;
    };
    check(1, 2, "/ff/one");
    check(2, 1, "/ff2/two");
}

TEST_F(DbusMgmt, ListShowsThreeUpDataServersAndStatsCountLayoutWcc) {
    const auto rows = list();
    ASSERT_EQ(rows.size(), 3u);
    for (unsigned id = 1; id <= 3; ++id) {
        ASSERT_EQ(rows.count(id), 1u) << id;
        const DsRow& r = rows.at(id);
        EXPECT_EQ(r.state, "up") << id;
        EXPECT_FALSE(r.drained);
        EXPECT_EQ(r.deviceid, "0101464600000000000000000000000" + std::to_string(id));
        EXPECT_EQ(r.address, cluster_->ds_info()[id - 1].address + ":2049");
        EXPECT_EQ(r.data_files, 0u);
    }
    const fh::CommandResult json = cli({"--json", "list"});
    ASSERT_EQ(exit_status(json), kExitOk) << json.output;
    const std::regex up("\"state\": \"up\"");
    EXPECT_EQ(std::distance(std::sregex_iterator(json.output.begin(), json.output.end(), up),
                            std::sregex_iterator()),
              3);
    const fh::CommandResult exports = cli({"exports"});
    EXPECT_NE(exports.output.find("/ff"), std::string::npos) << exports.output;

    const auto before = stats();
    write_with_layout_wcc("wcc1");
    const auto after = stats();
    EXPECT_EQ(after.at("wcc.layout_wcc_ops"), before.at("wcc.layout_wcc_ops") + 1);
    EXPECT_EQ(after.at("wcc.entries_applied"), before.at("wcc.entries_applied") + 1);
    EXPECT_GT(after.at("cache.files"), 0u);
    EXPECT_EQ(after.count("cache.updates_in_place"), 1u); // the unit tests say when it moves
    EXPECT_EQ(after.count("cache.updates_through_anchor"), 1u);
    EXPECT_EQ(after.at("data_path.files_placed"), before.at("data_path.files_placed") + 1);
    EXPECT_EQ(after.at("layout.layoutgets_rw"), before.at("layout.layoutgets_rw") + 1);
    EXPECT_EQ(total_files(list()), 1u);
    // Every mirror took every write: nothing stale, nothing to resilver.
    EXPECT_EQ(after.at("data_path.degraded_writes"), 0u);
    EXPECT_EQ(after.at("resilver.stale_mirrors"), 0u);
    EXPECT_EQ(after.at("resilver.resilvered"), 0u);
    const fh::CommandResult listed = cli({"list"});
    EXPECT_NE(listed.output.find("STALE"), std::string::npos) << listed.output;

    // The table form lists the same counters.
    const fh::CommandResult table = cli({"stats"});
    ASSERT_EQ(exit_status(table), kExitOk) << table.output;
    EXPECT_NE(table.output.find("wcc.fallback_getattrs_sent"), std::string::npos);

    // A data server's ganesha has no FLEXFILES interface: --prefix reaches it, the call
    // finds nothing to talk to.
    const fh::CommandResult ds = cli({"--prefix", "ds1", "list"});
    EXPECT_EQ(exit_status(ds), kExitUnreachable) << ds.output;
}

// Writes through the MDS (no layout) report where their time went: waiting for the data
// server's event thread, the data server's round trip, and the wake-up of the waiting
// worker, each a part of the whole.
// Proxied writes report where their time went, on both ways a worker reaches a data
// server: /ff sends on the worker's own thread (the default DS_Direct_Connections), /ff2
// through the data servers' event threads (DS_Direct_Connections = 0), which shows as
// time waiting for them to send.
TEST_F(DbusMgmtTwoExports, ProxiedWritesReportWhereTheirTimeWent) {
    constexpr unsigned kWrites = 5;
    for (const unsigned export_id : {1u, 2u}) {
        const bool direct = export_id == 1;
        SCOPED_TRACE(direct ? "/ff: on the worker's thread" : "/ff2: through the event threads");
        fc::OpenOptions o;
        o.access = OPEN4_SHARE_ACCESS_BOTH;
        o.create = true;
        fc::OpenFile f = fc::open_path(*session_, direct ? "/ff/proxied" : "/ff2/proxied", o);
        const auto before = stats(export_id);
        const std::vector<char> page(4096, 'p');
        for (unsigned i = 0; i < kWrites; ++i)
            fc::write_file(*session_, f, std::uint64_t{i} * 4096, page, UNSTABLE4);
        const auto after = stats(export_id);
        fc::close_file(*session_, f);

        auto moved = [&](const std::string& name) {
            EXPECT_EQ(after.count(name), 1u) << name;
            return after.count(name) ? after.at(name) - before.at(name) : 0;
        };
        EXPECT_EQ(moved("data_path.proxy_writes"), kWrites);
        EXPECT_EQ(moved("data_path.proxy_writes_direct"), direct ? kWrites : 0u);
        EXPECT_EQ(moved("data_path.proxy_writes_timed"), kWrites);
        const std::uint64_t queue = moved("data_path.proxy_write_queue_ns");
        const std::uint64_t ds = moved("data_path.proxy_write_data_server_ns");
        const std::uint64_t wake = moved("data_path.proxy_write_wake_ns");
        const std::uint64_t total = moved("data_path.proxy_write_total_ns");
        if (direct)
            EXPECT_EQ(queue, 0u) << "sent by the worker itself: nothing to wait for";
        else
            EXPECT_GT(queue, 0u);
        EXPECT_GT(ds, 0u);
        EXPECT_GT(wake, 0u);
        EXPECT_GE(total, queue + ds + wake);
        // Loopback round trips: far below a second each.
        EXPECT_LT(total, kWrites * 1'000'000'000ull);
    }
}

TEST_F(DbusMgmtPrefixed, DrainedDataServerGetsNoNewFilesUntilUndrained) {
    // Without the prefix there is nobody to talk to.
    const fh::CommandResult unprefixed =
        fh::run_command({admin_cli::binary().string(), "list"}, cluster_->dbus()->env(), 60s);
    EXPECT_EQ(exit_status(unprefixed), kExitUnreachable) << unprefixed.output;

    const fh::CommandResult drain = cli({"drain", "1"});
    ASSERT_EQ(exit_status(drain), kExitOk) << drain.output;
    EXPECT_TRUE(list().at(1).drained);

    create_files("drained", 10);
    auto rows = list();
    EXPECT_EQ(rows.at(1).data_files, 0u) << "a drained data server got new files";
    EXPECT_EQ(rows.at(2).data_files + rows.at(3).data_files, 10u);

    const fh::CommandResult undrain = cli({"undrain", "1"});
    ASSERT_EQ(exit_status(undrain), kExitOk) << undrain.output;
    EXPECT_FALSE(list().at(1).drained);
    create_files("undrained", 9);
    rows = list();
    EXPECT_GE(rows.at(1).data_files, 2u) << "round-robin over 3 again";
    EXPECT_EQ(total_files(rows), 19u);
}

TEST_F(DbusMgmt, RemoveIsRefusedWhileHoldingFilesAndAnAddedDataServerTakesPlacements) {
    create_files("spread", 6);
    auto rows = list();
    ASSERT_GT(rows.at(1).data_files, 0u);
    const unsigned held = rows.at(1).data_files;

    const fh::CommandResult refused = cli({"remove", "1"});
    EXPECT_EQ(exit_status(refused), kExitRefused) << refused.output;
    EXPECT_NE(refused.output.find("still holds " + std::to_string(held) + " data file(s)"),
              std::string::npos)
        << refused.output;
    rows = list();
    EXPECT_EQ(rows.size(), 3u) << "nothing removed";
    EXPECT_FALSE(rows.at(1).drained) << "the refusal left its drain flag as it was";

    // Data server 4 of the cluster, unknown to the export until now.
    const fh::CommandResult add = cli({"add", ds_block(4, cluster_->ds_info()[3])});
    ASSERT_EQ(exit_status(add), kExitOk) << add.output;
    EXPECT_NE(add.output.find("added, up"), std::string::npos) << add.output;
    rows = list();
    ASSERT_EQ(rows.count(4), 1u);
    EXPECT_EQ(rows.at(4).state, "up");
    EXPECT_EQ(rows.at(4).deviceid, "01014646000000000000000000000004");

    create_files("four", 8);
    rows = list();
    EXPECT_GE(rows.at(4).data_files, 1u) << "round-robin over 4 includes the new one";

    // A client can use a layout naming the new data server (GETDEVICEINFO knows it).
    bool wrote_on_4 = false;
    for (unsigned i = 0; i < 8 && !wrote_on_4; ++i) {
        auto f = open("four" + std::to_string(i));
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
        if (f->data_files().at(0).address.host == cluster_->ds_info()[3].address) {
            const std::vector<char> data(4096, 'y');
            const fc::IoOutcome w = f->try_write(0, data, v3::Stable::file_sync);
            EXPECT_TRUE(w.ok()) << w.describe();
            wrote_on_4 = true;
        }
        f->layoutreturn(false);
        f->close();
    }
    EXPECT_TRUE(wrote_on_4);

    // Added twice: the Id is taken; nothing changes.
    const fh::CommandResult again = cli({"add", ds_block(4, cluster_->ds_info()[3])});
    EXPECT_EQ(exit_status(again), kExitInvalid) << again.output;
    EXPECT_NE(again.output.find("Id = 4 is already used"), std::string::npos) << again.output;

    // A data server that holds nothing can go: one added where nothing answers.
    fh::DataServerInfo nowhere = cluster_->ds_info()[3];
    nowhere.address = cluster_->addresses().address(200);
    const fh::CommandResult add5 = cli({"add", ds_block(5, nowhere)});
    ASSERT_EQ(exit_status(add5), kExitOk) << add5.output;
    EXPECT_EQ(list().size(), 5u);
    const fh::CommandResult remove5 = cli({"remove", "5"});
    EXPECT_EQ(exit_status(remove5), kExitOk) << remove5.output;
    rows = list();
    EXPECT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows.count(5), 0u);

    // Changes over dbus last until a restart: the MDS comes back with ganesha.conf's three
    // data servers and names the added one that still holds data files, with their count.
    const std::uint64_t on4 = rows.at(4).data_files;
    ASSERT_GT(on4, 0u);
    pnfs_.reset();
    session_.reset();
    cluster_->mds().restart();
    wait_until_registered();
    EXPECT_EQ(list().size(), 3u);
    EXPECT_TRUE(cluster_->mds().log_contains(
        "holds " + std::to_string(on4) +
        " data file(s) (and 0 removal(s) pending) on data server 4, which is not configured"));
}

TEST_F(DbusMgmt, PolicyChangesTakeEffectAndBadValuesChangeNothing) {
    const fh::CommandResult shown = cli({"--json", "policy"});
    ASSERT_EQ(exit_status(shown), kExitOk) << shown.output;
    EXPECT_NE(shown.output.find("\"trust_wcc\": true"), std::string::npos) << shown.output;
    EXPECT_NE(shown.output.find("\"wcc_max_age_ms\": 60000"), std::string::npos);

    const fh::CommandResult off = cli({"policy", "--trust-wcc", "off"});
    ASSERT_EQ(exit_status(off), kExitOk) << off.output;
    const auto before = stats();
    write_with_layout_wcc("untrusted");
    const auto after = stats();
    EXPECT_EQ(after.at("wcc.ops_untrusted"), before.at("wcc.ops_untrusted") + 1);
    EXPECT_EQ(after.at("wcc.entries_untrusted"), before.at("wcc.entries_untrusted") + 1);
    EXPECT_EQ(after.at("wcc.entries_applied"), before.at("wcc.entries_applied"));

    // Out of range (WCC_Max_Age <= 3600000 ms, DS_Getattr_Deadline 1..60000 ms).
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"policy", "--wcc-max-age", "3600001"},
             {"policy", "--deadline", "0"},
             {"policy", "--trust-wcc", "on", "--deadline", "60001"}}) {
        const fh::CommandResult bad = cli(args);
        EXPECT_EQ(exit_status(bad), kExitInvalid) << bad.output;
        EXPECT_NE(bad.output.find("out of range"), std::string::npos) << bad.output;
    }
    const fh::CommandResult unchanged = cli({"--json", "policy"});
    EXPECT_NE(unchanged.output.find("\"trust_wcc\": false"), std::string::npos) << unchanged.output;
    EXPECT_NE(unchanged.output.find("\"ds_getattr_deadline_ms\": 500"), std::string::npos);

    // On again, with WCC_Max_Age = 0: every GETATTR of a file under an RW layout asks the
    // data servers, even right after a LAYOUT_WCC.
    const fh::CommandResult on = cli({"policy", "--trust-wcc", "on", "--wcc-max-age", "0"});
    ASSERT_EQ(exit_status(on), kExitOk) << on.output;
    const auto before_on = stats();
    auto f = open("maxage0");
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    const std::vector<char> data(4096, 'z');
    ASSERT_TRUE(f->try_write(0, data, v3::Stable::file_sync).ok());
    const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
    ASSERT_EQ(g.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
    const auto after_on = stats();
    EXPECT_EQ(after_on.at("wcc.entries_applied"), before_on.at("wcc.entries_applied") + 1);
    EXPECT_GT(after_on.at("wcc.fallback_getattrs_sent"),
              before_on.at("wcc.fallback_getattrs_sent"));
    f->layoutreturn(false);
    f->close();
}

TEST_F(DbusMgmt, FlushDropsCachedAttributes) {
    write_with_layout_wcc("flush1");
    write_with_layout_wcc("flush2");
    ASSERT_EQ(stats().at("cache.files"), 2u);

    const fh::CommandResult one = cli({"flush", "flush1"});
    ASSERT_EQ(exit_status(one), kExitOk) << one.output;
    EXPECT_NE(one.output.find("flushed 1 cached data file(s)"), std::string::npos) << one.output;
    EXPECT_EQ(stats().at("cache.files"), 1u);

    const fh::CommandResult missing = cli({"flush", "no-such-file"});
    EXPECT_EQ(exit_status(missing), kExitInvalid) << missing.output;
    const fh::CommandResult escape = cli({"flush", "../etc"});
    EXPECT_EQ(exit_status(escape), kExitInvalid) << escape.output;
    EXPECT_NE(escape.output.find("\"..\" is not allowed"), std::string::npos) << escape.output;

    const fh::CommandResult all = cli({"--json", "flush"});
    ASSERT_EQ(exit_status(all), kExitOk) << all.output;
    EXPECT_NE(all.output.find("of 1 file(s)"), std::string::npos) << all.output;
    EXPECT_EQ(stats().at("cache.files"), 0u);

    // The next GETATTR asks the data server again.
    const auto before = stats();
    auto f = open("flush1");
    const fc::WccGetattr g = f->getattr();
    ASSERT_TRUE(g.attrs.size.has_value());
    EXPECT_EQ(*g.attrs.size, 64u * 1024);
    f->close();
    EXPECT_GT(stats().at("wcc.fallback_getattrs_sent"), before.at("wcc.fallback_getattrs_sent"));
}

TEST_F(DbusMgmt, BadArgumentsAreErrorsAndChangeNothing) {
    const auto before = list();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"drain", "9"},
             {"undrain", "9"},
             {"remove", "9"},
             {"add", "Id = 9; Bogus = 1"},
             {"add", "Id = 9; Address = not-an-address; Export_Path = /x"},
             {"add", "Id = 9; Address = 127.0.0.9; Export_Path = relative"},
             {"add", "Id = 9; Address = 127.0.0.9; Export_Path = /x; NFS_Port = 70000"},
             {"add", "Data_Server { Id = 2; Address = 127.0.0.9; Export_Path = /x }"},
             {"add", ""},
             {"--export", "77", "list"},
         }) {
        const fh::CommandResult r = cli(args);
        EXPECT_EQ(exit_status(r), kExitInvalid) << ::testing::PrintToString(args) << r.output;
        EXPECT_NE(r.output.find("ganesha-ff: "), std::string::npos) << r.output;
    }
    const fh::CommandResult bad_export = cli({"--export", "77", "stats"});
    EXPECT_NE(bad_export.output.find("no export with id 77"), std::string::npos)
        << bad_export.output;
    const fh::CommandResult usage = cli({"drain", "one"});
    EXPECT_EQ(exit_status(usage), 2) << usage.output;

    // Wrong types straight over dbus: an InvalidArgs error naming the argument.
    const fh::CommandResult wrong = cluster_->dbus()->send(
        "org.ganesha.nfsd", "/org/ganesha/nfsd/FlexFiles",
        "org.ganesha.nfsd.flexfiles.DrainDataServer", {"string:1", "uint32:1"});
    EXPECT_FALSE(wrong.ok()) << wrong.output;
    EXPECT_NE(wrong.output.find("InvalidArgs"), std::string::npos) << wrong.output;
    EXPECT_NE(wrong.output.find("export_id"), std::string::npos) << wrong.output;
    const fh::CommandResult extra =
        cluster_->dbus()->send("org.ganesha.nfsd", "/org/ganesha/nfsd/FlexFiles",
                               "org.ganesha.nfsd.flexfiles.GetStats", {"uint16:1", "uint16:2"});
    EXPECT_FALSE(extra.ok()) << extra.output;
    EXPECT_NE(extra.output.find("too many arguments"), std::string::npos) << extra.output;
    const fh::CommandResult policy = cluster_->dbus()->send(
        "org.ganesha.nfsd", "/org/ganesha/nfsd/FlexFiles", "org.ganesha.nfsd.flexfiles.SetPolicy",
        {"uint16:1", "boolean:true", "uint32:1000"});
    EXPECT_FALSE(policy.ok()) << policy.output;
    EXPECT_NE(policy.output.find("ds_getattr_deadline_ms"), std::string::npos) << policy.output;

    // Export 1 named explicitly works; nothing above changed anything.
    const fh::CommandResult explicit_export = cli({"--export", "1", "list"});
    EXPECT_EQ(exit_status(explicit_export), kExitOk) << explicit_export.output;
    const auto after = list();
    ASSERT_EQ(after.size(), before.size());
    for (const auto& [id, row] : after) {
        EXPECT_EQ(row.drained, before.at(id).drained);
        EXPECT_EQ(row.state, "up");
    }
    const fh::CommandResult policy_now = cli({"--json", "policy"});
    EXPECT_NE(policy_now.output.find("\"ds_getattr_deadline_ms\": 500"), std::string::npos)
        << policy_now.output;
}

} // namespace
