// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Names of data files on the data servers. Every data file lives in the root of its data
// server's export and is named after the MDS file it belongs to and its mirror index:
//
//   ff-<fileid: 16 lowercase hex digits>-m<mirror: decimal, no leading zeros>
//
// e.g. MDS fileid 0x4d2, mirror 1 -> "ff-00000000000004d2-m1". An operator who knows a file's
// inode number on the MDS (ls -i, or the fileid attribute) can find its data files with
// `ls <export>/ff-$(printf %016x INODE)-m*` on each data server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flexfiles::fleet {

struct DataFileName {
    std::uint64_t fileid = 0;
    std::uint32_t mirror = 0;
    friend bool operator==(const DataFileName&, const DataFileName&) = default;
};

std::string data_file_name(std::uint64_t fileid, std::uint32_t mirror);

// Inverse of data_file_name; std::nullopt for anything it would not have produced.
std::optional<DataFileName> parse_data_file_name(std::string_view name) noexcept;

} // namespace flexfiles::fleet
