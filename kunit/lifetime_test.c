// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for lifetimes: what outlives what around a pool's
 * destruction and an I/O's fence.
 *
 * mrkit_lifetime, on the fake device:
 *  - mrkit_pool_destroy() returns only once every descriptor is back and
 *    every MR is deregistered: an I/O still holding descriptors is
 *    released by another context while destroy waits, an I/O waiting in
 *    its fence gets its done(), and nothing of the pool is left;
 *  - mrkit_pool_release_held() gives back, after the drain, what I/Os an
 *    error path abandoned hold (mapped, posted, a failed post), keeping
 *    lazy keys until destroy and retiring keys a failed post left live;
 *    an I/O whose invalidation is still in flight is left alone;
 *  - mrkit_pool_wait() sleepers across a destroy: woken with -ENODEV,
 *    and the pool is not freed under them (with and without descriptors
 *    outstanding);
 *  - a fenced done() runs before the pool allocates the replacement MR;
 *  - the DMA mapping mrkit made is undone only once the fence has fallen:
 *    after the deregistration of every retired MR (for parked ones, after
 *    mrkit_pool_qp_drained()) and before done(); a map that fails undoes
 *    it before it returns.
 *
 * mrkit_lifetime_rdma, on rxe and siw: an abandoned I/O's key stays valid
 * after mrkit_pool_release_held() until destroy, and dies with it; a
 * device of its own is removed
 * ("rdma link delete") while a pool's descriptors are still held by an
 * I/O; the ULP's remove callback destroys the pool, whose descriptors
 * another context gives back, and then deallocates its PD.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"
#include <trace/events/mrkit.h>

#define P	PAGE_SIZE

/* Release an I/O from another context, a while after being queued. */
struct later_release {
	struct delayed_work	work;
	struct test_io		*t;
	int			ret;
	bool			done;
};

static void later_release_fn(struct work_struct *work)
{
	struct later_release *l = container_of(to_delayed_work(work),
					       struct later_release, work);

	l->ret = mrkit_io_release(&l->t->io, 0);
	WRITE_ONCE(l->done, true);
}

static void later_release_start(struct later_release *l, struct test_io *t,
				unsigned int ms)
{
	l->t = t;
	l->ret = -EINPROGRESS;
	l->done = false;
	INIT_DELAYED_WORK(&l->work, later_release_fn);
	queue_delayed_work(system_unbound_wq, &l->work, msecs_to_jiffies(ms));
}

static struct mrkit_pool *plain_pool(struct kunit *test, struct fake_dev *fdev,
				     u32 depth)
{
	struct mrkit_pool_attr attr = {
		.name = "life", .depth = depth, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = mrkit_pool_create(fdev->pd, &attr);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	return pool;
}

/* Post an I/O and have its invalidation flushed: it waits in its fence. */
static void fence_one(struct kunit *test, struct fake_dev *fdev,
		      struct mrkit_pool *pool, struct test_io *t,
		      struct scatterlist *sg, u32 flags)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };

	tio_init(t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t->io, sg, 1, flags), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t->io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t->io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
}

static void lifetime_destroy_waits_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	int objs = atomic_read(&mrkit_live_objects);
	struct later_release *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct test_io held, fenced;
	struct mrkit_pool *pool;
	struct scatterlist *sg;

	KUNIT_ASSERT_NOT_NULL(test, l);
	pool = plain_pool(test, fdev, 4);
	fence_one(test, fdev, pool, &fenced, test_dma_sg(test, 0x900000, P), 0);
	tio_init(&held, pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x700000, 12 * P);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&held.io, sg, 1, 0), 2);
	later_release_start(l, &held, 100);
	mrkit_pool_destroy(pool);
	KUNIT_EXPECT_TRUE_MSG(test, READ_ONCE(l->done),
			      "destroy returned with descriptors held by an I/O");
	flush_delayed_work(&l->work);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, l->ret, 0);
	KUNIT_EXPECT_EQ(test, fenced.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, fenced.rec.status, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
}

/*
 * Teardown with I/Os an error path abandoned: one mapped, one posted (its
 * key live at the device, the posting context gone), one whose post failed
 * after its first REG_MR, one never mapped.  After the drain,
 * mrkit_pool_release_held() gives back what they hold: the posted one's
 * key stays valid until destroy deregisters its MR, the failed post's
 * posted key dies at once (retired), every I/O is idle and maps again,
 * done() never runs, and destroy does not wait.
 */
