// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An ff_layout_wcc4 body (RFC 9766 section 3.7) between the XDR decoder and the attribute
// cache: the entries as views into the decoded body, their validation, and the mapping of
// each entry to a data file of the layout by the triple (deviceid, stateid, filehandle).
//
// Pure C++ (no Ganesha header): the XDR decode (ff_layout_wcc4_decode) and the fattr4
// values (Ganesha's nfs4_Fattr_To_FSAL_attr, owner strings through its idmapper) are done
// by the caller, the latter behind AttrDecoder so that tests can stand in for it.
//
// Rules
//   - Validation comes first and covers every entry: an attribute bit outside RFC 9766
//     Table 1 makes the whole operation NFS4ERR_INVAL (the XDR was well formed, the request
//     is not); values that do not decode make it NFS4ERR_BADXDR (or what the decoder says,
//     e.g. NFS4ERR_INVAL for nseconds >= 1e9 or an owner string that maps to no id). Only a
//     body whose every entry validated is applied: all or nothing.
//   - An entry with an empty attribute mask is valid and carries nothing (a client may send
//     every mirror and leave unchanged ones empty); it is skipped, not matched.
//   - The triple names a data file when the deviceid equals the data file's deviceid, the
//     stateid equals the ffds_stateid the layout gave it (the anonymous stateid, all 16
//     bytes compared, see mds/data_files.hpp), and one of ffdsw_fh_vers equals the data
//     file's NFSv3 filehandle byte for byte. All three are required; position in the body
//     is never used. An entry that names no data file of this file's layout is ignored and
//     counted, never applied to another data file.
#pragma once

#include "cache/attr_cache.hpp"
#include "cache/ds_attrs.hpp"
#include "model/data_files.hpp"
#include "model/deviceid.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace flexfiles::wcc {

/// stateid4: seqid, then the 12 opaque bytes.
struct Stateid {
    std::uint32_t seqid = 0;
    std::array<std::uint8_t, 12> other{};
    bool operator==(const Stateid&) const = default;
};

/// The ffds_stateid of every data file in our layouts (loosely coupled NFSv3 data servers).
inline constexpr Stateid kAnonymousStateid{};

/// The stateid the layout gave a data file (one place to change if that ever differs).
inline Stateid layout_stateid_of(const mds::DataFile&) {
    return kAnonymousStateid;
}

/// ffdsw_attributes before its values are decoded: the bitmap words Ganesha keeps (its
/// decoder drops words past BITMAP4_MAPLEN = 3) and the value bytes.
struct Fattr4View {
    static constexpr std::size_t kWords = 3;
    std::array<std::uint32_t, kWords> mask{};
    std::span<const std::uint8_t> values;

    bool empty() const { return mask[0] == 0 && mask[1] == 0 && mask[2] == 0; }
};

/// Attribute numbers of RFC 9766 Table 1 and their bitmap words.
inline constexpr std::uint32_t kFattr4Size = 4;
inline constexpr std::uint32_t kFattr4Mode = 33;
inline constexpr std::uint32_t kFattr4Owner = 36;
inline constexpr std::uint32_t kFattr4OwnerGroup = 37;
inline constexpr std::uint32_t kFattr4SpaceUsed = 45;
inline constexpr std::uint32_t kFattr4TimeAccess = 47;
inline constexpr std::uint32_t kFattr4TimeMetadata = 52;
inline constexpr std::uint32_t kFattr4TimeModify = 53;
inline constexpr std::array<std::uint32_t, Fattr4View::kWords> kTable1Mask{
    1u << kFattr4Size,
    1u << (kFattr4Mode - 32) | 1u << (kFattr4Owner - 32) | 1u << (kFattr4OwnerGroup - 32) |
        1u << (kFattr4SpaceUsed - 32) | 1u << (kFattr4TimeAccess - 32) |
        1u << (kFattr4TimeMetadata - 32) | 1u << (kFattr4TimeModify - 32),
    0};

/// True when the mask names Table 1 attributes only (an empty mask is fine).
bool attrmask_is_table1(const Fattr4View& attrs);

/// One ff_data_server_wcc4, pointing into the decoded body (which must outlive it).
struct BodyEntry {
    std::uint32_t mirror_pos = 0; // index in fflw_mirrors, for log lines only
    std::uint32_t ds_pos = 0;     // index in ffmw_data_servers, for log lines only
    fleet::DeviceId deviceid{};
    Stateid stateid;
    std::pmr::vector<std::span<const std::uint8_t>> fhs; // ffdsw_fh_vers
    Fattr4View attributes;
};

/// Status of a body, in the NFSv4 terms the operation answers with.
enum class BodyStatus : std::uint8_t {
    Ok,
    BadXdr, // NFS4ERR_BADXDR
    Inval,  // NFS4ERR_INVAL
};
const char* to_string(BodyStatus s);

/// Decodes the values of one entry's attributes (only called for a Table 1 mask that is
/// not empty) into the cache's DsAttrs, setting `valid` for what it decoded. On failure it
/// returns BadXdr or Inval and may say why.
using AttrDecoder =
    std::function<BodyStatus(const Fattr4View& attrs, DsAttrs& out, std::string& why)>;

/// Every entry checked and decoded, in body order.
struct Validation {
    BodyStatus status = BodyStatus::Ok;
    std::size_t bad_entry = 0;       // the first entry that failed, when status != Ok
    std::string why;                 // for the log line
    std::pmr::vector<DsAttrs> attrs; // one per entry when Ok (valid == 0 for an empty mask)
};

/// Checks the mask of every entry against Table 1, then decodes every value. Stops at the
/// first failure; nothing is applied anywhere. The vectors of the answer take their memory
/// from `mr` (LAYOUT_WCC passes a per-operation arena on its stack: no heap on that path).
Validation validate_entries(std::span<const BodyEntry> entries, const AttrDecoder& decode,
                            std::pmr::memory_resource* mr = std::pmr::get_default_resource());

/// Index in map.files of the data file the entry's triple names, or nullopt. With
/// `layout`, only data files the caller's layout names (same deviceid and filehandle) count:
/// a report can only ever touch the data files of the layout it came with.
std::optional<std::size_t> match_data_file(const mds::DataFileMap& map, const BodyEntry& entry,
                                           const mds::DataFileMap* layout = nullptr);

/// What the body amounts to for the cache.
struct Resolution {
    explicit Resolution(std::pmr::memory_resource* mr = std::pmr::get_default_resource())
        : reports(mr), entry_of_report(mr), data_file_of_report(mr) {}
    std::pmr::vector<WccReport> reports;           // the non-empty entries, body order
    std::pmr::vector<std::size_t> entry_of_report; // reports[i] came from entries[that]
    std::pmr::vector<std::optional<std::size_t>> data_file_of_report; // index in map.files
    std::uint32_t empty = 0;     // entries with an empty mask (skipped)
    std::uint32_t unmatched = 0; // non-empty entries whose triple named no data file
};

/// Maps validated entries (attrs from validate_entries) to the file's data files (and their
/// cache keys, mds::cache_key), restricted to those `layout` names when given. The
/// answer's vectors take their memory from `mr`.
Resolution resolve_entries(const mds::DataFileMap& map, std::span<const BodyEntry> entries,
                           std::span<const DsAttrs> attrs, const mds::DataFileMap* layout = nullptr,
                           std::pmr::memory_resource* mr = std::pmr::get_default_resource());

} // namespace flexfiles::wcc
