// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_kernel_client/mount_stats.hpp"

#include <sstream>

namespace flexfiles::kernel_client {

std::map<std::string, unsigned long> parse_mount_op_counts(const std::string& mountstats,
                                                           const std::string& dir) {
    std::map<std::string, unsigned long> out;
    std::istringstream in(mountstats);
    bool ours = false, ops = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("device ", 0) == 0) {
            ours = line.find(" mounted on " + dir + " ") != std::string::npos;
            ops = false;
            continue;
        }
        if (!ours)
            continue;
        if (line.find("per-op statistics") != std::string::npos) {
            ops = true;
            continue;
        }
        const auto colon = line.find(':');
        if (!ops || colon == std::string::npos)
            continue;
        std::istringstream name_in(line.substr(0, colon));
        std::string name;
        name_in >> name;
        std::istringstream values(line.substr(colon + 1));
        unsigned long calls = 0;
        if (values >> calls)
            out[name] = calls;
    }
    return out;
}

std::map<std::string, unsigned long> mount_op_counts(GuestVm& vm, const std::string& dir) {
    return parse_mount_op_counts(vm.must("cat /proc/self/mountstats"), dir);
}

std::string mount_stats_block(GuestVm& vm, const std::string& dir) {
    return vm.must("awk '/^device /{p = index($0, \" mounted on " + dir +
                   " \") > 0} p' /proc/self/mountstats");
}

std::vector<unsigned long> guest_nfs3_calls(GuestVm& vm) {
    std::istringstream in(vm.must("grep '^proc3 ' /proc/net/rpc/nfs || true"));
    std::string tag;
    unsigned long procedures = 0;
    in >> tag >> procedures;
    std::vector<unsigned long> out;
    for (unsigned long v; in >> v;)
        out.push_back(v);
    return out;
}

} // namespace flexfiles::kernel_client
