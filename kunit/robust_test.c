// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for mrkit's robustness.
 *
 * mrkit_robust: the fault matrix - every allocation site mrkit has and
 * every verbs call it makes, failed one occurrence at a time inside every
 * public operation that reaches it, with a clean errno and accounting
 * (pool counters, provider MRs, mrkit objects) back where it started; the
 * suite prints how many listed sites it covered and fails if a listed site
 * has no case.  Misuse (double put, put of a live registration, use after
 * destroy, a stray completion) is refused without corrupting the pool.
 * Several kthreads get, put, retire and map concurrently for a bounded
 * time and the accounting is exact at the end.
 *
 * mrkit_robust_rdma: on rxe and siw, registrations in flight (REG posted,
 * rkeys exposed, LOCAL_INVs posted) when the QP is moved to the error
 * state: every completion is flushed, every descriptor ends free or
 * replaced, none is handed out again, the pool serves a new connection
 * with data verified byte for byte, and destroy succeeds.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/nvme.h>
#include <linux/scatterlist.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"

/* ---- the fault matrix ---- */

#ifdef CONFIG_FAULT_INJECTION
#define mrk_fault_arm_site	mrk_fault_arm
#define mrk_fault_disarm_all	mrk_fault_disarm
#define mrk_fault_fired_site	mrk_fault_fired
#else
static inline void mrk_fault_arm_site(int site, unsigned int nth)
{
}

static inline void mrk_fault_disarm_all(void)
{
}

static inline bool mrk_fault_fired_site(int site)
{
	return false;
}
#endif

/* A fault site: one of mrkit's own, or a verbs op of the fake device. */
struct fm_site {
	const char *name;
	bool verb;
	int id;		/* enum mrkit_fault_site or enum fake_op */
};

/* mrkit's own sites are failed through fault_attr, when the kernel has it. */
#ifdef CONFIG_FAULT_INJECTION
#define FM_OWN_SITES	MRKIT_FAULT_NR_SITES
#else
#define FM_OWN_SITES	0
#endif
#define FM_SITES	(FM_OWN_SITES + FAKE_OP_NR - 1)

/* Every site: mrkit's list, then every verb mrkit calls (not dereg). */
static void fm_sites(struct fm_site *s)
{
	static const char * const verbs[FAKE_OP_NR] = {
		[FAKE_OP_ALLOC_MR] = "ib_alloc_mr",
		[FAKE_OP_ALLOC_MR_INTEGRITY] = "ib_alloc_mr_integrity",
		[FAKE_OP_MAP_MR_SG] = "ib_map_mr_sg",
		[FAKE_OP_MAP_MR_SG_PI] = "ib_map_mr_sg_pi",
		[FAKE_OP_POST_SEND] = "ib_post_send",
		[FAKE_OP_CHECK_MR_STATUS] = "ib_check_mr_status",
	};
	int i, n = 0;

	for (i = 0; i < FM_OWN_SITES; i++)
		s[n++] = (struct fm_site){ mrkit_fault_site_names[i], false, i };
	for (i = 0; i < FAKE_OP_NR; i++)
		if (i != FAKE_OP_DEREG_MR)	/* must not fail: see fake_dev.c */
			s[n++] = (struct fm_site){ verbs[i], true, i };
}

static int fm_disarm_init(struct kunit_resource *res, void *ctx)
{
	res->data = ctx;
	return 0;
}

static void fm_disarm_free(struct kunit_resource *res)
{
	mrk_fault_disarm_all();
}

/* Arm one fault, the nth occurrence of one site from now on. */
static void fm_arm(struct fake_dev *fdev, const struct fm_site *s,
		   unsigned int nth)
{
	mrk_fault_disarm_all();
	fake_fail_clear(fdev);
	if (s->verb) {
		fdev->post_fail_wr = 0;
		fake_fail_nth(fdev, s->id, nth, -ENOMEM);
	} else {
		mrk_fault_arm_site(s->id, nth);
	}
}

static bool fm_fired(struct fake_dev *fdev, const struct fm_site *s)
{
	bool fired = s->verb ? !fdev->fail_at[s->id] :
			       mrk_fault_fired_site(s->id);

	fake_fail_clear(fdev);
	mrk_fault_disarm_all();
	return fired;
}

