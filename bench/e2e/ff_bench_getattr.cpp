// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-bench-getattr: what GETATTR costs on a FLEXFILES MDS, end to end, with real servers.
//
// One cluster (1 MDS + 3 NFSv3 data servers, Mirrors = 2, a private dbus, the data servers
// counting their NFSv3 operations with Enable_FULLV3_Stats), three MDS exports:
//   /wcc    FLEXFILES, Trust_WCC = true   (WCC_Max_Age at its default, 1 s)
//   /nowcc  FLEXFILES, Trust_WCC = false  (the same data servers)
//   /vfs    plain VFS (a reference row only)
//   /exact  FLEXFILES with Attr_Expiration_Time = 0: MDCACHE asks the FSAL on every GETATTR
// Every export but /exact leaves Attr_Expiration_Time at Ganesha's default, as the README
// recommends (FLEXFILES bounds MDCACHE's hold on a regular file to WCC_Max_Age, rounded up
// to whole seconds, and pushes LAYOUT_WCC's attributes up to it).
//
// Part a: GETATTR (PUTFH, GETATTR) from 1, 8, 32 sessions, one thread each, over a few
// files, for a fixed time per cell:
//   wcc    files under an RW layout; a writer client writes through the layout and sends
//          LAYOUT_WCC every 250 ms, so the MDS's attributes stay fresher than WCC_Max_Age
//   nowcc  the same on /nowcc: the MDS ignores the reports and asks the data servers
//   floor  files on /wcc that no client holds a layout on: no data server involved
//   exact  the same on /exact: what the exact WCC_Max_Age configuration costs
//   vfs    files on the plain VFS export (reference)
// Part b: from the same session counts, each session holding an RW layout on its own
// file, SEQUENCE+PUTFH+LAYOUT_WCC+GETATTR compounds vs SEQUENCE+PUTFH+GETATTR compounds;
// beside them, to tell what LAYOUT_WCC costs apart: LAYOUT_WCC with no mirrors, GETFH and
// TEST_STATEID (of the session's layout stateid) in LAYOUT_WCC's place, and GETATTR-only
// a second time (the control).
//
// Data-server GETATTRs are the delta of the data servers' GETATTR counters around each
// cell (read over dbus while the cell's threads are idle); the client never sends GETATTR
// to a data server and the MDS probes with NULL, so each one is the MDS's fallback.
//
// Writes <out>/e2e.md (Markdown tables), <out>/e2e.dat and <out>/e2e-b.dat (gnuplot).
#include "bench_support.hpp"
#include "client/file_ops.hpp"
#include "client/flex_file.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"
#include "perf_profile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

using bench::context_switches_between;
using bench::fmt;
using bench::process_cpu_seconds;
using bench::progress;
using bench::self_cpu_seconds;
using bench::thread_context_switches;

constexpr std::chrono::milliseconds kWccMaxAge{1000}; // FF_CFG_WCC_MAX_AGE_MS_DEFAULT
constexpr std::chrono::milliseconds kKeeperPeriod{250};
constexpr unsigned kMirrors = 2;

struct Args {
    double cell_seconds = 3.0;
    double warmup_seconds = 0.3;
    unsigned rounds = 2;
    std::vector<unsigned> sessions{1, 8, 32};
    unsigned files = 8;
    std::string out_dir = ".";
    bool part_a = true; // --parts b leaves part a out (and its tables)
    // --profile no: no perf round after part b's cells (they run when perf is installed)
    bool profile = true;
    // --keep-profile yes: the profile rounds' perf.data files stay in --out (one per cell
    // and session count, GETATTR-only profiled too) for perf report / perf diff.
    bool keep_profile = false;
};

std::vector<unsigned> parse_list(const std::string& s) {
    std::vector<unsigned> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(static_cast<unsigned>(std::stoul(item)));
    return out;
}

Args parse_args(int argc, char** argv) {
    Args a;
    bench::for_each_option(
        argc, argv,
        "usage: ff-bench-getattr [--seconds S] [--warmup S] [--rounds N] [--sessions 1,8,32] "
        "[--files N] [--parts a,b|b] [--profile yes|no] [--keep-profile yes|no] [--out DIR]",
        [&](const std::string& k, const std::string& v) {
            if (k == "--seconds")
                a.cell_seconds = std::stod(v);
            else if (k == "--warmup")
                a.warmup_seconds = std::stod(v);
            else if (k == "--sessions")
                a.sessions = parse_list(v);
            else if (k == "--rounds")
                a.rounds = static_cast<unsigned>(bench::number(k, v));
            else if (k == "--files")
                a.files = static_cast<unsigned>(bench::number(k, v));
            else if (k == "--out")
                a.out_dir = v;
            else if (k == "--profile" && (v == "yes" || v == "no"))
                a.profile = v == "yes";
            else if (k == "--keep-profile" && (v == "yes" || v == "no"))
                a.keep_profile = v == "yes";
            else if (k == "--parts" && (v == "a,b" || v == "b"))
                a.part_a = v == "a,b";
            else
                return false;
            return true;
        });
    return a;
}

std::unique_ptr<fc::Session> open_session(Cluster& cluster) {
    fc::SessionOptions so;
    so.host = cluster.mds().address();
    so.port = cluster.mds().nfs_port();
    so.minor_version = 2;
    return fc::Session::open(so);
}

// Sum of the data servers' GETATTR counters (GetFULLV3Stats over the private bus).
std::uint64_t ds_getattrs(Cluster& cluster) {
    static const std::regex kGetattr("string \"GETATTR\"\\s+uint64 ([0-9]+)");
    std::uint64_t sum = 0;
    for (unsigned i = 0; i < cluster.ds_count(); ++i) {
        CommandResult r =
            cluster.dbus()->send(cluster.ds(i).dbus_bus_name(), "/org/ganesha/nfsd/ExportMgr",
                                 "org.ganesha.nfsd.exportstats.GetFULLV3Stats");
        if (!r.ok() || r.output.find("disabled") != std::string::npos)
            throw std::runtime_error("GetFULLV3Stats on ds" + std::to_string(i + 1) + ": " +
                                     r.output);
        std::smatch m;
        // No GETATTR served yet: the op is not listed.
        if (std::regex_search(r.output, m, kGetattr))
            sum += std::stoull(m[1]);
    }
    return sum;
}

// ---- One measured cell: N threads, one session each, looping one operation. ----

// One (case, session count): the sum of its rounds.
struct CellResult {
    std::string label;
    unsigned sessions = 0;
    unsigned rounds = 0;
    std::uint64_t ops = 0;
    std::uint64_t errors = 0;
    double seconds = 0;
    double p50_us = 0;
    double p99_us = 0;
    std::uint64_t ds_getattrs = 0;
    // Sum over rounds of floor(round length / WCC_Max_Age) + 1: the most WCC_Max_Age
    // windows one data file can have been refreshed in.
    double windows_bound = 0;
    std::vector<std::int64_t> latencies_ns;
    unsigned lapsed_rounds = 0; // rounds overlapping a LapseLog entry
    std::uint64_t ds_getattrs_in_lapsed_rounds = 0;
    double mds_cpu_s = 0;           // the MDS process's user + system CPU time in the measured runs
    double client_cpu_s = 0;        // this process's (every client thread, keepers included)
    std::uint64_t mds_switches = 0; // the MDS threads' context switches in the measured runs
    // Each round on its own, in order: rate, and MDS / client CPU per operation (us). Round
    // r of every case of a session count ran side by side with round r of the others.
    std::vector<double> round_rates;
    std::vector<double> round_mds_us;
    std::vector<double> round_client_us;
    // Part b: from one more round with perf sampling the MDS (profile_round), the share of
    // the MDS's samples under each of kProfiledSymbols; empty when not profiled.
    std::map<std::string, double> profile_shares;
    // MDS + client CPU per operation: what one operation costs the machine.
    double cpu_us_per_op() const { return mds_us_per_op() + client_us_per_op(); }
    double mds_us_per_op() const { return ops > 0 ? mds_cpu_s * 1e6 / ops : 0; }
    double client_us_per_op() const { return ops > 0 ? client_cpu_s * 1e6 / ops : 0; }
    double ops_per_s() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
    double mds_switches_per_op() const {
        return ops > 0 ? static_cast<double>(mds_switches) / static_cast<double>(ops) : 0;
    }
    double ds_per_op() const {
        return ops > 0 ? static_cast<double>(ds_getattrs) / static_cast<double>(ops) : 0;
    }
};

// op(thread, iteration): one compound; false when it failed.
using Op = std::function<bool(unsigned thread, std::uint64_t iteration)>;

