// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-bench-many-files: the MDS with many files (1 million by default), real servers
// (1 MDS + 3 NFSv3 data servers, Ganesha 4.3, loopback), FLEXFILES with Mirrors = 1.
//
//   create   N empty files through the MDS (OPEN with create, CLOSE; each places its data
//            file on a data server and records it in the layout store), from parallel
//            NFSv4.1 sessions, spread over 256 directories. Creates/s in windows: the first
//            10k, around 10% of N, the last 10k: the store must not slow down as it grows.
//   size     the MDS's resident memory and the layout store's size (database + WAL) per file;
//            placement spread (data files per data server).
//   restart  the MDS is stopped and started again: time from start to the first answered
//            GETATTR of a file (the store is opened, nothing else is loaded up front).
//   remove   every file REMOVEd through the MDS (the data files queued for the reaper), then
//            the time until the data servers hold none: the reaper's throughput.
// Writes <out>/many-files.md.
#include "bench_support.hpp"
#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

using bench::fmt;
using bench::progress;

constexpr unsigned kDirs = 256;
constexpr std::uint64_t kWindow = 10'000;

struct Args {
    std::uint64_t files = 1'000'000;
    unsigned sessions = 8;
    std::string out_dir = ".";
};

Args parse_args(int argc, char** argv) {
    Args a;
    bench::for_each_option(
        argc, argv, "usage: ff-bench-many-files [--files N] [--sessions S] [--out DIR]",
        [&](const std::string& k, const std::string& v) {
            if (k == "--files")
                a.files = std::max<std::uint64_t>(3 * kWindow, bench::number(k, v));
            else if (k == "--sessions")
                a.sessions = std::max(1u, static_cast<unsigned>(bench::number(k, v)));
            else if (k == "--out")
                a.out_dir = v;
            else
                return false;
            return true;
        });
    return a;
}

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

std::string dir_of(std::uint64_t i) {
    return "d" + std::to_string(i % kDirs);
}

std::string name_of(std::uint64_t i) {
    return "f" + std::to_string(i);
}

long rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

std::uint64_t file_bytes(const fs::path& p) {
    std::error_code ec;
    const auto n = fs::file_size(p, ec);
    return ec ? 0 : n;
}

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it)
        ++n;
    return n;
}

// Runs op(i) for i in [0, n) over `sessions` threads (thread t takes i = t, t + sessions,
// ...), each with its own session; stamps[k] is when the (k + 1) * kWindow-th op finished.
template <class Op>
std::vector<Clock::time_point> in_parallel(GaneshaServer& mds, unsigned sessions, std::uint64_t n,
                                           Op op) {
    std::atomic<std::uint64_t> done{0};
    std::atomic<std::uint64_t> failed{0};
    std::mutex mu;
    std::vector<Clock::time_point> stamps;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < sessions; ++t)
        threads.emplace_back([&, t] {
            auto s = bench::plain_session(mds);
            for (std::uint64_t i = t; i < n; i += sessions) {
                try {
                    op(*s, i);
                } catch (const std::exception& e) {
                    if (failed++ < 5)
                        progress(std::string("op ") + std::to_string(i) + ": " + e.what());
                }
                const std::uint64_t d = ++done;
                if (d % kWindow == 0) {
                    std::lock_guard lock(mu);
                    stamps.push_back(Clock::now());
                    if (d % (10 * kWindow) == 0)
                        progress(std::to_string(d) + " done");
                }
            }
            s->close();
        });
    for (auto& th : threads)
        th.join();
    std::sort(stamps.begin(), stamps.end());
    if (failed != 0)
        throw std::runtime_error(std::to_string(failed.load()) + " operations failed");
    return stamps;
}

void remove_file(fc::Session& s, const std::string& dir, const std::string& name) {
    fc::Compound c;
    c.putrootfh().lookup("m").lookup(dir);
    nfs_argop4 op{};
    op.argop = NFS4_OP_REMOVE;
    op.nfs_argop4_u.opremove.target.utf8string_len = static_cast<u_int>(name.size());
    op.nfs_argop4_u.opremove.target.utf8string_val = const_cast<char*>(name.data());
    c.typed(op, "REMOVE");
    s.send(c).check("remove " + dir + "/" + name);
}

