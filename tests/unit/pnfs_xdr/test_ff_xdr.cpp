// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/ff_xdr: ff_layout4, ff_device_addr4 and ff_layoutreturn4 through Ganesha's
// nfsv41.h routines (encode, decode back, refuse what does not decode), and RFC 5665
// universal addresses.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "pnfs/xdr/ff_xdr.hpp"

#include <cstring>
#include <vector>

using namespace flexfiles;
using namespace flexfiles::layout;

namespace {

// An XDR encode stream over a buffer of `size` bytes; len() is what was written.
struct Encoder {
    explicit Encoder(std::size_t size) : buf(size) {
        xdrmem_create(&xdrs, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
    }
    ~Encoder() { xdr_destroy(&xdrs); }
    std::size_t len() { return xdr_getpos(&xdrs); }

    std::vector<char> buf;
    XDR xdrs;
};

mds::DataFileMap two_mirrors() {
    mds::DataFileMap map;
    map.file_id = 0x4d2;
    map.stripe_unit = 1u << 20;
    for (std::uint32_t m = 0; m < 2; m++) {
        mds::DataFile f;
        f.mirror = m;
        f.ds_id = 2 + m;
        f.deviceid = fleet::make_deviceid(f.ds_id);
        f.fh = std::vector<std::uint8_t>(24 + m, static_cast<std::uint8_t>(0xa0 + m));
        f.name = "ff-00000000000004d2-m" + std::to_string(m);
        f.fencing_uid = 1000001 + m;
        f.fencing_gid = 2000001 + m;
        map.files.push_back(f);
    }
    return map;
}

// ---------------------------------------------------------------------------
// Universal addresses

void test_uaddr_ipv4(void**) {
    auto a = universal_address("127.0.0.2", 2049);
    assert_true(a.has_value());
    assert_string_equal(a->netid.c_str(), "tcp");
    assert_string_equal(a->uaddr.c_str(), "127.0.0.2.8.1");
    assert_string_equal(universal_address("10.1.2.3", 0)->uaddr.c_str(), "10.1.2.3.0.0");
    assert_string_equal(universal_address("10.1.2.3", 65535)->uaddr.c_str(), "10.1.2.3.255.255");
    assert_string_equal(universal_address("192.168.0.1", 20048)->uaddr.c_str(),
                        "192.168.0.1.78.80");
}

void test_uaddr_ipv6(void**) {
    auto a = universal_address("::1", 2049);
    assert_true(a.has_value());
    assert_string_equal(a->netid.c_str(), "tcp6");
    assert_string_equal(a->uaddr.c_str(), "::1.8.1");
    // brackets accepted, canonical (RFC 5952) form out
    assert_string_equal(universal_address("[::1]", 2049)->uaddr.c_str(), "::1.8.1");
    assert_string_equal(universal_address("0:0:0:0:0:0:0:1", 2049)->uaddr.c_str(), "::1.8.1");
    assert_string_equal(universal_address("FE80:0:0:0:0:0:0:AB", 1)->uaddr.c_str(), "fe80::ab.0.1");
}

void test_uaddr_refused(void**) {
    assert_false(universal_address("", 2049).has_value());
    assert_false(universal_address("localhost", 2049).has_value());
    assert_false(universal_address("1.2.3", 2049).has_value());
    assert_false(universal_address("256.1.1.1", 2049).has_value());
    assert_false(universal_address("fe80::1%eth0", 2049).has_value());
    assert_false(universal_address("[::1", 2049).has_value());
    assert_false(universal_address("127.0.0.1 ", 2049).has_value());
}

void test_uaddr_parse(void**) {
    auto p = parse_universal_address("tcp", "127.0.0.2.8.1");
    assert_true(p.has_value());
    assert_string_equal(p->ip.c_str(), "127.0.0.2");
    assert_int_equal(p->port, 2049);
    p = parse_universal_address("tcp6", "fe80::ab.78.80");
    assert_true(p.has_value());
    assert_string_equal(p->ip.c_str(), "fe80::ab");
    assert_int_equal(p->port, 20048);
    // every address formatted parses back to itself
    for (const char* ip : {"10.0.0.1", "::1", "2001:db8::7"}) {
        for (std::uint16_t port : {0, 1, 255, 256, 2049, 65535}) {
            auto u = universal_address(ip, port);
            assert_true(u.has_value());
            auto back = parse_universal_address(u->netid, u->uaddr);
            assert_true(back.has_value());
            assert_int_equal(back->port, port);
            assert_true(universal_address(back->ip, back->port) == u);
        }
    }
    assert_false(parse_universal_address("tcp6", "127.0.0.2.8.1").has_value());
    assert_false(parse_universal_address("tcp", "::1.8.1").has_value());
    assert_false(parse_universal_address("udp", "127.0.0.2.8.1").has_value());
    assert_false(parse_universal_address("tcp", "127.0.0.2.256.1").has_value());
    assert_false(parse_universal_address("tcp", "127.0.0.2.08.1").has_value());
    assert_false(parse_universal_address("tcp", "127.0.0.2.-1.1").has_value());
    assert_false(parse_universal_address("tcp", "8.1").has_value());
    assert_false(parse_universal_address("tcp", ".8.1").has_value());
    assert_false(parse_universal_address("tcp", "").has_value());
    assert_false(parse_universal_address("tcp", "127.0.0.2.8.").has_value());
}

// ---------------------------------------------------------------------------
// ff_device_addr4

void test_device_addr_round_trip(void**) {
    DeviceAddr dev;
    dev.addrs.push_back(*universal_address("127.0.0.2", 2049));
    dev.versions.push_back({3, 0, 1u << 20, 512u << 10, false});
    Encoder enc(256);
    assert_true(encode_device_addr(&enc.xdrs, dev));
    // count, netid "tcp" (4+4), uaddr "127.0.0.2.8.1" (4+16), count, 5 words
    assert_int_equal(enc.len(), 4 + 8 + 20 + 4 + 20);
    auto back = decode_device_addr(enc.buf.data(), enc.len());
    assert_true(back.has_value());
    assert_true(*back == dev);
    assert_int_equal(back->versions[0].version, 3);
    assert_int_equal(back->versions[0].wsize, 512u << 10);
    assert_false(back->versions[0].tightly_coupled);

    // truncated, trailing garbage, or a buffer too small
    assert_false(decode_device_addr(enc.buf.data(), enc.len() - 4).has_value());
    std::vector<char> longer(enc.buf.begin(), enc.buf.begin() + enc.len());
    longer.resize(longer.size() + 4);
    assert_false(decode_device_addr(longer.data(), longer.size()).has_value());
    Encoder tiny(16);
    assert_false(encode_device_addr(&tiny.xdrs, dev));
    // a hostile count is refused before anything is allocated for it
    std::vector<char> hostile{'\xff', '\xff', '\xff', '\xff', 0, 0, 0, 0};
    assert_false(decode_device_addr(hostile.data(), hostile.size()).has_value());
    assert_false(decode_device_addr(nullptr, 4).has_value());
}

// ---------------------------------------------------------------------------
// ff_layout4

void test_layout_round_trip(void**) {
    const mds::DataFileMap map = two_mirrors();
    const Layout layout = layout_of(map, {2, 1});
    Encoder enc(1024);
    assert_true(encode_layout(&enc.xdrs, layout));

    auto back = decode_layout(enc.buf.data(), enc.len());
    assert_true(back.has_value());
    assert_int_equal(back->stripe_unit, 1u << 20);
    assert_int_equal(back->flags, 0);
    assert_int_equal(back->stats_collect_hint, 0);
    assert_int_equal(back->mirrors.size(), 2);
    for (std::size_t m = 0; m < 2; m++) {
        assert_int_equal(back->mirrors[m].data_servers.size(), 1);
        const LayoutDataServer& ds = back->mirrors[m].data_servers[0];
        assert_memory_equal(ds.deviceid.data(), map.files[m].deviceid.data(), 16);
        assert_int_equal(ds.efficiency, m == 0 ? 2 : 1);
        // the anonymous stateid
        assert_int_equal(ds.stateid.seqid, 0);
        const char zeros[sizeof(ds.stateid.other)] = {};
        assert_memory_equal(ds.stateid.other, zeros, sizeof(ds.stateid.other));
        assert_int_equal(ds.fh_vers.size(), 1);
        assert_true(ds.fh_vers[0] == map.files[m].fh);
        assert_string_equal(ds.user.c_str(), std::to_string(1000001 + m).c_str());
        assert_string_equal(ds.group.c_str(), std::to_string(2000001 + m).c_str());
        assert_int_equal(*parse_numeric_owner(ds.user), map.files[m].fencing_uid);
    }
}

// Bytes that do not start on a 4-byte boundary (a view into the middle of a record):
// ntirpc's xdrmem aborts the process on them, so the decoders copy them first (found by
// the fuzz target ff_xdr_bodies). The same bytes decode the same, and no bytes at all
// decode as nothing.
void test_unaligned_and_empty_bodies(void**) {
    const Layout layout = layout_of(two_mirrors(), {2, 1});
    Encoder enc(1024);
    assert_true(encode_layout(&enc.xdrs, layout));
    std::vector<char> shifted(enc.len() + 1);
    std::memcpy(shifted.data() + 1, enc.buf.data(), enc.len());
    auto back = decode_layout(shifted.data() + 1, enc.len());
    assert_true(back.has_value());
    assert_int_equal(back->mirrors.size(), 2);
    assert_false(decode_layout(nullptr, 0).has_value());
    assert_false(decode_device_addr(nullptr, 0).has_value());
    assert_false(decode_device_addr(shifted.data() + 1, 0).has_value());
}

void test_layout_wire_format(void**) {
    // One mirror, checked word by word against RFC 8435 section 5.1.
    mds::DataFileMap map = two_mirrors();
    map.files.resize(1);
    map.files[0].fh = std::vector<std::uint8_t>(8, 0x11);
    map.files[0].fencing_uid = 7;
    map.files[0].fencing_gid = 42;
    Encoder enc(512);
    assert_true(encode_layout(&enc.xdrs, layout_of(map, {}, 0, 5)));
    const auto* w = reinterpret_cast<const std::uint8_t*>(enc.buf.data());
    auto word = [&](std::size_t at) {
        return std::uint32_t(w[at]) << 24 | std::uint32_t(w[at + 1]) << 16 |
               std::uint32_t(w[at + 2]) << 8 | w[at + 3];
    };
    assert_int_equal(word(0), 0);        // stripe unit, high word
    assert_int_equal(word(4), 1u << 20); // low word
    assert_int_equal(word(8), 1);        // mirrors
    assert_int_equal(word(12), 1);       // data servers in mirror 0
    assert_memory_equal(w + 16, map.files[0].deviceid.data(), 16);
    assert_int_equal(word(32), 0); // efficiency
    assert_int_equal(word(36), 0); // stateid seqid
    assert_int_equal(word(52), 1); // fh_vers count
    assert_int_equal(word(56), 8); // fh length
    assert_int_equal(word(68), 1); // owner "7"
    assert_int_equal(w[72], '7');
    assert_int_equal(word(76), 2); // group "42"
    assert_int_equal(w[80], '4');
    assert_int_equal(w[81], '2');
    assert_int_equal(word(84), 0); // ffl_flags
    assert_int_equal(word(88), 5); // ffl_stats_collect_hint
    assert_int_equal(enc.len(), 92);
}

void test_layout_refused(void**) {
    const Layout layout = layout_of(two_mirrors());
    Encoder small(64);
    assert_false(encode_layout(&small.xdrs, layout));

    Encoder enc(1024);
    assert_true(encode_layout(&enc.xdrs, layout));
    for (std::size_t cut : {std::size_t(0), std::size_t(4), enc.len() / 2, enc.len() - 4})
        assert_false(decode_layout(enc.buf.data(), cut).has_value());
    std::vector<char> bad(enc.buf.begin(), enc.buf.begin() + enc.len());
    bad[8] = bad[9] = bad[10] = bad[11] = '\xff'; // mirror count 2^32-1
    assert_false(decode_layout(bad.data(), bad.size()).has_value());
    assert_false(decode_layout(nullptr, 8).has_value());
}

void test_numeric_owner(void**) {
    assert_int_equal(*parse_numeric_owner("0"), 0);
    assert_int_equal(*parse_numeric_owner("4294967295"), 4294967295u);
    assert_false(parse_numeric_owner("4294967296").has_value());
    assert_false(parse_numeric_owner("").has_value());
    assert_false(parse_numeric_owner("root").has_value());
    assert_false(parse_numeric_owner("12a").has_value());
    assert_false(parse_numeric_owner("-1").has_value());
    assert_false(parse_numeric_owner("1000@example.org").has_value());
}

// ---------------------------------------------------------------------------
// ff_layoutreturn4

void test_layoutreturn_round_trip(void**) {
    ReturnReport report;
    IoError e;
    e.offset = 4096;
    e.length = 8192;
    e.stateid.seqid = 3;
    e.deviceid = fleet::make_deviceid(2);
    e.status = NFS4ERR_NXIO;
    e.opnum = NFS4_OP_WRITE;
    report.errors.push_back(e);
    e.deviceid = fleet::make_deviceid(3);
    e.status = NFS4ERR_ACCESS;
    report.errors.push_back(e);
    IoStats s;
    s.deviceid = fleet::make_deviceid(2);
    s.read_ops = 5;
    s.read_bytes = 5 * 4096;
    s.write_ops = 7;
    s.write_bytes = 7ull << 32;
    report.stats.push_back(s);
    // io_info4's counts are 64 bits (RFC 7862; patch 0008): none is cut to 32 (found by
    // the fuzz target ff_xdr_bodies when IoStats kept 32 bits).
    s.read_ops = (1ull << 32) + 5;
    s.write_ops = ~0ull;
    report.stats.push_back(s);

    Encoder enc(2048);
    assert_true(encode_layoutreturn(&enc.xdrs, report));
    const std::size_t len = enc.len();

    XDR dec;
    xdrmem_create(&dec, enc.buf.data(), static_cast<u_int>(len), XDR_DECODE);
    auto back = decode_layoutreturn(&dec);
    assert_int_equal(xdr_getpos(&dec), len);
    xdr_destroy(&dec);
    assert_true(back.has_value());
    assert_int_equal(back->errors.size(), 2);
    assert_int_equal(back->errors[0].status, NFS4ERR_NXIO);
    assert_int_equal(back->errors[0].opnum, NFS4_OP_WRITE);
    assert_int_equal(back->errors[0].offset, 4096);
    assert_int_equal(back->errors[0].length, 8192);
    assert_int_equal(back->errors[0].stateid.seqid, 3);
    assert_true(back->errors[1].deviceid == fleet::make_deviceid(3));
    assert_int_equal(back->errors[1].status, NFS4ERR_ACCESS);
    assert_int_equal(back->stats.size(), 2);
    assert_int_equal(back->stats[0].read_ops, 5);
    assert_true(back->stats[1].read_ops == (1ull << 32) + 5);
    assert_true(back->stats[1].write_ops == ~0ull);
    assert_int_equal(back->stats[0].write_bytes, 7ull << 32);

    // truncated: refused
    xdrmem_create(&dec, enc.buf.data(), static_cast<u_int>(len - 8), XDR_DECODE);
    assert_false(decode_layoutreturn(&dec).has_value());
    xdr_destroy(&dec);
    // empty report: two zero counts
    char empty[8] = {};
    xdrmem_create(&dec, empty, sizeof(empty), XDR_DECODE);
    back = decode_layoutreturn(&dec);
    xdr_destroy(&dec);
    assert_true(back.has_value());
    assert_true(back->errors.empty() && back->stats.empty());
    // a hostile count
    char hostile[8] = {'\x7f', '\xff', '\xff', '\xff', 0, 0, 0, 0};
    xdrmem_create(&dec, hostile, sizeof(hostile), XDR_DECODE);
    assert_false(decode_layoutreturn(&dec).has_value());
    xdr_destroy(&dec);
    assert_false(decode_layoutreturn(nullptr).has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uaddr_ipv4),
        cmocka_unit_test(test_uaddr_ipv6),
        cmocka_unit_test(test_uaddr_refused),
        cmocka_unit_test(test_uaddr_parse),
        cmocka_unit_test(test_device_addr_round_trip),
        cmocka_unit_test(test_layout_round_trip),
        cmocka_unit_test(test_unaligned_and_empty_bodies),
        cmocka_unit_test(test_layout_wire_format),
        cmocka_unit_test(test_layout_refused),
        cmocka_unit_test(test_numeric_owner),
        cmocka_unit_test(test_layoutreturn_round_trip),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
