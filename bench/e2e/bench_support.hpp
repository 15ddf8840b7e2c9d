// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the end-to-end benchmarks share: progress lines, number formatting, CPU time of
// processes, a plain client's session, and main() (servers under <build>/bench-work unless
// FF_TEST_WORK_ROOT says otherwise; a failure is one line on stderr and exit status 1).
#pragma once

#include "client/session.hpp"
#include "ff_harness/ganesha_server.hpp"

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

namespace bench {

// The tool's name, for its progress lines (each benchmark defines it).
extern const char* const kTool;

inline void progress(const std::string& line) {
    std::cerr << "[" << kTool << "] " << line << std::endl;
}

inline std::string fmt(double v, int digits = 0) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(digits) << v;
    return o.str();
}

// CPU seconds a process has used, every thread's, those that ended included: its CPU clock
// (clock_getcpuclockid), exact to the nanosecond where /proc/<pid>/stat counts 10 ms
// ticks. 0 when the process is gone.
inline double process_cpu_seconds(pid_t pid) {
    clockid_t clock;
    timespec t{};
    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &t) != 0)
        return 0;
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Context switches (voluntary + involuntary) of each thread of a process, by thread id,
// from /proc/<pid>/task/*/status: how often its threads slept and were woken.
inline std::map<std::string, std::uint64_t> thread_context_switches(pid_t pid) {
    std::map<std::string, std::uint64_t> out;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
        std::ifstream in(t.path() / "status");
        std::string line;
        std::uint64_t n = 0;
        while (std::getline(in, line))
            if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
                line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
                n += std::stoull(line.substr(line.find(':') + 1));
        out[t.path().filename().string()] = n;
    }
    return out;
}

// The switches between two readings: threads that ended meanwhile take their counts with
// them, so each thread is compared with itself (one that started counts from 0).
inline std::uint64_t context_switches_between(const std::map<std::string, std::uint64_t>& before,
                                              const std::map<std::string, std::uint64_t>& after) {
    std::uint64_t n = 0;
    for (const auto& [tid, v] : after) {
        const auto it = before.find(tid);
        const std::uint64_t b = it == before.end() ? 0 : it->second;
        n += v >= b ? v - b : 0;
    }
    return n;
}

// This process's CPU seconds (every thread).
inline double self_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

// The "--key value" pairs of a command line: on_option(key, value) for each, returning
// false for a key it does not know. A key without a value, or an unknown one, is an
// error (the unknown one's says `usage`).
template <class OnOption>
void for_each_option(int argc, char** argv, const std::string& usage, OnOption on_option) {
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        if (i + 1 >= argc)
            throw std::invalid_argument(key + " needs a value");
        if (!on_option(key, std::string(argv[++i])))
            throw std::invalid_argument(usage);
    }
}

// An NFSv4.1 session with `server` as a plain client: no layouts asked for.
inline std::unique_ptr<flexfiles::client::Session>
plain_session(const flexfiles::harness::GaneshaServer& server) {
    flexfiles::client::SessionOptions so;
    so.host = server.address();
    so.port = server.nfs_port();
    so.minor_version = 1;
    so.exchange_flags = 0;
    return flexfiles::client::Session::open(so);
}

// An option's value as a number, or an error that names the option.
inline unsigned long long number(const std::string& key, const std::string& value) {
    try {
        std::size_t used = 0;
        const unsigned long long n = std::stoull(value, &used);
        if (used == value.size())
            return n;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument(key + " needs a number, not \"" + value + "\"");
}

// A result file in dir (created if missing); throws when it cannot be written, so that a
// run never says it wrote what it did not.
inline std::ofstream output_file(const std::string& dir, const std::string& name) {
    std::filesystem::create_directories(dir);
    std::ofstream out(dir + "/" + name);
    if (!out)
        throw std::runtime_error("cannot write " + dir + "/" + name);
    return out;
}

template <class Parse, class Run> int main_of(int argc, char** argv, Parse parse, Run run) {
    try {
        const auto args = parse(argc, argv);
        if (std::getenv("FF_TEST_WORK_ROOT") == nullptr)
            setenv("FF_TEST_WORK_ROOT", FF_BENCH_WORK_ROOT, 1);
        return run(args);
    } catch (const std::exception& e) {
        std::cerr << kTool << " failed: " << e.what() << "\n";
        return 1;
    }
}

} // namespace bench
