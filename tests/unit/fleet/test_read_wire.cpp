// SPDX-License-Identifier: LGPL-3.0-or-later
// NFSv3 READ on the wire (fleet/read_wire.hpp), for the direct READ: the call's bytes as
// RFC 1813 and RFC 5531 lay them out; a reply's head parsed as its bytes arrive, asking
// for exactly the bytes it needs next, and refused when it is not a READ reply to this
// call or promises more data than was asked for.
#include "cmocka_cpp.hpp"
#include "fleet/read_wire.hpp"

#include <vector>

namespace rw = flexfiles::fleet::read_wire;
using flexfiles::nfs3::Fh;

namespace {

struct Bytes {
    std::vector<std::uint8_t> b;
    Bytes& u32(std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(static_cast<std::uint8_t>(v >> s));
        return *this;
    }
    Bytes& u64(std::uint64_t v) {
        return u32(static_cast<std::uint32_t>(v >> 32)).u32(static_cast<std::uint32_t>(v));
    }
};

std::uint32_t u32_at(std::span<const std::uint8_t> b, std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
           (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// An accepted reply's RPC header for `xid`, with a verifier of `verf_len` bytes.
Bytes accepted(std::uint32_t xid, std::uint32_t verf_len = 0) {
    Bytes r;
    r.u32(xid).u32(1).u32(0).u32(0).u32(verf_len);
    for (std::uint32_t i = 0; i < (verf_len + 3) / 4; ++i)
        r.u32(0);
    r.u32(0); // SUCCESS
    return r;
}

Bytes& fattr3(Bytes& r, std::uint64_t size, std::uint32_t mode) {
    r.u32(1).u32(mode).u32(1).u32(7).u32(8).u64(size).u64(size).u32(0).u32(0).u64(9).u64(42);
    for (int t = 0; t < 3; ++t)
        r.u32(1700000000 + t).u32(5);
    return r;
}

// Parses `whole` as it would arrive: from nothing, each time with the bytes asked for.
rw::ReplyHead parse_as_it_arrives(const std::vector<std::uint8_t>& whole, std::uint32_t xid,
                                  std::uint32_t max, unsigned* steps = nullptr) {
    std::size_t have = 0;
    unsigned n = 0;
    for (;;) {
        rw::ReplyHead h = rw::parse_reply_head({whole.data(), have}, xid, max);
        ++n;
        if (h.kind != rw::ReplyHead::Kind::need_more) {
            if (steps != nullptr)
                *steps = n;
            return h;
        }
        assert_true(h.need > have);
        assert_true(h.need <= whole.size());
        have = h.need;
    }
}

void test_the_call_is_a_read_with_auth_sys(void**) {
    const Fh fh{0xde, 0xad, 0xbe, 0xef, 0x01};
    const rw::Call c = rw::encode_call(0x11223344, 1234, 5678, fh, 0x0102030405060708ull, 1 << 20);
    const auto b = c.view();
    assert_int_equal(b.size() % 4, 0);
    assert_int_equal(u32_at(b, 0), 0x80000000u | (b.size() - 4)); // one fragment, the last
    assert_int_equal(u32_at(b, 4), 0x11223344u);                  // xid
    assert_int_equal(u32_at(b, 8), 0);                            // CALL
    assert_int_equal(u32_at(b, 12), 2);                           // RPC version
    assert_int_equal(u32_at(b, 16), 100003);                      // NFS
    assert_int_equal(u32_at(b, 20), 3);
    assert_int_equal(u32_at(b, 24), 6); // READ
    assert_int_equal(u32_at(b, 28), 1); // AUTH_SYS
    const std::uint32_t cred_len = u32_at(b, 32);
    // stamp, "flexfiles" (9 bytes + 3 of padding), uid, gid, no groups
    assert_int_equal(cred_len, 4 + 4 + 12 + 4 + 4 + 4);
    assert_int_equal(u32_at(b, 36 + 20), 1234u);
    assert_int_equal(u32_at(b, 36 + 24), 5678u);
    assert_int_equal(u32_at(b, 36 + 28), 0);
    std::size_t at = 36 + cred_len;
    assert_int_equal(u32_at(b, at), 0); // verifier AUTH_NONE, empty
    assert_int_equal(u32_at(b, at + 4), 0);
    at += 8;
    assert_int_equal(u32_at(b, at), 5); // the filehandle, padded to 8
    assert_int_equal(b[at + 4], 0xde);
    assert_int_equal(b[at + 8], 0x01);
    assert_int_equal(b[at + 9], 0);
    at += 12;
    assert_int_equal(u32_at(b, at), 0x01020304u);
    assert_int_equal(u32_at(b, at + 4), 0x05060708u);
    assert_int_equal(u32_at(b, at + 8), 1u << 20);
    assert_int_equal(at + 12, b.size());
}

void test_a_reply_head_with_attributes(void**) {
    Bytes r = accepted(7, 8);
    r.u32(0).u32(1); // NFS3_OK, attributes follow
    fattr3(r, 10000, 0100644);
    r.u32(4096).u32(0).u32(4096); // count, eof, data length
    unsigned steps = 0;
    const rw::ReplyHead h = parse_as_it_arrives(r.b, 7, 1 << 20, &steps);
    assert_int_equal(static_cast<int>(h.kind), static_cast<int>(rw::ReplyHead::Kind::done));
    assert_int_equal(h.size, r.b.size());
    assert_int_equal(h.status, 0);
    assert_true(h.attrs.has_value());
    assert_int_equal(h.attrs->size, 10000);
    assert_int_equal(h.attrs->mode, 0100644);
    assert_int_equal(h.attrs->uid, 7);
    assert_int_equal(h.attrs->fileid, 42);
    assert_int_equal(h.attrs->ctime.seconds, 1700000002u);
    assert_false(h.eof);
    assert_int_equal(h.data_len, 4096);
    assert_int_equal(h.padding(), 0);
    assert_true(steps < 20); // a few exact steps, not a byte at a time
}

void test_a_short_read_at_the_end_without_attributes(void**) {
    Bytes r = accepted(8);
    r.u32(0).u32(0).u32(5).u32(1).u32(5);
    const rw::ReplyHead h = parse_as_it_arrives(r.b, 8, 4096);
    assert_int_equal(static_cast<int>(h.kind), static_cast<int>(rw::ReplyHead::Kind::done));
    assert_false(h.attrs.has_value());
    assert_true(h.eof);
    assert_int_equal(h.data_len, 5);
    assert_int_equal(h.padding(), 3);
}

void test_an_nfs_error_has_no_data(void**) {
    Bytes r = accepted(9);
    r.u32(70).u32(1); // NFS3ERR_STALE, attributes follow
    fattr3(r, 1, 0644);
    const rw::ReplyHead h = parse_as_it_arrives(r.b, 9, 4096);
    assert_int_equal(static_cast<int>(h.kind), static_cast<int>(rw::ReplyHead::Kind::done));
    assert_int_equal(h.status, 70);
    assert_int_equal(h.data_len, 0);
    assert_int_equal(h.size, r.b.size());
}

void expect_malformed(const Bytes& r, std::uint32_t xid, std::uint32_t max) {
    const rw::ReplyHead h = parse_as_it_arrives(r.b, xid, max);
    assert_int_equal(static_cast<int>(h.kind), static_cast<int>(rw::ReplyHead::Kind::malformed));
    assert_false(h.error.empty());
}

void test_replies_that_are_refused(void**) {
    Bytes other_xid = accepted(10);
    other_xid.u32(0).u32(0).u32(0).u32(0).u32(0);
    expect_malformed(other_xid, 11, 4096);

    Bytes denied;
    denied.u32(12).u32(1).u32(1).u32(1).u32(5); // MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK
    expect_malformed(denied, 12, 4096);

    Bytes not_run;
    not_run.u32(13).u32(1).u32(0).u32(0).u32(0).u32(1); // PROG_UNAVAIL
    expect_malformed(not_run, 13, 4096);

    Bytes call;
    call.u32(14).u32(0).u32(2);
    expect_malformed(call, 14, 4096);

    Bytes huge_verifier;
    huge_verifier.u32(15).u32(1).u32(0).u32(1).u32(401);
    expect_malformed(huge_verifier, 15, 4096);

    Bytes too_much = accepted(16); // more data than was asked for: it would overrun
    too_much.u32(0).u32(0).u32(8192).u32(0).u32(8192);
    expect_malformed(too_much, 16, 4096);

    Bytes count_differs = accepted(17);
    count_differs.u32(0).u32(0).u32(100).u32(0).u32(200);
    expect_malformed(count_differs, 17, 4096);

    Bytes bad_bool = accepted(18);
    bad_bool.u32(0).u32(2);
    expect_malformed(bad_bool, 18, 4096);
}

void test_record_marks(void**) {
    const std::uint8_t last[4] = {0x80, 0x00, 0x10, 0x00};
    const std::uint8_t more[4] = {0x00, 0x01, 0x00, 0x00};
    assert_int_equal(rw::decode_mark(std::span<const std::uint8_t, 4>(last)).length, 4096);
    assert_true(rw::decode_mark(std::span<const std::uint8_t, 4>(last)).last);
    assert_int_equal(rw::decode_mark(std::span<const std::uint8_t, 4>(more)).length, 65536);
    assert_false(rw::decode_mark(std::span<const std::uint8_t, 4>(more)).last);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_call_is_a_read_with_auth_sys),
        cmocka_unit_test(test_a_reply_head_with_attributes),
        cmocka_unit_test(test_a_short_read_at_the_end_without_attributes),
        cmocka_unit_test(test_an_nfs_error_has_no_data),
        cmocka_unit_test(test_replies_that_are_refused),
        cmocka_unit_test(test_record_marks),
    };
    return cmocka_run_group_tests_name("fleet_read_wire", tests, nullptr, nullptr);
}
