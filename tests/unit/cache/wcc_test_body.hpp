// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Test helpers: build ff_data_server_wcc4 entries (BodyEntry views over owned storage)
// and decode their attribute values with a small stand-in for Ganesha's fattr4 decoder
// (numeric owner strings only; the FSAL uses nfs4_Fattr_To_FSAL_attr and the idmapper).
#pragma once

#include "cache/wcc_body.hpp"
#include "cache/xdr_reader.hpp"
#include "model/data_files.hpp"

#include <charconv>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace wcctest {

using namespace flexfiles;
using namespace flexfiles::wcc;

struct Time {
    std::int64_t sec = 0;
    std::uint32_t nsec = 0;
};

// Attributes to encode; unset ones are left out of the mask. extra_bits adds raw mask bits
// (e.g. an attribute outside Table 1) without values.
struct Attrs {
    std::optional<std::uint64_t> size;
    std::optional<std::uint32_t> mode;
    std::optional<std::string> owner;
    std::optional<std::string> group;
    std::optional<std::uint64_t> used;
    std::optional<Time> atime;
    std::optional<Time> ctime;
    std::optional<Time> mtime;
    std::array<std::uint32_t, 3> extra_bits{};
    std::vector<std::uint8_t> trailing; // appended after the values
};

// What a WRITE reply's post-op attributes become: all of Table 1.
inline Attrs full(std::uint64_t size, std::int64_t ctime_s, std::uint32_t uid = 1000001,
                  std::uint32_t gid = 1000001, std::int64_t mtime_s = -1,
                  std::int64_t atime_s = -1) {
    Attrs a;
    a.size = size;
    a.mode = 0640;
    a.owner = std::to_string(uid);
    a.group = std::to_string(gid);
    a.used = (size + 4095) / 4096 * 4096;
    a.atime = Time{atime_s < 0 ? ctime_s : atime_s, 0};
    a.ctime = Time{ctime_s, 0};
    a.mtime = Time{mtime_s < 0 ? ctime_s : mtime_s, 0};
    return a;
}

inline void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
    for (int s = 24; s >= 0; s -= 8) {
        v.push_back(static_cast<std::uint8_t>(x >> s));
    }
}
inline void put64(std::vector<std::uint8_t>& v, std::uint64_t x) {
    put32(v, static_cast<std::uint32_t>(x >> 32));
    put32(v, static_cast<std::uint32_t>(x));
}
inline void put_string(std::vector<std::uint8_t>& v, const std::string& s) {
    put32(v, static_cast<std::uint32_t>(s.size()));
    v.insert(v.end(), s.begin(), s.end());
    while (v.size() % 4 != 0) {
        v.push_back(0);
    }
}
inline void put_time(std::vector<std::uint8_t>& v, Time t) {
    put64(v, static_cast<std::uint64_t>(t.sec));
    put32(v, t.nsec);
}

inline void set_bit(std::array<std::uint32_t, 3>& m, std::uint32_t attr) {
    m[attr / 32] |= 1u << (attr % 32);
}

// Owns the bytes every BodyEntry points into.
class Body {
public:
    // Adds an entry naming (deviceid, stateid, fhs) with attrs.
    BodyEntry& add(const fleet::DeviceId& dev, const std::vector<std::uint8_t>& fh, const Attrs& a,
                   Stateid stateid = kAnonymousStateid) {
        return add_fhs(dev, {fh}, a, stateid);
    }
    BodyEntry& add_fhs(const fleet::DeviceId& dev, std::vector<std::vector<std::uint8_t>> fhs,
                       const Attrs& a, Stateid stateid = kAnonymousStateid) {
        BodyEntry e;
        e.mirror_pos = static_cast<std::uint32_t>(entries.size());
        e.deviceid = dev;
        e.stateid = stateid;
        for (auto& fh : fhs) {
            e.fhs.emplace_back(store_.emplace_back(std::move(fh)));
        }
        auto& vals = store_.emplace_back();
        std::array<std::uint32_t, 3> mask = a.extra_bits;
        if (a.size) {
            set_bit(mask, kFattr4Size);
            put64(vals, *a.size);
        }
        if (a.mode) {
            set_bit(mask, kFattr4Mode);
            put32(vals, *a.mode);
        }
        if (a.owner) {
            set_bit(mask, kFattr4Owner);
            put_string(vals, *a.owner);
        }
        if (a.group) {
            set_bit(mask, kFattr4OwnerGroup);
            put_string(vals, *a.group);
        }
        if (a.used) {
            set_bit(mask, kFattr4SpaceUsed);
            put64(vals, *a.used);
        }
        if (a.atime) {
            set_bit(mask, kFattr4TimeAccess);
            put_time(vals, *a.atime);
        }
        if (a.ctime) {
            set_bit(mask, kFattr4TimeMetadata);
            put_time(vals, *a.ctime);
        }
        if (a.mtime) {
            set_bit(mask, kFattr4TimeModify);
            put_time(vals, *a.mtime);
        }
        vals.insert(vals.end(), a.trailing.begin(), a.trailing.end());
        e.attributes.mask = mask;
        e.attributes.values = vals;
        entries.push_back(std::move(e));
        return entries.back();
    }

