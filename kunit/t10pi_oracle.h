/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The software T10-PI engine of mrkit's tests (kunit/t10pi_oracle.c).
 */
#ifndef _MRKIT_T10PI_ORACLE_H
#define _MRKIT_T10PI_ORACLE_H

#include <rdma/mrkit.h>

int mrkit_pi_generate(const struct mrkit_pi *pi, bool mem_domain,
		      const void *data, size_t len, void *prot);
int mrkit_pi_verify(const struct mrkit_pi *pi, bool mem_domain,
		    const void *data, size_t len, const void *prot,
		    struct mrkit_pi_result *res);

#endif /* _MRKIT_T10PI_ORACLE_H */
