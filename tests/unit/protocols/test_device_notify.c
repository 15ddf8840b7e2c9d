// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Unit tests of protocols/nfs4_device_notify.c: the per-client table of
 * device notifications GETDEVICEINFO granted (RFC 8881 section 18.40.3)
 * and the XDR of a CB_NOTIFY_DEVICEID change (section 20.12), checked
 * byte by byte as it goes on the wire through the patched nfsv41.h's
 * xdr_CB_NOTIFY_DEVICEID4args.
 */

#include "config.h"
#include "nfs4_device_notify.h"
#include "nfsv41.h"

#include <stdint.h>
#include <string.h>

/* cmocka.h needs these three first */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#define CHANGE NOTIFY_DEVICEID4_CHANGE_MASK
#define DELETE NOTIFY_DEVICEID4_DELETE_MASK

static void device(deviceid4 id, uint8_t n) {
    memset(id, 0, NFS4_DEVICEID4_SIZE);
    id[0] = 1; /* FSAL_ID_EXPERIMENTAL */
    id[15] = (char)n;
}

/* ------------------------------------------------------------------ */
/* Grants                                                             */
/* ------------------------------------------------------------------ */

static void test_grant_is_asked_and_offered(void** state) {
    struct nfs4_devnotify_grants* grants = NULL;
    deviceid4 a;

    (void)state;
    device(a, 1);
    assert_int_equal(
        nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, a, CHANGE | DELETE, CHANGE | DELETE),
        CHANGE | DELETE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, a), CHANGE | DELETE);
    /* Another layout type is another device. */
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_NFSV4_1_FILES, a), 0);

    /* Only what the FSAL offers, only the two types there are. */
    assert_int_equal(nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, a,
                                          CHANGE | DELETE | 1 | (1 << 5), DELETE | (1 << 5)),
                     DELETE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, a), DELETE);
    nfs4_devnotify_free(&grants);
    assert_null(grants);
}

static void test_grant_replaced_and_ended(void** state) {
    struct nfs4_devnotify_grants* grants = NULL;
    deviceid4 a, b;

    (void)state;
    device(a, 1);
    device(b, 2);
    nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, a, CHANGE, CHANGE);
    nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, b, DELETE, DELETE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, a), CHANGE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, b), DELETE);

    /* A later GETDEVICEINFO of a replaces its grant; b keeps its own. */
    nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, a, DELETE, CHANGE | DELETE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, a), DELETE);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, b), DELETE);

    /* Asking for nothing ends the grant. */
    assert_int_equal(nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, a, 0, CHANGE | DELETE), 0);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, a), 0);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, b), DELETE);

    /* A deleted device is forgotten; the last one frees the table. */
    nfs4_devnotify_forget(&grants, LAYOUT4_FLEX_FILES, a);
    nfs4_devnotify_forget(&grants, LAYOUT4_FLEX_FILES, b);
    assert_null(grants);
    nfs4_devnotify_forget(&grants, LAYOUT4_FLEX_FILES, b);
    assert_null(grants);
}

static void test_grant_table_is_bounded(void** state) {
    struct nfs4_devnotify_grants* grants = NULL;
    deviceid4 id;
    uint32_t i;

    (void)state;
    for (i = 0; i < NFS4_DEVNOTIFY_MAX_DEVICES; i++) {
        device(id, 0);
        memcpy(id + 4, &i, sizeof(i));
        assert_int_equal(nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, id, CHANGE, CHANGE),
                         CHANGE);
    }
    for (i = 0; i < NFS4_DEVNOTIFY_MAX_DEVICES; i++) {
        device(id, 0);
        memcpy(id + 4, &i, sizeof(i));
        assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, id), CHANGE);
    }
    /* One more device gets nothing; known ones may still change. */
    device(id, 0);
    i = NFS4_DEVNOTIFY_MAX_DEVICES;
    memcpy(id + 4, &i, sizeof(i));
    assert_int_equal(nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, id, CHANGE, CHANGE), 0);
    assert_int_equal(nfs4_devnotify_granted(grants, LAYOUT4_FLEX_FILES, id), 0);
    device(id, 0);
    i = 7;
    memcpy(id + 4, &i, sizeof(i));
    assert_int_equal(nfs4_devnotify_grant(&grants, LAYOUT4_FLEX_FILES, id, DELETE, DELETE), DELETE);
    nfs4_devnotify_free(&grants);
}

/* ------------------------------------------------------------------ */
/* CB_NOTIFY_DEVICEID on the wire                                     */
/* ------------------------------------------------------------------ */

static uint32_t word(const char* p) {
    return ((uint32_t)(uint8_t)p[0] << 24) | ((uint32_t)(uint8_t)p[1] << 16) |
           ((uint32_t)(uint8_t)p[2] << 8) | (uint32_t)(uint8_t)p[3];
}

/* CB_NOTIFY_DEVICEID4args with one change, encoded into buf; its length. */
static u_int encode_args(notify4* change, char* buf, u_int size) {
    CB_NOTIFY_DEVICEID4args args = {
        .cnda_changes = {.cnda_changes_len = 1, .cnda_changes_val = change}};
    XDR xdrs;
    u_int len;

    xdrmem_create(&xdrs, buf, size, XDR_ENCODE);
    assert_true(xdr_CB_NOTIFY_DEVICEID4args(&xdrs, &args));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    return len;
}

