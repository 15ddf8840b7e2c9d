// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What share of a server process's CPU went to a function and everything it calls, from
// perf's sampling profile (Debian's linux-perf): perf record with DWARF call chains on the
// process while a benchmark cell runs, then perf report --children. A benchmark multiplies
// a share by the process's CPU per operation to say what one step of the operation costs,
// where a difference between two cells would also carry everything the cells do not share.
// perf is optional: without it the benchmarks leave these figures out and say so.
#pragma once

#include "ff_harness/dbus_daemon.hpp"
#include "ff_harness/process.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace bench {

inline const char* const kPerf = "/usr/bin/perf";

// Whether perf is installed and may sample other processes here.
inline bool perf_available() {
    if (::access(kPerf, X_OK) != 0)
        return false;
    return flexfiles::harness::run_command({kPerf, "--version"}).ok();
}

class PerfRecording {
public:
    // Samples `pid` at `hz` with DWARF call chains of `stack_bytes` (deep enough for
    // Ganesha's worker stacks: with 8 KiB, frames under a large local array lose their
    // callers) into `file`. Returns once perf has had time to attach.
    PerfRecording(pid_t pid, std::filesystem::path file, unsigned hz = 999,
                  unsigned stack_bytes = 32768)
        : file_(std::move(file)) {
        flexfiles::harness::SpawnOptions o;
        o.argv = {kPerf,
                  "record",
                  "-q",
                  "-F",
                  std::to_string(hz),
                  "--call-graph",
                  "dwarf," + std::to_string(stack_bytes),
                  "-p",
                  std::to_string(pid),
                  "-o",
                  file_.string()};
        o.output = file_.string() + ".log";
        perf_ = flexfiles::harness::ChildProcess(o);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }

    // Stops perf (SIGINT, as ^C: it then writes the file and ends with status 130 or by
    // the signal) and waits for it; false if it wrote nothing.
    bool finish() {
        perf_.signal(SIGINT);
        if (!perf_.wait_for(std::chrono::seconds(60)))
            return false;
        std::error_code ec;
        const auto size = std::filesystem::file_size(file_, ec);
        return !ec && size > 0;
    }

    // For each symbol, the share (0..1) of the samples whose call chain holds it (perf
    // report's "children" column); a symbol never sampled is 0. Empty if perf report
    // failed.
    std::map<std::string, double> children_shares(const std::vector<std::string>& symbols) const {
        const flexfiles::harness::CommandResult r = flexfiles::harness::run_command(
            {kPerf, "report", "-i", file_.string(), "--children", "--sort", "sym", "-g", "none",
             "--stdio", "--percent-limit", "0"},
            {}, std::chrono::minutes(5));
        std::map<std::string, double> shares;
        if (!r.ok())
            return shares;
        for (const std::string& s : symbols)
            shares[s] = 0;
        static const std::regex kLine(R"(^\s*([0-9.]+)%\s+[0-9.]+%\s+\[.\]\s+(\S+)\s*$)");
        std::istringstream lines(r.output);
        std::string line;
        std::smatch m;
        while (std::getline(lines, line))
            if (std::regex_match(line, m, kLine) && shares.count(m[2]) != 0)
                shares[m[2]] = std::stod(m[1]) / 100.0;
        return shares;
    }

private:
    std::filesystem::path file_;
    flexfiles::harness::ChildProcess perf_;
};

} // namespace bench
