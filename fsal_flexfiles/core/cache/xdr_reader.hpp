// SPDX-License-Identifier: LGPL-3.0-or-later
//
// XDR (RFC 4506) read in place from a client's bytes: the LAYOUT_WCC body
// (pnfs/xdr/wcc_body_reader.hpp) and the Table 1 values inside it (owner_map.hpp). Every
// read checks what is left and fails rather than read past the end; opaques come back as
// views into the bytes, their pads skipped, not looked at (as ntirpc's decoders do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace flexfiles::wcc {

class XdrReader {
public:
    explicit XdrReader(std::span<const std::uint8_t> bytes) : rest_(bytes) {}

    bool u32(std::uint32_t& v) {
        if (rest_.size() < 4) {
            return false;
        }
        v = std::uint32_t{rest_[0]} << 24 | std::uint32_t{rest_[1]} << 16 |
            std::uint32_t{rest_[2]} << 8 | std::uint32_t{rest_[3]};
        rest_ = rest_.subspan(4);
        return true;
    }
    bool u64(std::uint64_t& v) {
        std::uint32_t hi = 0, lo = 0;
        if (!u32(hi) || !u32(lo)) {
            return false;
        }
        v = std::uint64_t{hi} << 32 | lo;
        return true;
    }
    /// A fixed-length opaque that fills `out` (its size a multiple of 4: deviceid4,
    /// stateid4.other).
    bool fixed(std::span<std::uint8_t> out) {
        if (rest_.size() < out.size()) {
            return false;
        }
        std::memcpy(out.data(), rest_.data(), out.size());
        rest_ = rest_.subspan(out.size());
        return true;
    }
    /// `len` bytes of an opaque whose length was read already, then its pad to 4.
    bool opaque(std::uint32_t len, std::span<const std::uint8_t>& out) {
        const std::size_t padded = (std::size_t{len} + 3) & ~std::size_t{3};
        if (rest_.size() < padded) {
            return false;
        }
        out = rest_.first(len);
        rest_ = rest_.subspan(padded);
        return true;
    }
    /// A variable-length opaque of at most `max` bytes: its length, its bytes, its pad.
    bool opaque(std::span<const std::uint8_t>& out, std::uint32_t max) {
        std::uint32_t len = 0;
        return u32(len) && len <= max && opaque(len, out);
    }
    /// An array's element count, at most `max`.
    bool count(std::uint32_t& n, std::uint32_t max) { return u32(n) && n <= max; }
    bool done() const { return rest_.empty(); }

private:
    std::span<const std::uint8_t> rest_;
};

} // namespace flexfiles::wcc
