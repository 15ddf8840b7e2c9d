// SPDX-License-Identifier: LGPL-3.0-or-later
// The flex-files bodies as the client reads and writes them (client/flex_layout.hpp,
// client/pnfs_ops.cpp): ff_layout4 and ff_device_addr4 decoded from hand-built bytes,
// universal addresses, the ff_layoutreturn4 and LAYOUTERROR4args encodings checked field by
// field, and the pNFS ops of Compound / CompoundResult against Ganesha's own XDR.
#include "client/compound.hpp"
#include "client/flex_layout.hpp"
#include "client/xdr_stream.hpp"
#include "cmocka_cpp.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <string>

using namespace flexfiles::client;

namespace {

DeviceId4 device(uint8_t last) {
    DeviceId4 d{};
    d[0] = 1;
    d[15] = static_cast<char>(last);
    return d;
}

stateid4 stateid(uint32_t seqid, char first) {
    stateid4 s{};
    s.seqid = seqid;
    s.other[0] = first;
    s.other[11] = static_cast<char>(first + 1);
    return s;
}

bool put_stateid(XDR* x, const stateid4& s) {
    return xdr_put_u32(x, s.seqid) && xdr_put_raw(x, std::span<const char>(s.other, 12));
}

bool put_string(XDR* x, const std::string& s) {
    return xdr_put_opaque(x, std::span<const char>(s.data(), s.size()));
}

// One ff_data_server4, written by hand from RFC 8435 section 5.1.
bool put_ds(XDR* x, uint8_t dev, uint32_t efficiency, const stateid4& s,
            const std::vector<std::vector<char>>& fhs, const std::string& user,
            const std::string& group) {
    const DeviceId4 d = device(dev);
    if (!xdr_put_raw(x, d) || !xdr_put_u32(x, efficiency) || !put_stateid(x, s) ||
        !xdr_put_u32(x, static_cast<uint32_t>(fhs.size()))) {
        return false;
    }
    for (const auto& fh : fhs) {
        if (!xdr_put_opaque(x, fh)) {
            return false;
        }
    }
    return put_string(x, user) && put_string(x, group);
}

std::vector<char> hand_built_layout() {
    return xdr_encode(512, "ff_layout4", [](XDR* x) {
        return xdr_put_u64(x, 1u << 20) && xdr_put_u32(x, 2) && // stripe unit, 2 mirrors
               xdr_put_u32(x, 1) &&
               put_ds(x, 1, 5, stateid(0, 0), {{1, 2, 3, 4, 5}}, "1000001", "1000002") &&
               xdr_put_u32(x, 1) &&
               put_ds(x, 3, 6, stateid(7, 'a'), {{9, 8, 7, 6, 5, 4, 3, 2}, {42}}, "1000003",
                      "1000004") &&
               xdr_put_u32(x, FF_FLAGS_NO_IO_THRU_MDS) && xdr_put_u32(x, 7); // flags, hint
    });
}

void test_ff_layout4_decode(void**) {
    const std::vector<char> body = hand_built_layout();
    const FlexLayout l = decode_ff_layout4(body);
    assert_int_equal(l.stripe_unit, 1u << 20);
    assert_int_equal(l.flags, FF_FLAGS_NO_IO_THRU_MDS);
    assert_int_equal(l.stats_collect_hint, 7);
    assert_int_equal(l.mirrors.size(), 2);
    assert_int_equal(l.data_server_count(), 2);

    const FlexDataServer& a = l.mirrors[0].data_servers.at(0);
    assert_true(a.deviceid == device(1));
    assert_int_equal(a.efficiency, 5);
    assert_int_equal(a.stateid.seqid, 0);
    assert_int_equal(a.fh_versions.size(), 1);
    assert_true(a.fh() == (FileHandle{{1, 2, 3, 4, 5}}));
    assert_string_equal(a.user.c_str(), "1000001");
    assert_string_equal(a.group.c_str(), "1000002");
    assert_int_equal(*a.uid(), 1000001);
    assert_int_equal(*a.gid(), 1000002);
    const AuthSys cred = a.credentials();
    assert_int_equal(cred.uid, 1000001);
    assert_int_equal(cred.gid, 1000002);

    const FlexDataServer& b = l.mirrors[1].data_servers.at(0);
    assert_true(b.deviceid == device(3));
    assert_int_equal(b.stateid.seqid, 7);
    assert_int_equal(b.stateid.other[0], 'a');
    assert_int_equal(b.stateid.other[11], 'b');
    assert_int_equal(b.fh_versions.size(), 2);
    assert_true(b.fh_versions[1] == (FileHandle{{42}}));
    assert_false(l.describe().empty());
}

void test_ff_layout4_bad_input(void**) {
    const std::vector<char> body = hand_built_layout();
    // Truncated anywhere before the flags: XdrError.
    for (std::size_t cut = 0; cut + 4 < body.size(); ++cut) {
        bool threw = false;
        try {
            decode_ff_layout4(std::span<const char>(body.data(), cut));
        } catch (const XdrError&) {
            threw = true;
        }
        assert_true(threw);
    }
    // Bytes after the layout.
    std::vector<char> longer = body;
    longer.insert(longer.end(), 8, 0);
    bool threw = false;
    try {
        decode_ff_layout4(longer);
    } catch (const XdrError& e) {
        threw = std::string(e.what()).find("follow") != std::string::npos;
    }
    assert_true(threw);
    // A hostile mirror count.
    std::vector<char> hostile = body;
    std::memset(hostile.data() + 8, 0xff, 4);
    threw = false;
    try {
        decode_ff_layout4(hostile);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
    // Non-numeric owner strings: no AUTH_SYS credentials.
    FlexDataServer ds;
    ds.user = "alice";
    ds.group = "12";
    assert_false(ds.uid().has_value());
    threw = false;
    try {
        ds.credentials();
    } catch (const std::invalid_argument&) {
        threw = true;
    }
    assert_true(threw);
    ds.user = "4294967296"; // one past uint32
    assert_false(ds.uid().has_value());
    ds.user = "";
    assert_false(ds.uid().has_value());
}

void test_universal_addresses(void**) {
    auto a = parse_universal_address("tcp", "127.0.0.1.8.1");
    assert_true(a.has_value());
    assert_string_equal(a->host.c_str(), "127.0.0.1");
    assert_int_equal(a->port, 2049);
    a = parse_universal_address("tcp", "127.1.0.10.78.80");
    assert_true(a && a->host == "127.1.0.10" && a->port == 20048);
    a = parse_universal_address("tcp6", "::1.0.111");
    assert_true(a && a->host == "::1" && a->port == 111);
    a = parse_universal_address("tcp6", "fe80::1:2.255.255");
    assert_true(a && a->host == "fe80::1:2" && a->port == 65535);
    a = parse_universal_address("udp", "10.0.0.1.0.0");
    assert_true(a && a->port == 0);

    for (const char* bad :
         {"", "127.0.0.1", "127.0.0.1.8", "127.0.0.1.256.1", "127.0.0.1.8.x", "127.0.0.1.8.1.",
          ".8.1", "host.example.8.1", "127.0.0.1..1", "127.0.0.1.-1.1", "127.0.0.1.0008.1"}) {
        assert_false(parse_universal_address("tcp", bad).has_value());
    }
    assert_false(parse_universal_address("tcp6", "127.0.0.1.8.1").has_value());
    assert_false(parse_universal_address("tcp", "::1.8.1").has_value());
    assert_false(parse_universal_address("rdma", "127.0.0.1.8.1").has_value());

    assert_string_equal(format_universal_address("127.0.0.1", 2049).c_str(), "127.0.0.1.8.1");
    const auto back = parse_universal_address("tcp", format_universal_address("10.1.2.3", 40000));
    assert_true(back && back->host == "10.1.2.3" && back->port == 40000);
}

std::vector<char> hand_built_device() {
    return xdr_encode(256, "ff_device_addr4", [](XDR* x) {
        return xdr_put_u32(x, 3) && put_string(x, "tcp") && put_string(x, "127.0.0.10.8.1") &&
               put_string(x, "tcp6") && put_string(x, "::1.8.2") && put_string(x, "tcp") &&
               put_string(x, "not-an-address") && xdr_put_u32(x, 2) && // versions
               xdr_put_u32(x, 4) && xdr_put_u32(x, 1) && xdr_put_u32(x, 65536) &&
               xdr_put_u32(x, 65536) && xdr_put_u32(x, 1) && // NFSv4.1, tight
               xdr_put_u32(x, 3) && xdr_put_u32(x, 0) && xdr_put_u32(x, 1u << 20) &&
               xdr_put_u32(x, 512u << 10) && xdr_put_u32(x, 0); // NFSv3, loose
    });
}

void test_ff_device_addr4_decode(void**) {
    const std::vector<char> body = hand_built_device();
    const FlexDeviceAddr d = decode_ff_device_addr4(body);
    assert_int_equal(d.netaddrs.size(), 3);
    assert_string_equal(d.netaddrs[0].netid.c_str(), "tcp");
    assert_string_equal(d.netaddrs[0].uaddr.c_str(), "127.0.0.10.8.1");
    assert_true(d.netaddrs[0].address && d.netaddrs[0].address->port == 2049);
    assert_true(d.netaddrs[1].address && d.netaddrs[1].address->host == "::1" &&
                d.netaddrs[1].address->port == 2050);
    assert_false(d.netaddrs[2].address.has_value());
    assert_int_equal(d.versions.size(), 2);
    assert_int_equal(d.versions[0].version, 4);
    assert_true(d.versions[0].tightly_coupled);
    const FlexDeviceVersion* v3 = d.nfs3();
    assert_non_null(v3);
    assert_int_equal(v3->minor_version, 0);
    assert_int_equal(v3->rsize, 1u << 20);
    assert_int_equal(v3->wsize, 512u << 10);
    assert_false(v3->tightly_coupled);
    const UniversalAddress tcp = d.tcp_address();
    assert_string_equal(tcp.host.c_str(), "127.0.0.10");
    assert_false(d.describe().empty());

    // Only a UDP address: nothing to connect to.
    const std::vector<char> udp = xdr_encode(128, "udp only", [](XDR* x) {
        return xdr_put_u32(x, 1) && put_string(x, "udp") && put_string(x, "127.0.0.1.8.1") &&
               xdr_put_u32(x, 0);
    });
    const FlexDeviceAddr u = decode_ff_device_addr4(udp);
    assert_null(u.nfs3());
    bool threw = false;
    try {
        u.tcp_address();
    } catch (const std::runtime_error& e) {
        threw = std::string(e.what()).find("udp") != std::string::npos;
    }
    assert_true(threw);

    for (std::size_t cut = 0; cut < body.size(); ++cut) {
        threw = false;
        try {
            decode_ff_device_addr4(std::span<const char>(body.data(), cut));
        } catch (const XdrError&) {
            threw = true;
        }
        assert_true(threw);
    }
}

FlexLayoutReturn sample_return() {
    FlexLayoutReturn r;
    FlexIoError e;
    e.offset = 4096;
    e.length = 8192;
    e.stateid = stateid(2, 'L');
    e.errors.push_back(DeviceError{device(1), NFS4ERR_ACCESS, NFS4_OP_WRITE});
    e.errors.push_back(DeviceError{device(2), NFS4ERR_NXIO, NFS4_OP_READ});
    r.ioerr_report.push_back(e);
    FlexIoStats s;
    s.offset = 0;
    s.length = NFS4_UINT64_MAX;
    s.stateid = stateid(2, 'L');
    s.read_count = 3;
    s.read_bytes = 3000;
    s.write_count = 5000000000ull; // over 32 bits
    s.write_bytes = 1ull << 40;
    s.deviceid = device(2);
    s.netid = "tcp";
    s.uaddr = "127.0.0.11.8.1";
    s.fh = FileHandle{{1, 2, 3}};
    s.read.ops_requested = 3;
    s.read.bytes_completed = 3000;
    s.read.total_busy_time = NfsTime{1, 500};
    s.write.ops_completed = 11;
    s.duration = NfsTime{9, 10};
    s.local = true;
    r.iostats_report.push_back(s);
    return r;
}

void test_ff_layoutreturn4_rfc(void**) {
    const std::vector<char> body = encode_ff_layoutreturn4(sample_return());
    // Read it back by hand, field by field (RFC 8435 section 9, RFC 7862 io_info4).
    XdrDecoder d(body);
    uint32_t u = 0;
    uint64_t v = 0;
    std::span<const char> raw;
    assert_true(d.u32(u) && u == 1);    // one ff_ioerr4
    assert_true(d.u64(v) && v == 4096); // ffie_offset
    assert_true(d.u64(v) && v == 8192); // ffie_length
    assert_true(d.u32(u) && u == 2 && d.take(12, raw) && raw[0] == 'L');
    assert_true(d.u32(u) && u == 2); // two device_error4
    assert_true(d.take(16, raw) && raw[15] == 1);
    assert_true(d.u32(u) && u == NFS4ERR_ACCESS && d.u32(u) && u == NFS4_OP_WRITE);
    assert_true(d.take(16, raw) && raw[15] == 2);
    assert_true(d.u32(u) && u == NFS4ERR_NXIO && d.u32(u) && u == NFS4_OP_READ);
    assert_true(d.u32(u) && u == 1); // one ff_iostats4
    assert_true(d.u64(v) && v == 0 && d.u64(v) && v == NFS4_UINT64_MAX);
    assert_true(d.u32(u) && u == 2 && d.take(12, raw));
    assert_true(d.u64(v) && v == 3 && d.u64(v) && v == 3000); // read: 64-bit count
    assert_true(d.u64(v) && v == 5000000000ull && d.u64(v) && v == 1ull << 40);
    assert_true(d.take(16, raw) && raw[15] == 2); // ffis_deviceid
    std::string s;
    assert_true(d.string(s, 64) && s == "tcp" && d.string(s, 64) && s == "127.0.0.11.8.1");
    std::vector<char> fh;
    assert_true(d.opaque(fh, 128) && fh == (std::vector<char>{1, 2, 3}));
    // ffl_read: 5 counters and 2 times
    assert_true(d.u64(v) && v == 3);
    for (int i = 0; i < 2; ++i) {
        assert_true(d.u64(v) && v == 0);
    }
    assert_true(d.u64(v) && v == 3000 && d.u64(v) && v == 0);
    assert_true(d.u64(v) && v == 1 && d.u32(u) && u == 500);
    assert_true(d.u64(v) && v == 0 && d.u32(u) && u == 0);
    // ffl_write
    assert_true(d.u64(v) && v == 0 && d.u64(v) && v == 0 && d.u64(v) && v == 11);
    for (int i = 0; i < 2; ++i) {
        assert_true(d.u64(v) && v == 0);
    }
    for (int i = 0; i < 2; ++i) {
        assert_true(d.u64(v) && v == 0 && d.u32(u) && u == 0);
    }
    assert_true(d.u64(v) && v == 9 && d.u32(u) && u == 10); // ffl_duration
    assert_true(d.u32(u) && u == 1);                        // ffl_local
    assert_int_equal(d.remaining(), 0);

    // Empty reports: two empty arrays.
    assert_int_equal(encode_ff_layoutreturn4({}).size(), 8);
}

void test_ff_layoutreturn4_io_info4_counts(void**) {
    FlexLayoutReturn r = sample_return();
    r.iostats_report[0].write_count = 12;
    const std::vector<char> g = encode_ff_layoutreturn4(r, IoInfoCount::ganesha43_u32);
    const std::vector<char> rfc = encode_ff_layoutreturn4(r);
    assert_int_equal(rfc.size() - g.size(), 8); // two io_info4 counts, 4 bytes each

    // Ganesha's decoder, with patch 0008 (io_info4.ii_count is 64 bits, RFC 7862), reads
    // the RFC encoding exactly.
    ff_layoutreturn4 wire{};
    XdrDecoder d(rfc);
    assert_true(xdr_ff_layoutreturn4(d.xdr(), &wire));
    assert_int_equal(d.remaining(), 0);
    assert_int_equal(wire.fflr_ioerr_report.fflr_ioerr_report_len, 1);
    assert_int_equal(wire.fflr_ioerr_report.fflr_ioerr_report_val[0].ffie_errors.ffie_errors_len,
                     2);
    assert_int_equal(wire.fflr_iostats_report.fflr_iostats_report_len, 1);
    const ff_iostats4& st = wire.fflr_iostats_report.fflr_iostats_report_val[0];
    assert_int_equal(st.ffis_read.ii_count, 3);
    assert_int_equal(st.ffis_write.ii_count, 12);
    assert_true(st.ffis_write.ii_bytes == 1ull << 40);
    assert_int_equal(st.ffis_deviceid[15], 2);
    assert_int_equal(st.ffis_layoutupdate.ffl_local, 1);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layoutreturn4), &wire);

