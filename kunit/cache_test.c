// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for per-I/O descriptor caching (%MRKIT_POOL_IO_CACHE).
 *
 * mrkit_cache, on the fake device:
 *  - an I/O whose chain completed keeps its descriptor: the next map
 *    registers the same MR without a pool round trip, the counts say it
 *    is in use, and mrkit_io_release() on the idle I/O gives it back;
 *  - a map that needs fewer descriptors than the I/O kept gives the rest
 *    back; one that needs more takes them from the pool;
 *  - an I/O whose keys the peer invalidated keeps its descriptors too;
 *  - a flushed REG_MR or LOCAL_INV of a kept descriptor retires it: done()
 *    runs after its MR is deregistered, and the next map gets a fresh
 *    descriptor; a failed chain, a PI error and a fenced finish keep
 *    nothing;
 *  - lazy pools keep the kept key valid and invalidate it at the next
 *    registration;
 *  - mrkit_pool_destroy() takes back what idle I/Os kept;
 *  - the pool's invalidation counts stay exact over many uses of one
 *    kept descriptor.
 *
 * mrkit_cache_rdma, on rxe and siw: three uses of one I/O on one kept
 * descriptor, the peer writing and reading through each generation's key
 * (bytes compared); then the QP dies with a key live: done() runs once,
 * with an error, and the I/O keeps nothing; every key of every use is
 * dead.
 */

#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"

#define P	PAGE_SIZE

static struct mrkit_pool *cache_pool(struct kunit *test, struct ib_pd *pd,
				     u32 depth, u32 flags)
{
	struct mrkit_pool_attr attr = {
		.name = "cache", .depth = depth, .pages_per_mr = 8,
		.flags = MRKIT_POOL_IO_CACHE | flags, .node = NUMA_NO_NODE,
	};

	return test_pool(test, pd, &attr);
}

/* Map @pages pages, post, invalidate, complete: return the REG_MR's MR. */
static struct ib_mr *cycle(struct kunit *test, struct fake_dev *fdev,
			   struct test_io *t, u32 pages, int nmrs)
{
	struct scatterlist *sg = test_dma_sg(test, 0x700000, pages * P);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	unsigned int base;

	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), nmrs);
	base = fdev->nr_recs;
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t->io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	return fdev->recs[base].opcode == IB_WR_LOCAL_INV ?
	       fdev->recs[base + 1].mr : fdev->recs[base].mr;
}

static void cache_reuse_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 4, 0);
	struct mrkit_pool_stats st;
	unsigned int gets;
	struct ib_mr *mr0;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	mr0 = cycle(test, fdev, &t, 4, 1);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	mrkit_pool_get_stats(pool, &st);
	gets = st.allocated - st.in_use;
	/* Three more uses on the kept descriptor: the same MR each time. */
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 4, 1), mr0);
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 8, 1), mr0);
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 1, 1), mr0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 4);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 1U);
	KUNIT_EXPECT_EQ(test, st.allocated - st.in_use, gets);
	KUNIT_EXPECT_EQ(test, st.local_inv, 4ULL);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);

	/* More than it kept: the rest from the pool; fewer: the rest back. */
	KUNIT_EXPECT_PTR_NE(test, cycle(test, fdev, &t, 20, 3), NULL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 3U);
	cycle(test, fdev, &t, 4, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);

	/* The idle I/O gives back what it kept. */
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * Caching in a MRKIT_POOL_POST_INV pool: each completion posts the key's
 * LOCAL_INV and the I/O keeps its descriptor; the next use registers the
 * same MR behind that LOCAL_INV with none of its own.  A LOCAL_INV that
 * was flushed (the QP in error) leaves the key valid: the next use after
 * the drain invalidates it first.  A REG_MR flushed too leaves the key's
 * state unknown: the next use takes another descriptor.
 */
static void cache_post_inv_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 4,
					     MRKIT_POOL_LAZY_INV |
					     MRKIT_POOL_POST_INV);
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 4 * P);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct test_io t;
	struct ib_mr *mr0;
	unsigned int base;
	u32 key0;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	mr0 = cycle(test, fdev, &t, 4, 1);
	base = fdev->nr_recs;
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 4, 1), mr0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 3);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 2].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 2].key, fdev->recs[base].key);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 2);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);

	/* Registered, then the QP fails before the LOCAL_INV runs. */
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	fdev->qp_error = true;
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR,
					    FAKE_MAX_RECORDS), 1U);
	fdev->qp_error = false;
	mrkit_pool_qp_drained(pool);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 3);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 4, 1), mr0);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].key, fdev->recs[base].key);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 2].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);

	/*
	 * The QP fails before the REG_MR runs: it flushes, then the posted
	 * LOCAL_INV of a key never registered, with the descriptor kept.
	 * The next use retires it and takes a fresh one from the pool.
	 */
	fdev->qp_error = true;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR,
					    FAKE_MAX_RECORDS), 2U);
	fdev->qp_error = false;
	mrkit_pool_qp_drained(pool);
	KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, fdev->recs[base].key));
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	base = fdev->nr_recs;
	KUNIT_EXPECT_PTR_NE(test, cycle(test, fdev, &t, 4, 1), mr0);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 1U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	key0 = mr0->lkey;
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, key0));
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * The peer invalidated the I/O's only key (SEND_WITH_INV, as nvme's
 * target does): mrkit_io_complete() posts nothing and done() runs at once,
 * and the I/O keeps its descriptor as after a completed chain - the next
 * use registers the same MR with a new key, without a pool round trip.
 * One key of two invalidated by the peer: the other's LOCAL_INV, then both
 * kept.
 */
