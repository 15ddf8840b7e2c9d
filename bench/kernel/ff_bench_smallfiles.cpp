// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Small files through the Linux kernel client: one guest mounts two exports of one MDS
// with vers=4.2, /ff (FLEXFILES over VFS, Mirrors = 2, 3 NFSv3 data servers) and /plain
// (VFS), and for each, in alternating rounds:
//   creates  N files: open(O_CREAT|O_TRUNC), write 4 KiB, close (the shell's printf
//            builtin, no process per file)
//   stats    stat() each file after dropping the guest's caches (LOOKUP + GETATTR)
//   removes  unlink every file (one rm)
// The guest times each phase (/proc/uptime, 10 ms); the operations the client sent per
// created file come from its /proc/self/mountstats.
//
//   ff-bench-smallfiles [--files N] [--rounds R] [--out DIR]   (DIR/smallfiles.md, .dat)
#include "ff_harness/harness.hpp"
#include "ff_kernel_client/guest_vm.hpp"
#include "ff_kernel_client/mount_stats.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace flexfiles::harness;
using namespace flexfiles::kernel_client;
using namespace std::chrono_literals;

namespace {

struct Phases {
    double creates = 0, stats = 0, removes = 0; // per second
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// "<start> <end>" from /proc/uptime around the phase -> rate.
double rate(const std::string& out, int files) {
    std::istringstream in(out);
    double start = 0, end = 0;
    in >> start >> end;
    return end > start ? files / (end - start) : 0;
}

// A guest shell command that runs `work` in `dir` between two reads of /proc/uptime and
// prints "<start> <end>" (what rate() reads).
std::string timed_in(const std::string& dir, const std::string& work) {
    return "cd " + dir + " && read s _ < /proc/uptime && " + work +
           " && read e _ < /proc/uptime && echo $s $e";
}

// `step` for each of f0 .. f<files - 1> ($i the number), stopping at the first failure.
std::string for_each_file(int files, const std::string& step) {
    return "i=0 && while [ $i -lt " + std::to_string(files) + " ]; do " + step +
           " || exit 1; i=$((i+1)); done";
}

Phases run_round(GuestVm& vm, const std::string& dir, int files, int round) {
    const std::string d = dir + "/r" + std::to_string(round);
    Phases p;
    vm.must("mkdir -p " + d);
    p.creates =
        rate(vm.must(timed_in(d, for_each_file(files, "printf '%4096s' x > f$i")), 600s), files);
    vm.must("sync && echo 3 > /proc/sys/vm/drop_caches");
    p.stats = rate(vm.must(timed_in(d, for_each_file(files, "[ -f f$i ]")), 600s), files);
    p.removes = rate(vm.must(timed_in(d, "rm -f f*") + " && cd / && rmdir " + d, 600s), files);
    return p;
}

} // namespace

int main(int argc, char** argv) {
    int files = 200, rounds = 3;
    std::string out = ".";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--files")
            files = std::atoi(argv[i + 1]);
        else if (a == "--rounds")
            rounds = std::atoi(argv[i + 1]);
        else if (a == "--out")
            out = argv[i + 1];
    }
    setenv("FF_TEST_WORK_ROOT", FF_BENCH_WORK_ROOT, 0);

    ClusterOptions o;
    o.data_servers = 3;
    o.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        mds.exports[0].pseudo = "/ff";
        FlexfilesOptions ff;
        ff.mirrors = 2;
        mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        ExportSpec plain;
        plain.export_id = 2;
        plain.pseudo = "/plain";
        plain.protocols = {4};
        mds.exports.push_back(plain);
    };
    Cluster cluster(o);
    GaneshaServer& mds = cluster.mds();
    GuestVm vm(GuestOptions{.name = "bench-guest"});
    const std::string opts = "-o vers=4.2,addr=" + mds.address() +
                             ",clientaddr=10.0.2.15,port=" + std::to_string(mds.nfs_port());
    vm.must("mkdir -p /ff /plain && mount -t nfs4 " + opts + " " + mds.address() + ":/ff /ff && " +
            "mount -t nfs4 " + opts + " " + mds.address() + ":/plain /plain");
    // One file on each first: the device lookups and the first layout are not per-file costs.
    vm.must("echo warm > /ff/warm && echo warm > /plain/warm && sync");

    std::map<std::string, std::vector<Phases>> results;
    // Linux counts the operations of both mounts of one server together (one NFSv4 client):
    // only what the FLEXFILES rounds sent is summed.
    std::map<std::string, unsigned long> ff_ops;
    for (int r = 0; r < rounds; ++r) {
        // Alternate which export goes first, so neither always runs on a warmer machine.
        for (const char* dir : (r % 2 == 0) ? std::vector<const char*>{"/ff", "/plain"}
                                            : std::vector<const char*>{"/plain", "/ff"}) {
            const auto before = mount_op_counts(vm, "/ff");
            results[dir].push_back(run_round(vm, dir, files, r));
            if (std::string(dir) == "/ff")
                for (const auto& [op, calls] : mount_op_counts(vm, "/ff"))
                    ff_ops[op] += calls - (before.count(op) ? before.at(op) : 0);
            std::cerr << "round " << r << " " << dir << ": " << results[dir].back().creates
                      << " creates/s, " << results[dir].back().stats << " stats/s, "
                      << results[dir].back().removes << " removes/s\n";
        }
    }
    const double created = static_cast<double>(files) * rounds;
    const auto per_file = [&](const char* op) { return ff_ops[op] / created; };

    const auto med = [&](const std::string& dir, double Phases::*field) {
        std::vector<double> v;
        for (const auto& p : results[dir])
            v.push_back(p.*field);
        return median(v);
    };
    std::ostringstream md;
    md << std::fixed << std::setprecision(2);
    md << "| " << files << " files of 4 KiB, median of " << rounds
       << " rounds | FLEXFILES | plain VFS | FLEXFILES / VFS |\n|---|---:|---:|---:|\n";
    for (const auto& [name, field] : std::vector<std::pair<std::string, double Phases::*>>{
             {"creates/s (create, write, close)", &Phases::creates},
             {"stats/s (cold)", &Phases::stats},
             {"removes/s", &Phases::removes}}) {
        const double ff = med("/ff", field), plain = med("/plain", field);
        md << "| " << name << " | " << std::setprecision(0) << ff << " | " << plain << " | "
           << std::setprecision(2) << (plain > 0 ? ff / plain : 0) << " |\n";
    }
    md << "\n| operations the client sent per FLEXFILES file (create, stat, remove) | |\n"
          "|---|---:|\n";
    for (const char* op : {"GETDEVICEINFO", "LAYOUTGET", "OPEN", "LAYOUTCOMMIT", "LAYOUTRETURN",
                           "CLOSE", "GETATTR", "LOOKUP", "REMOVE"})
        md << "| " << op << " | " << std::setprecision(3) << per_file(op) << " |\n";
    std::ofstream(out + "/smallfiles.md") << md.str();

    std::ofstream dat(out + "/smallfiles.dat");
    dat << "# phase flexfiles plain\n";
    dat << "creates " << med("/ff", &Phases::creates) << ' ' << med("/plain", &Phases::creates)
        << '\n';
    dat << "stats " << med("/ff", &Phases::stats) << ' ' << med("/plain", &Phases::stats) << '\n';
    dat << "removes " << med("/ff", &Phases::removes) << ' ' << med("/plain", &Phases::removes)
        << '\n';
    std::cout << md.str();
    return 0;
}
