// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An NFSv3 READ on the wire (RFC 1813 over ONC RPC, RFC 5531, with record marking), for
// the direct READ (direct_read.cpp), which receives a reply's data straight into the
// caller's buffer. libnfs 4.0 (Debian 12) receives every reply whole into a buffer of its
// own, which a proxied READ then had to copy into Ganesha's (README.md has what that
// cost). The call is encoded whole; the reply's head (the RPC reply header and READ3res
// up to the data's length) is parsed as it arrives, so that the data behind it can be
// received where it belongs. Pure: no I/O.
#pragma once

#include "model/nfs3.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace flexfiles::fleet::read_wire {

// A READ call, its record mark included: at most 4 + 40 + 32 + 8 + 4 + 64 + 12 bytes.
struct Call {
    std::array<std::uint8_t, 192> bytes{};
    std::size_t size = 0;
    std::span<const std::uint8_t> view() const { return {bytes.data(), size}; }
};

// AUTH_SYS credentials (machine name "flexfiles", no supplementary groups), as the fleet's
// libnfs contexts send them (DataServerConfig::uid / gid).
Call encode_call(std::uint32_t xid, std::uint32_t uid, std::uint32_t gid, const nfs3::Fh& fh,
                 std::uint64_t offset, std::uint32_t count);

// The head of a reply, parsed from the record's first bytes (record marks removed).
struct ReplyHead {
    enum class Kind {
        need_more, // `need` bytes in all are needed to go on
        done,      // the fields below are set; `size` bytes are the head
        malformed, // not a READ reply to this call, or the RPC refused it: `error` says
    };
    Kind kind = Kind::need_more;
    std::size_t need = 0;
    std::string error;

    std::size_t size = 0;
    std::uint32_t status = 0; // nfsstat3
    std::optional<nfs3::Fattr> attrs;
    bool eof = false;
    std::uint32_t data_len = 0; // the data's bytes after the head (0 unless status is 0)
    // After the data: padding to 4 bytes, then the record ends.
    std::size_t padding() const { return (4 - data_len % 4) % 4; }
};

// `got`: the record's bytes received so far. A reply with more data than `max_data` (the
// count asked for) is malformed: the caller's buffer has room for that much only.
ReplyHead parse_reply_head(std::span<const std::uint8_t> got, std::uint32_t xid,
                           std::uint32_t max_data);

// A record mark's fields.
struct RecordMark {
    std::uint32_t length = 0;
    bool last = false;
};
RecordMark decode_mark(std::span<const std::uint8_t, 4> bytes);

} // namespace flexfiles::fleet::read_wire
