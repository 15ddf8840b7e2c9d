// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Unit tests of protocols/include/nfs4_layout_wcc_xdr.h: XDR of the
 * NFSv4.2 LAYOUT_WCC operation (RFC 9766) and of its flex-files body, as
 * wired into Ganesha's nfsv41.h by the patch series.
 *
 * Every decode goes through ntirpc's allocator hooks, which the tests
 * replace with counting wrappers: that is how "no leak" and "no large
 * allocation for a hostile length" are checked.
 */

#include "config.h"
#include "nfs4_layout_wcc_xdr.h"
#include "nfsv41.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* cmocka.h needs these three first */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

/* ------------------------------------------------------------------ */
/* Counting allocator (ntirpc's mem_alloc/mem_zalloc/mem_free)        */
/* ------------------------------------------------------------------ */

static struct {
    size_t allocs;
    size_t frees;
    size_t bytes;
    size_t largest;
} mc;

static tirpc_pkg_params saved_params;

static void mc_note(size_t n) {
    mc.allocs++;
    mc.bytes += n;
    if (n > mc.largest)
        mc.largest = n;
}

static void* mc_malloc(size_t n, const char* file, int line, const char* fn) {
    mc_note(n);
    return saved_params.malloc_(n, file, line, fn);
}

static void* mc_calloc(size_t c, size_t n, const char* file, int line, const char* fn) {
    mc_note(c * n);
    return saved_params.calloc_(c, n, file, line, fn);
}

static void* mc_aligned(size_t a, size_t n, const char* file, int line, const char* fn) {
    mc_note(n);
    return saved_params.aligned_(a, n, file, line, fn);
}

static void* mc_realloc(void* p, size_t n, const char* file, int line, const char* fn) {
    if (p == NULL)
        mc_note(n);
    return saved_params.realloc_(p, n, file, line, fn);
}

static void mc_free(void* p, size_t n) {
    if (p != NULL)
        mc.frees++;
    saved_params.free_size_(p, n);
}

static void mc_reset(void) {
    memset(&mc, 0, sizeof(mc));
}

static int setup_counting(void** state) {
    (void)state;
    saved_params = __ntirpc_pkg_params;
    __ntirpc_pkg_params.malloc_ = mc_malloc;
    __ntirpc_pkg_params.calloc_ = mc_calloc;
    __ntirpc_pkg_params.aligned_ = mc_aligned;
    __ntirpc_pkg_params.realloc_ = mc_realloc;
    __ntirpc_pkg_params.free_size_ = mc_free;
    mc_reset();
    return 0;
}

