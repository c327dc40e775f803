// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench: mrkit against the baselines a ULP would otherwise use, in
 * one boot, on the same inputs.
 *
 * Method (bench.h): every comparison runs the implementation and its
 * baseline in short bursts of the same number of operations, taking turns
 * in rotating order (A B, B A, ...), and prints each round as one "PAIR"
 * line of raw burst times; scripts/mrkit_report/stats.py on the host
 * takes the ratio pair by pair (median, bootstrap interval) and the extra
 * ns per operation.  bench_iters / 250 rounds (make bench: 100,000, 400
 * rounds; make check runs the least, 8, in its KASAN build so that this
 * cannot rot) of bursts of about 50 us each.
 *
 * W1, pool get+put at depths 32/128/1024, as get-then-put and as get k
 * (2, 8) then put all: mrkit_mr_get/put against the real
 * ib_mr_pool_get/put of ib_core.
 * W2, mapping 1/8/16/64/256 pages laid out contiguous, as page-sized
 * entries, as page-aligned discontiguous entries and with an unaligned
 * head and tail, on the fake device: mrkit_io_map + release against a bare
 * ib_map_mr_sg() of the same list (bench_w2_run(), also run on rxe and
 * siw by bench_rdma.c); and where its fixed cost goes, stage by stage
 * (w2_stages()).
 * Memory: slab growth for n pools of depth 128 (n = bench_pools, 1000 in
 * make bench) less that of n ib_mr_pool lists of the same MRs, per
 * descriptor: everything mrkit adds to an MR, counted by the allocator
 * (the descriptor with its slab rounding, its slot, the rkey index, the
 * pool structure and its debugfs files); the same at depth 256 splits it
 * into a per-descriptor and a per-pool part.  Creation time and memory
 * per pool at n/10 and n pools: linear.
 * W3 needs a real provider: bench_rdma.c.
 *
 * The UML kernel is uniprocessor: locks and atomics cost their
 * instructions, not cache-line transfers; this measures bookkeeping, not
 * contention (bench/bench_smp.c and bench/bench_w3_smp.c do, in a guest).
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/utsname.h>
#include <linux/vmstat.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>

#include "fake_dev.h"
#include "test_util.h"
#include "bench.h"

unsigned int bench_iters = 200;
module_param(bench_iters, uint, 0444);
MODULE_PARM_DESC(bench_iters, "rounds of paired bursts x 250 (make bench: 100000)");

static unsigned int bench_pools = 100;
module_param(bench_pools, uint, 0444);
MODULE_PARM_DESC(bench_pools, "pools in the memory measurement (make bench: 1000)");

#define BENCH_MAX_K	8

/**
 * bench_plan - size a comparison and allocate its times
 * @test: the running test (owns the allocation)
 * @r: the comparison, with @impl and @nimpl set
 *
 * bench_iters / 250 rounds, at least %BENCH_MIN_PAIRS, at most
 * %BENCH_MAX_PAIRS; the bursts' length is bench_rounds()'s.
 *
 * Return: 0, or -ENOMEM.
 */
int bench_plan(struct kunit *test, struct bench_run *r)
{
	r->rounds = clamp(bench_iters / 250, (unsigned int)BENCH_MIN_PAIRS,
			  (unsigned int)BENCH_MAX_PAIRS);
	if (!r->unit)
		r->unit = 1;
	r->t = kunit_kcalloc(test, r->rounds * r->nimpl, sizeof(*r->t),
			     GFP_KERNEL);
	return r->t ? 0 : -ENOMEM;
}

/**
 * bench_rounds - run a comparison
 * @r: the comparison, planned
 * @fn: runs and times one burst
 * @ctx: its context
 *
 * First the bursts' length: doubled from one iteration until the slowest
 * implementation's burst takes %BENCH_BURST_NS (UML's clock counts in
 * steps of 256 ns: a burst is hundreds of them), which also warms every
 * path.  Then in round i the implementations run in the order rotated by
 * i, so each takes every place equally often (two: A B, B A, A B, ...).
 */
