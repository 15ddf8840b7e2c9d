// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-bench-proxy-io: I/O through the MDS for clients without layouts, against a plain VFS
// export of the same server, with real servers (1 MDS + 3 NFSv3 data servers, Ganesha 4.3,
// loopback). The MDS exports
//   /m1   FLEXFILES, Mirrors = 1
//   /m2   FLEXFILES, Mirrors = 2
//   /m1e  FLEXFILES, Mirrors = 1, DS_Direct_Connections = 0: every request through the data
//         servers' event threads, the way /m1 avoids for WRITEs (side by side in one run)
//   /m1s  FLEXFILES, Mirrors = 1, DS_Direct_Spin = 100: as /m1, but a worker alone in waiting
//         polls for the data server's reply up to 100 us before it sleeps
//   /vfs  plain VFS (the reference)
// and one NFSv4.1 session (no LAYOUTGET: every READ and WRITE goes through the MDS, as for
// an NFSv4.0 client) measures on each, the exports interleaved round by round:
//   write   a 256 MiB file in 1 MiB UNSTABLE WRITEs, then COMMIT         -> MiB/s
//   read    the same file in 1 MiB READs, 4 times over (--read-passes: at 1-2 GiB/s one
//           pass is too short for a steady rate; the MDS's page cache is cold for
//           FLEXFILES: its namespace file holds no bytes, the data servers' is warm) -> MiB/s
//   4k      4 KiB FILE_SYNC WRITEs at random 4 KiB offsets of a 16 MiB file, one at a
//           time                                                          -> p50 / p99 us
//   4k-u    the same UNSTABLE                                            -> p50 / p99 us
// and, for write and read, the CPU time the MDS, the data servers and this client spent per
// MiB (each process's CPU clock). Beside them, the same 4 KiB writes go straight to a
// data server over NFSv3 (libnfs, the NFSv3 client the MDS's fleet uses): the hop the MDS
// adds, so plain UNSTABLE + direct is the floor of a proxied write, measured in the same
// run (the MDS stores nothing itself: its part is the plain export's without the storing).
// Writes <out>/proxy-io.md.
#include "bench_support.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/admin_cli.hpp"
#include "ff_harness/harness.hpp"
#include "ff_harness/nfs3_client.hpp"
#include "perf_profile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace flexfiles::harness;
namespace admin_cli = flexfiles::admin_cli;
namespace fc = flexfiles::client;
using Clock = std::chrono::steady_clock;

