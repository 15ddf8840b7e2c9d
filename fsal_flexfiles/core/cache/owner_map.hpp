// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The owner strings of one LAYOUT_WCC body (fattr4 owner / owner_group, RFC 9766 Table 1)
// mapped to ids, with a bound on the work one body can cause.
//
// Why: the strings name the data file's uid/gid on its data server, which the MDS compares
// with the fencing credentials it put in the layout (wcc_apply.hpp). A hostile body of 64 KiB
// carries ~700 distinct strings; mapped one idmapper lookup each (under the file's state
// lock, as before), each failure the anonymous uid, they cost a lookup, a "mismatch", an
// owner repair and a log line apiece.
//
// Rules
//   - A decimal string ("1000001", what clients send for ids without a name, and what the
//     layouts' synthetic fencing ids are) is that id: no lookup. Leading zeros, signs,
//     spaces and values above 2^32 - 1 are not decimal ids.
//   - Anything else is a name, looked up through `lookup` (the FSAL passes Ganesha's
//     idmapper), at most `max_lookups` distinct names per body; later distinct names are
//     unknown without a lookup. Each distinct string is mapped once per body (owners and
//     groups separately): repeating it costs nothing.
//   - A name the lookup cannot map is unknown, never the anonymous id. Unknown owners are
//     left out of the report (no kAttrOwner / kAttrGroup): never a mismatch, never a
//     repair; counted (WccCounters::kOwnersUnknown).
//   - Nothing is mapped under a lock of ours: the FSAL maps before it takes the state lock.
#pragma once

#include "cache/wcc_body.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace flexfiles::wcc {

/// Distinct names one body may have looked up. An honest body names at most two strings
/// per data file of the layout (mirrors x data servers), nearly always decimal ids.
inline constexpr std::size_t kMaxOwnerLookupsPerBody = 8;

/// The id a decimal owner string stands for, or nullopt when it is not one.
std::optional<std::uint32_t> decimal_id(std::string_view s);

class OwnerMap {
public:
    /// Maps a name (not a decimal id) to an id; nullopt when it cannot.
    using Lookup = std::function<std::optional<std::uint32_t>(std::string_view name, bool group)>;

    explicit OwnerMap(Lookup lookup, std::size_t max_lookups = kMaxOwnerLookupsPerBody)
        : lookup_(std::move(lookup)), max_lookups_(max_lookups) {}

    /// The id of an owner (group = false) or owner_group string; nullopt: unknown.
    std::optional<std::uint32_t> map(std::string_view s, bool group);

    std::size_t lookups() const { return lookups_; }       // calls of `lookup`
    std::size_t unknown() const { return unknown_; }       // map() calls that answered nullopt
    std::size_t over_bound() const { return over_bound_; } // of those, past max_lookups

private:
    Lookup lookup_;
    std::size_t max_lookups_;
    std::unordered_map<std::string, std::optional<std::uint32_t>> seen_[2]; // owners, groups
    std::size_t lookups_ = 0;
    std::size_t unknown_ = 0;
    std::size_t over_bound_ = 0;
};

/// The values of one ffdsw_attributes whose mask is within Table 1, decoded as XDR in
/// attribute order: attrs without owner/group (their valid bits unset), the two strings as
/// views into the body. Short or trailing bytes: BadXdr; nseconds >= 1e9, a time outside
/// NfsTime, an owner string of length 0 or over 1024: Inval (Ganesha's SETATTR decoder
/// answers the same).
struct Table1Values {
    DsAttrs attrs;
    std::optional<std::string_view> owner;
    std::optional<std::string_view> owner_group;
};
BodyStatus decode_table1(const Fattr4View& f, Table1Values& out, std::string& why);

/// decode_table1, then the owner strings through `owners`: what validate_entries calls per
/// entry. `owners` must outlive the decoder.
AttrDecoder table1_decoder(OwnerMap& owners);

} // namespace flexfiles::wcc