void bench_rounds(struct bench_run *r, bench_burst_t fn, void *ctx)
{
	unsigned int i, j, k, n = r->nimpl;
	u64 slowest;

	for (r->burst = 1;; r->burst *= 2) {
		slowest = 0;
		for (k = 0; k < n; k++)
			slowest = max(slowest, fn(ctx, r->impl[k], r->burst));
		if (slowest >= BENCH_BURST_NS || r->burst >= BENCH_MAX_BURST)
			break;
	}
	for (i = 0; i < r->rounds; i++) {
		for (j = 0; j < n; j++) {
			k = (i + j) % n;
			r->t[i * n + k] = fn(ctx, r->impl[k], r->burst);
		}
		cond_resched();
	}
}

/**
 * bench_print - one line per round, for the host's statistics
 * @test: the running test
 * @r: the comparison, run
 * @w: the workload (W1, W2, W3)
 * @variant: the configuration, one word
 * @pages: pages per I/O (1 where it does not apply)
 * @impl: the implementation measured (impl[0], or the combination a
 *	four-way comparison stands for)
 * @base: the baseline (the last implementation)
 *
 * Two implementations print "PAIR ... t_impl t_base"; four print "PAIRD
 * ... a b c d", which the host reads as the pair (a - b + c, d).
 */
void bench_print(struct kunit *test, const struct bench_run *r,
		 const char *w, const char *variant, unsigned int pages,
		 const char *impl, const char *base)
{
	const u64 *t = r->t;
	unsigned int i;

	for (i = 0; i < r->rounds; i++, t += r->nimpl) {
		if (r->nimpl == 4)
			kunit_info(test, "PAIRD %s %s %u %s %s %u %llu %llu %llu %llu\n",
				   w, variant, pages, impl, base,
				   r->burst * r->unit, t[0], t[1], t[2], t[3]);
		else
			kunit_info(test, "PAIR %s %s %u %s %s %u %llu %llu\n",
				   w, variant, pages, impl, base,
				   r->burst * r->unit, t[0], t[1]);
	}
}

struct w1 {
	struct ib_qp		*qp;	/* for ib_mr_pool_* */
	struct mrkit_pool	*pool;
	unsigned int		k;	/* descriptors per I/O */
	unsigned long		failed;
};

enum w1_impl { W1_MRKIT, W1_IB_MR_POOL };

/* @iters times: get k descriptors, then put them all. */
static u64 w1_burst(void *ctx, unsigned int impl, unsigned int iters)
{
	struct w1 *w = ctx;
	void *got[BENCH_MAX_K];
	unsigned int i, j;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < iters; i++) {
		if (impl == W1_MRKIT) {
			for (j = 0; j < w->k; j++)
				got[j] = mrkit_mr_get(w->pool);
			for (j = 0; j < w->k; j++)
				mrkit_mr_put(got[j]);
		} else {
			for (j = 0; j < w->k; j++)
				got[j] = ib_mr_pool_get(w->qp, &w->qp->rdma_mrs);
			for (j = 0; j < w->k; j++)
				ib_mr_pool_put(w->qp, &w->qp->rdma_mrs, got[j]);
		}
	}
	t0 = ktime_get_ns() - t0;
	for (j = 0; j < w->k; j++)
		w->failed += IS_ERR_OR_NULL(got[j]);
	return t0;
}

