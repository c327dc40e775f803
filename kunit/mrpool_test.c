// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for mrkit pools.
 *
 * mrkit_pool: deterministic tests on the fake device: creation and its
 * bad-input and fault unwinding, exhaustion, growth up to the ceiling,
 * the descriptor state machine, stale replacement, destroy with
 * descriptors outstanding, mrkit_query_limits(), and get/put from atomic
 * context.  Every test ends with the fake's MR count and mrkit's object
 * count back where they started.
 *
 * mrkit_pool_rdma: pools on the real rxe and siw devices; a descriptor is
 * registered with a REG_MR, a peer writes into it by rkey and reads it
 * back, and the bytes are compared.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "mrpool/pool.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"

MODULE_IMPORT_NS(MRKIT);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* A pool destroyed when the test ends unless the test destroyed it. */
struct pool_slot {
	struct mrkit_pool *pool;
};

static int pool_slot_init(struct kunit_resource *res, void *ctx)
{
	res->data = ctx;
	return 0;
}

static void pool_slot_free(struct kunit_resource *res)
{
	struct pool_slot *slot = res->data;

	mrkit_pool_destroy(slot->pool);
	kfree(slot);
}

static struct pool_slot *pool_slot_new(struct kunit *test)
{
	struct pool_slot *slot = kzalloc(sizeof(*slot), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, slot);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, pool_slot_init,
							 pool_slot_free,
							 GFP_KERNEL, slot));
	return slot;
}

static struct mrkit_pool *pool_new(struct kunit *test, struct ib_pd *pd,
				   const struct mrkit_pool_attr *attr)
{
	struct pool_slot *slot = pool_slot_new(test);

	slot->pool = mrkit_pool_create(pd, attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slot->pool);
	return slot->pool;
}

static void pool_quiesce(void)
{
	flush_workqueue(mrkit_wq);
}

static struct mrkit_pool_stats pool_stats(struct mrkit_pool *pool)
{
	struct mrkit_pool_stats st;

	mrkit_pool_get_stats(pool, &st);
	return st;
}

static struct fake_dev *fake_default(struct kunit *test)
{
	static const struct fake_dev_attr attr = {};

	return fake_dev_create(test, &attr);
}

static void pool_create_default_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "t0", .depth = 16, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_pool_stats st = pool_stats(pool);

	KUNIT_EXPECT_EQ(test, st.allocated, 16U);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.max_depth, 16U);
	/* rxe-like defaults: frpl 512 but max_sge_rd 32 > 16: the quirk. */
	KUNIT_EXPECT_EQ(test, st.pages_per_mr, 32U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 16);
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_ALLOC_MR], 16U);
	KUNIT_EXPECT_STREQ(test, mrkit_pool_name(pool), "t0");
	KUNIT_EXPECT_EQ(test, pool->mr_type, IB_MR_TYPE_MEM_REG);
}

struct bad_attr_case {
	const char *name;
	struct fake_dev_attr dev;
	struct mrkit_pool_attr attr;
	int err;
};

static const struct bad_attr_case bad_attr_cases[] = {
	{ "no_name", {}, { .name = NULL, .depth = 4 }, -EINVAL },
	{ "empty_name", {}, { .name = "", .depth = 4 }, -EINVAL },
	{ "zero_depth", {}, { .name = "p", .depth = 0 }, -EINVAL },
	{ "depth_above_max", {}, { .name = "p", .depth = 8, .max_depth = 4 },
	  -EINVAL },
	{ "max_depth_too_big", {},
	  { .name = "p", .depth = 4, .max_depth = MRKIT_MAX_DEPTH + 1 },
	  -EINVAL },
	{ "depth_too_big", {}, { .name = "p", .depth = MRKIT_MAX_DEPTH + 1 },
	  -EINVAL },
	{ "pages_above_device", { .frpl = 64 },
	  { .name = "p", .depth = 4, .pages_per_mr = 65 }, -EINVAL },
	{ "no_mem_mgt_ext", { .no_defaults = true, .frpl = 64 },
	  { .name = "p", .depth = 4 }, -EOPNOTSUPP },
	{ "no_frpl", { .no_defaults = true,
		       .device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS },
	  { .name = "p", .depth = 4 }, -EOPNOTSUPP },
	{ "integrity_no_handover", {},
	  { .name = "p", .depth = 4, .flags = MRKIT_POOL_INTEGRITY },
	  -EOPNOTSUPP },
	{ "integrity_meta_too_big",
	  { .pi_frpl = 16, .kernel_cap_flags = IBK_INTEGRITY_HANDOVER },
	  { .name = "p", .depth = 4, .flags = MRKIT_POOL_INTEGRITY,
	    .meta_pages = 17 }, -EINVAL },
};

static void bad_attr_desc(const struct bad_attr_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_attr, bad_attr_cases, bad_attr_desc);

static void pool_bad_attr_test(struct kunit *test)
{
	const struct bad_attr_case *c = test->param_value;
	int objs = atomic_read(&mrkit_live_objects);
	struct mrkit_pool_attr attr = c->attr;
	struct fake_dev *fdev = fake_dev_create(test, &c->dev);
	struct mrkit_pool *pool;

	attr.node = NUMA_NO_NODE;
	pool = mrkit_pool_create(fdev->pd, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(pool), c->err);
	if (!IS_ERR(pool))
		mrkit_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_ALLOC_MR], 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
}

