// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-bench-two-mds: one and two MDSs on one CephFS namespace (docs/scale-out.md), real
// servers: a single-node Ceph (memstore OSD), 3 NFSv3 data servers, MDS 1 and MDS 2
// (FLEXFILES over CEPH, Mirrors = 1, Map_In_Namespace = true, rados_cluster recovery),
// all on this machine's loopback, side by side in one run:
//
//   create   OPEN with create + CLOSE of new files (each places its data file and publishes
//            its map on the namespace object), from S sessions for T seconds;
//   getattr  PUTFH + GETATTR (size, change, times) of 64 files written before, from S
//            sessions for T seconds (the README's recommended Attr_Expiration_Time: MDCACHE
//            answers most, every WCC_Max_Age each MDS asks the data servers again);
//
// first with every session on MDS 1, then with the sessions split over MDS 1 and MDS 2. It
// prints the rates, their two/one ratios and the CPU each kind of process spent per
// operation. On a 2-core machine both MDSs, Ceph and the data servers share the same cores:
// the ratio says what a second MDS costs or gains there, not what it gains on its own
// machine. Writes <out>/two-mds.md.
#include "bench_support.hpp"
#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/ceph_cluster.hpp"
#include "ff_harness/harness.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
using Clock = std::chrono::steady_clock;

namespace {

using bench::fmt;
using bench::progress;

constexpr unsigned kGetattrFiles = 64;

struct Args {
    unsigned seconds = 10;
    unsigned sessions = 8;
    std::string out_dir = ".";
};

Args parse_args(int argc, char** argv) {
    Args a;
    bench::for_each_option(
        argc, argv, "usage: ff-bench-two-mds [--seconds T] [--sessions S] [--out DIR]",
        [&](const std::string& k, const std::string& v) {
            if (k == "--seconds")
                a.seconds = std::max(1u, static_cast<unsigned>(bench::number(k, v)));
            else if (k == "--sessions")
                a.sessions = std::max(2u, static_cast<unsigned>(bench::number(k, v)));
            else if (k == "--out")
                a.out_dir = v;
            else
                return false;
            return true;
        });
    return a;
}

// CPU seconds so far of a set of processes.
double cpu_of(const std::vector<pid_t>& pids) {
    double s = 0;
    for (pid_t p : pids)
        s += bench::process_cpu_seconds(p);
    return s;
}

struct Processes {
    std::vector<pid_t> mds, ceph, data_servers;
};

struct Phase {
    double ops_per_s = 0;
    double mds_us = 0, ceph_us = 0, ds_us = 0; // CPU per operation
};

// Runs op(session, thread, i) on `sessions` threads for `seconds`, thread t on mds[t % n].
template <class Op>
Phase measure(const std::vector<GaneshaServer*>& mds, const Processes& procs, unsigned sessions,
              unsigned seconds, Op op) {
    std::vector<std::unique_ptr<fc::Session>> s;
    for (unsigned t = 0; t < sessions; t++)
        s.push_back(bench::plain_session(*mds[t % mds.size()]));
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> done{0}, failed{0};
    const double mds0 = cpu_of(procs.mds), ceph0 = cpu_of(procs.ceph),
                 ds0 = cpu_of(procs.data_servers);
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < sessions; t++)
        threads.emplace_back([&, t] {
            for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); i++) {
                try {
                    op(*s[t], t, i);
                    done.fetch_add(1, std::memory_order_relaxed);
                } catch (const std::exception& e) {
                    if (failed++ < 5)
                        progress(std::string("op failed: ") + e.what());
                }
            }
        });
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    stop = true;
    for (auto& th : threads)
        th.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    for (auto& one : s)
        one->close();
    if (failed != 0)
        throw std::runtime_error(std::to_string(failed.load()) + " operations failed");
    const double n = static_cast<double>(done.load());
    Phase p;
    p.ops_per_s = n / elapsed;
    p.mds_us = (cpu_of(procs.mds) - mds0) * 1e6 / n;
    p.ceph_us = (cpu_of(procs.ceph) - ceph0) * 1e6 / n;
    p.ds_us = (cpu_of(procs.data_servers) - ds0) * 1e6 / n;
    return p;
}