    std::vector<BodyEntry> entries;

private:
    std::deque<std::vector<std::uint8_t>> store_; // stable addresses
};

// Stand-in for nfs4_Fattr_To_FSAL_attr: Table 1 values in attribute-number order.
inline BodyStatus test_decode(const Fattr4View& f, DsAttrs& out, std::string& why) {
    XdrReader r(f.values);
    auto has = [&](std::uint32_t attr) { return (f.mask[attr / 32] >> (attr % 32)) & 1u; };
    auto time = [&](NfsTime& t) -> BodyStatus {
        std::uint64_t s = 0;
        std::uint32_t ns = 0;
        if (!r.u64(s) || !r.u32(ns)) {
            return BodyStatus::BadXdr;
        }
        auto v = NfsTime::from_parts(static_cast<std::int64_t>(s), ns);
        if (!v) {
            why = "nseconds out of range";
            return BodyStatus::Inval;
        }
        t = *v;
        return BodyStatus::Ok;
    };
    auto id = [&](std::uint32_t& x) -> BodyStatus {
        std::span<const std::uint8_t> bytes;
        if (!r.opaque(bytes, UINT32_MAX)) {
            return BodyStatus::BadXdr;
        }
        const std::string s(bytes.begin(), bytes.end());
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (ec != std::errc{} || p != s.data() + s.size()) {
            why = "owner does not map";
            return BodyStatus::Inval;
        }
        return BodyStatus::Ok;
    };
    BodyStatus st = BodyStatus::Ok;
    if (has(kFattr4Size)) {
        if (!r.u64(out.size)) {
            return BodyStatus::BadXdr;
        }
        out.valid |= kAttrSize;
    }
    if (has(kFattr4Mode)) {
        if (!r.u32(out.mode)) {
            return BodyStatus::BadXdr;
        }
        out.valid |= kAttrMode;
    }
    if (has(kFattr4Owner)) {
        if ((st = id(out.uid)) != BodyStatus::Ok) {
            return st;
        }
        out.valid |= kAttrOwner;
    }
    if (has(kFattr4OwnerGroup)) {
        if ((st = id(out.gid)) != BodyStatus::Ok) {
            return st;
        }
        out.valid |= kAttrGroup;
    }
    if (has(kFattr4SpaceUsed)) {
        if (!r.u64(out.space_used)) {
            return BodyStatus::BadXdr;
        }
        out.valid |= kAttrSpaceUsed;
    }
    if (has(kFattr4TimeAccess)) {
        if ((st = time(out.atime)) != BodyStatus::Ok) {
            return st;
        }
        out.valid |= kAttrAtime;
    }
    if (has(kFattr4TimeMetadata)) {
        if ((st = time(out.ctime)) != BodyStatus::Ok) {
            return st;
        }
        out.valid |= kAttrCtime;
    }
    if (has(kFattr4TimeModify)) {
        if ((st = time(out.mtime)) != BodyStatus::Ok) {
            return st;
        }
        out.valid |= kAttrMtime;
    }
    if (!r.done()) {
        why = "bytes after the last attribute";
        return BodyStatus::BadXdr;
    }
    return BodyStatus::Ok;
}

// A DataFile on data server ds_id with filehandle fh.
inline mds::DataFile data_file(std::uint32_t mirror, std::uint64_t ds_id,
                               std::vector<std::uint8_t> fh, std::uint32_t uid = 1000001,
                               std::uint32_t gid = 1000001) {
    mds::DataFile df;
    df.mirror = mirror;
    df.ds_id = ds_id;
    df.deviceid = fleet::make_deviceid(ds_id);
    df.fh = std::move(fh);
    df.name = "df" + std::to_string(mirror);
    df.fencing_uid = uid;
    df.fencing_gid = gid;
    return df;
}

inline std::vector<std::uint8_t> fh_bytes(std::uint8_t tag, std::size_t len = 28) {
    std::vector<std::uint8_t> fh(len, 0xAB);
    fh[0] = tag;
    fh[len - 1] = tag;
    return fh;
}

} // namespace wcctest
