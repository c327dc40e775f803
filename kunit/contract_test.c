// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for mrkit's contracts on error paths and at their edges.
 *
 * mrkit_contract, on the fake device:
 *  - the rkey fence on error paths: a registration, invalidation or READ
 *    post failing at every WR index, and a flushed chain: done() runs only
 *    after every MR that reached the device was deregistered (checked
 *    inside done() against the fake's list of live MRs);
 *  - keys after a failed post: the I/O cannot be posted again, and a
 *    retry maps again; advertised keys always equal registered keys;
 *  - calls refused with -EBUSY while a READ chain is in flight (IB and
 *    iWARP); lazy pools: no second done(), the PI status delivered;
 *  - mrkit_pool_find_rkey() exact between a lazy reuse's map and post;
 *  - an access override surviving -EAGAIN;
 *  - nothing touches the I/O after the post that can finish it (the fake
 *    completes inline, done() poisons the I/O, tracepoints enabled);
 *  - send-queue sizing numbers; REG_MRs posted without a caller WR;
 *  - lengths over 4 GiB split; unknown flag bits refused; bad NUMA
 *    node, nents beyond the list, plain map on an integrity pool, a PI
 *    decode with a nonsense interval.
 *
 * mrkit_contract_rdma, on rxe and siw: a registration live when the QP goes
 * to error; the I/O is completed, and right after done() a second
 * connection in the same PD writes and reads with the key: both fail and
 * the bytes stay.  done() itself saw the MR already replaced.  And a QP
 * sized from mrkit_query_limits() at full pool depth, for three I/O
 * shapes (one MR, six MRs over two posts, lazy READ chains), never sees
 * a post fail.
 */

#include <kunit/test.h>
#include <linux/nvme.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"
#include <trace/events/mrkit.h>

#define P	PAGE_SIZE

/* The MRs an I/O exposed, checked for liveness from inside done(). */
struct fence_ctx {
	struct fake_dev	*fdev;
	u32		keys[8];
	int		n;
};

static void fence_at_done(struct test_io *t)
{
	struct fence_ctx *c = t->rec.ctx;
	int i;

	t->rec.seen = 0;
	for (i = 0; i < c->n; i++)
		t->rec.seen += fake_mr_alive(c->fdev, c->keys[i]);
}

/* Record the MRs of REG_MRs the fake accepted from record @from on. */
static void fence_record(struct fence_ctx *c, unsigned int from)
{
	unsigned int i;

	c->n = 0;
	for (i = from; i < c->fdev->nr_recs && c->n < ARRAY_SIZE(c->keys); i++)
		if (c->fdev->recs[i].opcode == IB_WR_REG_MR)
			c->keys[c->n++] = c->fdev->recs[i].key;
}

static void fence_tio(struct test_io *t, struct mrkit_pool *pool,
		      enum mrkit_dir dir, struct fence_ctx *c)
{
	tio_init(t, pool, dir);
	t->rec.at_done = fence_at_done;
	t->rec.ctx = c;
	t->rec.seen = -1;
}

/*
 * A fenced I/O of three descriptors over @sg, posted before @send and
 * completed; @c records the keys of its REG_MRs.
 */
static void fence_posted_io(struct kunit *test, struct fake_dev *fdev,
			    struct mrkit_pool *pool, struct scatterlist *sg,
			    struct ib_send_wr *send, struct test_io *t,
			    struct fence_ctx *c)
{
	unsigned int base;

	fence_tio(t, pool, MRKIT_PEER_WRITES, c);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), 3);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t->io, fdev->qp, send, NULL), 0);
	fence_record(c, base);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
}

/* Invalidate @t with the chain's post failing at WR @k (-EIO). */
static void fence_inv_failing(struct kunit *test, struct fake_dev *fdev,
			      struct test_io *t, unsigned int k)
{
	fdev->post_fail_wr = k;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -EIO);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t->io, fdev->qp), 0);
}

/*
 * [REG REG REG SEND] failing at WR k.  The I/O stays
 * posted and cannot be posted again; the keys the fake registered are
 * the keys mrkit_io_segs() advertised.  The invalidation of the posted
 * ones is flushed (the QP died): done() runs only after their MRs are
 * deregistered.  A retry maps again and registers what it advertises.
 */