namespace {

using bench::fmt;
using bench::process_cpu_seconds;
using bench::progress;
using bench::self_cpu_seconds;

constexpr std::uint64_t kMiB = 1024 * 1024;

struct Args {
    unsigned rounds = 3;
    std::uint64_t seq_mib = 256; // long enough for a steady rate
    unsigned read_passes = 4;    // reads are faster: the file is read this many times over
    unsigned small_writes = 1000;
    unsigned depth = 4; // sequential READs / WRITEs in flight, as a kernel client keeps
    std::string out_dir = ".";
    bool keep_profile = false; // perf.data of the MDS during the last round's reads
};

Args parse_args(int argc, char** argv) {
    Args a;
    bench::for_each_option(
        argc, argv,
        "usage: ff-bench-proxy-io [--rounds N] [--seq-mib M] [--read-passes P] [--small-writes N] "
        "[--depth D] "
        "[--keep-profile yes|no] [--out DIR]",
        [&](const std::string& k, const std::string& v) {
            if (k == "--rounds")
                a.rounds = static_cast<unsigned>(bench::number(k, v));
            else if (k == "--seq-mib")
                a.seq_mib = bench::number(k, v);
            else if (k == "--read-passes")
                a.read_passes = std::max(1u, static_cast<unsigned>(bench::number(k, v)));
            else if (k == "--depth")
                a.depth = std::max(1u, static_cast<unsigned>(bench::number(k, v)));
            else if (k == "--small-writes")
                a.small_writes = static_cast<unsigned>(bench::number(k, v));
            else if (k == "--out")
                a.out_dir = v;
            else if (k == "--keep-profile")
                a.keep_profile = v == "yes";
            else
                return false;
            return true;
        });
    return a;
}

double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

double mean(const std::vector<double>& v) {
    double sum = 0;
    for (double x : v)
        sum += x;
    return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of everything the I/O runs through: the MDS, the data servers, this client.
struct Cpu {
    double mds = 0, ds = 0, client = 0;
    double total() const { return mds + ds + client; }
    Cpu operator-(const Cpu& o) const { return {mds - o.mds, ds - o.ds, client - o.client}; }
    Cpu operator+(const Cpu& o) const { return {mds + o.mds, ds + o.ds, client + o.client}; }
};

Cpu cpu_now(Cluster& cluster) {
    Cpu c;
    c.mds = process_cpu_seconds(cluster.mds().pid());
    for (std::size_t i = 0; i < cluster.ds_info().size(); ++i)
        c.ds += process_cpu_seconds(cluster.ds(static_cast<unsigned>(i)).pid());
    c.client = self_cpu_seconds();
    return c;
}

// The MDS's own account of its proxied writes (data_path.proxy_write_* over dbus,
// core/mds/counters.hpp): summed ns and the writes they cover.
struct ProxyTimes {
    double writes = 0, queue_ns = 0, data_server_ns = 0, wake_ns = 0, total_ns = 0;
    ProxyTimes operator-(const ProxyTimes& o) const {
        return {writes - o.writes, queue_ns - o.queue_ns, data_server_ns - o.data_server_ns,
                wake_ns - o.wake_ns, total_ns - o.total_ns};
    }
    ProxyTimes& operator+=(const ProxyTimes& o) {
        writes += o.writes;
        queue_ns += o.queue_ns;
        data_server_ns += o.data_server_ns;
        wake_ns += o.wake_ns;
        total_ns += o.total_ns;
        return *this;
    }
    double mean_us(double ProxyTimes::*part) const {
        return writes > 0 ? this->*part / writes / 1e3 : 0;
    }
};

// `ganesha-ff --export N --json stats` (the CLI beside this benchmark in the build tree).
ProxyTimes proxy_times(Cluster& cluster, unsigned export_id) {
    const CommandResult r =
        admin_cli::run(*cluster.dbus(), {"--export", std::to_string(export_id), "--json", "stats"},
                       std::chrono::seconds(30));
    if (!r.ok())
        throw std::runtime_error("ganesha-ff stats: " + r.output);
    const std::map<std::string, std::uint64_t> c = admin_cli::counters_of(r.output);
    auto get = [&](const std::string& name) {
        const auto it = c.find("data_path." + name);
        if (it == c.end())
            throw std::runtime_error("ganesha-ff stats: no data_path." + name);
        return static_cast<double>(it->second);
    };
    return {get("proxy_writes_timed"), get("proxy_write_queue_ns"),
            get("proxy_write_data_server_ns"), get("proxy_write_wake_ns"),
            get("proxy_write_total_ns")};
}

// READs of the export's data servers sent on the MDS's worker threads into Ganesha's
// buffer (`ganesha-ff --json list`: each data server's direct_reads, summed), and the
// proxied READs (data_path.proxy_reads) they served.
struct DirectReads {
    std::uint64_t direct = 0, proxied = 0;
};
DirectReads direct_reads(Cluster& cluster, unsigned export_id) {
    const auto ex = std::to_string(export_id);
    const CommandResult list = admin_cli::run(*cluster.dbus(), {"--export", ex, "--json", "list"},
                                              std::chrono::seconds(30));
    if (!list.ok())
        throw std::runtime_error("ganesha-ff list: " + list.output);
    DirectReads out;
    static const std::regex kDirect("\"direct_reads\": ([0-9]+)");
    for (auto it = std::sregex_iterator(list.output.begin(), list.output.end(), kDirect);
         it != std::sregex_iterator(); ++it)
        out.direct += std::stoull((*it)[1].str());
    const CommandResult stats = admin_cli::run(*cluster.dbus(), {"--export", ex, "--json", "stats"},
                                               std::chrono::seconds(30));
    if (!stats.ok())
        throw std::runtime_error("ganesha-ff stats: " + stats.output);
    out.proxied = admin_cli::counters_of(stats.output)["data_path.proxy_reads"];
    return out;
}

struct Figures {
    std::vector<double> write_mib_s, read_mib_s, sync_us, unstable_us;
    ProxyTimes unstable_times; // the MDS's account of the 4 KiB UNSTABLE writes
    Cpu unstable_cpu_s;        // CPU seconds of the 4 KiB UNSTABLE writes, summed over the rounds
    // CPU ms per MiB moved, per round: MDS, data servers, client.
    std::vector<Cpu> write_cpu_ms_per_mib, read_cpu_ms_per_mib;
};

Cpu per_mib(const Cpu& used_s, double mib) {
    return {used_s.mds * 1e3 / mib, used_s.ds * 1e3 / mib, used_s.client * 1e3 / mib};
}

fc::OpenFile create(fc::Session& s, const std::string& path) {
    fc::OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    o.create = true;
    return fc::open_path(s, path, o);
}

void commit(fc::Session& s, const fc::OpenFile& f) {
    fc::Compound c;
    c.putfh(f.fh).commit(0, 0);
    s.send(c).check("commit");
}

// The small writes of one kind: args.small_writes 4 KiB writes one at a time at random
// 4 KiB offsets of a kSmallSpan file, each one's latency into lat.
constexpr std::uint64_t kSmallSpan = 16 * kMiB;
void time_small_writes(const Args& args, std::mt19937_64& rng, std::vector<double>& lat,
                       const std::function<void(std::uint64_t offset)>& write_at) {
    for (unsigned i = 0; i < args.small_writes; ++i) {
        const std::uint64_t off = (rng() % (kSmallSpan / 4096)) * 4096;
        const auto w0 = Clock::now();
        write_at(off);
        lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
    }
}

// export_id: the FLEXFILES export's, whose counters tell where the 4 KiB UNSTABLE writes'
// time went; 0 for the plain export.
void one_round(Cluster& cluster, fc::Session& s, const std::string& dir, unsigned export_id,
               unsigned round, const Args& args, Figures& out) {
    const std::uint32_t chunk = std::min<std::uint32_t>(fc::io_chunk_size(s), kMiB);
    std::vector<char> block(chunk, static_cast<char>('a' + round));

    fc::OpenFile big = create(s, dir + "/seq-" + std::to_string(round));
    const std::uint64_t total = args.seq_mib * kMiB;
    // `depth` threads share the session, thread t doing chunks t, t + depth, ...: that many
    // requests in flight, in file order overall.
    auto in_flight = [&](const std::function<void(std::uint64_t)>& io) {
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < args.depth; ++t)
            threads.emplace_back([&, t] {
                for (std::uint64_t off = std::uint64_t{t} * chunk; off < total;
                     off += std::uint64_t{args.depth} * chunk)
                    io(off);
            });
        for (auto& th : threads)
            th.join();
    };
    auto t0 = Clock::now();
    Cpu c0 = cpu_now(cluster);
    in_flight([&](std::uint64_t off) { fc::write_file(s, big, off, block, UNSTABLE4); });
    commit(s, big);
    const double wrote_mib = static_cast<double>(total) / kMiB;
    out.write_mib_s.push_back(wrote_mib / seconds_since(t0));
    out.write_cpu_ms_per_mib.push_back(per_mib(cpu_now(cluster) - c0, wrote_mib));
    // --keep-profile: the MDS sampled while the last round reads (its CPU figures too).
    std::optional<bench::PerfRecording> perf;
    if (args.keep_profile && round + 1 == args.rounds && bench::perf_available())
        perf.emplace(cluster.mds().pid(),
                     std::filesystem::path(args.out_dir) /
                         ("read" + std::string(dir == "/" ? "" : dir.substr(1)) + ".perf.data"));
    t0 = Clock::now();
    c0 = cpu_now(cluster);
    std::atomic<std::uint64_t> got{0};
    for (unsigned pass = 0; pass < args.read_passes; ++pass)
        in_flight([&](std::uint64_t off) { got += fc::read_file(s, big, off, chunk).size(); });
    const double read_mib = static_cast<double>(got.load()) / kMiB;
    out.read_mib_s.push_back(read_mib / seconds_since(t0));
    out.read_cpu_ms_per_mib.push_back(per_mib(cpu_now(cluster) - c0, read_mib));
    if (perf && !perf->finish())
        progress("perf wrote no profile of " + dir + "'s reads");
    fc::close_file(s, big);

    fc::OpenFile small = create(s, dir + "/small-" + std::to_string(round));
    fc::write_file(s, small, kSmallSpan - 4096, std::vector<char>(4096, 'z'), FILE_SYNC4);
    std::mt19937_64 rng(round + 1);
    const std::vector<char> page(4096, 's');
    for (stable_how4 how : {FILE_SYNC4, UNSTABLE4}) {
        std::vector<double>& lat = how == FILE_SYNC4 ? out.sync_us : out.unstable_us;
        const bool timed = how == UNSTABLE4 && export_id != 0;
        const ProxyTimes t0 = timed ? proxy_times(cluster, export_id) : ProxyTimes{};
        const Cpu r0 = cpu_now(cluster);
        time_small_writes(args, rng, lat,
                          [&](std::uint64_t off) { fc::write_file(s, small, off, page, how); });
        if (how == UNSTABLE4)
            out.unstable_cpu_s = out.unstable_cpu_s + (cpu_now(cluster) - r0);
        if (timed)
            out.unstable_times += proxy_times(cluster, export_id) - t0;
    }
    commit(s, small);
    fc::close_file(s, small);
}

// A WRITE straight to a data server that must succeed.
void write_direct(Nfs3Client& ds, const Nfs3Fh& fh, std::uint64_t off,
                  const std::vector<std::uint8_t>& data, Nfs3Stable how) {
    if (ds.write(fh, off, data, how).status != Nfs3Status::ok)
        throw std::runtime_error("direct: WRITE failed");
}

// A kSmallSpan file of its own in the data server's export, which the MDS does not know
// (its reaper only removes data files it placed), its last page written as one_round's is.
Nfs3Fh create_direct_file(Nfs3Client& ds, const std::string& name) {
    const Nfs3CreateResult created = ds.create(ds.root(), name, 0600);
    if (created.status != Nfs3Status::ok || !created.fh)
        throw std::runtime_error("direct: CREATE " + name + " failed");
    write_direct(ds, *created.fh, kSmallSpan - 4096, std::vector<std::uint8_t>(4096, 'z'),
                 Nfs3Stable::file_sync);
    return *created.fh;
}

// The 4 KiB writes of one_round, straight to a data server.
void direct_round(Cluster& cluster, Nfs3Client& ds, unsigned round, const Args& args,
                  Figures& out) {
    const std::string name = "bench-direct-" + std::to_string(round);
    const Nfs3Fh fh = create_direct_file(ds, name);
    auto write = [&](std::uint64_t off, const std::vector<std::uint8_t>& data, Nfs3Stable how) {
        write_direct(ds, fh, off, data, how);
    };
    std::mt19937_64 rng(round + 1);
    const std::vector<std::uint8_t> page(4096, 's');
    for (Nfs3Stable how : {Nfs3Stable::file_sync, Nfs3Stable::unstable}) {
        std::vector<double>& lat = how == Nfs3Stable::file_sync ? out.sync_us : out.unstable_us;
        const Cpu r0 = cpu_now(cluster);
        time_small_writes(args, rng, lat, [&](std::uint64_t off) { write(off, page, how); });
        if (how == Nfs3Stable::unstable)
            out.unstable_cpu_s = out.unstable_cpu_s + (cpu_now(cluster) - r0);
    }
    ds.commit(fh);
    ds.remove(ds.root(), name);
}

// The floor's two writes alternated: a plain UNSTABLE write to /vfs, then the same write
// straight to data server 1, args.small_writes of each, each timed on its own. Apart, each
// server ran with only the client between its writes; in a proxied write two servers and
// the client take turns on this machine's two cores and their caches, and alternated, so
// do these (plain: the plain export's part; direct: the data server's). What the pairs ran
// on a CPU goes to pairs_cpu_s (read around the loop, not per write).
void alternated_round(Cluster& cluster, fc::Session& s, Nfs3Client& ds, unsigned round,
                      const Args& args, Figures& plain, Figures& direct, Cpu& pairs_cpu_s) {
    fc::OpenFile f = create(s, "/vfs/alternated-" + std::to_string(round));
    fc::write_file(s, f, kSmallSpan - 4096, std::vector<char>(4096, 'z'), FILE_SYNC4);
    const std::string name = "bench-alternated-" + std::to_string(round);
    const Nfs3Fh fh = create_direct_file(ds, name);
    std::mt19937_64 rng(round + 1);
    const std::vector<char> page(4096, 's');
    const std::vector<std::uint8_t> dpage(4096, 's');
    auto timed = [&](Figures& out, const std::function<void()>& write) {
        const auto w0 = Clock::now();
        write();
        out.unstable_us.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
    };
    const Cpu r0 = cpu_now(cluster);
    for (unsigned i = 0; i < args.small_writes; ++i) {
        const std::uint64_t off = (rng() % (kSmallSpan / 4096)) * 4096;
        timed(plain, [&] { fc::write_file(s, f, off, page, UNSTABLE4); });
        timed(direct, [&] { write_direct(ds, fh, off, dpage, Nfs3Stable::unstable); });
    }
    pairs_cpu_s = pairs_cpu_s + (cpu_now(cluster) - r0);
    commit(s, f);
    fc::close_file(s, f);
    ds.commit(fh);
    ds.remove(ds.root(), name);
}

int run(const Args& args) {
    progress("starting 1 MDS + 3 data servers");
    ClusterOptions options;
    options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        FlexfilesOptions ff;
        ff.attr_expiration_time = std::nullopt; // the README's configuration
        ff.mirrors = 1;
        mds.exports[0].pseudo = "/m1";
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        ExportSpec m2 = mds.exports[0];
        m2.export_id = 2;
        m2.pseudo = "/m2";
        ff.mirrors = 2;
        m2.fsal = flexfiles_fsal_block(ds, ff);
        mds.exports.push_back(m2);
        ExportSpec vfs = mds.exports[0];
        vfs.export_id = 3;
        vfs.pseudo = "/vfs";
        vfs.fsal = "FSAL { Name = VFS; }";
        mds.exports.push_back(vfs);
        ExportSpec m1e = mds.exports[0];
        m1e.export_id = 4;
        m1e.pseudo = "/m1e";
        ff.mirrors = 1;
        ff.extra += "        DS_Direct_Connections = 0;\n";
        m1e.fsal = flexfiles_fsal_block(ds, ff);
        mds.exports.push_back(m1e);
        ExportSpec m1s = mds.exports[0];
        m1s.export_id = 5;
        m1s.pseudo = "/m1s";
        ff.extra = "        DS_Direct_Spin = 100;\n";
        m1s.fsal = flexfiles_fsal_block(ds, ff);
        mds.exports.push_back(m1s);
    };
    options.with_dbus = true; // the MDS's counters, read with ganesha-ff
    Cluster cluster(options);
    fc::SessionOptions so;
    so.host = cluster.mds().address();
    so.port = cluster.mds().nfs_port();
    so.minor_version = 1;
    auto session = fc::Session::open(so);

