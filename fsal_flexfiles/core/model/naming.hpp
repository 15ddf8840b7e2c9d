// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Names of data files on the data servers. Every data file lives in the root of its data
// server's export and is named after the export that made it (its identity), the MDS file
// it belongs to and its mirror index:
//
//   ff-<identity: 16 lowercase hex>-<fileid: 16 lowercase hex>-m<mirror: decimal, no leading 0>
//
// e.g. identity 0x9f3c...e1, MDS fileid 0x4d2, mirror 1 ->
// "ff-9f3c0a7b5d2e44e1-00000000000004d2-m1".
//
// The identity is a random 64-bit number the export's layout store draws once, when it is
// first opened, and keeps for ever (store/layout_store.hpp; `ganesha-ff exports` and the
// MDS log at start show it). Fileids are unique only within one namespace: two exports (of
// one MDS or of two) whose namespaces hand out the same fileids (two fresh tmpfs, two
// copies of one file system) and that share a data-server export would otherwise make the
// same names and destroy each other's data files. With the identity in the name they
// cannot, and the reaper can tell from a name alone whether a data file is its own.
//
// Why a prefix in the name and not a folder per export on the data server: the data files
// stay in the export root, so every data-server operation (CREATE, LOOKUP, REMOVE by name)
// and the data-server configuration stay as they are; there is no folder to create, own,
// race another MDS for, or find missing after a data server was re-initialised; and one
// `ls` of the data-server export still lists everything, each name saying whose it is.
// An operator who knows a file's inode number on the MDS (ls -i, or the fileid attribute)
// finds its data files with `ls <export>/ff-*-$(printf %016x INODE)-m*` on each data server
// (`ff-<identity>-...` for one export's only).
//
// The old form, without an identity, "ff-<fileid: 16 hex>-m<mirror>", is what stores made
// before identities hold for their files (the store records every data file's name, so
// those keep their names: nothing is renamed). New data files always get the new form;
// parse_data_file_name accepts both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flexfiles::fleet {

struct DataFileName {
    std::optional<std::uint64_t> identity; // std::nullopt: the old form, no identity
    std::uint64_t fileid = 0;
    std::uint32_t mirror = 0;
    friend bool operator==(const DataFileName&, const DataFileName&) = default;
};

// The name a new data file gets.
std::string data_file_name(std::uint64_t identity, std::uint64_t fileid, std::uint32_t mirror);
// The old form (no identity), for reading names of stores made before identities.
std::string legacy_data_file_name(std::uint64_t fileid, std::uint32_t mirror);

// Inverse of both; std::nullopt for anything neither would have produced.
std::optional<DataFileName> parse_data_file_name(std::string_view name) noexcept;

// An identity as names and tools show it: 16 lowercase hex digits.
std::string identity_hex(std::uint64_t identity);
// Inverse of identity_hex (exactly 16 lowercase hex digits).
std::optional<std::uint64_t> parse_identity_hex(std::string_view text) noexcept;

} // namespace flexfiles::fleet