#ifdef CONFIG_FAULT_INJECTION
static void fault_disarm_action(struct kunit_resource *res)
{
	mrk_fault_disarm();
}

static int fault_arm_action(struct kunit_resource *res, void *ctx)
{
	res->data = ctx;
	return 0;
}

/* Fail the @nth next call of @site; NR_SITES disarms.  Disarmed at exit. */
static void fault_arm(struct kunit *test, enum mrkit_fault_site site,
		      unsigned int nth)
{
	if (site == MRKIT_FAULT_NR_SITES) {
		mrk_fault_disarm();
		return;
	}
	mrk_fault_arm(site, nth);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, fault_arm_action,
							 fault_disarm_action,
							 GFP_KERNEL, test));
}

static void pool_create_fault_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "fault", .depth = 5, .node = NUMA_NO_NODE,
	};
	int objs = atomic_read(&mrkit_live_objects);
	struct mrkit_pool *pool;
	unsigned int n, site, cases = 0;

	/* Every allocation site mrkit has, at every occurrence in create. */
	for (site = 0; site < MRKIT_FAULT_NR_SITES; site++) {
		for (n = 1; n <= attr.depth; n++) {
			fault_arm(test, site, n);
			pool = mrkit_pool_create(fdev->pd, &attr);
			if (!mrk_fault_fired(site)) {
				/* fewer occurrences than n: it must succeed */
				KUNIT_EXPECT_FALSE(test, IS_ERR(pool));
				mrkit_pool_destroy(pool);
				break;
			}
			cases++;
			KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(pool), -ENOMEM);
			KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
			KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects),
					objs);
		}
	}
	fault_arm(test, MRKIT_FAULT_NR_SITES, 0);
	/*
	 * The pool and its counters, the slots, and 5 descriptors each
	 * allocated, given an MR and indexed.
	 */
	KUNIT_EXPECT_EQ(test, cases, 3 + 3 * attr.depth);

	/* The provider's MR allocation, at every descriptor. */
	for (n = 1; n <= attr.depth; n++) {
		fake_fail_nth(fdev, FAKE_OP_ALLOC_MR, n, -ENOSPC);
		pool = mrkit_pool_create(fdev->pd, &attr);
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(pool), -ENOSPC);
		KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
	}
	fake_fail_clear(fdev);
	/* Every MR allocated was deregistered exactly once. */
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_ALLOC_MR],
			fdev->calls[FAKE_OP_DEREG_MR] + n - 1);
}

#endif /* CONFIG_FAULT_INJECTION */

static void pool_exhaustion_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "ex", .depth = 4, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr[4], *extra;
	struct mrkit_pool_stats st;
	int i;

	for (i = 0; i < 4; i++) {
		mr[i] = mrkit_mr_get(pool);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr[i]);
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr[i]), MRKIT_MR_RESERVED);
	}
	/* All distinct. */
	KUNIT_EXPECT_PTR_NE(test, mr[0], mr[1]);
	KUNIT_EXPECT_PTR_NE(test, mr[2], mr[3]);
	extra = mrkit_mr_get(pool);
	KUNIT_EXPECT_EQ(test, PTR_ERR(extra), -EAGAIN);
	extra = mrkit_mr_get(pool);
	KUNIT_EXPECT_EQ(test, PTR_ERR(extra), -EAGAIN);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.exhausted, 2ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 4U);
	KUNIT_EXPECT_EQ(test, st.high_water, 4U);
	KUNIT_EXPECT_EQ(test, st.allocated, 4U);	/* no growth: max = depth */
	KUNIT_EXPECT_EQ(test, mrkit_pool_wait(pool, 1), -ETIMEDOUT);

	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[2]), 0);
	KUNIT_EXPECT_EQ(test, mrkit_pool_wait(pool, 1), 0);
	/* LIFO: the descriptor just put comes back first. */
	extra = mrkit_mr_get(pool);
	KUNIT_EXPECT_PTR_EQ(test, extra, mr[2]);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[i]), 0);
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.high_water, 4U);
}

struct pool_waiter {
	struct work_struct	work;
	struct mrkit_pool	*pool;
	unsigned long		slept;	/* jiffies */
	int			ret;
};

static void pool_waiter_fn(struct work_struct *work)
{
	struct pool_waiter *w = container_of(work, struct pool_waiter, work);
	unsigned long start = jiffies;

	w->ret = mrkit_pool_wait(w->pool, 3 * HZ);
	w->slept = jiffies - start;
}

/*
 * A sleeper woken by a put whose descriptor another getter took first
 * sleeps again, and the next put wakes it: it does not sleep out its
 * timeout.
 */
static void pool_wait_rewake_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "rewake", .depth = 1, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct pool_waiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct mrkit_mr *mr = mrkit_mr_get(pool);

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	w->pool = pool;
	w->ret = 1;
	INIT_WORK(&w->work, pool_waiter_fn);
	queue_work(system_unbound_wq, &w->work);
	msleep(50);			/* asleep on the empty pool */
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	mr = mrkit_mr_get(pool);	/* before the sleeper looks */
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	msleep(50);			/* it looked, found none, sleeps */
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	flush_work(&w->work);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_LT_MSG(test, w->slept, (unsigned long)HZ,
			    "the waiter slept %u ms", jiffies_to_msecs(w->slept));
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * A get that read the free count before other gets took descriptors and
 * one was retired records a high-water mark within the pool, not a count
 * that wrapped below zero.
 */