struct fm_ctx {
	struct kunit *test;
	struct fake_dev *fdev;
	struct mrkit_pool *pool;	/* plain, depth 4 (max 8), 8 pages */
	struct mrkit_pool *ipool;	/* integrity, depth 2 */
	struct test_io t;
	u8 *pbuf, *dbuf;
	struct scatterlist dsg, psg;
	struct mrkit_pi pi;
};

/* What must come back: provider MRs, mrkit objects, pool counters. */
struct fm_snap {
	int mrs, objs;
	struct mrkit_pool_stats st, ist;
};

static void fm_snap(struct fm_ctx *c, struct fm_snap *s)
{
	flush_workqueue(mrkit_wq);
	/* Everything posted has completed: recycle the fake's records. */
	if (c->fdev->next_complete == c->fdev->nr_recs) {
		c->fdev->nr_recs = 0;
		c->fdev->next_complete = 0;
	}
	s->mrs = atomic_read(&c->fdev->mrs_alive);
	s->objs = atomic_read(&mrkit_live_objects);
	mrkit_pool_get_stats(c->pool, &s->st);
	mrkit_pool_get_stats(c->ipool, &s->ist);
}

/*
 * An operation arms the fault (site, nth) right before the part under
 * test and returns the errno that part gave (0 if none); FM_BROKEN means
 * a broken state, which the matrix reports.
 */
#define FM_BROKEN	(-ENOTRECOVERABLE)

typedef int (*fm_op_t)(struct fm_ctx *c, const struct fm_site *s,
		       unsigned int nth);

static int fm_create(struct fm_ctx *c, const struct fm_site *s,
		     unsigned int nth, const struct mrkit_pool_attr *attr)
{
	struct mrkit_pool *p;

	fm_arm(c->fdev, s, nth);
	p = mrkit_pool_create(c->fdev->pd, attr);
	if (IS_ERR(p))
		return PTR_ERR(p);
	mrkit_pool_destroy(p);
	return 0;
}

static int fm_pool_create(struct fm_ctx *c, const struct fm_site *s,
			  unsigned int nth)
{
	struct mrkit_pool_attr attr = {
		.name = "fm", .depth = 3, .node = NUMA_NO_NODE,
	};

	return fm_create(c, s, nth, &attr);
}

static int fm_ipool_create(struct fm_ctx *c, const struct fm_site *s,
			   unsigned int nth)
{
	struct mrkit_pool_attr attr = {
		.name = "fmi", .depth = 2, .flags = MRKIT_POOL_INTEGRITY,
		.node = NUMA_NO_NODE,
	};

	return fm_create(c, s, nth, &attr);
}

