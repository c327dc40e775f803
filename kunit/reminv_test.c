// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for remote invalidation and the rkey fence.
 *
 * mrkit_reminv: on the fake device, a match marks one registration
 * invalid and the rest are invalidated locally; every kind of bogus rkey
 * (another I/O's, an older generation, none registered, a second one, not
 * negotiated, a NULL I/O) gets -EPROTO/-EINVAL and changes nothing; the
 * fence versus a lazy pool; a lazily kept key offered for the next I/O
 * before its post is bogus; the rkey index; 100,000 random rkeys against
 * live registrations with zero false matches.
 *
 * mrkit_reminv_rdma: on rxe and siw, the peer RDMA-WRITEs then answers
 * with SEND_WITH_INV: the match is reported, no LOCAL_INV is posted for
 * it and its rkey is dead; three MRs with one remote invalidation all end
 * dead; in a caching pool the I/O keeps its descriptor across remotely
 * invalidated uses, each key dead, the bytes compared; a bogus (another
 * I/O's) rkey is refused and the I/O's own rkey
 * still dies; and 100 times in a row a peer write right after the I/O's
 * completion is refused.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"

#define P	PAGE_SIZE

/* Map and post an I/O of @pages pages (8-page MRs) on the fake device. */
static int fake_io_post(struct kunit *test, struct fake_dev *fdev,
			struct mrkit_pool *pool, struct test_io *t, u64 addr,
			u32 pages, struct mrkit_seg *segs)
{
	static struct ib_send_wr send = { .opcode = IB_WR_SEND };
	int n;

	tio_init(t, pool, MRKIT_PEER_WRITES);
	n = mrkit_io_map(&t->io, test_dma_sg(test, addr, pages * P), 1, 0);
	KUNIT_ASSERT_GT(test, n, 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t->io, segs, 8), n);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), 0);
	return n;
}

static void reminv_match_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct mrkit_pool_stats st;
	struct mrkit_seg segs[8];
	struct test_io t;
	unsigned int base;

	KUNIT_ASSERT_EQ(test, fake_io_post(test, fdev, pool, &t, 0x100000, 24,
					   segs), 3);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, segs[1].key),
			    &t.io);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, segs[1].key), 0);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[1].key));
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, segs[0].key),
			    &t.io);
	/* Only one per I/O. */
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, segs[2].key), -EPROTO);

	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 2U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 2);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, segs[0].key);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].key, segs[2].key);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);	/* the fence */
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.remote_inv, 1ULL);
	KUNIT_EXPECT_EQ(test, st.local_inv, 2ULL);
	KUNIT_EXPECT_EQ(test, st.bogus_inv, 1ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
}

enum bogus_kind {
	BOGUS_RANDOM,
	BOGUS_OLD_GENERATION,
	BOGUS_OTHER_IO,
	BOGUS_NOTHING_REGISTERED,
	BOGUS_NOT_POSTED,
	BOGUS_SECOND,
	BOGUS_NOT_NEGOTIATED,
	BOGUS_NULL_IO,
};

struct bogus_case {
	const char *name;
	enum bogus_kind kind;
	int err;
};

static const struct bogus_case bogus_cases[] = {
	{ "random_rkey", BOGUS_RANDOM, -EPROTO },
	{ "older_generation", BOGUS_OLD_GENERATION, -EPROTO },
	{ "other_io", BOGUS_OTHER_IO, -EPROTO },
	{ "nothing_registered", BOGUS_NOTHING_REGISTERED, -EPROTO },
	{ "mapped_not_posted", BOGUS_NOT_POSTED, -EPROTO },
	{ "second_for_one_io", BOGUS_SECOND, -EPROTO },
	{ "not_negotiated", BOGUS_NOT_NEGOTIATED, -EPROTO },
	{ "null_io", BOGUS_NULL_IO, -EINVAL },
};

static void bogus_desc(const struct bogus_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bogus, bogus_cases, bogus_desc);

static void reminv_bogus_test(struct kunit *test)
{
	const struct bogus_case *c = test->param_value;
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct mrkit_seg segs[8], other[8], old[8];
	struct mrkit_pool_stats before, after;
	struct test_io t, o, empty;
	unsigned int base, n = 0;
	u32 key = 0;
	int ret;

	/* The victim I/O's descriptor had a previous generation. */
	if (c->kind == BOGUS_OLD_GENERATION) {
		fake_io_post(test, fdev, pool, &t, 0x100000, 8, old);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		fake_complete(fdev, IB_WC_SUCCESS, 64);
	}
	if (c->kind != BOGUS_NOTHING_REGISTERED && c->kind != BOGUS_NOT_POSTED)
		n = fake_io_post(test, fdev, pool, &t, 0x100000, 16, segs);
	fake_io_post(test, fdev, pool, &o, 0x900000, 8, other);

	switch (c->kind) {
	case BOGUS_RANDOM:
		key = segs[0].key ^ 0x5a5a00;
		break;
	case BOGUS_OLD_GENERATION:
		key = old[0].key;
		KUNIT_EXPECT_NE(test, key, segs[0].key);
		KUNIT_EXPECT_EQ(test, key >> 8, segs[0].key >> 8);
		break;
	case BOGUS_OTHER_IO:
		key = other[0].key;
		break;
	case BOGUS_NOTHING_REGISTERED:
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		key = other[0].key;
		break;
	case BOGUS_NOT_POSTED:
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		n = mrkit_io_map(&t.io, test_dma_sg(test, 0x300000, P), 1, 0);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 8), 1);
		key = segs[0].key;
		break;
	case BOGUS_SECOND:
		KUNIT_ASSERT_EQ(test, mrkit_io_remote_inv(&t.io, segs[0].key), 0);
		key = segs[1].key;
		break;
	case BOGUS_NOT_NEGOTIATED:
		mrkit_pool_set_remote_inv(pool, false);
		key = segs[0].key;
		break;
	case BOGUS_NULL_IO:
		KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(NULL, segs[0].key),
				-EINVAL);
		memset(&empty, 0, sizeof(empty));
		KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&empty.io, 1),
				-EINVAL);
		key = segs[0].key ^ 1;
		break;
	}

	mrkit_pool_get_stats(pool, &before);
	ret = c->kind == BOGUS_NULL_IO ? mrkit_io_remote_inv(NULL, key) :
					 mrkit_io_remote_inv(&t.io, key);
	KUNIT_EXPECT_EQ(test, ret, c->err);
	mrkit_pool_get_stats(pool, &after);
	/* Nothing released, no other I/O touched. */
	KUNIT_EXPECT_EQ(test, after.in_use, before.in_use);
	KUNIT_EXPECT_EQ(test, after.remote_inv, before.remote_inv);
	KUNIT_EXPECT_EQ(test, after.bogus_inv,
			before.bogus_inv + (c->err == -EPROTO));
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, other[0].key),
			    &o.io);

	/* Every remaining rkey of the I/O is still invalidated locally. */
	base = fdev->nr_recs;
	if (c->kind == BOGUS_NOTHING_REGISTERED) {
		KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp),
				-EINVAL);
	} else {
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV),
				c->kind == BOGUS_SECOND ? n - 1 :
				c->kind == BOGUS_NOT_POSTED ? 0 : n);
		fake_complete(fdev, IB_WC_SUCCESS, 64);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	}
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&o.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, o.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/* A lazy pool of one descriptor. */
static struct mrkit_pool *lazy_pool(struct kunit *test, struct fake_dev *fdev)
{
	struct mrkit_pool_attr attr = {
		.name = "lazy", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV, .node = NUMA_NO_NODE,
	};