static void pool_high_water_race_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "hw", .depth = 4, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *a = mrkit_mr_get(pool), *b = mrkit_mr_get(pool);
	struct mrkit_pool_stats st;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	mrkit_mr_mark_stale(b);
	mrkit_pool_new_low(pool, 4);	/* read before both gets */
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.high_water, 2U);
	KUNIT_EXPECT_LE(test, st.in_use, st.allocated);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(a), 0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(b), 0);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.high_water, 2U);
}

static void notify_cb(struct mrkit_pool *pool, void *ctx)
{
	(*(int *)ctx)++;
}

static void pool_notify_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "nt", .depth = 2, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *a, *b;
	int calls = 0;

	mrkit_pool_set_notify(pool, notify_cb, &calls);
	a = mrkit_mr_get(pool);
	b = mrkit_mr_get(pool);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a) || IS_ERR(b));
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(a), 0);
	KUNIT_EXPECT_EQ(test, calls, 0);	/* nobody was starved */
	a = mrkit_mr_get(pool);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(a), 0);
	KUNIT_EXPECT_EQ(test, calls, 1);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(b), 0);
	KUNIT_EXPECT_EQ(test, calls, 1);	/* once per starvation */
	mrkit_pool_set_notify(pool, NULL, NULL);
}

static void pool_growth_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "grow", .depth = 4, .max_depth = 10,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr[10];
	struct mrkit_pool_stats st;
	int i, n = 0;

	/* Take everything, letting growth run each time we run dry. */
	while (n < 10) {
		struct mrkit_mr *m = mrkit_mr_get(pool);

		if (IS_ERR(m)) {
			KUNIT_ASSERT_EQ(test, PTR_ERR(m), -EAGAIN);
			pool_quiesce();
			continue;
		}
		mr[n++] = m;
		KUNIT_ASSERT_LE(test, n, 10);
	}
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.allocated, 10U);
	KUNIT_EXPECT_EQ(test, st.grown, 6U);	/* +4, then +2 to the ceiling */
	KUNIT_EXPECT_EQ(test, st.exhausted, 2ULL);
	KUNIT_EXPECT_EQ(test, st.high_water, 10U);

	/* At the ceiling: exhaustion does not grow. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.allocated, 10U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 10);

	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[i]), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).in_use, 0U);
}

#ifdef CONFIG_FAULT_INJECTION
static void pool_growth_fault_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "growf", .depth = 3, .max_depth = 6,
		.node = NUMA_NO_NODE,
	};
	int objs = atomic_read(&mrkit_live_objects);
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr[6];
	unsigned int step;
	int i;

	for (i = 0; i < 3; i++)
		mr[i] = mrkit_mr_get(pool);

	/* Fail each of the three allocations growth makes, then succeed. */
	for (step = 1; step <= 3; step++) {
		fake_fail_nth(fdev, FAKE_OP_ALLOC_MR, step, -ENOMEM);
		KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
		pool_quiesce();
		KUNIT_EXPECT_EQ(test, pool_stats(pool).allocated, 3U);
		KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 3);
	}
	for (step = 1; step <= 3; step++) {
		fault_arm(test, MRKIT_FAULT_DESC_ALLOC, step);
		KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
		pool_quiesce();
		KUNIT_EXPECT_TRUE(test, mrk_fault_fired(MRKIT_FAULT_DESC_ALLOC));
		KUNIT_EXPECT_EQ(test, pool_stats(pool).allocated, 3U);
		KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 3);
	}
	fault_arm(test, MRKIT_FAULT_NR_SITES, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	pool_quiesce();
	KUNIT_EXPECT_EQ(test, pool_stats(pool).allocated, 6U);
	for (i = 3; i < 6; i++) {
		mr[i] = mrkit_mr_get(pool);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr[i]);
	}
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[i]), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).grown, 3U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 6);
	/* pool + descs + 6 descriptors */
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs + 8);
}
#endif

struct transition_case {
	const char *name;
	enum mrkit_mr_state path[6];	/* states to walk through, from RESERVED */
	int npath;
	enum mrkit_mr_state from, to;	/* then this one is tried */
	int err;
};