/* Growth runs in the background: a failure leaves the pool as it was. */
static int fm_grow(struct fm_ctx *c, const struct fm_site *s,
		   unsigned int nth)
{
	struct mrkit_pool_attr attr = {
		.name = "fmg", .depth = 1, .max_depth = 2,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *p = mrkit_pool_create(c->fdev->pd, &attr);
	struct mrkit_pool_stats st;
	struct mrkit_mr *a;
	int ret = 0;

	if (IS_ERR(p))
		return FM_BROKEN;
	a = mrkit_mr_get(p);
	fm_arm(c->fdev, s, nth);
	mrkit_mr_get(p);		/* empty: queues growth */
	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(p, &st);
	if (st.allocated == 1)
		ret = -ENOMEM;		/* the failed growth left it alone */
	else if (st.allocated != 2)
		ret = FM_BROKEN;
	mrkit_mr_put(a);
	mrkit_pool_destroy(p);
	return ret;
}

/* A stale descriptor's replacement failing leaves the slot retired. */
static int fm_replace(struct fm_ctx *c, const struct fm_site *s,
		      unsigned int nth)
{
	struct mrkit_pool_stats st;
	struct mrkit_mr *mr = mrkit_mr_get(c->pool);

	if (IS_ERR(mr))
		return FM_BROKEN;
	mrkit_mr_mark_stale(mr);
	fm_arm(c->fdev, s, nth);
	mrkit_mr_put(mr);
	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(c->pool, &st);
	if (!st.stale)
		return 0;
	/* The next work run, without the fault, replaces the slot. */
	fake_fail_clear(c->fdev);
	mrk_fault_disarm_all();
	mr = mrkit_mr_get(c->pool);
	mrkit_mr_mark_stale(mr);
	mrkit_mr_put(mr);
	return -ENOMEM;
}

static int fm_io_map(struct fm_ctx *c, const struct fm_site *s,
		     unsigned int nth)
{
	int n;

	tio_init(&c->t, c->pool, MRKIT_PEER_WRITES);
	fm_arm(c->fdev, s, nth);
	n = mrkit_io_map(&c->t.io, test_dma_sg(c->test, 0x700000,
					       20 * PAGE_SIZE), 1, 0);
	if (n < 0)
		return n;
	return mrkit_io_release(&c->t.io, 0) ? FM_BROKEN : 0;
}

/* mrkit DMA-maps the list itself (a real buffer). */
static int fm_io_map_dma(struct fm_ctx *c, const struct fm_site *s,
			 unsigned int nth)
{
	struct scatterlist sg;
	int n;

	sg_init_one(&sg, c->dbuf, 4096);
	tio_init(&c->t, c->pool, MRKIT_PEER_WRITES);
	fm_arm(c->fdev, s, nth);
	n = mrkit_io_map(&c->t.io, &sg, 1, MRKIT_MAP_DMA);
	if (n < 0)
		return n;
	return mrkit_io_release(&c->t.io, 0) ? FM_BROKEN : 0;
}

static int fm_io_map_pi(struct fm_ctx *c, const struct fm_site *s,
			unsigned int nth)
{
	int n;

	tio_init(&c->t, c->ipool, MRKIT_PEER_READS);
	fm_arm(c->fdev, s, nth);
	n = mrkit_io_map_pi(&c->t.io, &c->dsg, 1, &c->psg, 1, &c->pi);
	if (n < 0)
		return n;
	return mrkit_io_release(&c->t.io, 0) ? FM_BROKEN : 0;
}

/*
 * Has the I/O been told exactly once?  After a failed post its done()
 * waits for the ULP's drain and the deregistrations (the rkey fence).
 */
static bool fm_finished(struct fm_ctx *c)
{
	if (!c->t.rec.calls) {
		mrkit_pool_qp_drained(c->pool);
		mrkit_pool_qp_drained(c->ipool);
		flush_workqueue(mrkit_wq);
	}
	return c->t.rec.calls == 1;
}

/* Map, post, complete: a failure in any is unwound to the start. */
static int fm_io_post(struct fm_ctx *c, const struct fm_site *s,
		      unsigned int nth)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	int ret, n;

	tio_init(&c->t, c->pool, MRKIT_PEER_WRITES);
	fm_arm(c->fdev, s, nth);
	n = mrkit_io_map(&c->t.io, test_dma_sg(c->test, 0x700000,
					       20 * PAGE_SIZE), 1, 0);
	if (n < 0)
		return n;
	ret = mrkit_io_post(&c->t.io, c->fdev->qp, &send, NULL);
	if (mrkit_io_complete(&c->t.io, c->fdev->qp))
		return FM_BROKEN;
	fake_complete(c->fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	if (!fm_finished(c))
		return FM_BROKEN;
	return ret ?: c->t.rec.status;
}

static int fm_io_post_read(struct fm_ctx *c, const struct fm_site *s,
			   unsigned int nth)
{
	int ret;

	tio_init(&c->t, c->pool, MRKIT_LOCAL_SINK);
	fm_arm(c->fdev, s, nth);
	ret = mrkit_io_map(&c->t.io, test_dma_sg(c->test, 0x700000,
						 12 * PAGE_SIZE), 1, 0);
	if (ret < 0)
		return ret;
	ret = mrkit_io_post_read(&c->t.io, c->fdev->qp, 0x1000, 5);
	if (ret) {
		/* Finished by the failure: done() once the sinks are dead. */
		if (c->t.rec.calls || !fm_finished(c) || c->t.rec.status != ret)
			return FM_BROKEN;
		return ret;
	}
	fake_complete(c->fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	fake_complete(c->fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	return fm_finished(c) ? c->t.rec.status : FM_BROKEN;
}

static int fm_io_check_pi(struct fm_ctx *c, const struct fm_site *s,
			  unsigned int nth)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pi_result res;
	int ret;

	tio_init(&c->t, c->ipool, MRKIT_PEER_READS);
	fm_arm(c->fdev, s, nth);
	ret = mrkit_io_map_pi(&c->t.io, &c->dsg, 1, &c->psg, 1, &c->pi);
	if (ret < 0)
		return ret;
	ret = mrkit_io_post(&c->t.io, c->fdev->qp, &send, NULL);
	if (!ret)
		ret = mrkit_io_check_pi(&c->t.io, &res);
	if (mrkit_io_complete(&c->t.io, c->fdev->qp))
		return FM_BROKEN;
	fake_complete(c->fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	if (!fm_finished(c))
		return FM_BROKEN;
	return ret ?: c->t.rec.status;
}

static const struct {
	const char *name;
	fm_op_t op;
} fm_ops[] = {
	{ "pool_create", fm_pool_create },
	{ "pool_create_integrity", fm_ipool_create },
	{ "pool_grow", fm_grow },
	{ "stale_replace", fm_replace },
	{ "io_map", fm_io_map },
	{ "io_map_dma", fm_io_map_dma },
	{ "io_map_pi", fm_io_map_pi },
	{ "io_post_invalidate", fm_io_post },
	{ "io_post_read", fm_io_post_read },
	{ "io_check_pi", fm_io_check_pi },
};

static void fm_ctx_init(struct kunit *test, struct fm_ctx *c)
{
	static const struct fake_dev_attr fattr = {
		.pi_frpl = 64, .kernel_cap_flags = IBK_INTEGRITY_HANDOVER,
	};
	struct mrkit_pool_attr ia = {
		.name = "fmi0", .depth = 2, .flags = MRKIT_POOL_INTEGRITY,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool_attr pa = {
		.name = "fm0", .depth = 4, .max_depth = 8, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};

	c->test = test;
	c->fdev = fake_dev_create(test, &fattr);
	c->pool = test_pool(test, c->fdev->pd, &pa);
	c->ipool = test_pool(test, c->fdev->pd, &ia);
	c->dbuf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	c->pbuf = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, c->dbuf && c->pbuf);
	sg_init_one(&c->dsg, c->dbuf, 4096);
	sg_init_one(&c->psg, c->pbuf, 64);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(&c->fdev->ibdev, &c->dsg, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(&c->fdev->ibdev, &c->psg, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, mrkit_pi_from_nvme(&c->pi, false, 0, 1, 512, 0,
						 0, 0xffff, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, fm_disarm_init,
							 fm_disarm_free,
							 GFP_KERNEL, c));
}

static void robust_fault_matrix_test(struct kunit *test)
{
	struct fm_site sites[FM_SITES];
	bool covered[FM_SITES] = {};
	struct fm_snap before, after;
	unsigned int o, i, nth, cases = 0, ncov = 0;
	struct fm_ctx c;
	int ret;

	fm_ctx_init(test, &c);
	fm_sites(sites);
	for (o = 0; o < ARRAY_SIZE(fm_ops); o++) {
		for (i = 0; i < FM_SITES; i++) {
			for (nth = 1; nth <= 16; nth++) {
				fm_snap(&c, &before);
				ret = fm_ops[o].op(&c, &sites[i], nth);
				if (!fm_fired(c.fdev, &sites[i])) {
					KUNIT_EXPECT_EQ_MSG(test, ret, 0,
							    "%s without a fault",
							    fm_ops[o].name);
					break;
				}
				cases++;
				covered[i] = true;
				/* A clean errno ... */
				KUNIT_EXPECT_LT_MSG(test, ret, 0,
						    "%s: %s #%u absorbed silently",
						    fm_ops[o].name,
						    sites[i].name, nth);
				KUNIT_EXPECT_NE_MSG(test, ret, FM_BROKEN,
						    "%s: %s #%u: unexpected state",
						    fm_ops[o].name,
						    sites[i].name, nth);
				/* ... and nothing leaked or left changed. */
				mrkit_pool_qp_drained(c.pool);
				mrkit_pool_qp_drained(c.ipool);
				fm_snap(&c, &after);
				KUNIT_EXPECT_EQ_MSG(test, after.mrs, before.mrs,
						    "%s: %s #%u: provider MRs",
						    fm_ops[o].name,
						    sites[i].name, nth);
				KUNIT_EXPECT_EQ_MSG(test, after.objs, before.objs,
						    "%s: %s #%u: mrkit objects",
						    fm_ops[o].name,
						    sites[i].name, nth);
				KUNIT_EXPECT_EQ(test, after.st.in_use, 0U);
				KUNIT_EXPECT_EQ(test, after.st.stale, 0U);
				KUNIT_EXPECT_EQ(test, after.ist.in_use, 0U);
				KUNIT_EXPECT_EQ(test, after.ist.stale, 0U);
				KUNIT_EXPECT_EQ(test, after.st.allocated,
						before.st.allocated);
			}
		}
	}
	for (i = 0; i < FM_SITES; i++) {
		if (covered[i])
			ncov++;
		else
			KUNIT_FAIL(test, "fault site %s has no case", sites[i].name);
	}
	kunit_info(test, "fault matrix: %u of %u sites covered, %u cases\n",
		   ncov, (unsigned int)FM_SITES, cases);
	KUNIT_EXPECT_EQ(test, ncov, (unsigned int)FM_SITES);
}

/* ---- misuse ---- */

static void robust_misuse_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_pool_stats st;
	struct mrkit_mr *mr, *other;
	struct test_io t;
	struct ib_wc wc = {};

	/* Double put and put of a live registration. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x1000,
							      PAGE_SIZE), 1, 0),
			1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	mr = t.io.mrs;
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	/* A second invalidation of the same I/O while in flight. */
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), -EINVAL);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EINVAL);	/* already free */
	/* Finished: completing again is refused, done does not run twice. */
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), -EINVAL);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);

	/*
	 * Stray completions: for the finished I/O (its chain's signaled WR,
	 * successful and flushed) and for a descriptor that is not in flight.
	 */
	wc.wr_cqe = &t.io.cqe;
	wc.status = IB_WC_SUCCESS;
	t.io.cqe.done(fdev->qp->send_cq, &wc);
	wc.status = IB_WC_WR_FLUSH_ERR;
	t.io.cqe.done(fdev->qp->send_cq, &wc);
	wc.wr_cqe = &mr->cqe;
	mr->cqe.done(fdev->qp->send_cq, &wc);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_FREE);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);

	/* The pool still hands out exactly its two descriptors. */
	mr = mrkit_mr_get(pool);
	other = mrkit_mr_get(pool);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr) || IS_ERR(other));
	KUNIT_EXPECT_PTR_NE(test, mr, other);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	mrkit_mr_put(mr);
	mrkit_mr_put(other);
}