static void test_encode_delete(void** state) {
    notify4 change;
    char vals[NFS4_DEVNOTIFY_VALS_MAX];
    char wire[128];
    deviceid4 id;
    u_int len;

    (void)state;
    device(id, 3);
    assert_true(nfs4_devnotify_encode(&change, vals, NOTIFY_DEVICEID4_DELETE, LAYOUT4_FLEX_FILES,
                                      id, true));
    assert_int_equal(change.notify_mask.bitmap4_len, 1);
    assert_int_equal(change.notify_mask.map[0], 1 << 2);
    assert_int_equal(change.notify_vals.notifylist4_len, 20);

    len = encode_args(&change, wire, sizeof(wire));
    /* cnda_changes<1>, bitmap4<1> {bit 2}, opaque<20> {type, id} */
    assert_int_equal(len, 4 + 8 + 4 + 20);
    assert_int_equal(word(wire), 1);
    assert_int_equal(word(wire + 4), 1);
    assert_int_equal(word(wire + 8), 1 << NOTIFY_DEVICEID4_DELETE);
    assert_int_equal(word(wire + 12), 20);
    assert_int_equal(word(wire + 16), LAYOUT4_FLEX_FILES);
    assert_memory_equal(wire + 20, id, NFS4_DEVICEID4_SIZE);
}

static void test_encode_change(void** state) {
    notify4 change;
    char vals[NFS4_DEVNOTIFY_VALS_MAX];
    char wire[128];
    deviceid4 id;
    u_int len;

    (void)state;
    device(id, 2);
    assert_true(nfs4_devnotify_encode(&change, vals, NOTIFY_DEVICEID4_CHANGE, LAYOUT4_FLEX_FILES,
                                      id, false));
    len = encode_args(&change, wire, sizeof(wire));
    /* bitmap4<1> {bit 1}, opaque<24> {type, id, ndc_immediate} */
    assert_int_equal(len, 4 + 8 + 4 + 24);
    assert_int_equal(word(wire + 8), 1 << NOTIFY_DEVICEID4_CHANGE);
    assert_int_equal(word(wire + 12), 24);
    assert_int_equal(word(wire + 16), LAYOUT4_FLEX_FILES);
    assert_memory_equal(wire + 20, id, NFS4_DEVICEID4_SIZE);
    assert_int_equal(word(wire + 36), 0);

    assert_true(nfs4_devnotify_encode(&change, vals, NOTIFY_DEVICEID4_CHANGE, LAYOUT4_FLEX_FILES,
                                      id, true));
    len = encode_args(&change, wire, sizeof(wire));
    assert_int_equal(word(wire + 36), 1);
}

static void test_encode_round_trip(void** state) {
    notify4 change;
    char vals[NFS4_DEVNOTIFY_VALS_MAX];
    char wire[128];
    CB_NOTIFY_DEVICEID4args back;
    notify_deviceid_change4 decoded;
    deviceid4 id;
    XDR xdrs;
    u_int len;

    (void)state;
    device(id, 9);
    assert_true(nfs4_devnotify_encode(&change, vals, NOTIFY_DEVICEID4_CHANGE, LAYOUT4_FLEX_FILES,
                                      id, true));
    len = encode_args(&change, wire, sizeof(wire));

    memset(&back, 0, sizeof(back));
    xdrmem_create(&xdrs, wire, len, XDR_DECODE);
    assert_true(xdr_CB_NOTIFY_DEVICEID4args(&xdrs, &back));
    assert_int_equal(xdr_getpos(&xdrs), len);
    xdr_destroy(&xdrs);
    assert_int_equal(back.cnda_changes.cnda_changes_len, 1);
    assert_int_equal(back.cnda_changes.cnda_changes_val[0].notify_mask.map[0],
                     1 << NOTIFY_DEVICEID4_CHANGE);

    xdrmem_create(&xdrs, back.cnda_changes.cnda_changes_val[0].notify_vals.notifylist4_val,
                  back.cnda_changes.cnda_changes_val[0].notify_vals.notifylist4_len, XDR_DECODE);
    assert_true(xdr_notify_deviceid_change4(&xdrs, &decoded));
    xdr_destroy(&xdrs);
    assert_int_equal(decoded.ndc_layouttype, LAYOUT4_FLEX_FILES);
    assert_memory_equal(decoded.ndc_deviceid, id, NFS4_DEVICEID4_SIZE);
    assert_true(decoded.ndc_immediate);
    xdr_free((xdrproc_t)xdr_CB_NOTIFY_DEVICEID4args, &back);
}

static void test_encode_refuses_other_types(void** state) {
    notify4 change;
    char vals[NFS4_DEVNOTIFY_VALS_MAX];
    deviceid4 id;

    (void)state;
    device(id, 1);
    assert_false(nfs4_devnotify_encode(&change, vals, (notify_deviceid_type4)0, LAYOUT4_FLEX_FILES,
                                       id, false));
    assert_false(nfs4_devnotify_encode(&change, vals, (notify_deviceid_type4)3, LAYOUT4_FLEX_FILES,
                                       id, false));
    assert_int_equal(change.notify_mask.bitmap4_len, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grant_is_asked_and_offered),
        cmocka_unit_test(test_grant_replaced_and_ended),
        cmocka_unit_test(test_grant_table_is_bounded),
        cmocka_unit_test(test_encode_delete),
        cmocka_unit_test(test_encode_change),
        cmocka_unit_test(test_encode_round_trip),
        cmocka_unit_test(test_encode_refuses_other_types),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
