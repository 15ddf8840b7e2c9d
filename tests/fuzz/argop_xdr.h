/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * Ganesha's nfs_argop4 XDR routine (the patched nfsv41.h) called from C, as
 * Ganesha's COMPOUND decoder calls it: its inline routines store wire values
 * into enum fields and switch on them, which C allows for any value and C++
 * does not (UBSan's enum check would report the C++ instantiation, not
 * Ganesha's code).
 */
#ifndef FF_FUZZ_ARGOP_XDR_H
#define FF_FUZZ_ARGOP_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nfs_argop4;

/* Decodes one nfs_argop4 (opcode first); release with fuzz_argop_free(),
 * whatever the result. */
bool fuzz_argop_decode(const char *bytes, size_t len, struct nfs_argop4 *op);
/* Encodes it; false when it does not fit. */
bool fuzz_argop_encode(struct nfs_argop4 *op, char *buf, size_t size,
		       size_t *len);
void fuzz_argop_free(struct nfs_argop4 *op);
/* The opcode of a decoded op. */
uint32_t fuzz_argop_opnum(const struct nfs_argop4 *op);

#ifdef __cplusplus
}
#endif

#endif /* FF_FUZZ_ARGOP_XDR_H */