    const std::map<std::string, unsigned> export_ids{
        {"/m1", 1}, {"/m2", 2}, {"/m1e", 4}, {"/m1s", 5}, {"/vfs", 0}};
    const std::vector<std::pair<std::string, std::string>> exports{
        {"/m1", "FLEXFILES, Mirrors = 1"},
        {"/m2", "FLEXFILES, Mirrors = 2"},
        {"/m1e", "FLEXFILES, Mirrors = 1, through the event threads (DS_Direct_Connections = 0)"},
        {"/m1s", "FLEXFILES, Mirrors = 1, polling for the reply first (DS_Direct_Spin = 100)"},
        {"/vfs", "plain VFS (reference)"}};
    Nfs3Client ds(cluster.ds(0).nfs3_url());
    std::map<std::string, Figures> fig;
    Figures direct;
    Figures alt_plain, alt_direct; // the floor's two writes alternated (alternated_round)
    Cpu alt_cpu_s;
    for (unsigned r = 0; r < args.rounds; ++r) {
        if (r % 2 == 1) {
            direct_round(cluster, ds, r, args, direct);
            alternated_round(cluster, *session, ds, r, args, alt_plain, alt_direct, alt_cpu_s);
        }
        for (std::size_t i = 0; i < exports.size(); ++i) {
            // Reverse the order every other round, so no export always goes first.
            const auto& dir = exports[r % 2 == 0 ? i : exports.size() - 1 - i].first;
            one_round(cluster, *session, dir, export_ids.at(dir), r, args, fig[dir]);
            progress("round " + std::to_string(r + 1) + " " + dir + ": write " +
                     fmt(fig[dir].write_mib_s.back()) + " MiB/s, read " +
                     fmt(fig[dir].read_mib_s.back()) + " MiB/s");
        }
        if (r % 2 == 0) {
            alternated_round(cluster, *session, ds, r, args, alt_plain, alt_direct, alt_cpu_s);
            direct_round(cluster, ds, r, args, direct);
        }
        progress("round " + std::to_string(r + 1) +
                 " direct to data server 1: 4 KiB UNSTABLE p50 " +
                 fmt(percentile(direct.unstable_us, 0.5)) + " us");
    }
    session->close();
    std::map<std::string, DirectReads> read_paths;
    for (const auto& [dir, id] : export_ids)
        if (id != 0)
            read_paths[dir] = direct_reads(cluster, id);