static void contract_fence_reg_post_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	const struct ib_send_wr *bad;
	struct fence_ctx c = { .fdev = fdev };
	struct mrkit_seg segs[4];
	unsigned int k, i, base;
	struct test_io t;

	for (k = 0; k < 4; k++) {
		fence_tio(&t, pool, MRKIT_PEER_WRITES, &c);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
		base = fdev->nr_recs;
		fdev->post_fail_wr = k;
		fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
		bad = NULL;
		KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, &bad),
				-ENOMEM);
		/* None of the caller's WRs was posted: bad_wr names the SEND. */
		KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&send);
		fence_record(&c, base);
		KUNIT_EXPECT_EQ(test, c.n, (int)k);
		for (i = 0; i < c.n; i++)
			KUNIT_EXPECT_EQ(test, fdev->recs[base + i].key, segs[i].key);
		/* The same keys cannot be posted twice. */
		KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL),
				-EINVAL);
		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
		if (k) {
			KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
			flush_workqueue(mrkit_wq);
		}
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, k ? -EIO : 0);
		KUNIT_EXPECT_EQ_MSG(test, t.rec.seen, 0,
				    "k=%u: %d exposed MRs alive in done()", k,
				    t.rec.seen);

		/* The retry: a new map, new keys, exactly those registered. */
		fence_tio(&t, pool, MRKIT_PEER_WRITES, &c);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
		base = fdev->nr_recs;
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL),
				0);
		for (i = 0; i < 3; i++)
			KUNIT_EXPECT_EQ(test, fdev->recs[base + i].key, segs[i].key);
		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		fake_complete(fdev, IB_WC_SUCCESS, 64);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	}
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * The LOCAL_INV chain's post failing at every index, and a READ
 * chain's post failing at every index: what was posted is parked, done()
 * waits for mrkit_pool_qp_drained() and the deregistrations, and then
 * runs once with the errno, no exposed MR alive.  (A READ chain of which
 * nothing was posted, on sinks drained before, parks nothing.)
 */
static void contract_fence_inv_read_post_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct scatterlist *sg6 = test_dma_sg(test, 0x800000, 48 * P);
	struct fence_ctx c = { .fdev = fdev };
	struct mrkit_pool_stats st;
	unsigned int k;
	struct test_io t;

	for (k = 0; k < 3; k++) {
		fence_posted_io(test, fdev, pool, sg, &send, &t, &c);
		fence_inv_failing(test, fdev, &t, k);
		/* Keys may be live: nothing is reported yet. */
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		KUNIT_EXPECT_EQ(test, t.rec.seen, 0);
	}

	/* Six sinks, two READ posts: [REG x4 READ x4] [REG x2 READ x2]. */
	for (k = 0; k < 12; k += 3) {
		fence_tio(&t, pool, MRKIT_LOCAL_SINK, &c);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg6, 1, 0), 6);
		c.n = 0;
		for (struct mrkit_mr *mr = t.io.mrs; mr; mr = mr->io_next)
			c.keys[c.n++] = mr->ibmr->lkey;
		fdev->post_fail_wr = k % 8;
		fake_fail_nth(fdev, FAKE_OP_POST_SEND, k < 8 ? 1 : 2, -ENOMEM);
		KUNIT_EXPECT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x9000000,
							 0x4242), -ENOMEM);
		/* Not before this returned, not before the drain. */
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ_MSG(test, t.rec.calls, k ? 0 : 1, "WR %u", k);
		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -ENOMEM);
		KUNIT_EXPECT_EQ(test, t.rec.seen, 0);
	}
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, 8U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * After mrkit_pool_qp_drained(), a device that refuses every post (a
 * fatal error): an invalidation chain of which nothing was posted waits
 * for no second drain.  Its keys' MRs are deregistered and done() runs
 * with the errno.  A registration posted after that drain, or a chain
 * that was partly posted, is still parked until the next one.
 */
static void contract_fence_inv_after_drain_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct fence_ctx c = { .fdev = fdev }, c2 = { .fdev = fdev };
	struct mrkit_pool_stats st;
	struct test_io t, t2;

	/* Registered before the drain; nothing of the chain posted. */
	fence_posted_io(test, fdev, pool, sg, &send, &t, &c);
	KUNIT_ASSERT_EQ(test, c.n, 3);
	mrkit_pool_qp_drained(pool);
	/* Registered after the drain, by an I/O of the next connection. */
	fence_posted_io(test, fdev, pool, sg, &send, &t2, &c2);

	fence_inv_failing(test, fdev, &t, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	KUNIT_EXPECT_EQ(test, t.rec.seen, 0);

	/* The other I/O's REG_MRs were posted after it: parked. */
	fence_inv_failing(test, fdev, &t2, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t2.rec.calls, 0);
	KUNIT_EXPECT_EQ(test, fake_mr_alive(fdev, c2.keys[0]), 1);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t2.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t2.rec.status, -EIO);
	KUNIT_EXPECT_EQ(test, t2.rec.seen, 0);

	/* Drained, but the chain's first LOCAL_INV was posted: parked. */
	fence_posted_io(test, fdev, pool, sg, &send, &t, &c);
	mrkit_pool_qp_drained(pool);
	fence_inv_failing(test, fdev, &t, 1);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.seen, 0);

	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, 8U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/* A synchronous invalidation after a failed post returns after the drain. */