static void lifetime_release_held_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	int objs = atomic_read(&mrkit_live_objects);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct test_io t[4];
	struct mrkit_seg posted[2], failed[2];
	struct mrkit_pool_stats st;
	struct mrkit_pool *pool;
	unsigned int i;

	pool = plain_pool(test, fdev, 8);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		tio_init(&t[i], pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t[0].io, test_dma_sg(test, 0x100000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t[1].io, test_dma_sg(test, 0x200000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t[1].io, posted, 2), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t[1].io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t[2].io, test_dma_sg(test, 0x300000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t[2].io, failed, 2), 2);
	fdev->post_fail_wr = 1;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t[2].io, fdev->qp, &send, NULL), -ENOMEM);
	KUNIT_ASSERT_TRUE(test, fake_mr_alive(fdev, failed[0].key));
	KUNIT_ASSERT_EQ(test, in_use(pool), 6U);

	mrkit_pool_qp_drained(pool);
	KUNIT_EXPECT_EQ(test, mrkit_pool_release_held(pool), 3U);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_pool_release_held(pool), 0U);
	KUNIT_EXPECT_TRUE(test, fake_mr_alive(fdev, posted[0].key));
	KUNIT_EXPECT_TRUE(test, fake_mr_alive(fdev, posted[1].key));
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, failed[0].key));
	/* Left valid: the posted I/O's two; the failed post's were retired. */
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.lazy_released, 2ULL);
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		KUNIT_EXPECT_EQ(test, mrkit_io_nr_mrs(&t[i].io), 0U);
		KUNIT_EXPECT_EQ(test, mrkit_io_map(&t[i].io,
						   test_dma_sg(test, 0x400000, P), 1, 0), 1);
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t[i].io, 0), 0);
		KUNIT_EXPECT_EQ(test, t[i].rec.calls, 0);
	}
	KUNIT_EXPECT_EQ(test, mrkit_pool_destroy_timeout(pool, HZ), 0);
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, posted[0].key));
	KUNIT_EXPECT_FALSE(test, fake_mr_alive(fdev, posted[1].key));
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
}

/*
 * mrkit_pool_release_held() called while an I/O's invalidation chain is
 * still in flight (no drain yet): the I/O is refused, counted as nothing
 * released however many descriptors it holds, and left alone - its chain
 * completes and done() runs once, with every descriptor back.
 */
static void lifetime_release_held_inflight_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool *pool = plain_pool(test, fdev, 8);
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x100000, 12 * P),
					   1, 0), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_pool_release_held(pool), 0U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 2U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_pool_release_held(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_pool_destroy_timeout(pool, HZ), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
}

struct waiter {
	struct work_struct	work;
	struct mrkit_pool	*pool;
	int			ret;
};

static void waiter_fn(struct work_struct *work)
{
	struct waiter *w = container_of(work, struct waiter, work);

	w->ret = mrkit_pool_wait(w->pool, msecs_to_jiffies(500));
}

/*
 * A waiter sleeps on an empty pool; the pool is destroyed.  First with
 * nothing outstanding (the only slot is retired: its replacement failed),
 * then with a descriptor held by an I/O that another context releases.
 */
static void lifetime_wait_destroy_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	int objs = atomic_read(&mrkit_live_objects);
	struct later_release *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct waiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct mrkit_pool *pool;
	struct test_io t;

	KUNIT_ASSERT_TRUE(test, l && w);
	pool = plain_pool(test, fdev, 1);
	fake_fail_nth(fdev, FAKE_OP_ALLOC_MR, 1, -ENOMEM);
	fence_one(test, fdev, pool, &t, test_dma_sg(test, 0x900000, P), 0);
	flush_workqueue(mrkit_wq);
	KUNIT_ASSERT_EQ(test, t.rec.calls, 1);
	KUNIT_ASSERT_EQ(test, in_use(pool), 0U);
	w->pool = pool;
	w->ret = 1;
	INIT_WORK(&w->work, waiter_fn);
	queue_work(system_unbound_wq, &w->work);
	msleep(50);
	mrkit_pool_destroy(pool);
	flush_work(&w->work);
	KUNIT_EXPECT_EQ(test, w->ret, -ENODEV);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);

	pool = plain_pool(test, fdev, 1);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, P),
					   1, 0), 1);
	w->pool = pool;
	w->ret = 1;
	INIT_WORK(&w->work, waiter_fn);
	queue_work(system_unbound_wq, &w->work);
	msleep(50);
	later_release_start(l, &t, 100);
	mrkit_pool_destroy(pool);
	flush_work(&w->work);
	flush_delayed_work(&l->work);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, w->ret, -ENODEV);
	KUNIT_EXPECT_EQ(test, l->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
}

static void alloc_calls_at_done(struct test_io *t)
{
	struct fake_dev *fdev = t->rec.ctx;

	t->rec.seen = fdev->calls[FAKE_OP_ALLOC_MR];
}