static int teardown_counting(void** state) {
    (void)state;
    __ntirpc_pkg_params = saved_params;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Building bodies                                                    */
/* ------------------------------------------------------------------ */

#define ENC_MAX 65536

/* Attribute words of RFC 9766 Table 1, written out by hand from the
 * attribute numbers so that the header's macros are checked against
 * the RFC rather than against themselves.
 */
#define T1_WORD0 (1U << 4)
#define T1_WORD1                                                                                   \
    ((1U << (33 - 32)) | (1U << (36 - 32)) | (1U << (37 - 32)) | (1U << (45 - 32)) |               \
     (1U << (47 - 32)) | (1U << (52 - 32)) | (1U << (53 - 32)))

struct t1_attrs {
    uint64_t size;
    uint64_t space_used;
    uint32_t mode;
    const char* owner;
    const char* owner_group;
    nfstime4 atime;
    nfstime4 ctime;
    nfstime4 mtime;
};

static const struct t1_attrs sample_attrs = {
    .size = 1048576 + 17,
    .space_used = 1052672,
    .mode = 0100640,
    .owner = "1066",
    .owner_group = "1067",
    .atime = {1700000000, 1},
    .ctime = {1700000100, 999999999},
    .mtime = {1700000050, 500},
};

/* An owner string: encoded from *s, decoded into buf (NUL-terminated). */
static bool xdr_str(XDR* xdrs, const char** s, char* buf, u_int bufsize) {
    bool enc = xdrs->x_op == XDR_ENCODE;
    u_int len = enc ? strlen(*s) : 0;
    char* p = enc ? (char*)*s : buf;

    if (!xdr_bytes(xdrs, &p, &len, enc ? NFS4_OPAQUE_LIMIT : bufsize - 1))
        return false;
    if (xdrs->x_op == XDR_DECODE) {
        buf[len] = '\0';
        *s = buf;
    }
    return true;
}

/* The eight values in attribute-number order, as a fattr4's attr_vals. */
static bool xdr_t1_values(XDR* xdrs, struct t1_attrs* a, char* owner, char* group, u_int strsize) {
    return xdr_uint64_t(xdrs, &a->size) &&                   /* 4 */
           xdr_uint32_t(xdrs, &a->mode) &&                   /* 33 */
           xdr_str(xdrs, &a->owner, owner, strsize) &&       /* 36 */
           xdr_str(xdrs, &a->owner_group, group, strsize) && /* 37 */
           xdr_uint64_t(xdrs, &a->space_used) &&             /* 45 */
           xdr_nfstime4(xdrs, &a->atime) &&                  /* 47 */
           xdr_nfstime4(xdrs, &a->ctime) &&                  /* 52 */
           xdr_nfstime4(xdrs, &a->mtime);                    /* 53 */
}

/* Fill @f with all Table 1 attributes; values stored in @vals. */
static void make_table1_fattr(fattr4* f, char* vals, u_int size) {
    struct t1_attrs a = sample_attrs;
    XDR xdrs;

    xdrmem_create(&xdrs, vals, size, XDR_ENCODE);
    assert_true(xdr_t1_values(&xdrs, &a, NULL, NULL, 0));
    memset(f, 0, sizeof(*f));
    f->attrmask.bitmap4_len = 2;
    f->attrmask.map[0] = FF_WCC4_TABLE1_WORD0;
    f->attrmask.map[1] = FF_WCC4_TABLE1_WORD1;
    f->attr_vals.attrlist4_len = xdr_getpos(&xdrs);
    f->attr_vals.attrlist4_val = vals;
    xdr_destroy(&xdrs);
}

/* Storage for a body of up to 3 mirrors x 2 data servers x 2 fhs. */
struct body_store {
    ff_layout_wcc4 body;
    ff_mirror_wcc4 mirrors[3];
    ff_data_server_wcc4 ds[3][2];
    nfs_fh4 fh[3][2][2];
    char fhbytes[3][2][2][NFS4_FHSIZE];
    char vals[3][2][256];
};

/* Deterministic contents; ds (m, d) gets a distinct deviceid, stateid
 * and filehandle so that a mix-up on decode shows.
 */
static void fill_ds(struct body_store* s, int m, int d, int nfh, int fhlen, bool attrs) {
    ff_data_server_wcc4* ds = &s->ds[m][d];
    int i, k;

    memset(ds, 0, sizeof(*ds));
    for (i = 0; i < NFS4_DEVICEID4_SIZE; i++)
        ds->ffdsw_deviceid[i] = (char)(0x10 * m + d + i);
    ds->ffdsw_stateid.seqid = 100 + 10 * m + d;
    for (i = 0; i < 12; i++)
        ds->ffdsw_stateid.other[i] = (char)(0xa0 + m * 2 + d + i);
    for (k = 0; k < nfh; k++) {
        for (i = 0; i < fhlen; i++)
            s->fhbytes[m][d][k][i] = (char)(m * 31 + d * 7 + k + i);
        s->fh[m][d][k].nfs_fh4_len = fhlen;
        s->fh[m][d][k].nfs_fh4_val = s->fhbytes[m][d][k];
    }
    ds->ffdsw_fh_vers.ffdsw_fh_vers_len = nfh;
    ds->ffdsw_fh_vers.ffdsw_fh_vers_val = s->fh[m][d];
    if (attrs)
        make_table1_fattr(&ds->ffdsw_attributes, s->vals[m][d], sizeof(s->vals[m][d]));
}

static void make_body(struct body_store* s, int nmirrors, const int* nds, int nfh, int fhlen,
                      bool attrs) {
    int m, d;

    memset(s, 0, sizeof(*s));
    for (m = 0; m < nmirrors; m++) {
        for (d = 0; d < nds[m]; d++)
            fill_ds(s, m, d, nfh, fhlen, attrs);
        s->mirrors[m].ffmw_data_servers.ffmw_data_servers_len = nds[m];
        s->mirrors[m].ffmw_data_servers.ffmw_data_servers_val = s->ds[m];
    }
    s->body.fflw_mirrors.fflw_mirrors_len = nmirrors;
    s->body.fflw_mirrors.fflw_mirrors_val = s->mirrors;
}

static u_int encode_body(const ff_layout_wcc4* body, char* buf) {
    u_int len = 0;

    assert_true(ff_layout_wcc4_encode(body, buf, ENC_MAX, &len));
    assert_true(len > 0);
    return len;
}

static void assert_fattr_equal(const fattr4* a, const fattr4* b) {
    u_int i;

    assert_int_equal(a->attrmask.bitmap4_len, b->attrmask.bitmap4_len);
    for (i = 0; i < a->attrmask.bitmap4_len; i++)
        assert_int_equal(a->attrmask.map[i], b->attrmask.map[i]);
    assert_int_equal(a->attr_vals.attrlist4_len, b->attr_vals.attrlist4_len);
    if (a->attr_vals.attrlist4_len)
        assert_memory_equal(a->attr_vals.attrlist4_val, b->attr_vals.attrlist4_val,
                            a->attr_vals.attrlist4_len);
}

static void assert_body_equal(const ff_layout_wcc4* a, const ff_layout_wcc4* b) {
    u_int m, d, k;

    assert_int_equal(a->fflw_mirrors.fflw_mirrors_len, b->fflw_mirrors.fflw_mirrors_len);
    for (m = 0; m < a->fflw_mirrors.fflw_mirrors_len; m++) {
        const ff_mirror_wcc4* ma = &a->fflw_mirrors.fflw_mirrors_val[m];
        const ff_mirror_wcc4* mb = &b->fflw_mirrors.fflw_mirrors_val[m];

        assert_int_equal(ma->ffmw_data_servers.ffmw_data_servers_len,
                         mb->ffmw_data_servers.ffmw_data_servers_len);
        for (d = 0; d < ma->ffmw_data_servers.ffmw_data_servers_len; d++) {
            const ff_data_server_wcc4* da = &ma->ffmw_data_servers.ffmw_data_servers_val[d];
            const ff_data_server_wcc4* db = &mb->ffmw_data_servers.ffmw_data_servers_val[d];

            assert_memory_equal(da->ffdsw_deviceid, db->ffdsw_deviceid, NFS4_DEVICEID4_SIZE);
            assert_int_equal(da->ffdsw_stateid.seqid, db->ffdsw_stateid.seqid);
            assert_memory_equal(da->ffdsw_stateid.other, db->ffdsw_stateid.other, 12);
            assert_int_equal(da->ffdsw_fh_vers.ffdsw_fh_vers_len,
                             db->ffdsw_fh_vers.ffdsw_fh_vers_len);
            for (k = 0; k < da->ffdsw_fh_vers.ffdsw_fh_vers_len; k++) {
                const nfs_fh4* fa = &da->ffdsw_fh_vers.ffdsw_fh_vers_val[k];
                const nfs_fh4* fb = &db->ffdsw_fh_vers.ffdsw_fh_vers_val[k];

                assert_int_equal(fa->nfs_fh4_len, fb->nfs_fh4_len);
                assert_memory_equal(fa->nfs_fh4_val, fb->nfs_fh4_val, fa->nfs_fh4_len);
            }
            assert_fattr_equal(&da->ffdsw_attributes, &db->ffdsw_attributes);
        }
    }
}

/* Decode @buf, compare with @want, re-encode and compare bytes, free,
 * and check that every allocation was released.
 */
static void round_trip_body(const ff_layout_wcc4* want, const char* buf, u_int len) {
    ff_layout_wcc4 got;
    char again[ENC_MAX];
    u_int len2;

    mc_reset();
    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    assert_body_equal(want, &got);
    len2 = encode_body(&got, again);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, again, len);
    ff_layout_wcc4_free(&got);
    assert_int_equal(mc.allocs, mc.frees);
    assert_null(got.fflw_mirrors.fflw_mirrors_val);
}

/* ------------------------------------------------------------------ */
/* Round trips                                                        */
/* ------------------------------------------------------------------ */