int run(const Args& args) {
    const fs::path root = std::getenv("FF_TEST_WORK_ROOT");
    fs::create_directories(root);
    const fs::path store = root / "many-files-store.db";
    fs::remove(store);
    fs::remove(store.string() + "-wal");
    fs::remove(store.string() + "-shm");
    progress("starting 1 MDS + 3 data servers");
    ClusterOptions options;
    options.configure_mds = [&store](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        FlexfilesOptions ff;
        ff.attr_expiration_time = std::nullopt;
        ff.mirrors = 1;
        ff.extra = "        Layout_Store = \"" + store.string() + "\";\n";
        mds.exports[0].pseudo = "/m";
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        mds.log_level = "NIV_EVENT";
    };
    Cluster cluster(options);
    GaneshaServer& mds = cluster.mds();
    for (unsigned d = 0; d < kDirs; ++d)
        fs::create_directory(mds.export_path() / ("d" + std::to_string(d)));
    const long rss_before = rss_kib(mds.pid());

    progress("creating " + std::to_string(args.files) + " files from " +
             std::to_string(args.sessions) + " sessions");
    const auto c0 = Clock::now();
    const auto created = in_parallel(mds, args.sessions, args.files, [](fc::Session& s, auto i) {
        fc::OpenOptions o;
        o.access = OPEN4_SHARE_ACCESS_BOTH;
        o.create = true;
        fc::OpenFile f = fc::open_path(s, "/m/" + dir_of(i) + "/" + name_of(i), o);
        fc::close_file(s, f);
    });
    const double create_s = seconds(Clock::now() - c0);
    // Rate of the window of kWindow creates ending at stamps[k].
    auto window_rate = [&](const std::vector<Clock::time_point>& st, std::size_t k) {
        const auto from = k == 0 ? c0 : st[k - 1];
        return static_cast<double>(kWindow) / seconds(st[k] - from);
    };
    const std::size_t tenth = std::max<std::size_t>(1, created.size() / 10) - 1;
    const double first_rate = window_rate(created, 0);
    const double tenth_rate = window_rate(created, tenth);
    const double last_rate = window_rate(created, created.size() - 1);

    const long rss_after = rss_kib(mds.pid());
    const std::uint64_t db = file_bytes(store), wal = file_bytes(store.string() + "-wal");
    std::vector<std::size_t> per_ds;
    for (const auto& info : cluster.ds_info())
        per_ds.push_back(entries(info.export_path));

    progress("restarting the MDS");
    mds.stop();
    const auto r0 = Clock::now();
    mds.start();
    double first_answer = -1;
    for (;;) {
        try {
            auto s = bench::plain_session(mds);
            fc::stat_path(*s, "/m/" + dir_of(args.files - 1) + "/" + name_of(args.files - 1));
            first_answer = seconds(Clock::now() - r0);
            s->close();
            break;
        } catch (const std::exception& e) {
            if (seconds(Clock::now() - r0) > 120)
                throw std::runtime_error(std::string("no answer 120 s after restart: ") + e.what());
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    const long rss_restarted = rss_kib(mds.pid());

    progress("removing every file");
    const auto d0 = Clock::now();
    in_parallel(mds, args.sessions, args.files,
                [](fc::Session& s, auto i) { remove_file(s, dir_of(i), name_of(i)); });
    const double remove_s = seconds(Clock::now() - d0);
    std::size_t left = 0;
    double drained_s = -1;
    for (;;) {
        left = 0;
        for (const auto& info : cluster.ds_info())
            left += entries(info.export_path);
        if (left == 0) {
            drained_s = seconds(Clock::now() - d0);
            break;
        }
        if (seconds(Clock::now() - d0) > remove_s + 1800)
            break;
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }

    std::ofstream md = bench::output_file(args.out_dir, "many-files.md");
    const double n = static_cast<double>(args.files);
    md << "### e. " << args.files << " files through the MDS\n\n"
       << "FLEXFILES over VFS, Mirrors = 1, 3 data servers, " << args.sessions
       << " NFSv4.1 sessions without layouts, " << kDirs
       << " directories; each create is OPEN (create) + CLOSE, which places the data file and "
          "records it in the layout store (SQLite, WAL, synchronous = FULL).\n\n"
       << "| | |\n|---|---|\n"
       << "| creates, all | " << fmt(n / create_s) << " /s (" << fmt(create_s, 0) << " s) |\n"
       << "| creates/s, first 10k | " << fmt(first_rate) << " |\n"
       << "| creates/s, 10k ending at " << (tenth + 1) * kWindow << " | " << fmt(tenth_rate)
       << " |\n"
       << "| creates/s, last 10k | " << fmt(last_rate) << " (" << fmt(last_rate / first_rate, 2)
       << " of the first) |\n"
       << "| MDS RSS before / after creating | " << rss_before / 1024 << " MiB / "
       << rss_after / 1024 << " MiB: " << fmt((rss_after - rss_before) * 1024.0 / n, 0)
       << " B per file |\n"
       << "| layout store | " << fmt((db + wal) / 1048576.0, 1) << " MiB (database "
       << fmt(db / 1048576.0, 1) << ", WAL " << fmt(wal / 1048576.0, 1)
       << "): " << fmt(static_cast<double>(db + wal) / n, 0) << " B per file |\n"
       << "| data files per data server |";
    for (std::size_t c : per_ds)
        md << " " << c;
    const auto [lo, hi] = std::minmax_element(per_ds.begin(), per_ds.end());
    const double even = n / static_cast<double>(per_ds.size());
    md << " (within " << fmt(100.0 * std::max(even - *lo, *hi - even) / even, 1) << "% of even) |\n"
       << "| restart: start to first answered GETATTR | " << fmt(first_answer, 2) << " s |\n"
       << "| MDS RSS after restart | " << rss_restarted / 1024 << " MiB |\n"
       << "| removes | " << fmt(n / remove_s) << " /s (" << fmt(remove_s, 0) << " s) |\n"
       << "| data files gone from the data servers | "
       << (drained_s < 0 ? "not all: " + std::to_string(left) + " left" : fmt(drained_s, 0) + " s")
       << " after the first REMOVE: " << (drained_s > 0 ? fmt(n / drained_s) : "-")
       << " data files/s |\n";
    md << "\n| target (#16) | measured | met |\n|---|---|---|\n"
       << "| create rate falls <= 30% as the store grows | last 10k / first 10k = "
       << fmt(last_rate / first_rate, 2) << " | " << (last_rate >= 0.7 * first_rate ? "yes" : "no")
       << " |\n"
       << "| start-up to serving <= 10 s | " << fmt(first_answer, 2) << " s | "
       << (first_answer <= 10 ? "yes" : "no") << " |\n";
    progress("wrote " + args.out_dir + "/many-files.md");
    return 0;
}

} // namespace

const char* const bench::kTool = "ff-bench-many-files";

int main(int argc, char** argv) {
    return bench::main_of(argc, argv, parse_args, run);
}