/* A fenced done() never waits behind the replacement's allocation. */
static void lifetime_done_before_alloc_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	unsigned int allocs;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	t.rec.at_done = alloc_calls_at_done;
	t.rec.ctx = fdev;
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x700000, P),
					   1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	allocs = fdev->calls[FAKE_OP_ALLOC_MR];
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ_MSG(test, t.rec.seen, (int)allocs,
			    "done() ran after the replacement was allocated");
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_ALLOC_MR], allocs + 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/* What the unmap probe saw. */
struct unmap_seen {
	struct fake_dev	*fdev;
	struct test_io	*t;
	u32		key;
	int		unmaps;
	bool		alive;
	int		done_calls;
};

static struct unmap_seen *unmap_seen;

static void unmap_probe(void *data, const struct mrkit_pool *pool, int nents)
{
	struct unmap_seen *s = READ_ONCE(unmap_seen);

	if (!s)
		return;
	s->unmaps++;
	s->alive = fake_mr_alive(s->fdev, s->key);
	s->done_calls = s->t->rec.calls;
}

/* Count the unmaps of @t's I/O in @s until unmap_unwatch(). */
static void unmap_watch(struct kunit *test, struct unmap_seen *s,
			struct test_io *t)
{
	KUNIT_ASSERT_EQ(test, register_trace_mrkit_unmap(unmap_probe, NULL), 0);
	s->t = t;
	WRITE_ONCE(unmap_seen, s);
}

static void unmap_unwatch(void)
{
	WRITE_ONCE(unmap_seen, NULL);
	unregister_trace_mrkit_unmap(unmap_probe, NULL);
	tracepoint_synchronize_unregister();
}

static void lifetime_unmap_after_fence_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct unmap_seen s = { .fdev = fdev };
	struct scatterlist sg;
	struct mrkit_seg seg;
	struct test_io t;
	void *buf;

	buf = kunit_kzalloc(test, 4 * P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	unmap_watch(test, &s, &t);

	/* A flushed invalidation: the fence falls in the pool's work item. */
	sg_init_one(&sg, buf, 4 * P);
	fence_one(test, fdev, pool, &t, &sg, MRKIT_MAP_DMA);
	s.key = fdev->recs[fdev->nr_recs - 1].key;
	KUNIT_EXPECT_EQ_MSG(test, s.unmaps, 0,
			    "unmapped while a retired key may still be valid");
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, s.unmaps, 1);
	KUNIT_EXPECT_FALSE(test, s.alive);
	KUNIT_EXPECT_EQ(test, s.done_calls, 0);

	/* A failed invalidation post parks the descriptor until the drain. */
	s.unmaps = 0;
	s.alive = true;
	s.done_calls = -1;
	sg_init_one(&sg, buf, 4 * P);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
	s.key = seg.key;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fdev->post_fail_wr = 0;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, s.unmaps, 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, s.unmaps, 1);
	KUNIT_EXPECT_FALSE(test, s.alive);
	KUNIT_EXPECT_EQ(test, s.done_calls, 0);

	unmap_unwatch();
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * A map that fails after mrkit DMA-mapped the list undoes the mapping
 * before it returns: a provider that maps less than asked (-EINVAL), and
 * a pool with too few free descriptors (-EAGAIN).
 */
static void lifetime_unmap_failed_map_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct unmap_seen s = { .fdev = fdev };
	struct scatterlist sg;
	struct mrkit_mr *held;
	struct test_io t;
	void *buf;

	buf = kunit_kzalloc(test, 12 * P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	unmap_watch(test, &s, &t);

	sg_init_one(&sg, buf, 4 * P);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	fake_fail_nth(fdev, FAKE_OP_MAP_MR_SG, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA), -EINVAL);
	KUNIT_EXPECT_EQ(test, s.unmaps, 1);

	/* Two descriptors needed, one free. */
	held = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, held);
	s.unmaps = 0;
	sg_init_one(&sg, buf, 12 * P);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA), -EAGAIN);
	KUNIT_EXPECT_EQ(test, s.unmaps, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(held), 0);

	unmap_unwatch();
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static struct kunit_case lifetime_cases[] = {
	KUNIT_CASE(lifetime_destroy_waits_test),
	KUNIT_CASE(lifetime_release_held_test),
	KUNIT_CASE(lifetime_release_held_inflight_test),
	KUNIT_CASE(lifetime_wait_destroy_test),
	KUNIT_CASE(lifetime_done_before_alloc_test),
	KUNIT_CASE(lifetime_unmap_after_fence_test),
	KUNIT_CASE(lifetime_unmap_failed_map_test),
	{}
};

static struct kunit_suite lifetime_suite = {
	.name = "mrkit_lifetime",
	.test_cases = lifetime_cases,
};

/* The ULP side of the removal test: what its remove callback does. */
struct removal {
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct mrkit_pool	*pool;
	struct test_io		t;
	struct later_release	l;
	bool			released_before_dealloc;
	struct completion	removed;
};

static struct removal *removal;