    // A count over 32 bits cannot be written in stock Ganesha 4.3's 32-bit dialect.
    bool threw = false;
    try {
        encode_ff_layoutreturn4(sample_return(), IoInfoCount::ganesha43_u32);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);

    // And that dialect no longer reads back as written.
    ff_layoutreturn4 misread{};
    XdrDecoder m(g);
    const bool decoded =
        xdr_ff_layoutreturn4(m.xdr(), &misread) && m.remaining() == 0 &&
        misread.fflr_iostats_report.fflr_iostats_report_len == 1 &&
        misread.fflr_iostats_report.fflr_iostats_report_val[0].ffis_write.ii_count == 12;
    assert_false(decoded);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layoutreturn4), &misread);
}

void test_layouterror_args(void**) {
    const std::vector<DeviceError> errors = {{device(1), NFS4ERR_ACCESS, NFS4_OP_WRITE},
                                             {device(2), NFS4ERR_NXIO, NFS4_OP_READ}};
    const std::vector<char> a = encode_layouterror_args(10, 20, stateid(4, 'E'), errors);
    assert_int_equal(a.size(), 8 + 8 + 16 + 4 + 2 * (16 + 4 + 4));
    XdrDecoder d(a);
    uint64_t v;
    uint32_t u;
    std::span<const char> raw;
    assert_true(d.u64(v) && v == 10 && d.u64(v) && v == 20);
    assert_true(d.u32(u) && u == 4 && d.take(12, raw) && raw[0] == 'E');
    assert_true(d.u32(u) && u == 2); // lea_errors<> count (Ganesha 4.3 lacks it)
    assert_true(d.take(16, raw) && raw[15] == 1 && d.u32(u) && u == NFS4ERR_ACCESS && d.u32(u) &&
                u == NFS4_OP_WRITE);
    assert_true(d.take(16, raw) && raw[15] == 2 && d.u32(u) && u == NFS4ERR_NXIO && d.u32(u) &&
                u == NFS4_OP_READ);

    // In a compound: op 64 followed by exactly these bytes, as the last op.
    Compound c;
    c.no_sequence().putfh(FileHandle{{7}}).layouterror(10, 20, stateid(4, 'E'), errors);
    const std::vector<char> enc = c.encode(2);
    assert_memory_equal(enc.data() + enc.size() - a.size(), a.data(), a.size());
    uint32_t op;
    std::memcpy(&op, enc.data() + enc.size() - a.size() - 4, 4);
    assert_int_equal(ntohl(op), NFS4_OP_LAYOUTERROR);
    assert_true(c.label(1).find("LAYOUTERROR") == 0);
}