static void test_args_round_trip(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char body[ENC_MAX], buf[ENC_MAX];
    LAYOUT_WCC4args args, got;
    u_int blen, len;
    XDR xdrs;

    (void)state;
    make_body(&s, 1, nds, 1, 32, true);
    blen = encode_body(&s.body, body);

    memset(&args, 0, sizeof(args));
    args.lowa_stateid.seqid = 7;
    memcpy(args.lowa_stateid.other, "0123456789ab", 12);
    args.lowa_type = LAYOUT4_FLEX_FILES;
    args.lowa_body.lowa_body_len = blen;
    args.lowa_body.lowa_body_val = body;

    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &args));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    /* stateid 16 + type 4 + length 4 + body padded to 4 */
    assert_int_equal(len, 24 + ((blen + 3) & ~3U));

    mc_reset();
    memset(&got, 0, sizeof(got));
    xdrmem_create(&xdrs, buf, len, XDR_DECODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &got));
    assert_int_equal(xdr_getpos(&xdrs), len);
    xdr_destroy(&xdrs);

    assert_int_equal(got.lowa_stateid.seqid, 7);
    assert_memory_equal(got.lowa_stateid.other, "0123456789ab", 12);
    assert_int_equal(got.lowa_type, LAYOUT4_FLEX_FILES);
    assert_int_equal(got.lowa_body.lowa_body_len, blen);
    assert_memory_equal(got.lowa_body.lowa_body_val, body, blen);

    xdr_free((xdrproc_t)xdr_LAYOUT_WCC4args, &got);
    assert_null(got.lowa_body.lowa_body_val);
    assert_int_equal(mc.allocs, mc.frees);
}

static void test_args_empty_body(void** state) {
    LAYOUT_WCC4args args, got;
    char buf[64];
    XDR xdrs;
    u_int len;

    (void)state;
    memset(&args, 0, sizeof(args));
    args.lowa_type = LAYOUT4_NFSV4_1_FILES;
    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &args));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    assert_int_equal(len, 24);

    memset(&got, 0, sizeof(got));
    xdrmem_create(&xdrs, buf, len, XDR_DECODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &got));
    xdr_destroy(&xdrs);
    assert_int_equal(got.lowa_type, LAYOUT4_NFSV4_1_FILES);
    assert_int_equal(got.lowa_body.lowa_body_len, 0);
    xdr_free((xdrproc_t)xdr_LAYOUT_WCC4args, &got);
}

static void test_res_round_trip(void** state) {
    static const nfsstat4 statuses[] = {
        NFS4_OK,
        NFS4ERR_BADXDR,
        NFS4ERR_NOTSUPP,
        NFS4ERR_UNKNOWN_LAYOUTTYPE,
        NFS4ERR_BAD_STATEID,
        NFS4ERR_WRONG_TYPE,
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        LAYOUT_WCC4res res = {statuses[i]}, got = {NFS4_OK};
        char buf[8];
        XDR xdrs;

        xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
        assert_true(xdr_LAYOUT_WCC4res(&xdrs, &res));
        assert_int_equal(xdr_getpos(&xdrs), 4);
        xdr_destroy(&xdrs);

        xdrmem_create(&xdrs, buf, 4, XDR_DECODE);
        assert_true(xdr_LAYOUT_WCC4res(&xdrs, &got));
        xdr_destroy(&xdrs);
        assert_int_equal(got.lowr_status, statuses[i]);

        /* and a truncated one fails */
        xdrmem_create(&xdrs, buf, 3, XDR_DECODE);
        assert_false(xdr_LAYOUT_WCC4res(&xdrs, &got));
        xdr_destroy(&xdrs);
    }
}

static void test_body_1x1(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char buf[ENC_MAX];
    u_int len;

    (void)state;
    make_body(&s, 1, nds, 1, 28, true);
    len = encode_body(&s.body, buf);
    round_trip_body(&s.body, buf, len);
}

/* Bytes that do not start on a 4-byte boundary decode the same: ntirpc's
 * xdrmem_ncreate() aborts the process on them, so the decoder copies them
 * first (found by the fuzz target layout_wcc_body). No bytes (NULL) is no
 * body.
 */
static void test_body_unaligned_and_null(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char buf[ENC_MAX];
    static char shifted[ENC_MAX + 4] __attribute__((aligned(4)));
    u_int len;
    ff_layout_wcc4 got;

    (void)state;
    make_body(&s, 1, nds, 1, 28, true);
    len = encode_body(&s.body, buf);
    memcpy(shifted + 1, buf, len);
    assert_true(ff_layout_wcc4_decode(shifted + 1, len, &got));
    assert_body_equal(&s.body, &got);
    ff_layout_wcc4_free(&got);
    assert_false(ff_layout_wcc4_decode(NULL, 0, &got));
}

static void test_body_3x2(void** state) {
    struct body_store s;
    static const int nds[] = {2, 2, 2};
    char buf[ENC_MAX];
    u_int len;

    (void)state;
    make_body(&s, 3, nds, 2, NFS4_FHSIZE, true);
    len = encode_body(&s.body, buf);
    round_trip_body(&s.body, buf, len);
}

static void test_body_empty_mirror(void** state) {
    struct body_store s;
    static const int nds[] = {0, 2, 0};
    ff_layout_wcc4 got;
    char buf[ENC_MAX];
    u_int len;

    (void)state;
    make_body(&s, 3, nds, 1, 16, true);
    len = encode_body(&s.body, buf);
    round_trip_body(&s.body, buf, len);

    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    assert_int_equal(got.fflw_mirrors.fflw_mirrors_len, 3);
    assert_int_equal(got.fflw_mirrors.fflw_mirrors_val[0].ffmw_data_servers.ffmw_data_servers_len,
                     0);
    assert_int_equal(got.fflw_mirrors.fflw_mirrors_val[2].ffmw_data_servers.ffmw_data_servers_len,
                     0);
    ff_layout_wcc4_free(&got);

    /* no mirror at all is a valid (empty) body too */
    make_body(&s, 0, nds, 0, 0, false);
    len = encode_body(&s.body, buf);
    assert_int_equal(len, 4);
    round_trip_body(&s.body, buf, len);
}

