// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Names of NFSv4.1 values that the FSAL's log lines and the tools' traces both print.
// Plain numbers here (no protocol header below the FSAL layer); users that have Ganesha's
// nfsv41.h tie them to its constants with static_asserts.
#pragma once

#include <cstdint>
#include <string>

namespace flexfiles::nfs4 {

// layoutiomode4 (RFC 8881 section 3.3.20).
inline constexpr std::uint32_t kIomodeRead = 1;
inline constexpr std::uint32_t kIomodeRw = 2;
inline constexpr std::uint32_t kIomodeAny = 3;

// "READ", "RW", "ANY" ("iomode 7" for an unknown value).
std::string iomode_name(std::uint32_t iomode);

} // namespace flexfiles::nfs4