struct PhaseOutcome {
    std::uint64_t ops = 0;
    std::uint64_t errors = 0;
    double seconds = 0;
    std::vector<std::int64_t> latencies_ns;
};

PhaseOutcome run_phase(unsigned threads, std::chrono::duration<double> length, const Op& op,
                       bool record) {
    std::vector<std::vector<std::int64_t>> lat(threads);
    std::vector<std::uint64_t> errors(threads, 0);
    std::latch go(threads + 1);
    Clock::time_point deadline{};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            if (record)
                lat[t].reserve(1 << 16);
            go.arrive_and_wait();
            std::uint64_t n = 0;
            for (Clock::time_point now = Clock::now(); now < deadline;) {
                bool ok = false;
                try {
                    ok = op(t, n++);
                } catch (const std::exception&) {
                    ok = false;
                }
                const Clock::time_point end = Clock::now();
                if (!ok)
                    errors[t]++;
                if (record)
                    lat[t].push_back((end - now).count());
                else
                    lat[t].push_back(0);
                now = end;
            }
        });
    const Clock::time_point t0 = Clock::now();
    deadline = t0 + std::chrono::duration_cast<Clock::duration>(length);
    go.arrive_and_wait();
    for (auto& th : pool)
        th.join();
    PhaseOutcome out;
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (unsigned t = 0; t < threads; ++t) {
        out.ops += lat[t].size();
        out.errors += errors[t];
        if (record)
            out.latencies_ns.insert(out.latencies_ns.end(), lat[t].begin(), lat[t].end());
    }
    return out;
}

double percentile_us(std::vector<std::int64_t>& v, double p) {
    if (v.empty())
        return 0;
    const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]) / 1000.0;
}

// When a writer's answered LAYOUT_WCCs for one file were more than WCC_Max_Age apart
// (a starved machine): from the last answered report to the next. The MDS then rightly
// asks the data servers, so a round overlapping one does not measure "fresh WCC".
class LapseLog {
public:
    void add(Clock::time_point from, Clock::time_point to) {
        std::lock_guard lock(mu_);
        lapses_.emplace_back(from, to);
    }
    bool overlaps(Clock::time_point from, Clock::time_point to) {
        std::lock_guard lock(mu_);
        return std::any_of(lapses_.begin(), lapses_.end(),
                           [&](const auto& l) { return l.first < to && from < l.second; });
    }

private:
    std::mutex mu_;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> lapses_;
};

LapseLog& lapse_log() {
    static LapseLog log;
    return log;
}

// One round of a cell: warm-up (not counted), the data servers' counters, the measured
// run, the counters again (the threads are idle while the counters are read).
void run_round(Cluster& cluster, const Args& args, CellResult& c, const Op& op) {
    run_phase(c.sessions, std::chrono::duration<double>(args.warmup_seconds), op, false);
    const std::uint64_t before = ds_getattrs(cluster);
    const double mds0 = process_cpu_seconds(cluster.mds().pid());
    const double self0 = self_cpu_seconds();
    const auto switches0 = thread_context_switches(cluster.mds().pid());
    const Clock::time_point t0 = Clock::now();
    PhaseOutcome p =
        run_phase(c.sessions, std::chrono::duration<double>(args.cell_seconds), op, true);
    const Clock::time_point t1 = Clock::now();
    const double mds_before = c.mds_cpu_s;
    const double client_before = c.client_cpu_s;
    c.mds_cpu_s += process_cpu_seconds(cluster.mds().pid()) - mds0;
    c.client_cpu_s += self_cpu_seconds() - self0;
    c.mds_switches +=
        context_switches_between(switches0, thread_context_switches(cluster.mds().pid()));
    const std::uint64_t after = ds_getattrs(cluster);
    c.rounds++;
    // A lapse may still be open (no answered report yet): look again a moment later.
    std::this_thread::sleep_for(2 * kKeeperPeriod);
    if (lapse_log().overlaps(t0, t1)) {
        c.lapsed_rounds++;
        c.ds_getattrs_in_lapsed_rounds += after - before;
    }
    c.round_rates.push_back(p.seconds > 0 ? static_cast<double>(p.ops) / p.seconds : 0);
    c.round_mds_us.push_back(p.ops > 0 ? (c.mds_cpu_s - mds_before) * 1e6 / p.ops : 0);
    c.round_client_us.push_back(p.ops > 0 ? (c.client_cpu_s - client_before) * 1e6 / p.ops : 0);
    c.ops += p.ops;
    c.errors += p.errors;
    c.seconds += p.seconds;
    c.ds_getattrs += after - before;
    c.windows_bound +=
        std::floor(p.seconds / std::chrono::duration<double>(kWccMaxAge).count()) + 1;
    c.latencies_ns.insert(c.latencies_ns.end(), p.latencies_ns.begin(), p.latencies_ns.end());
    std::ostringstream line;
    line << std::fixed << std::setprecision(0) << c.label << " x" << c.sessions << " round "
         << c.rounds << ": " << static_cast<double>(p.ops) / p.seconds << " ops/s, DS GETATTRs "
         << after - before << ", errors " << p.errors << ", MDS us/op " << std::setprecision(1)
         << (c.mds_cpu_s - mds_before) * 1e6 / std::max<std::uint64_t>(p.ops, 1);
    progress(line.str());
}