/* ---- concurrency ---- */

struct cc_ctx {
	struct mrkit_pool *pool;
	struct kunit *test;
	unsigned long deadline;
	atomic_t errors;
	atomic_t ops;
	struct completion done[3];
};

static int cc_getput(void *arg)
{
	struct cc_ctx *cc = arg;
	struct mrkit_mr *m[3];
	int i, n;

	while (time_before(jiffies, cc->deadline)) {
		for (n = 0; n < 3; n++) {
			m[n] = mrkit_mr_get(cc->pool);
			if (IS_ERR(m[n]))
				break;
		}
		for (i = 0; i < n; i++)
			if (mrkit_mr_put(m[i]))
				atomic_inc(&cc->errors);
		atomic_inc(&cc->ops);
		cond_resched();
	}
	complete(&cc->done[0]);
	return 0;
}

static int cc_retire(void *arg)
{
	struct cc_ctx *cc = arg;
	struct mrkit_mr *m;
	unsigned long flags;

	while (time_before(jiffies, cc->deadline)) {
		/* As a CQ handler would: irqs off. */
		local_irq_save(flags);
		m = mrkit_mr_get(cc->pool);
		if (!IS_ERR(m)) {
			mrkit_mr_mark_stale(m);
			if (mrkit_mr_put(m))
				atomic_inc(&cc->errors);
		}
		local_irq_restore(flags);
		atomic_inc(&cc->ops);
		usleep_range(500, 1000);
	}
	complete(&cc->done[1]);
	return 0;
}

