// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The NFSv3 and MOUNT v3 XDR routines rpcgen generates at build time from Ganesha's own
// Protocols/XDR/nfs23.x and mount.x (tools/CMakeLists.txt), compiled here as C against
// libntirpc. rpcgen writes for glibc's Sun RPC; ntirpc differs in two places the
// generated code touches, bridged here rather than by editing the output:
// - rpc/rpc.h does not bring the XDR primitives (xdr_bool, xdr_bytes, xdr_enum...): they
//   are inline functions of rpc/xdr_inline.h;
// - `hyper` is xdr_quad_t / xdr_u_quad_t in rpcgen's output, xdr_longlong_t /
//   xdr_u_longlong_t (the same quad_t / u_quad_t arguments) in ntirpc.
// rpcgen runs with -i 0: ntirpc has no XDR_INLINE for the inline fast paths.
#include <rpc/rpc.h>
#include <rpc/xdr_inline.h>

#define xdr_quad_t xdr_longlong_t
#define xdr_u_quad_t xdr_u_longlong_t

#include "nfs3_prot_xdr.c"
