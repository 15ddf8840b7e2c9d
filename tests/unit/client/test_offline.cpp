// SPDX-License-Identifier: LGPL-3.0-or-later
// The client library without a server: op and status names, fattr4 encode/decode, COMPOUND
// replies (hostile ones included), raw ops, and the LAYOUT_WCC body.
#include "client/compound.hpp"
#include "client/layout_wcc.hpp"
#include "client/nfs4_names.hpp"
#include "client/xdr_stream.hpp"
#include "cmocka_cpp.hpp"
#include "nfs4_layout_wcc_xdr.h"

#include <cstring>
#include <random>
#include <string>

using namespace flexfiles::client;

namespace {

void test_names(void**) {
    assert_string_equal(op_name(3).c_str(), "ACCESS");
    assert_string_equal(op_name(53).c_str(), "SEQUENCE");
    assert_string_equal(op_name(77).c_str(), "LAYOUT_WCC");
    assert_string_equal(op_name(64).c_str(), "LAYOUTERROR");
    assert_string_equal(op_name(10044).c_str(), "ILLEGAL");
    assert_string_equal(op_name(76).c_str(), "OP_76");
    assert_string_equal(status_name(0).c_str(), "NFS4_OK");
    assert_string_equal(status_name(10020).c_str(), "NFS4ERR_NOFILEHANDLE");
    assert_string_equal(status_name(11001).c_str(), "NFS4ERR_REPLAY");
    assert_string_equal(status_name(10073).c_str(), "NFS4ERR_10073");
    for (uint32_t s = 0; s < 12000; ++s) {
        assert_false(status_name(s).empty());
    }
}

Fattr every_kind() {
    Fattr a;
    a.type = NF4REG;
    a.size = 1234567890123ull;
    a.mode = 0640;
    a.numlinks = 3;
    a.owner = "alice@example";
    a.owner_group = "staff@example";
    a.space_used = 4096;
    a.time_access = NfsTime{-5, 999999999};
    a.time_modify = NfsTime{1700000000, 1};
    a.time_metadata = NfsTime{1700000001, 2};
    a.fsid = Fsid{7, 9};
    a.link_support = true;
    a.filehandle = std::vector<char>{1, 2, 3};
    a.time_modify_set = SetTime{true, {5, 6}};
    a.time_access_set = SetTime{};
    a.fs_layout_types = std::vector<uint32_t>{4, 1};
    a.supported_attrs = AttrMask{1, 4, 33, 75};
    return a;
}

void test_fattr_round_trip(void**) {
    const Fattr a = every_kind();
    const EncodedFattr e = encode_fattr4(a);
    const Fattr b = decode_fattr4(e.view());
    assert_true(b.type == a.type && b.size == a.size && b.mode == a.mode);
    assert_true(b.owner == a.owner && b.owner_group == a.owner_group);
    assert_true(b.time_access == a.time_access && b.time_modify == a.time_modify);
    assert_true(b.fsid == a.fsid && b.filehandle == a.filehandle);
    assert_true(b.time_modify_set == a.time_modify_set && b.time_access_set == a.time_access_set);
    assert_true(b.fs_layout_types == a.fs_layout_types && b.supported_attrs == a.supported_attrs);
    assert_true(b.mask() == a.mask());
    assert_string_equal(format_attr(FATTR4_MODE, b).c_str(), "0640");
}

void test_fattr_bad_input(void**) {
    const EncodedFattr e = encode_fattr4(every_kind());
    // Every truncation is an XdrError, never a crash.
    std::size_t thrown = 0;
    for (std::size_t cut = 0; cut < e.values.size(); ++cut) {
        try {
            decode_fattr4(e.mask, e.values.data(), cut);
        } catch (const XdrError&) {
            thrown++;
        }
    }
    assert_int_equal(thrown, e.values.size());
    // Trailing bytes.
    std::vector<char> longer = e.values;
    longer.resize(longer.size() + 4);
    bool threw = false;
    try {
        decode_fattr4(e.mask, longer.data(), longer.size());
    } catch (const XdrError& x) {
        threw = std::string(x.what()).find("bytes left") != std::string::npos;
    }
    assert_true(threw);
    // An attribute outside the table cannot be skipped.
    threw = false;
    try {
        decode_fattr4(AttrMask{12}, longer.data(), 8);
    } catch (const XdrError& x) {
        threw = std::string(x.what()).find("attribute 12") != std::string::npos;
    }
    assert_true(threw);
    // A bool that is neither 0 nor 1.
    const std::vector<char> two = {0, 0, 0, 2};
    threw = false;
    try {
        decode_fattr4(AttrMask{FATTR4_LINK_SUPPORT}, two.data(), two.size());
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
}

void test_garbage_replies(void**) {
    std::mt19937 rng(42);
    int errors = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<char> junk(rng() % 200);
        for (auto& c : junk) {
            c = static_cast<char>(rng() % 4 == 0 ? rng() : 0);
        }
        CompoundResult r = decode_compound_reply(std::move(junk), 0);
        errors += r.error.empty() ? 0 : 1;
    }
    assert_true(errors > 0);
}

std::vector<char> reply_with(uint32_t first_op) {
    return xdr_encode(64, "reply", [&](XDR* x) {
        return xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 2) &&
               xdr_put_u32(x, first_op) && xdr_put_u32(x, 0) && xdr_put_u32(x, 24) &&
               xdr_put_u32(x, 0);
    });
}

