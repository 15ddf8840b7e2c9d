// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The loopback demo: what RFC 9766 LAYOUT_WCC is for, in about ten seconds.
//
// A pNFS flex-files client writes straight to the NFSv3 data servers, so the metadata
// server (MDS) never sees the file grow. Yet every stat() an application makes goes to the
// MDS. The demo starts 1 FLEXFILES MDS (Mirrors = 2) + 3 NFSv3 data servers on loopback,
// then runs the same workload twice on the same export, with the same client code:
//   * with LAYOUT_WCC: each stat is one compound PUTFH, LAYOUT_WCC, GETATTR; the client
//     hands over the post-op attributes the data servers put in their WRITE replies;
//   * without: each stat is PUTFH, GETATTR; the MDS has to ask the data servers itself
//     (or answer from what it learned less than WCC_Max_Age ago).
// Data-server GETATTRs are counted on the data servers (Enable_FULLV3_Stats, read over a
// private dbus). Then everything it started is stopped.
#include "client/flex_file.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
namespace v3 = flexfiles::client::nfs3;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// The workload: kFiles files grow by kChunk per round; after each round the application
// polls stat() on every file kPolls times, kPollGap apart.
constexpr unsigned kFiles = 4;
constexpr unsigned kRounds = 4;
constexpr std::size_t kChunk = 256u << 10;
constexpr unsigned kPolls = 4;
constexpr auto kPollGap = 120ms;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt(const char* format, auto... args) {
    std::string out(static_cast<std::size_t>(std::snprintf(nullptr, 0, format, args...)), '\0');
    std::snprintf(out.data(), out.size() + 1, format, args...);
    return out;
}

std::string mib(std::uint64_t bytes) {
    return fmt("%.2f MiB", static_cast<double>(bytes) / (1u << 20));
}

std::vector<char> pattern(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<char>(seed * 131 + i * 7 + (i >> 12));
    return v;
}

struct ScenarioResult {
    unsigned client_getattrs = 0;
    unsigned exact_sizes = 0;
    std::uint64_t worst_lag = 0; // bytes the most stale answer was behind
    unsigned wcc_ok = 0;         // LAYOUT_WCC answered NFS4_OK
    std::vector<std::uint64_t> ds_getattrs;
    std::vector<std::uint64_t> ds_bytes_written;
    unsigned mirrors_identical = 0; // files whose two data files hold the same bytes
    std::int64_t worst_mtime_skew_us = 0;
    double wall_s = 0;
};

class Demo {
public:
    explicit Demo(Cluster& cluster) : cluster_(cluster) {}

    // GETATTRs data server i has served so far (GetFULLV3Stats over the private bus).
    std::uint64_t ds_getattrs(unsigned i) {
        const CommandResult r =
            cluster_.dbus()->send(cluster_.ds(i).dbus_bus_name(), "/org/ganesha/nfsd/ExportMgr",
                                  "org.ganesha.nfsd.exportstats.GetFULLV3Stats");
        if (!r.ok())
            throw std::runtime_error("GetFULLV3Stats on " + cluster_.ds_info()[i].name + ": " +
                                     r.output);
        static const std::regex kGetattr("string \"GETATTR\"\\s+uint64 ([0-9]+)");
        std::smatch m;
        return std::regex_search(r.output, m, kGetattr) ? std::stoull(m[1]) : 0;
    }

    std::vector<std::uint64_t> all_ds_getattrs() {
        std::vector<std::uint64_t> v;
        for (unsigned i = 0; i < cluster_.ds_count(); ++i)
            v.push_back(ds_getattrs(i));
        return v;
    }

    std::size_t ds_index(const fc::UniversalAddress& a) const {
        const auto& info = cluster_.ds_info();
        for (std::size_t i = 0; i < info.size(); ++i)
            if (info[i].address == a.host && info[i].nfs_port == a.port)
                return i;
        throw std::runtime_error("the layout names an unknown data server " + a.host);
    }