// LAYOUTSTATS4args as RFC 7862 has them, read back with Ganesha's xdr_LAYOUTSTATS4args
// (series 0011 adds lsa_deviceid) and the body with its xdr_ff_layoutupdate4.
void test_layoutstats_args(void**) {
    const FlexIoStats st = sample_return().iostats_report[0];
    const std::vector<char> a = encode_layoutstats_args(st);
    LAYOUTSTATS4args args{};
    XdrDecoder d(a);
    assert_true(xdr_LAYOUTSTATS4args(d.xdr(), &args));
    assert_int_equal(d.remaining(), 0);
    assert_true(args.lsa_offset == 0 && args.lsa_length == NFS4_UINT64_MAX);
    assert_int_equal(args.lsa_stateid.seqid, 2);
    assert_true(args.lsa_read.ii_count == 3 && args.lsa_read.ii_bytes == 3000);
    assert_true(args.lsa_write.ii_count == 5000000000ull && args.lsa_write.ii_bytes == 1ull << 40);
    assert_int_equal(args.lsa_deviceid[15], 2);
    assert_int_equal(args.lsa_layoutupdate.lou_type, LAYOUT4_FLEX_FILES);

    ff_layoutupdate4 body{};
    XdrDecoder b(std::span<const char>(args.lsa_layoutupdate.lou_body.lou_body_val,
                                       args.lsa_layoutupdate.lou_body.lou_body_len));
    assert_true(xdr_ff_layoutupdate4(b.xdr(), &body));
    assert_int_equal(b.remaining(), 0);
    assert_string_equal(body.ffl_addr.r_addr, "127.0.0.11.8.1");
    assert_int_equal(body.ffl_fhandle.nfs_fh4_len, 3);
    assert_true(body.ffl_read.ffil_ops_requested == 3 && body.ffl_duration.seconds == 9);
    assert_int_equal(body.ffl_local, 1);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layoutupdate4), &body);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_LAYOUTSTATS4args), &args);

    // In a compound: op 65 followed by exactly these bytes.
    Compound c;
    c.no_sequence().putfh(FileHandle{{7}}).layoutstats(st);
    const std::vector<char> enc = c.encode(2);
    assert_memory_equal(enc.data() + enc.size() - a.size(), a.data(), a.size());
    uint32_t op;
    std::memcpy(&op, enc.data() + enc.size() - a.size() - 4, 4);
    assert_int_equal(ntohl(op), NFS4_OP_LAYOUTSTATS);
    assert_true(c.label(1).find("LAYOUTSTATS") == 0);
}

