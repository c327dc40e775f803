// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench_smp: the contention variant of benchmark W1 (pool get+put),
 * for a machine with two CPUs or more (make bench runs it in the qemu
 * guest of make demo, 2 vCPUs, Debian's kernel).
 *
 * Normal operation: at load, two kthreads bound to CPU 0 and CPU 1 pass
 * requests around two single-producer rings.  The getter takes a free
 * request, gets a descriptor for it and hands it to the putter; the
 * putter puts the descriptor back and returns the request.  So every
 * descriptor is got on one CPU and put on the other, as when a ULP
 * submits on one CPU and its completion runs on another.  Implementations,
 * interleaved within each repetition: mrkit_mr_get/put, ib_mr_pool_get/put
 * of ib_core, an iSER-style list under an irqsave spinlock, and an
 * xprtrdma-style per-request cache with a locked fallback (the request
 * owns its cache and travels with it).  The unlocked bare list of the UML
 * variant cannot be shared by two CPUs and is left out.  Then the
 * same-CPU variant: one kthread on CPU 0 gets and puts, 32 descriptors in
 * flight (put_cpu=0 in the output).  Results are
 * printed as "MRKIT-VM BENCH" lines with median, min, max and the ratio
 * to ib_mr_pool; the module then stays loaded until removed.
 *
 * Recovery: every wait is bounded (a 60 s deadline per repetition sets
 * the abort flag both threads poll); a missing device, a single CPU, a
 * failed get or a lost descriptor fails the load with a message.
 *
 * Serialization: each ring has one producer and one consumer
 * (acquire/release on its indices); a request belongs to whoever popped
 * it last, which is what lets the xprtrdma-style cache go unlocked.
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>

static char *dev = "mrkd0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to allocate the MRs on");
static unsigned int iters = 100000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "get+put pairs per repetition");
static unsigned int reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "repetitions (5..16)");

#define SMP_DEPTH	128
#define SMP_RING	64		/* power of two */
#define SMP_REQS	32		/* requests in flight */
#define SMP_MAX_REPS	16

enum smp_impl { SMP_MRKIT, SMP_IB_MR_POOL, SMP_ISER, SMP_XPRT, SMP_NR };

static const char * const smp_names[SMP_NR] = {
	"mrkit", "ib_mr_pool", "iser_list", "xprtrdma_cache",
};

struct smp_item {
	struct list_head	node;
};

struct smp_req {
	struct list_head	free_mrs;	/* xprtrdma: the request's cache */
	void			*mr;
};

struct smp_ring {
	void		*slot[SMP_RING];
	unsigned int	head ____cacheline_aligned_in_smp;
	unsigned int	tail ____cacheline_aligned_in_smp;
};

struct smp_bench {
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	struct mrkit_pool	*pool;
	spinlock_t		iser_lock;	/* protects iser_list */
	struct list_head	iser_list;
	spinlock_t		xprt_lock;	/* protects xprt_list */
	struct list_head	xprt_list;
	struct smp_item		*items;
	struct smp_req		reqs[SMP_REQS];
	struct smp_ring		fwd;	/* getter -> putter */
	struct smp_ring		back;	/* putter -> getter */
	enum smp_impl		impl;
	bool			abort;
	unsigned long		deadline;	/* jiffies */
	unsigned long		failed;
	u64			start[2];
	u64			end[2];
	struct completion	go;
	struct completion	done[2];
};

/* Spinning threads give up on their own: the controller may not run. */
static bool smp_stop(struct smp_bench *b)
{
	if (unlikely(time_after(jiffies, b->deadline)))
		WRITE_ONCE(b->abort, true);
	return READ_ONCE(b->abort);
}

static bool smp_push(struct smp_bench *b, struct smp_ring *r, void *p)
{
	unsigned int head = r->head;

	/* Acquire: the consumer is done with the slot it freed. */
	while (head - smp_load_acquire(&r->tail) == SMP_RING)
		if (smp_stop(b))
			return false;
	r->slot[head & (SMP_RING - 1)] = p;
	/* Release: the slot (and the request it names) before the index. */
	smp_store_release(&r->head, head + 1);
	return true;
}

static void *smp_pop(struct smp_bench *b, struct smp_ring *r)
{
	unsigned int tail = r->tail;
	void *p;

	/* Acquire: pairs with the producer's release of head. */
	while (smp_load_acquire(&r->head) == tail)
		if (smp_stop(b))
			return NULL;
	p = r->slot[tail & (SMP_RING - 1)];
	/* Release: our read of the slot before the producer reuses it. */
	smp_store_release(&r->tail, tail + 1);
	return p;
}