// The median of f(r) over the rounds both cells ran: each round pairs cells measured side
// by side, so a load change between rounds cancels out, and one disturbed round cannot
// move the median.
template <class F> double median_over_rounds(const CellResult& x, const CellResult& y, F f) {
    std::vector<double> v;
    for (std::size_t r = 0; r < std::min(x.round_rates.size(), y.round_rates.size()); ++r)
        v.push_back(f(r));
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
// x / y by rate, and by CPU cost (y's MDS + client CPU per op over x's).
double median_rate_ratio(const CellResult& x, const CellResult& y) {
    return median_over_rounds(x, y, [&](std::size_t r) {
        return y.round_rates[r] > 0 ? x.round_rates[r] / y.round_rates[r] : 0;
    });
}
double median_cpu_ratio(const CellResult& x, const CellResult& y) {
    return median_over_rounds(x, y, [&](std::size_t r) {
        const double cx = x.round_mds_us[r] + x.round_client_us[r];
        return cx > 0 ? (y.round_mds_us[r] + y.round_client_us[r]) / cx : 0;
    });
}
// The lowest and highest of x / y by rate over the rounds.
std::pair<double, double> rate_ratio_range(const CellResult& x, const CellResult& y) {
    double lo = 1e9, hi = 0;
    for (std::size_t r = 0; r < std::min(x.round_rates.size(), y.round_rates.size()); ++r)
        if (y.round_rates[r] > 0) {
            lo = std::min(lo, x.round_rates[r] / y.round_rates[r]);
            hi = std::max(hi, x.round_rates[r] / y.round_rates[r]);
        }
    return {lo, hi};
}
// x's MDS CPU per op minus y's.
double median_mds_us_difference(const CellResult& x, const CellResult& y) {
    return median_over_rounds(x, y,
                              [&](std::size_t r) { return x.round_mds_us[r] - y.round_mds_us[r]; });
}

// The MDS CPU per LAYOUT_WCC at which LAYOUT_WCC+GETATTR / GETATTR-only by CPU cost is 0.9,
// once this client's own cost of the larger compound is paid (median over the rounds), us.
double budget_at_ratio_09_us(const CellResult& g, const CellResult& w) {
    return median_over_rounds(w, g, [&](std::size_t r) {
        return (g.round_mds_us[r] + g.round_client_us[r]) / 0.9 - g.round_mds_us[r] -
               w.round_client_us[r];
    });
}

// LAYOUT_WCC's steps as perf names them: the operation with all it calls, Ganesha's
// stateid check within it, and the FSAL's method within it (through MDCACHE).
const char* const kSymOp = "nfs4_op_layout_wcc";
const char* const kSymStateid = "nfs4_Check_Stateid";
const char* const kSymMethod = "mdcache_layout_wcc";
const std::vector<std::string> kProfiledSymbols{kSymOp, kSymStateid, kSymMethod};

// One more round of a cell, left out of its figures, with perf sampling the MDS (4 s at
// least, for a few hundred samples in the operation): what share of the MDS's CPU went to
// each step of LAYOUT_WCC. perf's own cost lands on the MDS during this round, which is why
// the shares are applied to the measured rounds' CPU, not to this round's.
void profile_round(Cluster& cluster, const Args& args, CellResult& c, const Op& op,
                   const std::string& cell) {
    run_phase(c.sessions, std::chrono::duration<double>(args.warmup_seconds), op, false);
    const std::filesystem::path file =
        args.keep_profile ? std::filesystem::path(args.out_dir) /
                                (cell + "-x" + std::to_string(c.sessions) + ".perf")
                          : std::filesystem::temp_directory_path() /
                                ("ff-bench-getattr-" + std::to_string(::getpid()) + ".perf");
    bench::PerfRecording rec(cluster.mds().pid(), file);
    run_phase(c.sessions, std::chrono::duration<double>(std::max(args.cell_seconds, 4.0)), op,
              false);
    if (rec.finish())
        c.profile_shares = rec.children_shares(kProfiledSymbols);
    else
        progress("perf record on the MDS failed; see " + file.string() + ".log");
    if (args.keep_profile) {
        progress("kept " + file.string());
        return;
    }
    std::filesystem::remove(file);
    if (!c.profile_shares.empty())
        std::filesystem::remove(file.string() + ".log");
}

// The median over the rounds of a cell's MDS CPU per compound, us.
double median_mds_us(const CellResult& c) {
    return median_over_rounds(c, c, [&](std::size_t r) { return c.round_mds_us[r]; });
}

// A profiled step's MDS CPU per compound of a cell, us: its share of the profile round's
// samples times the measured rounds' median; nullopt when the cell was not profiled.
std::optional<double> profiled_us(const CellResult& c, const char* symbol) {
    const auto it = c.profile_shares.find(symbol);
    if (it == c.profile_shares.end())
        return std::nullopt;
    return it->second * median_mds_us(c);
}

// What the larger compound costs the MDS outside LAYOUT_WCC itself: the MDS CPU per
// LAYOUT_WCC by difference (median) minus the operation in the profile; nullopt when not
// profiled.
std::optional<double> outside_operation_us(const CellResult& g, const CellResult& w) {
    const std::optional<double> op = profiled_us(w, kSymOp);
    if (!op)
        return std::nullopt;
    return median_mds_us_difference(w, g) - *op;
}

void finish(CellResult& c) {
    c.p50_us = percentile_us(c.latencies_ns, 0.50);
    c.p99_us = percentile_us(c.latencies_ns, 0.99);
    c.latencies_ns = {};
}

// How the cases of a session count are ordered in each round.
enum class RoundOrder {
    // As given, reversed every other round: a load change on the machine hits every case
    // alike, and a case at an end of the round stays at the ends.
    Reversed,
    // A Williams design (balanced Latin square): within every 2n rounds (n for an even n),
    // every case takes every place in the round equally often and follows every other case
    // equally often, so no comparison between two cases is one of an end against a middle.
    Balanced,
};

// The order of `n` cases in round `r`.
std::vector<std::size_t> round_order(std::size_t n, unsigned r, RoundOrder how) {
    std::vector<std::size_t> order(n);
    if (how == RoundOrder::Reversed) {
        for (std::size_t i = 0; i < n; ++i)
            order[i] = r % 2 == 0 ? i : n - 1 - i;
        return order;
    }
    // 0, 1, n-1, 2, n-2, ... shifted by r; for an odd n, the second n rounds run backwards.
    for (std::size_t i = 0, low = 1, high = n - 1; i < n; ++i)
        order[i] = ((i == 0 ? 0 : i % 2 == 1 ? low++ : high--) + r % n) % n;
    if (n % 2 == 1 && (r / n) % 2 == 1)
        std::reverse(order.begin(), order.end());
    return order;
}

// Runs every case at one session count for args.rounds rounds, in the order `how` says.
void run_cells(Cluster& cluster, const Args& args, unsigned sessions,
               const std::vector<std::pair<const char*, Op>>& cases, RoundOrder how,
               std::map<std::string, std::map<unsigned, CellResult>>& into) {
    for (const auto& [label, op] : cases) {
        CellResult& c = into[label][sessions];
        c.label = label;
        c.sessions = sessions;
    }
    for (unsigned r = 0; r < args.rounds; ++r) {
        for (std::size_t i : round_order(cases.size(), r, how)) {
            const auto& [label, op] = cases[i];
            run_round(cluster, args, into[label][sessions], op);
        }
    }
    for (const auto& [label, op] : cases)
        finish(into[label][sessions]);
}

// ---- Compounds. ----

bool getattr_once(fc::Session& s, const fc::FileHandle& fh) {
    fc::Compound c;
    c.putfh(fh).getattr(fc::wcc_getattr_attrs());
    return s.send(c).ok();
}

bool getfh_getattr_once(fc::Session& s, const fc::FileHandle& fh) {
    fc::Compound c;
    c.putfh(fh).getfh().getattr(fc::wcc_getattr_attrs());
    return s.send(c).ok();
}

// TEST_STATEID of the session's own layout stateid, which must test valid.
bool test_stateid_getattr_once(fc::Session& s, const fc::FileHandle& fh, const stateid4& layout) {
    fc::Compound c;
    c.putfh(fh).test_stateid({&layout, 1}).getattr(fc::wcc_getattr_attrs());
    const fc::CompoundResult r = s.send(c);
    return r.ok() && r.test_stateid(1) == std::vector<std::uint32_t>{NFS4_OK};
}

bool layout_wcc_once(fc::Session& s, const fc::FileHandle& fh, const stateid4& layout,
                     const std::vector<char>& body, bool with_getattr) {
    fc::Compound c;
    c.putfh(fh).layout_wcc(layout, LAYOUT4_FLEX_FILES, body);
    if (with_getattr)
        c.getattr(fc::wcc_getattr_attrs());
    return s.send(c).ok();
}

// What a writing client reports, one LAYOUT_WCC after another: each body says every data
// file grew by one byte and its mtime and ctime moved 1 ns on from the last, as a stream of
// small writes does. (Resending one body would only renew the MDS's record; real reports
// change it, and that is the cost measured.) The body is encoded once, with marker values
// that locate the size and the two times of every entry; each report is that body with
// those fields written in, so that the client's cost per report stays that of a copy.
class ReportStream {
public:
    explicit ReportStream(const fc::FlexLayoutWcc& base) {
        fc::FlexLayoutWcc marked = base;
        std::uint64_t k = 0;
        for (auto& m : marked.mirrors)
            for (auto& ds : m.data_servers) {
                fc::Fattr& a = ds.attrs;
                if (!a.size || !a.time_metadata || !a.time_modify)
                    throw std::runtime_error("a report without size and times");
                entries_.push_back({*a.size, *a.time_metadata, *a.time_modify});
                a.size = kMarker | k << 8 | 1;
                a.time_metadata = fc::NfsTime{static_cast<std::int64_t>(kMarker | k << 8 | 2), 0};
                a.time_modify = fc::NfsTime{static_cast<std::int64_t>(kMarker | k << 8 | 3), 0};
                ++k;
            }
        template_ = fc::encode_flex_layout_wcc(marked);
        for (std::uint64_t e = 0; e < k; ++e) {
            entries_[e].size_at = find(kMarker | e << 8 | 1);
            entries_[e].ctime_at = find(kMarker | e << 8 | 2);
            entries_[e].mtime_at = find(kMarker | e << 8 | 3);
        }
    }

    // Thread-safe: the cell's thread and the keeper report for the same file.
    std::vector<char> next() {
        const std::uint64_t n = n_.fetch_add(1) + 1;
        std::vector<char> body = template_;
        for (const Entry& e : entries_) {
            put64(body, e.size_at, e.size + n);
            put_time(body, e.ctime_at, later(e.ctime, n));
            put_time(body, e.mtime_at, later(e.mtime, n));
        }
        return body;
    }

private:
    static constexpr std::uint64_t kMarker = 0x5eed'f1e1'd000'0000ULL;
    struct Entry {
        std::uint64_t size;
        fc::NfsTime ctime, mtime;
        std::size_t size_at = 0, ctime_at = 0, mtime_at = 0;
    };

    std::size_t find(std::uint64_t marker) const {
        std::vector<char> be(8);
        put64(be, 0, marker);
        const auto at = std::search(template_.begin(), template_.end(), be.begin(), be.end());
        if (at == template_.end())
            throw std::runtime_error("report marker not found in the encoded body");
        return static_cast<std::size_t>(at - template_.begin());
    }
    static void put64(std::vector<char>& b, std::size_t at, std::uint64_t v) {
        for (int i = 0; i < 8; ++i)
            b[at + i] = static_cast<char>(v >> (56 - 8 * i));
    }
    static void put_time(std::vector<char>& b, std::size_t at, fc::NfsTime t) {
        put64(b, at, static_cast<std::uint64_t>(t.seconds));
        for (int i = 0; i < 4; ++i)
            b[at + 8 + i] = static_cast<char>(t.nseconds >> (24 - 8 * i));
    }
    static fc::NfsTime later(fc::NfsTime t, std::uint64_t steps) {
        const std::uint64_t ns = t.nseconds + steps;
        return {t.seconds + static_cast<std::int64_t>(ns / 1000000000),
                static_cast<std::uint32_t>(ns % 1000000000)};
    }

    std::vector<char> template_;
    std::vector<Entry> entries_;
    std::atomic<std::uint64_t> n_{0};
};

// A client that holds an RW layout on a file and reports to the MDS.
struct LayoutHolder {
    fc::Session* session = nullptr;
    std::unique_ptr<fc::FlexFile> file;
    std::vector<char> body;         // the last ff_layout_wcc4 sent
    ReportStream* stream = nullptr; // when set, each report is its next body instead
};

std::unique_ptr<fc::FlexFile> open_with_layout(fc::PnfsClient& pnfs, const std::string& path) {
    fc::FlexOpenOptions o;
    o.create = true;
    o.truncate = true;
    auto f = fc::FlexFile::open(pnfs, path, o);
    const std::uint32_t st = f->layoutget(LAYOUTIOMODE4_RW);
    if (st != NFS4_OK)
        throw std::runtime_error(path + ": LAYOUTGET RW refused, status " + std::to_string(st));
    if (f->data_files().size() != kMirrors)
        throw std::runtime_error(path + ": layout has " + std::to_string(f->data_files().size()) +
                                 " data files, expected " + std::to_string(kMirrors));
    return f;
}

// Every kKeeperPeriod, for each holder on its own thread (as independent writers would):
// optionally write 4 KiB through the layout, then send PUTFH + LAYOUT_WCC with what the
// data servers replied. Keeps a Trust_WCC export's attributes fresher than WCC_Max_Age
// as long as the longest gap between two answered reports (max_gap) stays under it.
class Keeper {
public:
    Keeper(std::vector<LayoutHolder*> holders, bool write) : write_(write) {
        for (LayoutHolder* h : holders)
            threads_.emplace_back([this, h] { loop(*h); });
    }
    ~Keeper() {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_)
            t.join();
    }
    std::uint64_t failures() const { return failures_.load(); }
    std::uint64_t rounds() const { return rounds_.load(); }
    std::chrono::microseconds max_gap() const {
        return std::chrono::microseconds(max_gap_us_.load());
    }

private:
    void loop(LayoutHolder& h) {
        std::vector<char> data(4096);
        std::uint64_t round = 0;
        Clock::time_point last_ok{};
        Clock::time_point next = Clock::now();
        std::unique_lock lock(mu_);
        while (!stop_) {
            lock.unlock();
            try {
                if (write_) {
                    std::fill(data.begin(), data.end(), static_cast<char>('a' + round % 26));
                    h.file->write((round % 256) * data.size(), data, fc::nfs3::Stable::file_sync);
                    h.body = h.file->layout_wcc_body();
                }
                if (h.stream != nullptr)
                    h.body = h.stream->next();
                if (layout_wcc_once(*h.session, h.file->fh(), h.file->layout().stateid, h.body,
                                    false)) {
                    const Clock::time_point now = Clock::now();
                    if (last_ok != Clock::time_point{}) {
                        const auto gap =
                            std::chrono::duration_cast<std::chrono::microseconds>(now - last_ok)
                                .count();
                        if (now - last_ok > kWccMaxAge)
                            lapse_log().add(last_ok, now);
                        std::int64_t seen = max_gap_us_.load();
                        while (gap > seen && !max_gap_us_.compare_exchange_weak(seen, gap)) {
                        }
                    }
                    last_ok = now;
                } else {
                    failures_++;
                }
            } catch (const std::exception& e) {
                if (failures_++ == 0)
                    progress(std::string("keeper: ") + e.what());
            }
            ++round;
            rounds_++;
            next += kKeeperPeriod;
            lock.lock();
            cv_.wait_until(lock, next, [this] { return stop_; });
        }
    }

    bool write_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::atomic<std::uint64_t> failures_{0};
    std::atomic<std::uint64_t> rounds_{0};
    std::atomic<std::int64_t> max_gap_us_{0};
    std::vector<std::thread> threads_;
};

