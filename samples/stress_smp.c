// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_stress_smp: the pool's races that only two CPUs can make, run in
 * the qemu guest (2 vCPUs, Debian's kernel, booted with slub_debug=FZPU
 * so that a write to freed memory is reported).
 *
 * Normal operation: at load, @rounds rounds of the first test below,
 * @rounds / 10 + 1 of the second and @rounds / 5 + 1 of the third:
 *  - puts during destroy: a pool on the rxe device's PD hands out all
 *    of its descriptors; two kthreads bound to CPU 0 and CPU 1 put half
 *    of them each, released at the same instant, while the main thread
 *    destroys the pool.  When destroy returns every MR of the PD must be
 *    deregistered (the PD's use count is 0);
 *  - growth under contention: a pool of depth 4 growing to 64, two
 *    kthreads getting 32 descriptors each, waiting (bounded) on -EAGAIN;
 *    a lost growth request leaves a thread starving past its deadline;
 *  - a sleeper in mrkit_pool_wait() on CPU 0 while CPU 1 puts the
 *    pool's descriptors back and the main thread destroys it: the
 *    sleeper returns 0 or -ENODEV, nothing is written after the free
 *    (slub_debug), and every MR is gone when destroy returns.
 * Prints "MRKIT-VM STRESS <name> rounds=<n> ok" per test, or a FAIL line.
 *
 * Recovery: every wait is bounded (a deadline per round); a thread that
 * misses it sets the round's failure flag and gives back what it holds.
 *
 * Serialization: the two threads of a round share nothing but the start
 * flag and the pool under test; the main thread waits for both.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrkit.h>

static char *dev = "mrkd0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to allocate the MRs on");
static unsigned int rounds = 500;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per test");

#define ST_DEPTH	16
#define ST_GROW_FROM	4
#define ST_GROW_TO	64

struct st_round {
	struct mrkit_pool	*pool;
	struct mrkit_mr		*mrs[2][ST_GROW_TO / 2];
	unsigned int		n;		/* descriptors per thread */
	bool			grow;		/* get them, else put them */
	atomic_t		ready;
	atomic_t		go;
	atomic_t		failed;
	struct completion	done[2];
};

static int st_thread(struct st_round *r, unsigned int cpu)
{
	unsigned long deadline = jiffies + 10 * HZ;
	struct mrkit_mr *mr;
	unsigned int i;

	atomic_inc(&r->ready);
	while (!atomic_read(&r->go))
		cond_resched();
	for (i = 0; i < r->n; i++) {
		if (!r->grow) {
			if (mrkit_mr_put(r->mrs[cpu][i]))
				atomic_inc(&r->failed);
			continue;
		}
		for (;;) {
			mr = mrkit_mr_get(r->pool);
			if (!IS_ERR(mr))
				break;
			if (PTR_ERR(mr) != -EAGAIN ||
			    time_after(jiffies, deadline)) {
				atomic_inc(&r->failed);
				return 0;
			}
			mrkit_pool_wait(r->pool, HZ / 10);
		}
		r->mrs[cpu][i] = mr;
	}
	return 0;
}

static int st_thread0(void *data)
{
	struct st_round *r = data;

	st_thread(r, 0);
	complete(&r->done[0]);
	return 0;
}

static int st_thread1(void *data)
{
	struct st_round *r = data;

	st_thread(r, 1);
	complete(&r->done[1]);
	return 0;
}

/*
 * Run both threads, released together; with @destroy, destroy the pool
 * while they run.  False if a thread could not start.
 */
static bool st_run(struct st_round *r, bool destroy)
{
	int (*fn[2])(void *) = { st_thread0, st_thread1 };
	struct task_struct *t;
	unsigned int c;

	atomic_set(&r->ready, 0);
	atomic_set(&r->go, 0);
	for (c = 0; c < 2; c++) {
		init_completion(&r->done[c]);
		t = kthread_create(fn[c], r, "mrkit_stress/%u", c);
		if (IS_ERR(t))
			return false;
		kthread_bind(t, c);
		wake_up_process(t);
	}
	while (atomic_read(&r->ready) < 2)
		cond_resched();
	atomic_set(&r->go, 1);
	if (destroy)
		mrkit_pool_destroy(r->pool);
	for (c = 0; c < 2; c++)
		wait_for_completion(&r->done[c]);
	return true;
}