	return test_pool(test, fdev->pd, &attr);
}

static void reminv_lazy_pool_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = lazy_pool(test, fdev);
	struct mrkit_seg s1[8], s2[8];
	struct test_io t;
	unsigned int base;

	fake_io_post(test, fdev, pool, &t, 0x100000, 4, s1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	/* Fence off: done at once, no LOCAL_INV, the rkey left valid. */
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* The next registration invalidates the old key first. */
	fake_io_post(test, fdev, pool, &t, 0x200000, 4, s2);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s1[0].key);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
}

/* A pool of one descriptor whose completions post their LOCAL_INVs. */
static struct mrkit_pool *post_inv_pool(struct kunit *test, struct ib_pd *pd)
{
	struct mrkit_pool_attr attr = {
		.name = "postinv", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV | MRKIT_POOL_POST_INV,
		.node = NUMA_NO_NODE,
	};

	return test_pool(test, pd, &attr);
}

/*
 * MRKIT_POOL_POST_INV: the completion posts one unsignaled LOCAL_INV of
 * the key and gives the descriptor back at once; its next registration
 * on the QP needs no LOCAL_INV, unless the QP was drained since (the
 * posted one may have been flushed, as here: the key is still valid).
 */
static void reminv_post_inv_pool_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = post_inv_pool(test, fdev->pd);
	struct mrkit_pool_attr bad = {
		.name = "bad", .depth = 1, .flags = MRKIT_POOL_POST_INV,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_seg s1[8], s2[8], s3[8];
	struct mrkit_pool_stats st;
	struct test_io t;
	unsigned int base;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_pool_create(fdev->pd, &bad)),
			-EINVAL);
	fake_io_post(test, fdev, pool, &t, 0x100000, 4, s1);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 1);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s1[0].key);
	KUNIT_EXPECT_FALSE(test, fdev->recs[base].send_flags & IB_SEND_SIGNALED);

	/* The LOCAL_INV is queued ahead: the next chain is the REG_MR alone. */
	base = fdev->nr_recs;
	fake_io_post(test, fdev, pool, &t, 0x200000, 4, s2);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 2);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s2[0].key);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);

	/* Flushed before it ran, then the drain: invalidated again. */
	fdev->qp_error = true;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 16), 1U);
	fdev->qp_error = false;
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	mrkit_pool_qp_drained(pool);
	base = fdev->nr_recs;
	fake_io_post(test, fdev, pool, &t, 0x300000, 4, s3);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 3);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s2[0].key);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].opcode, IB_WR_REG_MR);
	fake_complete(fdev, IB_WC_SUCCESS, 16);

	/* The LOCAL_INV's post fails: invalidated as in a fenced pool. */
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 1);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s3[0].key);
	KUNIT_EXPECT_TRUE(test, fdev->recs[base].send_flags & IB_SEND_SIGNALED);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);

	/* A READ chain behind a posted LOCAL_INV: no LOCAL_INV of its own. */
	fake_io_post(test, fdev, pool, &t, 0x400000, 4, s1);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x500000, 4 * P),
					   1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5), 0);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 0U);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 0ULL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * An I/O completed on a QP in error before its chain ran, in a pool of
 * one descriptor with @flags: the pool takes the descriptor back at the
 * completion (MRKIT_POOL_POST_INV after posting a LOCAL_INV of the key,
 * a plain lazy pool with the key left valid), and then the REG_MR
 * flushes (@flushes: and the LOCAL_INV, which the REG_MR's flush took
 * the posted mark from).  Whether the key was ever registered is not
 * known, so the descriptor is not registered again: the next map retires
 * it (-EAGAIN while the pool of one replaces its MR) and then maps a
 * fresh MR, with no LOCAL_INV of a key the device never registered (the
 * fake device refuses one).
 */
/*
 * A pool of one descriptor (@flags) and an I/O over it, posted on a QP in
 * error and completed at once: the descriptor is back with its REG_MR
 * still queued (fake_complete() flushes it).
 */
static struct mrkit_pool *given_back_queued(struct kunit *test,
					    struct fake_dev *fdev, u32 flags,
					    struct test_io *t,
					    struct mrkit_seg *segs)
{
	struct mrkit_pool_attr attr = {
		.name = "flushed", .depth = 1, .pages_per_mr = 8,
		.flags = flags, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);

