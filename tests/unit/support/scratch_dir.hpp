// SPDX-License-Identifier: LGPL-3.0-or-later
// A scratch folder for one test binary: <tmp>/<prefix>-<pid>, emptied and created at first
// use, the same folder for every later call in the process.
#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

inline std::filesystem::path scratch_dir(const std::string& prefix) {
    static const std::filesystem::path dir = [&] {
        auto d = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()));
        std::filesystem::remove_all(d);
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}