struct drain_ctx {
	struct delayed_work	work;
	struct fake_dev		*fdev;
	struct mrkit_pool	*pool;
	bool			drained;
};

static void drain_work(struct work_struct *w)
{
	struct drain_ctx *d = container_of(to_delayed_work(w), struct drain_ctx,
					   work);

	fake_complete(d->fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	d->drained = true;
	mrkit_pool_qp_drained(d->pool);
}

static void contract_fence_sync_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct fence_ctx c = { .fdev = fdev };
	struct drain_ctx *d;
	unsigned int base;
	struct test_io t;
	int i, alive;

	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	d->fdev = fdev;
	d->pool = pool;
	INIT_DELAYED_WORK(&d->work, drain_work);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fence_record(&c, base);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	fdev->post_fail_wr = 1;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	schedule_delayed_work(&d->work, msecs_to_jiffies(50));
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate_sync(&t.io, fdev->qp), -ENOMEM);
	/* It returned only after the drain and the deregistrations. */
	KUNIT_EXPECT_TRUE(test, d->drained);
	for (alive = 0, i = 0; i < c.n; i++)
		alive += fake_mr_alive(fdev, c.keys[i]);
	KUNIT_EXPECT_EQ(test, alive, 0);
	flush_delayed_work(&d->work);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
}

/* Every call on @t is refused with -EBUSY and posts nothing. */
static void read_busy_checks(struct kunit *test, struct fake_dev *fdev,
			     struct test_io *t, struct scatterlist *sg)
{
	unsigned int base = fdev->nr_recs;
	struct mrkit_pi_result res;

	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t->io, fdev->qp), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t->io, fdev->qp), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t->io, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t->io, MRKIT_RELEASE_LAZY),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t->io, 0x1234), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_access(&t->io, IB_ACCESS_LOCAL_WRITE),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_tag(&t->io, 7), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_check_pi(&t->io, &res), -EBUSY);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
	KUNIT_EXPECT_EQ(test, t->rec.calls, 0);
}

/*
 * Every call but the completion is refused while READs fly, and on IB
 * while the sinks' LOCAL_INVs that follow them fly too, and after a chain
 * that failed while its fence waits: until done().
 */
static void contract_read_busy_test(struct kunit *test)
{
	static const struct fake_dev_attr ib = {}, iw = { .iwarp = true };
	const struct fake_dev_attr *attrs[] = { &ib, &iw };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 12 * P);
	unsigned int a, base;
	struct test_io t;

	for (a = 0; a < ARRAY_SIZE(attrs); a++) {
		struct fake_dev *fdev = fake_dev_create(test, attrs[a]);
		struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);

		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 2);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp,
							 0x1000, 5), 0);
		base = fdev->nr_recs;
		read_busy_checks(test, fdev, &t, sg);
		KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
		/* The data comes in: the READ chain's WRs complete. */
		KUNIT_EXPECT_EQ(test, fake_complete(fdev, IB_WC_SUCCESS, base),
				1U);
		if (!attrs[a]->iwarp) {
			/* IB: the sinks' LOCAL_INVs are in flight now. */
			KUNIT_EXPECT_EQ(test, fake_count(fdev, base,
							 IB_WR_LOCAL_INV), 2U);
			read_busy_checks(test, fdev, &t, sg);
			KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
			fake_complete(fdev, IB_WC_SUCCESS, 64);
		}
		/* done runs once, after the sinks died. */
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
		/* Calls are allowed again: the I/O maps. */
		KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 2);
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);

		/*
		 * A chain that flushed: done() waits for the sinks' MRs to
		 * be deregistered (the pool's work item), and until then
		 * the chain still owns the I/O.
		 */
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 2);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp,
							 0x1000, 5), 0);
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
		read_busy_checks(test, fdev, &t, sg);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 2);
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	}
}

/* A finished I/O of a lazy pool is refused; done runs once. */
static void contract_lazy_complete_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "lazy", .depth = 2, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x10000, P),
					   1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), -EINVAL);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* Never mapped: nothing to complete either. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), -EINVAL);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
}

/*
 * A lazy pool's descriptor keeps I/O A's key valid at the
 * device; I/O B maps it and is handed its next key.  Until B's REG_MR is
 * posted, A's key names no I/O (not B), and B's key names none either;
 * after the post B's key names B and A's still nothing.
 */