    ScenarioResult run(const std::string& prefix, bool send_layout_wcc) {
        ScenarioResult out;
        out.ds_bytes_written.assign(cluster_.ds_count(), 0);
        const auto getattrs_before = all_ds_getattrs();
        const auto t0 = Clock::now();

        fc::SessionOptions so;
        so.host = cluster_.mds().address();
        so.port = cluster_.mds().nfs_port();
        so.minor_version = 2;
        auto session = fc::Session::open(so);
        fc::PnfsClient pnfs(*session);

        std::vector<std::unique_ptr<fc::FlexFile>> files;
        for (unsigned i = 0; i < kFiles; ++i) {
            fc::FlexOpenOptions o;
            o.create = true;
            o.truncate = true;
            files.push_back(fc::FlexFile::open(pnfs, "/ff/" + prefix + std::to_string(i), o));
            const std::uint32_t st = files.back()->layoutget(LAYOUTIOMODE4_RW);
            if (st != NFS4_OK)
                throw std::runtime_error("LAYOUTGET refused: " + fc::status_name(st));
        }

        for (unsigned round = 0; round < kRounds; ++round) {
            const std::uint64_t size = (round + 1) * kChunk;
            for (unsigned i = 0; i < kFiles; ++i) {
                files[i]->write(round * kChunk, pattern(kChunk, round * kFiles + i));
                const fc::IoOutcome c = files[i]->commit();
                if (!c.ok())
                    throw std::runtime_error("COMMIT: " + c.describe());
            }
            // The application polls stat() while the writer pauses.
            for (unsigned poll = 0; poll < kPolls; ++poll) {
                for (auto& f : files) {
                    const fc::WccGetattr g =
                        send_layout_wcc ? f->send_layout_wcc_and_getattr() : f->getattr();
                    out.client_getattrs++;
                    if (g.wcc_status == NFS4_OK)
                        out.wcc_ok++;
                    const std::uint64_t reported = g.attrs.size.value_or(0);
                    if (reported == size)
                        out.exact_sizes++;
                    else if (reported < size)
                        out.worst_lag = std::max(out.worst_lag, size - reported);
                }
                std::this_thread::sleep_for(kPollGap);
            }
        }

        out.wall_s = seconds_since(t0);

        // Mirror check: both data files of every file hold the same bytes (READ through the
        // layout, from each mirror); how far apart the two data servers' mtimes are.
        for (unsigned i = 0; i < kFiles; ++i) {
            std::vector<char> expected;
            for (unsigned round = 0; round < kRounds; ++round) {
                const auto piece = pattern(kChunk, round * kFiles + i);
                expected.insert(expected.end(), piece.begin(), piece.end());
            }
            if (files[i]->read_all(0) == expected && files[i]->read_all(1) == expected)
                out.mirrors_identical++;
            const auto& d = files[i]->data_files();
            if (d.size() == 2 && d[0].attrs && d[1].attrs) {
                const auto ns = [](const v3::Time& t) {
                    return static_cast<std::int64_t>(t.seconds) * 1000000000 + t.nseconds;
                };
                out.worst_mtime_skew_us =
                    std::max(out.worst_mtime_skew_us,
                             std::abs(ns(d[0].attrs->mtime) - ns(d[1].attrs->mtime)) / 1000);
            }
            for (const fc::FlexDataFile& df : d)
                out.ds_bytes_written[ds_index(df.address)] += df.write_bytes;
        }

        for (auto& f : files) {
            f->layoutreturn(false);
            f->close();
        }
        const auto getattrs_after = all_ds_getattrs();
        for (std::size_t i = 0; i < getattrs_after.size(); ++i)
            out.ds_getattrs.push_back(getattrs_after[i] - getattrs_before[i]);
        session->close();
        return out;
    }

    // Data servers answering an NFSv3 NULL.
    unsigned healthy_data_servers() {
        unsigned n = 0;
        for (const auto& info : cluster_.ds_info()) {
            try {
                v3::ClientOptions o;
                o.host = info.address;
                o.port = info.nfs_port;
                o.timeout = 2s;
                if (v3::Client::connect(o)->null(fc::AuthSys{}).ok())
                    n++;
            } catch (const std::exception&) {
            }
        }
        return n;
    }

private:
    Cluster& cluster_;
};

void row(const std::string& label, const std::string& with, const std::string& without) {
    std::cout << fmt("  %-38s %18s %18s\n", label.c_str(), with.c_str(), without.c_str());
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
    std::uint64_t s = 0;
    for (auto x : v)
        s += x;
    return s;
}