static void bench_w1_test(struct kunit *test)
{
	static const unsigned int depths[] = { 32, 128, 1024 };
	static const unsigned int ks[] = { 1, 2, 8 };
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct bench_run r = {
		.impl = { W1_MRKIT, W1_IB_MR_POOL }, .nimpl = 2,
	};
	unsigned int d, ki;
	char cfg[32];
	struct w1 w = { .qp = fdev->qp };

	kunit_info(test, "BENCH KERNEL uml release=%s\n", init_utsname()->release);
	spin_lock_init(&w.qp->mr_lock);
	INIT_LIST_HEAD(&w.qp->rdma_mrs);
	for (d = 0; d < ARRAY_SIZE(depths); d++) {
		struct mrkit_pool_attr attr = {
			.name = "bench", .depth = depths[d], .pages_per_mr = 8,
			.node = NUMA_NO_NODE,
		};

		w.pool = mrkit_pool_create(fdev->pd, &attr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w.pool);
		KUNIT_ASSERT_EQ(test, ib_mr_pool_init(w.qp, &w.qp->rdma_mrs,
						      depths[d],
						      IB_MR_TYPE_MEM_REG, 8, 0),
				0);
		if (BENCH_RMW_COUNTED && d == 0) {
			/* mrkit's locked RMWs per get+put (its annotations). */
			unsigned long r0 = bench_rmw_ops();

			w.k = 1;
			w1_burst(&w, W1_MRKIT, 1000);
			kunit_info(test, "ATOMICS W1 mrkit_fence per_io=%lu.%03lu\n",
				   (bench_rmw_ops() - r0) / 1000,
				   (bench_rmw_ops() - r0) % 1000);
		}
		for (ki = 0; ki < ARRAY_SIZE(ks); ki++) {
			/* ns per descriptor got and put */
			w.k = ks[ki];
			r.unit = ks[ki];
			KUNIT_ASSERT_EQ(test, bench_plan(test, &r), 0);
			bench_rounds(&r, w1_burst, &w);
			snprintf(cfg, sizeof(cfg), "d%u_get%u", depths[d], ks[ki]);
			bench_print(test, &r, "W1", cfg, 1, "mrkit_fence",
				    "ib_mr_pool");
			KUNIT_EXPECT_EQ(test, in_use(w.pool), 0U);
		}
		ib_mr_pool_destroy(w.qp, &w.qp->rdma_mrs);
		mrkit_pool_destroy(w.pool);
	}
	KUNIT_EXPECT_EQ(test, w.failed, 0UL);
}

/* W2 layouts: @n pages. */
enum w2_layout { W2_CONTIG, W2_PAGES, W2_GAPPED, W2_UNALIGNED, W2_NR };

static const char * const w2_names[W2_NR] = {
	"contiguous", "page_entries", "aligned_gapped", "unaligned_head_tail",
};

static int w2_sg(struct scatterlist *sg, enum w2_layout l, unsigned int n)
{
	unsigned int i;

	switch (l) {
	case W2_CONTIG:
		sg_init_table(sg, 1);
		sg_dma_address(sg) = 0x40000000;
		sg_dma_len(sg) = n * PAGE_SIZE;
		return 1;
	case W2_UNALIGNED:
		sg_init_table(sg, 1);
		sg_dma_address(sg) = 0x40000000 + 512;
		sg_dma_len(sg) = n * PAGE_SIZE - 1024;
		return 1;
	default:
		sg_init_table(sg, n);
		for (i = 0; i < n; i++) {
			sg_dma_address(&sg[i]) = 0x40000000 + (u64)i *
				(l == W2_GAPPED ? 4 * PAGE_SIZE : PAGE_SIZE);
			sg_dma_len(&sg[i]) = PAGE_SIZE;
		}
		return n;
	}
}

enum w2_impl { W2_MRKIT, W2_BARE };

struct w2 {
	struct mrkit_pool	*pool;
	struct ib_mr		*mr;
	struct scatterlist	*sg;
	int			nents;
	unsigned long		bad;
};

/* @iters mappings of the list: mrkit's map + release, or a bare map. */
static u64 w2_burst(void *ctx, unsigned int impl, unsigned int iters)
{
	struct w2 *w = ctx;
	struct mrkit_io io;
	unsigned int i;
	u64 t0 = ktime_get_ns();
	int n;

	for (i = 0; i < iters; i++) {
		if (impl == W2_MRKIT) {
			mrkit_io_init(&io, w->pool, MRKIT_PEER_WRITES, NULL);
			n = mrkit_io_map(&io, w->sg, w->nents, 0);
			mrkit_io_release(&io, 0);
		} else {
			n = ib_map_mr_sg(w->mr, w->sg, w->nents, NULL,
					 PAGE_SIZE);
		}
		w->bad += n <= 0;
	}
	return ktime_get_ns() - t0;
}