static const struct transition_case transition_cases[] = {
	{ "reserved_to_mapped", {}, 0, MRKIT_MR_RESERVED, MRKIT_MR_MAPPED, 0 },
	{ "reserved_to_registered", {}, 0,
	  MRKIT_MR_RESERVED, MRKIT_MR_REGISTERED, -EINVAL },
	{ "reserved_to_invalidating", {}, 0,
	  MRKIT_MR_RESERVED, MRKIT_MR_INVALIDATING, -EINVAL },
	{ "reserved_to_free", {}, 0, MRKIT_MR_RESERVED, MRKIT_MR_FREE, -EINVAL },
	{ "mapped_to_registered", { MRKIT_MR_MAPPED }, 1,
	  MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED, 0 },
	{ "mapped_to_invalidating", { MRKIT_MR_MAPPED }, 1,
	  MRKIT_MR_MAPPED, MRKIT_MR_INVALIDATING, -EINVAL },
	{ "wrong_from", { MRKIT_MR_MAPPED }, 1,
	  MRKIT_MR_REGISTERED, MRKIT_MR_INVALIDATING, -EINVAL },
	{ "registered_to_invalidating",
	  { MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED }, 2,
	  MRKIT_MR_REGISTERED, MRKIT_MR_INVALIDATING, 0 },
	{ "registered_to_free", { MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED }, 2,
	  MRKIT_MR_REGISTERED, MRKIT_MR_FREE, -EINVAL },
	{ "invalidating_to_reserved",
	  { MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED, MRKIT_MR_INVALIDATING }, 3,
	  MRKIT_MR_INVALIDATING, MRKIT_MR_RESERVED, 0 },
	{ "invalidating_to_mapped",
	  { MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED, MRKIT_MR_INVALIDATING }, 3,
	  MRKIT_MR_INVALIDATING, MRKIT_MR_MAPPED, -EINVAL },
	{ "stale_to_reserved", { MRKIT_MR_STALE }, 1,
	  MRKIT_MR_STALE, MRKIT_MR_RESERVED, -EINVAL },
	{ "stale_to_mapped", { MRKIT_MR_STALE }, 1,
	  MRKIT_MR_STALE, MRKIT_MR_MAPPED, -EINVAL },
	{ "to_retiring", {}, 0, MRKIT_MR_RESERVED, MRKIT_MR_RETIRING, -EINVAL },
	{ "out_of_range", {}, 0, MRKIT_MR_RESERVED, MRKIT_MR_NR_STATES,
	  -EINVAL },
};

static void transition_desc(const struct transition_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(transition, transition_cases, transition_desc);

static void pool_state_machine_test(struct kunit *test)
{
	const struct transition_case *c = test->param_value;
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "sm", .depth = 2, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr = mrkit_mr_get(pool);
	enum mrkit_mr_state cur = MRKIT_MR_RESERVED, before;
	int i, ret;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	for (i = 0; i < c->npath; i++) {
		KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, cur, c->path[i]),
				0);
		cur = c->path[i];
	}
	before = mrkit_mr_state(mr);
	ret = mrkit_mr_transition(mr, c->from, c->to);
	KUNIT_EXPECT_EQ(test, ret, c->err);
	/* A refused transition changes nothing. */
	if (ret)
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), before);
	else
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), c->to);

	/* Bring it home: whatever state it is in, it must end free. */
	switch (mrkit_mr_state(mr)) {
	case MRKIT_MR_REGISTERED:
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EBUSY);
		ret = mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					  MRKIT_MR_INVALIDATING);
		KUNIT_EXPECT_EQ(test, ret, 0);
		fallthrough;
	case MRKIT_MR_INVALIDATING:
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EBUSY);
		ret = mrkit_mr_transition(mr, MRKIT_MR_INVALIDATING,
					  MRKIT_MR_RESERVED);
		KUNIT_EXPECT_EQ(test, ret, 0);
		break;
	default:
		break;
	}
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	pool_quiesce();
	/* Double put: refused, and the pool is not corrupted. */
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EINVAL);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).in_use, 0U);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).stale, 0U);
	{
		struct mrkit_mr *a = mrkit_mr_get(pool);
		struct mrkit_mr *b = mrkit_mr_get(pool);

		KUNIT_EXPECT_FALSE(test, IS_ERR(a) || IS_ERR(b));
		KUNIT_EXPECT_PTR_NE(test, a, b);
		KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
		mrkit_mr_put(a);
		mrkit_mr_put(b);
	}
}

/* A descriptor of @pool taken and walked to REGISTERED, as a post leaves it. */
static struct mrkit_mr *registered_mr(struct kunit *test,
				      struct mrkit_pool *pool)
{
	struct mrkit_mr *mr = mrkit_mr_get(pool);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_RESERVED,
						  MRKIT_MR_MAPPED), 0);
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_MAPPED,
						  MRKIT_MR_REGISTERED), 0);
	return mr;
}

/*
 * A failed WR's completion retires a descriptor only while it holds the
 * registration (REGISTERED or INVALIDATING): one taken by a new owner
 * (RESERVED, MAPPED) or given back (FREE) meanwhile keeps its state, and
 * the stale count stays exact.
 */
static void pool_stale_live_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "live", .depth = 2, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	static const int owned[] = { MRKIT_MR_RESERVED, MRKIT_MR_MAPPED };
	struct mrkit_mr *mr = mrkit_mr_get(pool), *other;
	struct mrkit_pool_stats st;
	int found, i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	for (i = 0; i < ARRAY_SIZE(owned); i++) {
		if (i)
			KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, owned[i - 1],
								  owned[i]), 0);
		found = -1;
		KUNIT_EXPECT_FALSE(test, mrkit_mr_mark_stale_live(mr, &found));
		KUNIT_EXPECT_EQ(test, found, owned[i]);
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), owned[i]);
	}
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_MAPPED,
						  MRKIT_MR_REGISTERED), 0);
	KUNIT_EXPECT_TRUE(test, mrkit_mr_mark_stale_live(mr, &found));
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_STALE);
	KUNIT_EXPECT_FALSE(test, mrkit_mr_mark_stale_live(mr, &found));
	KUNIT_EXPECT_EQ(test, found, MRKIT_MR_STALE);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).stale, 1U);

	other = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, other);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(other), 0);
	KUNIT_EXPECT_FALSE(test, mrkit_mr_mark_stale_live(other, &found));
	KUNIT_EXPECT_EQ(test, found, MRKIT_MR_FREE);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(other), MRKIT_MR_FREE);

	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.allocated, 2U);
}

