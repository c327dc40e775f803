// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench_smp: benchmark W1 (pool get+put) on a machine with two CPUs
 * or more (make bench runs it in a qemu guest: 2 vCPUs, Debian's kernel),
 * where locks, LOCK prefixes and cache-line transfers are real.
 *
 * Normal operation: at load, two variants, each comparing mrkit_mr_get/put
 * with ib_mr_pool_get/put of ib_core (rxe's MRs, depth 128) in paired
 * bursts: the two take turns in bursts of the same number of get+put
 * pairs, in rotating order (mrkit, ib_mr_pool; ib_mr_pool, mrkit; ...),
 * and every round is printed raw ("MRKIT-VM PAIR" lines) for the host's
 * statistics (scripts/mrkit_report/stats.py: median of the paired ratios,
 * bootstrap interval), so that a host preemption of a vCPU spoils the
 * pairs it falls in, not one side.
 *  - across CPUs: a kthread on CPU 0 takes a free request, gets a
 *    descriptor for it and hands it over a single-producer ring to a
 *    kthread on CPU 1, which puts the descriptor back and returns the
 *    request; 32 requests in flight, as when a ULP submits on one CPU and
 *    completes on another.  A burst is timed on CPU 0 from its first get
 *    until every request is back.
 *  - same CPU: one kthread on CPU 0 keeps 32 descriptors in flight,
 *    putting each request's old descriptor and getting a new one; a burst
 *    ends with every descriptor put back.
 * Both kthreads live for a whole variant and know the rotation, so each
 * burst's implementation needs no hand-over.  Then a PASS line; the
 * module stays loaded until removed.
 *
 * Recovery: every wait is bounded (a 60 s deadline per variant sets the
 * abort flag both threads poll); a missing device, a single CPU, a failed
 * get or a lost descriptor fails the load with a message.
 *
 * Serialization: each ring has one producer and one consumer
 * (acquire/release on its indices); a request belongs to whoever popped
 * it last.
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>

static char *dev = "mrkd0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to allocate the MRs on");
static unsigned int iters = 100000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "get+put pairs per implementation and variant");

#define SMP_DEPTH	128
#define SMP_RING	64		/* power of two */
#define SMP_REQS	32		/* requests in flight */
#define SMP_MIN_ROUNDS	8
#define SMP_MAX_ROUNDS	1000

enum smp_impl { SMP_MRKIT, SMP_IB_MR_POOL, SMP_NR };

static const char * const smp_names[SMP_NR] = { "mrkit_fence", "ib_mr_pool" };

static const char * const smp_variants[2] = {
	"smp_cross_cpu_d128", "smp_same_cpu_d128",
};

struct smp_req {
	void		*mr;
	enum smp_impl	impl;	/* whose descriptor @mr is */
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
	struct smp_req		reqs[SMP_REQS];
	struct smp_ring		fwd;	/* getter -> putter */
	struct smp_ring		back;	/* putter -> getter */
	unsigned int		rounds;
	unsigned int		burst;	/* get+put pairs per burst */
	u64			*t;	/* [round][impl] */
	bool			same;	/* the same-CPU variant */
	bool			abort;
	unsigned long		deadline;	/* jiffies */
	unsigned long		failed;
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

	/*
	 * Acquire: the consumer is done with the slot it freed (pairs with
	 * the release of tail in smp_pop()).
	 */
	while (head - smp_load_acquire(&r->tail) == SMP_RING)
		if (smp_stop(b))
			return false;
	r->slot[head & (SMP_RING - 1)] = p;
	/*
	 * Release: the slot (and the request it names) before the index;
	 * pairs with the acquire of head in smp_pop().
	 */
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
	/*
	 * Release: our read of the slot before the producer reuses it;
	 * pairs with the acquire of tail in smp_push().
	 */
	smp_store_release(&r->tail, tail + 1);
	return p;
}

static bool smp_get(struct smp_bench *b, struct smp_req *req,
		    enum smp_impl impl)
{
	struct mrkit_mr *mr;

	req->impl = impl;
	if (impl == SMP_MRKIT) {
		mr = mrkit_mr_get(b->pool);
		req->mr = IS_ERR_OR_NULL(mr) ? NULL : mr;
	} else {
		req->mr = ib_mr_pool_get(b->qp, &b->qp->rdma_mrs);
	}
	if (req->mr)
		return true;
	b->failed++;
	WRITE_ONCE(b->abort, true);
	return false;
}

static void smp_put(struct smp_bench *b, struct smp_req *req)
{
	if (req->impl == SMP_MRKIT)
		mrkit_mr_put(req->mr);
	else
		ib_mr_pool_put(b->qp, &b->qp->rdma_mrs, req->mr);
	req->mr = NULL;
}

/* Burst j of round r runs implementation (r + j) % SMP_NR. */
static enum smp_impl smp_impl_of(unsigned int r, unsigned int j)
{
	return (r + j) % SMP_NR;
}

/* Across CPUs, on CPU 0: one burst of @impl; its time, or 0 on abort. */
static u64 smp_get_burst(struct smp_bench *b, enum smp_impl impl)
{
	unsigned int i, inflight = min_t(unsigned int, b->burst, SMP_REQS);
	struct smp_req *req;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < b->burst; i++) {
		req = i < SMP_REQS ? &b->reqs[i] : smp_pop(b, &b->back);
		if (!req || !smp_get(b, req, impl) || !smp_push(b, &b->fwd, req))
			return 0;
	}
	/* Every request back: every descriptor put. */
	for (i = 0; i < inflight; i++)
		if (!smp_pop(b, &b->back))
			return 0;
	return ktime_get_ns() - t0;
}

