/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by mrkit's benchmark suites (bench_test.c, bench_rdma.c): the
 * paired-burst runner.  Implementations take turns in short bursts of the
 * same number of operations, in rotating order (A B, B A, ...: ABBA for
 * two); every round is printed as one line, which the host's
 * scripts/mrkit_report/stats.py turns into the median of the paired
 * ratios with its bootstrap interval.
 */
#ifndef _MRKIT_BENCH_H
#define _MRKIT_BENCH_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "mrkit_priv.h"

#define BENCH_MIN_PAIRS	8
#define BENCH_MAX_PAIRS	1000
#define BENCH_MAX_IMPLS	4
#define BENCH_BURST_NS	50000	/* the slowest implementation's burst */
#define BENCH_MAX_BURST	1048576

extern unsigned int bench_iters;

/*
 * Where mrkit_priv.h compiles the counting of mrkit_rmw() in: the ATOMICS
 * lines and their assertions exist only there.
 */
#if IS_ENABLED(CONFIG_MRKIT_COUNT_RMW)
#define BENCH_RMW_COUNTED	1
static inline unsigned long bench_rmw_ops(void)
{
	return mrkit_rmw_ops;
}
#else
#define BENCH_RMW_COUNTED	0
static inline unsigned long bench_rmw_ops(void)
{
	return 0;
}
#endif

/*
 * One burst: @ops operations of implementation @impl; returns the ns they
 * took.
 */
typedef u64 (*bench_burst_t)(void *ctx, unsigned int impl, unsigned int ops);

/*
 * A comparison: @nimpl implementations (impl[0] the one measured, the last
 * its baseline), @rounds rounds of one burst of @burst iterations each,
 * times in @t[round * nimpl + k] for impl[k].  An iteration is @unit
 * operations (0 counts as 1), the unit of the printed figures.
 */
struct bench_run {
	unsigned int	impl[BENCH_MAX_IMPLS];
	unsigned int	nimpl;
	unsigned int	rounds;
	unsigned int	burst;
	unsigned int	unit;
	u64		*t;
};

int bench_plan(struct kunit *test, struct bench_run *r);
void bench_rounds(struct bench_run *r, bench_burst_t fn, void *ctx);
void bench_print(struct kunit *test, const struct bench_run *r,
		 const char *w, const char *variant, unsigned int pages,
		 const char *impl, const char *base);
void bench_w2_run(struct kunit *test, const char *devname, struct ib_pd *pd);

#endif /* _MRKIT_BENCH_H */