void test_unknown_results(void**) {
    // An unknown op with NFS4_OK that is not the last result: its length is unknown.
    CompoundResult r = decode_compound_reply(reply_with(99), 0);
    assert_false(r.error.empty());
    assert_int_equal(r.ops.size(), 1);
    assert_int_equal(r.ops[0].opnum, 99);
    // Op 77's result is a bare status: decoding continues after it.
    CompoundResult w = decode_compound_reply(reply_with(77), 0);
    assert_true(w.error.empty());
    assert_int_equal(w.ops.size(), 2);
    assert_int_equal(w.ops[1].opnum, 24);
    assert_true(w.ok());
    assert_int_equal(w.raw_result(0).size(), 4);
}

void test_raw_ops_byte_exact(void**) {
    Compound c;
    const char args[] = {1, 2, 3};
    c.no_sequence().raw(76, std::span<const char>(args, 3));
    const std::vector<char> enc = c.encode(2);
    assert_int_equal(enc.size(), 4 + 4 + 4 + 4 + 3);
    assert_memory_equal(enc.data() + enc.size() - 3, args, 3);
}

void test_layout_wcc_body(void**) {
    FlexLayoutWcc body;
    DataServerWcc ds;
    ds.deviceid[0] = 7;
    ds.deviceid[15] = 9;
    ds.stateid.seqid = 3;
    ds.stateid.other[0] = 1;
    ds.fh_versions.push_back(FileHandle{{1, 2, 3, 4, 5}});
    ds.attrs.size = 4096;
    ds.attrs.space_used = 8192;
    ds.attrs.mode = 0640;
    ds.attrs.owner = "1000";
    ds.attrs.owner_group = "1000";
    ds.attrs.time_access = NfsTime{1700000000, 1};
    ds.attrs.time_modify = NfsTime{1700000001, 2};
    ds.attrs.time_metadata = NfsTime{1700000002, 3};
    assert_true(ds.attrs.mask() == layout_wcc_table1_attrs());
    body.mirrors.push_back(MirrorWcc{{ds}});
    body.mirrors.push_back(MirrorWcc{});
    const std::vector<char> bytes = encode_flex_layout_wcc(body);

    ff_layout_wcc4 back;
    assert_true(ff_layout_wcc4_decode(bytes.data(), bytes.size(), &back));
    assert_int_equal(back.fflw_mirrors.fflw_mirrors_len, 2);
    const ff_data_server_wcc4& d0 =
        back.fflw_mirrors.fflw_mirrors_val[0].ffmw_data_servers.ffmw_data_servers_val[0];
    assert_int_equal(d0.ffdsw_deviceid[15], 9);
    assert_int_equal(d0.ffdsw_stateid.seqid, 3);
    assert_int_equal(d0.ffdsw_fh_vers.ffdsw_fh_vers_len, 1);
    const Fattr a = decode_fattr4(d0.ffdsw_attributes);
    assert_true(a.size == 4096u && a.owner == std::string("1000"));
    assert_true(a.time_metadata == (NfsTime{1700000002, 3}));
    assert_true(ff_wcc4_attrmask_is_table1(&d0.ffdsw_attributes.attrmask));
    ff_layout_wcc4_free(&back);

    // The protocol header's bounds are enforced when encoding.
    FlexLayoutWcc too_many;
    too_many.mirrors.resize(FF_WCC4_MIRRORS_MAX + 1);
    bool threw = false;
    try {
        encode_flex_layout_wcc(too_many);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);

    // Compound::layout_wcc sends op 77 with LAYOUT_WCC4args around the body.
    Compound c;
    c.no_sequence().layout_wcc(ds.stateid, LAYOUT4_FLEX_FILES, bytes);
    const std::vector<char> enc = c.encode(2);
    // tag(4) minor(4) count(4) opnum(4) stateid(16) type(4) body length(4) body
    assert_int_equal(enc.size(), 4 + 4 + 4 + 4 + 16 + 4 + 4 + bytes.size());
    uint32_t opnum;
    std::memcpy(&opnum, enc.data() + 12, 4);
    assert_int_equal(ntohl(opnum), 77);
    assert_memory_equal(enc.data() + enc.size() - bytes.size(), bytes.data(), bytes.size());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),           cmocka_unit_test(test_fattr_round_trip),
        cmocka_unit_test(test_fattr_bad_input), cmocka_unit_test(test_garbage_replies),
        cmocka_unit_test(test_unknown_results), cmocka_unit_test(test_raw_ops_byte_exact),
        cmocka_unit_test(test_layout_wcc_body),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