/*
 * Once the pool's work ran: one stale descriptor was retired and replaced,
 * its MR deregistered (one more than @dereg).  Returns the stats.
 */
static struct mrkit_pool_stats expect_replaced(struct kunit *test,
					       struct fake_dev *fdev,
					       struct mrkit_pool *pool,
					       unsigned int dereg)
{
	struct mrkit_pool_stats st;

	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_DEREG_MR], dereg + 1);
	return st;
}

static void pool_stale_replaced_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "stale", .depth = 3, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr, *seen[3];
	struct mrkit_pool_stats st;
	u32 old_key;
	unsigned int dereg;
	int i;

	mr = registered_mr(test, pool);
	old_key = mr->ibmr->lkey;
	dereg = fdev->calls[FAKE_OP_DEREG_MR];

	/* A flushed LOCAL_INV: the completion handler marks it stale. */
	mrkit_mr_mark_stale(mr);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_STALE);
	mrkit_mr_mark_stale(mr);	/* a second flush is harmless */
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.stale, 1U);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);

	/* While stale it is never handed out. */
	for (i = 0; i < 2; i++) {
		seen[i] = mrkit_mr_get(pool);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen[i]);
		KUNIT_EXPECT_PTR_NE(test, seen[i], mr);
	}
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);

	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), -EINVAL);	/* double put */
	st = expect_replaced(test, fdev, pool, dereg);
	KUNIT_EXPECT_EQ(test, st.allocated, 3U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 3);

	/* The slot comes back with a fresh MR. */
	seen[2] = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen[2]);
	KUNIT_EXPECT_PTR_EQ(test, seen[2], mr);
	/* (the fake numbers its MRs: a new MR has a new key index) */
	KUNIT_EXPECT_NE(test, seen[2]->ibmr->lkey >> 8, old_key >> 8);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, mrkit_mr_put(seen[i]), 0);

	/* A replacement that cannot be allocated leaves the slot retired. */
	mr = mrkit_mr_get(pool);
	mrkit_mr_mark_stale(mr);
	fake_fail_nth(fdev, FAKE_OP_ALLOC_MR, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.stale, 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 2);
	/* Destroy frees the retired slot as well. */
}

/*
 * A lazy give-back does not wait for the descriptor's WRs: a flush that
 * marks it STALE between the owner's look (REGISTERED) and its put has
 * the put retire it - replaced in the background, counted, never lost
 * (a lost one would be out of every list, and destroy would wait for it
 * forever).
 */
static void pool_put_valid_stale_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "pvs", .depth = 2, .node = NUMA_NO_NODE,
	};
	/* (test_pool(): a lost descriptor fails the test, not hangs it) */
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	unsigned int dereg = fdev->calls[FAKE_OP_DEREG_MR];
	struct mrkit_mr *mr;

	mr = registered_mr(test, pool);
	/* The flush comes first. */
	mrkit_mr_mark_stale(mr);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put_valid(mr), 0);
	KUNIT_EXPECT_EQ(test, expect_replaced(test, fdev, pool, dereg).in_use,
			0U);

	/* A free descriptor is still refused. */
	mr = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put_valid(mr), -EINVAL);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).in_use, 0U);
}

/*
 * The owner's plain-store changes check what they assume: a state other
 * than the expected one, or a change the state machine does not have, is
 * refused and leaves the descriptor alone; a put of a descriptor that is
 * not RESERVED takes mrkit_mr_put()'s way (a stale one is retired, not
 * handed out again).
 */
static void pool_own_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "own", .depth = 2, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr, *other;
	struct mrkit_pool_stats st;

	mr = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	/* Not in the expected state, and not a change of the machine. */
	KUNIT_EXPECT_EQ(test, mrkit_mr_own(mr, MRKIT_MR_MAPPED,
					   MRKIT_MR_REGISTERED), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_mr_own(mr, MRKIT_MR_RESERVED,
					   MRKIT_MR_INVALIDATING), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_RESERVED);
	KUNIT_EXPECT_EQ(test, mrkit_mr_own(mr, MRKIT_MR_RESERVED,
					   MRKIT_MR_MAPPED), 0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_MAPPED);
	/* A stale mark is never overwritten. */
	mrkit_mr_mark_stale(mr);
	KUNIT_EXPECT_EQ(test, mrkit_mr_own(mr, MRKIT_MR_MAPPED,
					   MRKIT_MR_REGISTERED), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_STALE);
	/* put_own of a stale descriptor retires it. */
	KUNIT_EXPECT_EQ(test, mrkit_mr_put_own(mr), 0);
	pool_quiesce();
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	/* put_own of a RESERVED one frees it; a second put is refused. */
	other = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, other);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put_own(other), 0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(other), MRKIT_MR_FREE);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put_own(other), -EINVAL);
	st = pool_stats(pool);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
}

/* Puts of two descriptors, a while after being queued. */
struct late_puts {
	struct delayed_work	work;
	struct mrkit_mr		*a, *b;
	int			ra, rb;
	bool			done;
};

static void late_puts_fn(struct work_struct *work)
{
	struct late_puts *l = container_of(to_delayed_work(work),
					   struct late_puts, work);

	l->ra = mrkit_mr_put(l->a);
	l->rb = mrkit_mr_put(l->b);
	WRITE_ONCE(l->done, true);
}

