/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * Every call the client makes into Ganesha's XDR routines (include/nfsv41.h) goes
 * through these functions, which are compiled as C (ganesha_xdr.c).
 *
 * nfsv41.h compiles as C++ too, but its routines load protocol enums (nfsstat4,
 * nfs_opnum4, ...) straight from the wire; in C++ an out-of-range enum value is
 * undefined behaviour (UBSan reports it on hostile replies), in C it is just an int.
 * So the routines run as C, and the C++ side reads wire statuses as uint32_t.
 *
 * Decoders free what they allocated when they fail; the *_free functions release a
 * successfully decoded value.
 */
#ifndef FF_CLIENT_GANESHA_XDR_H
#define FF_CLIENT_GANESHA_XDR_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpc_xdr;
struct bitmap4;
struct nfs_argop4;
struct nfs_resop4;
struct CB_COMPOUND4args;
struct CB_COMPOUND4res;
struct LAYOUT_WCC4args;
struct ff_layout_wcc4;
struct ff_layout4;
struct ff_device_addr4;
struct notify_deviceid_change4;

/* Encodes one nfs_argop4 (opnum and arguments). */
bool ff_xdr_encode_argop(struct rpc_xdr* xdrs, const struct nfs_argop4* op);
/* Decodes one nfs_resop4 into *res (zeroed first). */
bool ff_xdr_decode_resop(struct rpc_xdr* xdrs, struct nfs_resop4* res);
void ff_xdr_free_resop(struct nfs_resop4* res);

/* bitmap4 in either direction (the stream's). */
bool ff_xdr_bitmap4(struct rpc_xdr* xdrs, struct bitmap4* map);

/* The backchannel: decode a CB_COMPOUND4args, encode a CB_COMPOUND4res. */
bool ff_xdr_decode_cb_compound_args(struct rpc_xdr* xdrs, struct CB_COMPOUND4args* args);
void ff_xdr_free_cb_compound_args(struct CB_COMPOUND4args* args);
bool ff_xdr_encode_cb_compound_res(struct rpc_xdr* xdrs, const struct CB_COMPOUND4res* res);

/* Op 77 (RFC 9766), with the routines of protocols/include/nfs4_layout_wcc_xdr.h. */
bool ff_xdr_encode_layout_wcc_args(struct rpc_xdr* xdrs, const struct LAYOUT_WCC4args* args);
bool ff_xdr_encode_ff_layout_wcc(struct rpc_xdr* xdrs, const struct ff_layout_wcc4* body);

/* Flex-files bodies (RFC 8435) with Ganesha's routines: LAYOUTGET's loc_body and
 * GETDEVICEINFO's da_addr_body. Ganesha 4.3's stock xdr_ff_layout4 stops before
 * ffl_stats_collect_hint; the caller reads what is left (see flex_layout.cpp). */
bool ff_xdr_decode_ff_layout4(struct rpc_xdr* xdrs, struct ff_layout4* layout);
void ff_xdr_free_ff_layout4(struct ff_layout4* layout);
bool ff_xdr_decode_ff_device_addr4(struct rpc_xdr* xdrs, struct ff_device_addr4* addr);
void ff_xdr_free_ff_device_addr4(struct ff_device_addr4* addr);

/* One value of a CB_NOTIFY_DEVICEID change's notify_vals (RFC 8881 section 20.12): a
 * notify_deviceid_change4 when `change`, else a notify_deviceid_delete4, read into *out
 * (ndc_immediate false). Nothing to free. */
bool ff_xdr_decode_notify_deviceid(struct rpc_xdr* xdrs, bool change,
                                   struct notify_deviceid_change4* out);

#ifdef __cplusplus
}
#endif

#endif /* FF_CLIENT_GANESHA_XDR_H */