/*
 * Where W2's fixed cost goes, on the fake device: a chain of
 * implementations, each one the previous plus one stage of mrkit's map and
 * release, so that each pair's extra ns is that stage's cost, measured.
 */
enum w2_stage {
	W2S_BARE,	/* ib_map_mr_sg() of a private MR */
	W2S_INIT,	/* + mrkit_io_init() */
	W2S_POOL,	/* + a descriptor's get and put, its MR mapped instead */
	W2S_CHUNK,	/* + the walk over the list (w2s_walk()) */
	W2S_FULL,	/* mrkit_io_map() and mrkit_io_release() */
	W2S_NR
};

static const char * const w2s_names[W2S_NR] = {
	"bare", "init", "pool", "chunk", "full",
};

/*
 * The walk mrkit_io_map() makes of a list one descriptor takes whole:
 * none for one entry (mrkit_chunk_one()), the light one for a list that
 * may fit, else the chunk walk.  Returns whether the list fits.
 */
static bool w2s_walk(struct w2 *w, struct mrkit_chunk *c)
{
	u32 max = w->pool->pages_per_mr;

	if (w->nents == 1)
		return mrkit_chunk_one(w->sg, max, PAGE_SHIFT, false);
	if (w->nents <= max)
		return mrkit_list_whole(w->sg, w->nents);
	return !mrkit_chunk(w->sg, 0, w->nents, max, PAGE_SHIFT, false, 0, c);
}

static u64 w2s_burst(void *ctx, unsigned int impl, unsigned int iters)
{
	struct w2 *w = ctx;
	struct ib_mr *ibmr = w->mr;
	struct mrkit_mr *mr = NULL;
	struct mrkit_chunk c;
	struct mrkit_io io;
	unsigned int i;
	u64 t0 = ktime_get_ns();
	int n;

	for (i = 0; i < iters; i++) {
		if (impl == W2S_FULL) {
			mrkit_io_init(&io, w->pool, MRKIT_PEER_WRITES, NULL);
			n = mrkit_io_map(&io, w->sg, w->nents, 0);
			mrkit_io_release(&io, 0);
			w->bad += n <= 0;
			continue;
		}
		if (impl >= W2S_INIT)
			mrkit_io_init(&io, w->pool, MRKIT_PEER_WRITES, NULL);
		if (impl >= W2S_POOL) {
			mr = mrkit_mr_get(w->pool);
			if (IS_ERR(mr)) {
				w->bad++;
				continue;
			}
			ibmr = mr->ibmr;
		}
		if (impl >= W2S_CHUNK)
			w->bad += !w2s_walk(w, &c);
		n = ib_map_mr_sg(ibmr, w->sg, w->nents, NULL, PAGE_SIZE);
		if (mr)
			mrkit_mr_put(mr);
		w->bad += n <= 0;
	}
	return ktime_get_ns() - t0;
}

/*
 * W2STAGE lines: "W2STAGE <dev>_pages <n> <stage> <previous stage>" for
 * lists of 1, 16 and 256 page entries; the host's report says where W2's
 * cost over a bare map goes from them.
 */
static void w2_stages(struct kunit *test, struct w2 *w, const char *devname)
{
	static const unsigned int pages[] = { 1, 16, 256 };
	unsigned int p, s;
	char cfg[48];

	snprintf(cfg, sizeof(cfg), "%s_pages", devname);
	for (p = 0; p < ARRAY_SIZE(pages); p++) {
		w->nents = w2_sg(w->sg, W2_PAGES, pages[p]);
		for (s = W2S_INIT; s < W2S_NR; s++) {
			struct bench_run r = {
				.impl = { s, s - 1 }, .nimpl = 2,
			};

			if (bench_plan(test, &r)) {
				w->bad++;
				return;
			}
			bench_rounds(&r, w2s_burst, w);
			bench_print(test, &r, "W2STAGE", cfg, pages[p],
				    w2s_names[s], w2s_names[s - 1]);
		}
	}
}

