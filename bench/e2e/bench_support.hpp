// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the end-to-end benchmarks share: progress lines, number formatting, CPU time of
// processes, and main() (servers under <build>/bench-work unless FF_TEST_WORK_ROOT says
// otherwise; a failure is one line on stderr and exit status 1).
#pragma once

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
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

// CPU seconds (user + system) a process has used: /proc/<pid>/stat fields 14 and 15, in
// clock ticks (10 ms here). 0 when the process is gone.
inline double process_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos)
        return 0;
    // The command name (field 2) may hold spaces: count fields after its closing ')'.
    std::istringstream rest(stat.substr(paren + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i)
        if (i >= 14)
            ticks += std::stod(field);
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// This process's CPU seconds (every thread).
inline double self_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return s(ru.ru_utime) + s(ru.ru_stime);
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
