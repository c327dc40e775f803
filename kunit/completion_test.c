// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for completion identities and the chains around them, on
 * the fake device (mrkit_completion):
 *  - an RDMA READ chain whose sinks hold lazily kept keys, flushed one
 *    completion at a time and flushed while it is still being posted:
 *    done() runs once, after the signaled READ's completion, never on the
 *    flush of a LOCAL_INV;
 *  - a registration chain that invalidated a kept key, finished by the
 *    ULP before the send CQ was polled: the flush of the chained
 *    LOCAL_INV does not finish the I/O;
 *  - a failed post finished by a lazy pool's completion: the posted
 *    REG_MRs are invalidated for real and replaced after their flush;
 *  - a failed post whose first registration was flushed before mrkit
 *    sorted the chain: every descriptor is accounted for, no LOCAL_INV of
 *    a key that was never registered is ever posted; the same for one
 *    descriptor, failed at its kept key's LOCAL_INV and at its REG_MR;
 *  - every call on an I/O whose READ chain is in flight returns -EBUSY
 *    and changes nothing, plain and integrity pools;
 *  - a REG_MR flushed while mrkit_io_invalidate() builds the I/O's
 *    LOCAL_INVs: the chain is posted as built and the I/O finishes once,
 *    through the fence, with the error;
 *  - an invalidation whose first post fails parks every descriptor, those
 *    the chain never reached included, until the drain;
 *  - a release of an I/O whose REG_MR was flushed (its key possibly live)
 *    is refused and changes nothing.
 */

#include <kunit/test.h>
#include <linux/nvme.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "test_util.h"
#include <trace/events/mrkit.h>

#define P	PAGE_SIZE

static struct mrkit_pool *lazy_pool(struct kunit *test, struct fake_dev *fdev,
				    u32 depth)
{
	struct mrkit_pool_attr attr = {
		.name = "lazy", .depth = depth, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV, .node = NUMA_NO_NODE,
	};

	return test_pool(test, fdev->pd, &attr);
}

/*
 * Register @len bytes over the pool's descriptors with a lazy I/O and
 * complete it: the descriptors go back holding valid keys.
 */
static void keep_keys(struct kunit *test, struct fake_dev *fdev,
		      struct mrkit_pool *pool, u32 len, int nmrs)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct test_io a;

	tio_init(&a, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&a.io, test_dma_sg(test, 0x100000, len),
					   1, 0), nmrs);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&a.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	if (pool->flags & MRKIT_POOL_LAZY_INV)
		KUNIT_ASSERT_EQ(test, mrkit_io_complete(&a.io, fdev->qp), 0);
	else
		KUNIT_ASSERT_EQ(test, mrkit_io_release(&a.io, MRKIT_RELEASE_LAZY), 0);
	KUNIT_ASSERT_EQ(test, in_use(pool), 0U);
}

/* done() records whether every WR posted so far had completed. */
static void all_completed_at_done(struct test_io *t)
{
	struct fake_dev *fdev = t->rec.ctx;

	t->rec.seen = fdev->next_complete == fdev->nr_recs;
}

static void expect_pool_idle(struct kunit *test, struct mrkit_pool *pool,
			     u32 allocated)
{
	struct mrkit_pool_stats st;

	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, allocated);
}

/*
 * The sinks of a READ chain hold lazily kept keys, so the chain starts
 * with their LOCAL_INVs.  The QP goes to error and the flushes arrive one
 * by one: only the signaled READ's may finish the I/O.
 */