/* Puts on two CPUs racing with mrkit_pool_destroy() on either. */
static int st_destroy_put(struct ib_pd *pd, struct st_round *r)
{
	struct mrkit_pool_attr attr = {
		.name = "stress_dead", .depth = ST_DEPTH, .pages_per_mr = 4,
		.node = NUMA_NO_NODE,
	};
	unsigned int k, i, c;

	for (k = 0; k < rounds; k++) {
		r->pool = mrkit_pool_create(pd, &attr);
		if (IS_ERR(r->pool))
			return PTR_ERR(r->pool);
		r->n = ST_DEPTH / 2;
		r->grow = false;
		for (c = 0; c < 2; c++)
			for (i = 0; i < r->n; i++) {
				r->mrs[c][i] = mrkit_mr_get(r->pool);
				if (IS_ERR(r->mrs[c][i]))
					return PTR_ERR(r->mrs[c][i]);
			}
		if (!st_run(r, true))
			return -ENOMEM;
		if (atomic_read(&r->failed))
			return -EIO;
		/* Destroy returned: every MR of the pool is deregistered. */
		if (atomic_read(&pd->usecnt)) {
			pr_err("MRKIT-VM FAIL: %d MRs still registered after destroy\n",
			       atomic_read(&pd->usecnt));
			return -EIO;
		}
	}
	return 0;
}

