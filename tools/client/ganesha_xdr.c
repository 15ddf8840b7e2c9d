/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The client's thin C layer over Ganesha's XDR routines (see ganesha_xdr.h), and the
 * few core-library symbols those inline routines reference.
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest */
#include "ganesha_xdr.h"
#include "nfs4_layout_wcc_xdr.h" /* includes nfsv41.h first */
#include "nfsv41.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ff_xdr_encode_argop(XDR* xdrs, const nfs_argop4* op) {
    /* xdr_nfs_argop4 records lookahead flags in x_public and rewrites an unknown argop
     * to NFS4_OP_ILLEGAL after encoding its number: give it copies. */
    struct nfs_request_lookahead lookahead = {0};
    void* saved = xdrs->x_public;
    nfs_argop4 copy = *op;
    bool ok;

    xdrs->x_public = &lookahead;
    ok = xdr_nfs_argop4(xdrs, &copy);
    xdrs->x_public = saved;
    return ok;
}

bool ff_xdr_decode_resop(XDR* xdrs, nfs_resop4* res) {
    memset(res, 0, sizeof(*res));
    if (xdr_nfs_resop4(xdrs, res)) {
        return true;
    }
    ff_xdr_free_resop(res);
    return false;
}

void ff_xdr_free_resop(nfs_resop4* res) {
    xdr_nfree((xdrproc_t)xdr_nfs_resop4, res);
    memset(res, 0, sizeof(*res));
}

bool ff_xdr_bitmap4(XDR* xdrs, struct bitmap4* map) {
    return xdr_bitmap4(xdrs, map);
}

bool ff_xdr_decode_cb_compound_args(XDR* xdrs, CB_COMPOUND4args* args) {
    memset(args, 0, sizeof(*args));
    if (xdr_CB_COMPOUND4args(xdrs, args)) {
        return true;
    }
    ff_xdr_free_cb_compound_args(args);
    return false;
}

void ff_xdr_free_cb_compound_args(CB_COMPOUND4args* args) {
    xdr_nfree((xdrproc_t)xdr_CB_COMPOUND4args, args);
    memset(args, 0, sizeof(*args));
}

bool ff_xdr_encode_cb_compound_res(XDR* xdrs, const CB_COMPOUND4res* res) {
    CB_COMPOUND4res copy = *res; /* the encoder takes a non-const pointer */

    return xdr_CB_COMPOUND4res(xdrs, &copy);
}

bool ff_xdr_encode_layout_wcc_args(XDR* xdrs, const LAYOUT_WCC4args* args) {
    LAYOUT_WCC4args copy = *args; /* the encoder takes a non-const pointer */

    return xdr_LAYOUT_WCC4args(xdrs, &copy);
}

bool ff_xdr_encode_ff_layout_wcc(XDR* xdrs, const ff_layout_wcc4* body) {
    ff_layout_wcc4 copy = *body;

    return xdr_ff_layout_wcc4(xdrs, &copy);
}

bool ff_xdr_decode_ff_layout4(XDR* xdrs, ff_layout4* layout) {
    memset(layout, 0, sizeof(*layout));
    if (xdr_ff_layout4(xdrs, layout)) {
        return true;
    }
    ff_xdr_free_ff_layout4(layout);
    return false;
}

void ff_xdr_free_ff_layout4(ff_layout4* layout) {
    xdr_nfree((xdrproc_t)xdr_ff_layout4, layout);
    memset(layout, 0, sizeof(*layout));
}

bool ff_xdr_decode_ff_device_addr4(XDR* xdrs, ff_device_addr4* addr) {
    memset(addr, 0, sizeof(*addr));
    if (xdr_ff_device_addr4(xdrs, addr)) {
        return true;
    }
    ff_xdr_free_ff_device_addr4(addr);
    return false;
}

void ff_xdr_free_ff_device_addr4(ff_device_addr4* addr) {
    xdr_nfree((xdrproc_t)xdr_ff_device_addr4, addr);
    memset(addr, 0, sizeof(*addr));
}

bool ff_xdr_decode_notify_deviceid(XDR* xdrs, bool change, notify_deviceid_change4* out) {
    notify_deviceid_delete4 del;

    memset(out, 0, sizeof(*out));
    if (change) {
        return xdr_notify_deviceid_change4(xdrs, out);
    }
    memset(&del, 0, sizeof(del));
    if (!xdr_notify_deviceid_delete4(xdrs, &del)) {
        return false;
    }
    out->ndc_layouttype = del.ndd_layouttype;
    memcpy(out->ndc_deviceid, del.ndd_deviceid, sizeof(out->ndc_deviceid));
    return true;
}

/*
 * Ganesha's inline XDR routines reference a few symbols of ganesha.nfsd's core library:
 * three from log.h and the server's zero-copy READ reply encoder. A client links
 * libntirpc only, so it gets these minimal definitions: logging is off (every component
 * at NIV_NULL), an allocation failure aborts as in Ganesha, and encoding a READ reply
 * (never done by a client) aborts with a message. They are weak: a program that also
 * links libganesha_nfsd gets the real ones.
 */
static log_levels_t ff_log_levels[COMPONENT_COUNT]; /* NIV_NULL */

__attribute__((weak)) log_levels_t* component_log_level = ff_log_levels;

__attribute__((weak)) void DisplayLogComponentLevel(log_components_t component, const char* file,
                                                    int line, const char* function,
                                                    log_levels_t level, const char* format, ...) {
    va_list args;

    (void)component;
    (void)level;
    fprintf(stderr, "ffclient: %s:%d %s: ", file, line, function);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

__attribute__((weak)) void LogMallocFailure(const char* file, int line, const char* function,
                                            const char* allocator) {
    fprintf(stderr, "ffclient: %s:%d %s: %s failed\n", file, line, function, allocator);
    abort();
}

__attribute__((weak)) struct xdr_uio* xdr_READ4res_uio_setup(struct READ4resok* objp) {
    (void)objp;
    fprintf(stderr, "ffclient: encoding a READ4res is a server's job\n");
    abort();
}