static void *smp_get(struct smp_bench *b, struct smp_req *req)
{
	struct smp_item *it;
	struct mrkit_mr *mr;
	unsigned long flags;

	switch (b->impl) {
	case SMP_MRKIT:
		mr = mrkit_mr_get(b->pool);
		return IS_ERR_OR_NULL(mr) ? NULL : mr;
	case SMP_IB_MR_POOL:
		return ib_mr_pool_get(b->qp, &b->qp->rdma_mrs);
	case SMP_ISER:
		spin_lock_irqsave(&b->iser_lock, flags);
		it = list_first_entry_or_null(&b->iser_list, struct smp_item,
					      node);
		if (it)
			list_del(&it->node);
		spin_unlock_irqrestore(&b->iser_lock, flags);
		return it;
	default:
		it = list_first_entry_or_null(&req->free_mrs, struct smp_item,
					      node);
		if (!it) {
			spin_lock(&b->xprt_lock);
			it = list_first_entry_or_null(&b->xprt_list,
						      struct smp_item, node);
			if (it)
				list_del(&it->node);
			spin_unlock(&b->xprt_lock);
		} else {
			list_del(&it->node);
		}
		return it;
	}
}

static void smp_put(struct smp_bench *b, struct smp_req *req, void *p)
{
	struct smp_item *it = p;
	unsigned long flags;

	switch (b->impl) {
	case SMP_MRKIT:
		mrkit_mr_put(p);
		break;
	case SMP_IB_MR_POOL:
		ib_mr_pool_put(b->qp, &b->qp->rdma_mrs, p);
		break;
	case SMP_ISER:
		spin_lock_irqsave(&b->iser_lock, flags);
		list_add(&it->node, &b->iser_list);
		spin_unlock_irqrestore(&b->iser_lock, flags);
		break;
	default:
		/* The putter owns the request now: no lock. */
		list_add(&it->node, &req->free_mrs);
		break;
	}
}

/*
 * Role 0 (the getter) turns free requests into requests holding a
 * descriptor; role 1 (the putter) does the reverse.
 */
static void smp_run(struct smp_bench *b, unsigned int role)
{
	struct smp_ring *in = role ? &b->fwd : &b->back;
	struct smp_ring *out = role ? &b->back : &b->fwd;
	struct smp_req *req;
	unsigned int i;

	for (i = 0; i < iters; i++) {
		req = smp_pop(b, in);
		if (!req)
			return;
		if (role) {
			smp_put(b, req, req->mr);
			req->mr = NULL;
		} else {
			req->mr = smp_get(b, req);
			if (!req->mr) {
				b->failed++;
				WRITE_ONCE(b->abort, true);
				return;
			}
		}
		if (!smp_push(b, out, req))
			return;
	}
}

static int smp_thread(void *data)
{
	struct smp_bench *b = data;
	unsigned int role = smp_processor_id() == 1;

	wait_for_completion(&b->go);
	b->start[role] = ktime_get_ns();
	if (!READ_ONCE(b->abort))
		smp_run(b, role);
	b->end[role] = ktime_get_ns();
	complete(&b->done[role]);
	return 0;
}

/* Set up a repetition of @impl: deadline, abort flag, start gate. */
static void smp_round_init(struct smp_bench *b, enum smp_impl impl)
{
	b->impl = impl;
	b->abort = false;
	b->deadline = jiffies + 60 * HZ;
	init_completion(&b->go);
}

/* After a repetition (or its abort), descriptors on requests go home. */
static void smp_reqs_home(struct smp_bench *b)
{
	struct smp_req *req;
	unsigned int i;

	for (i = 0; i < SMP_REQS; i++) {
		req = &b->reqs[i];
		if (req->mr)
			smp_put(b, req, req->mr);
		req->mr = NULL;
	}
}

/* One repetition of @impl; returns ns for all iters, or 0 on failure. */
static u64 smp_round(struct smp_bench *b, enum smp_impl impl)
{
	struct task_struct *t[2];
	unsigned int i;
	bool ok = true;

	smp_round_init(b, impl);
	memset(&b->fwd, 0, sizeof(b->fwd));
	memset(&b->back, 0, sizeof(b->back));
	for (i = 0; i < SMP_REQS; i++) {
		b->reqs[i].mr = NULL;
		smp_push(b, &b->back, &b->reqs[i]);
	}
	for (i = 0; i < 2; i++) {
		init_completion(&b->done[i]);
		t[i] = kthread_create(smp_thread, b, "mrkit_smp/%u", i);
		if (IS_ERR(t[i])) {
			if (i) {
				WRITE_ONCE(b->abort, true);
				complete_all(&b->go);
				wait_for_completion(&b->done[0]);
			}
			return 0;
		}
		kthread_bind(t[i], i);
		wake_up_process(t[i]);
	}
	complete_all(&b->go);
	for (i = 0; i < 2; i++) {
		if (!wait_for_completion_timeout(&b->done[i], 90 * HZ)) {
			WRITE_ONCE(b->abort, true);
			ok = false;
			wait_for_completion(&b->done[i]);
		}
	}
	smp_reqs_home(b);
	if (!ok || b->abort)
		return 0;
	return max(b->end[0], b->end[1]) - min(b->start[0], b->start[1]);
}