/* Across CPUs, on CPU 1: put what one burst got. */
static bool smp_put_burst(struct smp_bench *b)
{
	struct smp_req *req;
	unsigned int i;

	for (i = 0; i < b->burst; i++) {
		req = smp_pop(b, &b->fwd);
		if (!req)
			return false;
		smp_put(b, req);
		if (!smp_push(b, &b->back, req))
			return false;
	}
	return true;
}

/* On one CPU: @burst get+put pairs, 32 in flight, all put at the end. */
static u64 smp_local_burst(struct smp_bench *b, enum smp_impl impl)
{
	struct smp_req *req;
	unsigned int i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < b->burst; i++) {
		req = &b->reqs[i % SMP_REQS];
		if (req->mr)
			smp_put(b, req);
		if (!smp_get(b, req, impl))
			return 0;
	}
	for (i = 0; i < SMP_REQS; i++)
		if (b->reqs[i].mr)
			smp_put(b, &b->reqs[i]);
	return ktime_get_ns() - t0;
}

static int smp_thread(void *data)
{
	struct smp_bench *b = data;
	unsigned int role = raw_smp_processor_id() == 1;
	unsigned int r, j;
	enum smp_impl impl;
	u64 t;

	wait_for_completion(&b->go);
	for (r = 0; r < b->rounds && !READ_ONCE(b->abort); r++) {
		for (j = 0; j < SMP_NR; j++) {
			impl = smp_impl_of(r, j);
			if (role) {
				if (!smp_put_burst(b))
					goto out;
				continue;
			}
			t = b->same ? smp_local_burst(b, impl) :
				      smp_get_burst(b, impl);
			if (!t) {
				WRITE_ONCE(b->abort, true);
				goto out;
			}
			b->t[r * SMP_NR + impl] = t;
		}
	}
out:
	complete(&b->done[role]);
	return 0;
}

/* After a variant (or its abort), descriptors still on requests go home. */
static void smp_reqs_home(struct smp_bench *b)
{
	unsigned int i;

	for (i = 0; i < SMP_REQS; i++)
		if (b->reqs[i].mr)
			smp_put(b, &b->reqs[i]);
}

/* One variant: both threads (one on the same CPU), every round. */
static int smp_variant(struct smp_bench *b, bool same)
{
	unsigned int i, nthr = same ? 1 : 2;
	struct task_struct *t;
	int ret = 0;

	b->same = same;
	b->abort = false;
	b->deadline = jiffies + 60 * HZ;
	init_completion(&b->go);
	memset(&b->fwd, 0, sizeof(b->fwd));
	memset(&b->back, 0, sizeof(b->back));
	for (i = 0; i < nthr; i++) {
		init_completion(&b->done[i]);
		t = kthread_create(smp_thread, b, "mrkit_smp/%u", i);
		if (IS_ERR(t)) {
			WRITE_ONCE(b->abort, true);
			complete_all(&b->go);
			if (i)
				wait_for_completion(&b->done[0]);
			return PTR_ERR(t);
		}
		kthread_bind(t, i);
		wake_up_process(t);
	}
	complete_all(&b->go);
	for (i = 0; i < nthr; i++) {
		if (!wait_for_completion_timeout(&b->done[i], 90 * HZ)) {
			WRITE_ONCE(b->abort, true);
			wait_for_completion(&b->done[i]);
		}
	}
	smp_reqs_home(b);
	if (b->abort) {
		pr_err("MRKIT-VM FAIL: W1 %s did not finish (%lu failed gets)\n",
		       smp_variants[same], b->failed);
		ret = -EIO;
	}
	return ret;
}

/* One line per round, as the host parses it. */
static void smp_print(struct smp_bench *b, bool same)
{
	unsigned int r;

	for (r = 0; r < b->rounds; r++)
		pr_info("MRKIT-VM PAIR W1 %s 1 %s %s %u %llu %llu\n",
			smp_variants[same], smp_names[SMP_MRKIT],
			smp_names[SMP_IB_MR_POOL], b->burst,
			b->t[r * SMP_NR + SMP_MRKIT],
			b->t[r * SMP_NR + SMP_IB_MR_POOL]);
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
	b->rounds = clamp(iters / 256, (unsigned int)SMP_MIN_ROUNDS,
			  (unsigned int)SMP_MAX_ROUNDS);
	b->burst = max(iters / b->rounds, 1U);
	b->t = kcalloc(b->rounds * SMP_NR, sizeof(*b->t), GFP_KERNEL);
	if (!b->t) {
		ret = -ENOMEM;
		goto out_pool;
	}
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
	kfree(b->t);
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

	mrkit_pool_get_stats(b->pool, &st);
	return !st.in_use && !b->qp->mrs_used;
}

static int __init bench_smp_init(void)
{
	struct smp_bench *b;
	unsigned int v;
	int ret;

	if (!cpu_online(0) || !cpu_online(1)) {
		pr_err("MRKIT-VM FAIL: the W1 variants need CPUs 0 and 1 online (%u online)\n",
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
		ret = smp_variant(b, v);
		if (ret)
			goto out_teardown;
		smp_print(b, v);
	}
	if (!smp_all_home(b)) {
		pr_err("MRKIT-VM FAIL: descriptors lost\n");
		ret = -EIO;
		goto out_teardown;
	}
	pr_info("MRKIT-VM PASS bench W1: %u rounds of %u get+put pairs per implementation and variant, all descriptors home\n",
		b->rounds, b->burst);
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
