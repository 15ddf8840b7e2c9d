// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target fleet_read_reply: the head of a data server's READ reply as the direct READ
// (fleet/direct_read.cpp) parses it, before it receives the data into Ganesha's buffer
// (fleet/read_wire.hpp). The first four input bytes are the count asked for; the rest
// arrives as the direct READ reads it: nothing, then exactly the bytes the parser asks for.
//
// Invariants: each step asks for more bytes than it has; a head that is done lies within
// the bytes received and promises no more data than was asked for (the data is received
// into a buffer of that size); data only with NFS3_OK; an error is said in words.
#include "fleet/read_wire.hpp"
#include "fuzz_support.hpp"

using namespace flexfiles;
namespace rw = fleet::read_wire;

namespace {

constexpr const char* kTarget = "fleet_read_reply";
constexpr std::uint32_t kXid = 0x5eed0001;

struct Reply {
    fuzz::Bytes b;
    Reply& u32(std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(static_cast<std::uint8_t>(v >> s));
        return *this;
    }
    Reply& attrs() {
        u32(1).u32(0100644).u32(1).u32(1000001).u32(1000001);
        for (int i = 0; i < 19; ++i) // size, used, rdev, fsid, fileid, three times
            u32(i == 1 ? 4096 : 0);
        return *this;
    }
};

Reply accepted(std::uint32_t verf_len = 0) {
    Reply r;
    r.u32(kXid).u32(1).u32(0).u32(0).u32(verf_len);
    for (std::uint32_t i = 0; i < (verf_len + 3) / 4; ++i)
        r.u32(0);
    r.u32(0);
    return r;
}

fuzz::Bytes with_count(std::uint32_t count, const Reply& r) {
    Reply out;
    out.u32(count);
    out.b.insert(out.b.end(), r.b.begin(), r.b.end());
    return out.b;
}

void seeds(fuzz::SeedWriter& w) {
    Reply ok = accepted();
    ok.u32(0).u32(1).attrs().u32(4096).u32(1).u32(4096);
    w.add("ok_attrs_eof", with_count(1 << 20, ok));
    Reply bare = accepted(8);
    bare.u32(0).u32(0).u32(5).u32(0).u32(5);
    w.add("ok_verifier_no_attrs", with_count(4096, bare));
    Reply stale = accepted();
    stale.u32(70).u32(1).attrs();
    w.add("stale", with_count(4096, stale));
    Reply denied;
    denied.u32(kXid).u32(1).u32(1).u32(1).u32(5);
    w.add("denied", with_count(4096, denied));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    const std::uint32_t max = in.u32();
    const auto reply = in.rest();
    std::size_t have = 0;
    for (;;) {
        const rw::ReplyHead h = rw::parse_reply_head(reply.first(have), kXid, max);
        if (h.kind == rw::ReplyHead::Kind::need_more) {
            FUZZ_CHECK(kTarget, h.need > have);
            if (h.need > reply.size())
                break; // the reply ended: the direct READ would wait, then time out
            have = h.need;
            continue;
        }
        if (h.kind == rw::ReplyHead::Kind::malformed) {
            FUZZ_CHECK(kTarget, !h.error.empty());
            break;
        }
        FUZZ_CHECK(kTarget, h.size <= have && h.size > 0);
        FUZZ_CHECK(kTarget, h.data_len <= max);
        FUZZ_CHECK(kTarget, h.status == 0 || h.data_len == 0);
        FUZZ_CHECK(kTarget, h.padding() < 4 && (h.data_len + h.padding()) % 4 == 0);
        break;
    }
    return 0;
}