	fdev->qp_error = true;
	fake_io_post(test, fdev, pool, t, 0x100000, 4, segs);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t->io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t->rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	return pool;
}

static void flushed_back(struct kunit *test, u32 flags, unsigned int flushes)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_seg s1[8], s2[8];
	struct mrkit_pool_stats st;
	struct mrkit_pool *pool;
	struct test_io t;
	unsigned int base;

	pool = given_back_queued(test, fdev, flags, &t, s1);
	/* The SEND has no cqe: only mrkit's WRs complete. */
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 16),
			flushes);
	fdev->qp_error = false;
	mrkit_pool_qp_drained(pool);
	/* Its key was never valid: a peer's access under it fails. */
	KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, s1[0].key));
	KUNIT_EXPECT_TRUE(test, fake_mr_alive(fdev, s1[0].key));

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x200000, 4 * P),
					   1, 0), -EAGAIN);
	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, s1[0].key));
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	base = fdev->nr_recs;
	fake_io_post(test, fdev, pool, &t, 0x200000, 4, s2);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 0U);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	if (flags & MRKIT_POOL_POST_INV)
		KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, s2[0].key));
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * A lazy pool gives a descriptor back with its REG_MR still queued on a QP
 * in error, and a new I/O takes it before the flush arrives.  The flush
 * only marks it (its state is the new owner's now); the hand-out rotates
 * the key; the post is refused with nothing posted - neither a LOCAL_INV
 * of the old key nor a REG_MR over a registration in an unknown state -
 * and finishing the I/O retires the descriptor.
 */
static void reminv_lazy_late_flush_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	static struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	const struct ib_send_wr *bad = NULL;
	struct mrkit_seg s1[8], s2[8];
	struct mrkit_pool_stats st;
	struct mrkit_pool *pool;
	struct test_io t;
	unsigned int base;

	pool = given_back_queued(test, fdev, MRKIT_POOL_LAZY_INV, &t, s1);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x200000, 4 * P),
					   1, 0), 1);
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 16), 1U);
	fdev->qp_error = false;
	mrkit_pool_qp_drained(pool);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, s2, 8), 1);
	KUNIT_EXPECT_NE(test, s2[0].key, s1[0].key);

	base = fdev->nr_recs;
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, &bad),
			-EIO);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&send);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, s1[0].key));

	/* The replacement MR registers with no LOCAL_INV before it. */
	base = fdev->nr_recs;
	fake_io_post(test, fdev, pool, &t, 0x300000, 4, s2);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 0U);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * The same late flush ahead of an RDMA READ chain into a local sink: the
 * chain is refused with nothing posted (no LOCAL_INV of the old key), and
 * the I/O is finished by the failure, done() with -EIO once the drain is
 * reported.
 */
static void reminv_lazy_late_flush_read_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_stats st;
	struct mrkit_pool *pool;
	struct mrkit_seg s1[8];
	struct test_io t;
	unsigned int base;

	pool = given_back_queued(test, fdev, MRKIT_POOL_LAZY_INV, &t, s1);
	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x200000, 4 * P),
					   1, 0), 1);
	KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 16), 1U);
	fdev->qp_error = false;
	base = fdev->nr_recs;
	KUNIT_EXPECT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5),
			-EIO);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * MRKIT_POOL_POST_INV: an I/O that takes a descriptor whose previous key's
 * LOCAL_INV is queued already, hands it out and never posts exposed no
 * registered key: it may be released, and neither an invalidation nor a
 * completion posts a second LOCAL_INV of the old key (the fake counts a
 * LOCAL_INV of an invalid key as an execution error).
 */
static void reminv_post_inv_unposted_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = post_inv_pool(test, fdev->pd);
	struct mrkit_seg s1[8], s2[8];
	unsigned int base, way;
	struct test_io t;

	for (way = 0; way < 3; way++) {
		fake_io_post(test, fdev, pool, &t, 0x100000, 4, s1);
		fake_complete(fdev, IB_WC_SUCCESS, 16);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		KUNIT_ASSERT_EQ(test, t.rec.calls, 1);

		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
						   test_dma_sg(test, 0x200000,
							       4 * P), 1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, s2, 8), 1);
		KUNIT_EXPECT_NE(test, s2[0].key, s1[0].key);
		base = fdev->nr_recs;
		if (way == 0)
			KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
		else if (way == 1)
			KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io,
								  fdev->qp), 0);
		else
			KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io,
								fdev->qp), 0);
		KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
		KUNIT_EXPECT_EQ(test, t.rec.calls, way ? 1 : 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		/* The queued LOCAL_INV runs, once. */
		fake_complete(fdev, IB_WC_SUCCESS, 16);
		KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	}
}

/*
 * The two rules that decide who invalidates a key an I/O never posted,
 * against each other: a lazy pool leaves the previous key valid for the
 * next registration to invalidate, and a %MRKIT_POOL_POST_INV pool whose
 * posted LOCAL_INV of it flushed after a new I/O took the descriptor
 * (@post_inv) does the same.  That I/O hands the descriptor out and never
 * posts it: released (@way 0), invalidated (1), completed (2) or released
 * lazily (3), it posts nothing and the descriptor goes back with the old
 * key, which the next registration invalidates ahead of its REG_MR; the
 * old key is not counted as one more the I/O left valid.
 */