// ---- Output. ----

struct Report {
    std::map<std::string, std::map<unsigned, CellResult>> a; // case -> sessions -> cell
    std::map<std::string, std::map<unsigned, CellResult>> b;
    unsigned files = 0;
    std::uint64_t keeper_failures = 0;
    std::uint64_t keeper_rounds = 0;
    std::chrono::microseconds keeper_max_gap{0};   // part a's writer
    std::chrono::microseconds keeper_b_max_gap{0}; // part b's keeper
};

const char* const kCaseWcc = "wcc";
const char* const kCaseNoWcc = "nowcc";
const char* const kCaseFloor = "floor";
const char* const kCaseVfs = "vfs";
const char* const kCaseExact = "exact";
const char* const kCompoundGetattr = "getattr";
const char* const kCompoundWccGetattr = "wcc+getattr";
const char* const kCompoundWccEmptyGetattr = "empty-wcc+getattr";
// GETFH in LAYOUT_WCC's place: an operation that does next to nothing, so what any further
// operation in the compound costs the MDS (decoding, dispatch, Ganesha's per-operation
// statistics, encoding, the session slot's cached reply): the floor under LAYOUT_WCC's cost.
const char* const kCompoundGetfhGetattr = "getfh+getattr";
// TEST_STATEID of the layout stateid in LAYOUT_WCC's place: Ganesha's own operation that
// does what LAYOUT_WCC does first (decode a stateid, look it up, check its file, seqid and
// client) and nothing else: what Ganesha's stateid handling costs the MDS, the floor under
// an operation that names a layout.
const char* const kCompoundTestStateidGetattr = "test-stateid+getattr";
// GETATTR-only a second time: the control, what two identical cells differ by in this run.
const char* const kCompoundGetattrAgain = "getattr-again";
// An ff_layout_wcc4 with no mirrors: a valid body that reports nothing.
const std::vector<char> kNoMirrors(4, '\0');

// Both medians tables' LAYOUT_WCC columns (after the session count, and in the full table
// after part a's), and what the last one means.
const char* const kWccMediansHeader =
    "LAYOUT_WCC+GETATTR / GETATTR-only, median | the same by CPU cost | MDS CPU per "
    "LAYOUT_WCC (us), median | the same with no mirrors (us) | the same for GETFH in its "
    "place (us) | the same for TEST_STATEID in its place (us) | what a ratio of 0.9 leaves "
    "(us) |";
const char* const kWccMediansAlign = "---:|---:|---:|---:|---:|---:|---:|";
const char* const kBudgetNote =
    "\nWhat a ratio of 0.9 leaves: the MDS CPU per LAYOUT_WCC at which LAYOUT_WCC+GETATTR / "
    "GETATTR-only by CPU cost is 0.9, once this client's own cost of the larger compound is "
    "paid: ((GETATTR-only MDS + client) / 0.9 - GETATTR-only MDS - LAYOUT_WCC+GETATTR "
    "client). What the MDS CPU per LAYOUT_WCC is made of: the profile below.\n";

