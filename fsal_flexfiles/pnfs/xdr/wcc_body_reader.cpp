// SPDX-License-Identifier: LGPL-3.0-or-later
//
// read_wcc_body (wcc_body_reader.hpp): ff_layout_wcc4 read in place, with the bounds of
// protocols/'s XDR routines.
#include "pnfs/xdr/wcc_body_reader.hpp"

extern "C" {
#include "config.h"
#include "nfs4_layout_wcc_xdr.h"
}

#include <algorithm>
#include <cstring>

namespace flexfiles::wcc {

namespace {

// XDR's units over one body: every read checks what is left, nothing reads past it.
class XdrCursor {
public:
    explicit XdrCursor(std::span<const std::uint8_t> bytes) : rest_(bytes) {}

    bool u32(std::uint32_t& v) {
        if (rest_.size() < 4)
            return false;
        v = std::uint32_t{rest_[0]} << 24 | std::uint32_t{rest_[1]} << 16 |
            std::uint32_t{rest_[2]} << 8 | std::uint32_t{rest_[3]};
        rest_ = rest_.subspan(4);
        return true;
    }
    // Fixed-length opaque of n bytes (n a multiple of 4 here: deviceid4, stateid4.other).
    bool fixed(std::uint8_t* out, std::size_t n) {
        if (rest_.size() < n)
            return false;
        std::memcpy(out, rest_.data(), n);
        rest_ = rest_.subspan(n);
        return true;
    }
    // Variable-length opaque of at most max bytes, then its pad to 4 (not looked at).
    bool opaque(std::span<const std::uint8_t>& out, std::uint32_t max) {
        std::uint32_t len = 0;
        if (!u32(len) || len > max)
            return false;
        const std::size_t padded = (std::size_t{len} + 3) & ~std::size_t{3};
        if (rest_.size() < padded)
            return false;
        out = rest_.first(len);
        rest_ = rest_.subspan(padded);
        return true;
    }
    // An array's element count, at most max.
    bool count(std::uint32_t& n, std::uint32_t max) { return u32(n) && n <= max; }
    bool at_end() const { return rest_.empty(); }

private:
    std::span<const std::uint8_t> rest_;
};

bool read_attributes(XdrCursor& in, Fattr4View& attrs) {
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

bool read_data_server(XdrCursor& in, BodyEntry& e) {
    if (!in.fixed(e.deviceid.data(), e.deviceid.size()) || !in.u32(e.stateid.seqid) ||
        !in.fixed(e.stateid.other.data(), e.stateid.other.size()))
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
    XdrCursor in(body);
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
    if (!in.at_end())
        return std::nullopt;
    return out;
}

} // namespace flexfiles::wcc
