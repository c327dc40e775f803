// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench: mrkit against the anchors' approaches, side by side in one
 * boot, on the same inputs.
 *
 * W1, pool get+put at depths 32/128/1024, as get-then-put and as get k
 * (2, 8) then put all: mrkit against the real ib_mr_pool_get/put of
 * ib_core, an iSER-style private list under an irqsave spinlock, an
 * xprtrdma-style per-request lock-free cache with a locked fallback, and
 * a bare unlocked list (the floor).
 * W2, mapping 1/8/64/256 pages laid out contiguous, as page-sized entries,
 * as page-aligned discontiguous entries and with an unaligned head and
 * tail, on the fake device: mrkit_io_map + release against a bare
 * ib_map_mr_sg() of the same list and ib_sg_to_pages() with a no-op
 * callback (the floor).
 * Memory: bytes per descriptor beyond the provider's MR, and slab growth
 * for n/100, n/10 and n pools of depth 128 (n = bench_pools, 1000 in make
 * bench): creation time and memory per pool must stay flat.
 * W2 on rxe and siw, and W3, need real providers: bench_rdma.c.
 *
 * Every figure is the median (with min and max) of bench_reps repetitions
 * of bench_iters operations, implementations interleaved within each
 * repetition.  Lines start with "BENCH" for scripts/bench.sh.  The UML
 * kernel is uniprocessor: locks and atomics cost their instructions, not
 * cache-line transfers; this measures bookkeeping, not contention.
 * make check runs this with a tiny count so it cannot rot; make bench
 * runs 5 x 100,000.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/sort.h>
#include <linux/vmstat.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "test_util.h"
#include "bench.h"

unsigned int bench_iters = 200;
module_param(bench_iters, uint, 0444);
MODULE_PARM_DESC(bench_iters, "operations per repetition (make bench: 100000)");
unsigned int bench_reps = 5;
module_param(bench_reps, uint, 0444);
MODULE_PARM_DESC(bench_reps, "repetitions (at least 5)");

static unsigned int bench_pools = 100;
module_param(bench_pools, uint, 0444);
MODULE_PARM_DESC(bench_pools, "pools in the largest slab-growth step (make bench: 1000)");

#define BENCH_MAX_K	8

/* The anchors' pool shapes, written from their designs. */
struct iser_pool {
	spinlock_t		lock;	/* protects list */
	struct list_head	list;
};

struct xprt_pool {
	spinlock_t		lock;	/* the transport-wide fallback */
	struct list_head	list;
	struct list_head	req_free; /* one request's own cache, no lock */
};

struct bench_item {
	struct list_head	node;
};

struct w1 {
	struct ib_qp		*qp;	/* for ib_mr_pool_* */
	struct mrkit_pool	*pool;
	struct iser_pool	iser;
	struct xprt_pool	xprt;
	struct list_head	bare;
	struct bench_item	*items;
};

enum w1_impl { W1_MRKIT, W1_IB_MR_POOL, W1_ISER, W1_XPRT, W1_BARE, W1_NR };

static const char * const w1_names[W1_NR] = {
	"mrkit", "ib_mr_pool", "iser_list", "xprtrdma_cache", "bare_list",
};

static u64 w1_round(struct w1 *w, enum w1_impl impl, unsigned int k,
		    unsigned int iters)
{
	void *got[BENCH_MAX_K];
	unsigned long flags;
	struct bench_item *it;
	unsigned int i, j;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < iters; i++) {
		for (j = 0; j < k; j++) {
			switch (impl) {
			case W1_MRKIT:
				got[j] = mrkit_mr_get(w->pool);
				break;
			case W1_IB_MR_POOL:
				got[j] = ib_mr_pool_get(w->qp, &w->qp->rdma_mrs);
				break;
			case W1_ISER:
				spin_lock_irqsave(&w->iser.lock, flags);
				it = list_first_entry(&w->iser.list,
						      struct bench_item, node);
				list_del(&it->node);
				spin_unlock_irqrestore(&w->iser.lock, flags);
				got[j] = it;
				break;
			case W1_XPRT:
				it = list_first_entry_or_null(&w->xprt.req_free,
							      struct bench_item,
							      node);
				if (!it) {
					spin_lock(&w->xprt.lock);
					it = list_first_entry(&w->xprt.list,
							      struct bench_item,
							      node);
					spin_unlock(&w->xprt.lock);
				}
				list_del(&it->node);
				got[j] = it;
				break;
			default:
				it = list_first_entry(&w->bare,
						      struct bench_item, node);
				list_del(&it->node);
				got[j] = it;
				break;
			}
		}
		for (j = 0; j < k; j++) {
			switch (impl) {
			case W1_MRKIT:
				mrkit_mr_put(got[j]);
				break;
			case W1_IB_MR_POOL:
				ib_mr_pool_put(w->qp, &w->qp->rdma_mrs, got[j]);
				break;
			case W1_ISER:
				spin_lock_irqsave(&w->iser.lock, flags);
				list_add(&((struct bench_item *)got[j])->node,
					 &w->iser.list);
				spin_unlock_irqrestore(&w->iser.lock, flags);
				break;
			case W1_XPRT:
				/* Back to the request's own cache. */
				list_add(&((struct bench_item *)got[j])->node,
					 &w->xprt.req_free);
				break;
			default:
				list_add(&((struct bench_item *)got[j])->node,
					 &w->bare);
				break;
			}
		}
	}
	return ktime_get_ns() - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median, min, max of @n samples, in ns per operation (x100). */