/* Growth asked for by getters on two CPUs is never lost. */
static int st_grow(struct ib_pd *pd, struct st_round *r)
{
	struct mrkit_pool_attr attr = {
		.name = "stress_grow", .depth = ST_GROW_FROM,
		.max_depth = ST_GROW_TO, .pages_per_mr = 4,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool_stats st;
	unsigned int k, i, c;
	int ret = 0;

	for (k = 0; k < rounds / 10 + 1 && !ret; k++) {
		r->pool = mrkit_pool_create(pd, &attr);
		if (IS_ERR(r->pool))
			return PTR_ERR(r->pool);
		memset(r->mrs, 0, sizeof(r->mrs));
		r->n = ST_GROW_TO / 2;
		r->grow = true;
		if (!st_run(r, false))
			ret = -ENOMEM;
		else if (atomic_read(&r->failed))
			ret = -ETIMEDOUT;
		for (c = 0; c < 2; c++)
			for (i = 0; i < r->n; i++)
				if (r->mrs[c][i])
					mrkit_mr_put(r->mrs[c][i]);
		mrkit_pool_get_stats(r->pool, &st);
		if (!ret && (st.allocated != ST_GROW_TO || st.in_use))
			ret = -EIO;
		mrkit_pool_destroy(r->pool);
	}
	if (ret)
		pr_err("MRKIT-VM FAIL: growth under contention: %d (allocated %u, in use %u)\n",
		       ret, st.allocated, st.in_use);
	return ret;
}

/* A sleeper in mrkit_pool_wait() on one CPU while the pool is destroyed. */
struct st_wait {
	struct mrkit_pool	*pool;
	struct mrkit_mr		*mrs[ST_GROW_FROM];
	atomic_t		stage;
	int			ret;
	struct completion	waited, put;
};

static int st_waiter(void *data)
{
	struct st_wait *w = data;

	atomic_set(&w->stage, 1);
	w->ret = mrkit_pool_wait(w->pool, 2 * HZ);
	complete(&w->waited);
	return 0;
}

static int st_putter(void *data)
{
	struct st_wait *w = data;
	unsigned int i;

	/* The loading thread may share this CPU: let it run. */
	while (atomic_read(&w->stage) < 2)
		cond_resched();
	for (i = 0; i < ST_GROW_FROM; i++)
		mrkit_mr_put(w->mrs[i]);
	complete(&w->put);
	return 0;
}

static int st_wait_destroy(struct ib_pd *pd)
{
	struct mrkit_pool_attr attr = {
		.name = "stress_wait", .depth = ST_GROW_FROM, .pages_per_mr = 4,
		.node = NUMA_NO_NODE,
	};
	struct task_struct *t[2];
	struct st_wait *w;
	unsigned int k, i;
	int ret = 0;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	for (k = 0; k < rounds / 5 + 1 && !ret; k++) {
		w->pool = mrkit_pool_create(pd, &attr);
		if (IS_ERR(w->pool)) {
			ret = PTR_ERR(w->pool);
			break;
		}
		for (i = 0; i < ST_GROW_FROM; i++)
			w->mrs[i] = mrkit_mr_get(w->pool);
		atomic_set(&w->stage, 0);
		w->ret = 1;
		init_completion(&w->waited);
		init_completion(&w->put);
		t[0] = kthread_create(st_waiter, w, "mrkit_wait/0");
		t[1] = kthread_create(st_putter, w, "mrkit_put/1");
		if (IS_ERR(t[0]) || IS_ERR(t[1])) {
			ret = -ENOMEM;
			break;
		}
		kthread_bind(t[0], 0);
		kthread_bind(t[1], 1);
		wake_up_process(t[0]);
		wake_up_process(t[1]);
		while (atomic_read(&w->stage) < 1)
			cond_resched();
		/* Let the waiter fall asleep: waits must begin before destroy. */
		msleep(20);
		/* The puts, the wake-up and the destroy race. */
		atomic_set(&w->stage, 2);
		mrkit_pool_destroy(w->pool);
		wait_for_completion(&w->put);
		wait_for_completion(&w->waited);
		if (w->ret != -ENODEV && w->ret != 0)
			ret = -EIO;
		if (atomic_read(&pd->usecnt))
			ret = -EBUSY;
	}
	if (ret)
		pr_err("MRKIT-VM FAIL: wait during destroy: %d (waiter %d, %d MRs left)\n",
		       ret, w->ret, atomic_read(&pd->usecnt));
	kfree(w);
	return ret;
}

static int __init stress_smp_init(void)
{
	struct ib_device *ibdev;
	struct st_round *r;
	struct ib_pd *pd;
	int ret;

	if (!cpu_online(0) || !cpu_online(1)) {
		pr_err("MRKIT-VM FAIL: the stress needs CPUs 0 and 1 online\n");
		return -ENODEV;
	}
	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		pr_err("MRKIT-VM FAIL: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		ret = -ENOMEM;
		goto out_put;
	}
	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto out_free;
	}
	atomic_set(&r->failed, 0);
	ret = st_destroy_put(pd, r);
	if (ret) {
		pr_err("MRKIT-VM FAIL: put after destroy: %d\n", ret);
		goto out_pd;
	}
	pr_info("MRKIT-VM STRESS destroy_put rounds=%u ok\n", rounds);
	ret = st_grow(pd, r);
	if (ret)
		goto out_pd;
	pr_info("MRKIT-VM STRESS grow rounds=%u ok\n", rounds / 10 + 1);
	ret = st_wait_destroy(pd);
	if (ret)
		goto out_pd;
	pr_info("MRKIT-VM STRESS wait_destroy rounds=%u ok\n", rounds / 5 + 1);
out_pd:
	ib_dealloc_pd(pd);
out_free:
	kfree(r);
out_put:
	ib_device_put(ibdev);
	return ret;
}

static void __exit stress_smp_exit(void)
{
}

module_init(stress_smp_init);
module_exit(stress_smp_exit);

MODULE_AUTHOR("mrkit developers");
MODULE_DESCRIPTION("mrkit SMP stress: the pool's races that need two CPUs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MRKIT);