static void test_body_empty_attrmask(void** state) {
    struct body_store s;
    static const int nds[] = {1, 1};
    ff_layout_wcc4 got;
    char buf[ENC_MAX];
    u_int len;

    (void)state;
    /* mirror 0 reports everything, mirror 1 nothing (empty mask) */
    make_body(&s, 2, nds, 1, 8, true);
    memset(&s.ds[1][0].ffdsw_attributes, 0, sizeof(fattr4));
    len = encode_body(&s.body, buf);
    round_trip_body(&s.body, buf, len);

    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    {
        const fattr4* f = &got.fflw_mirrors.fflw_mirrors_val[1]
                               .ffmw_data_servers.ffmw_data_servers_val[0]
                               .ffdsw_attributes;

        assert_int_equal(f->attrmask.bitmap4_len, 0);
        assert_int_equal(f->attr_vals.attrlist4_len, 0);
        assert_null(f->attr_vals.attrlist4_val);
        assert_true(ff_wcc4_attrmask_is_table1(&f->attrmask));
    }
    ff_layout_wcc4_free(&got);
}

static void test_body_table1_attributes(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    ff_layout_wcc4 got;
    struct t1_attrs a;
    char buf[ENC_MAX], owner[64], group[64];
    const fattr4* f;
    u_int len;
    XDR xdrs;

    (void)state;
    assert_int_equal(FF_WCC4_TABLE1_WORD0, T1_WORD0);
    assert_int_equal(FF_WCC4_TABLE1_WORD1, T1_WORD1);
    assert_int_equal(T1_WORD1, 0x0030a032);

    make_body(&s, 1, nds, 1, 8, true);
    len = encode_body(&s.body, buf);
    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    f = &got.fflw_mirrors.fflw_mirrors_val[0]
             .ffmw_data_servers.ffmw_data_servers_val[0]
             .ffdsw_attributes;

    assert_int_equal(f->attrmask.bitmap4_len, 2);
    assert_int_equal(f->attrmask.map[0], T1_WORD0);
    assert_int_equal(f->attrmask.map[1], T1_WORD1);
    assert_true(ff_wcc4_attrmask_is_table1(&f->attrmask));
    /* 8 + 4 + (4+4) + (4+4) + 8 + 3 * 12 with 4-byte owner strings */
    assert_int_equal(f->attr_vals.attrlist4_len, 72);

    /* the values come back, in attribute-number order */
    memset(&a, 0, sizeof(a));
    xdrmem_create(&xdrs, f->attr_vals.attrlist4_val, f->attr_vals.attrlist4_len, XDR_DECODE);
    assert_true(xdr_t1_values(&xdrs, &a, owner, group, sizeof(owner)));
    assert_int_equal(xdr_getpos(&xdrs), f->attr_vals.attrlist4_len);
    xdr_destroy(&xdrs);
    assert_int_equal(a.size, sample_attrs.size);
    assert_int_equal(a.space_used, sample_attrs.space_used);
    assert_int_equal(a.mode, sample_attrs.mode);
    assert_string_equal(a.owner, "1066");
    assert_string_equal(a.owner_group, "1067");
    assert_int_equal(a.atime.seconds, sample_attrs.atime.seconds);
    assert_int_equal(a.atime.nseconds, sample_attrs.atime.nseconds);
    assert_int_equal(a.ctime.seconds, sample_attrs.ctime.seconds);
    assert_int_equal(a.ctime.nseconds, sample_attrs.ctime.nseconds);
    assert_int_equal(a.mtime.seconds, sample_attrs.mtime.seconds);
    assert_int_equal(a.mtime.nseconds, sample_attrs.mtime.nseconds);
    ff_layout_wcc4_free(&got);
}

static void test_attrmask_helper(void** state) {
    struct bitmap4 m;

    (void)state;
    memset(&m, 0, sizeof(m));
    m.bitmap4_len = 2;
    m.map[0] = T1_WORD0;
    m.map[1] = T1_WORD1;
    assert_true(ff_wcc4_attrmask_is_table1(&m));

    m.map[1] = 1U << (FATTR4_TIME_MODIFY - 32); /* a subset */
    assert_true(ff_wcc4_attrmask_is_table1(&m));

    m.map[0] |= 1U << FATTR4_CHANGE; /* 3: not Table 1 */
    assert_false(ff_wcc4_attrmask_is_table1(&m));

    m.map[0] = 0;
    m.map[1] = 1U << (FATTR4_NUMLINKS - 32); /* 35 */
    assert_false(ff_wcc4_attrmask_is_table1(&m));

    m.bitmap4_len = 3;
    m.map[1] = 0;
    m.map[2] = 1; /* 64 */
    assert_false(ff_wcc4_attrmask_is_table1(&m));
}

/* ------------------------------------------------------------------ */
/* Malformed input                                                    */
/* ------------------------------------------------------------------ */

/* Every proper prefix of a valid encoding fails, leaks nothing. */
static void test_body_truncations(void** state) {
    struct body_store s;
    static const int nds[] = {2, 0, 2};
    char buf[ENC_MAX];
    ff_layout_wcc4 got;
    u_int len, cut;

    (void)state;
    make_body(&s, 3, nds, 2, 20, true);
    len = encode_body(&s.body, buf);

    for (cut = 0; cut < len; cut++) {
        XDR xdrs;

        mc_reset();
        assert_false(ff_layout_wcc4_decode(buf, cut, &got));
        assert_null(got.fflw_mirrors.fflw_mirrors_val);
        assert_int_equal(mc.allocs, mc.frees);

        /* the raw routine fails too; xdr_free cleans up after it */
        memset(&got, 0, sizeof(got));
        xdrmem_create(&xdrs, buf, cut, XDR_DECODE);
        assert_false(xdr_ff_layout_wcc4(&xdrs, &got));
        xdr_destroy(&xdrs);
        xdr_free((xdrproc_t)xdr_ff_layout_wcc4, &got);
        assert_int_equal(mc.allocs, mc.frees);
    }

    /* a trailing byte is refused by the whole-body decoder */
    buf[len] = 0;
    assert_false(ff_layout_wcc4_decode(buf, len + 1, &got));
    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    ff_layout_wcc4_free(&got);
}

static void test_args_truncations(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char body[ENC_MAX], buf[ENC_MAX];
    LAYOUT_WCC4args args, got;
    u_int len, cut;
    XDR xdrs;

    (void)state;
    make_body(&s, 1, nds, 1, 8, true);
    memset(&args, 0, sizeof(args));
    args.lowa_type = LAYOUT4_FLEX_FILES;
    args.lowa_body.lowa_body_len = encode_body(&s.body, body);
    args.lowa_body.lowa_body_val = body;
    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &args));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);

    for (cut = 0; cut < len; cut++) {
        mc_reset();
        memset(&got, 0, sizeof(got));
        xdrmem_create(&xdrs, buf, cut, XDR_DECODE);
        assert_false(xdr_LAYOUT_WCC4args(&xdrs, &got));
        xdr_destroy(&xdrs);
        xdr_free((xdrproc_t)xdr_LAYOUT_WCC4args, &got);
        assert_int_equal(mc.allocs, mc.frees);
    }
}