static void unposted_old_key(struct kunit *test, unsigned int way,
			     bool post_inv)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "unposted", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV |
			 (post_inv ? MRKIT_POOL_POST_INV : 0),
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct mrkit_seg s1[8], s2[8];
	struct mrkit_pool_stats st;
	struct test_io t;
	unsigned int base;
	u64 lazy;
	int ret;

	fake_io_post(test, fdev, pool, &t, 0x100000, 4, s1);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	/* The QP fails: the completion's LOCAL_INV will flush unexecuted. */
	fdev->qp_error = post_inv;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_ASSERT_EQ(test, t.rec.calls, 1);

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x200000, 4 * P),
					   1, 0), 1);
	if (post_inv) {
		KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_WR_FLUSH_ERR,
						    16), 1U);
		fdev->qp_error = false;
		mrkit_pool_qp_drained(pool);
	}
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, s2, 8), 1);
	base = fdev->nr_recs;
	mrkit_pool_get_stats(pool, &st);
	lazy = st.lazy_released;
	if (way == 0)
		ret = mrkit_io_release(&t.io, 0);
	else if (way == 1)
		ret = mrkit_io_invalidate(&t.io, fdev->qp);
	else if (way == 2)
		ret = mrkit_io_complete(&t.io, fdev->qp);
	else
		ret = mrkit_io_release(&t.io, MRKIT_RELEASE_LAZY);
	KUNIT_EXPECT_EQ(test, ret, 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
	KUNIT_EXPECT_EQ(test, t.rec.calls, way == 1 || way == 2 ? 1 : 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ_MSG(test, st.lazy_released, lazy, "way %u", way);

	/* The old key still valid: the next registration invalidates it. */
	base = fdev->nr_recs;
	fake_io_post(test, fdev, pool, &t, 0x300000, 4, s2);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 1U);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s1[0].key);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_FALSE(test, fake_peer_invalidate(fdev, s1[0].key));
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static void reminv_unposted_old_key_test(struct kunit *test)
{
	unsigned int way;

	for (way = 0; way < 4; way++) {
		unposted_old_key(test, way, false);
		unposted_old_key(test, way, true);
	}
}

static void reminv_post_inv_flushed_back_test(struct kunit *test)
{
	flushed_back(test, MRKIT_POOL_LAZY_INV | MRKIT_POOL_POST_INV, 2);
}

static void reminv_lazy_flushed_back_test(struct kunit *test)
{
	flushed_back(test, MRKIT_POOL_LAZY_INV, 1);
}

/*
 * MRKIT_POOL_POST_INV, an I/O of five descriptors: the completion posts
 * its LOCAL_INVs in two batches and the second fails to post.  The I/O is
 * invalidated as in a fenced pool, with a signaled LOCAL_INV of the fifth
 * key only: the four already on the send queue are not invalidated twice
 * (the fake device counts a LOCAL_INV of an invalid key as an execution
 * error) but retired, and done() waits for their deregistration.
 */
static void reminv_post_inv_batch_fail_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "postinv5", .depth = 6, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV | MRKIT_POOL_POST_INV,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct mrkit_pool_stats st;
	struct mrkit_seg segs[8];
	struct test_io t;
	unsigned int base, i;

	KUNIT_ASSERT_EQ(test, fake_io_post(test, fdev, pool, &t, 0x100000, 40,
					   segs), 5);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 2, -ENOMEM);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 5);
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, fdev->recs[base + i].opcode,
				IB_WR_LOCAL_INV);
		KUNIT_EXPECT_EQ(test, fdev->recs[base + i].key, segs[i].key);
		KUNIT_EXPECT_EQ(test,
				!!(fdev->recs[base + i].send_flags & IB_SEND_SIGNALED),
				i == 4);
	}
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	/* The four retired MRs: deregistered after the drain, then done(). */
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 4U);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	/* The fifth, invalidated by its own LOCAL_INV, stays in the pool. */
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, fake_mr_alive(fdev, segs[i].key), i == 4);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 4ULL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * In a lazy pool a descriptor holds its previous use's key, still valid,
 * until the next I/O's REG_MR is posted.  That key offered for the next
 * I/O before its post names the previous use: bogus, and it changes
 * nothing - the post still invalidates the old key ahead of the REG_MR of
 * the new one, which the peer can then use.
 */
static void reminv_lazy_kept_key_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = lazy_pool(test, fdev);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct mrkit_seg s1[8], s2;
	struct test_io t;
	unsigned int base;

	fake_io_post(test, fdev, pool, &t, 0x100000, 4, s1);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_ASSERT_EQ(test, t.rec.calls, 1);

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x200000, 4 * P),
					   1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &s2, 1), 1);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, s1[0].key), -EPROTO);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, base + 3);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].key, s1[0].key);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].key, s2.key);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, s2.key), &t.io);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.bogus_inv, 1ULL);
	KUNIT_EXPECT_EQ(test, st.remote_inv, 0ULL);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * 100,000 random rkeys against 32 live registrations: half fully random,
 * half a live MR index with a random key byte (other generations).
 */
static void reminv_fuzz_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 40, 8);
	struct mrkit_pool_stats before, after;
	struct mrkit_seg (*segs)[8];
	struct test_io *t;
	struct rnd_state rnd;
	unsigned int i, j, k, false_match = 0, hits = 0;

	t = kunit_kcalloc(test, 8, sizeof(*t), GFP_KERNEL);
	segs = kunit_kcalloc(test, 8, sizeof(*segs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, segs);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, fake_io_post(test, fdev, pool, &t[i],
						   0x1000000 * (i + 1), 32,
						   segs[i]), 4);
	prandom_seed_state(&rnd, 0x6d726b74);
	mrkit_pool_get_stats(pool, &before);
	for (k = 0; k < 100000; k++) {
		u32 r = prandom_u32_state(&rnd);
		struct mrkit_io *io;
		bool live = false;

		if (k & 1)
			r = (segs[r % 8][(r >> 3) % 4].key & ~0xffU) |
			    (prandom_u32_state(&rnd) & 0xff);
		for (i = 0; i < 8; i++)
			for (j = 0; j < 4; j++)
				if (segs[i][j].key == r)
					live = true;
		io = mrkit_pool_find_rkey(pool, r);
		if (live) {
			hits++;
			continue;
		}
		if (io)
			false_match++;
		/* Offered to an I/O, a non-live rkey never matches. */
		if (mrkit_io_remote_inv(&t[k % 8].io, r) != -EPROTO)
			false_match++;
	}
	mrkit_pool_get_stats(pool, &after);
	KUNIT_EXPECT_EQ(test, false_match, 0U);
	KUNIT_EXPECT_GT(test, hits, 0U);	/* the live keys were hit too */
	KUNIT_EXPECT_EQ(test, after.in_use, before.in_use);
	KUNIT_EXPECT_EQ(test, after.remote_inv, before.remote_inv);
	KUNIT_EXPECT_EQ(test, after.allocated, before.allocated);
	for (i = 0; i < 8; i++)
		for (j = 0; j < 4; j++)
			KUNIT_EXPECT_PTR_EQ(test,
					    mrkit_pool_find_rkey(pool,
								 segs[i][j].key),
					    &t[i].io);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t[i].io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