static void completion_read_kept_keys_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {}, iw = { .iwarp = true };
	const struct fake_dev_attr *attrs[] = { &ib, &iw };
	unsigned int a, i, base, n;
	struct test_io t;

	for (a = 0; a < ARRAY_SIZE(attrs); a++) {
		struct fake_dev *fdev = fake_dev_create(test, attrs[a]);
		struct mrkit_pool *pool = lazy_pool(test, fdev, 4);

		keep_keys(test, fdev, pool, 12 * P, 2);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		t.rec.at_done = all_completed_at_done;
		t.rec.ctx = fdev;
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000,
								      12 * P),
						   1, 0), 2);
		base = fdev->nr_recs;
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5),
				0);
		KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 2U);
		n = fdev->nr_recs - base;
		for (i = 0; i + 1 < n; i++) {
			fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 1);
			KUNIT_EXPECT_EQ_MSG(test, t.rec.calls, 0,
					    "%s: done() on the flush of WR %u of %u",
					    attrs[a]->iwarp ? "iwarp" : "ib",
					    i, n);
		}
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 1);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		KUNIT_EXPECT_EQ(test, t.rec.seen, 1);
		expect_pool_idle(test, pool, 4);
	}
}

/*
 * The same with the flushes delivered during the posts themselves (a QP
 * in error whose flushes run on the posting CPU), over two READ batches:
 * the I/O finishes once, and never before its last post.
 */
static void completion_read_flush_inline_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {}, iw = { .iwarp = true };
	const struct fake_dev_attr *attrs[] = { &ib, &iw };
	unsigned int a, base;
	struct test_io t;
	int ret;

	for (a = 0; a < ARRAY_SIZE(attrs); a++) {
		struct fake_dev *fdev = fake_dev_create(test, attrs[a]);
		struct mrkit_pool *pool = lazy_pool(test, fdev, 8);

		keep_keys(test, fdev, pool, 40 * P, 5);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		t.rec.at_done = all_completed_at_done;
		t.rec.ctx = fdev;
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000,
								      40 * P),
						   1, 0), 5);
		base = fdev->nr_recs;
		fdev->flush_inline = true;
		ret = mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5);
		fdev->flush_inline = false;
		KUNIT_EXPECT_EQ(test, ret, 0);
		KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 5U);
		flush_workqueue(mrkit_wq);
		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		KUNIT_EXPECT_EQ(test, t.rec.seen, 1);
		expect_pool_idle(test, pool, 8);
	}
}

/*
 * [LOCAL_INV of a kept key] REG_MR SEND, then the ULP invalidates on a
 * timeout before its send CQ was polled: [LOCAL_INV].  The QP dies; the
 * flush of the chained LOCAL_INV must not finish the I/O, the flush of
 * the last one does.
 */
static void completion_chained_inv_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	unsigned int base, i, n;
	struct test_io t;

	keep_keys(test, fdev, pool, 4 * P, 1);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	t.rec.at_done = all_completed_at_done;
	t.rec.ctx = fdev;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 4 * P),
					   1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 2U);
	n = fdev->nr_recs - base;
	for (i = 0; i + 1 < n; i++) {
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 1);
		KUNIT_EXPECT_EQ_MSG(test, t.rec.calls, 0,
				    "done() on the flush of WR %u of %u", i, n);
	}
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 1);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	KUNIT_EXPECT_EQ(test, t.rec.seen, 1);
	expect_pool_idle(test, pool, 2);
}

/*
 * A lazy pool: [REG REG REG SEND] fails at the third REG_MR; the ULP
 * finishes the I/O with mrkit_io_complete().  The two posted REG_MRs may
 * still sit in the send queue, so they are invalidated for real; their
 * flush retires them, done() runs once with the error after their MRs
 * are gone, and the counts are exact afterwards.
 */
static void completion_failed_post_lazy_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = lazy_pool(test, fdev, 4);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct mrkit_pool_stats st;
	struct mrkit_seg segs[3];
	unsigned int base;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 20 * P),
					   1, 0), 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 3), 3);
	base = fdev->nr_recs;
	fdev->post_fail_wr = 2;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -ENOMEM);
	KUNIT_ASSERT_EQ(test, fake_count(fdev, base, IB_WR_REG_MR), 2U);

	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 2U);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, segs[0].key));
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, segs[1].key));
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 2ULL);
	expect_pool_idle(test, pool, 4);

	/* Every descriptor registers again without a device error. */
	keep_keys(test, fdev, pool, 32 * P, 4);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	expect_pool_idle(test, pool, 4);
}