    std::ofstream md = bench::output_file(args.out_dir, "proxy-io.md");
    md << "### d. I/O through the MDS (no layout; " << args.rounds << " rounds, medians)\n\n"
       << "One NFSv4.1 session without LAYOUTGET (what an NFSv4.0 client does), the exports "
          "interleaved. Sequential: a "
       << args.seq_mib << " MiB file in " << fc::io_chunk_size(*session) / 1024
       << " KiB WRITEs (UNSTABLE, then COMMIT), then read " << args.read_passes
       << " times over in READs of that size, " << args.depth
       << " in flight. Small: " << args.small_writes
       << " 4 KiB WRITEs one at a time at random offsets of a 16 MiB file per round and "
          "kind.\n\n"
       << "| export | write MiB/s | read MiB/s | 4 KiB FILE_SYNC p50 us | p99 us | 4 KiB "
          "UNSTABLE p50 us | p99 us |\n|---|---:|---:|---:|---:|---:|---:|\n";
    auto row = [&](const std::string& dir, const std::string& name) {
        const Figures& f = fig.at(dir);
        md << "| " << name << " | " << fmt(median(f.write_mib_s)) << " | "
           << fmt(median(f.read_mib_s)) << " | " << fmt(percentile(f.sync_us, 0.5)) << " | "
           << fmt(percentile(f.sync_us, 0.99)) << " | " << fmt(percentile(f.unstable_us, 0.5))
           << " | " << fmt(percentile(f.unstable_us, 0.99)) << " |\n";
    };
    for (const auto& [dir, name] : exports)
        row(dir, name);
    md << "| data server 1 direct (NFSv3, libnfs): the hop the MDS adds | | | "
       << fmt(percentile(direct.sync_us, 0.5)) << " | " << fmt(percentile(direct.sync_us, 0.99))
       << " | " << fmt(percentile(direct.unstable_us, 0.5)) << " | "
       << fmt(percentile(direct.unstable_us, 0.99)) << " |\n";
    const Figures& v = fig.at("/vfs");
    md << "\n| ratio to plain VFS | write | read | 4 KiB FILE_SYNC p50 | 4 KiB UNSTABLE p50 |\n"
          "|---|---:|---:|---:|---:|\n";
    for (const std::string dir : {"/m1", "/m2", "/m1e", "/m1s"}) {
        const Figures& f = fig.at(dir);
        md << "| " << dir << " | " << fmt(median(f.write_mib_s) / median(v.write_mib_s), 2) << " | "
           << fmt(median(f.read_mib_s) / median(v.read_mib_s), 2) << " | "
           << fmt(percentile(f.sync_us, 0.5) / percentile(v.sync_us, 0.5), 2) << "x | "
           << fmt(percentile(f.unstable_us, 0.5) / percentile(v.unstable_us, 0.5), 2) << "x |\n";
    }
    {
        // A proxied write is the client's request to the MDS and the MDS's request to a data
        // server: at least plain UNSTABLE + direct, both measured here.
        const Figures& m1 = fig.at("/m1");
        auto p50 = [](const std::vector<double>& x) { return percentile(x, 0.5); };
        md << "\n| 4 KiB write p50, Mirrors = 1 | FLEXFILES us | floor: plain UNSTABLE + direct us "
              "| "
              "floor / plain | FLEXFILES over the floor us |\n|---|---:|---:|---:|---:|\n";
        for (const bool sync : {true, false}) {
            const auto Figures::*lat = sync ? &Figures::sync_us : &Figures::unstable_us;
            const double floor = p50(v.unstable_us) + p50(direct.*lat);
            md << "| " << (sync ? "FILE_SYNC" : "UNSTABLE") << " | " << fmt(p50(m1.*lat)) << " | "
               << fmt(floor) << " | " << fmt(floor / p50(v.*lat), 2) << "x | "
               << fmt(p50(m1.*lat) - floor) << " |\n";
        }
        const double alt_floor = p50(alt_plain.unstable_us) + p50(alt_direct.unstable_us);
        md << "| UNSTABLE, the floor's two writes alternated | " << fmt(p50(m1.unstable_us))
           << " | " << fmt(alt_floor) << " (" << fmt(p50(alt_plain.unstable_us)) << " + "
           << fmt(p50(alt_direct.unstable_us)) << ") | " << fmt(alt_floor / p50(v.unstable_us), 2)
           << "x | " << fmt(p50(m1.unstable_us) - alt_floor) << " |\n";
        md << "\nWhere the MDS's time went in the UNSTABLE writes (its own counters, means "
              "over the writes, us):\n\n| export | in the FSAL's write | waiting for the data "
              "server's event thread | the data server's round trip | reply to worker running "
              "again | the rest of the FSAL's write | outside it (client p50 minus the FSAL's "
              "mean) |\n|---|---:|---:|---:|---:|---:|---:|\n";
        for (const std::string dir : {"/m1", "/m2", "/m1e", "/m1s"}) {
            const Figures& f = fig.at(dir);
            const ProxyTimes& t = f.unstable_times;
            const double total = t.mean_us(&ProxyTimes::total_ns);
            const double parts = t.mean_us(&ProxyTimes::queue_ns) +
                                 t.mean_us(&ProxyTimes::data_server_ns) +
                                 t.mean_us(&ProxyTimes::wake_ns);
            md << "| " << dir << " | " << fmt(total, 1) << " | "
               << fmt(t.mean_us(&ProxyTimes::queue_ns), 1) << " | "
               << fmt(t.mean_us(&ProxyTimes::data_server_ns), 1) << " | "
               << fmt(t.mean_us(&ProxyTimes::wake_ns), 1) << " | " << fmt(total - parts, 1) << " | "
               << fmt(p50(f.unstable_us) - total, 1) << " |\n";
        }
        // The MDS's counters give means: the lone client's mean is the figure to set beside
        // its round trip (the p50 of the floor leaves out the tail both of them have).
        md << "\nThe same WRITE from a lone libnfs client to data server 1 (the floor's "
              "direct part): mean "
           << fmt(mean(direct.unstable_us), 1) << " us, p50 " << fmt(p50(direct.unstable_us), 1)
           << " us, p90 " << fmt(percentile(direct.unstable_us, 0.9), 1)
           << " us. The client's own "
              "4 KiB UNSTABLE through /m1: mean "
           << fmt(mean(m1.unstable_us), 1) << " us, p50 " << fmt(p50(m1.unstable_us), 1)
           << " us; plain VFS: mean " << fmt(mean(v.unstable_us), 1) << " us, p50 "
           << fmt(p50(v.unstable_us), 1) << " us.\n";
        // What each process ran per write, beside the wall time: the part of a write spent
        // on a CPU, and whether the same work costs more when the MDS is in the chain.
        md << "\nWhat the 4 KiB UNSTABLE writes ran on a CPU (us per write, means; "
              "each process's CPU clock; /vfs is served by the MDS's process):\n\n"
              "| writes | MDS | data servers | client | total | wall |\n"
              "|---|---:|---:|---:|---:|---:|\n";
        auto run_row = [&](const std::string& name, const Figures& f) {
            const double n = static_cast<double>(f.unstable_us.size());
            if (n == 0)
                return;
            const Cpu& c = f.unstable_cpu_s;
            md << "| " << name << " | " << fmt(c.mds / n * 1e6, 1) << " | "
               << fmt(c.ds / n * 1e6, 1) << " | " << fmt(c.client / n * 1e6, 1) << " | "
               << fmt(c.total() / n * 1e6, 1) << " | " << fmt(mean(f.unstable_us), 1) << " |\n";
        };
        run_row("/m1", m1);
        run_row("/m1s", fig.at("/m1s"));
        run_row("/vfs (plain)", v);
        run_row("direct to data server 1 (the lone client)", direct);
        if (const double n = static_cast<double>(alt_plain.unstable_us.size()); n > 0)
            md << "| plain + direct alternated, per pair | " << fmt(alt_cpu_s.mds / n * 1e6, 1)
               << " | " << fmt(alt_cpu_s.ds / n * 1e6, 1) << " | "
               << fmt(alt_cpu_s.client / n * 1e6, 1) << " | " << fmt(alt_cpu_s.total() / n * 1e6, 1)
               << " | " << fmt(mean(alt_plain.unstable_us) + mean(alt_direct.unstable_us), 1)
               << " |\n";
        md << "\nThe floor: no proxy can answer before its own server has taken the request "
              "(the plain export's UNSTABLE write: a round trip through Ganesha into the page "
              "cache) and the data server has stored the bytes (direct, at the same "
              "stability). A target of 2x plain UNSTABLE leaves the MDS's own part of the hop "
              "plain minus direct. /m1 and /m2 send each WRITE from the worker's own thread "
              "(DS_Direct_Connections); /m1e hands it to the data server's event thread and "
              "the reply back to the worker, the two waits in its row.\n"
           << "\nThe floor alternated: the same two writes taken in turn, write by write ("
           << alt_plain.unstable_us.size()
           << " pairs), each timed on its own. Apart, each server ran with only the client "
              "between its writes; alternated, the plain export's server and the data server "
              "run their parts in turn with the client, as the MDS and the data server do in "
              "a proxied write, on the same two cores and caches. Its plain part still stores "
              "the bytes, which the MDS does not; its direct part is the NFSv3 client's work "
              "that the MDS does in a proxied write. The CPU table above has what the pairs "
              "ran.\n";
        // x / y side by side, UNSTABLE and FILE_SYNC p50.
        auto side_by_side = [&](const std::string& what, const Figures& x, const Figures& y) {
            md << "\n4 KiB UNSTABLE p50, Mirrors = 1, " << what
               << " (same run): " << fmt(p50(x.unstable_us), 1) << " / "
               << fmt(p50(y.unstable_us), 1)
               << " us = " << fmt(p50(x.unstable_us) / p50(y.unstable_us), 2) << "; FILE_SYNC "
               << fmt(p50(x.sync_us), 1) << " / " << fmt(p50(y.sync_us), 1)
               << " us = " << fmt(p50(x.sync_us) / p50(y.sync_us), 2) << ".\n";
        };
        side_by_side("sent from the worker's thread / through the event threads", m1,
                     fig.at("/m1e"));
        side_by_side("the worker polling for the reply up to 100 us first (DS_Direct_Spin = 100) "
                     "/ sleeping at once, the default",
                     fig.at("/m1s"), m1);
    }
    md << "\nREADs sent to the data servers from the MDS's worker threads, received into "
          "Ganesha's buffer (DataServer::read_here), of the proxied READs:";
    for (const auto& [dir, r] : read_paths)
        md << " " << dir << " " << r.direct << " of " << r.proxied << ";";
    md << " the rest went through the data servers' event threads.\n";
    // Where the CPU goes, per MiB moved (medians of the rounds, each part on its own).
    auto median_part = [](const std::vector<Cpu>& v, double Cpu::*part) {
        std::vector<double> x;
        for (const Cpu& c : v)
            x.push_back(c.*part);
        return median(x);
    };
    auto median_total = [](const std::vector<Cpu>& v) {
        std::vector<double> x;
        for (const Cpu& c : v)
            x.push_back(c.total());
        return median(x);
    };
    md << "\n| CPU ms per MiB moved (medians) | MDS | data servers | client | total |\n"
          "|---|---:|---:|---:|---:|\n";
    for (const auto& [dir, name] : exports)
        for (const bool reading : {false, true}) {
            const auto& v =
                reading ? fig.at(dir).read_cpu_ms_per_mib : fig.at(dir).write_cpu_ms_per_mib;
            md << "| " << name << ", " << (reading ? "read" : "write") << " | "
               << fmt(median_part(v, &Cpu::mds), 2) << " | " << fmt(median_part(v, &Cpu::ds), 2)
               << " | " << fmt(median_part(v, &Cpu::client), 2) << " | " << fmt(median_total(v), 2)
               << " |\n";
        }
    // On a machine whose cores the I/O saturates, throughput follows CPU per MiB: the plain
    // export's total over the proxied one's is the ratio that CPU allows.
    const double vr = median_total(v.read_cpu_ms_per_mib);
    const double fr = median_total(fig.at("/m1").read_cpu_ms_per_mib);
    const double vw = median_total(v.write_cpu_ms_per_mib);
    const double fw = median_total(fig.at("/m1").write_cpu_ms_per_mib);
    const double cpu_write = fw > 0 ? vw / fw : 0;
    const double cpu_read = fr > 0 ? vr / fr : 0;
    // The best a proxy can do by CPU cost: an MDS that costs what the plain export's server
    // costs (it receives each byte from a socket where that server copies it out of the
    // page cache, and sends it as that server does), the data servers as measured, the
    // client as with the plain export. Round by round (the exports take turns in each),
    // then the median.
    const auto& vreads = v.read_cpu_ms_per_mib;
    const auto& freads = fig.at("/m1").read_cpu_ms_per_mib;
    std::vector<double> round_limits;
    for (std::size_t r = 0; r < std::min(vreads.size(), freads.size()); ++r) {
        const double best = vreads[r].mds + freads[r].ds + vreads[r].client;
        if (best > 0)
            round_limits.push_back(vreads[r].total() / best);
    }
    const double read_limit = round_limits.empty() ? 0 : median(round_limits);
    {
        md << "\nBy CPU cost (plain VFS total / FLEXFILES Mirrors = 1 total, what a CPU-bound "
              "machine allows): write "
           << fmt(cpu_write, 2) << ", read " << fmt(cpu_read, 2)
           << ". Through the MDS every byte is handled by one more Ganesha (the MDS, as the "
              "data server's NFSv3 client and as the client's NFSv4 server) besides the one "
              "that stores it, which costs what the plain export costs.\n";
        md << "\nThe most a proxied read can reach by CPU cost here: " << fmt(read_limit, 2)
           << " (an MDS costing what the plain export's server costs per MiB, "
           << fmt(median_part(vreads, &Cpu::mds), 2)
           << " ms, the data servers as measured, the client as with the plain export: plain "
              "total / (plain server + data servers + plain client), round by round, "
              "median); the MDS measured "
           << fmt(median_part(freads, &Cpu::mds), 2) << " ms.\n";
    }

