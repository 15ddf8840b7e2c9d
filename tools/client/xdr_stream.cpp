// SPDX-License-Identifier: LGPL-3.0-or-later
#include "xdr_stream.hpp"

#include <cstdint>
#include <cstring>

namespace flexfiles::client {

namespace {
// No request this library builds is anywhere near this; it bounds a runaway size hint.
constexpr std::size_t kMaxEncodedSize = 256u << 20;
} // namespace

std::vector<char> xdr_encode(std::size_t size_hint, const char* what,
                             const std::function<bool(XDR*)>& fill) {
    // The hint can be far off (a compound with a 64 KiB opaque body): grow until it fits.
    for (std::size_t size = std::max<std::size_t>(size_hint, 256); size <= kMaxEncodedSize;
         size *= 4) {
        std::vector<char> buf(size);
        XDR x{};
        xdrmem_ncreate(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
        const bool ok = fill(&x);
        const std::size_t used = XDR_GETPOS(&x);
        XDR_DESTROY(&x);
        if (ok) {
            buf.resize(used);
            return buf;
        }
    }
    throw XdrError(std::string("cannot XDR-encode ") + what);
}

XdrDecoder::XdrDecoder(std::span<const char> bytes) : bytes_(bytes) {
    // xdrmem_ncreate() aborts on a buffer that is not 4-byte aligned: a view into the
    // middle of a record may not be.
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 4 != 0) {
        aligned_.resize((bytes.size() + 3) / 4 + 1); // never empty: data() is not NULL
        std::memcpy(aligned_.data(), bytes.data(), bytes.size());
        bytes_ = {reinterpret_cast<const char*>(aligned_.data()), bytes.size()};
    }
    // No stream over a NULL buffer (an empty vector's data()): ntirpc's inline readers
    // compute NULL + 4 before they compare it with the end (undefined behaviour).
    static const std::uint32_t kNoBytes = 0;
    char* start = const_cast<char*>(
        bytes_.data() != nullptr ? bytes_.data() : reinterpret_cast<const char*>(&kNoBytes));
    // xdrmem never writes through the pointer when decoding.
    xdrmem_ncreate(&xdr_, start, static_cast<u_int>(bytes_.size()), XDR_DECODE);
}

XdrDecoder::~XdrDecoder() {
    XDR_DESTROY(&xdr_);
}

std::size_t XdrDecoder::pos() const {
    return XDR_GETPOS(const_cast<XDR*>(&xdr_));
}

bool XdrDecoder::set_pos(std::size_t pos) {
    if (pos > bytes_.size()) {
        return false;
    }
    return XDR_SETPOS(&xdr_, static_cast<u_int>(pos));
}

bool XdrDecoder::u32(uint32_t& v) {
    return xdr_uint32_t(&xdr_, &v);
}

bool XdrDecoder::u64(uint64_t& v) {
    return xdr_uint64_t(&xdr_, &v);
}

bool XdrDecoder::take(std::size_t n, std::span<const char>& out) {
    const std::size_t at = pos();
    if (n > bytes_.size() - at) {
        return false;
    }
    out = bytes_.subspan(at, n);
    return set_pos(at + n);
}

bool XdrDecoder::opaque(std::vector<char>& out, uint32_t max) {
    uint32_t len = 0;
    if (!u32(len) || len > max) {
        return false;
    }
    const std::size_t padded = (static_cast<std::size_t>(len) + 3) & ~std::size_t{3};
    std::span<const char> bytes;
    if (!take(padded, bytes)) {
        return false;
    }
    out.assign(bytes.begin(), bytes.begin() + len);
    return true;
}

bool XdrDecoder::string(std::string& out, uint32_t max) {
    std::vector<char> bytes;
    if (!opaque(bytes, max)) {
        return false;
    }
    out.assign(bytes.begin(), bytes.end());
    return true;
}

bool xdr_put_u32(XDR* x, uint32_t v) {
    return xdr_uint32_t(x, &v);
}

bool xdr_put_u64(XDR* x, uint64_t v) {
    return xdr_uint64_t(x, &v);
}

bool xdr_put_opaque(XDR* x, std::span<const char> bytes) {
    if (bytes.size() > UINT32_MAX) {
        return false;
    }
    return xdr_put_u32(x, static_cast<uint32_t>(bytes.size())) &&
           xdr_opaque_encode(x, bytes.data(), static_cast<u_int>(bytes.size()));
}

bool xdr_put_raw(XDR* x, std::span<const char> bytes) {
    if (bytes.empty()) {
        return true;
    }
    // XDR_PUTBYTES takes a non-const pointer but only reads from it when encoding.
    return XDR_PUTBYTES(x, const_cast<char*>(bytes.data()), bytes.size());
}

} // namespace flexfiles::client