static void contract_find_rkey_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "lazy1", .depth = 1, .pages_per_mr = 8,
		.flags = MRKIT_POOL_LAZY_INV, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct scatterlist *sg = test_dma_sg(test, 0x10000, P);
	struct mrkit_seg sa, sb;
	struct test_io a, b;

	tio_init(&a, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&a.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&a.io, &sa, 1), 1);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sa.key));
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&a.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, sa.key), &a.io);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&a.io, fdev->qp), 0);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sa.key));

	tio_init(&b, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&b.io, sg, 1, 0), 1);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sa.key));
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&b.io, &sb, 1), 1);
	KUNIT_EXPECT_NE(test, sa.key, sb.key);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sa.key));
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sb.key));
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&b.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_PTR_EQ(test, mrkit_pool_find_rkey(pool, sb.key), &b.io);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, sa.key));
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&b.io, fdev->qp), 0);
	/* The chained LOCAL_INV killed A's key before B's REG_MR. */
	KUNIT_EXPECT_EQ(test, fake_count(fdev, 0, IB_WR_LOCAL_INV), 1U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/* An access override survives a map that returned -EAGAIN. */
static void contract_access_override_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 1, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct scatterlist *sg = test_dma_sg(test, 0x10000, P);
	const int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct test_io t, hog;
	unsigned int base;

	tio_init(&hog, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&hog.io, sg, 1, 0), 1);
	tio_init(&t, pool, MRKIT_PEER_BIDI);
	KUNIT_ASSERT_EQ(test, mrkit_io_set_access(&t.io, acc), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), -EAGAIN);
	KUNIT_ASSERT_EQ(test, mrkit_io_release(&hog.io, 0), 0);
	flush_workqueue(mrkit_wq);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].access, acc);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	/* And across reuse of the same I/O. */
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].access, acc);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * The device completes inside ib_post_send(); the caller's
 * SEND completion finishes the I/O, and done() fills it with a poison.
 * After mrkit_io_post() / mrkit_io_invalidate() returned, the poison must
 * be intact: mrkit touched nothing after the post.  The chain
 * tracepoints are enabled, since tracing walked the I/O after the post.
 */
struct inline_ctx {
	struct ib_cqe		cqe;
	struct test_io		*t;
	struct ib_qp		*qp;
	int			complete_ret;
};

static void inline_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct inline_ctx *ic = container_of(wc->wr_cqe, struct inline_ctx,
					     cqe);

	ic->complete_ret = mrkit_io_complete(&ic->t->io, ic->qp);
}

static void poison_at_done(struct test_io *t)
{
	memset(&t->io, 0x6b, sizeof(t->io));
}

static void probe_reg(void *data, const struct mrkit_mr *mr)
{
	(*(unsigned int *)data)++;
}

static void contract_no_touch_after_post_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 40 * P);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct inline_ctx ic = { .qp = fdev->qp };
	unsigned int regs = 0, invs = 0;
	struct test_io *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, register_trace_mrkit_reg(probe_reg, &regs), 0);
	KUNIT_ASSERT_EQ(test, register_trace_mrkit_localinv(probe_reg, &invs),
			0);
	ic.t = t;
	ic.cqe.done = inline_send_done;
	send.wr_cqe = &ic.cqe;
	fdev->complete_inline = true;

	/* Five descriptors: two posts, the SEND in the second. */
	tio_init(t, pool, MRKIT_PEER_WRITES);
	t->rec.at_done = poison_at_done;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), 5);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, ic.complete_ret, 0);
	KUNIT_EXPECT_EQ(test, t->rec.calls, 1);
	KUNIT_EXPECT_NULL_MSG(test, memchr_inv(&t->io, 0x6b, sizeof(t->io)),
			      "mrkit_io_post() wrote to the I/O after its post");
	KUNIT_EXPECT_EQ(test, regs, 5U);
	KUNIT_EXPECT_EQ(test, invs, 5U);

	/* The invalidation chain completing inline. */
	tio_init(t, pool, MRKIT_PEER_WRITES);
	fdev->complete_inline = false;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, sg, 1, 0), 5);
	send.wr_cqe = NULL;
	send.send_flags = 0;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	t->rec.at_done = poison_at_done;
	fdev->complete_inline = true;
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t->io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t->rec.calls, 1);
	KUNIT_EXPECT_NULL_MSG(test, memchr_inv(&t->io, 0x6b, sizeof(t->io)),
			      "mrkit_io_invalidate() wrote to the I/O after its post");
	fdev->complete_inline = false;
	unregister_trace_mrkit_reg(probe_reg, &regs);
	unregister_trace_mrkit_localinv(probe_reg, &invs);
	tracepoint_synchronize_unregister();
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * The sizing numbers, and REG_MRs posted without a caller WR
 * (several I/Os ahead of one SEND) followed by the caller's own post.
 */