// Part b's table: the compounds at every session count, summed over the rounds (the
// control has its own table, write_control_table).
void write_part_b_table(std::ostream& md, const Args& args, const Report& rep) {
    const auto& b = rep.b;
    md << "### b. LAYOUT_WCC + GETATTR compounds vs GETATTR-only compounds\n\n"
          "Each session holds an RW layout on its own file and sends SEQUENCE, PUTFH, "
          "LAYOUT_WCC, GETATTR (the body: both mirrors' Table 1 attributes, each report "
          "one byte larger and 1 ns later than the one before, as a writer's stream of "
          "reports is) or SEQUENCE, PUTFH, GETATTR; a keeper sends each session's next "
          "report every 250 ms in every cell, so the GETATTR-only cell never falls back "
          "to the data servers (longest gap between two answered keeper reports: "
       << fmt(rep.keeper_b_max_gap.count() / 1000.0, 1)
       << " ms). A third compound, LAYOUT_WCC with no mirrors (a valid body that reports "
          "nothing) + GETATTR, ran beside them: what the operation costs before its first "
          "entry (Ganesha's compound and stateid handling, the FSAL's fixed part); a fourth, "
          "GETFH in LAYOUT_WCC's place (an operation that does next to nothing): what any "
          "further operation in the compound costs the MDS; a fifth, TEST_STATEID of the "
          "session's layout stateid in LAYOUT_WCC's place (Ganesha's own operation that "
          "decodes, looks up and checks a stateid as LAYOUT_WCC does first, and does nothing "
          "else): what an operation naming the layout costs the MDS before any FSAL work; and "
          "a sixth, GETATTR-only again, the control (below the medians). The six take turns in "
          "a balanced order (a Williams design): over every 6 rounds each runs once in every "
          "place, and once after each of the others.\n\n";
    md << "| sessions | GETATTR-only /s | p50 us | p99 us | LAYOUT_WCC+GETATTR /s | p50 us | "
          "p99 us | ratio | ratio by CPU cost | MDS CPU us/compound (GETATTR-only, +LAYOUT_WCC, "
          "+LAYOUT_WCC with no mirrors, +GETFH, +TEST_STATEID) | "
          "client CPU "
          "us/compound (same) | MDS context switches per compound (same) | DS GETATTRs (both "
          "cells) | errors |\n";
    md << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (unsigned n : args.sessions) {
        const CellResult& g = b.at(kCompoundGetattr).at(n);
        const CellResult& w = b.at(kCompoundWccGetattr).at(n);
        const CellResult& e = b.at(kCompoundWccEmptyGetattr).at(n);
        const CellResult& h = b.at(kCompoundGetfhGetattr).at(n);
        const CellResult& t = b.at(kCompoundTestStateidGetattr).at(n);
        const CellResult& again = b.at(kCompoundGetattrAgain).at(n);
        md << "| " << n << " | " << fmt(g.ops_per_s()) << " | " << fmt(g.p50_us, 1) << " | "
           << fmt(g.p99_us, 1) << " | " << fmt(w.ops_per_s()) << " | " << fmt(w.p50_us, 1) << " | "
           << fmt(w.p99_us, 1) << " | " << fmt(w.ops_per_s() / g.ops_per_s(), 3) << " | "
           << fmt(g.cpu_us_per_op() / w.cpu_us_per_op(), 3) << " | " << fmt(g.mds_us_per_op(), 1)
           << ", " << fmt(w.mds_us_per_op(), 1) << ", " << fmt(e.mds_us_per_op(), 1) << ", "
           << fmt(h.mds_us_per_op(), 1) << ", " << fmt(t.mds_us_per_op(), 1) << " | "
           << fmt(g.client_us_per_op(), 1) << ", " << fmt(w.client_us_per_op(), 1) << " | "
           << fmt(g.mds_switches_per_op(), 2) << ", " << fmt(w.mds_switches_per_op(), 2) << " | "
           << g.ds_getattrs + w.ds_getattrs << " | "
           << g.errors + w.errors + e.errors + h.errors + t.errors + again.errors << " |\n";
    }
    md << "\nCPU per compound: the MDS process's CPU time (its CPU clock, clock_getcpuclockid) and "
          "this "
          "client process's (getrusage) during the measured runs, divided by the compounds "
          "completed. Servers, clients and anything else running share the machine's cores, "
          "so when they are saturated the rates follow the CPU per compound.\n";
}

// The control: GETATTR-only against itself, measured as the LAYOUT_WCC cells are. Where
// the LAYOUT_WCC figures sit within this of their target, this run cannot tell them apart.
void write_control_table(std::ostream& md, const Args& args, const Report& rep) {
    const auto& b = rep.b;
    md << "\nThe control: GETATTR-only run a second time as a cell of its own, beside the "
          "others in every round, and set against the first as LAYOUT_WCC+GETATTR is. Two "
          "identical cells should read 1 and 0 us; what they read instead is how far apart "
          "this run measures the same work.\n\n"
          "| sessions | GETATTR-only again / GETATTR-only, median | lowest and highest round | "
          "the same by CPU cost | MDS CPU difference per compound (us), median |\n"
          "|---:|---:|---:|---:|---:|\n";
    for (unsigned n : args.sessions) {
        const CellResult& g = b.at(kCompoundGetattr).at(n);
        const CellResult& again = b.at(kCompoundGetattrAgain).at(n);
        const auto [lo, hi] = rate_ratio_range(again, g);
        md << "| " << n << " | " << fmt(median_rate_ratio(again, g), 3) << " | " << fmt(lo, 3)
           << " - " << fmt(hi, 3) << " | " << fmt(median_cpu_ratio(again, g), 3) << " | "
           << fmt(median_mds_us_difference(again, g), 1) << " |\n";
    }
}

// LAYOUT_WCC's steps from the profile rounds: each step's share of the MDS's samples times
// the cell's MDS CPU per compound (median of the measured rounds).
void write_profile_table(std::ostream& md, const Args& args, const Report& rep) {
    const auto& b = rep.b;
    md << "\n### LAYOUT_WCC in the MDS's profile\n\n";
    if (b.at(kCompoundWccGetattr).at(args.sessions.front()).profile_shares.empty()) {
        md << "Not profiled in this run (perf is not installed, or --profile no).\n";
        return;
    }
    md << "One more round of each LAYOUT_WCC cell after its measured rounds, with perf "
          "sampling the MDS (perf record -F 999, DWARF call chains of 32 KiB): the share of the "
          "MDS's samples whose call chain holds each step, times the cell's MDS CPU per "
          "compound in its measured rounds (median). The operation: nfs4_op_layout_wcc with "
          "all it calls (decoding its arguments comes before it, with the compound's); "
          "Ganesha's stateid check: nfs4_Check_Stateid within it; the FSAL's method: "
          "mdcache_layout_wcc within it. The MDS CPU per LAYOUT_WCC above is a difference "
          "between two cells: it also holds what the larger compound costs the MDS outside "
          "the operation (the last column; where it goes is not found, README) and how far "
          "two cells measure the same work apart (the control).\n\n"
          "| sessions | the operation (us per compound) | of it Ganesha's stateid check | of it "
          "the FSAL's method | the operation with no mirrors | MDS CPU per LAYOUT_WCC by "
          "difference, median (us) | of it outside the operation (us) |\n"
          "|---:|---:|---:|---:|---:|---:|---:|\n";
    const auto us = [](const CellResult& c, const char* symbol) {
        const std::optional<double> v = profiled_us(c, symbol);
        return v ? fmt(*v, 2) : std::string("not profiled");
    };
    for (unsigned n : args.sessions) {
        const CellResult& g = b.at(kCompoundGetattr).at(n);
        const CellResult& w = b.at(kCompoundWccGetattr).at(n);
        const CellResult& e = b.at(kCompoundWccEmptyGetattr).at(n);
        const std::optional<double> outside = outside_operation_us(g, w);
        md << "| " << n << " | " << us(w, kSymOp) << " | " << us(w, kSymStateid) << " | "
           << us(w, kSymMethod) << " | " << us(e, kSymOp) << " | "
           << fmt(median_mds_us_difference(w, g), 1) << " | "
           << (outside ? fmt(*outside, 1) : std::string("not profiled")) << " |\n";
    }
}

// The highest over the session counts of the operation's own MDS CPU (profile), us; 0 when
// not profiled.
double highest_profiled_op_us(const Args& args, const Report& rep) {
    double most = 0;
    for (unsigned n : args.sessions)
        most = std::max(most, profiled_us(rep.b.at(kCompoundWccGetattr).at(n), kSymOp).value_or(0));
    return most;
}

// One session count's cells under kWccMediansHeader.
std::string wcc_medians_cells(const Report& rep, unsigned n) {
    const auto& b = rep.b;
    const CellResult& g = b.at(kCompoundGetattr).at(n);
    const CellResult& w = b.at(kCompoundWccGetattr).at(n);
    std::string cells = " " + fmt(median_rate_ratio(w, g), 3) + " | " +
                        fmt(median_cpu_ratio(w, g), 3) + " | " +
                        fmt(median_mds_us_difference(w, g), 1) + " |";
    for (const char* beside :
         {kCompoundWccEmptyGetattr, kCompoundGetfhGetattr, kCompoundTestStateidGetattr})
        cells += " " + fmt(median_mds_us_difference(b.at(beside).at(n), g), 1) + " |";
    return cells + " " + fmt(budget_at_ratio_09_us(g, w), 1) + " |";
}

// What follows both medians tables: the budget's meaning, the control, the profile.
void write_after_medians(std::ostream& md, const Args& args, const Report& rep) {
    md << kBudgetNote;
    write_control_table(md, args, rep);
    write_profile_table(md, args, rep);
}