static const uint32_t hostile[] = {
    0xffffffffU, 0xfffffffeU, 0x80000000U, 0x7fffffffU, 0x01000000U, 0x00100000U, 0x00010001U,
};

static void put_be32(char* p, uint32_t v) {
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

static uint32_t get_be32(const char* p) {
    const unsigned char* u = (const unsigned char*)p;

    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* A length field patched to a hostile value fails without allocating
 * more than the bounded sizes, and frees what it allocated.
 */
static void test_body_hostile_lengths(void** state) {
    /* Offsets in a 1 mirror x 1 DS body with one 8-byte filehandle
     * and the Table 1 attributes (see the encoding in the RFC):
     */
    static const struct {
        u_int offset;
        uint32_t value; /* what the valid encoding has there */
        uint32_t bound; /* largest value the decoder accepts */
        const char* name;
    } fields[] = {
        {0, 1, FF_WCC4_MIRRORS_MAX, "fflw_mirrors count"},
        {4, 1, FF_WCC4_DATA_SERVERS_MAX, "ffmw_data_servers count"},
        {40, 1, FF_WCC4_FH_VERS_MAX, "ffdsw_fh_vers count"},
        {44, 8, NFS4_FHSIZE, "nfs_fh4 length"},
        {56, 2, FF_WCC4_BITMAP_WORDS_MAX, "bitmap4 length"},
        {68, 72, FF_WCC4_ATTR_VALS_MAX, "attr_vals length"},
    };
    struct body_store s;
    static const int nds[] = {1};
    char good[ENC_MAX], buf[ENC_MAX];
    ff_layout_wcc4 got;
    struct timespec t0, t1;
    u_int len;
    size_t f, h;
    double elapsed;

    (void)state;
    make_body(&s, 1, nds, 1, 8, true);
    len = encode_body(&s.body, good);
    assert_int_equal(len, 72 + 72);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
        uint32_t values[sizeof(hostile) / sizeof(hostile[0]) + 1];

        /* the offsets are right: the valid body has these values */
        assert_int_equal(get_be32(good + fields[f].offset), fields[f].value);

        memcpy(values, hostile, sizeof(hostile));
        values[sizeof(hostile) / sizeof(hostile[0])] = fields[f].bound + 1;

        for (h = 0; h < sizeof(values) / sizeof(values[0]); h++) {
            memcpy(buf, good, len);
            put_be32(buf + fields[f].offset, values[h]);
            mc_reset();
            assert_false(ff_layout_wcc4_decode(buf, len, &got));
            assert_int_equal(mc.allocs, mc.frees);
            /* nothing beyond the one bounded attr_vals buffer */
            assert_true(mc.largest <= FF_WCC4_ATTR_VALS_MAX);
            assert_true(mc.bytes <= 16384);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    elapsed = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(elapsed < 0.5);

    /* the bound itself passes the length check (then the data is
     * short, so it still fails, after one bounded allocation)
     */
    memcpy(buf, good, len);
    put_be32(buf + 68, FF_WCC4_ATTR_VALS_MAX);
    mc_reset();
    assert_false(ff_layout_wcc4_decode(buf, len, &got));
    assert_int_equal(mc.allocs, mc.frees);
    assert_int_equal(mc.largest, FF_WCC4_ATTR_VALS_MAX);
}

static void test_args_hostile_body_length(void** state) {
    char buf[64];
    LAYOUT_WCC4args got;
    size_t h;

    (void)state;
    memset(buf, 0, sizeof(buf));
    put_be32(buf + 16, LAYOUT4_FLEX_FILES);
    for (h = 0; h <= sizeof(hostile) / sizeof(hostile[0]); h++) {
        uint32_t v =
            h < sizeof(hostile) / sizeof(hostile[0]) ? hostile[h] : LAYOUT_WCC4_BODY_MAX + 1;
        XDR xdrs;

        put_be32(buf + 20, v);
        mc_reset();
        memset(&got, 0, sizeof(got));
        xdrmem_create(&xdrs, buf, sizeof(buf), XDR_DECODE);
        assert_false(xdr_LAYOUT_WCC4args(&xdrs, &got));
        xdr_destroy(&xdrs);
        assert_int_equal(mc.allocs, 0);
        xdr_free((xdrproc_t)xdr_LAYOUT_WCC4args, &got);
    }
}

/* Words past BITMAP4_MAPLEN are read and dropped, as Ganesha does for
 * every bitmap4; more than FF_WCC4_BITMAP_WORDS_MAX words fail.
 */
/* A 1 x 1 body, no filehandle, a bitmap of @words words (word 0 has
 * Table 1's size bit, the last word bit 0), no attr_vals.
 */
static u_int long_bitmap_body(char* buf, u_int words) {
    u_int pos = 0, i;

    memset(buf, 0, 64);
    put_be32(buf + pos, 1), pos += 4;     /* mirrors */
    put_be32(buf + pos, 1), pos += 4;     /* data servers */
    pos += 16 + 16;                       /* deviceid, stateid */
    put_be32(buf + pos, 0), pos += 4;     /* no filehandle */
    put_be32(buf + pos, words), pos += 4; /* bitmap length */
    for (i = 0; i < words; i++)
        put_be32(buf + pos, i == 0 ? T1_WORD0 : i == words - 1 ? 1 : 0), pos += 4;
    put_be32(buf + pos, 0), pos += 4; /* no attr_vals */
    return pos;
}

static void test_body_long_bitmap(void** state) {
    char buf[128];
    ff_layout_wcc4 got;
    const fattr4* f;
    u_int len;

    (void)state;
    len = long_bitmap_body(buf, FF_WCC4_BITMAP_WORDS_MAX);
    assert_true(ff_layout_wcc4_decode(buf, len, &got));
    f = &got.fflw_mirrors.fflw_mirrors_val[0]
             .ffmw_data_servers.ffmw_data_servers_val[0]
             .ffdsw_attributes;
    assert_int_equal(f->attrmask.bitmap4_len, BITMAP4_MAPLEN);
    assert_int_equal(f->attrmask.map[0], T1_WORD0);
    assert_int_equal(f->attrmask.map[2], 0);
    ff_layout_wcc4_free(&got);

    len = long_bitmap_body(buf, FF_WCC4_BITMAP_WORDS_MAX + 1);
    assert_false(ff_layout_wcc4_decode(buf, len, &got));
}

/* Raw writer for hand-made encodings that our encoder would refuse. */
struct raw {
    char* buf;
    u_int pos;
    u_int size;
};

static void raw_u32(struct raw* r, uint32_t v) {
    assert_true(r->pos + 4 <= r->size);
    put_be32(r->buf + r->pos, v);
    r->pos += 4;
}

static void raw_bytes(struct raw* r, u_int n, char fill) {
    u_int padded = (n + 3) & ~3U;

    assert_true(r->pos + padded <= r->size);
    memset(r->buf + r->pos, 0, padded);
    memset(r->buf + r->pos, fill, n);
    r->pos += padded;
}

/* One data server: @nfh filehandles of @fhlen bytes, a bitmap of
 * @words zero words, @vals bytes of attr_vals.
 */
static void raw_ds(struct raw* r, u_int nfh, u_int fhlen, u_int words, u_int vals) {
    u_int i;

    raw_bytes(r, NFS4_DEVICEID4_SIZE, 0x42);
    raw_u32(r, 1);
    raw_bytes(r, 12, 0x24);
    raw_u32(r, nfh);
    for (i = 0; i < nfh; i++) {
        raw_u32(r, fhlen);
        raw_bytes(r, fhlen, 0x5f);
    }
    raw_u32(r, words);
    for (i = 0; i < words; i++)
        raw_u32(r, 0);
    raw_u32(r, vals);
    raw_bytes(r, vals, 0);
}

enum bound_field { B_MIRRORS, B_DATA_SERVERS, B_FH_VERS, B_FH, B_ATTR_VALS };

/* A complete, well-formed body with field @f set to @n. */
static u_int raw_body(char* buf, u_int size, enum bound_field f, u_int n) {
    struct raw r = {buf, 0, size};
    u_int i;

    if (f == B_MIRRORS) {
        raw_u32(&r, n);
        for (i = 0; i < n; i++)
            raw_u32(&r, 0); /* empty mirror */
        return r.pos;
    }
    raw_u32(&r, 1);
    if (f == B_DATA_SERVERS) {
        raw_u32(&r, n);
        for (i = 0; i < n; i++)
            raw_ds(&r, 0, 0, 0, 0);
        return r.pos;
    }
    raw_u32(&r, 1);
    if (f == B_FH_VERS)
        raw_ds(&r, n, 8, 0, 0);
    else if (f == B_FH)
        raw_ds(&r, 1, n, 0, 0);
    else
        raw_ds(&r, 0, 0, 0, n);
    return r.pos;
}

/* Each bound is exact: a complete body at the bound decodes, the same
 * body with one more element is refused.
 */
static void test_bounds_exact(void** state) {
    static const struct {
        enum bound_field f;
        u_int bound;
    } fields[] = {
        {B_MIRRORS, FF_WCC4_MIRRORS_MAX},     {B_DATA_SERVERS, FF_WCC4_DATA_SERVERS_MAX},
        {B_FH_VERS, FF_WCC4_FH_VERS_MAX},     {B_FH, NFS4_FHSIZE},
        {B_ATTR_VALS, FF_WCC4_ATTR_VALS_MAX},
    };
    static char buf[ENC_MAX];
    ff_layout_wcc4 got;
    size_t i;
    u_int len;

    (void)state;
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        len = raw_body(buf, sizeof(buf), fields[i].f, fields[i].bound);
        mc_reset();
        assert_true(ff_layout_wcc4_decode(buf, len, &got));
        ff_layout_wcc4_free(&got);
        assert_int_equal(mc.allocs, mc.frees);

        len = raw_body(buf, sizeof(buf), fields[i].f, fields[i].bound + 1);
        mc_reset();
        assert_false(ff_layout_wcc4_decode(buf, len, &got));
        assert_int_equal(mc.allocs, mc.frees);
    }

    /* lowa_body: LAYOUT_WCC4_BODY_MAX bytes pass, one more does not */
    for (len = LAYOUT_WCC4_BODY_MAX; len <= LAYOUT_WCC4_BODY_MAX + 1; len++) {
        static char args[LAYOUT_WCC4_BODY_MAX + 64];
        struct raw r = {args, 0, sizeof(args)};
        LAYOUT_WCC4args got_args;
        XDR xdrs;
        bool ok;

        raw_u32(&r, 1);
        raw_bytes(&r, 12, 0x33);
        raw_u32(&r, LAYOUT4_FLEX_FILES);
        raw_u32(&r, len);
        raw_bytes(&r, len, 0);
        memset(&got_args, 0, sizeof(got_args));
        xdrmem_create(&xdrs, args, r.pos, XDR_DECODE);
        ok = xdr_LAYOUT_WCC4args(&xdrs, &got_args);
        xdr_destroy(&xdrs);
        assert_int_equal(ok, len == LAYOUT_WCC4_BODY_MAX);
        xdr_free((xdrproc_t)xdr_LAYOUT_WCC4args, &got_args);
    }
}

/* The wire order is the RFC's: compare with bytes written by hand. */
static void test_wire_order(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char want[512], got[ENC_MAX], args_buf[1024];
    struct raw r = {want, 0, sizeof(want)};
    const ff_data_server_wcc4* ds;
    LAYOUT_WCC4args args;
    u_int len, i;
    XDR xdrs;

    (void)state;
    make_body(&s, 1, nds, 1, 6, true);
    ds = &s.ds[0][0];

    raw_u32(&r, 1); /* fflw_mirrors<> */
    raw_u32(&r, 1); /* ffmw_data_servers<> */
    memcpy(want + r.pos, ds->ffdsw_deviceid, 16), r.pos += 16;
    raw_u32(&r, ds->ffdsw_stateid.seqid); /* ffdsw_stateid */
    memcpy(want + r.pos, ds->ffdsw_stateid.other, 12), r.pos += 12;
    raw_u32(&r, 1); /* ffdsw_fh_vers<> */
    raw_u32(&r, 6);
    memcpy(want + r.pos, s.fhbytes[0][0][0], 6), r.pos += 6;
    want[r.pos++] = 0, want[r.pos++] = 0; /* XDR padding */
    raw_u32(&r, 2);                       /* attrmask */
    raw_u32(&r, T1_WORD0);
    raw_u32(&r, T1_WORD1);
    raw_u32(&r, ds->ffdsw_attributes.attr_vals.attrlist4_len);
    for (i = 0; i < ds->ffdsw_attributes.attr_vals.attrlist4_len; i++)
        want[r.pos++] = ds->ffdsw_attributes.attr_vals.attrlist4_val[i];

    len = encode_body(&s.body, got);
    assert_int_equal(len, r.pos);
    assert_memory_equal(got, want, len);

    memset(&args, 0, sizeof(args));
    args.lowa_stateid.seqid = 0x01020304;
    memcpy(args.lowa_stateid.other, "ABCDEFGHIJKL", 12);
    args.lowa_type = LAYOUT4_FLEX_FILES;
    args.lowa_body.lowa_body_len = len;
    args.lowa_body.lowa_body_val = got;
    xdrmem_create(&xdrs, args_buf, sizeof(args_buf), XDR_ENCODE);
    assert_true(xdr_LAYOUT_WCC4args(&xdrs, &args));
    assert_int_equal(xdr_getpos(&xdrs), 24 + len);
    xdr_destroy(&xdrs);
    assert_int_equal(get_be32(args_buf), 0x01020304);
    assert_memory_equal(args_buf + 4, "ABCDEFGHIJKL", 12);
    assert_int_equal(get_be32(args_buf + 16), 4); /* LAYOUT4_FLEX_FILES */
    assert_int_equal(get_be32(args_buf + 20), len);
    assert_memory_equal(args_buf + 24, want, len);
}

/* Bounds hold on encode too: a client cannot produce what we refuse. */
static void test_encode_bounds(void** state) {
    struct body_store s;
    static const int nds[] = {1};
    char buf[ENC_MAX];
    u_int len;

    (void)state;
    make_body(&s, 1, nds, 1, 8, true);
    s.ds[0][0].ffdsw_fh_vers.ffdsw_fh_vers_len = FF_WCC4_FH_VERS_MAX + 1;
    assert_false(ff_layout_wcc4_encode(&s.body, buf, sizeof(buf), &len));

    make_body(&s, 1, nds, 1, 8, true);
    s.ds[0][0].ffdsw_attributes.attrmask.bitmap4_len = BITMAP4_MAPLEN + 1;
    assert_false(ff_layout_wcc4_encode(&s.body, buf, sizeof(buf), &len));

    make_body(&s, 1, nds, 1, 8, true);
    assert_false(ff_layout_wcc4_encode(&s.body, buf, 20, &len));
    assert_int_equal(len, 0);
}

/* ------------------------------------------------------------------ */
/* Inside a COMPOUND                                                  */
/* ------------------------------------------------------------------ */

static void test_compound_round_trip(void** state) {
    struct body_store s;
    static const int nds[] = {2, 2};
    char body[ENC_MAX], buf[ENC_MAX], fh[40];
    nfs_argop4 ops[4];
    COMPOUND4args args, got;
    LAYOUT_WCC4args* lw;
    u_int blen, len, cut;
    XDR xdrs;

    (void)state;
    make_body(&s, 2, nds, 1, 24, true);
    blen = encode_body(&s.body, body);
    memset(fh, 0x5a, sizeof(fh));
    memset(ops, 0, sizeof(ops));

    ops[0].argop = NFS4_OP_SEQUENCE;
    memset(ops[0].nfs_argop4_u.opsequence.sa_sessionid, 0x11, NFS4_SESSIONID_SIZE);
    ops[0].nfs_argop4_u.opsequence.sa_sequenceid = 42;
    ops[1].argop = NFS4_OP_PUTFH;
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_len = sizeof(fh);
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_val = fh;
    ops[2].argop = NFS4_OP_LAYOUT_WCC;
    lw = &ops[2].nfs_argop4_u.oplayout_wcc;
    lw->lowa_stateid.seqid = 3;
    memset(lw->lowa_stateid.other, 0x77, 12);
    lw->lowa_type = LAYOUT4_FLEX_FILES;
    lw->lowa_body.lowa_body_len = blen;
    lw->lowa_body.lowa_body_val = body;
    ops[3].argop = NFS4_OP_GETATTR;
    ops[3].nfs_argop4_u.opgetattr.attr_request.bitmap4_len = 2;
    ops[3].nfs_argop4_u.opgetattr.attr_request.map[0] = T1_WORD0;
    ops[3].nfs_argop4_u.opgetattr.attr_request.map[1] = T1_WORD1;

    /* Empty tag: Ganesha decodes tags with malloc() but frees them with
     * mem_free(), which would upset the allocation count.
     */
    memset(&args, 0, sizeof(args));
    args.minorversion = 2;
    args.argarray.argarray_len = 4;
    args.argarray.argarray_val = ops;

    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_COMPOUND4args(&xdrs, &args));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);

    mc_reset();
    memset(&got, 0, sizeof(got));
    xdrmem_create(&xdrs, buf, len, XDR_DECODE);
    assert_true(xdr_COMPOUND4args(&xdrs, &got));
    assert_int_equal(xdr_getpos(&xdrs), len);
    xdr_destroy(&xdrs);

    assert_int_equal(got.minorversion, 2);
    assert_int_equal(got.argarray.argarray_len, 4);
    assert_int_equal(got.argarray.argarray_val[0].argop, NFS4_OP_SEQUENCE);
    assert_int_equal(got.argarray.argarray_val[1].argop, NFS4_OP_PUTFH);
    assert_int_equal(got.argarray.argarray_val[2].argop, NFS4_OP_LAYOUT_WCC);
    assert_int_equal(got.argarray.argarray_val[3].argop, NFS4_OP_GETATTR);
    lw = &got.argarray.argarray_val[2].nfs_argop4_u.oplayout_wcc;
    assert_int_equal(lw->lowa_stateid.seqid, 3);
    assert_int_equal(lw->lowa_type, LAYOUT4_FLEX_FILES);
    assert_int_equal(lw->lowa_body.lowa_body_len, blen);
    assert_memory_equal(lw->lowa_body.lowa_body_val, body, blen);
    {
        ff_layout_wcc4 inner;

        assert_true(ff_layout_wcc4_decode(lw->lowa_body.lowa_body_val, lw->lowa_body.lowa_body_len,
                                          &inner));
        assert_body_equal(&s.body, &inner);
        ff_layout_wcc4_free(&inner);
    }
    xdr_free((xdrproc_t)xdr_COMPOUND4args, &got);
    assert_int_equal(mc.allocs, mc.frees);

    /* every truncation of the compound fails and leaks nothing */
    for (cut = 0; cut < len; cut++) {
        mc_reset();
        memset(&got, 0, sizeof(got));
        xdrmem_create(&xdrs, buf, cut, XDR_DECODE);
        assert_false(xdr_COMPOUND4args(&xdrs, &got));
        xdr_destroy(&xdrs);
        xdr_free((xdrproc_t)xdr_COMPOUND4args, &got);
        assert_int_equal(mc.allocs, mc.frees);
    }
}

