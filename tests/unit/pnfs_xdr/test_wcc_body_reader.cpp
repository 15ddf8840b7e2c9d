// SPDX-License-Identifier: LGPL-3.0-or-later
// pnfs/xdr/wcc_body_reader: ff_layout_wcc4 read in place gives what the reference decoder
// (protocols/'s ff_layout_wcc4_decode, flattened by wcc_entries) gives, on good bodies,
// every truncation, trailing bytes and every bound; the entries point into the body.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "pnfs/xdr/wcc_body_reader.hpp"
#include "pnfs/xdr/wcc_entries.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace flexfiles::wcc;

namespace {

using Bytes = std::vector<std::uint8_t>;

void put32(Bytes& b, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8)
        b.push_back(static_cast<std::uint8_t>(v >> s));
}
void put_opaque(Bytes& b, const Bytes& v, std::uint8_t pad = 0) {
    put32(b, static_cast<std::uint32_t>(v.size()));
    b.insert(b.end(), v.begin(), v.end());
    while (b.size() % 4 != 0)
        b.push_back(pad);
}

// One ff_data_server_wcc4 with the given counts and sizes (values are patterns).
struct Ds {
    std::uint8_t tag = 1;
    std::uint32_t seqid = 0;
    std::vector<Bytes> fhs{Bytes(28, 0xAB)};
    std::vector<std::uint32_t> mask{1u << 4, 0};
    Bytes values = Bytes(8, 0x11);
    std::uint8_t pad = 0;
};

void put_ds(Bytes& b, const Ds& d) {
    for (int i = 0; i < 16; ++i)
        b.push_back(static_cast<std::uint8_t>(d.tag + i)); // deviceid4
    put32(b, d.seqid);
    for (int i = 0; i < 12; ++i)
        b.push_back(static_cast<std::uint8_t>(0xC0 + i)); // stateid4.other
    put32(b, static_cast<std::uint32_t>(d.fhs.size()));
    for (const Bytes& fh : d.fhs)
        put_opaque(b, fh, d.pad);
    put32(b, static_cast<std::uint32_t>(d.mask.size()));
    for (std::uint32_t w : d.mask)
        put32(b, w);
    put_opaque(b, d.values, d.pad);
}

Bytes body_of(const std::vector<std::vector<Ds>>& mirrors) {
    Bytes b;
    put32(b, static_cast<std::uint32_t>(mirrors.size()));
    for (const auto& m : mirrors) {
        put32(b, static_cast<std::uint32_t>(m.size()));
        for (const Ds& d : m)
            put_ds(b, d);
    }
    return b;
}

bool same(const BodyEntry& x, const BodyEntry& y) {
    if (x.mirror_pos != y.mirror_pos || x.ds_pos != y.ds_pos || x.deviceid != y.deviceid ||
        !(x.stateid == y.stateid) || x.fhs.size() != y.fhs.size() ||
        x.attributes.mask != y.attributes.mask ||
        !std::ranges::equal(x.attributes.values, y.attributes.values))
        return false;
    for (std::size_t f = 0; f < x.fhs.size(); ++f)
        if (!std::ranges::equal(x.fhs[f], y.fhs[f]))
            return false;
    return true;
}

// Reads `b` both ways and checks that they agree; the reader's answer.
std::optional<std::pmr::vector<BodyEntry>> read_both(const Bytes& b) {
    auto read = read_wcc_body(b);
    DecodedBody reference;
    const bool ok = reference.decode(reinterpret_cast<const char*>(b.data()), b.size());
    assert_int_equal(read.has_value(), ok);
    if (read) {
        const auto expected = entries_of(reference.body);
        assert_int_equal(read->size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i)
            assert_true(same((*read)[i], expected[i]));
    }
    return read;
}

void test_two_mirrors_point_into_the_body(void**) {
    Ds a;
    Ds b;
    b.tag = 0x40;
    b.seqid = 7;
    b.fhs = {Bytes(5, 0x01), Bytes(30, 0x02)};
    b.mask = {1u << 4, 1u << 1 | 1u << 4};
    b.values = Bytes(13, 0x22);
    const Bytes body = body_of({{a}, {b}});
    const auto read = read_both(body);
    assert_true(read.has_value());
    assert_int_equal(read->size(), 2);
    const BodyEntry& e = (*read)[1];
    assert_int_equal(e.mirror_pos, 1);
    assert_int_equal(e.ds_pos, 0);
    assert_int_equal(e.deviceid[0], 0x40);
    assert_int_equal(e.deviceid[15], 0x4F);
    assert_int_equal(e.stateid.seqid, 7);
    assert_int_equal(e.stateid.other[11], 0xCB);
    assert_int_equal(e.fhs.size(), 2);
    assert_int_equal(e.fhs[0].size(), 5);
    assert_int_equal(e.fhs[1].size(), 30);
    assert_int_equal(e.attributes.mask[1], 1u << 1 | 1u << 4);
    assert_int_equal(e.attributes.values.size(), 13);
    // Views into the caller's bytes, not copies.
    assert_true(e.attributes.values.data() >= body.data() &&
                e.attributes.values.data() + 13 <= body.data() + body.size());
    assert_true(e.fhs[1].data() > body.data() && e.fhs[1].data() < body.data() + body.size());
}

