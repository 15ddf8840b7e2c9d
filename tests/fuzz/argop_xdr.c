/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include "config.h"
#include "nfsv41.h"

#include "argop_xdr.h"

#include <string.h>

bool fuzz_argop_decode(const char *bytes, size_t len, struct nfs_argop4 *op)
{
	XDR x;
	bool ok;

	memset(op, 0, sizeof(*op));
	xdrmem_create(&x, (char *)bytes, (u_int)len, XDR_DECODE);
	ok = xdr_nfs_argop4(&x, op);
	xdr_destroy(&x);
	return ok;
}

bool fuzz_argop_encode(struct nfs_argop4 *op, char *buf, size_t size,
		       size_t *len)
{
	XDR x;
	bool ok;

	xdrmem_create(&x, buf, (u_int)size, XDR_ENCODE);
	ok = xdr_nfs_argop4(&x, op);
	*len = ok ? xdr_getpos(&x) : 0;
	xdr_destroy(&x);
	return ok;
}

void fuzz_argop_free(struct nfs_argop4 *op)
{
	xdr_free((xdrproc_t)xdr_nfs_argop4, op);
}

uint32_t fuzz_argop_opnum(const struct nfs_argop4 *op)
{
	return (uint32_t)op->argop;
}
