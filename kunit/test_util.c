// SPDX-License-Identifier: GPL-2.0-only
/*
 * What mrkit's KUnit suites share: counted I/Os, pools destroyed
 * with the test, and waiting for an I/O on a real pair.
 */

#include <kunit/resource.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>

#include "mrkit_priv.h"
#include "test_util.h"

static void test_io_done(struct mrkit_io *io, int status)
{
	struct test_io *t = container_of(io, struct test_io, io);

	t->rec.calls++;
	t->rec.status = status;
	if (t->rec.at_done)
		t->rec.at_done(t);
}

void tio_init(struct test_io *t, struct mrkit_pool *pool, enum mrkit_dir dir)
{
	memset(&t->rec, 0, sizeof(t->rec));
	mrkit_io_init(&t->io, pool, dir, test_io_done);
}

/*
 * A failed test may leave descriptors out for good: give up after a
 * while (and fail) rather than hang every test after it.
 */
static void pool_destroy_action(struct kunit_resource *res)
{
	struct kunit *test = current->kunit_test;
	int ret = mrkit_pool_destroy_timeout(res->data, 5 * HZ);

	if (test)
		KUNIT_EXPECT_EQ_MSG(test, ret, 0,
				    "the pool still had descriptors out at the end of the test");
}

static int pool_init_action(struct kunit_resource *res, void *ctx)
{
	res->data = ctx;
	return 0;
}

/* A pool from @attr, destroyed when the test ends. */
struct mrkit_pool *test_pool(struct kunit *test, struct ib_pd *pd,
			     const struct mrkit_pool_attr *attr)
{
	struct mrkit_pool *pool = mrkit_pool_create(pd, attr);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, pool_init_action,
							 pool_destroy_action,
							 GFP_KERNEL, pool));
	return pool;
}

struct mrkit_pool *frwr_pool(struct kunit *test, struct ib_pd *pd, u32 depth,
			     u32 pages)
{
	struct mrkit_pool_attr attr = {
		.name = "frwr", .depth = depth, .pages_per_mr = pages,
		.node = NUMA_NO_NODE,
	};

	return test_pool(test, pd, &attr);
}

u32 in_use(struct mrkit_pool *pool)
{
	struct mrkit_pool_stats st;

	mrkit_pool_get_stats(pool, &st);
	return st.in_use;
}

/* Poll a pair's CQs until @t's done callback ran, for at most 5 s. */
int wait_io(struct mrk_pair *pair, struct test_io *t)
{
	unsigned long deadline = jiffies + 5 * HZ;

	while (!t->rec.calls) {
		mrk_poll(pair, NULL, 1);
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
	}
	return 0;
}

static const enum mrk_kind mrk_kinds[] = { MRK_RXE, MRK_SIW };

static void mrk_kind_desc(const enum mrk_kind *k, char *desc)
{
	strscpy(desc, mrk_kind_name(*k), KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mrk_kind_static, mrk_kinds, mrk_kind_desc);

const void *mrk_kind_gen_params(const void *prev, char *desc)
{
	return mrk_kind_static_gen_params(prev, desc);
}

/* Real-device suites create the rxe and siw devices first. */
int mrk_rdma_suite_init(struct kunit_suite *suite)
{
	return mrk_devices_setup();
}

/* One DMA-mapped entry of @len bytes at @addr, for the fake device. */
struct scatterlist *test_dma_sg(struct kunit *test, u64 addr, u32 len)
{
	struct scatterlist *sg = kunit_kzalloc(test, sizeof(*sg), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sg);
	sg_init_table(sg, 1);
	sg_dma_address(sg) = addr;
	sg_dma_len(sg) = len;
	return sg;
}

#ifdef CONFIG_FAULT_INJECTION
void mrk_fault_arm(enum mrkit_fault_site site, unsigned int nth)
{
	struct fault_attr *a = &mrkit_fault_attrs[site];
	int i;

	mrk_fault_disarm();
	for (i = 0; i < MRKIT_FAULT_NR_SITES; i++)
		atomic_set(&mrkit_fault_attrs[i].times, 1);
	a->verbose = 0;
	a->interval = nth;
	a->count = 0;
	atomic_set(&a->space, 0);
	atomic_set(&a->times, 1);
	/*
	 * Armed last: a concurrent call sees all of the above or nothing.
	 * Pairs with should_fail_ex()'s read of the probability before the
	 * rest: a plain load, which keeps the order on the one CPU of UML,
	 * where the suites run, and on x86.
	 */
	smp_store_release(&a->probability, 100);
}

void mrk_fault_disarm(void)
{
	int i;

	/* What fired stays recorded until the next arm. */
	for (i = 0; i < MRKIT_FAULT_NR_SITES; i++)
		WRITE_ONCE(mrkit_fault_attrs[i].probability, 0);
}

bool mrk_fault_fired(enum mrkit_fault_site site)
{
	/* Armed with times 1 (the initial value too): 0 once it fired. */
	return !atomic_read(&mrkit_fault_attrs[site].times);
}
#endif
