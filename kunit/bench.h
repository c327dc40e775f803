/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by mrkit's benchmark suites (bench_test.c, bench_rdma.c).
 */
#ifndef _MRKIT_BENCH_H
#define _MRKIT_BENCH_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#define BENCH_MAX_REPS	16

extern unsigned int bench_iters;
extern unsigned int bench_reps;

static inline unsigned int bench_nreps(void)
{
	return clamp(bench_reps, 1U, (unsigned int)BENCH_MAX_REPS);
}

void bench_stats(u64 *s, unsigned int n, unsigned int ops, u64 *med,
		 u64 *min, u64 *max);
void bench_line(struct kunit *test, const char *w, const char *cfg,
		const char *impl, u64 med, u64 min, u64 max, u64 base,
		const char *base_name);
void bench_w2_run(struct kunit *test, const char *devname, struct ib_pd *pd);

#endif /* _MRKIT_BENCH_H */
