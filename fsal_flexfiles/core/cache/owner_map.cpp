// SPDX-License-Identifier: LGPL-3.0-or-later
#include "cache/owner_map.hpp"

#include "cache/xdr_reader.hpp"

#include <span>

namespace flexfiles::wcc {

std::optional<std::uint32_t> decimal_id(std::string_view s) {
    if (s.empty() || s.size() > 10 || (s.size() > 1 && s.front() == '0')) {
        return std::nullopt;
    }
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v > UINT32_MAX) {
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(v);
}

std::optional<std::uint32_t> OwnerMap::map(std::string_view s, bool group) {
    if (const auto id = decimal_id(s)) {
        return id;
    }
    auto& seen = seen_[group ? 1 : 0];
    std::optional<std::uint32_t> id;
    if (const auto it = seen.find(std::string(s)); it != seen.end()) {
        id = it->second;
    } else if (lookups_ >= max_lookups_) {
        over_bound_++;
    } else {
        lookups_++;
        id = lookup_ ? lookup_(s, group) : std::nullopt;
        seen.emplace(std::string(s), id);
    }
    if (!id) {
        unknown_++;
    }
    return id;
}

// ---------------------------------------------------------------------------------------
// Table 1 values as XDR

namespace {

constexpr std::uint32_t kMaxOwnerLen = 1024; // Ganesha's decode_owner bound

bool has_bit(const Fattr4View& f, std::uint32_t attr) {
    return (f.mask[attr / 32] >> (attr % 32)) & 1u;
}

} // namespace

BodyStatus decode_table1(const Fattr4View& f, Table1Values& out, std::string& why) {
    out = Table1Values{};
    XdrReader r(f.values);
    DsAttrs& a = out.attrs;
    auto short_values = [&why](const char* what) {
        why = std::string("fattr4 values end inside ") + what;
        return BodyStatus::BadXdr;
    };
    auto string = [&](const char* what, std::optional<std::string_view>& to) {
        std::uint32_t len = 0;
        if (!r.u32(len)) {
            return short_values(what);
        }
        if (len == 0 || len > kMaxOwnerLen) {
            why = std::string(what) + " of " + std::to_string(len) + " bytes";
            return BodyStatus::Inval;
        }
        std::span<const std::uint8_t> s;
        if (!r.opaque(len, s)) {
            return short_values(what);
        }
        to = std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
        return BodyStatus::Ok;
    };
    auto time = [&](const char* what, NfsTime& to, std::uint16_t bit) {
        std::uint64_t sec = 0;
        std::uint32_t nsec = 0;
        if (!r.u64(sec) || !r.u32(nsec)) {
            return short_values(what);
        }
        const auto t = NfsTime::from_parts(static_cast<std::int64_t>(sec), nsec);
        if (!t) {
            why = std::string(what) + " outside what the server can represent";
            return BodyStatus::Inval;
        }
        to = *t;
        a.valid |= bit;
        return BodyStatus::Ok;
    };
    BodyStatus st = BodyStatus::Ok;
    if (has_bit(f, kFattr4Size)) {
        if (!r.u64(a.size)) {
            return short_values("size");
        }
        a.valid |= kAttrSize;
    }
    if (has_bit(f, kFattr4Mode)) {
        if (!r.u32(a.mode)) {
            return short_values("mode");
        }
        a.mode &= 07777u;
        a.valid |= kAttrMode;
    }
    if (has_bit(f, kFattr4Owner) && (st = string("owner", out.owner)) != BodyStatus::Ok) {
        return st;
    }
    if (has_bit(f, kFattr4OwnerGroup) &&
        (st = string("owner_group", out.owner_group)) != BodyStatus::Ok) {
        return st;
    }
    if (has_bit(f, kFattr4SpaceUsed)) {
        if (!r.u64(a.space_used)) {
            return short_values("space_used");
        }
        a.valid |= kAttrSpaceUsed;
    }
    if (has_bit(f, kFattr4TimeAccess) &&
        (st = time("time_access", a.atime, kAttrAtime)) != BodyStatus::Ok) {
        return st;
    }
    if (has_bit(f, kFattr4TimeMetadata) &&
        (st = time("time_metadata", a.ctime, kAttrCtime)) != BodyStatus::Ok) {
        return st;
    }
    if (has_bit(f, kFattr4TimeModify) &&
        (st = time("time_modify", a.mtime, kAttrMtime)) != BodyStatus::Ok) {
        return st;
    }
    if (!r.done()) {
        why = "bytes after the last attribute's value";
        return BodyStatus::BadXdr;
    }
    return BodyStatus::Ok;
}

AttrDecoder table1_decoder(OwnerMap& owners) {
    return [&owners](const Fattr4View& f, DsAttrs& out, std::string& why) {
        Table1Values v;
        const BodyStatus st = decode_table1(f, v, why);
        if (st != BodyStatus::Ok) {
            return st;
        }
        out = v.attrs;
        if (v.owner) {
            if (const auto id = owners.map(*v.owner, false)) {
                out.uid = *id;
                out.valid |= kAttrOwner;
            }
        }
        if (v.owner_group) {
            if (const auto id = owners.map(*v.owner_group, true)) {
                out.gid = *id;
                out.valid |= kAttrGroup;
            }
        }
        return BodyStatus::Ok;
    };
}

} // namespace flexfiles::wcc
