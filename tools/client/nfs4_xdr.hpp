// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The one place the client library's C++ includes Ganesha's NFSv4 protocol header.
//
// Types (COMPOUND4args, nfs_argop4, fattr4, ...) come from Ganesha's include/nfsv41.h;
// nothing here re-declares protocol types. The header compiles as C++ (it carries its
// own extern "C"; the C headers it pulls in are wrapped here), but its XDR routines are
// only ever called from C, through ganesha_xdr.h: do not call xdr_nfs_* from C++.
//
// Op 77 (RFC 9766 LAYOUT_WCC): its types and XDR routines arrive with the project's
// patch to nfsv41.h (protocols/include/nfs4_layout_wcc_xdr.h). Built against a stock
// header they are absent and NFS4_OP_LAST_ONE is 76; the library then sends op 77 as a
// raw op (Compound::raw) and decodes its result as a status-only result (see
// compound.cpp, decode_op_result).
#pragma once

// The C headers trip -Wunused-parameter under C++ -Wextra; they are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
extern "C" {
#include "config.h"
#include "nfsv41.h"
}
#pragma GCC diagnostic pop
