// SPDX-License-Identifier: LGPL-3.0-or-later
// nfs4_layout_wcc_xdr.h from C++, the way the FLEXFILES FSAL and the
// client library use it: include it (with or without an extern "C" block
// around it), encode a body, decode it back, refuse a hostile one.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "config.h"

extern "C" {
#include "nfs4_layout_wcc_xdr.h"
}
#include "nfs4_layout_wcc_xdr.h" // again, outside extern "C": a no-op

#include <array>
#include <cstring>
#include <vector>

namespace {

struct DataServer {
    ff_data_server_wcc4 wire{};
    std::array<char, 16> fh{};
    nfs_fh4 fh4{};
};

void test_round_trip(void**) {
    std::array<DataServer, 2> ds;
    for (size_t i = 0; i < ds.size(); i++) {
        std::memset(ds[i].wire.ffdsw_deviceid, int('a' + i), NFS4_DEVICEID4_SIZE);
        ds[i].wire.ffdsw_stateid.seqid = uint32_t(i + 1);
        ds[i].fh.fill(char(0x30 + i));
        ds[i].fh4.nfs_fh4_len = ds[i].fh.size();
        ds[i].fh4.nfs_fh4_val = ds[i].fh.data();
        ds[i].wire.ffdsw_fh_vers.ffdsw_fh_vers_len = 1;
        ds[i].wire.ffdsw_fh_vers.ffdsw_fh_vers_val = &ds[i].fh4;
    }
    // mirror 0: both data servers; mirror 1: none
    std::array<ff_data_server_wcc4, 2> list{ds[0].wire, ds[1].wire};
    std::array<ff_mirror_wcc4, 2> mirrors{};
    mirrors[0].ffmw_data_servers.ffmw_data_servers_len = list.size();
    mirrors[0].ffmw_data_servers.ffmw_data_servers_val = list.data();
    ff_layout_wcc4 body{};
    body.fflw_mirrors.fflw_mirrors_len = mirrors.size();
    body.fflw_mirrors.fflw_mirrors_val = mirrors.data();

    std::vector<char> buf(LAYOUT_WCC4_BODY_MAX);
    u_int len = 0;
    assert_true(ff_layout_wcc4_encode(&body, buf.data(), buf.size(), &len));
    // 2 counts + 2 x (16 + 16 + 4 + 4 + 16 + 4 + 4) + 1 empty mirror
    assert_int_equal(len, 4 + 4 + 2 * 64 + 4);

    ff_layout_wcc4 got{};
    assert_true(ff_layout_wcc4_decode(buf.data(), len, &got));
    assert_int_equal(got.fflw_mirrors.fflw_mirrors_len, 2);
    const ff_mirror_wcc4& m0 = got.fflw_mirrors.fflw_mirrors_val[0];
    assert_int_equal(m0.ffmw_data_servers.ffmw_data_servers_len, 2);
    const ff_data_server_wcc4& d1 = m0.ffmw_data_servers.ffmw_data_servers_val[1];
    assert_int_equal(d1.ffdsw_deviceid[0], 'b');
    assert_int_equal(d1.ffdsw_stateid.seqid, 2);
    assert_memory_equal(d1.ffdsw_fh_vers.ffdsw_fh_vers_val[0].nfs_fh4_val, ds[1].fh.data(),
                        ds[1].fh.size());
    assert_int_equal(got.fflw_mirrors.fflw_mirrors_val[1].ffmw_data_servers.ffmw_data_servers_len,
                     0);
    ff_layout_wcc4_free(&got);
    assert_null(got.fflw_mirrors.fflw_mirrors_val);

    // a mirror count of 2^32-1 is refused
    buf[0] = buf[1] = buf[2] = buf[3] = char(0xff);
    assert_false(ff_layout_wcc4_decode(buf.data(), len, &got));
    assert_null(got.fflw_mirrors.fflw_mirrors_val);
}

void test_args_in_argop(void**) {
    std::array<char, 8> body{1, 2, 3, 4, 5, 6, 7, 8};
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUT_WCC;
    LAYOUT_WCC4args& a = op.nfs_argop4_u.oplayout_wcc;
    a.lowa_type = LAYOUT4_FLEX_FILES;
    a.lowa_body.lowa_body_len = body.size();
    a.lowa_body.lowa_body_val = body.data();

    std::array<char, 64> buf{};
    XDR xdrs;
    xdrmem_create(&xdrs, buf.data(), buf.size(), XDR_ENCODE);
    assert_true(xdr_nfs_argop4(&xdrs, &op));
    u_int len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    assert_int_equal(len, 4 + 24 + 8);

    nfs_argop4 got{};
    xdrmem_create(&xdrs, buf.data(), len, XDR_DECODE);
    assert_true(xdr_nfs_argop4(&xdrs, &got));
    xdr_destroy(&xdrs);
    assert_int_equal(got.argop, NFS4_OP_LAYOUT_WCC);
    assert_int_equal(got.nfs_argop4_u.oplayout_wcc.lowa_body.lowa_body_len, 8);
    assert_memory_equal(got.nfs_argop4_u.oplayout_wcc.lowa_body.lowa_body_val, body.data(),
                        body.size());
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_nfs_argop4), &got);
}

} // namespace

int main() {
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_args_in_argop),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
