// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Thin RAII helpers over libntirpc's memory XDR streams: the only XDR path of the
// library (RPC headers, COMPOUND bodies and fattr4 values all go through them).
#pragma once

#include "model/enum_bits.hpp"
#include "nfs4_xdr.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexfiles::client {

// A value could not be encoded or a received byte string could not be decoded.
class XdrError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs `fill` on an encoding stream and returns the bytes it wrote. `size_hint` should
// cover the payload (write data, raw op bytes); the buffer is grown once (x4) if `fill`
// runs out of room. Throws XdrError naming `what` if encoding still fails.
std::vector<char> xdr_encode(std::size_t size_hint, const char* what,
                             const std::function<bool(XDR*)>& fill);

// A decoding stream over bytes owned by someone else (copied when they are not 4-byte
// aligned: ntirpc's xdrmem aborts the process on an unaligned buffer).
class XdrDecoder {
public:
    explicit XdrDecoder(std::span<const char> bytes);
    ~XdrDecoder();
    XdrDecoder(const XdrDecoder&) = delete;
    XdrDecoder& operator=(const XdrDecoder&) = delete;

    XDR* xdr() { return &xdr_; }
    std::size_t pos() const;
    std::size_t size() const { return bytes_.size(); }
    std::size_t remaining() const { return size() - pos(); }
    bool set_pos(std::size_t pos);

    bool u32(uint32_t& v);
    bool u64(uint64_t& v);
    // Variable-length opaque (length word, bytes, padding), at most `max` bytes.
    bool opaque(std::vector<char>& out, uint32_t max);
    bool string(std::string& out, uint32_t max);
    // The next `n` bytes as a view into the underlying buffer.
    bool take(std::size_t n, std::span<const char>& out);

private:
    std::vector<std::uint32_t> aligned_; // a copy of bytes that were not 4-byte aligned
    std::span<const char> bytes_;
    XDR xdr_{};
};

// C enum fields read and written as their bits (model/enum_bits.hpp).
using flexfiles::enum_bits;
using flexfiles::set_enum_bits;

// Encoding helpers with the same conventions, for code that fills a stream.
bool xdr_put_u32(XDR* x, uint32_t v);
bool xdr_put_u64(XDR* x, uint64_t v);
bool xdr_put_opaque(XDR* x, std::span<const char> bytes); // length + bytes + padding
bool xdr_put_raw(XDR* x, std::span<const char> bytes);    // bytes exactly as given

} // namespace flexfiles::client
