/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What mrkit's KUnit suites share (test_util.c).
 */
#ifndef _MRKIT_TEST_UTIL_H
#define _MRKIT_TEST_UTIL_H

#include <kunit/test.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "rdma_fixture.h"

struct test_io;

/*
 * @at_done, if set, runs inside the done callback (e.g. to check which
 * MRs are still alive at that moment); @ctx is the test's.
 */
struct done_rec {
	int calls;
	int status;
	void (*at_done)(struct test_io *t);
	void *ctx;
	int seen;
};

/* An I/O whose done callback is counted. */
struct test_io {
	struct mrkit_io io;
	struct done_rec rec;
};

void tio_init(struct test_io *t, struct mrkit_pool *pool, enum mrkit_dir dir);
struct mrkit_pool *frwr_pool(struct kunit *test, struct ib_pd *pd, u32 depth,
			     u32 pages);
struct mrkit_pool *test_pool(struct kunit *test, struct ib_pd *pd,
			     const struct mrkit_pool_attr *attr);
u32 in_use(struct mrkit_pool *pool);
struct scatterlist *test_dma_sg(struct kunit *test, u64 addr, u32 len);
int wait_io(struct mrk_pair *pair, struct test_io *t);

/* KUnit parameters: the real devices, rxe then siw; and a suite_init. */
const void *mrk_kind_gen_params(const void *prev, char *desc);
int mrk_rdma_suite_init(struct kunit_suite *suite);

static inline enum mrk_kind mrk_param_kind(struct kunit *test)
{
	return *(const enum mrk_kind *)test->param_value;
}

#ifdef CONFIG_FAULT_INJECTION
/*
 * mrkit's fault sites, on the kernel's fault_attr: fail the @nth next
 * call of @site (and no other), quietly; disarm every site; did the armed
 * fault fire?
 */
void mrk_fault_arm(enum mrkit_fault_site site, unsigned int nth);
void mrk_fault_disarm(void);
bool mrk_fault_fired(enum mrkit_fault_site site);
#endif

#endif /* _MRKIT_TEST_UTIL_H */