    const Figures& m1 = fig.at("/m1");
    const double tput = median(m1.write_mib_s) / median(v.write_mib_s);
    const double rtput = median(m1.read_mib_s) / median(v.read_mib_s);
    const double lat = percentile(m1.sync_us, 0.5) / percentile(v.sync_us, 0.5);
    const double ulat = percentile(m1.unstable_us, 0.5) / percentile(v.unstable_us, 0.5);
    const double ufloor = (percentile(v.unstable_us, 0.5) + percentile(direct.unstable_us, 0.5)) /
                          percentile(v.unstable_us, 0.5);
    // The same two writes alternated, as the servers take turns in a proxied write.
    const double ufloor_alt =
        (percentile(alt_plain.unstable_us, 0.5) + percentile(alt_direct.unstable_us, 0.5)) /
        percentile(v.unstable_us, 0.5);
    md << "\n| target (#16) | measured | met |\n|---|---|---|\n"
       << "| throughput >= 0.7x plain, Mirrors = 1 | write " << fmt(tput, 2) << ", read "
       << fmt(rtput, 2) << " (by CPU cost: write " << fmt(cpu_write, 2) << ", read "
       << fmt(cpu_read, 2) << "; the most a proxied read reaches here " << fmt(read_limit, 2)
       << ") | "
       << (tput >= 0.7 && rtput >= 0.7       ? "yes"
           : tput >= 0.7 && read_limit < 0.7 ? "no: a proxy as cheap as the plain server reaches " +
                                                   fmt(read_limit, 2) + " here (above)"
           : (tput >= 0.7 || cpu_write < 0.7) && (rtput >= 0.7 || cpu_read < 0.7)
               ? "no: by CPU cost, what each byte costs through the MDS allows less"
               : "no")
       << " |\n"
       << "| 4 KiB write latency <= 2x plain (p50, FILE_SYNC) | " << fmt(lat, 2) << "x | "
       << (lat <= 2.0 ? "yes" : "no") << " |\n"
       << "| 4 KiB write latency <= 2x plain (p50, UNSTABLE) | " << fmt(ulat, 2)
       << "x (floor measured here: " << fmt(ufloor, 2) << "x apart, " << fmt(ufloor_alt, 2)
       << "x alternated) | "
       << (ulat <= 2.0                          ? "yes"
           : std::max(ufloor, ufloor_alt) > 2.0 ? "no: the floor measured here is above 2x"
                                                : "no")
       << " |\n";
    const auto errors = cluster.mds().error_lines();
    for (const auto& l : errors)
        progress("MDS error line: " + l);
    progress("wrote " + args.out_dir + "/proxy-io.md");
    return 0;
}

} // namespace

const char* const bench::kTool = "ff-bench-proxy-io";

int main(int argc, char** argv) {
    return bench::main_of(argc, argv, parse_args, run);
}