/*
 * Destroy with a reserved and a stale descriptor out: it deregisters the
 * free MRs, waits for the two puts from another context, deregisters
 * their MRs and frees everything before it returns.
 */
static void pool_destroy_outstanding_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "dout", .depth = 4, .node = NUMA_NO_NODE,
	};
	int objs = atomic_read(&mrkit_live_objects);
	struct late_puts *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct mrkit_pool *pool;

	KUNIT_ASSERT_NOT_NULL(test, l);
	pool = mrkit_pool_create(fdev->pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	l->a = mrkit_mr_get(pool);
	l->b = mrkit_mr_get(pool);
	KUNIT_ASSERT_FALSE(test, IS_ERR(l->a) || IS_ERR(l->b));
	mrkit_mr_mark_stale(l->b);

	INIT_DELAYED_WORK(&l->work, late_puts_fn);
	queue_delayed_work(system_unbound_wq, &l->work, msecs_to_jiffies(100));
	mrkit_pool_destroy(pool);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(l->done));
	flush_delayed_work(&l->work);
	KUNIT_EXPECT_EQ(test, l->ra, 0);
	KUNIT_EXPECT_EQ(test, l->rb, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mrkit_live_objects), objs);
	KUNIT_EXPECT_EQ(test, fdev->calls[FAKE_OP_DEREG_MR], 4U);
}

static void pool_atomic_context_test(struct kunit *test)
{
	struct fake_dev *fdev = fake_default(test);
	struct mrkit_pool_attr attr = {
		.name = "atomic", .depth = 2, .max_depth = 4,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);
	struct mrkit_mr *mr[3];
	unsigned long flags;

	/* As from a softirq CQ handler ... */
	local_bh_disable();
	mr[0] = mrkit_mr_get(pool);
	mr[1] = mrkit_mr_get(pool);
	mr[2] = mrkit_mr_get(pool);	/* empty: queues growth, never sleeps */
	local_bh_enable();
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr[0]) || IS_ERR(mr[1]));
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr[2]), -EAGAIN);

	/* ... and with interrupts off. */
	local_irq_save(flags);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[0]), 0);
	mr[0] = mrkit_mr_get(pool);
	mrkit_mr_mark_stale(mr[1]);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[1]), 0);
	local_irq_restore(flags);
	KUNIT_EXPECT_FALSE(test, IS_ERR(mr[0]));

	pool_quiesce();
	KUNIT_EXPECT_EQ(test, pool_stats(pool).allocated, 4U);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).stale_replaced, 1ULL);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr[0]), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(pool).in_use, 0U);
}

struct limits_case {
	const char *name;
	struct fake_dev_attr dev;
	struct mrkit_io_shape shape;
	int err;
	struct mrkit_limits lim;
};

static const struct limits_case limits_cases[] = {
	/* rxe: frpl 512, max_sge_rd 32 -> 32-page MRs (xprtrdma quirk) */
	{ "rxe_1M", { .frpl = 512, .max_sge_rd = 32 },
	  { .max_io_bytes = SZ_1M, .extra_wrs = 1 }, 0,
	  { IB_MR_TYPE_MEM_REG, 32, 9, 19 } },
	/* siw: frpl 256, max_sge_rd 1 -> 256-page MRs */
	{ "siw_1M", { .frpl = 256, .max_sge_rd = 1 },
	  { .max_io_bytes = SZ_1M, .extra_wrs = 1 }, 0,
	  { IB_MR_TYPE_MEM_REG, 256, 2, 5 } },
	{ "siw_4k", { .frpl = 256, .max_sge_rd = 1 },
	  { .max_io_bytes = SZ_4K, .extra_wrs = 2 }, 0,
	  { IB_MR_TYPE_MEM_REG, 256, 1, 4 } },
	{ "siw_1M_gaps", { .frpl = 256, .max_sge_rd = 1 },
	  { .max_io_bytes = SZ_1M, .max_gaps = 3 }, 0,
	  { IB_MR_TYPE_MEM_REG, 256, 5, 10 } },
	/* mlx5-like: huge frpl, max_sge_rd 30, SG_GAPS */
	{ "mlx5_sg_gaps", { .frpl = 1 << 20, .max_sge_rd = 30,
			    .kernel_cap_flags = IBK_SG_GAPS_REG },
	  { .max_io_bytes = SZ_1M, .max_gaps = 3,
	    .flags = MRKIT_POOL_SG_GAPS }, 0,
	  { IB_MR_TYPE_SG_GAPS, 30, 9, 18 } },
	{ "mlx5_gaps_not_allowed", { .frpl = 1 << 20, .max_sge_rd = 30,
				     .kernel_cap_flags = IBK_SG_GAPS_REG },
	  { .max_io_bytes = SZ_1M, .max_gaps = 3 }, 0,
	  { IB_MR_TYPE_MEM_REG, 30, 12, 24 } },
	/* no quirk, capped at MRKIT_MAX_PAGES_PER_MR */
	{ "big_frpl_capped", { .frpl = 4096, .max_sge_rd = 4 },
	  { .max_io_bytes = SZ_2M }, 0,
	  { IB_MR_TYPE_MEM_REG, 256, 3, 6 } },
	{ "explicit_pages", { .frpl = 512, .max_sge_rd = 32 },
	  { .max_io_bytes = SZ_64K, .pages_per_mr = 4 }, 0,
	  { IB_MR_TYPE_MEM_REG, 4, 5, 10 } },
	{ "integrity", { .frpl = 512, .pi_frpl = 128, .max_sge_rd = 1,
			 .kernel_cap_flags = IBK_INTEGRITY_HANDOVER },
	  { .max_io_bytes = SZ_256K, .extra_wrs = 1,
	    .flags = MRKIT_POOL_INTEGRITY }, 0,
	  { IB_MR_TYPE_INTEGRITY, 128, 1, 3 } },
	{ "zero_io", {}, { .max_io_bytes = 0 }, -EINVAL },
	{ "pages_too_many", { .frpl = 256, .max_sge_rd = 1 },
	  { .max_io_bytes = SZ_4K, .pages_per_mr = 257 }, -EINVAL },
	{ "no_frwr", { .no_defaults = true, .frpl = 256 },
	  { .max_io_bytes = SZ_4K }, -EOPNOTSUPP },
	{ "integrity_unsupported", { .frpl = 256 },
	  { .max_io_bytes = SZ_4K, .flags = MRKIT_POOL_INTEGRITY },
	  -EOPNOTSUPP },
	/* Counts that do not fit a u32 are refused, never wrapped. */
	{ "gaps_overflow", { .frpl = 256 },
	  { .max_io_bytes = SZ_4K, .max_gaps = U32_MAX }, -EOVERFLOW },
	{ "lazy_gaps_overflow", { .frpl = 256 },
	  { .max_io_bytes = SZ_4K, .max_gaps = U32_MAX / 3,
	    .flags = MRKIT_POOL_LAZY_INV }, -EOVERFLOW },
	{ "extra_wrs_overflow", { .frpl = 256 },
	  { .max_io_bytes = SZ_4K, .extra_wrs = U32_MAX }, -EOVERFLOW },
	{ "largest_io", { .frpl = 256, .max_sge_rd = 1 },
	  { .max_io_bytes = U32_MAX, .pages_per_mr = 256,
	    .map_flags = MRKIT_MAP_4K }, 0,
	  { IB_MR_TYPE_MEM_REG, 256, 4097, 8194 } },
};