void bench_stats(u64 *s, unsigned int n, unsigned int ops, u64 *med,
		 u64 *min, u64 *max)
{
	sort(s, n, sizeof(*s), cmp_u64, NULL);
	*med = div_u64(s[n / 2] * 100, ops);
	*min = div_u64(s[0] * 100, ops);
	*max = div_u64(s[n - 1] * 100, ops);
}

void bench_line(struct kunit *test, const char *w, const char *cfg,
		const char *impl, u64 med, u64 min, u64 max, u64 base,
		const char *base_name)
{
	kunit_info(test, "BENCH %s %s impl=%s median_ns=%llu.%02llu min=%llu.%02llu max=%llu.%02llu ratio_vs_%s=%llu.%03llu\n",
		   w, cfg, impl, med / 100, med % 100, min / 100, min % 100,
		   max / 100, max % 100, base_name,
		   base ? div64_u64(med * 1000, base) / 1000 : 0,
		   base ? div64_u64(med * 1000, base) % 1000 : 0);
}

static void bench_w1_test(struct kunit *test)
{
	static const unsigned int depths[] = { 32, 128, 1024 };
	static const unsigned int ks[] = { 1, 2, 8 };
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	unsigned int reps = bench_nreps();
	u64 s[W1_NR][BENCH_MAX_REPS], med[W1_NR], mn[W1_NR], mx[W1_NR];
	unsigned int d, ki, r, i;
	char cfg[48];
	struct w1 *w;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->qp = fdev->qp;
	spin_lock_init(&w->qp->mr_lock);
	INIT_LIST_HEAD(&w->qp->rdma_mrs);
	for (d = 0; d < ARRAY_SIZE(depths); d++) {
		struct mrkit_pool_attr attr = {
			.name = "bench", .depth = depths[d], .pages_per_mr = 8,
			.node = NUMA_NO_NODE,
		};

		w->pool = mrkit_pool_create(fdev->pd, &attr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->pool);
		KUNIT_ASSERT_EQ(test, ib_mr_pool_init(w->qp, &w->qp->rdma_mrs,
						      depths[d],
						      IB_MR_TYPE_MEM_REG, 8, 0),
				0);
		w->items = kcalloc(3 * depths[d], sizeof(*w->items), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, w->items);
		spin_lock_init(&w->iser.lock);
		INIT_LIST_HEAD(&w->iser.list);
		spin_lock_init(&w->xprt.lock);
		INIT_LIST_HEAD(&w->xprt.list);
		INIT_LIST_HEAD(&w->xprt.req_free);
		INIT_LIST_HEAD(&w->bare);
		for (i = 0; i < depths[d]; i++) {
			list_add(&w->items[i].node, &w->iser.list);
			list_add(&w->items[depths[d] + i].node, &w->xprt.list);
			list_add(&w->items[2 * depths[d] + i].node, &w->bare);
		}
		if (d == 0) {
			/* mrkit's locked RMWs per get+put (its annotations). */
			unsigned long r0 = mrkit_rmw_ops;

			w1_round(w, W1_MRKIT, 1, 1000);
			kunit_info(test, "ATOMICS W1 mrkit per_io=%lu.%03lu\n",
				   (mrkit_rmw_ops - r0) / 1000,
				   (mrkit_rmw_ops - r0) % 1000);
		}
		for (ki = 0; ki < ARRAY_SIZE(ks); ki++) {
			for (r = 0; r < reps; r++)
				for (i = 0; i < W1_NR; i++)
					s[i][r] = w1_round(w, i, ks[ki],
							   bench_iters);
			for (i = 0; i < W1_NR; i++)
				bench_stats(s[i], reps, bench_iters * ks[ki],
					    &med[i], &mn[i], &mx[i]);
			snprintf(cfg, sizeof(cfg), "depth=%u get=%u", depths[d],
				 ks[ki]);
			for (i = 0; i < W1_NR; i++)
				bench_line(test, "W1", cfg, w1_names[i], med[i],
					   mn[i], mx[i], med[W1_IB_MR_POOL],
					   "ib_mr_pool");
			KUNIT_EXPECT_EQ(test, in_use(w->pool), 0U);
		}
		ib_mr_pool_destroy(w->qp, &w->qp->rdma_mrs);
		mrkit_pool_destroy(w->pool);
		kfree(w->items);
	}
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

static int noop_set_page(struct ib_mr *mr, u64 addr)
{
	return 0;
}

enum w2_impl { W2_MRKIT, W2_BARE, W2_FLOOR, W2_NR_IMPL };

static const char * const w2_impl_names[W2_NR_IMPL] = {
	"mrkit_map+release", "ib_map_mr_sg", "ib_sg_to_pages_noop",
};

/* One mapping of @sg by @impl; returns what the mapping call returned. */
static int w2_once(enum w2_impl impl, struct mrkit_pool *pool,
		   struct ib_mr *mr, struct scatterlist *sg, int nents)
{
	struct mrkit_io io;
	int n;

	switch (impl) {
	case W2_MRKIT:
		mrkit_io_init(&io, pool, MRKIT_PEER_WRITES, NULL);
		n = mrkit_io_map(&io, sg, nents, 0);
		mrkit_io_release(&io, 0);
		return n;
	case W2_BARE:
		return ib_map_mr_sg(mr, sg, nents, NULL, PAGE_SIZE);
	default:
		mr->page_size = PAGE_SIZE;
		return ib_sg_to_pages(mr, sg, nents, NULL, noop_set_page);
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
	static const unsigned int pages[] = { 1, 8, 64, 256 };
	struct mrkit_pool_attr attr = {
		.name = "bench2", .depth = 4, .pages_per_mr = 256,
		.node = NUMA_NO_NODE,
	};
	unsigned int reps = bench_nreps();
	u64 s[W2_NR_IMPL][BENCH_MAX_REPS], med[W2_NR_IMPL];
	struct mrkit_pool *pool;
	u64 mn[W2_NR_IMPL], mx[W2_NR_IMPL];
	unsigned int p, l, r, i, it;
	unsigned int bad = 0;
	struct scatterlist *sg;
	struct ib_mr *mr;
	char cfg[64];
	int nents;

	sg = kunit_kcalloc(test, 256, sizeof(*sg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sg);
	pool = mrkit_pool_create(pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 256);
	if (IS_ERR(mr)) {
		KUNIT_FAIL(test, "ib_alloc_mr: %ld", PTR_ERR(mr));
		mrkit_pool_destroy(pool);
		return;
	}
	for (p = 0; p < ARRAY_SIZE(pages); p++) {
		for (l = 0; l < W2_NR; l++) {
			nents = w2_sg(sg, l, pages[p]);
			for (r = 0; r < reps; r++) {
				for (i = 0; i < W2_NR_IMPL; i++) {
					u64 t0 = ktime_get_ns();

					for (it = 0; it < bench_iters; it++)
						bad += w2_once(i, pool, mr, sg,
							       nents) <= 0;
					s[i][r] = ktime_get_ns() - t0;
				}
			}
			for (i = 0; i < W2_NR_IMPL; i++)
				bench_stats(s[i], reps, bench_iters, &med[i],
					    &mn[i], &mx[i]);
			snprintf(cfg, sizeof(cfg), "dev=%s pages=%u layout=%s",
				 devname, pages[p], w2_names[l]);
			for (i = 0; i < W2_NR_IMPL; i++)
				bench_line(test, "W2", cfg, w2_impl_names[i],
					   med[i], mn[i], mx[i], med[W2_BARE],
					   "ib_map_mr_sg");
		}
	}
	ib_dereg_mr(mr);
	KUNIT_EXPECT_EQ(test, bad, 0U);	/* every mapping mapped */
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	mrkit_pool_destroy(pool);
}

static void bench_w2_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);

	bench_w2_run(test, "fake", fdev->pd);
}

static void bench_memory_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "bench3", .depth = 128, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	size_t desc = ksize(pool->descs[0]);

	/*
	 * The descriptor object and its pool slot; the pool structure, the
	 * rkey index and debugfs are in the slab-growth figure.
	 */
	kunit_info(test, "BENCH IOSIZE bytes=%zu\n", sizeof(struct mrkit_io));
	kunit_info(test, "BENCH MEM descriptor sizeof=%zu slab_object=%zu slot=%zu pool_struct=%zu (per pool)\n",
		   sizeof(struct mrkit_mr), desc, sizeof(*pool->descs),
		   ksize(pool));
	KUNIT_EXPECT_LE(test, sizeof(struct mrkit_mr), desc);
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

#define SLAB_DEPTH	128

/*
 * Memory, slab growth: n/100, n/10 and n pools of depth 128 on the fake
 * device (n = bench_pools, 1000 in make bench).  Creation time and slab
 * memory per pool must not grow with the number of pools.  What is not
 * the provider's MR (its slab objects, known exactly) is counted as
 * mrkit's: the descriptor, its slot, the rkey index, the pool and its
 * debugfs files (and ib_core's restrack entry for the MR).
 */
static void bench_slab_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "slab", .depth = SLAB_DEPTH, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	unsigned int n = max(bench_pools, 100U), steps[3];
	s64 per_bytes[3], prov, b0;
	u64 per_ns[3], t0;
	struct mrkit_pool **pools;
	struct ib_mr **mrs;
	unsigned int st, i;
	bool linear;

	steps[0] = n / 100;
	steps[1] = n / 10;
	steps[2] = n;
	pools = kunit_kcalloc(test, n, sizeof(*pools), GFP_KERNEL);
	mrs = kunit_kcalloc(test, 1, sizeof(*mrs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pools);
	KUNIT_ASSERT_NOT_NULL(test, mrs);

	/* The provider's share, exactly: the fake MR and its page list. */
	mrs[0] = ib_alloc_mr(fdev->pd, IB_MR_TYPE_MEM_REG, 8);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mrs[0]));
	prov = ksize(to_fake_mr(mrs[0])) + ksize(to_fake_mr(mrs[0])->pages);
	ib_dereg_mr(mrs[0]);

	for (st = 0; st < ARRAY_SIZE(steps); st++) {
		b0 = slab_bytes();
		t0 = ktime_get_ns();
		for (i = 0; i < steps[st]; i++) {
			pools[i] = mrkit_pool_create(fdev->pd, &attr);
			if (IS_ERR(pools[i]))
				break;
		}
		per_ns[st] = div_u64(ktime_get_ns() - t0, max(i, 1U));
		per_bytes[st] = div_s64(slab_bytes() - b0, max(i, 1U));
		KUNIT_EXPECT_EQ(test, i, steps[st]);
		while (i--)
			mrkit_pool_destroy(pools[i]);
		kunit_info(test, "BENCH SLAB pools=%u depth=%u create_us_per_pool=%llu.%03llu slab_bytes_per_pool=%lld per_descriptor=%lld provider_mr=%lld mrkit=%lld\n",
			   steps[st], SLAB_DEPTH, per_ns[st] / 1000,
			   per_ns[st] % 1000, per_bytes[st],
			   div_s64(per_bytes[st], SLAB_DEPTH), prov,
			   div_s64(per_bytes[st], SLAB_DEPTH) - prov);
	}
	/* Linear: the per-pool cost of n pools within 1.5x that of n/10. */
	linear = per_ns[2] * 2 <= per_ns[1] * 3 &&
		 per_bytes[1] > 0 && per_bytes[2] * 2 <= per_bytes[1] * 3;
	kunit_info(test, "BENCH SLABGOAL linear=%s time_ratio=%llu.%02llu bytes_ratio=%lld.%02lld\n",
		   linear ? "met" : "not_met",
		   div64_u64(per_ns[2] * 100, max(per_ns[1], 1ULL)) / 100,
		   div64_u64(per_ns[2] * 100, max(per_ns[1], 1ULL)) % 100,
		   div64_s64(per_bytes[2] * 100, max(per_bytes[1], 1LL)) / 100,
		   abs(div64_s64(per_bytes[2] * 100, max(per_bytes[1], 1LL)) % 100));
	/* Every pool's memory came back. */
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
}

static struct kunit_case mrkit_bench_cases[] = {
	KUNIT_CASE(bench_w1_test),
	KUNIT_CASE(bench_w2_test),
	KUNIT_CASE(bench_memory_test),
	KUNIT_CASE(bench_slab_test),
	{}
};

static struct kunit_suite mrkit_bench_suite = {
	.name = "mrkit_bench",
	.test_cases = mrkit_bench_cases,
};

kunit_test_suites(&mrkit_bench_suite);