static void reminv_supported_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {};
	static const struct fake_dev_attr iw = { .iwarp = true };
	static const struct fake_dev_attr none = { .no_defaults = true,
						   .frpl = 16 };

	struct fake_dev *d_ib = fake_dev_create(test, &ib);
	struct fake_dev *d_iw = fake_dev_create(test, &iw);
	struct fake_dev *d_none = fake_dev_create(test, &none);

	KUNIT_EXPECT_TRUE(test, mrkit_remote_inv_supported(&d_ib->ibdev));
	KUNIT_EXPECT_TRUE(test, mrkit_remote_inv_supported(&d_iw->ibdev));
	KUNIT_EXPECT_FALSE(test, mrkit_remote_inv_supported(&d_none->ibdev));
}

/*
 * mrkit_pool_find_rkey() names an I/O only for a key a peer can use: one
 * whose REG_MR the I/O handed to ib_post_send() (not one merely handed
 * out, nor one a failed post never took), whose invalidation is not
 * posted yet, and whose registration grants the peer access (a local
 * sink only on iWARP, where the peer places the READ response).
 */
static void reminv_find_rkey_named_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {}, iw = { .iwarp = true };
	const struct fake_dev_attr *attrs[] = { &ib, &iw };
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_seg segs[2];
	struct fake_dev *fdev;
	struct mrkit_pool *pool;
	struct test_io t;
	unsigned int a;

	fdev = fake_dev_create(test, &ib);
	pool = frwr_pool(test, fdev->pd, 4, 8);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 2), 2);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
	/* [REG REG SEND] fails at the second REG_MR. */
	fdev->post_fail_wr = 1;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, segs[0].key), &t.io);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[1].key));
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));

	for (a = 0; a < ARRAY_SIZE(attrs); a++) {
		fdev = fake_dev_create(test, attrs[a]);
		pool = frwr_pool(test, fdev->pd, 4, 8);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000,
								      4 * P),
						   1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 2), 1);
		/* The sink registered, the caller's own READ to follow. */
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, NULL, NULL), 0);
		if (attrs[a]->iwarp)
			KUNIT_EXPECT_PTR_EQ(test,
					    mrkit_pool_find_rkey(pool, segs[0].key),
					    &t.io);
		else
			KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);

		/* A READ chain's sink: its invalidation goes with the READ. */
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000,
								      4 * P),
						   1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 2), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5),
				0);
		if (!attrs[a]->iwarp)
			KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, segs[0].key));
	}
}

/*
 * mrkit_pool_find_rkey() reads only the descriptor, never its MR: a
 * lookup that races with the replacement of a retired descriptor's MR
 * (freed, or NULL when the replacement failed) cannot touch it.  The
 * race is staged by taking the MR away while the registration is live.
 */
static void reminv_find_rkey_no_mr_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct mrkit_seg seg;
	struct ib_mr *ibmr;
	struct test_io t;

	fake_io_post(test, fdev, pool, &t, 0x10000, 1, &seg);
	ibmr = t.io.mrs->ibmr;
	t.io.mrs->ibmr = NULL;
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, seg.key), &t.io);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, seg.key + 1));
	t.io.mrs->ibmr = ibmr;
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
}

static struct kunit_case mrkit_reminv_cases[] = {
	KUNIT_CASE(reminv_match_test),
	KUNIT_CASE_PARAM(reminv_bogus_test, bogus_gen_params),
	KUNIT_CASE(reminv_lazy_pool_test),
	KUNIT_CASE(reminv_lazy_kept_key_test),
	KUNIT_CASE(reminv_post_inv_pool_test),
	KUNIT_CASE(reminv_post_inv_unposted_test),
	KUNIT_CASE(reminv_unposted_old_key_test),
	KUNIT_CASE(reminv_lazy_late_flush_test),
	KUNIT_CASE(reminv_lazy_late_flush_read_test),
	KUNIT_CASE(reminv_post_inv_batch_fail_test),
	KUNIT_CASE(reminv_post_inv_flushed_back_test),
	KUNIT_CASE(reminv_lazy_flushed_back_test),
	KUNIT_CASE(reminv_fuzz_test),
	KUNIT_CASE(reminv_supported_test),
	KUNIT_CASE(reminv_find_rkey_named_test),
	KUNIT_CASE(reminv_find_rkey_no_mr_test),
	{}
};

static struct kunit_suite mrkit_reminv_suite = {
	.name = "mrkit_reminv",
	.test_cases = mrkit_reminv_cases,
};

/* ---- real devices ---- */

/* A local buffer of @pages pages registered for the peer to write. */
struct ri_io {
	struct test_io t;
	u8 *buf;
	struct scatterlist sg;
	struct mrkit_seg segs[4];
	int n;
};

/* Map @r's buffer again and post its REG_MRs behind an empty SEND. */
static void ri_use(struct kunit *test, struct mrk_pair *pair, struct ri_io *r)
{
	struct ib_send_wr send = {};
	struct mrk_wait sent, recv;

	r->n = mrkit_io_map(&r->t.io, &r->sg, 1, MRKIT_MAP_DMA);
	KUNIT_ASSERT_GT(test, r->n, 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&r->t.io, r->segs, 4), r->n);
	/* The caller's WR behind the REG_MRs: an empty SEND to the peer. */
	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, SZ_512K, 64, &recv), 0);
	mrk_wait_init(&sent);
	send.opcode = IB_WR_SEND;
	send.send_flags = IB_SEND_SIGNALED;
	send.wr_cqe = &sent.cqe;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&r->t.io, pair->local.qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &sent, 5000), 0);
	KUNIT_ASSERT_EQ(test, sent.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &recv, 5000), 0);
}