/*
 * The same-CPU variant: one kthread on CPU 0 keeps SMP_REQS descriptors
 * in flight, putting each request's old descriptor and getting a new one,
 * so gets and puts meet on one CPU, as when a ULP completes where it
 * submitted.
 */
static int smp_local_thread(void *data)
{
	struct smp_bench *b = data;
	struct smp_req *req;
	unsigned int i;

	wait_for_completion(&b->go);
	b->start[0] = ktime_get_ns();
	for (i = 0; i < iters && !smp_stop(b); i++) {
		req = &b->reqs[i % SMP_REQS];
		if (req->mr)
			smp_put(b, req, req->mr);
		req->mr = smp_get(b, req);
		if (!req->mr) {
			b->failed++;
			WRITE_ONCE(b->abort, true);
			break;
		}
	}
	b->end[0] = ktime_get_ns();
	complete(&b->done[0]);
	return 0;
}

/* One same-CPU repetition of @impl; ns for all iters, or 0 on failure. */
static u64 smp_round_local(struct smp_bench *b, enum smp_impl impl)
{
	struct task_struct *t;
	unsigned int i;
	bool ok = true;

	smp_round_init(b, impl);
	init_completion(&b->done[0]);
	for (i = 0; i < SMP_REQS; i++)
		b->reqs[i].mr = NULL;
	t = kthread_create(smp_local_thread, b, "mrkit_smp/l");
	if (IS_ERR(t))
		return 0;
	kthread_bind(t, 0);
	wake_up_process(t);
	complete_all(&b->go);
	if (!wait_for_completion_timeout(&b->done[0], 90 * HZ)) {
		WRITE_ONCE(b->abort, true);
		ok = false;
		wait_for_completion(&b->done[0]);
	}
	smp_reqs_home(b);
	if (!ok || b->abort)
		return 0;
	return b->end[0] - b->start[0];
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int smp_setup(struct smp_bench *b)
{
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mrkit_pool_attr attr = {
		.name = "bench_smp", .depth = SMP_DEPTH, .pages_per_mr = 8,
		.node = NUMA_NO_NODE,
	};
	unsigned int i;
	int ret;

	b->dev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!b->dev) {
		pr_err("MRKIT-VM FAIL: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	b->pd = ib_alloc_pd(b->dev, 0);
	if (IS_ERR(b->pd)) {
		ret = PTR_ERR(b->pd);
		goto out_put;
	}
	b->cq = ib_alloc_cq(b->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(b->cq)) {
		ret = PTR_ERR(b->cq);
		goto out_pd;
	}
	qpa.send_cq = b->cq;
	qpa.recv_cq = b->cq;
	b->qp = ib_create_qp(b->pd, &qpa);
	if (IS_ERR(b->qp)) {
		ret = PTR_ERR(b->qp);
		goto out_cq;
	}
	ret = ib_mr_pool_init(b->qp, &b->qp->rdma_mrs, SMP_DEPTH,
			      IB_MR_TYPE_MEM_REG, 8, 0);
	if (ret)
		goto out_qp;
	b->pool = mrkit_pool_create(b->pd, &attr);
	if (IS_ERR(b->pool)) {
		ret = PTR_ERR(b->pool);
		goto out_mrs;
	}
	b->items = kcalloc(2 * SMP_DEPTH, sizeof(*b->items), GFP_KERNEL);
	if (!b->items) {
		ret = -ENOMEM;
		goto out_pool;
	}
	spin_lock_init(&b->iser_lock);
	INIT_LIST_HEAD(&b->iser_list);
	spin_lock_init(&b->xprt_lock);
	INIT_LIST_HEAD(&b->xprt_list);
	for (i = 0; i < SMP_DEPTH; i++) {
		list_add(&b->items[i].node, &b->iser_list);
		list_add(&b->items[SMP_DEPTH + i].node, &b->xprt_list);
	}
	for (i = 0; i < SMP_REQS; i++)
		INIT_LIST_HEAD(&b->reqs[i].free_mrs);
	return 0;

out_pool:
	mrkit_pool_destroy(b->pool);
out_mrs:
	ib_mr_pool_destroy(b->qp, &b->qp->rdma_mrs);
out_qp:
	ib_destroy_qp(b->qp);
out_cq:
	ib_free_cq(b->cq);
out_pd:
	ib_dealloc_pd(b->pd);
out_put:
	ib_device_put(b->dev);
	pr_err("MRKIT-VM FAIL: setup on %s: %d\n", dev, ret);
	return ret;
}

static void smp_teardown(struct smp_bench *b)
{
	kfree(b->items);
	mrkit_pool_destroy(b->pool);
	ib_mr_pool_destroy(b->qp, &b->qp->rdma_mrs);
	ib_destroy_qp(b->qp);
	ib_free_cq(b->cq);
	ib_dealloc_pd(b->pd);
	ib_device_put(b->dev);
}

/* Every descriptor back home: counts, not trust. */
static bool smp_all_home(struct smp_bench *b)
{
	struct mrkit_pool_stats st;
	unsigned int n = 0, i;
	struct smp_item *it;

	mrkit_pool_get_stats(b->pool, &st);
	if (st.in_use || b->qp->mrs_used)
		return false;
	list_for_each_entry(it, &b->iser_list, node)
		n++;
	list_for_each_entry(it, &b->xprt_list, node)
		n++;
	for (i = 0; i < SMP_REQS; i++)
		list_for_each_entry(it, &b->reqs[i].free_mrs, node)
			n++;
	return n == 2 * SMP_DEPTH;
}

/*
 * Variant 0: get on CPU 0, put on CPU 1; variant 1: both on CPU 0.  Each
 * repetition runs every implementation once, interleaved.
 */
static int smp_variant(struct smp_bench *b, unsigned int v,
		       unsigned int nreps)
{
	u64 s[SMP_NR][SMP_MAX_REPS], med[SMP_NR], mn[SMP_NR], mx[SMP_NR];
	unsigned int r, i;

	for (r = 0; r < nreps; r++) {
		for (i = 0; i < SMP_NR; i++) {
			s[i][r] = v ? smp_round_local(b, i) : smp_round(b, i);
			if (!s[i][r]) {
				pr_err("MRKIT-VM FAIL: %s repetition %u did not finish (%lu failed gets)\n",
				       smp_names[i], r, b->failed);
				return -EIO;
			}
		}
	}
	for (i = 0; i < SMP_NR; i++) {
		sort(s[i], nreps, sizeof(u64), cmp_u64, NULL);
		med[i] = div_u64(s[i][nreps / 2] * 100, iters);
		mn[i] = div_u64(s[i][0] * 100, iters);
		mx[i] = div_u64(s[i][nreps - 1] * 100, iters);
	}
	for (i = 0; i < SMP_NR; i++) {
		u64 ratio = div64_u64(med[i] * 1000,
				      max(med[SMP_IB_MR_POOL], 1ULL));

		pr_info("MRKIT-VM BENCH W1SMP depth=%u inflight=%u get_cpu=0 put_cpu=%u impl=%s median_ns=%llu.%02llu min=%llu.%02llu max=%llu.%02llu ratio_vs_ib_mr_pool=%llu.%03llu\n",
			SMP_DEPTH, SMP_REQS, v ? 0 : 1, smp_names[i],
			med[i] / 100, med[i] % 100, mn[i] / 100, mn[i] % 100,
			mx[i] / 100, mx[i] % 100, ratio / 1000, ratio % 1000);
	}
	return 0;
}

static int __init bench_smp_init(void)
{
	unsigned int nreps = clamp(reps, 5U, (unsigned int)SMP_MAX_REPS);
	struct smp_bench *b;
	unsigned int v;
	int ret;

	if (!cpu_online(0) || !cpu_online(1)) {
		pr_err("MRKIT-VM FAIL: the contention variant needs CPUs 0 and 1 online (%u online)\n",
		       num_online_cpus());
		return -ENODEV;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	ret = smp_setup(b);
	if (ret)
		goto out_free;
	for (v = 0; v < 2; v++) {
		ret = smp_variant(b, v, nreps);
		if (ret)
			goto out_teardown;
	}
	if (!smp_all_home(b)) {
		pr_err("MRKIT-VM FAIL: descriptors lost\n");
		ret = -EIO;
		goto out_teardown;
	}
	pr_info("MRKIT-VM PASS bench: %u x %u get+put pairs per implementation, all descriptors home\n",
		nreps, iters);
	smp_teardown(b);
	kfree(b);
	return 0;

out_teardown:
	smp_teardown(b);
out_free:
	kfree(b);
	return ret;
}

static void __exit bench_smp_exit(void)
{
}

module_init(bench_smp_init);
module_exit(bench_smp_exit);

MODULE_DESCRIPTION("mrkit W1 contention benchmark (get on one CPU, put on another)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MRKIT);