static void contract_sq_sizing_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = { .frpl = 32, .max_sge_rd = 1 };
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_io_shape shape = { .max_io_bytes = SZ_1M, .extra_wrs = 1 };
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	const struct ib_send_wr *bad;
	struct mrkit_limits lim;
	struct test_io a, b;
	unsigned int base;

	/* 256 pages + 1 for an unaligned head: 9 MRs of 32 pages. */
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.mrs_per_io, 9U);
	KUNIT_EXPECT_EQ(test, lim.wrs_per_io, 19U);
	KUNIT_EXPECT_EQ(test, lim.max_pages_per_mr, 32U);
	shape.pages_per_mr = 4;
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.pages_per_mr, 4U);
	KUNIT_EXPECT_EQ(test, lim.max_pages_per_mr, 32U);
	shape.pages_per_mr = 0;
	shape.flags = MRKIT_POOL_LAZY_INV;
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.wrs_per_io, 28U);
	/* A POST_INV pool is lazy; its shape is counted so with either flag. */
	shape.flags = MRKIT_POOL_LAZY_INV | MRKIT_POOL_POST_INV;
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.wrs_per_io, 28U);
	shape.flags = MRKIT_POOL_POST_INV;
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.wrs_per_io, 28U);
	shape.flags = MRKIT_POOL_LAZY_INV;
	shape.map_flags = MRKIT_MAP_4K;
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.mrs_per_io, DIV_ROUND_UP(SZ_1M / SZ_4K + 1, 32));

	tio_init(&a, pool, MRKIT_PEER_READS);
	tio_init(&b, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&a.io, test_dma_sg(test, 0x10000, P),
					   1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&b.io, test_dma_sg(test, 0x20000, P),
					   1, 0), 1);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&a.io, fdev->qp, NULL, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&b.io, fdev->qp, &send, &bad), 0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs - base, 3U);
	KUNIT_EXPECT_EQ(test, fdev->recs[base].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 1].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[base + 2].opcode, IB_WR_SEND);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&a.io), 1U);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&b.io), 1U);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&a.io, fdev->qp), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&b.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, a.rec.calls + b.rec.calls, 2);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* A synthetic DMA-mapped list of @n entries of @len bytes, 8 GiB apart. */
static struct scatterlist *big_sg(struct kunit *test, int n, u32 len)
{
	struct scatterlist *sgl = kunit_kcalloc(test, n, sizeof(*sgl),
						GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, n);
	for (i = 0; i < n; i++) {
		sg_dma_address(&sgl[i]) = 0x1000000000ULL + i * 0x200000000ULL;
		sg_dma_len(&sgl[i]) = len;
	}
	return sgl;
}

/* An SG_GAPS registration never exceeds 4 GiB - 1. */
static void contract_len_4g_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {
		.kernel_cap_flags = IBK_SG_GAPS_REG,
	};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "gaps", .depth = 4, .pages_per_mr = 8,
		.flags = MRKIT_POOL_SG_GAPS, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct mrkit_seg segs[4];
	struct test_io t;
	int i, n;

	/* Three 2 GiB entries: each pair would be 4 GiB. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	n = mrkit_io_map(&t.io, big_sg(test, 3, SZ_2G), 3, 0);
	KUNIT_ASSERT_EQ(test, n, 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, segs[i].length, (u32)SZ_2G);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	/* Five 1 GiB entries: 3 GiB, then 2 GiB. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	n = mrkit_io_map(&t.io, big_sg(test, 5, SZ_1G), 5, 0);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 2);
	KUNIT_EXPECT_EQ(test, segs[0].length, 3U * SZ_1G);
	KUNIT_EXPECT_EQ(test, segs[1].length, 2U * SZ_1G);
	KUNIT_EXPECT_EQ(test, to_fake_mr(t.io.mrs->ibmr)->ibmr.length,
			3ULL * SZ_1G);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* Unknown flag bits are refused everywhere. */
static void contract_flags_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct mrkit_pool_attr attr = {
		.name = "flags", .depth = 2, .node = NUMA_NO_NODE,
		.flags = BIT(12),
	};
	struct mrkit_io_shape shape = { .max_io_bytes = SZ_64K,
					.flags = BIT(9) };
	struct scatterlist *sg = test_dma_sg(test, 0x10000, P);
	struct mrkit_limits lim;
	struct test_io t;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_pool_create(fdev->pd, &attr)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim),
			-EINVAL);
	shape.flags = 0;
	shape.map_flags = BIT(20);
	KUNIT_EXPECT_EQ(test, mrkit_query_limits(&fdev->ibdev, &shape, &lim),
			-EINVAL);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sg, 1, BIT(7)), -EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, BIT(5)), -EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * A NUMA node that is not online, nents beyond the list (DMA mapped by
 * the caller, and by mrkit with CONFIG_DEBUG_SG), a plain map on an integrity pool, a
 * PI decode with an interval of 0 or 8192: clean -EINVAL or the catch-all.
 */