/*
 * Three descriptors with kept keys: [INV REG INV REG INV REG SEND] fails
 * at the second REG_MR, and the QP flushes the first LOCAL_INV and REG_MR
 * before mrkit sorts out what was posted.  The second descriptor's old
 * key is being invalidated and its new one was never registered: it is
 * retired.  The third keeps its old key, which its next registration
 * invalidates: no LOCAL_INV of an unregistered key reaches the device.
 */
static void completion_failed_post_flushed_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = lazy_pool(test, fdev, 3);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	unsigned int base;
	struct test_io t;

	keep_keys(test, fdev, pool, 20 * P, 3);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 20 * P),
					   1, 0), 3);
	base = fdev->nr_recs;
	fdev->post_fail_wr = 3;
	fdev->fail_flush = 2;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -ENOMEM);
	fdev->fail_flush = 0;
	KUNIT_EXPECT_EQ(test, fdev->nr_recs - base, 3U);

	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_NE(test, t.rec.status, 0);
	expect_pool_idle(test, pool, 3);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);

	keep_keys(test, fdev, pool, 20 * P, 3);
	KUNIT_EXPECT_EQ_MSG(test, fdev->exec_errors, 0U,
			    "a LOCAL_INV or REG_MR the device had to refuse");
	expect_pool_idle(test, pool, 3);
}

/*
 * One descriptor with a kept key: [INV REG SEND] fails at the REG_MR
 * after its LOCAL_INV was posted and flushed (the old key being
 * invalidated, the new one never registered: retired, done() after the
 * drain), then at the LOCAL_INV itself (nothing posted: the old key is
 * kept, and its next registration invalidates it).  Either way nothing
 * is left in use and no WR the device must refuse is ever posted.
 */
static void completion_failed_post_one_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = lazy_pool(test, fdev, 1);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	const struct ib_send_wr *bad;
	struct mrkit_pool_stats st;
	unsigned int base, at, round;
	struct test_io t;

	for (round = 0; round < 2; round++) {
		at = 1 - round;	/* the failing WR: the REG_MR, then the LOCAL_INV */
		keep_keys(test, fdev, pool, 4 * P, 1);
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 4 * P),
						   1, 0), 1);
		base = fdev->nr_recs;
		fdev->post_fail_wr = at;
		fdev->fail_flush = at;
		fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
		bad = NULL;
		KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, &bad),
				-ENOMEM);
		KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&send);
		fdev->fail_flush = 0;
		KUNIT_EXPECT_EQ(test, fdev->nr_recs - base, at);
		KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_REG_MR), 0U);

		KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		if (at)
			KUNIT_EXPECT_NE(test, t.rec.status, 0);
		else
			KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		expect_pool_idle(test, pool, 1);
		KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	}
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	keep_keys(test, fdev, pool, 4 * P, 1);
	KUNIT_EXPECT_EQ_MSG(test, fdev->exec_errors, 0U,
			    "a LOCAL_INV or REG_MR the device had to refuse");
	expect_pool_idle(test, pool, 1);
}

/* Every call on @t is refused while its READ chain is in flight. */
static void expect_busy(struct kunit *test, struct fake_dev *fdev,
			struct mrkit_pool *pool, struct test_io *t,
			struct scatterlist *sg)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats before, after;
	struct mrkit_pi_result res;
	struct mrkit_seg seg[4];
	unsigned int recs = fdev->nr_recs;

	mrkit_pool_get_stats(pool, &before);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_segs(&t->io, seg, 4), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_post_read(&t->io, fdev->qp, 0x1000, 5),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t->io, fdev->qp), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate_sync(&t->io, fdev->qp), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t->io, fdev->qp), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t->io, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t->io, MRKIT_RELEASE_LAZY), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t->io, 0x1234), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_check_pi(&t->io, &res), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_access(&t->io, IB_ACCESS_LOCAL_WRITE),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_tag(&t->io, 7), -EBUSY);
	mrkit_pool_get_stats(pool, &after);
	KUNIT_EXPECT_EQ(test, after.bogus_inv, before.bogus_inv);
	KUNIT_EXPECT_EQ(test, after.sig_checks, before.sig_checks);
	KUNIT_EXPECT_EQ(test, after.in_use, before.in_use);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, recs);
	KUNIT_EXPECT_EQ(test, t->rec.calls, 0);
}

