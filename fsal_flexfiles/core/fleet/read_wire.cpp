// SPDX-License-Identifier: LGPL-3.0-or-later
//
// NFSv3 READ call and reply head (read_wire.hpp).
#include "fleet/read_wire.hpp"

#include <cstring>

namespace flexfiles::fleet::read_wire {

namespace {

constexpr std::uint32_t kCall = 0, kReply = 1;
constexpr std::uint32_t kRpcVersion = 2;
constexpr std::uint32_t kNfsProgram = 100003, kNfsVersion = 3, kNfsRead = 6;
constexpr std::uint32_t kAuthNone = 0, kAuthSys = 1;
constexpr std::uint32_t kMsgAccepted = 0, kSuccess = 0;
constexpr std::size_t kMaxAuthBody = 400; // RFC 5531's MAX_AUTH_BYTES
constexpr std::size_t kFattr3Size = 84;
constexpr char kMachineName[] = "flexfiles";

class Writer {
public:
    explicit Writer(Call& c) : c_(c) {}
    void u32(std::uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8)
            c_.bytes[c_.size++] = static_cast<std::uint8_t>(v >> shift);
    }
    void u64(std::uint64_t v) {
        u32(static_cast<std::uint32_t>(v >> 32));
        u32(static_cast<std::uint32_t>(v));
    }
    void opaque(const void* p, std::size_t n) { // variable-length: length, bytes, padding
        u32(static_cast<std::uint32_t>(n));
        std::memcpy(c_.bytes.data() + c_.size, p, n);
        c_.size += n;
        while (c_.size % 4 != 0)
            c_.bytes[c_.size++] = 0;
    }
    std::size_t at() const { return c_.size; }
    void u32_at(std::size_t pos, std::uint32_t v) {
        const std::size_t keep = c_.size;
        c_.size = pos;
        u32(v);
        c_.size = keep;
    }

private:
    Call& c_;
};

// Reads the reply head's fields in order; stops at the first field not received yet.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> got) : got_(got) {}
    bool u32(std::uint32_t& v) {
        if (!need(4))
            return false;
        v = 0;
        for (int i = 0; i < 4; ++i)
            v = (v << 8) | got_[pos_ + static_cast<std::size_t>(i)];
        pos_ += 4;
        return true;
    }
    bool u64(std::uint64_t& v) {
        std::uint32_t hi = 0, lo = 0;
        if (!need(8))
            return false;
        u32(hi);
        u32(lo);
        v = (std::uint64_t{hi} << 32) | lo;
        return true;
    }
    bool skip(std::size_t n) {
        if (!need(n))
            return false;
        pos_ += n;
        return true;
    }
    // Whether `n` more bytes are there; if not, wanted() says how many in all.
    bool need(std::size_t n) {
        if (pos_ + n <= got_.size())
            return true;
        wanted_ = pos_ + n;
        return false;
    }
    std::size_t pos() const { return pos_; }
    std::size_t wanted() const { return wanted_; }

private:
    std::span<const std::uint8_t> got_;
    std::size_t pos_ = 0;
    std::size_t wanted_ = 0;
};

ReplyHead more(const Reader& r) {
    ReplyHead h;
    h.kind = ReplyHead::Kind::need_more;
    h.need = r.wanted();
    return h;
}

ReplyHead malformed(std::string why) {
    ReplyHead h;
    h.kind = ReplyHead::Kind::malformed;
    h.error = std::move(why);
    return h;
}

bool fattr3(Reader& r, nfs3::Fattr& a) {
    if (!r.need(kFattr3Size))
        return false;
    std::uint32_t type = 0;
    r.u32(type);
    a.type = static_cast<nfs3::Ftype>(type);
    r.u32(a.mode);
    r.u32(a.nlink);
    r.u32(a.uid);
    r.u32(a.gid);
    r.u64(a.size);
    r.u64(a.used);
    r.u32(a.rdev_major);
    r.u32(a.rdev_minor);
    r.u64(a.fsid);
    r.u64(a.fileid);
    for (nfs3::Time* t : {&a.atime, &a.mtime, &a.ctime}) {
        r.u32(t->seconds);
        r.u32(t->nseconds);
    }
    return true;
}

} // namespace