static void contract_edges_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {
		.pi_frpl = 64, .kernel_cap_flags = IBK_INTEGRITY_HANDOVER,
	};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct mrkit_pool_attr attr = {
		.name = "numa", .depth = 2, .node = MAX_NUMNODES + 3,
	};
	struct ib_mr_status st = { .fail_status = IB_MR_CHECK_SIG_STATUS };
	struct mrkit_pi pi = { .interval = 0, .lba = 7 };
	struct mrkit_pi_result res;
	struct scatterlist sgl[1];
	struct mrkit_pool *ipool;
	struct test_io t;
	void *buf;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_pool_create(fdev->pd, &attr)),
			-EINVAL);
	attr.node = -5;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_pool_create(fdev->pd, &attr)),
			-EINVAL);

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x10000, P),
					   3, 0), -EINVAL);
	buf = kunit_kzalloc(test, P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sg_init_table(sgl, 1);
	sg_set_buf(&sgl[0], buf, P);
	/*
	 * A count the list does not have, for mrkit to DMA-map: like the
	 * DMA API, mrkit trusts it unless CONFIG_DEBUG_SG checks it (the
	 * sanitizer build; elsewhere the DMA API itself would walk off).
	 */
	if (IS_ENABLED(CONFIG_DEBUG_SG))
		KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sgl, 2, MRKIT_MAP_DMA),
				-EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	attr.node = NUMA_NO_NODE;
	attr.name = "sig";
	attr.flags = MRKIT_POOL_INTEGRITY;
	ipool = test_pool(test, fdev->pd, &attr);
	tio_init(&t, ipool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x10000, P),
					   1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(ipool), 0U);

	st.sig_err.err_type = IB_SIG_BAD_GUARD;
	st.sig_err.sig_err_offset = 4096;
	mrkit_pi_decode(&pi, &st, 0, &res);
	KUNIT_EXPECT_EQ(test, res.type, MRKIT_PI_UNKNOWN);
	KUNIT_EXPECT_EQ(test, res.nvme_status, NVME_SC_INVALID_PI);
	pi.interval = 8192;
	mrkit_pi_decode(&pi, &st, 0, &res);
	KUNIT_EXPECT_EQ(test, res.type, MRKIT_PI_UNKNOWN);
	pi.interval = 512;
	mrkit_pi_decode(&pi, &st, 0, &res);
	KUNIT_EXPECT_EQ(test, res.type, MRKIT_PI_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, res.sector, 7ULL + 4096 / 520);
}

static struct kunit_case mrkit_contract_cases[] = {
	KUNIT_CASE(contract_fence_reg_post_test),
	KUNIT_CASE(contract_fence_inv_read_post_test),
	KUNIT_CASE(contract_fence_inv_after_drain_test),
	KUNIT_CASE(contract_fence_sync_test),
	KUNIT_CASE(contract_read_busy_test),
	KUNIT_CASE(contract_lazy_complete_test),
	KUNIT_CASE(contract_find_rkey_test),
	KUNIT_CASE(contract_access_override_test),
	KUNIT_CASE(contract_no_touch_after_post_test),
	KUNIT_CASE(contract_sq_sizing_test),
	KUNIT_CASE(contract_len_4g_test),
	KUNIT_CASE(contract_flags_test),
	KUNIT_CASE(contract_edges_test),
	{}
};

static struct kunit_suite mrkit_contract_suite = {
	.name = "mrkit_contract",
	.test_cases = mrkit_contract_cases,
};

/* ---- the fence on a real device ---- */