static void test_compound_res_round_trip(void** state) {
    nfs_resop4 res[2];
    COMPOUND4res cres, got;
    char buf[256];
    u_int len;
    XDR xdrs;

    (void)state;
    memset(res, 0, sizeof(res));
    res[0].resop = NFS4_OP_PUTFH;
    res[0].nfs_resop4_u.opputfh.status = NFS4_OK;
    res[1].resop = NFS4_OP_LAYOUT_WCC;
    res[1].nfs_resop4_u.oplayout_wcc.lowr_status = NFS4ERR_BADXDR;
    memset(&cres, 0, sizeof(cres));
    cres.status = NFS4ERR_BADXDR;
    cres.resarray.resarray_len = 2;
    cres.resarray.resarray_val = res;

    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_COMPOUND4res(&xdrs, &cres));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    /* status, empty tag, count, (op, status) x 2 */
    assert_int_equal(len, 4 + 4 + 4 + 2 * 8);
    assert_int_equal(get_be32(buf + 20), 77);
    assert_int_equal(get_be32(buf + 24), NFS4ERR_BADXDR);

    mc_reset();
    memset(&got, 0, sizeof(got));
    xdrmem_create(&xdrs, buf, len, XDR_DECODE);
    assert_true(xdr_COMPOUND4res(&xdrs, &got));
    xdr_destroy(&xdrs);
    assert_int_equal(got.resarray.resarray_len, 2);
    assert_int_equal(got.resarray.resarray_val[1].resop, NFS4_OP_LAYOUT_WCC);
    assert_int_equal(got.resarray.resarray_val[1].nfs_resop4_u.oplayout_wcc.lowr_status,
                     NFS4ERR_BADXDR);
    xdr_free((xdrproc_t)xdr_COMPOUND4res, &got);
    assert_int_equal(mc.allocs, mc.frees);
}