// The typed pNFS ops, read back with Ganesha's xdr_COMPOUND4args.
void test_compound_pnfs_args(void**) {
    LayoutGetArgs g;
    g.iomode = LAYOUTIOMODE4_READ;
    g.stateid = stateid(1, 'O');
    g.maxcount = 12345;
    LayoutCommitArgs lc;
    lc.stateid = stateid(3, 'L');
    lc.last_write_offset = 4194303;
    lc.time_modify = nfstime4{1700000000, 42};
    LayoutReturnArgs lr;
    lr.stateid = stateid(3, 'L');
    lr.body = encode_ff_layoutreturn4({});
    Compound c;
    c.no_sequence()
        .putfh(FileHandle{{1, 2, 3}})
        .layoutget(g)
        .getdeviceinfo(device(2), LAYOUT4_FLEX_FILES, 999, 1u << NOTIFY_DEVICEID4_CHANGE)
        .layoutcommit(lc)
        .layoutreturn(lr);
    const std::vector<char> enc = c.encode(2);

    COMPOUND4args back{};
    XdrDecoder d(enc);
    assert_true(xdr_COMPOUND4args(d.xdr(), &back));
    assert_int_equal(d.remaining(), 0);
    assert_int_equal(back.argarray.argarray_len, 5);
    const nfs_argop4* ops = back.argarray.argarray_val;
    const LAYOUTGET4args& lg = ops[1].nfs_argop4_u.oplayoutget;
    assert_int_equal(ops[1].argop, NFS4_OP_LAYOUTGET);
    assert_int_equal(lg.loga_layout_type, LAYOUT4_FLEX_FILES);
    assert_int_equal(lg.loga_iomode, LAYOUTIOMODE4_READ);
    assert_true(lg.loga_offset == 0 && lg.loga_length == NFS4_UINT64_MAX);
    assert_int_equal(lg.loga_maxcount, 12345);
    assert_int_equal(lg.loga_stateid.other[0], 'O');
    const GETDEVICEINFO4args& gd = ops[2].nfs_argop4_u.opgetdeviceinfo;
    assert_int_equal(gd.gdia_device_id[15], 2);
    assert_int_equal(gd.gdia_maxcount, 999);
    assert_int_equal(gd.gdia_notify_types.bitmap4_len, 1);
    assert_int_equal(gd.gdia_notify_types.map[0], 1u << NOTIFY_DEVICEID4_CHANGE);
    const LAYOUTCOMMIT4args& lca = ops[3].nfs_argop4_u.oplayoutcommit;
    assert_true(lca.loca_last_write_offset.no_newoffset);
    assert_true(lca.loca_last_write_offset.newoffset4_u.no_offset == 4194303);
    assert_true(lca.loca_time_modify.nt_timechanged);
    assert_int_equal(lca.loca_time_modify.newtime4_u.nt_time.nseconds, 42);
    assert_int_equal(lca.loca_layoutupdate.lou_type, LAYOUT4_FLEX_FILES);
    assert_int_equal(lca.loca_layoutupdate.lou_body.lou_body_len, 0);
    const LAYOUTRETURN4args& lra = ops[4].nfs_argop4_u.oplayoutreturn;
    assert_int_equal(lra.lora_iomode, LAYOUTIOMODE4_ANY);
    assert_int_equal(lra.lora_layoutreturn.lr_returntype, LAYOUTRETURN4_FILE);
    const layoutreturn_file4& f = lra.lora_layoutreturn.layoutreturn4_u.lr_layout;
    assert_int_equal(f.lrf_stateid.seqid, 3);
    assert_int_equal(f.lrf_body.lrf_body_len, 8);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_COMPOUND4args), &back);
}