static void ri_post(struct kunit *test, struct mrk_pair *pair,
		    struct mrkit_pool *pool, struct ri_io *r, u32 pages)
{
	r->buf = kunit_kzalloc(test, pages * P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->buf);
	sg_init_one(&r->sg, r->buf, pages * P);
	tio_init(&r->t, pool, MRKIT_PEER_WRITES);
	ri_use(test, pair, r);
}

/* The peer writes a pattern into segment @s, then sends with invalidate. */
static void ri_write_and_send_inv(struct kunit *test, struct mrk_pair *pair,
				  struct ri_io *r, int s, u32 inv_key,
				  struct mrk_wait *lrecv, u64 lrecv_dma)
{
	struct mrk_wait w;

	memset(pair->pbuf, 0xc0 + s, r->segs[s].length);
	KUNIT_ASSERT_EQ(test, mrk_local_post_recv(pair, lrecv_dma, 64, lrecv),
			0);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0,
					    r->segs[s].length, r->segs[s].addr,
					    r->segs[s].key, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_peer_send(pair, IB_WR_SEND_WITH_INV, inv_key,
					    &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, lrecv, 5000), 0);
	KUNIT_ASSERT_EQ(test, lrecv->wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, lrecv->wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_ASSERT_EQ(test, lrecv->wc.ex.invalidate_rkey, inv_key);
}

static u64 ri_recv_buf(struct kunit *test, struct mrk_pair *pair)
{
	void *b = kunit_kzalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	return ib_dma_map_single(pair->dev, b, 64, DMA_FROM_DEVICE);
}

static void reminv_rdma_match_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 0);
	u64 rdma = ri_recv_buf(test, pair);
	struct mrk_wait lrecv;
	struct ri_io r;
	u32 i;

	ri_post(test, pair, pool, &r, 4);
	KUNIT_ASSERT_EQ(test, r.n, 1);
	ri_write_and_send_inv(test, pair, &r, 0, r.segs[0].key, &lrecv, rdma);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&r.t.io,
						  lrecv.wc.ex.invalidate_rkey), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
	/* No LOCAL_INV for the remotely invalidated MR: done at once. */
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&r.t.io), 0U);
	KUNIT_EXPECT_EQ(test, r.t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	for (i = 0; i < r.segs[0].length; i++)
		if (r.buf[i] != 0xc0)
			break;
	KUNIT_EXPECT_EQ(test, i, r.segs[0].length);
	/* And the peer can no longer use the rkey. */
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(pair, r.segs[0].addr,
						   r.segs[0].key, r.buf, 64), 0);
}

static void reminv_rdma_three_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 2);
	u64 rdma = ri_recv_buf(test, pair);
	struct mrk_wait lrecv;
	struct ri_io r;
	int s;

	ri_post(test, pair, pool, &r, 6);
	KUNIT_ASSERT_EQ(test, r.n, 3);
	ri_write_and_send_inv(test, pair, &r, 1, r.segs[1].key, &lrecv, rdma);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&r.t.io, r.segs[1].key), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&r.t.io), 2U);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &r.t), 0);
	KUNIT_EXPECT_EQ(test, r.t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, r.buf[2 * P], 0xc1);
	/* All three rkeys are dead, each probed from its own connection. */
	for (s = 0; s < 3; s++) {
		struct mrk_pair *probe = mrk_pair_create_pd(test, kind,
							    pair->local.pd);

		KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, r.segs[s].addr,
							   r.segs[s].key,
							   r.buf + s * 2 * P,
							   64), 0);
		mrk_pair_destroy(probe);
	}
}

/*
 * A caching pool (MRKIT_POOL_IO_CACHE): the peer writes each use's data
 * and invalidates its key with SEND_WITH_INV; done() runs at once, the
 * I/O keeps its descriptor, and the next use registers the same MR under
 * a new key.  Each key is proven dead by a peer access from a connection
 * of its own; the bytes are compared.
 */
static void reminv_rdma_cached_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool_attr attr = {
		.name = "cached", .depth = 2, .flags = MRKIT_POOL_IO_CACHE,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, pair->local.pd, &attr);
	u64 rdma = ri_recv_buf(test, pair);
	struct mrk_wait lrecv;
	struct ri_io r;
	u32 key[2], i;
	int use;

	for (use = 0; use < 2; use++) {
		if (use) {
			memset(r.buf, 0, 4 * P);
			ri_use(test, pair, &r);
		} else {
			ri_post(test, pair, pool, &r, 4);
		}
		KUNIT_ASSERT_EQ(test, r.n, 1);
		key[use] = r.segs[0].key;
		ri_write_and_send_inv(test, pair, &r, 0, key[use], &lrecv, rdma);
		KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&r.t.io, key[use]), 0);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
		KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&r.t.io), 0U);
		KUNIT_EXPECT_EQ(test, r.t.rec.calls, use + 1);
		KUNIT_EXPECT_EQ(test, r.t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 1U);	/* kept */
		for (i = 0; i < r.segs[0].length; i++)
			if (r.buf[i] != 0xc0)
				break;
		KUNIT_EXPECT_EQ(test, i, r.segs[0].length);
	}
	/* The same MR (its index), a new key. */
	KUNIT_EXPECT_EQ(test, key[0] >> 8, key[1] >> 8);
	KUNIT_EXPECT_NE(test, key[0], key[1]);
	for (use = 0; use < 2; use++) {
		struct mrk_pair *probe = mrk_pair_create_pd(test, kind,
							    pair->local.pd);

		KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, r.segs[0].addr,
							   key[use], r.buf, 64), 0);
		mrk_pair_destroy(probe);
	}
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&r.t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static void reminv_rdma_bogus_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 0);
	u64 rdma = ri_recv_buf(test, pair);
	struct mrk_pair *probe;
	struct mrk_wait lrecv;
	struct ri_io a, b;

	ri_post(test, pair, pool, &a, 1);
	ri_post(test, pair, pool, &b, 1);
	/* The reply to A invalidates B's rkey. */
	ri_write_and_send_inv(test, pair, &a, 0, b.segs[0].key, &lrecv, rdma);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&a.t.io,
						  lrecv.wc.ex.invalidate_rkey),
			-EPROTO);
	/* Nothing of A or B changed in mrkit's view. */
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, a.segs[0].key),
			    &a.t.io);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, b.segs[0].key),
			    &b.t.io);
	KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
	/* A's own rkey is still invalidated locally, and dies. */
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&a.t.io, pair->local.qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&a.t.io), 1U);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &a.t), 0);
	KUNIT_EXPECT_EQ(test, a.t.rec.status, 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&b.t.io, pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &b.t), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	probe = mrk_pair_create_pd(test, kind, pair->local.pd);
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, a.segs[0].addr,
						   a.segs[0].key, a.buf, 64), 0);
}