static void completion_read_busy_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {}, iw = { .iwarp = true };
	static const struct fake_dev_attr pi = {
		.pi_frpl = 64, .kernel_cap_flags = IBK_INTEGRITY_HANDOVER,
	};
	const struct fake_dev_attr *attrs[] = { &ib, &iw };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 12 * P);
	struct mrkit_pool_attr pattr = {
		.name = "sigread", .depth = 2, .flags = MRKIT_POOL_INTEGRITY,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pi_result res;
	struct fake_dev *fdev;
	struct mrkit_pool *pool;
	struct mrkit_pi desc;
	struct test_io t;
	unsigned int a;
	int ret;

	for (a = 0; a < ARRAY_SIZE(attrs); a++) {
		fdev = fake_dev_create(test, attrs[a]);
		pool = frwr_pool(test, fdev->pd, 4, 8);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 2);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5),
				0);
		expect_busy(test, fdev, pool, &t, sg);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		expect_pool_idle(test, pool, 4);
	}

	/*
	 * A protected sink: a signature check while the READ flies would
	 * consume the status the chain's completion must read.
	 */
	fdev = fake_dev_create(test, &pi);
	pool = test_pool(test, fdev->pd, &pattr);
	ret = mrkit_pi_from_nvme(&desc, false, NVME_RW_PRINFO_PRACT, 1, 512, 0,
				 0, 0, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	KUNIT_ASSERT_EQ(test, mrkit_io_map_pi(&t.io, test_dma_sg(test, 0x700000, 4096),
					      1, NULL, 0, &desc), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 5), 0);
	expect_busy(test, fdev, pool, &t, sg);
	KUNIT_EXPECT_EQ(test, mrkit_io_map_pi(&t.io, sg, 1, NULL, 0, &desc), -EBUSY);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	/* The chain read the status; nothing is left unchecked. */
	KUNIT_EXPECT_EQ(test, mrkit_io_check_pi(&t.io, &res), -EINVAL);
	expect_pool_idle(test, pool, 2);
}

/* A flush delivered from inside mrkit_io_invalidate(), once. */
struct inv_race {
	struct fake_dev	*fdev;
	unsigned int	builds;
};

static void flush_at_first_localinv(void *data, const struct mrkit_mr *mr)
{
	struct inv_race *r = data;

	/* The QP went to error: its oldest WR, the first REG_MR, flushes. */
	if (!r->builds++)
		fake_complete(r->fdev, IB_WC_WR_FLUSH_ERR, 1);
}

/*
 * While mrkit_io_invalidate() builds an I/O's LOCAL_INVs, the send CQ's
 * handler (on another CPU) delivers the flush of the first REG_MR, which
 * marks that descriptor STALE after its invalidation was decided.  The
 * chain goes out as built, the rest flushes, and the I/O finishes once,
 * through the fence, with -EIO; both descriptors are replaced.
 */
static void completion_inv_flush_race_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct mrkit_pool_attr attr = {
		.name = "fence", .depth = 4, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct inv_race r = { .fdev = fdev };
	unsigned int base;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, register_trace_mrkit_localinv(flush_at_first_localinv,
							    &r), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	unregister_trace_mrkit_localinv(flush_at_first_localinv, &r);
	tracepoint_synchronize_unregister();
	KUNIT_EXPECT_EQ(test, r.builds, 2U);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), 2U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);

	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	expect_pool_idle(test, pool, 4);
}