static void cache_remote_inv_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 4, 0);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct mrkit_seg seg[2];
	unsigned int base, gets;
	struct ib_mr *mr0;
	struct test_io t;
	int use;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	mr0 = cycle(test, fdev, &t, 4, 1);
	mrkit_pool_get_stats(pool, &st);
	gets = st.allocated - st.in_use;
	for (use = 0; use < 3; use++) {
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 4 * P),
						   1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, seg, 1), 1);
		base = fdev->nr_recs;
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		KUNIT_EXPECT_PTR_EQ(test, fdev->recs[base].mr, mr0);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		KUNIT_EXPECT_TRUE(test, fake_peer_invalidate(fdev, seg[0].key));
		KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, seg[0].key), 0);
		base = fdev->nr_recs;
		KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);	/* nothing posted */
		KUNIT_EXPECT_EQ(test, t.rec.calls, 2 + use);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	}
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.allocated - st.in_use, gets);
	KUNIT_EXPECT_EQ(test, st.remote_inv, 3ULL);

	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, seg, 2), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_TRUE(test, fake_peer_invalidate(fdev, seg[1].key));
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, seg[1].key), 0);
	base = fdev->nr_recs;
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 1U);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 5);
	KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
	/* Neither key is valid at the device any more. */
	KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, seg[0].key));
	KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, seg[1].key));
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* done() records whether the MR under ctx's key is still registered. */
struct dead_ctx {
	struct fake_dev	*fdev;
	u32		key;
};

static void alive_at_done(struct test_io *t)
{
	struct dead_ctx *c = t->rec.ctx;

	t->rec.seen = fake_mr_alive(c->fdev, c->key);
}

/*
 * A kept descriptor's REG_MR flushed, then its LOCAL_INV flushed: each
 * time done() runs only once the MR is deregistered, and the next map
 * registers a fresh MR.
 */
static void cache_flush_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 2, 0);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct dead_ctx c = { .fdev = fdev };
	struct mrkit_seg seg;
	struct ib_mr *mr0;
	int flush_inv;
	u32 idx0;

	for (flush_inv = 0; flush_inv < 2; flush_inv++) {
		struct test_io t;

		tio_init(&t, pool, MRKIT_PEER_WRITES);
		t.rec.at_done = alive_at_done;
		t.rec.ctx = &c;
		mr0 = cycle(test, fdev, &t, 4, 1);
		/* The MR's index, not its address: a fresh one may reuse it. */
		idx0 = mr0->lkey >> 8;
		KUNIT_ASSERT_EQ(test, in_use(pool), 1U);

		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000,
								      4 * P),
						   1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
		c.key = seg.key;
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL),
				0);
		KUNIT_ASSERT_PTR_EQ(test, fdev->recs[fdev->nr_recs - 2].mr, mr0);
		if (flush_inv) {
			/* The REG_MR completed; the LOCAL_INV is flushed. */
			fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
			KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
			fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
		} else {
			fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
			KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
			fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
		}
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 2);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		KUNIT_EXPECT_EQ_MSG(test, t.rec.seen, 0,
				    "done() with the flushed MR still registered");
		/* Nothing kept from a failed chain. */
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		KUNIT_EXPECT_NE(test, cycle(test, fdev, &t, 4, 1)->lkey >> 8, idx0);
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	}
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/* A lazy pool keeps the key valid; the next registration invalidates it. */
static void cache_lazy_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 2,
					     MRKIT_POOL_LAZY_INV);
	unsigned int base;
	struct ib_mr *mr0;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	mr0 = cycle(test, fdev, &t, 4, 1);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, 0, IB_WR_LOCAL_INV), 0U);
	KUNIT_EXPECT_TRUE(test, to_fake_mr(mr0)->valid);
	base = fdev->nr_recs;
	KUNIT_EXPECT_PTR_EQ(test, cycle(test, fdev, &t, 4, 1), mr0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 1U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* Destroy takes back what idle I/Os kept, and waits for nothing else. */
static void cache_destroy_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "cached", .depth = 4, .pages_per_mr = 8,
		.flags = MRKIT_POOL_IO_CACHE, .node = NUMA_NO_NODE,
	};
	int objs = atomic_read(&mrkit_live_objects);
	struct mrkit_pool *pool;
	struct test_io a, b;

	pool = mrkit_pool_create(fdev->pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	tio_init(&a, pool, MRKIT_PEER_WRITES);
	tio_init(&b, pool, MRKIT_PEER_WRITES);
	cycle(test, fdev, &a, 12, 2);
	cycle(test, fdev, &b, 4, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 3U);
	mrkit_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
}