int run(const Args& args) {
    progress("starting a single-node Ceph");
    CephCluster ceph;
    ceph.add_grace_members({"mds1", "mds2"});
    progress("starting 3 data servers and MDS 1");
    ClusterOptions options;
    options.configure_mds = [&ceph](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        FlexfilesOptions ff;
        ff.attr_expiration_time = std::nullopt;
        ff.mirrors = 1;
        ff.sub_fsal = CephCluster::fsal_block();
        ff.extra = "        Map_In_Namespace = true;\n";
        mds.exports[0].pseudo = "/m";
        mds.exports[0].path = "/";
        mds.exports[0].local_path = false;
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        ceph.make_cluster_member(mds, "mds1");
    };
    Cluster cluster(options);
    GaneshaServer& mds1 = cluster.mds();
    progress("starting MDS 2");
    ServerOptions o2 = mds1.options();
    o2.name = "mds2";
    o2.address = cluster.addresses().address(2);
    o2.extra_config.clear();
    o2.env.clear();
    ceph.make_cluster_member(o2, "mds2");
    const std::size_t before = mds1.log_offset();
    GaneshaServer mds2(std::move(o2));
    CephCluster::wait_out_grace(mds2);
    CephCluster::wait_out_grace(mds1, before);

    Processes procs;
    procs.mds = {mds1.pid(), mds2.pid()};
    procs.ceph = ceph.pids();
    for (unsigned i = 0; i < cluster.ds_count(); i++)
        procs.data_servers.push_back(cluster.ds(i).pid());

    progress("writing " + std::to_string(kGetattrFiles) + " files for GETATTR");
    {
        auto s = bench::plain_session(mds1);
        const std::vector<char> data(4096, 'x');
        for (unsigned i = 0; i < kGetattrFiles; i++) {
            fc::OpenOptions oo;
            oo.access = OPEN4_SHARE_ACCESS_BOTH;
            oo.create = true;
            fc::OpenFile f = fc::open_path(*s, "/m/g" + std::to_string(i), oo);
            fc::write_file(*s, f, 0, data);
            fc::close_file(*s, f);
        }
        s->close();
    }
    // Each session's filehandles, looked up through its own MDS.
    auto handles = [&](const std::vector<GaneshaServer*>& mds) {
        std::vector<std::vector<fc::FileHandle>> fhs(args.sessions);
        for (unsigned t = 0; t < args.sessions; t++) {
            auto s = bench::plain_session(*mds[t % mds.size()]);
            for (unsigned i = 0; i < kGetattrFiles; i++)
                fhs[t].push_back(fc::lookup_path(*s, "/m/g" + std::to_string(i)));
            s->close();
        }
        return fhs;
    };
    const fc::AttrMask attrs = fc::stat_attrs();

    struct Row {
        const char* what;
        Phase one, two;
    };
    std::vector<Row> rows;
    for (const char* what : {"create", "getattr"}) {
        Row row{what, {}, {}};
        for (int n = 1; n <= 2; n++) {
            std::vector<GaneshaServer*> mds{&mds1};
            if (n == 2)
                mds.push_back(&mds2);
            progress(std::string(what) + " through " + std::to_string(n) + " MDS(s), " +
                     std::to_string(args.sessions) + " sessions, " + std::to_string(args.seconds) +
                     " s");
            Phase p;
            if (std::string(what) == "create") {
                p = measure(mds, procs, args.sessions, args.seconds,
                            [n](fc::Session& s, unsigned t, std::uint64_t i) {
                                fc::OpenOptions oo;
                                oo.access = OPEN4_SHARE_ACCESS_BOTH;
                                oo.create = true;
                                fc::OpenFile f =
                                    fc::open_path(s,
                                                  "/m/c" + std::to_string(n) + "-" +
                                                      std::to_string(t) + "-" + std::to_string(i),
                                                  oo);
                                fc::close_file(s, f);
                            });
            } else {
                const auto fhs = handles(mds);
                p = measure(mds, procs, args.sessions, args.seconds,
                            [&](fc::Session& s, unsigned t, std::uint64_t i) {
                                fc::Compound c;
                                c.putfh(fhs[t][i % kGetattrFiles]).getattr(attrs);
                                s.send(c).check("getattr");
                            });
            }
            (n == 1 ? row.one : row.two) = p;
        }
        rows.push_back(row);
    }

    auto out = bench::output_file(args.out_dir, "two-mds.md");
    out << "# One and two MDSs on one CephFS namespace (ff-bench-two-mds)\n\n"
        << "Single-node Ceph 16 (memstore OSD), 3 NFSv3 data servers, FLEXFILES over CEPH, "
           "Mirrors = 1, Map_In_Namespace = true, rados_cluster; "
        << args.sessions << " NFSv4.1 sessions (no layouts), " << args.seconds
        << " s per phase; all processes on this machine's " << std::thread::hardware_concurrency()
        << " cores.\n\n"
        << "| operation | 1 MDS (ops/s) | 2 MDSs (ops/s) | 2 / 1 | CPU per op, 1 MDS: MDS / Ceph "
           "/ DS (us) | CPU per op, 2 MDSs: MDS / Ceph / DS (us) |\n"
        << "|---|---|---|---|---|---|\n";
    for (const Row& r : rows)
        out << "| " << r.what << " | " << fmt(r.one.ops_per_s) << " | " << fmt(r.two.ops_per_s)
            << " | " << fmt(r.two.ops_per_s / r.one.ops_per_s, 2) << " | " << fmt(r.one.mds_us)
            << " / " << fmt(r.one.ceph_us) << " / " << fmt(r.one.ds_us) << " | "
            << fmt(r.two.mds_us) << " / " << fmt(r.two.ceph_us) << " / " << fmt(r.two.ds_us)
            << " |\n";
    out.close();
    for (const Row& r : rows)
        std::cout << r.what << ": 1 MDS " << fmt(r.one.ops_per_s) << "/s, 2 MDSs "
                  << fmt(r.two.ops_per_s) << "/s, ratio "
                  << fmt(r.two.ops_per_s / r.one.ops_per_s, 2) << "\n";
    std::cout << "wrote " << args.out_dir << "/two-mds.md\n";
    return 0;
}

} // namespace

const char* const bench::kTool = "ff-bench-two-mds";

int main(int argc, char** argv) {
    return bench::main_of(argc, argv, parse_args, run);
}