/* Op numbers: 77 is LAYOUT_WCC, 76 has no name and decodes as ILLEGAL. */
static void test_op_numbers(void** state) {
    char buf[8];
    nfs_argop4 op;
    XDR xdrs;

    (void)state;
    assert_int_equal(NFS4_OP_LAYOUT_WCC, 77);
    assert_int_equal(NFS4_OP_LAST_ONE, 78);
    assert_int_equal(NFS4_OP_REMOVEXATTR, 75);

    put_be32(buf, 76);
    memset(&op, 0, sizeof(op));
    xdrmem_create(&xdrs, buf, 4, XDR_DECODE);
    assert_true(xdr_nfs_argop4(&xdrs, &op));
    xdr_destroy(&xdrs);
    assert_int_equal(op.argop, NFS4_OP_ILLEGAL);

    /* 77 with nothing after it is a short argument, not ILLEGAL */
    put_be32(buf, 77);
    memset(&op, 0, sizeof(op));
    xdrmem_create(&xdrs, buf, 4, XDR_DECODE);
    assert_false(xdr_nfs_argop4(&xdrs, &op));
    xdr_destroy(&xdrs);
}

/* RFC 8435 ff_layout4 carries ffl_stats_collect_hint (patch 0001). */
static void test_ff_layout4_stats_hint(void** state) {
    ff_layout4 l, got;
    char buf[64];
    u_int len;
    XDR xdrs;

    (void)state;
    memset(&l, 0, sizeof(l));
    l.ffl_stripe_unit = 1048576;
    l.ffl_flags = FF_FLAGS_NO_IO_THRU_MDS;
    l.ffl_stats_collect_hint = 30;
    xdrmem_create(&xdrs, buf, sizeof(buf), XDR_ENCODE);
    assert_true(xdr_ff_layout4(&xdrs, &l));
    len = xdr_getpos(&xdrs);
    xdr_destroy(&xdrs);
    /* stripe unit 8 + mirror count 4 + flags 4 + hint 4 */
    assert_int_equal(len, 20);
    assert_int_equal(get_be32(buf + 16), 30);

    memset(&got, 0, sizeof(got));
    xdrmem_create(&xdrs, buf, len, XDR_DECODE);
    assert_true(xdr_ff_layout4(&xdrs, &got));
    xdr_destroy(&xdrs);
    assert_int_equal(got.ffl_stats_collect_hint, 30);
    xdr_free((xdrproc_t)xdr_ff_layout4, &got);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_round_trip),
        cmocka_unit_test(test_args_empty_body),
        cmocka_unit_test(test_res_round_trip),
        cmocka_unit_test(test_body_1x1),
        cmocka_unit_test(test_body_unaligned_and_null),
        cmocka_unit_test(test_body_3x2),
        cmocka_unit_test(test_body_empty_mirror),
        cmocka_unit_test(test_body_empty_attrmask),
        cmocka_unit_test(test_body_table1_attributes),
        cmocka_unit_test(test_attrmask_helper),
        cmocka_unit_test(test_body_truncations),
        cmocka_unit_test(test_args_truncations),
        cmocka_unit_test(test_body_hostile_lengths),
        cmocka_unit_test(test_args_hostile_body_length),
        cmocka_unit_test(test_body_long_bitmap),
        cmocka_unit_test(test_bounds_exact),
        cmocka_unit_test(test_wire_order),
        cmocka_unit_test(test_encode_bounds),
        cmocka_unit_test(test_compound_round_trip),
        cmocka_unit_test(test_compound_res_round_trip),
        cmocka_unit_test(test_op_numbers),
        cmocka_unit_test(test_ff_layout4_stats_hint),
    };

    return cmocka_run_group_tests(tests, setup_counting, teardown_counting);
}