static int removal_add(struct ib_device *dev)
{
	return 0;
}

static void removal_remove(struct ib_device *dev, void *client_data)
{
	struct removal *r = READ_ONCE(removal);

	if (!r || dev != r->dev)
		return;
	/* An I/O still holds descriptors; another context finishes it. */
	later_release_start(&r->l, &r->t, 100);
	mrkit_pool_destroy(r->pool);
	r->released_before_dealloc = READ_ONCE(r->l.done);
	ib_dealloc_pd(r->pd);
	complete(&r->removed);
}

static struct ib_client removal_client = {
	.name = "mrkit_removal_test",
	.add = removal_add,
	.remove = removal_remove,
};

static void lifetime_rdma_removal_test(struct kunit *test)
{
	static const char * const ibdev[] = { "mrk_rm_rxe", "mrk_rm_siw" };
	static const char * const netdev[] = { "mrkrm0", "mrkrm1" };
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrkit_pool_attr attr = {
		.name = "removal", .depth = 4, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	struct removal *rp = kunit_kzalloc(test, sizeof(*rp), GFP_KERNEL);
	struct scatterlist *sg;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, rp);
	init_completion(&rp->removed);
	INIT_DELAYED_WORK(&rp->l.work, later_release_fn);
	rp->dev = mrk_device_add(kind, ibdev[kind], netdev[kind],
				 htonl(0x0a630201 + (kind << 8)));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rp->dev);
	rp->pd = ib_alloc_pd(rp->dev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rp->pd);
	rp->pool = mrkit_pool_create(rp->pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rp->pool);
	tio_init(&rp->t, rp->pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x700000, 12 * P);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&rp->t.io, sg, 1, 0), 2);
	WRITE_ONCE(removal, rp);
	ret = ib_register_client(&removal_client);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ret = mrk_device_del(rp->dev, netdev[kind]);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&rp->removed, 10 * HZ));
	ib_unregister_client(&removal_client);
	WRITE_ONCE(removal, NULL);
	flush_delayed_work(&rp->l.work);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_TRUE_MSG(test, rp->released_before_dealloc,
			      "the PD was deallocated with the pool's MRs still registered");
	KUNIT_EXPECT_EQ(test, rp->l.ret, 0);
}

/*
 * An I/O posted and abandoned on rxe and siw: its REG_MR executed, the
 * connection is drained, and mrkit_pool_release_held() gives the
 * descriptor back with its key still valid - a peer on another connection
 * of the same PD writes through it, bytes compared - until
 * mrkit_pool_destroy() deregisters the MR: then that peer's access fails.
 */
static void lifetime_rdma_release_held_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool_attr attr = {
		.name = "held", .depth = 4, .node = NUMA_NO_NODE,
	};
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct mrk_wait sent, recv, w;
	struct mrkit_pool *pool;
	struct mrk_pair *probe;
	struct scatterlist sg;
	struct mrkit_seg seg;
	struct test_io t;
	u8 *buf;
	u32 i;

	buf = kunit_kzalloc(test, 4 * P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	pool = mrkit_pool_create(pair->local.pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	sg_init_one(&sg, buf, 4 * P);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, SZ_512K, 64, &recv), 0);
	mrk_wait_init(&sent);
	send.wr_cqe = &sent.cqe;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, pair->local.qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &sent, 5000), 0);
	KUNIT_ASSERT_EQ(test, sent.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &recv, 5000), 0);

	/* The ULP abandons the I/O; its connection is drained. */
	ib_drain_qp(pair->local.qp);
	mrkit_pool_qp_drained(pool);
	KUNIT_EXPECT_EQ(test, mrkit_pool_release_held(pool), 1U);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_mrs(&t.io), 0U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);

	probe = mrk_pair_create_pd(test, kind, pair->local.pd);
	memset(probe->pbuf, 0x5a, 64);
	KUNIT_EXPECT_EQ(test, mrk_peer_rdma(probe, IB_WR_RDMA_WRITE, 0, 64,
					    seg.addr, seg.key, &w), 0);
	KUNIT_EXPECT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	for (i = 0; i < 64; i++)
		if (buf[i] != 0x5a)
			break;
	KUNIT_EXPECT_EQ(test, i, 64U);

	KUNIT_EXPECT_EQ(test, mrkit_pool_destroy_timeout(pool, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, seg.addr, seg.key,
						   buf, 64), 0);
	mrk_pair_destroy(probe);
}

static struct kunit_case lifetime_rdma_cases[] = {
	KUNIT_CASE_PARAM(lifetime_rdma_removal_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(lifetime_rdma_release_held_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite lifetime_rdma_suite = {
	.name = "mrkit_lifetime_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = lifetime_rdma_cases,
};

kunit_test_suites(&lifetime_suite, &lifetime_rdma_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(MRKIT);