int run() {
    const auto t0 = Clock::now();
    std::cout << "Starting 1 FLEXFILES metadata server + 3 NFSv3 data servers on loopback "
                 "(Mirrors = 2)...\n";
    ClusterOptions options;
    options.with_dbus = true; // the data servers' NFSv3 statistics
    options.configure_ds = [](ServerOptions& ds, const DataServerInfo&) {
        ds.core_extra += "Enable_FULLV3_Stats = true;\n";
    };
    options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        mds.exports[0].pseudo = "/ff";
        FlexfilesOptions ff;
        ff.mirrors = 2;
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
    };
    std::vector<pid_t> pids;
    ScenarioResult with, without;
    unsigned healthy_with = 0, healthy_without = 0;
    std::vector<std::string> ds_names;
    {
        Cluster cluster(options);
        for (GaneshaServer* s : cluster.servers())
            pids.push_back(s->pid());
        std::cout << "  MDS " << cluster.mds().address() << ", data servers";
        for (const auto& ds : cluster.ds_info()) {
            std::cout << " " << ds.name << "=" << ds.address;
            ds_names.push_back(ds.name);
        }
        std::cout << fmt("; up in %.1f s\n", seconds_since(t0));
        std::cout << fmt("Workload: %u files x %u rounds of %u KiB written through RW layouts to "
                         "both mirrors;\n"
                         "  after each round the application stats every file %u times, %lld ms "
                         "apart. Run twice on the\n"
                         "  same cluster and export by the same client code; the only "
                         "difference is whether each stat\n"
                         "  is PUTFH+LAYOUT_WCC+GETATTR or PUTFH+GETATTR (Trust_WCC = true, "
                         "WCC_Max_Age = 1 s).\n",
                         kFiles, kRounds, static_cast<unsigned>(kChunk >> 10), kPolls,
                         static_cast<long long>(kPollGap.count()));

        Demo demo(cluster);
        std::cout << "  running with LAYOUT_WCC...    " << std::flush;
        with = demo.run("with-wcc-", true);
        healthy_with = demo.healthy_data_servers();
        std::cout << fmt("%.1f s\n", with.wall_s);
        std::cout << "  running without LAYOUT_WCC... " << std::flush;
        without = demo.run("without-wcc-", false);
        healthy_without = demo.healthy_data_servers();
        std::cout << fmt("%.1f s\n", without.wall_s);
        std::cout << "Stopping everything...\n";
    }
    unsigned alive = 0;
    for (pid_t p : pids)
        if (::kill(p, 0) == 0 || errno != ESRCH)
            alive++;

    std::cout << "\n";
    row("", "with LAYOUT_WCC", "without");
    row("client GETATTRs to the MDS", std::to_string(with.client_getattrs),
        std::to_string(without.client_getattrs));
    row("  of which LAYOUT_WCC + GETATTR", std::to_string(with.wcc_ok) + " (OK)", "0");
    row("MDS -> data-server GETATTRs", std::to_string(sum(with.ds_getattrs)),
        std::to_string(sum(without.ds_getattrs)));
    for (std::size_t i = 0; i < ds_names.size(); ++i)
        row("  on " + ds_names[i], std::to_string(with.ds_getattrs[i]),
            std::to_string(without.ds_getattrs[i]));
    row("sizes the MDS reported exact", fmt("%u/%u", with.exact_sizes, with.client_getattrs),
        fmt("%u/%u", without.exact_sizes, without.client_getattrs));
    row("  most stale answer behind by", with.worst_lag ? mib(with.worst_lag) : "-",
        without.worst_lag ? mib(without.worst_lag) : "-");
    for (std::size_t i = 0; i < ds_names.size(); ++i)
        row("bytes written to " + ds_names[i], mib(with.ds_bytes_written[i]),
            mib(without.ds_bytes_written[i]));
    row("mirrors identical (size and bytes)", fmt("%u/%u files", with.mirrors_identical, kFiles),
        fmt("%u/%u files", without.mirrors_identical, kFiles));
    row("  mtime of mirror 0 vs 1, at most", fmt("%lld us", (long long)with.worst_mtime_skew_us),
        fmt("%lld us", (long long)without.worst_mtime_skew_us));
    row("data servers answering", fmt("%u/%zu", healthy_with, ds_names.size()),
        fmt("%u/%zu", healthy_without, ds_names.size()));
    row("wall time of the workload", fmt("%.2f s", with.wall_s), fmt("%.2f s", without.wall_s));
    std::cout << "\n"
                 "  The client wrote straight to the data servers, so the metadata server never "
                 "saw the files grow.\n"
                 "  Without LAYOUT_WCC it must ask every mirror's data server (the GETATTRs above) "
                 "or answer from\n"
                 "  what it learned less than WCC_Max_Age (1 s) ago, i.e. a stale size. With "
                 "LAYOUT_WCC (RFC 9766)\n"
                 "  the client hands over the attributes the data servers already returned in "
                 "their WRITE replies:\n"
                 "  exact sizes, and no data-server round trip.\n";
    std::cout << fmt("\n  %zu servers stopped, %u left running; total %.1f s; logs under %s\n",
                     pids.size(), alive, seconds_since(t0), FF_DEMO_WORK_ROOT);
    const bool ok = alive == 0 && with.exact_sizes == with.client_getattrs &&
                    with.mirrors_identical == kFiles && without.mirrors_identical == kFiles;
    return ok ? 0 : 1;
}

} // namespace

int main() {
    // The demo's servers live under the build tree unless told otherwise.
    if (std::getenv("FF_TEST_WORK_ROOT") == nullptr)
        setenv("FF_TEST_WORK_ROOT", FF_DEMO_WORK_ROOT, 1);
    try {
        return run();
    } catch (const std::exception& e) {
        std::cerr << "demo failed: " << e.what() << "\n";
        return 1;
    }
}