/*
 * The fence, 100 times: the I/O's done callback has run, and a peer write
 * with its rkey right after that is refused.
 */
static void reminv_rdma_fence_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 2, 0);
	struct mrk_pair *probe;
	unsigned int i, dead = 0;
	struct mrk_wait w;
	struct ri_io r;

	for (i = 0; i < 100; i++) {
		ri_post(test, pair, pool, &r, 1);
		memset(pair->pbuf, 0x11, 64);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
						    r.segs[0].addr,
						    r.segs[0].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io,
							pair->local.qp), 0);
		KUNIT_ASSERT_EQ(test, wait_io(pair, &r.t), 0);
		KUNIT_ASSERT_EQ(test, r.t.rec.status, 0);
		/* Completed: the rkey must already be dead. */
		probe = mrk_pair_create_pd(test, kind, pair->local.pd);
		if (!mrk_peer_access_dead(probe, r.segs[0].addr, r.segs[0].key,
					  r.buf, 64))
			dead++;
		mrk_pair_destroy(probe);
		kunit_kfree(test, r.buf);
	}
	KUNIT_EXPECT_EQ(test, dead, 100U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* An empty signaled SEND to the peer, waited for. */
static void ri_send_behind(struct kunit *test, struct mrk_pair *pair)
{
	struct ib_send_wr send = {};
	struct mrk_wait sent, recv;

	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, SZ_512K, 64, &recv), 0);
	mrk_wait_init(&sent);
	send.opcode = IB_WR_SEND;
	send.send_flags = IB_SEND_SIGNALED;
	send.wr_cqe = &sent.cqe;
	KUNIT_ASSERT_EQ(test, ib_post_send(pair->local.qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &sent, 5000), 0);
	KUNIT_ASSERT_EQ(test, sent.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &recv, 5000), 0);
}

/*
 * MRKIT_POOL_POST_INV on rxe and siw: done() runs from the completion
 * call, and once a WR posted after it on the QP completed, a peer access
 * with the I/O's key fails; the descriptor's next registration, with no
 * LOCAL_INV of its own, is usable by the peer.
 */