// Only part b (--parts b): its table and its medians, for working on LAYOUT_WCC's cost.
void write_part_b_only(const Args& args, const Report& rep) {
    std::ofstream md = bench::output_file(args.out_dir, "e2e.md");
    write_part_b_table(md, args, rep);
    md << "\n| sessions | " << kWccMediansHeader << "\n|---:|" << kWccMediansAlign << "\n";
    for (unsigned n : args.sessions)
        md << "| " << n << " |" << wcc_medians_cells(rep, n) << "\n";
    write_after_medians(md, args, rep);
}

void write_outputs(const Args& args, const Report& rep) {
    const auto& a = rep.a;
    const auto& b = rep.b;
    std::ofstream md = bench::output_file(args.out_dir, "e2e.md");
    const double max_age_s = std::chrono::duration<double>(kWccMaxAge).count();
    const unsigned data_files = rep.files * kMirrors;

    md << "### a. GETATTR on files under an RW layout (" << rep.files << " files, " << kMirrors
       << " mirrors; per cell " << args.rounds << " rounds of " << fmt(args.cell_seconds, 1)
       << " s, the cases interleaved, order reversed every other round)\n\n";
    md << "| case | sessions | GETATTR/s | p50 us | p99 us | DS GETATTRs | DS GETATTRs per "
          "client GETATTR | MDS CPU us/op | client CPU us/op | errors |\n";
    md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    const std::map<std::string, std::string> names{
        {kCaseWcc, "LAYOUT_WCC fresh (Trust_WCC = true)"},
        {kCaseNoWcc, "Trust_WCC = false (WCC_Max_Age 1 s)"},
        {kCaseFloor, "floor: FLEXFILES file, no layout"},
        {kCaseExact, "floor with Attr_Expiration_Time = 0 (exact WCC_Max_Age)"},
        {kCaseVfs, "reference: plain VFS export (MDCACHE)"}};
    for (const char* k : {kCaseWcc, kCaseNoWcc, kCaseFloor, kCaseExact, kCaseVfs}) {
        if (!a.count(k))
            continue;
        for (const auto& [n, c] : a.at(k))
            md << "| " << names.at(k) << " | " << n << " | " << fmt(c.ops_per_s()) << " | "
               << fmt(c.p50_us, 1) << " | " << fmt(c.p99_us, 1) << " | " << c.ds_getattrs << " | "
               << fmt(c.ds_per_op(), 4) << " | " << fmt(c.mds_us_per_op(), 1) << " | "
               << fmt(c.client_us_per_op(), 1) << " | " << c.errors << " |\n";
    }
    md << "\nRatios (same run):\n\n";
    md << "| sessions | WCC / floor | WCC / floor by CPU cost | Trust_WCC=false / floor | "
          "floor / VFS reference | floor / VFS by CPU cost | floor (Attr_Expiration_Time = 0) / "
          "VFS | the same by CPU cost | Trust_WCC=false: DS GETATTRs per "
          "data file per round (most allowed) | the same per second |\n";
    md << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (unsigned n : args.sessions) {
        const CellResult& w = a.at(kCaseWcc).at(n);
        const CellResult& nw = a.at(kCaseNoWcc).at(n);
        const CellResult& f = a.at(kCaseFloor).at(n);
        const CellResult& v = a.at(kCaseVfs).at(n);
        const CellResult& x = a.at(kCaseExact).at(n);
        const double per_file = static_cast<double>(nw.ds_getattrs) / data_files;
        md << "| " << n << " | " << fmt(w.ops_per_s() / f.ops_per_s(), 3) << " | "
           << fmt(f.cpu_us_per_op() / w.cpu_us_per_op(), 3) << " | "
           << fmt(nw.ops_per_s() / f.ops_per_s(), 3) << " | "
           << fmt(f.ops_per_s() / v.ops_per_s(), 3) << " | "
           << fmt(v.cpu_us_per_op() / f.cpu_us_per_op(), 3) << " | "
           << fmt(x.ops_per_s() / v.ops_per_s(), 3) << " | "
           << fmt(v.cpu_us_per_op() / x.cpu_us_per_op(), 3) << " | " << fmt(per_file / nw.rounds, 2)
           << " (" << fmt(nw.windows_bound / nw.rounds, 2) << ") | "
           << fmt(per_file / nw.seconds, 3) << " |\n";
    }
    md << "\nBy CPU cost: the inverse ratio of (MDS + client) CPU microseconds per GETATTR, "
          "the rate ratio a CPU-bound machine would show without other load.\n\n"
       << data_files << " data files. A round of S seconds can overlap at most "
       << "floor(S / WCC_Max_Age) + 1 windows of WCC_Max_Age (" << fmt(max_age_s, 1)
       << " s): each round starts after an idle pause (warm-up, counters read over dbus) in "
       << "which the attributes aged, so its first GETATTRs refresh at once and the per-second "
       << "figure sits above 1 / WCC_Max_Age even when every refresh is a full window after "
       << "the previous one. The writer client (one thread per file) ran " << rep.keeper_rounds
       << " write + LAYOUT_WCC rounds, " << rep.keeper_failures
       << " failed; longest gap between two answered LAYOUT_WCCs of one file: "
       << fmt(rep.keeper_max_gap.count() / 1000.0, 1) << " ms.\n\n";

    write_part_b_table(md, args, rep);

    // Medians of per-round ratios (issue #16): what the targets below judge.
    md << "\n### Medians of per-round ratios\n\nRound r of every case ran side by side with "
          "round r of the others (interleaved; in part a the order reversed every other round, "
          "in part b a balanced order in which every compound takes every place in the round "
          "alike); each ratio below is the median over the "
       << args.rounds
       << " rounds of that round's ratio, so a load change on the machine between rounds, or "
          "one disturbed round, does not move it. The tables above sum the rounds.\n\n"
          "| sessions | floor / plain VFS | the same by CPU cost | "
       << kWccMediansHeader << "\n|---:|---:|---:|" << kWccMediansAlign << "\n";
    for (unsigned n : args.sessions) {
        const CellResult& f = a.at(kCaseFloor).at(n);
        const CellResult& v = a.at(kCaseVfs).at(n);
        md << "| " << n << " | " << fmt(median_rate_ratio(f, v), 3) << " | "
           << fmt(median_cpu_ratio(f, v), 3) << " |" << wcc_medians_cells(rep, n) << "\n";
    }
    write_after_medians(md, args, rep);

    // Targets (issue #6).
    md << "\n### Targets\n\n\"met\" judges the measured rates; \"by CPU cost\" the same "
          "ratio from CPU per operation, which other load on the machine does not move.\n\n"
          "| target | measured | met | by CPU cost |\n|---|---|---|---|\n";
    {
        std::uint64_t ds = 0;
        std::uint64_t ds_lapsed = 0;
        unsigned lapsed_rounds = 0;
        double worst_ratio = 1e9;
        double worst_cpu = 1e9;
        for (unsigned n : args.sessions) {
            const CellResult& w = a.at(kCaseWcc).at(n);
            const CellResult& f = a.at(kCaseFloor).at(n);
            ds += w.ds_getattrs;
            lapsed_rounds += w.lapsed_rounds;
            ds_lapsed += w.ds_getattrs_in_lapsed_rounds;
            worst_ratio = std::min(worst_ratio, w.ops_per_s() / f.ops_per_s());
            worst_cpu = std::min(worst_cpu, f.cpu_us_per_op() / w.cpu_us_per_op());
        }
        if (lapsed_rounds == 0)
            md << "| fresh WCC: 0 DS GETATTRs per client GETATTR | " << ds
               << " DS GETATTRs in all WCC cells | " << (ds == 0 ? "yes" : "no") << " | |\n";
        else
            md << "| fresh WCC: 0 DS GETATTRs per client GETATTR | " << ds
               << " DS GETATTRs in all WCC cells, " << ds_lapsed << " of them in the "
               << lapsed_rounds << " round(s) in which the writer's LAYOUT_WCCs for a file "
               << "were more than WCC_Max_Age apart (longest gap "
               << fmt(rep.keeper_max_gap.count() / 1000.0, 0) << " ms: the machine starved "
               << "the writer, so the cache was not fresh); " << ds - ds_lapsed
               << " in the other rounds | " << (ds == ds_lapsed ? "yes, where fresh" : "no")
               << " | |\n";
        md << "| fresh WCC: GETATTR/s >= 0.9x floor | lowest ratio " << fmt(worst_ratio, 3)
           << " (by CPU cost " << fmt(worst_cpu, 3) << ") | " << (worst_ratio >= 0.9 ? "yes" : "no")
           << " | " << (worst_cpu >= 0.9 ? "yes" : "no") << " |\n";
    }
    {
        const unsigned n = args.sessions.back();
        const CellResult& nw = a.at(kCaseNoWcc).at(n);
        const double per_file_round =
            static_cast<double>(nw.ds_getattrs) / data_files / std::max(1u, nw.rounds);
        // A window is WCC_Max_Age long; a round of S seconds overlaps at most floor(S/age)+1.
        const double bound = data_files * nw.windows_bound;
        md << "| Trust_WCC=false, " << n
           << " sessions: <= 1 DS GETATTR per data file per WCC_Max_Age window | "
           << fmt(per_file_round, 2) << " per data file per round of "
           << fmt(nw.seconds / std::max(1u, nw.rounds), 2) << " s, which overlaps at most "
           << fmt(nw.windows_bound / std::max(1u, nw.rounds), 0) << " windows (" << nw.ds_getattrs
           << " for " << data_files << " data files in " << nw.rounds << " rounds; at most "
           << fmt(bound) << " allowed) | " << (nw.ds_getattrs <= bound ? "yes" : "no") << " | |\n";
    }
    {
        double worst = 1e9;
        double worst_cpu = 1e9;
        for (unsigned n : args.sessions) {
            const CellResult& w = b.at(kCompoundWccGetattr).at(n);
            const CellResult& g = b.at(kCompoundGetattr).at(n);
            worst = std::min(worst, w.ops_per_s() / g.ops_per_s());
            worst_cpu = std::min(worst_cpu, g.cpu_us_per_op() / w.cpu_us_per_op());
        }
        md << "| LAYOUT_WCC+GETATTR >= 0.8x GETATTR-only | lowest ratio " << fmt(worst, 3)
           << " (by CPU cost " << fmt(worst_cpu, 3) << ") | " << (worst >= 0.8 ? "yes" : "no")
           << " | " << (worst_cpu >= 0.8 ? "yes" : "no") << " |\n";
    }
    {
        // Issue #16, on the medians of per-round ratios.
        double floor_rate = 1e9, floor_cpu = 1e9, wcc_rate = 1e9, wcc_cpu = 1e9, wcc_us = 0;
        for (unsigned n : args.sessions) {
            const CellResult& f = a.at(kCaseFloor).at(n);
            const CellResult& v = a.at(kCaseVfs).at(n);
            const CellResult& g = b.at(kCompoundGetattr).at(n);
            const CellResult& w = b.at(kCompoundWccGetattr).at(n);
            floor_rate = std::min(floor_rate, median_rate_ratio(f, v));
            floor_cpu = std::min(floor_cpu, median_cpu_ratio(f, v));
            wcc_rate = std::min(wcc_rate, median_rate_ratio(w, g));
            wcc_cpu = std::min(wcc_cpu, median_cpu_ratio(w, g));
            wcc_us = std::max(wcc_us, median_mds_us_difference(w, g));
        }
        md << "| #16: floor / plain VFS >= 0.95 at every session count (medians) | lowest "
           << fmt(floor_rate, 3) << " (by CPU cost " << fmt(floor_cpu, 3) << ") | "
           << (floor_rate >= 0.95 ? "yes" : "no") << " | " << (floor_cpu >= 0.95 ? "yes" : "no")
           << " |\n";
        // Where a target is missed: the operation itself (profile) against what is outside
        // it, and is what is outside it alone over what the target leaves?
        std::string ratio_why, us_why;
        bool ratio_outside = true, us_outside = true;
        for (unsigned n : args.sessions) {
            const CellResult& g = b.at(kCompoundGetattr).at(n);
            const CellResult& w = b.at(kCompoundWccGetattr).at(n);
            const std::optional<double> op = profiled_us(w, kSymOp);
            const std::optional<double> outside = outside_operation_us(g, w);
            const std::string split = op && outside ? ", the operation " + fmt(*op, 2) +
                                                          " us (profile), outside it " +
                                                          fmt(*outside, 1) + " us"
                                                    : ", not profiled";
            const double budget = budget_at_ratio_09_us(g, w);
            if (median_rate_ratio(w, g) < 0.9 || median_cpu_ratio(w, g) < 0.9) {
                ratio_outside = ratio_outside && outside && *outside > budget;
                ratio_why += "; " + std::to_string(n) + " sessions" + split +
                             ", the ratio leaves " + fmt(budget, 1) + " us";
            }
            const double us = median_mds_us_difference(w, g);
            if (us > 5.0) {
                us_outside = us_outside && outside && *outside > 5.0;
                const CellResult& h = b.at(kCompoundGetfhGetattr).at(n);
                const CellResult& t = b.at(kCompoundTestStateidGetattr).at(n);
                const double ganesha = median_mds_us_difference(t, g);
                us_why += "; " + std::to_string(n) + " sessions: " + fmt(us, 1) + " us" + split +
                          ", GETFH in its place " + fmt(median_mds_us_difference(h, g), 1) +
                          " us, TEST_STATEID of the layout in its place " + fmt(ganesha, 1) +
                          " us (Ganesha's own handling of an operation naming the layout), "
                          "LAYOUT_WCC above that " +
                          fmt(median_mds_us_difference(w, t), 1) + " us";
            }
        }
        const auto verdict = [](bool met, bool outside) {
            return met ? "yes" : outside ? "no: outside the operation alone is over" : "no";
        };
        md << "| #16: LAYOUT_WCC+GETATTR >= 0.9x GETATTR-only (medians) | lowest "
           << fmt(wcc_rate, 3) << " (by CPU cost " << fmt(wcc_cpu, 3) << ")" << ratio_why << " | "
           << verdict(wcc_rate >= 0.9, ratio_outside) << " | " << (wcc_cpu >= 0.9 ? "yes" : "no")
           << " |\n";
        const double op_us = highest_profiled_op_us(args, rep);
        if (op_us > 0)
            us_why += "; the operation itself in the MDS's profile: highest " + fmt(op_us, 2) +
                      " us at any session count";
        md << "| #16: MDS CPU per LAYOUT_WCC <= 5 us (medians) | highest " << fmt(wcc_us, 1)
           << " us" << us_why << " | " << verdict(wcc_us <= 5.0, us_outside) << " | |\n";
    }

    std::ofstream dat = bench::output_file(args.out_dir, "e2e.dat");
    dat << "# sessions wcc_ops nowcc_ops floor_ops vfs_ops wcc_p50 nowcc_p50 floor_p50 vfs_p50 "
           "wcc_p99 nowcc_p99 floor_p99 vfs_p99\n";
    for (unsigned n : args.sessions) {
        dat << n;
        for (const char* k : {kCaseWcc, kCaseNoWcc, kCaseFloor, kCaseVfs})
            dat << ' ' << fmt(a.at(k).at(n).ops_per_s(), 1);
        for (const char* k : {kCaseWcc, kCaseNoWcc, kCaseFloor, kCaseVfs})
            dat << ' ' << fmt(a.at(k).at(n).p50_us, 1);
        for (const char* k : {kCaseWcc, kCaseNoWcc, kCaseFloor, kCaseVfs})
            dat << ' ' << fmt(a.at(k).at(n).p99_us, 1);
        dat << '\n';
    }
    std::ofstream datb = bench::output_file(args.out_dir, "e2e-b.dat");
    datb << "# sessions getattr_ops wcc_getattr_ops getattr_p50 wcc_getattr_p50\n";
    for (unsigned n : args.sessions)
        datb << n << ' ' << fmt(b.at(kCompoundGetattr).at(n).ops_per_s(), 1) << ' '
             << fmt(b.at(kCompoundWccGetattr).at(n).ops_per_s(), 1) << ' '
             << fmt(b.at(kCompoundGetattr).at(n).p50_us, 1) << ' '
             << fmt(b.at(kCompoundWccGetattr).at(n).p50_us, 1) << '\n';
}