/*
 * Six descriptors, so the invalidation takes two posts ([INV x4] then
 * [INV x2]), and the first post fails: no completion will come for the
 * chain, and the REG_MRs posted before it may still be queued.  Every
 * descriptor is parked - those whose LOCAL_INV was built and those the
 * chain never reached - and no MR is deregistered before the drain;
 * done() runs once, with the error, after mrkit_pool_qp_drained().
 */
static void completion_inv_post_fail_parks_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 6, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct mrkit_seg segs[6];
	struct test_io t;
	int i;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 48 * P),
					   1, 0), 6);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 6), 6);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fdev->post_fail_wr = 0;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_TRUE_MSG(test, fake_mr_alive(fdev, segs[i].key),
				      "MR %d deregistered before the drain", i);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 6U);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 0ULL);

	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -ENOMEM);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, segs[i].key));
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 6ULL);
	expect_pool_idle(test, pool, 6);
}

static void parked_cb(struct mrkit_pool *pool, void *ctx)
{
	(*(int *)ctx)++;
}

/*
 * The invalidation post fails: mrkit_io_invalidate() returns 0 and done()
 * waits for a drain, so the ULP learns of it from the parked callback -
 * once for the four descriptors parked together, not before the failure,
 * again on the next parking after mrkit_pool_qp_drained(), never once
 * cleared, and not when the drain came before the work item ran.
 */
static void completion_parked_callback_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct test_io t;
	int calls = 0, round;

	mrkit_pool_set_parked(pool, parked_cb, &calls);
	for (round = 1; round <= 3; round++) {
		if (round == 3)
			mrkit_pool_set_parked(pool, NULL, NULL);
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 32 * P),
						   1, 0), 4);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, calls, round - 1);

		fdev->post_fail_wr = 0;
		fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
		KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, calls, min(round, 2));
		KUNIT_EXPECT_EQ(test, t.rec.calls, 0);

		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -ENOMEM);
		KUNIT_EXPECT_EQ(test, calls, min(round, 2));
	}

	/* Drained before the work item ran: nothing left to ask for. */
	mrkit_pool_set_parked(pool, parked_cb, &calls);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 32 * P),
					   1, 0), 4);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, calls, 2);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	expect_pool_idle(test, pool, 4);
}

/*
 * A REG_MR flushed after its post retires its descriptor with the key
 * possibly live.  A release that is not lazy is refused and changes
 * nothing; the invalidation then finishes the I/O, with the error, once
 * the MR is deregistered.
 */
static void completion_release_retired_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct mrkit_seg seg;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, 4 * P),
					   1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	KUNIT_ASSERT_EQ(test, mrkit_mr_state(t.io.mrs), MRKIT_MR_STALE);

	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), -EBUSY);
	KUNIT_ASSERT_NOT_NULL(test, t.io.mrs);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(t.io.mrs), MRKIT_MR_STALE);
	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 1U);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 0ULL);
	KUNIT_EXPECT_TRUE(test, fake_mr_alive(fdev, seg.key));

	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, seg.key));
	expect_pool_idle(test, pool, 2);
}

static struct kunit_case completion_cases[] = {
	KUNIT_CASE(completion_read_kept_keys_test),
	KUNIT_CASE(completion_read_flush_inline_test),
	KUNIT_CASE(completion_chained_inv_test),
	KUNIT_CASE(completion_failed_post_lazy_test),
	KUNIT_CASE(completion_failed_post_flushed_test),
	KUNIT_CASE(completion_failed_post_one_test),
	KUNIT_CASE(completion_read_busy_test),
	KUNIT_CASE(completion_inv_flush_race_test),
	KUNIT_CASE(completion_inv_post_fail_parks_test),
	KUNIT_CASE(completion_parked_callback_test),
	KUNIT_CASE(completion_release_retired_test),
	{}
};

static struct kunit_suite completion_suite = {
	.name = "mrkit_completion",
	.test_cases = completion_cases,
};

kunit_test_suite(completion_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(MRKIT);