static void reminv_rdma_post_inv_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = post_inv_pool(test, pair->local.pd);
	unsigned int i, dead = 0;
	struct mrk_pair *probe;
	struct mrk_wait w;
	u32 old_key = 0;
	struct ri_io r;

	for (i = 0; i < 20; i++) {
		ri_post(test, pair, pool, &r, 1);
		KUNIT_EXPECT_NE(test, r.segs[0].key, old_key);
		memset(pair->pbuf, 0x11 + i, 64);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
						    r.segs[0].addr,
						    r.segs[0].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, r.buf[63], 0x11 + i);
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io,
							pair->local.qp), 0);
		KUNIT_ASSERT_EQ(test, r.t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		/* A signaled SEND behind the LOCAL_INV: it ran once this did. */
		ri_send_behind(test, pair);
		probe = mrk_pair_create_pd(test, kind, pair->local.pd);
		if (!mrk_peer_access_dead(probe, r.segs[0].addr, r.segs[0].key,
					  r.buf, 64))
			dead++;
		mrk_pair_destroy(probe);
		old_key = r.segs[0].key;
		kunit_kfree(test, r.buf);
	}
	KUNIT_EXPECT_EQ(test, dead, 20U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * MRKIT_POOL_POST_INV on rxe and siw, an I/O completed on a QP in error:
 * its REG_MR, its SEND and the LOCAL_INV the completion posts are all
 * flushed after the pool took the descriptor back (or, with @cache, while
 * the idle I/O keeps it).  The descriptor's key never reached the device,
 * so its next registration must not chain a LOCAL_INV of it (the device
 * would fail it and the QP with it): the next map retires it and the pool
 * replaces the MR, and the next use, on another connection in the PD,
 * moves the peer's bytes under a fresh MR.
 */
static void ri_flushed_back(struct kunit *test, bool cache)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool_attr attr = {
		.name = "postinv", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV | MRKIT_POOL_POST_INV |
			 (cache ? MRKIT_POOL_IO_CACHE : 0),
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, pair->local.pd, &attr);
	struct ib_qp_attr qattr = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr send = {};
	struct mrkit_pool_stats st;
	struct mrk_pair *next;
	struct mrk_wait sent, w;
	struct ri_io r;
	u32 old_key;
	int i;

	r.buf = kunit_kzalloc(test, P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r.buf);
	sg_init_one(&r.sg, r.buf, P);
	tio_init(&r.t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(pair->local.qp, &qattr, IB_QP_STATE),
			0);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&r.t.io, &r.sg, 1, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&r.t.io, r.segs, 4), 1);
	old_key = r.segs[0].key;
	mrk_wait_init(&sent);
	send.opcode = IB_WR_SEND;
	send.send_flags = IB_SEND_SIGNALED;
	send.wr_cqe = &sent.cqe;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&r.t.io, pair->local.qp, &send, NULL),
			0);
	/* The ULP ends the I/O before it polls the flushes (a timeout). */
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
	KUNIT_EXPECT_EQ(test, r.t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), cache ? 1U : 0U);
	/* The REG_MR's, the SEND's and the LOCAL_INV's flushes. */
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &sent, 5000), 0);
	KUNIT_EXPECT_EQ(test, sent.wc.status, IB_WC_WR_FLUSH_ERR);
	/* The LOCAL_INV's flush comes last and marks the descriptor. */
	for (i = 0; i < 250; i++) {
		if (READ_ONCE(pool->descs[0]->old_inv) == MRKIT_OLD_INV_UNKNOWN)
			break;
		mrk_poll(pair, NULL, 20);
	}
	mrkit_pool_qp_drained(pool);

	/* The one descriptor is retired at this map, and replaced. */
	if (!cache)
		tio_init(&r.t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&r.t.io, &r.sg, 1, MRKIT_MAP_DMA),
			-EAGAIN);
	for (i = 0; i < 100; i++) {
		flush_workqueue(mrkit_wq);
		mrkit_pool_get_stats(pool, &st);
		if (st.stale_replaced && !st.stale)
			break;
		msleep(20);
	}
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, 1U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	next = mrk_pair_create_pd(test, kind, pair->local.pd);
	ri_use(test, next, &r);
	KUNIT_ASSERT_EQ(test, r.n, 1);
	memset(next->pbuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(next, IB_WR_RDMA_WRITE, 0, 64,
					    r.segs[0].addr, r.segs[0].key, &w),
			0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(r.buf, next->pbuf, 64), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, next->local.qp), 0);
	KUNIT_EXPECT_EQ(test, r.t.rec.calls, cache ? 2 : 1);
	KUNIT_EXPECT_EQ(test, r.t.rec.status, 0);
	/* The LOCAL_INV ran: a signaled SEND behind it completed. */
	ri_send_behind(test, next);
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(mrk_pair_create_pd(test, kind,
								      pair->local.pd),
						   r.segs[0].addr, r.segs[0].key,
						   r.buf, 64), 0);
	/* And the flushed registration's key never worked. */
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(mrk_pair_create_pd(test, kind,
								      pair->local.pd),
						   r.segs[0].addr, old_key,
						   r.buf, 64), 0);
	if (cache)
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&r.t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static void reminv_rdma_post_inv_flushed_test(struct kunit *test)
{
	ri_flushed_back(test, false);
}

static void reminv_rdma_cached_flushed_test(struct kunit *test)
{
	ri_flushed_back(test, true);
}

/*
 * A lazy pool on rxe and siw: the previous I/O's key is left valid, and
 * an I/O that takes the descriptor, hands it out and never posts it gives
 * it back by @way (released, invalidated, completed) without a WR and
 * without touching that key: the peer's bytes still land with it (the
 * lazy pool's contract, shown here on a software device, whose DMA
 * addresses are the buffer's).  The next registration invalidates it
 * ahead of its REG_MR: with the new key the peer's bytes land, with the
 * old one its access fails.
 */
static void ri_unposted_old_key(struct kunit *test, struct mrk_pair *pair,
				unsigned int way)
{
	struct mrkit_pool_attr attr = {
		.name = "lazy", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, pair->local.pd, &attr);
	struct mrk_pair *probe;
	struct mrk_wait w;
	struct ri_io r;
	u64 old_addr;
	u32 old_key;
	int ret;

	ri_post(test, pair, pool, &r, 1);
	old_addr = r.segs[0].addr;
	old_key = r.segs[0].key;
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, r.t.rec.calls, 1);

	tio_init(&r.t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&r.t.io, &r.sg, 1, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&r.t.io, r.segs, 4), 1);
	KUNIT_EXPECT_NE(test, r.segs[0].key, old_key);
	if (way == 0)
		ret = mrkit_io_release(&r.t.io, 0);
	else if (way == 1)
		ret = mrkit_io_invalidate(&r.t.io, pair->local.qp);
	else
		ret = mrkit_io_complete(&r.t.io, pair->local.qp);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, r.t.rec.calls, way ? 1 : 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	memset(pair->pbuf, 0x3c + way, 64);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
					    old_addr, old_key, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(r.buf, pair->pbuf, 64), 0);

	tio_init(&r.t, pool, MRKIT_PEER_WRITES);
	ri_use(test, pair, &r);
	KUNIT_ASSERT_EQ(test, r.n, 1);
	memset(pair->pbuf, 0x5a + way, 64);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
					    r.segs[0].addr, r.segs[0].key, &w),
			0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(r.buf, pair->pbuf, 64), 0);
	probe = mrk_pair_create_pd(test, mrk_param_kind(test), pair->local.pd);
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, old_addr, old_key,
						   r.buf, 64), 0);
	mrk_pair_destroy(probe);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&r.t.io, pair->local.qp), 0);
	KUNIT_EXPECT_EQ(test, r.t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static void reminv_rdma_unposted_old_key_test(struct kunit *test)
{
	struct mrk_pair *pair = mrk_pair_create(test, mrk_param_kind(test));
	unsigned int way;

	for (way = 0; way < 3; way++)
		ri_unposted_old_key(test, pair, way);
}

static struct kunit_case mrkit_reminv_rdma_cases[] = {
	KUNIT_CASE_PARAM(reminv_rdma_match_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_three_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_cached_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_bogus_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_fence_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_post_inv_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_post_inv_flushed_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_cached_flushed_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(reminv_rdma_unposted_old_key_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite mrkit_reminv_rdma_suite = {
	.name = "mrkit_reminv_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_reminv_rdma_cases,
};

kunit_test_suites(&mrkit_reminv_suite, &mrkit_reminv_rdma_suite);
