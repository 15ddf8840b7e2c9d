// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A file's data-file map as text: the value of the extended attribute that keeps it on the
// namespace object itself when several MDSs serve one namespace (Map_In_Namespace, e.g. a
// CephFS: docs/scale-out.md), so that whichever MDS a client asks finds the file's data
// files. Text, so that an operator reads it with `getfattr -n user.flexfiles.map`:
//
//   flexfiles-map 1
//   file 1234 stripe_unit 1048576
//   mirror 0 ds 3 deviceid 0103000000000000... uid 20001 gid 20001 fh 01a2... name ff-...-m0
//   mirror 1 ds 5 ...
//
// One "mirror" line per data file, in mirror order (0, 1, ...), every field present, each
// line ending in '\n'. Numbers are decimal; deviceid (16 bytes) and fh (1..64 bytes, an
// NFSv3 filehandle) lowercase hex; names what model/naming.hpp makes (either form). The
// parser accepts exactly what the encoder writes: anything else (another version, a field
// out of place, trailing bytes) is refused with the reason, never half-read.
#pragma once

#include "model/data_files.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace flexfiles::mds {

// The extended attribute's name as the NFSv4.2 xattr operations (RFC 8276) and Ganesha's
// FSAL xattr calls spell it (no namespace: FSAL_CEPH adds "user.").
inline constexpr std::string_view kMapXattrName = "flexfiles.map";
// Names in this namespace are the MDS's own: clients neither see nor change them.
inline constexpr std::string_view kReservedXattrPrefix = "flexfiles.";
bool is_reserved_xattr_name(std::string_view name) noexcept;

// The most data files a map may have (the parser refuses more; Mirrors is far lower).
inline constexpr std::size_t kMaxMapTextDataFiles = 64;

std::string encode_map_text(const DataFileMap& map);

struct ParsedMapText {
    std::optional<DataFileMap> map; // set when the text is a valid map
    std::string error;              // otherwise why not (the line and the field)
};
ParsedMapText parse_map_text(std::string_view text);

} // namespace flexfiles::mds
