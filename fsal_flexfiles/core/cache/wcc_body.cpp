// SPDX-License-Identifier: LGPL-3.0-or-later
#include "cache/wcc_body.hpp"

#include <algorithm>

namespace flexfiles::wcc {

const char* to_string(BodyStatus s) {
    switch (s) {
    case BodyStatus::Ok:
        return "NFS4_OK";
    case BodyStatus::BadXdr:
        return "NFS4ERR_BADXDR";
    case BodyStatus::Inval:
        return "NFS4ERR_INVAL";
    }
    return "?";
}

bool attrmask_is_table1(const Fattr4View& attrs) {
    for (std::size_t i = 0; i < Fattr4View::kWords; ++i) {
        if ((attrs.mask[i] & ~kTable1Mask[i]) != 0) {
            return false;
        }
    }
    return true;
}

Validation validate_entries(std::span<const BodyEntry> entries, const AttrDecoder& decode,
                            std::pmr::memory_resource* mr) {
    Validation v{.status = BodyStatus::Ok,
                 .bad_entry = 0,
                 .why = {},
                 .attrs = std::pmr::vector<DsAttrs>(mr)};
    // Masks first: a request naming an attribute LAYOUT_WCC does not carry is refused
    // whole before any value is looked at.
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!attrmask_is_table1(entries[i].attributes)) {
            v.status = BodyStatus::Inval;
            v.bad_entry = i;
            v.why = "attribute outside RFC 9766 Table 1";
            return v;
        }
    }
    v.attrs.resize(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Fattr4View& a = entries[i].attributes;
        if (a.empty()) {
            if (!a.values.empty()) {
                v.status = BodyStatus::BadXdr;
                v.bad_entry = i;
                v.why = "values without attributes";
                v.attrs.clear();
                return v;
            }
            continue;
        }
        DsAttrs out;
        std::string why;
        const BodyStatus s = decode(a, out, why);
        if (s != BodyStatus::Ok) {
            v.status = s;
            v.bad_entry = i;
            v.why = why.empty() ? "attribute values do not decode" : std::move(why);
            v.attrs.clear();
            return v;
        }
        v.attrs[i] = out;
    }
    return v;
}

namespace {

bool same_data_file(const mds::DataFile& a, const mds::DataFile& b) {
    return a.deviceid == b.deviceid && a.fh == b.fh;
}

} // namespace

std::optional<std::size_t> match_data_file(const mds::DataFileMap& map, const BodyEntry& entry,
                                           const mds::DataFileMap* layout) {
    if (entry.fhs.empty()) {
        return std::nullopt; // the filehandle is required
    }
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        const mds::DataFile& df = map.files[i];
        if (df.deviceid != entry.deviceid || layout_stateid_of(df) != entry.stateid ||
            df.fh.empty()) {
            continue;
        }
        const bool fh_matches = std::any_of(entry.fhs.begin(), entry.fhs.end(),
                                            [&](auto fh) { return std::ranges::equal(fh, df.fh); });
        if (!fh_matches) {
            continue;
        }
        if (layout != nullptr &&
            std::none_of(layout->files.begin(), layout->files.end(),
                         [&](const mds::DataFile& l) { return same_data_file(l, df); })) {
            return std::nullopt; // a data file of the file, but not of the caller's layout
        }
        return i;
    }
    return std::nullopt;
}

Resolution resolve_entries(const mds::DataFileMap& map, std::span<const BodyEntry> entries,
                           std::span<const DsAttrs> attrs, const mds::DataFileMap* layout,
                           std::pmr::memory_resource* mr) {
    Resolution r(mr);
    const std::size_t n = std::min(entries.size(), attrs.size());
    r.reports.reserve(n);
    r.entry_of_report.reserve(n);
    r.data_file_of_report.reserve(n);
    for (std::size_t i = 0; i < entries.size() && i < attrs.size(); ++i) {
        if (entries[i].attributes.empty()) {
            r.empty++;
            continue;
        }
        WccReport rep;
        rep.attrs = attrs[i];
        const std::optional<std::size_t> df = match_data_file(map, entries[i], layout);
        if (df) {
            if (map.files[*df].mirror <= kMaxIndex) {
                rep.slot = mds::cache_key(map, map.files[*df]).slot;
            }
        }
        if (!rep.slot) {
            r.unmatched++;
        }
        r.reports.push_back(rep);
        r.entry_of_report.push_back(i);
        r.data_file_of_report.push_back(rep.slot ? df : std::nullopt);
    }
    return r;
}

} // namespace flexfiles::wcc