static int cc_map(void *arg)
{
	struct cc_ctx *cc = arg;
	struct scatterlist sg;
	struct mrkit_io io;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = 0x700000;
	sg_dma_len(&sg) = 20 * PAGE_SIZE;
	while (time_before(jiffies, cc->deadline)) {
		mrkit_io_init(&io, cc->pool, MRKIT_PEER_READS, NULL);
		n = mrkit_io_map(&io, &sg, 1, 0);
		if (n > 0 && mrkit_io_release(&io, 0))
			atomic_inc(&cc->errors);
		else if (n < 0 && n != -EAGAIN)
			atomic_inc(&cc->errors);
		atomic_inc(&cc->ops);
		cond_resched();
	}
	complete(&cc->done[2]);
	return 0;
}

static void robust_concurrency_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "cc", .depth = 4, .max_depth = 12, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	int (*fn[3])(void *) = { cc_getput, cc_retire, cc_map };
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct mrkit_pool_stats st;
	struct cc_ctx *cc;
	int i;

	cc = kunit_kzalloc(test, sizeof(*cc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cc);
	cc->pool = pool;
	cc->test = test;
	cc->deadline = jiffies + msecs_to_jiffies(300);
	for (i = 0; i < 3; i++) {
		init_completion(&cc->done[i]);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(fn[i], cc,
							    "mrkit_cc%d", i)));
	}
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&cc->done[i],
								  10 * HZ), 0UL);
	flush_workqueue(mrkit_wq);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, atomic_read(&cc->errors), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&cc->ops), 30);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_LE(test, st.allocated, 12U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), (int)st.allocated);
	KUNIT_EXPECT_GT(test, st.stale_replaced, 0ULL);
	/* Every descriptor is on the free stack exactly once. */
	for (i = 0; i < st.allocated; i++)
		KUNIT_EXPECT_FALSE(test, IS_ERR(mrkit_mr_get(pool)));
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	for (i = 0; i < st.allocated; i++)
		mrkit_mr_put(pool->descs[i]);
}