Call encode_call(std::uint32_t xid, std::uint32_t uid, std::uint32_t gid, const nfs3::Fh& fh,
                 std::uint64_t offset, std::uint32_t count) {
    Call c;
    Writer w(c);
    w.u32(0); // the record mark, set below
    w.u32(xid);
    w.u32(kCall);
    w.u32(kRpcVersion);
    w.u32(kNfsProgram);
    w.u32(kNfsVersion);
    w.u32(kNfsRead);
    w.u32(kAuthSys);
    const std::size_t cred_len_at = w.at();
    w.u32(0); // the credential's length, set below
    const std::size_t cred_at = w.at();
    w.u32(0); // stamp
    w.opaque(kMachineName, sizeof(kMachineName) - 1);
    w.u32(uid);
    w.u32(gid);
    w.u32(0); // no supplementary groups
    w.u32_at(cred_len_at, static_cast<std::uint32_t>(w.at() - cred_at));
    w.u32(kAuthNone); // verifier
    w.u32(0);
    w.opaque(fh.data(), fh.size());
    w.u64(offset);
    w.u32(count);
    w.u32_at(0, 0x80000000u | static_cast<std::uint32_t>(c.size - 4));
    return c;
}

ReplyHead parse_reply_head(std::span<const std::uint8_t> got, std::uint32_t xid,
                           std::uint32_t max_data) {
    Reader r(got);
    std::uint32_t v = 0;
    if (!r.u32(v))
        return more(r);
    if (v != xid)
        return malformed("reply to xid " + std::to_string(v) + ", not to " + std::to_string(xid));
    if (!r.u32(v))
        return more(r);
    if (v != kReply)
        return malformed("not an RPC reply (message type " + std::to_string(v) + ")");
    if (!r.u32(v))
        return more(r);
    if (v != kMsgAccepted)
        return malformed("the RPC call was denied (reject status " +
                         (r.u32(v) ? std::to_string(v) : std::string("?")) + ")");
    std::uint32_t verf_len = 0;
    if (!r.skip(4) || !r.u32(verf_len))
        return more(r);
    if (verf_len > kMaxAuthBody)
        return malformed("verifier of " + std::to_string(verf_len) + " bytes");
    if (!r.skip((verf_len + 3) / 4 * 4) || !r.u32(v))
        return more(r);
    if (v != kSuccess)
        return malformed("the RPC call was not run (accept status " + std::to_string(v) + ")");

    ReplyHead h;
    std::uint32_t attrs_follow = 0;
    if (!r.u32(h.status) || !r.u32(attrs_follow))
        return more(r);
    if (attrs_follow > 1)
        return malformed("post_op_attr discriminant " + std::to_string(attrs_follow));
    if (attrs_follow == 1) {
        nfs3::Fattr a;
        if (!fattr3(r, a))
            return more(r);
        h.attrs = a;
    }
    if (h.status == 0) {
        std::uint32_t count = 0, eof = 0;
        if (!r.u32(count) || !r.u32(eof) || !r.u32(h.data_len))
            return more(r);
        if (h.data_len > max_data)
            return malformed(std::to_string(h.data_len) + " bytes of data, " +
                             std::to_string(max_data) + " asked for");
        if (count != h.data_len)
            return malformed("count " + std::to_string(count) + " but " +
                             std::to_string(h.data_len) + " bytes of data");
        if (eof > 1)
            return malformed("eof " + std::to_string(eof));
        h.eof = eof == 1;
    }
    h.kind = ReplyHead::Kind::done;
    h.size = r.pos();
    return h;
}

RecordMark decode_mark(std::span<const std::uint8_t, 4> b) {
    const std::uint32_t v = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) |
                            (std::uint32_t{b[2]} << 8) | b[3];
    return {v & 0x7fffffffu, (v & 0x80000000u) != 0};
}

} // namespace flexfiles::fleet::read_wire