static void limits_desc(const struct limits_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(limits, limits_cases, limits_desc);

static void pool_limits_test(struct kunit *test)
{
	const struct limits_case *c = test->param_value;
	struct fake_dev *fdev = fake_dev_create(test, &c->dev);
	struct mrkit_limits lim = {};
	int ret;

	ret = mrkit_query_limits(&fdev->ibdev, &c->shape, &lim);
	KUNIT_ASSERT_EQ(test, ret, c->err);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, lim.mr_type, c->lim.mr_type);
	KUNIT_EXPECT_EQ(test, lim.pages_per_mr, c->lim.pages_per_mr);
	KUNIT_EXPECT_EQ(test, lim.mrs_per_io, c->lim.mrs_per_io);
	KUNIT_EXPECT_EQ(test, lim.wrs_per_io, c->lim.wrs_per_io);

	/* A pool created from the same shape uses the same page count. */
	if (c->lim.mr_type != IB_MR_TYPE_INTEGRITY) {
		struct mrkit_pool_attr attr = {
			.name = "lim", .depth = 1, .node = NUMA_NO_NODE,
			.pages_per_mr = c->shape.pages_per_mr,
			.flags = c->shape.flags,
		};
		struct mrkit_pool *pool = pool_new(test, fdev->pd, &attr);

		KUNIT_EXPECT_EQ(test, pool->pages_per_mr, lim.pages_per_mr);
		KUNIT_EXPECT_EQ(test, pool->mr_type, lim.mr_type);
	}
}

static struct kunit_case mrkit_pool_cases[] = {
	KUNIT_CASE(pool_create_default_test),
	KUNIT_CASE_PARAM(pool_bad_attr_test, bad_attr_gen_params),
#ifdef CONFIG_FAULT_INJECTION
	KUNIT_CASE(pool_create_fault_test),
#endif
	KUNIT_CASE(pool_exhaustion_test),
	KUNIT_CASE(pool_wait_rewake_test),
	KUNIT_CASE(pool_high_water_race_test),
	KUNIT_CASE(pool_notify_test),
	KUNIT_CASE(pool_growth_test),
#ifdef CONFIG_FAULT_INJECTION
	KUNIT_CASE(pool_growth_fault_test),
#endif
	KUNIT_CASE_PARAM(pool_state_machine_test, transition_gen_params),
	KUNIT_CASE(pool_stale_replaced_test),
	KUNIT_CASE(pool_stale_live_test),
	KUNIT_CASE(pool_put_valid_stale_test),
	KUNIT_CASE(pool_own_test),
	KUNIT_CASE(pool_destroy_outstanding_test),
	KUNIT_CASE(pool_atomic_context_test),
	KUNIT_CASE_PARAM(pool_limits_test, limits_gen_params),
	{}
};

static struct kunit_suite mrkit_pool_suite = {
	.name = "mrkit_pool",
	.test_cases = mrkit_pool_cases,
};

/* ---- real devices ---- */

