// SPDX-License-Identifier: LGPL-3.0-or-later
//
// NFSv4 attributes (fattr4): a bitmap plus the XDR-encoded values in attribute order.
//
// Fattr holds the attributes this client understands, each as an optional. One table
// (attrs.cpp) gives every supported attribute its number, name, XDR routine and printer;
// decode_fattr4, encode_fattr4 and format_attr are loops over that table. An attribute
// missing from the table cannot be skipped (its length is unknown), so decoding a reply
// that carries one fails with an XdrError naming it.
#pragma once

#include "nfs4_xdr.hpp"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace flexfiles::client {

// A set of attribute numbers (bitmap4), up to 32 * BITMAP4_MAPLEN.
class AttrMask {
public:
    static constexpr uint32_t kMaxAttr = 32 * BITMAP4_MAPLEN;

    AttrMask() = default;
    AttrMask(std::initializer_list<uint32_t> attrs);

    AttrMask& set(uint32_t attr);
    bool test(uint32_t attr) const;
    bool empty() const;
    std::vector<uint32_t> list() const;
    std::string describe() const; // "{type,size,mode}"

    bitmap4 to_bitmap4() const;
    static AttrMask from_bitmap4(const bitmap4& b);

    bool operator==(const AttrMask&) const = default;

private:
    std::array<uint32_t, BITMAP4_MAPLEN> words_{};
};

struct NfsTime {
    int64_t seconds = 0;
    uint32_t nseconds = 0;
    bool operator==(const NfsTime&) const = default;
};

// settime4: the server's clock, or the given time.
struct SetTime {
    bool to_client_time = false;
    NfsTime time;
    bool operator==(const SetTime&) const = default;
};

struct Fsid {
    uint64_t major = 0;
    uint64_t minor = 0;
    bool operator==(const Fsid&) const = default;
};

struct SpecData {
    uint32_t major = 0;
    uint32_t minor = 0;
    bool operator==(const SpecData&) const = default;
};

struct Fattr {
    std::optional<AttrMask> supported_attrs;              // 0
    std::optional<uint32_t> type;                         // 1, nfs_ftype4
    std::optional<uint32_t> fh_expire_type;               // 2
    std::optional<uint64_t> change;                       // 3
    std::optional<uint64_t> size;                         // 4
    std::optional<bool> link_support;                     // 5
    std::optional<bool> symlink_support;                  // 6
    std::optional<bool> named_attr;                       // 7
    std::optional<Fsid> fsid;                             // 8
    std::optional<bool> unique_handles;                   // 9
    std::optional<uint32_t> lease_time;                   // 10
    std::optional<uint32_t> rdattr_error;                 // 11, nfsstat4
    std::optional<uint32_t> aclsupport;                   // 13
    std::optional<bool> cansettime;                       // 15
    std::optional<bool> case_insensitive;                 // 16
    std::optional<bool> case_preserving;                  // 17
    std::optional<bool> chown_restricted;                 // 18
    std::optional<std::vector<char>> filehandle;          // 19
    std::optional<uint64_t> fileid;                       // 20
    std::optional<uint64_t> files_avail;                  // 21
    std::optional<uint64_t> files_free;                   // 22
    std::optional<uint64_t> files_total;                  // 23
    std::optional<bool> homogeneous;                      // 26
    std::optional<uint64_t> maxfilesize;                  // 27
    std::optional<uint32_t> maxlink;                      // 28
    std::optional<uint32_t> maxname;                      // 29
    std::optional<uint64_t> maxread;                      // 30
    std::optional<uint64_t> maxwrite;                     // 31
    std::optional<uint32_t> mode;                         // 33, permission bits only (mode4)
    std::optional<bool> no_trunc;                         // 34
    std::optional<uint32_t> numlinks;                     // 35
    std::optional<std::string> owner;                     // 36
    std::optional<std::string> owner_group;               // 37
    std::optional<SpecData> rawdev;                       // 41
    std::optional<uint64_t> space_avail;                  // 42
    std::optional<uint64_t> space_free;                   // 43
    std::optional<uint64_t> space_total;                  // 44
    std::optional<uint64_t> space_used;                   // 45
    std::optional<NfsTime> time_access;                   // 47
    std::optional<SetTime> time_access_set;               // 48, write-only
    std::optional<NfsTime> time_create;                   // 50
    std::optional<NfsTime> time_delta;                    // 51
    std::optional<NfsTime> time_metadata;                 // 52
    std::optional<NfsTime> time_modify;                   // 53
    std::optional<SetTime> time_modify_set;               // 54, write-only
    std::optional<uint64_t> mounted_on_fileid;            // 55
    std::optional<std::vector<uint32_t>> fs_layout_types; // 62
    std::optional<std::vector<uint32_t>> layout_types;    // 64
    std::optional<uint32_t> layout_blksize;               // 65
    std::optional<uint32_t> layout_alignment;             // 66
    std::optional<AttrMask> suppattr_exclcreat;           // 75

    // The attributes that are set.
    AttrMask mask() const;
};

// fattr4 with storage for its values (what SETATTR, OPEN createattrs and the
// LAYOUT_WCC body need). view() points into this object: keep it alive while used.
struct EncodedFattr {
    AttrMask mask;
    std::vector<char> values;
    fattr4 view() const;
};

// Throws XdrError naming the attribute that could not be decoded.
Fattr decode_fattr4(const fattr4& raw);
Fattr decode_fattr4(const AttrMask& mask, const char* values, std::size_t len);
// Throws XdrError if a set attribute cannot be encoded.
EncodedFattr encode_fattr4(const Fattr& attrs);

// "size", "time_modify", ...; "attr_80" for one outside the table.
std::string attr_name(uint32_t attr);
bool attr_supported(uint32_t attr);
// The value of one set attribute as text ("0644", "NF4REG", "1700000000.000000001").
std::string format_attr(uint32_t attr, const Fattr& attrs);
// Every set attribute, "name: value" per line, in attribute order.
std::string format_attrs(const Fattr& attrs, const std::string& indent = "");

// What `ff-client stat` asks for.
AttrMask stat_attrs();

std::string format_time(const NfsTime& t); // "1700000000.000000001 (2023-11-14T22:13:20Z)"
const char* ftype_name(uint32_t type);     // "NF4REG", ...

} // namespace flexfiles::client