static struct kunit_case mrkit_robust_cases[] = {
	KUNIT_CASE(robust_fault_matrix_test),
	KUNIT_CASE(robust_misuse_test),
	KUNIT_CASE(robust_concurrency_test),
	{}
};

static struct kunit_suite mrkit_robust_suite = {
	.name = "mrkit_robust",
	.test_cases = mrkit_robust_cases,
};

/* ---- flush and disconnect on real devices ---- */

static int rb_qp_error(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

static void robust_rdma_flush_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 6, 2);
	struct ib_send_wr nop = { .opcode = IB_WR_SEND };
	struct mrkit_seg segs[3][4];
	struct test_io *t, *t2;
	struct mrkit_pool_stats st;
	struct mrk_pair *pair2;
	struct mrkit_mr *mr;
	u32 old_idx[6], i, k;
	struct scatterlist sg[3], sg2;
	struct mrk_wait w;
	u8 *buf[3], *b2;
	int n;

	t = kunit_kcalloc(test, 4, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t2 = &t[3];
	/* Three I/Os of two MRs each: REGs posted, rkeys exposed. */
	for (i = 0; i < 3; i++) {
		buf[i] = kunit_kzalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, buf[i]);
		sg_init_one(&sg[i], buf[i], 4 * PAGE_SIZE);
		tio_init(&t[i], pool, MRKIT_PEER_BIDI);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t[i].io, &sg[i], 1,
						   MRKIT_MAP_DMA), 2);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t[i].io, segs[i], 4), 2);
		/*
		 * The caller's WR: an unsignaled empty SEND (the peer has a
		 * receive); nothing signaled follows the REG_MRs on purpose.
		 */
		nop.send_flags = 0;
		nop.opcode = IB_WR_SEND;
		KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, SZ_512K, 64, &w),
				0);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t[i].io, pair->local.qp,
						    &nop, NULL), 0);
		KUNIT_ASSERT_EQ(test, mrk_poll(pair, &w, 5000), 0);
	}
	for (mr = NULL, k = 0, i = 0; i < 3; i++)
		for (mr = t[i].io.mrs; mr; mr = mr->io_next)
			old_idx[k++] = mr->ibmr->lkey >> 8;
	/* The peer uses one of them: they are live. */
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
					    segs[1][1].addr, segs[1][1].key, &w),
			0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	/* I/O 0's LOCAL_INVs are posted, not completed ... */
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t[0].io, pair->local.qp), 0);
	/* ... when the connection dies. */
	KUNIT_ASSERT_EQ(test, rb_qp_error(pair->local.qp), 0);
	mrk_poll(pair, NULL, 300);
	/* The others are completed on the dead QP: nothing can post. */
	for (i = 1; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, mrkit_io_complete(&t[i].io,
							pair->local.qp), 0);
		mrk_poll(pair, NULL, 100);
	}
	/*
	 * The ULP drains the QP and says so; everything comes back, and
	 * each I/O is told once its retired MRs are deregistered.
	 */
	mrk_poll(pair, NULL, 300);
	mrkit_pool_qp_drained(pool);
	flush_workqueue(mrkit_wq);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, t[i].rec.calls, 1);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, 6U);
	KUNIT_EXPECT_GT(test, st.stale_replaced, 0ULL);

	/* A new connection on the same PD: the pool serves it. */
	pair2 = mrk_pair_create_pd(test, kind, pair->local.pd);
	b2 = kunit_kzalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b2);
	sg_init_one(&sg2, b2, 4 * PAGE_SIZE);
	tio_init(t2, pool, MRKIT_PEER_BIDI);
	n = mrkit_io_map(&t2->io, &sg2, 1, MRKIT_MAP_DMA);
	KUNIT_ASSERT_EQ(test, n, 2);
	/* No descriptor whose REG or INV was flushed is handed out again. */
	for (mr = t2->io.mrs; mr; mr = mr->io_next)
		for (k = 0; k < 6; k++)
			if ((mr->ibmr->lkey >> 8) == old_idx[k] &&
			    st.stale_replaced == 6)
				KUNIT_FAIL(test, "a flushed MR came back");
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t2->io, segs[0], 4), 2);
	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair2, SZ_512K, 64, &w), 0);
	nop.send_flags = 0;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t2->io, pair2->local.qp, &nop, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair2, &w, 5000), 0);
	for (i = 0; i < 2; i++) {
		memset(pair2->pbuf, 0x61 + i, segs[0][i].length);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair2, IB_WR_RDMA_WRITE, 0,
						    segs[0][i].length,
						    segs[0][i].addr,
						    segs[0][i].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair2, IB_WR_RDMA_READ,
						    SZ_64K, segs[0][i].length,
						    segs[0][i].addr,
						    segs[0][i].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	}
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t2->io, pair2->local.qp), 0);
	KUNIT_ASSERT_EQ(test, wait_io(pair2, t2), 0);
	KUNIT_EXPECT_EQ(test, t2->rec.status, 0);
	for (i = 0; i < 4 * PAGE_SIZE; i++) {
		if (b2[i] != (i < 2 * PAGE_SIZE ? 0x61 : 0x62)) {
			KUNIT_FAIL(test, "byte %u is 0x%x", i, b2[i]);
			break;
		}
	}
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	/* (destroy runs at the end of the test, before the PD goes) */
}

static struct kunit_case mrkit_robust_rdma_cases[] = {
	KUNIT_CASE_PARAM(robust_rdma_flush_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite mrkit_robust_rdma_suite = {
	.name = "mrkit_robust_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_robust_rdma_cases,
};

kunit_test_suites(&mrkit_robust_suite, &mrkit_robust_rdma_suite);
