// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the end-to-end benchmarks share: progress lines, number formatting, and main()
// (servers under <build>/bench-work unless FF_TEST_WORK_ROOT says otherwise; a failure
// is one line on stderr and exit status 1).
#pragma once

#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

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