// ---- The run. ----

int run(const Args& args) {
    const auto t_start = Clock::now();
    progress("starting 1 MDS + 3 data servers");
    ClusterOptions options;
    options.with_dbus = true;
    options.configure_ds = [](ServerOptions& ds, const DataServerInfo&) {
        ds.core_extra += "Enable_FULLV3_Stats = true;\n";
    };
    options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        FlexfilesOptions ff;
        ff.mirrors = kMirrors;
        ff.attr_expiration_time = std::nullopt; // Ganesha's default, as the README recommends
        mds.exports[0].pseudo = "/wcc";
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        ExportSpec nowcc = mds.exports[0];
        nowcc.export_id = 2;
        nowcc.pseudo = "/nowcc";
        ff.extra = "        Trust_WCC = false;";
        nowcc.fsal = flexfiles_fsal_block(ds, ff);
        mds.exports.push_back(nowcc);
        ExportSpec vfs = mds.exports[0];
        vfs.export_id = 3;
        vfs.pseudo = "/vfs";
        vfs.fsal = "FSAL { Name = VFS; }";
        mds.exports.push_back(vfs);
        ExportSpec exact = mds.exports[0];
        exact.export_id = 4;
        exact.pseudo = "/exact";
        ff.extra.clear();
        ff.attr_expiration_time = 0;
        exact.fsal = flexfiles_fsal_block(ds, ff);
        mds.exports.push_back(exact);
    };
    Cluster cluster(options);

    const unsigned max_sessions = *std::max_element(args.sessions.begin(), args.sessions.end());
    std::vector<std::unique_ptr<fc::Session>> sessions;
    for (unsigned i = 0; i < max_sessions; ++i)
        sessions.push_back(open_session(cluster));

    // The writer client: RW layouts on the wcc and nowcc files, 64 KiB written to each.
    auto writer_session = open_session(cluster);
    fc::PnfsClient writer(*writer_session);
    std::vector<LayoutHolder> held;
    std::map<std::string, std::vector<fc::FileHandle>> fhs;
    const std::vector<char> initial(64 * 1024, 'x');
    for (const std::string dir : {"/wcc", "/nowcc"}) {
        for (unsigned k = 0; k < args.files; ++k) {
            LayoutHolder h;
            h.session = writer_session.get();
            h.file = open_with_layout(writer, dir + "/a-" + std::to_string(k));
            h.file->write(0, initial, fc::nfs3::Stable::file_sync);
            h.body = h.file->layout_wcc_body();
            fhs[dir == "/wcc" ? kCaseWcc : kCaseNoWcc].push_back(h.file->fh());
            held.push_back(std::move(h));
        }
    }
    // Files nobody holds a layout on.
    for (const auto& [dir, key] : {std::pair{"/wcc", kCaseFloor}, std::pair{"/vfs", kCaseVfs},
                                   std::pair{"/exact", kCaseExact}}) {
        for (unsigned k = 0; k < args.files; ++k) {
            fc::OpenOptions o;
            o.access = OPEN4_SHARE_ACCESS_BOTH;
            o.create = true;
            fc::OpenFile f = fc::open_path(
                *writer_session, std::string(dir) + "/plain-" + key + "-" + std::to_string(k), o);
            fc::write_file(*writer_session, f, 0, initial);
            fhs[key].push_back(f.fh);
            fc::close_file(*writer_session, f);
        }
    }

    Report rep;
    rep.files = args.files;
    if (args.part_a) {
        std::vector<LayoutHolder*> all;
        for (auto& h : held)
            all.push_back(&h);
        Keeper keeper(all, true);
        std::this_thread::sleep_for(kKeeperPeriod * 2);
        progress("part a: GETATTR, " + fmt(args.cell_seconds, 1) + " s per cell");
        // Every client session's first compounds, and the MDS's worker threads, warmed up.
        run_phase(
            max_sessions, 1s,
            [&](unsigned t, std::uint64_t i) {
                const auto& files = fhs.at(i % 2 ? kCaseWcc : kCaseFloor);
                return getattr_once(*sessions[t], files[(t + i) % files.size()]);
            },
            false);
        for (unsigned n : args.sessions) {
            std::vector<std::pair<const char*, Op>> cases;
            for (const char* k : {kCaseFloor, kCaseWcc, kCaseNoWcc, kCaseExact, kCaseVfs}) {
                const auto& files = fhs.at(k);
                cases.emplace_back(k, [&sessions, &files](unsigned t, std::uint64_t i) {
                    return getattr_once(*sessions[t], files[(t + i) % files.size()]);
                });
            }
            run_cells(cluster, args, n, cases, RoundOrder::Reversed, rep.a);
        }
        rep.keeper_failures = keeper.failures();
        rep.keeper_rounds = keeper.rounds();
        rep.keeper_max_gap = keeper.max_gap();
    }

    // Part b: each session its own file and RW layout.
    progress("part b: LAYOUT_WCC+GETATTR vs GETATTR-only");
    std::vector<std::unique_ptr<fc::PnfsClient>> pnfs;
    std::vector<LayoutHolder> own(max_sessions);
    for (unsigned i = 0; i < max_sessions; ++i) {
        pnfs.push_back(std::make_unique<fc::PnfsClient>(*sessions[i]));
        own[i].session = sessions[i].get();
        own[i].file = open_with_layout(*pnfs[i], "/wcc/b-" + std::to_string(i));
        own[i].file->write(0, initial, fc::nfs3::Stable::file_sync);
        own[i].body = own[i].file->layout_wcc_body();
    }
    {
        std::vector<LayoutHolder*> all;
        for (auto& h : own)
            all.push_back(&h);
        std::deque<ReportStream> reports; // stable addresses: the holders point at them
        for (auto& h : own)
            h.stream = &reports.emplace_back(h.file->layout_wcc());
        Keeper keeper(all, false);
        std::this_thread::sleep_for(kKeeperPeriod * 2);
        const bool profile = args.profile && bench::perf_available();
        if (args.profile && !profile)
            progress(std::string(bench::kPerf) +
                     " does not run here (Debian's linux-perf): LAYOUT_WCC is not profiled");
        for (unsigned n : args.sessions) {
            Op getattr_only = [&](unsigned t, std::uint64_t) {
                return getattr_once(*sessions[t], own[t].file->fh());
            };
            Op wcc_getattr = [&](unsigned t, std::uint64_t) {
                const LayoutHolder& h = own[t];
                return layout_wcc_once(*sessions[t], h.file->fh(), h.file->layout().stateid,
                                       reports[t].next(), true);
            };
            // No mirrors: what op 77 costs before any entry (Ganesha's op, the stateid, the
            // FSAL's fixed part), beside the full body.
            Op wcc_empty_getattr = [&](unsigned t, std::uint64_t) {
                const LayoutHolder& h = own[t];
                return layout_wcc_once(*sessions[t], h.file->fh(), h.file->layout().stateid,
                                       kNoMirrors, true);
            };
            Op getfh_getattr = [&](unsigned t, std::uint64_t) {
                return getfh_getattr_once(*sessions[t], own[t].file->fh());
            };
            Op test_stateid_getattr = [&](unsigned t, std::uint64_t) {
                const LayoutHolder& h = own[t];
                return test_stateid_getattr_once(*sessions[t], h.file->fh(),
                                                 h.file->layout().stateid);
            };
            run_cells(cluster, args, n,
                      {{kCompoundGetattr, getattr_only},
                       {kCompoundWccGetattr, wcc_getattr},
                       {kCompoundWccEmptyGetattr, wcc_empty_getattr},
                       {kCompoundGetfhGetattr, getfh_getattr},
                       {kCompoundTestStateidGetattr, test_stateid_getattr},
                       {kCompoundGetattrAgain, getattr_only}},
                      RoundOrder::Balanced, rep.b);
            if (profile) {
                progress("LAYOUT_WCC x" + std::to_string(n) + ": one more round of each, perf " +
                         "sampling the MDS");
                profile_round(cluster, args, rep.b[kCompoundWccGetattr][n], wcc_getattr,
                              kCompoundWccGetattr);
                profile_round(cluster, args, rep.b[kCompoundWccEmptyGetattr][n], wcc_empty_getattr,
                              kCompoundWccEmptyGetattr);
                if (args.keep_profile) {
                    // Only kept, for perf diff against the cells above: no figure uses it.
                    CellResult scratch = rep.b[kCompoundGetattr][n];
                    profile_round(cluster, args, scratch, getattr_only, kCompoundGetattr);
                }
            }
        }
        rep.keeper_failures += keeper.failures();
        rep.keeper_b_max_gap = keeper.max_gap();
    }

    if (args.part_a)
        write_outputs(args, rep);
    else
        write_part_b_only(args, rep);
    const auto errors = cluster.mds().error_lines();
    for (const auto& l : errors)
        progress("MDS error line: " + l);
    progress("done in " + fmt(std::chrono::duration<double>(Clock::now() - t_start).count(), 1) +
             " s; wrote " + args.out_dir + "/e2e.md");
    own.clear();
    pnfs.clear();
    held.clear();
    for (auto& s : sessions)
        s->close();
    writer_session->close();
    return 0;
}

} // namespace

const char* const bench::kTool = "ff-bench-getattr";

int main(int argc, char** argv) {
    return bench::main_of(argc, argv, parse_args, run);
}