static int rv_qp_error(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/* The keys an I/O exposed, and its pool, for a check inside done(). */
struct keys_ctx {
	struct mrkit_pool	*pool;
	u32			keys[4];
	int			n;
};

/* In done(): how many of the I/O's MRs are gone (no longer indexed). */
static void deregistered_at_done(struct test_io *t)
{
	struct keys_ctx *c = t->rec.ctx;
	int i;

	t->rec.seen = 0;
	for (i = 0; i < c->n; i++)
		t->rec.seen += !xa_load(&c->pool->rkeys, c->keys[i] >> 8);
}

/*
 * On rxe and siw: two registrations live (the peer writes
 * through one), the QP goes to error, the I/O is completed.  When done()
 * runs both MRs have been deregistered, and right after it a
 * second connection in the same PD can neither write nor read with the
 * keys; the bytes stay.
 */
static void contract_rdma_fence_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 2);
	struct ib_send_wr nop = { .opcode = IB_WR_SEND };
	unsigned long deadline;
	struct mrkit_seg segs[4];
	struct mrk_pair *probe;
	struct scatterlist sg;
	struct keys_ctx *kc;
	struct mrk_wait w;
	struct test_io *t;
	u8 *buf;
	int s;

	kc = kunit_kzalloc(test, sizeof(*kc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kc);
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	buf = kunit_kzalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, 0x5c, 4 * PAGE_SIZE);
	sg_init_one(&sg, buf, 4 * PAGE_SIZE);
	tio_init(t, pool, MRKIT_PEER_BIDI);
	t->rec.at_done = deregistered_at_done;
	t->rec.ctx = kc;
	t->rec.seen = -1;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, &sg, 1, MRKIT_MAP_DMA), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t->io, segs, 4), 2);
	kc->pool = pool;
	kc->keys[0] = segs[0].key;
	kc->keys[1] = segs[1].key;
	kc->n = 2;
	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, SZ_512K, 64, &w), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t->io, pair->local.qp, &nop, NULL),
			0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &w, 5000), 0);
	/* Live: the peer reads through the first segment. */
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ, 0, 64,
					    segs[0].addr, segs[0].key, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);

	/* The connection dies with both registrations live. */
	KUNIT_ASSERT_EQ(test, rv_qp_error(pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t->io, pair->local.qp), 0);
	deadline = jiffies + 5 * HZ;
	while (!t->rec.calls && time_before(jiffies, deadline)) {
		mrk_poll(pair, NULL, 10);
		/* The ULP's drain (a failed post parks its descriptors). */
		mrkit_pool_qp_drained(pool);
	}
	KUNIT_ASSERT_EQ(test, t->rec.calls, 1);
	KUNIT_EXPECT_NE(test, t->rec.status, 0);
	KUNIT_EXPECT_GE_MSG(test, t->rec.seen, 2,
			    "done() ran before the MRs were deregistered");

	/* Right after done(): another connection in the same PD. */
	probe = mrk_pair_create_pd(test, kind, pair->local.pd);
	for (s = 0; s < 2; s++) {
		struct mrk_pair *p = s ? mrk_pair_create_pd(test, kind,
							    pair->local.pd) :
					 probe;

		KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(p, segs[s].addr,
							   segs[s].key,
							   buf + s * 2 * PAGE_SIZE,
							   64), 0);
	}
	for (s = 0; s < 4 * PAGE_SIZE; s++) {
		if (buf[s] != 0x5c) {
			KUNIT_FAIL(test, "byte %d changed to 0x%x", s, buf[s]);
			break;
		}
	}
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* One I/O shape of the send-queue sizing test. */
struct sq_shape {
	const char	*name;
	u32		pages;		/* per I/O, starting 0x100 into a page */
	u32		pages_per_mr;
	bool		lazy_read;	/* lazy pool, then READ chains */
};

#define SQ_IOS	6

static void sq_wait_all(struct kunit *test, struct mrk_pair *pair,
			struct test_io *t)
{
	unsigned int i;

	for (i = 0; i < SQ_IOS; i++) {
		KUNIT_EXPECT_EQ(test, wait_io(pair, &t[i]), 0);
		KUNIT_EXPECT_EQ(test, t[i].rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t[i].rec.status, 0);
	}
}

/*
 * A QP whose send queue is SQ_IOS x wrs_per_io (from
 * mrkit_query_limits()) and a pool of SQ_IOS x mrs_per_io descriptors
 * take SQ_IOS I/Os of the largest shape, unaligned (one more page), with
 * nothing polled in between: every registration and SEND posted, then
 * every invalidation chain; in a lazy pool, I/Os whose descriptors still
 * hold their keys then post [LOCAL_INV REG_MR READ] per descriptor.  No
 * post fails, every I/O finishes with 0, the READ data is the peer's.
 */