/**
 * bench_w2_run - W2 on one device
 * @test: the running test
 * @devname: names the device in the output
 * @pd: a PD on it; everything made on it is gone when this returns
 */
void bench_w2_run(struct kunit *test, const char *devname, struct ib_pd *pd)
{
	static const unsigned int pages[] = { 1, 8, 16, 64, 256 };
	struct mrkit_pool_attr attr = {
		.name = "bench2", .depth = 4, .pages_per_mr = 256,
		.node = NUMA_NO_NODE,
	};
	struct bench_run r = { .impl = { W2_MRKIT, W2_BARE }, .nimpl = 2 };
	struct w2 w = {};
	unsigned int p, l;
	char cfg[48];

	w.sg = kunit_kcalloc(test, 256, sizeof(*w.sg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w.sg);
	w.pool = mrkit_pool_create(pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w.pool);
	w.mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 256);
	if (IS_ERR(w.mr)) {
		KUNIT_FAIL(test, "ib_alloc_mr: %ld", PTR_ERR(w.mr));
		mrkit_pool_destroy(w.pool);
		return;
	}
	for (p = 0; p < ARRAY_SIZE(pages); p++) {
		for (l = 0; l < W2_NR; l++) {
			w.nents = w2_sg(w.sg, l, pages[p]);
			if (bench_plan(test, &r)) {
				w.bad++;
				break;
			}
			bench_rounds(&r, w2_burst, &w);
			snprintf(cfg, sizeof(cfg), "%s_%s", devname, w2_names[l]);
			bench_print(test, &r, "W2", cfg, pages[p], "mrkit_fence",
				    "ib_map_mr_sg");
		}
	}
	w2_stages(test, &w, devname);
	ib_dereg_mr(w.mr);
	KUNIT_EXPECT_EQ(test, w.bad, 0UL);	/* every mapping mapped */
	KUNIT_EXPECT_EQ(test, in_use(w.pool), 0U);
	mrkit_pool_destroy(w.pool);
}

static void bench_w2_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);

	bench_w2_run(test, "fake", fdev->pd);
}

/*
 * Slab memory in use, in bytes.  Differences can be negative when the
 * allocator gives memory back meanwhile (KASAN's quarantine does).
 */
static s64 slab_bytes(void)
{
	return (global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
		global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B)) *
	       PAGE_SIZE;
}

struct mem {
	struct fake_dev		*fdev;
	struct mrkit_pool	**pools;
	struct list_head	*lists;
	u64			ns;	/* creation time of the last step */
	unsigned int		made;
};

/*
 * Slab growth for @n pools of @depth descriptors, mrkit's or (@ib)
 * ib_mr_pool lists of the same MRs on one QP; everything is freed again.
 */
static s64 mem_step(struct mem *m, unsigned int n, u32 depth, bool ib)
{
	struct mrkit_pool_attr attr = {
		.name = "slab", .depth = depth, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	struct ib_qp *qp = m->fdev->qp;
	s64 b0 = slab_bytes(), grown;
	unsigned int i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < n; i++) {
		if (ib) {
			INIT_LIST_HEAD(&m->lists[i]);
			if (ib_mr_pool_init(qp, &m->lists[i], depth,
					    IB_MR_TYPE_MEM_REG, 8, 0))
				break;
		} else {
			m->pools[i] = mrkit_pool_create(m->fdev->pd, &attr);
			if (IS_ERR(m->pools[i]))
				break;
		}
	}
	m->ns = ktime_get_ns() - t0;
	grown = slab_bytes() - b0;
	m->made = i;
	while (i--) {
		if (ib)
			ib_mr_pool_destroy(qp, &m->lists[i]);
		else
			mrkit_pool_destroy(m->pools[i]);
	}
	return grown;
}