// A COMPOUND4res as a server would send it: PUTFH OK, then `ops`.
std::vector<char> reply(uint32_t status, uint32_t nops, const std::function<bool(XDR*)>& ops) {
    return xdr_encode(1024, "COMPOUND4res", [&](XDR* x) {
        return xdr_put_u32(x, status) && xdr_put_u32(x, 0) && xdr_put_u32(x, nops + 1) &&
               xdr_put_u32(x, NFS4_OP_PUTFH) && xdr_put_u32(x, NFS4_OK) && ops(x);
    });
}

void test_compound_pnfs_results(void**) {
    const std::vector<char> layout = hand_built_layout();
    CompoundResult r = decode_compound_reply(
        reply(NFS4_OK, 1,
              [&](XDR* x) {
                  return xdr_put_u32(x, NFS4_OP_LAYOUTGET) && xdr_put_u32(x, NFS4_OK) &&
                         xdr_put_u32(x, 1) &&                                    // return on close
                         put_stateid(x, stateid(1, 'Y')) && xdr_put_u32(x, 1) && // one layout4
                         xdr_put_u64(x, 0) && xdr_put_u64(x, NFS4_UINT64_MAX) &&
                         xdr_put_u32(x, LAYOUTIOMODE4_RW) && xdr_put_u32(x, LAYOUT4_FLEX_FILES) &&
                         xdr_put_opaque(x, layout);
              }),
        0);
    assert_true(r.error.empty());
    const FlexLayout l = decode_layoutget(r.layoutget(1));
    assert_true(l.return_on_close);
    assert_int_equal(l.stateid.other[0], 'Y');
    assert_int_equal(l.iomode, LAYOUTIOMODE4_RW);
    assert_true(l.length == NFS4_UINT64_MAX);
    assert_int_equal(l.mirrors.size(), 2);

    // A segment of another type only: no flex-files layout.
    CompoundResult other = decode_compound_reply(
        reply(NFS4_OK, 1,
              [&](XDR* x) {
                  return xdr_put_u32(x, NFS4_OP_LAYOUTGET) && xdr_put_u32(x, NFS4_OK) &&
                         xdr_put_u32(x, 0) && put_stateid(x, stateid(1, 'Y')) &&
                         xdr_put_u32(x, 1) && xdr_put_u64(x, 0) && xdr_put_u64(x, 10) &&
                         xdr_put_u32(x, LAYOUTIOMODE4_RW) &&
                         xdr_put_u32(x, LAYOUT4_NFSV4_1_FILES) && xdr_put_opaque(x, layout);
              }),
        0);
    bool threw = false;
    try {
        decode_layoutget(other.layoutget(1));
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);

    // LAYOUTGET refused: the status, and no typed result.
    CompoundResult refused =
        decode_compound_reply(reply(NFS4ERR_LAYOUTUNAVAILABLE, 1,
                                    [](XDR* x) {
                                        return xdr_put_u32(x, NFS4_OP_LAYOUTGET) &&
                                               xdr_put_u32(x, NFS4ERR_LAYOUTUNAVAILABLE);
                                    }),
                              0);
    assert_true(refused.status_of(1) == NFS4ERR_LAYOUTUNAVAILABLE);
    threw = false;
    try {
        refused.layoutget(1);
    } catch (const NfsError& e) {
        threw = e.status() == NFS4ERR_LAYOUTUNAVAILABLE;
    }
    assert_true(threw);

    // GETDEVICEINFO: a device, and NFS4ERR_TOOSMALL with the size needed.
    const std::vector<char> dev = hand_built_device();
    CompoundResult gd =
        decode_compound_reply(reply(NFS4_OK, 1,
                                    [&](XDR* x) {
                                        return xdr_put_u32(x, NFS4_OP_GETDEVICEINFO) &&
                                               xdr_put_u32(x, NFS4_OK) &&
                                               xdr_put_u32(x, LAYOUT4_FLEX_FILES) &&
                                               xdr_put_opaque(x, dev) && xdr_put_u32(x, 0);
                                    }),
                              0);
    const FlexDeviceAddr a = decode_getdeviceinfo(gd.getdeviceinfo(1));
    assert_int_equal(a.netaddrs.size(), 3);
    assert_false(gd.getdeviceinfo_mincount(1).has_value());
    CompoundResult small =
        decode_compound_reply(reply(NFS4ERR_TOOSMALL, 1,
                                    [](XDR* x) {
                                        return xdr_put_u32(x, NFS4_OP_GETDEVICEINFO) &&
                                               xdr_put_u32(x, NFS4ERR_TOOSMALL) &&
                                               xdr_put_u32(x, 8192);
                                    }),
                              0);
    assert_true(small.getdeviceinfo_mincount(1) == 8192u);

    // LAYOUTCOMMIT with a new size; LAYOUTRETURN with and without a stateid.
    CompoundResult lc = decode_compound_reply(
        reply(NFS4_OK, 3,
              [](XDR* x) {
                  return xdr_put_u32(x, NFS4_OP_LAYOUTCOMMIT) && xdr_put_u32(x, NFS4_OK) &&
                         xdr_put_u32(x, 1) && xdr_put_u64(x, 4194304) &&
                         xdr_put_u32(x, NFS4_OP_LAYOUTRETURN) && xdr_put_u32(x, NFS4_OK) &&
                         xdr_put_u32(x, 1) && put_stateid(x, stateid(9, 'R')) &&
                         xdr_put_u32(x, NFS4_OP_LAYOUTRETURN) && xdr_put_u32(x, NFS4_OK) &&
                         xdr_put_u32(x, 0);
              }),
        0);
    assert_true(lc.error.empty());
    assert_true(lc.layoutcommit_newsize(1) == 4194304u);
    const auto kept = lc.layoutreturn_stateid(2);
    assert_true(kept.has_value() && kept->seqid == 9);
    assert_false(lc.layoutreturn_stateid(3).has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ff_layout4_decode),
        cmocka_unit_test(test_ff_layout4_bad_input),
        cmocka_unit_test(test_universal_addresses),
        cmocka_unit_test(test_ff_device_addr4_decode),
        cmocka_unit_test(test_ff_layoutreturn4_rfc),
        cmocka_unit_test(test_ff_layoutreturn4_io_info4_counts),
        cmocka_unit_test(test_layouterror_args),
        cmocka_unit_test(test_layoutstats_args),
        cmocka_unit_test(test_compound_pnfs_args),
        cmocka_unit_test(test_compound_pnfs_results),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