/*
 * The invalidation counts live in the descriptors, carried into the pool
 * every 256: exact across the carry, for one kept descriptor used 300
 * times each way (a LOCAL_INV, a remote invalidation) and a second
 * descriptor beside it.
 */
static void cache_counts_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = cache_pool(test, fdev->pd, 4, 0);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct test_io t, u;
	struct mrkit_seg seg;
	int i;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	tio_init(&u, pool, MRKIT_PEER_WRITES);
	for (i = 0; i < 300; i++) {
		cycle(test, fdev, &t, 1, 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, P),
						   1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		KUNIT_ASSERT_TRUE(test, fake_peer_invalidate(fdev, seg.key));
		KUNIT_ASSERT_EQ(test, mrkit_io_remote_inv(&t.io, seg.key), 0);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		/* Every WR completed: room for the next records. */
		fdev->nr_recs = 0;
		fdev->next_complete = 0;
	}
	cycle(test, fdev, &u, 1, 1);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 600);
	KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.local_inv, 301ULL);
	KUNIT_EXPECT_EQ(test, st.remote_inv, 300ULL);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

static struct kunit_case cache_cases[] = {
	KUNIT_CASE(cache_reuse_test),
	KUNIT_CASE(cache_remote_inv_test),
	KUNIT_CASE(cache_counts_test),
	KUNIT_CASE(cache_flush_test),
	KUNIT_CASE(cache_lazy_test),
	KUNIT_CASE(cache_post_inv_test),
	KUNIT_CASE(cache_destroy_test),
	{}
};

static struct kunit_suite cache_suite = {
	.name = "mrkit_cache",
	.test_cases = cache_cases,
};

static int qp_error(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/* One use of @t over @buf: the peer writes and reads through its key. */
static void cache_rdma_use(struct kunit *test, struct mrk_pair *pair,
			   struct test_io *t, u8 *buf, u8 fill,
			   struct mrkit_seg *seg)
{
	struct scatterlist sg;
	struct mrk_wait w;

	sg_init_one(&sg, buf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, &sg, 1, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t->io, seg, 1), 1);
	KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t->io, 0, 0, 8192), 0);
	memset(pair->pbuf, fill, 64);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
					    seg->addr, seg->key, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ, 4096, 64,
					    seg->addr, seg->key, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)pair->pbuf + 4096, pair->pbuf, 64), 0);
}

static void cache_rdma_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = cache_pool(test, pair->local.pd, 2, 0);
	struct mrkit_seg seg[4];
	struct test_io t;
	u8 *buf;
	int r;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	tio_init(&t, pool, MRKIT_PEER_BIDI);
	for (r = 0; r < 3; r++) {
		cache_rdma_use(test, pair, &t, buf, 0x40 + r, &seg[r]);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, pair->local.qp), 0);
		KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
		t.rec.calls = 0;
		KUNIT_EXPECT_EQ(test, buf[0], (u8)(0x40 + r));
		KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
		if (r) {
			/* The same MR, a new key. */
			KUNIT_EXPECT_EQ(test, seg[r].key >> 8, seg[0].key >> 8);
			KUNIT_EXPECT_NE(test, seg[r].key, seg[r - 1].key);
		}
	}
	/* The QP dies with a kept descriptor's registration live. */
	cache_rdma_use(test, pair, &t, buf, 0x50, &seg[3]);
	KUNIT_ASSERT_EQ(test, qp_error(pair->local.qp), 0);
	mrk_poll(pair, NULL, 300);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, pair->local.qp), 0);
	mrk_poll(pair, NULL, 300);
	/* Everything posted on the dead QP has been flushed and polled. */
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_NE(test, t.rec.status, 0);
	/* Nothing was kept: the next use has a fresh MR. */
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	/*
	 * Every key of every use is dead: another connection in the PD (a
	 * refused access kills the connection that tried it: one each).
	 */
	for (r = 0; r < 4; r++) {
		struct mrk_pair *probe = mrk_pair_create_pd(test, kind,
							    pair->local.pd);

		KUNIT_EXPECT_EQ_MSG(test, mrk_peer_access_dead(probe, seg[r].addr,
							       seg[r].key, buf,
							       64), 0,
				    "use %d's key still works", r);
	}
}

static struct kunit_case cache_rdma_cases[] = {
	KUNIT_CASE_PARAM(cache_rdma_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite cache_rdma_suite = {
	.name = "mrkit_cache_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = cache_rdma_cases,
};

kunit_test_suites(&cache_suite, &cache_rdma_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(MRKIT);
