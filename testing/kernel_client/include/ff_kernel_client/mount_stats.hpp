// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What a guest's kernel counts about its NFS mounts: per-operation calls from
// /proc/self/mountstats (the Linux flex-files client counts its data-server READs and
// WRITEs there too, under the MDS mount), and the NFSv3 calls it sent anywhere
// (/proc/net/rpc/nfs "proc3": with no NFSv3 mount, its traffic to the data servers).
#pragma once

#include "ff_kernel_client/guest_vm.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace flexfiles::kernel_client {

// Calls per operation ("OPEN", "LAYOUTGET", ...) of the mount at `dir`.
std::map<std::string, unsigned long> mount_op_counts(GuestVm& vm, const std::string& dir);
// The same, parsed from the text of /proc/self/mountstats.
std::map<std::string, unsigned long> parse_mount_op_counts(const std::string& mountstats,
                                                           const std::string& dir);

// The mountstats block of the mount at `dir` ("pnfs=LAYOUT_FLEX_FILES" once layouts are used).
std::string mount_stats_block(GuestVm& vm, const std::string& dir);

// NFSv3 calls by procedure number (index 6 READ, 7 WRITE, 21 COMMIT).
std::vector<unsigned long> guest_nfs3_calls(GuestVm& vm);
constexpr std::size_t kNfs3Read = 6;
constexpr std::size_t kNfs3Write = 7;
constexpr std::size_t kNfs3Commit = 21;

} // namespace flexfiles::kernel_client