void test_every_truncation_and_trailing_bytes_fail(void**) {
    Ds d;
    d.fhs = {Bytes(3, 0x05)}; // padded
    const Bytes body = body_of({{d, d}, {d}});
    assert_true(read_both(body).has_value());
    for (std::size_t cut = 0; cut < body.size(); ++cut)
        assert_false(read_both(Bytes(body.begin(), body.begin() + cut)).has_value());
    Bytes longer = body;
    put32(longer, 0);
    assert_false(read_both(longer).has_value());
}

void test_empty_and_no_mirrors(void**) {
    assert_false(read_both({}).has_value());
    const auto none = read_both(Bytes(4, 0));
    assert_true(none.has_value());
    assert_true(none->empty());
    const auto empty_mirror = read_both(body_of({{}, {}}));
    assert_true(empty_mirror.has_value());
    assert_true(empty_mirror->empty());
}

void test_bounds_as_the_reference(void**) {
    // Counts at their bound read; one over does not.
    assert_true(read_both(body_of(std::vector<std::vector<Ds>>(32))).has_value());
    assert_false(read_both(body_of(std::vector<std::vector<Ds>>(33))).has_value());
    assert_true(read_both(body_of({std::vector<Ds>(32)})).has_value());
    assert_false(read_both(body_of({std::vector<Ds>(33)})).has_value());
    Ds d;
    d.fhs = std::vector<Bytes>(8, Bytes(4, 1));
    assert_true(read_both(body_of({{d}})).has_value());
    d.fhs.push_back(Bytes(4, 1));
    assert_false(read_both(body_of({{d}})).has_value());
    d = Ds{};
    d.fhs = {Bytes(128, 3)};
    assert_true(read_both(body_of({{d}})).has_value());
    d.fhs = {Bytes(129, 3)};
    assert_false(read_both(body_of({{d}})).has_value());
    d = Ds{};
    d.values = Bytes(4096, 9);
    assert_true(read_both(body_of({{d}})).has_value());
    d.values = Bytes(4097, 9);
    assert_false(read_both(body_of({{d}})).has_value());
    // Bitmap words: eight read, the first three kept; nine refused.
    d = Ds{};
    d.mask = {1, 2, 3, 4, 5, 6, 7, 8};
    const auto eight = read_both(body_of({{d}}));
    assert_true(eight.has_value());
    assert_int_equal((*eight)[0].attributes.mask[2], 3);
    d.mask.push_back(9);
    assert_false(read_both(body_of({{d}})).has_value());
    // A length that runs past the end, and one near 2^32.
    Bytes huge;
    put32(huge, 1);
    put32(huge, 0xFFFFFFFF);
    assert_false(read_both(huge).has_value());
}

void test_pad_bytes_and_alignment(void**) {
    Ds d;
    d.fhs = {Bytes(5, 0x07)};
    d.values = Bytes(6, 0x08);
    d.pad = 0xEE; // not zero: neither decoder looks at pads
    const Bytes body = body_of({{d}});
    assert_true(read_both(body).has_value());
    // From an address that is not 4-byte aligned (the reference copies; the reader reads).
    std::vector<std::uint8_t> shifted(body.size() + 1);
    std::memcpy(shifted.data() + 1, body.data(), body.size());
    const auto read = read_wcc_body({shifted.data() + 1, body.size()});
    assert_true(read.has_value());
    assert_int_equal((*read)[0].fhs[0].size(), 5);
    assert_int_equal((*read)[0].fhs[0][4], 0x07);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_mirrors_point_into_the_body),
        cmocka_unit_test(test_every_truncation_and_trailing_bytes_fail),
        cmocka_unit_test(test_empty_and_no_mirrors),
        cmocka_unit_test(test_bounds_as_the_reference),
        cmocka_unit_test(test_pad_bytes_and_alignment),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
