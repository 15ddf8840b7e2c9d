// SPDX-License-Identifier: LGPL-3.0-or-later
//
// read_wcc_body (wcc_body_reader.hpp): ff_layout_wcc4 read in place, with the bounds of
// protocols/'s XDR routines.
#include "pnfs/xdr/wcc_body_reader.hpp"

extern "C" {
#include "config.h"
#include "nfs4_layout_wcc_xdr.h"
}

#include "cache/xdr_reader.hpp"

namespace flexfiles::wcc {

namespace {

bool read_attributes(XdrReader& in, Fattr4View& attrs) {
    std::uint32_t words = 0;
    if (!in.count(words, FF_WCC4_BITMAP_WORDS_MAX))
        return false;
    for (std::uint32_t w = 0; w < words; ++w) {
        std::uint32_t word = 0;
        if (!in.u32(word))
            return false;
        if (w < Fattr4View::kWords)
            attrs.mask[w] = word;
    }
    return in.opaque(attrs.values, FF_WCC4_ATTR_VALS_MAX);
}

bool read_data_server(XdrReader& in, BodyEntry& e) {
    if (!in.fixed(e.deviceid) || !in.u32(e.stateid.seqid) || !in.fixed(e.stateid.other))
        return false;
    std::uint32_t fhs = 0;
    if (!in.count(fhs, FF_WCC4_FH_VERS_MAX))
        return false;
    e.fhs.resize(fhs);
    for (auto& fh : e.fhs)
        if (!in.opaque(fh, NFS4_FHSIZE))
            return false;
    return read_attributes(in, e.attributes);
}

} // namespace

std::optional<std::pmr::vector<BodyEntry>> read_wcc_body(std::span<const std::uint8_t> body,
                                                         std::pmr::memory_resource* mr) {
    if (body.size() > LAYOUT_WCC4_BODY_MAX)
        return std::nullopt;
    XdrReader in(body);
    std::pmr::vector<BodyEntry> out(mr);
    std::uint32_t mirrors = 0;
    if (!in.count(mirrors, FF_WCC4_MIRRORS_MAX))
        return std::nullopt;
    out.reserve(mirrors); // one data server per mirror is what clients send
    for (std::uint32_t m = 0; m < mirrors; ++m) {
        std::uint32_t servers = 0;
        if (!in.count(servers, FF_WCC4_DATA_SERVERS_MAX))
            return std::nullopt;
        for (std::uint32_t d = 0; d < servers; ++d) {
            BodyEntry& e = out.emplace_back(BodyEntry{.mirror_pos = m,
                                                      .ds_pos = d,
                                                      .deviceid = {},
                                                      .stateid = {},
                                                      .fhs = decltype(BodyEntry::fhs)(mr),
                                                      .attributes = {}});
            if (!read_data_server(in, e))
                return std::nullopt;
        }
    }
    if (!in.done())
        return std::nullopt;
    return out;
}

} // namespace flexfiles::wcc