static void pool_rdma_sized_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct ib_device *dev;
	struct mrkit_io_shape shape = { .max_io_bytes = SZ_1M, .extra_wrs = 1 };
	struct mrkit_pool_attr attr = {
		.name = "real", .depth = 8, .max_depth = 32,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_limits lim;
	struct mrkit_pool *pool;
	struct ib_pd *pd;

	KUNIT_ASSERT_EQ(test, mrk_devices_setup(), 0);
	dev = mrk_device(kind);
	KUNIT_ASSERT_EQ(test, mrkit_query_limits(dev, &shape, &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.pages_per_mr, kind == MRK_RXE ? 32U : 256U);
	KUNIT_EXPECT_EQ(test, lim.mrs_per_io, kind == MRK_RXE ? 9U : 2U);

	pd = ib_alloc_pd(dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	pool = mrkit_pool_create(pd, &attr);
	KUNIT_EXPECT_FALSE(test, IS_ERR(pool));
	if (!IS_ERR(pool)) {
		KUNIT_EXPECT_EQ(test, pool->pages_per_mr, lim.pages_per_mr);
		KUNIT_EXPECT_EQ(test, pool_stats(pool).allocated, 8U);
		mrkit_pool_destroy(pool);
	}
	/* No SG_GAPS on soft devices: asking for it falls back to MEM_REG. */
	attr.flags = MRKIT_POOL_SG_GAPS;
	pool = mrkit_pool_create(pd, &attr);
	KUNIT_EXPECT_FALSE(test, IS_ERR(pool));
	if (!IS_ERR(pool)) {
		KUNIT_EXPECT_EQ(test, pool->mr_type, IB_MR_TYPE_MEM_REG);
		mrkit_pool_destroy(pool);
	}
	ib_dealloc_pd(pd);
}

/*
 * Register one pool descriptor over a multi-page buffer by hand (the frwr
 * suites do it through mrkit), let the peer write a pattern into it and
 * read it back, compare, then invalidate and prove the rkey dead.
 */
static void pool_rdma_peer_write_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool_attr attr = {
		.name = "rw", .depth = 4, .node = NUMA_NO_NODE,
	};
	const u32 len = 3 * PAGE_SIZE + 1000;
	struct mrkit_pool *pool = pool_new(test, pair->local.pd, &attr);
	struct mrk_wait reg_done, inv_done, w;
	struct ib_reg_wr reg = {};
	struct ib_send_wr inv = {};
	struct scatterlist sg;
	struct mrkit_mr *mr;
	u64 dma, iova;
	u8 *buf, *pb;
	u32 rkey, i;
	int n;

	buf = kunit_kzalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	dma = ib_dma_map_single(pair->dev, buf, 4 * PAGE_SIZE,
				DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(pair->dev, dma));
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = dma;
	sg_dma_len(&sg) = len;

	mr = mrkit_mr_get(pool);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	n = ib_map_mr_sg(mr->ibmr, &sg, 1, NULL, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_RESERVED,
						  MRKIT_MR_MAPPED), 0);
	ib_update_fast_reg_key(mr->ibmr, ib_inc_rkey(mr->ibmr->rkey));
	rkey = mr->ibmr->rkey;
	iova = mr->ibmr->iova;
	KUNIT_EXPECT_EQ(test, mr->ibmr->length, (u64)len);

	mrk_wait_init(&reg_done);
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &reg_done.cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = mr->ibmr;
	reg.key = rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_MAPPED,
						  MRKIT_MR_REGISTERED), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(pair->local.qp, &reg.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &reg_done, 5000), 0);
	KUNIT_ASSERT_EQ(test, reg_done.wc.status, IB_WC_SUCCESS);

	/* The peer writes a pattern across all four pages ... */
	pb = pair->pbuf;
	for (i = 0; i < len; i++)
		pb[i] = (u8)(i * 7 + 3);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, len,
					    iova, rkey, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	/* ... and reads it back (on siw this also orders the write). */
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ, SZ_64K, len,
					    iova, rkey, &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	ib_dma_sync_single_for_cpu(pair->dev, dma, len, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, memcmp(buf, pb, len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(pb + SZ_64K, pb, len), 0);
	KUNIT_EXPECT_EQ(test, buf[len], 0);	/* nothing past the end */

	mrk_wait_init(&inv_done);
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_cqe = &inv_done.cqe;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = rkey;
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
						  MRKIT_MR_INVALIDATING), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(pair->local.qp, &inv, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &inv_done, 5000), 0);
	KUNIT_ASSERT_EQ(test, inv_done.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrkit_mr_transition(mr, MRKIT_MR_INVALIDATING,
						  MRKIT_MR_RESERVED), 0);

	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(pair, iova, rkey, buf, 64),
			0);
	KUNIT_EXPECT_EQ(test, mrkit_mr_put(mr), 0);
	ib_dma_unmap_single(pair->dev, dma, 4 * PAGE_SIZE, DMA_BIDIRECTIONAL);
}

static struct kunit_case mrkit_pool_rdma_cases[] = {
	KUNIT_CASE_PARAM(pool_rdma_sized_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(pool_rdma_peer_write_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite mrkit_pool_rdma_suite = {
	.name = "mrkit_pool_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_pool_rdma_cases,
};

kunit_test_suites(&mrkit_pool_suite, &mrkit_pool_rdma_suite);

MODULE_DESCRIPTION("KUnit tests for mrkit pools");
MODULE_LICENSE("GPL");