static void contract_rdma_sq_test(struct kunit *test)
{
	static const struct sq_shape shapes[] = {
		{ "one_mr", 2, 4, false },
		{ "six_mrs", 20, 4, false },
		{ "lazy_read", 8, 4, true },
	};
	enum mrk_kind kind = mrk_param_kind(test);
	unsigned int sh, i;

	for (sh = 0; sh < ARRAY_SIZE(shapes); sh++) {
		const struct sq_shape *q = &shapes[sh];
		struct mrkit_io_shape shape = {
			.max_io_bytes = q->pages * P, .extra_wrs = 1,
			.pages_per_mr = q->pages_per_mr,
			.flags = q->lazy_read ? MRKIT_POOL_LAZY_INV : 0,
		};
		struct mrkit_pool_attr attr = {
			.name = "sq", .pages_per_mr = q->pages_per_mr,
			.flags = shape.flags, .node = NUMA_NO_NODE,
		};
		struct mrk_wait *sent, *recv;
		struct ib_send_wr send = { .opcode = IB_WR_SEND,
					   .send_flags = IB_SEND_SIGNALED };
		struct scatterlist *sg;
		struct mrkit_pool_stats st;
		struct mrkit_limits lim;
		struct mrkit_pool *pool;
		struct mrk_pair *pair;
		struct test_io *t;
		u32 rkey, len = q->pages * P;
		u64 iova;
		u8 *buf;

		KUNIT_ASSERT_EQ(test, mrkit_query_limits(mrk_device(kind), &shape,
							 &lim), 0);
		pair = mrk_pair_create_sq(test, kind, SQ_IOS * lim.wrs_per_io);
		attr.depth = SQ_IOS * lim.mrs_per_io;
		pool = test_pool(test, pair->local.pd, &attr);
		t = kunit_kcalloc(test, SQ_IOS, sizeof(*t), GFP_KERNEL);
		sg = kunit_kcalloc(test, SQ_IOS, sizeof(*sg), GFP_KERNEL);
		sent = kunit_kcalloc(test, 2 * SQ_IOS, sizeof(*sent), GFP_KERNEL);
		buf = kunit_kzalloc(test, SQ_IOS * (q->pages + 1) * P, GFP_KERNEL);
		KUNIT_ASSERT_TRUE(test, t && sg && sent && buf);
		recv = sent + SQ_IOS;
		for (i = 0; i < SQ_IOS; i++) {
			sg_init_one(&sg[i], buf + i * (q->pages + 1) * P + 0x100,
				    len);
			tio_init(&t[i], pool, MRKIT_PEER_WRITES);
			KUNIT_ASSERT_EQ(test, mrkit_io_map(&t[i].io, &sg[i], 1,
							   MRKIT_MAP_DMA),
					(int)lim.mrs_per_io);
			KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, i * 64, 64,
								 &recv[i]), 0);
			mrk_wait_init(&sent[i]);
			send.wr_cqe = &sent[i].cqe;
			KUNIT_ASSERT_EQ_MSG(test, mrkit_io_post(&t[i].io,
								pair->local.qp,
								&send, NULL), 0,
					    "%s: I/O %u", q->name, i);
		}
		for (i = 0; i < SQ_IOS; i++)
			KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t[i].io,
								pair->local.qp),
					0);
		sq_wait_all(test, pair, t);
		for (i = 0; i < SQ_IOS; i++) {
			KUNIT_EXPECT_EQ(test, mrk_poll(pair, &sent[i], 5000), 0);
			KUNIT_EXPECT_EQ(test, mrk_poll(pair, &recv[i], 5000), 0);
		}

		if (q->lazy_read) {
			/* The keys are still valid: each READ chain kills them first. */
			memset(pair->pbuf, 0xa5, len);
			KUNIT_ASSERT_EQ(test, mrk_peer_reg(pair, 0, len, &rkey,
							   &iova), 0);
			for (i = 0; i < SQ_IOS; i++) {
				tio_init(&t[i], pool, MRKIT_LOCAL_SINK);
				KUNIT_ASSERT_EQ(test,
						mrkit_io_map(&t[i].io, &sg[i], 1,
							     MRKIT_MAP_DMA),
						(int)lim.mrs_per_io);
				KUNIT_ASSERT_EQ_MSG(test,
						    mrkit_io_post_read(&t[i].io,
								       pair->local.qp,
								       iova, rkey),
						    0, "%s: READ %u", q->name, i);
			}
			sq_wait_all(test, pair, t);
			for (i = 0; i < SQ_IOS; i++)
				KUNIT_EXPECT_EQ(test,
						memcmp(buf + i * (q->pages + 1) * P +
						       0x100, pair->pbuf, len), 0);
		}
		flush_workqueue(mrkit_wq);
		mrkit_pool_get_stats(pool, &st);
		KUNIT_EXPECT_EQ(test, st.in_use, 0U);
		KUNIT_EXPECT_EQ(test, st.stale, 0U);
		KUNIT_EXPECT_EQ(test, st.stale_replaced, 0ULL);
	}
}

static struct kunit_case mrkit_contract_rdma_cases[] = {
	KUNIT_CASE_PARAM(contract_rdma_fence_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(contract_rdma_sq_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite mrkit_contract_rdma_suite = {
	.name = "mrkit_contract_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_contract_rdma_cases,
};

kunit_test_suites(&mrkit_contract_suite, &mrkit_contract_rdma_suite);