#define MEM_DEPTH	128

/*
 * Memory: what mrkit adds to each MR, all costs counted by the allocator:
 * slab growth for n pools of depth 128 less that of n ib_mr_pool lists
 * of the same MRs (ib_alloc_mr's own objects, the provider's and ib_core's,
 * cancel out), per descriptor (n = bench_pools, 1000 in make bench).  The
 * same at depth 256 gives the per-descriptor part (the slope) and the
 * per-pool part (the rest).  Creation time and memory per pool for n/10
 * and n pools must not grow with the number of pools.
 */
static void bench_memory_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	unsigned int n = max(bench_pools, 100U);
	s64 mk128, ib128, mk256, ib256, tenth, per, slope;
	u64 ns_tenth, ns_all;
	struct mem m = {};
	bool linear;

	m.fdev = fake_dev_create(test, &fattr);
	m.pools = kunit_kcalloc(test, n, sizeof(*m.pools), GFP_KERNEL);
	m.lists = kunit_kcalloc(test, n, sizeof(*m.lists), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.pools);
	KUNIT_ASSERT_NOT_NULL(test, m.lists);
	spin_lock_init(&m.fdev->qp->mr_lock);

	kunit_info(test, "BENCH IOSIZE bytes=%zu\n", sizeof(struct mrkit_io));
	tenth = mem_step(&m, n / 10, MEM_DEPTH, false);
	ns_tenth = m.ns;
	KUNIT_EXPECT_EQ(test, m.made, n / 10);
	mk128 = mem_step(&m, n, MEM_DEPTH, false);
	ns_all = m.ns;
	KUNIT_EXPECT_EQ(test, m.made, n);
	ib128 = mem_step(&m, n, MEM_DEPTH, true);
	KUNIT_EXPECT_EQ(test, m.made, n);
	mk256 = mem_step(&m, n, 2 * MEM_DEPTH, false);
	KUNIT_EXPECT_EQ(test, m.made, n);
	ib256 = mem_step(&m, n, 2 * MEM_DEPTH, true);
	KUNIT_EXPECT_EQ(test, m.made, n);

	per = div_s64(mk128 - ib128, n * MEM_DEPTH);
	slope = div_s64(mk256 - ib256 - (mk128 - ib128), n * MEM_DEPTH);
	kunit_info(test, "BENCH MEMORY per_desc=%lld depth=%u pools=%u per_descriptor_part=%lld per_pool_part=%lld\n",
		   per, MEM_DEPTH, n, slope,
		   div_s64(mk128 - ib128, n) - slope * MEM_DEPTH);
	/* Linear: the per-pool cost of n pools within 1.5x that of n/10. */
	linear = ns_all * 2 * (n / 10) <= ns_tenth * 3 * n &&
		 tenth > 0 && mk128 * 2 * (n / 10) <= tenth * 3 * n;
	kunit_info(test, "BENCH SLAB pools=%u,%u create_us_per_pool=%llu,%llu slab_bytes_per_pool=%lld,%lld linear=%s\n",
		   n / 10, n, div_u64(ns_tenth, max(n / 10, 1U) * 1000),
		   div_u64(ns_all, n * 1000), div_s64(tenth, max(n / 10, 1U)),
		   div_s64(mk128, n), linear ? "met" : "not_met");
	/* Every pool's memory came back. */
	KUNIT_EXPECT_EQ(test, atomic_read(&m.fdev->mrs_alive), 0);
}

static struct kunit_case mrkit_bench_cases[] = {
	KUNIT_CASE(bench_w1_test),
	KUNIT_CASE(bench_w2_test),
	KUNIT_CASE(bench_memory_test),
	{}
};

static struct kunit_suite mrkit_bench_suite = {
	.name = "mrkit_bench",
	.test_cases = mrkit_bench_cases,
};

kunit_test_suites(&mrkit_bench_suite);
