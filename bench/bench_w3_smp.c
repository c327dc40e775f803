// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench_w3_smp: benchmark W3 (one I/O's full registration cycle on
 * rxe) on a machine with two CPUs or more.  The UML run of W3 is
 * uniprocessor, where spinlocks and LOCK prefixes compile away; this is
 * the same measurement with them (make bench loads it in the qemu guest
 * of its W1 variants: 2 vCPUs, Debian's kernel).
 *
 * Normal operation: at load, an RC connection is made on the rxe device
 * bound to the address given (in-kernel rdma_cm, both ends in this
 * module: a listener and a client on the guest's own address).  On the
 * client's QP the cycles of the UML W3 bench (kunit/bench_rdma.c) run:
 * mrkit with the rkey fence, in a MRKIT_POOL_LAZY_INV pool, and with
 * per-I/O descriptor caching, MRKIT_POOL_IO_CACHE (each request's I/O
 * initialized once), each against the nvme-rdma-style
 * hand-rolled path (bench/bench_w3.h: ib_mr_pool, ib_map_mr_sg at 4 KiB, a
 * memset ib_reg_wr chained ahead of the SEND, LOCAL_INV or the peer's
 * invalidation), in
 * four variants: the list DMA-mapped by mrkit or by the caller
 * (MRKIT_MAP_4K), each mapped and advertised with mrkit_io_map_seg() and
 * invalidated locally or by the
 * peer (SEND_WITH_INV: mrkit_io_remote_inv(), then mrkit_io_complete()
 * with nothing left to invalidate).
 *
 * Method: an implementation and the baseline take turns in bursts of the
 * same number of I/Os, in rotating order (A B, B A, ...), and every
 * round is printed raw ("MRKIT-VM PAIR W3SMP" lines) for the host's
 * statistics (median of the paired ratios, bootstrap interval): a host
 * preemption of a vCPU spoils the pairs it falls in, not one side.
 *
 * First a wire pass (variant wire_local_inv), one CPU, 1 and 16 pages:
 * every cycle through rxe itself, the server end receiving the SENDs (its
 * receives reposted from its CQ), both CQs polled on the submitting CPU
 * with every completion's status checked.  That proves the cycles on a
 * real connection; its ratios are mostly rxe's packet processing.  Then,
 * as in UML, the device's post_send is replaced by a stand-in that
 * accepts the chain and queues one success completion per signaled WR,
 * which the bench delivers as a CQ poll would.  1, 16 and 256 pages:
 *  - same CPU (same_*): one kthread on CPU 0 submits W3SMP_REQS requests
 *    (fewer when a burst is shorter), then completes them, oldest first,
 *    so that every pool cycles as many descriptors as a ULP with that many
 *    I/Os in flight (a request that keeps its descriptor,
 *    MRKIT_POOL_IO_CACHE, holds one of them); checked by the pools'
 *    high-water marks after the same-CPU passes;
 *  - cross CPU (cross_*): a kthread on CPU 0 submits, a kthread on CPU 1
 *    reaps the completions and runs the completion half (invalidate, put,
 *    unmap), W3SMP_REQS requests in flight, as when a ULP's CQ is served
 *    on another CPU; a burst lasts until its last I/O is back.
 * Then a PASS line; the module stays loaded until removed.
 *
 * Recovery: every wait is bounded (rdma_cm events 5 s each, a 60 s
 * deadline per comparison that both threads and the wire's CQ polling
 * check).  A missing device or CPU, a failed connection, a cycle that
 * fails (a missing or failed completion, a wrong key) or a descriptor not
 * back home fails the load with a "MRKIT-VM FAIL" line; the device gets
 * its post_send back before anything is torn down.
 *
 * Serialization: request i % W3SMP_REQS is handed between the two
 * threads through its stage word (release when handing over, acquire
 * when taking); the stand-in keeps one completion queue per CPU, used
 * only by the thread bound to that CPU.
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>
#include <rdma/rdma_cm.h>

#include "bench/bench_w3.h"

static char *addr = "10.99.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "the guest's own IPv4 address on the rxe netdev");
static unsigned int iters = 100000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "I/Os per implementation and figure at 1 page (fewer at 16 and 256, across CPUs and on the wire)");

#define W3SMP_PAGES	256
#define W3SMP_REQS	16
#define W3SMP_DEPTH	32
#define W3SMP_QUEUE	16
#define W3SMP_RECVS	32	/* the server's receive queue */
#define W3SMP_WIRE_PAGES 16	/* the largest I/O on the wire */
#define W3SMP_MIN_ROUNDS 8
#define W3SMP_MAX_ROUNDS 400
#define W3SMP_PORT	7174	/* any free port; the listener is ours */

enum w3smp_impl { W3_FENCE, W3_LAZY, W3_CACHED, W3_NVME, W3_NR };

static const char * const w3smp_names[W3_NR] = {
	"mrkit_fence", "mrkit_lazy", "mrkit_cached", "nvme_style",
};

#define W3_NR_MRKIT	3	/* fence, lazy, cached */

/* Variants: who DMA-maps the list, who invalidates the key. */
enum {
	W3V_REMOTE_INV		= 1 << 0,
	W3V_CALLER_MAPPED	= 1 << 1,
	W3V_NR			= 4,
};

static const char * const w3v_names[W3V_NR] = {
	"local_inv", "remote_inv", "caller_mapped", "caller_mapped_remote_inv",
};

/* A request's stage: who may touch it next. */
enum { W3SMP_IDLE, W3SMP_POSTED };

/* Completions the stand-in queued on one CPU, not delivered yet. */
struct w3smp_queue {
	struct ib_cqe	*cqe[W3SMP_QUEUE];
	unsigned int	n;
} ____cacheline_aligned_in_smp;

struct w3smp_bench;

struct w3smp_req {
	struct w3smp_bench	*b;
	unsigned int		stage ____cacheline_aligned_in_smp;
	enum w3smp_impl		impl;
	struct scatterlist	sg[W3SMP_PAGES];
	int			nents;
	struct mrkit_io		io;
	struct mrkit_io		io_cached;	/* initialized once */
	bool			live;	/* submitted: a completion half is due */
	bool			io_done;
	bool			send_done;
	bool			inv_done;
	struct ib_mr		*mr;
	struct ib_reg_wr	reg_wr;
	struct ib_send_wr	inv_wr;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_send_wr	send;
	struct ib_sge		send_sge;
	struct ib_cqe		send_cqe;
	struct bench_ksgl	ksgl;
	/* the submitter's completions, carried to the reaper */
	struct ib_cqe		*cqe[W3SMP_QUEUE];
	unsigned int		ncqe;
};

/* A receive buffer of the server end, reposted when it completes. */
struct w3smp_rbuf {
	struct w3smp_bench	*b;
	struct ib_cqe		cqe;
	struct ib_recv_wr	wr;
	struct ib_sge		sge;
	u8			data[64];
};

/* One end of the loopback connection. */
struct w3smp_end {
	struct w3smp_bench	*b;
	bool			listens;
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct completion	ev;	/* the awaited event arrived */
	int			event;
	int			status;
	bool			connected;
};

struct w3smp_bench {
	struct ib_device	*dev;
	struct w3smp_end	lst;		/* the listener */
	struct w3smp_end	srv;		/* the accepted end */
	struct w3smp_end	cli;		/* the end the bench posts on */
	struct w3smp_rbuf	*rbufs;		/* the server's receives */
	struct ib_qp		*qp;
	struct mrkit_pool	*pool[W3_NR_MRKIT];
	struct list_head	nvme_mrs;
	struct page		*pages[W3SMP_PAGES];
	struct w3smp_req	*reqs;
	int			(*real_post_send)(struct ib_qp *qp,
						  const struct ib_send_wr *wr,
						  const struct ib_send_wr **bad);
	struct w3smp_queue	q[2];	/* per CPU */
	unsigned int		variant;
	enum w3smp_impl		pair[2]; /* the implementation, the baseline */
	unsigned int		burst;	/* I/Os per burst */
	unsigned int		same_depth;	/* most in flight, same CPU */
	unsigned int		rounds;
	u64			*bt;	/* burst times, [round][pair index] */
	bool			cross;
	bool			wire;	/* rxe's own send queue, real CQs */
	atomic_t		ready;	/* threads past the start gate */
	bool			abort;
	unsigned long		deadline;	/* jiffies */
	unsigned long		bad;
	struct completion	go;
	struct completion	done[2];
};

static struct w3smp_bench *w3smp_cur;	/* the bench the stand-in serves */

static int w3smp_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad)
{
	struct w3smp_bench *b = w3smp_cur;
	struct w3smp_queue *q = &b->q[raw_smp_processor_id() & 1];

	for (; wr; wr = wr->next) {
		if (!(wr->send_flags & IB_SEND_SIGNALED))
			continue;
		if (q->n == W3SMP_QUEUE) {
			*bad = wr;
			return -ENOMEM;
		}
		q->cqe[q->n++] = wr->wr_cqe;
	}
	return 0;
}

/* Run the done() of @n completions, oldest first, as a CQ poll would. */
static void w3smp_deliver(struct w3smp_bench *b, struct ib_cqe **cqe,
			  unsigned int n)
{
	struct ib_wc wc = { .status = IB_WC_SUCCESS, .qp = b->qp };
	unsigned int i;

	for (i = 0; i < n; i++) {
		wc.wr_cqe = cqe[i];
		wc.wr_cqe->done(b->cli.cq, &wc);
	}
}

/* Deliver what this CPU's posts queued. */
static void w3smp_poll(struct w3smp_bench *b)
{
	struct w3smp_queue *q = &b->q[raw_smp_processor_id() & 1];
	unsigned int n = q->n;

	q->n = 0;
	w3smp_deliver(b, q->cqe, n);
}

static void w3smp_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct w3smp_req *r = container_of(wc->wr_cqe, struct w3smp_req,
					   send_cqe);

	r->send_done = wc->status == IB_WC_SUCCESS;
}

/* Unsignaled: called only when the REG_MR failed. */
static void w3smp_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct w3smp_req *r = container_of(wc->wr_cqe, struct w3smp_req,
					   reg_cqe);

	r->b->bad++;
}

static void w3smp_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct w3smp_req *r = container_of(wc->wr_cqe, struct w3smp_req,
					   inv_cqe);

	r->inv_done = wc->status == IB_WC_SUCCESS;
}

/* The server end: a SEND arrived; its buffer goes back to the queue. */
static void w3smp_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct w3smp_rbuf *rb = container_of(wc->wr_cqe, struct w3smp_rbuf,
					     cqe);

	if (wc->status != IB_WC_SUCCESS ||
	    ib_post_recv(rb->b->srv.id->qp, &rb->wr, NULL))
		rb->b->bad++;
}

/* Spinning threads give up on their own: the controller may not run. */
static bool w3smp_stop(struct w3smp_bench *b)
{
	if (unlikely(time_after(jiffies, b->deadline)))
		WRITE_ONCE(b->abort, true);
	return READ_ONCE(b->abort);
}

/*
 * On the wire: poll both ends' CQs on this CPU until @flag is set.  rxe
 * runs its responder and completer as tasklets on the CPU that posted:
 * a bottom-half enable lets them run.  Bounded by the comparison's
 * deadline.
 */
static void w3smp_wire_wait(struct w3smp_bench *b, bool *flag)
{
	while (!READ_ONCE(*flag)) {
		ib_process_cq_direct(b->cli.cq, 16);
		ib_process_cq_direct(b->srv.cq, 16);
		if (READ_ONCE(*flag) || w3smp_stop(b))
			return;
		local_bh_disable();
		local_bh_enable();
		cond_resched();
	}
}

/* This I/O's next completion: the stand-in's queue, or the wire's CQs. */
static void w3smp_reap(struct w3smp_bench *b, bool *flag)
{
	if (b->wire)
		w3smp_wire_wait(b, flag);
	else
		w3smp_poll(b);
}

static void w3smp_io_done(struct mrkit_io *io, int status)
{
	struct w3smp_req *r = container_of(io, struct w3smp_req, io);

	r->io_done = !status;
}

static void w3smp_io_cached_done(struct mrkit_io *io, int status)
{
	struct w3smp_req *r = container_of(io, struct w3smp_req, io_cached);

	r->io_done = !status;
}

static struct mrkit_io *w3smp_io(struct w3smp_req *r)
{
	return r->impl == W3_CACHED ? &r->io_cached : &r->io;
}

/* Submission for mrkit: map, advertise, post.  False if nothing posted. */
static bool w3smp_submit_mrkit(struct w3smp_bench *b, struct w3smp_req *r)
{
	struct mrkit_io *io = w3smp_io(r);
	u32 flags = MRKIT_MAP_DMA;
	int count = r->nents;
	struct mrkit_seg seg;

	if (r->impl != W3_CACHED)
		mrkit_io_init(io, b->pool[r->impl], MRKIT_PEER_WRITES,
			      w3smp_io_done);
	r->io_done = false;
	if (b->variant & W3V_CALLER_MAPPED) {
		count = ib_dma_map_sg(b->dev, r->sg, r->nents, DMA_FROM_DEVICE);
		flags = MRKIT_MAP_4K;
	}
	if (mrkit_io_map_seg(io, r->sg, count, flags, &seg) != 1)
		goto out_release;
	bench_ksgl_set(&r->ksgl, seg.addr, seg.length, seg.key);
	bench_send_init(&r->send, &r->send_cqe, &r->send_sge);
	if (mrkit_io_post(io, b->qp, &r->send, NULL))
		goto out_release;
	return true;

out_release:
	b->bad++;
	mrkit_io_release(io, 0);
	if (b->variant & W3V_CALLER_MAPPED)
		ib_dma_unmap_sg(b->dev, r->sg, r->nents, DMA_FROM_DEVICE);
	return false;
}

/* Submission, nvme-rdma's way.  False if nothing posted. */
static bool w3smp_submit_nvme(struct w3smp_bench *b, struct w3smp_req *r)
{
	int count = ib_dma_map_sg(b->dev, r->sg, r->nents, DMA_FROM_DEVICE);

	r->mr = bench_nvme_reg(b->qp, &b->nvme_mrs, r->sg, count, &r->reg_wr,
			       &r->reg_cqe, &r->ksgl);
	if (!r->mr) {
		b->bad++;
		ib_dma_unmap_sg(b->dev, r->sg, r->nents, DMA_FROM_DEVICE);
		return false;
	}
	bench_send_init(&r->send, &r->send_cqe, &r->send_sge);
	r->reg_wr.wr.next = &r->send;
	if (ib_post_send(b->qp, &r->reg_wr.wr, NULL))
		b->bad++;
	return true;
}

/*
 * The completion half, on whichever CPU reaps: the SEND's completion
 * (queued by the submitter, carried in @r), then the response: the peer's
 * invalidation or a local one and its completion, the put and the unmap.
 */
static void w3smp_complete(struct w3smp_bench *b, struct w3smp_req *r)
{
	bool remote = b->variant & W3V_REMOTE_INV;
	u32 rkey = bench_ksgl_key(&r->ksgl);
	struct mrkit_io *io = w3smp_io(r);

	if (!r->live)
		return;
	r->live = false;
	if (b->wire)
		w3smp_wire_wait(b, &r->send_done);
	else
		w3smp_deliver(b, r->cqe, r->ncqe);
	r->ncqe = 0;
	if (!r->send_done)
		b->bad++;
	if (r->impl != W3_NVME) {
		if (remote && mrkit_io_remote_inv(io, rkey))
			b->bad++;
		if (mrkit_io_complete(io, b->qp))
			b->bad++;
		w3smp_reap(b, &r->io_done);	/* the LOCAL_INV, if any */
		if (!r->io_done)
			b->bad++;
		if (b->variant & W3V_CALLER_MAPPED)
			ib_dma_unmap_sg(b->dev, r->sg, r->nents,
					DMA_FROM_DEVICE);
		return;
	}
	if (remote) {
		/* The peer invalidated; it must have named this MR's key. */
		if (rkey != r->mr->rkey)
			b->bad++;
	} else {
		r->inv_done = false;
		bench_nvme_inv_init(&r->inv_wr, &r->inv_cqe, r->mr->rkey);
		if (ib_post_send(b->qp, &r->inv_wr, NULL))
			b->bad++;
		w3smp_reap(b, &r->inv_done);
		if (!r->inv_done)
			b->bad++;
	}
	ib_mr_pool_put(b->qp, &b->nvme_mrs, r->mr);
	ib_dma_unmap_sg(b->dev, r->sg, r->nents, DMA_FROM_DEVICE);
}

/* Submit, then hand the request and the completions queued for it over. */
static void w3smp_submit_req(struct w3smp_bench *b, struct w3smp_req *r)
{
	struct w3smp_queue *q = &b->q[raw_smp_processor_id() & 1];

	r->send_done = false;
	r->live = r->impl == W3_NVME ? w3smp_submit_nvme(b, r) :
				       w3smp_submit_mrkit(b, r);
	if (!r->live)
		q->n = 0;
	r->ncqe = q->n;
	memcpy(r->cqe, q->cqe, q->n * sizeof(q->cqe[0]));
	q->n = 0;
}

/* Wait until @r reaches @stage; false on abort. */
static bool w3smp_wait_stage(struct w3smp_bench *b, struct w3smp_req *r,
			     unsigned int stage)
{
	/* Acquire: pairs with the other thread's release of the stage. */
	while (smp_load_acquire(&r->stage) != stage)
		if (w3smp_stop(b))
			return false;
	return true;
}

/* Wait until every request is back from the reaper; false on abort. */
static bool w3smp_drain(struct w3smp_bench *b)
{
	unsigned int i;

	for (i = 0; i < W3SMP_REQS; i++)
		if (!w3smp_wait_stage(b, &b->reqs[i], W3SMP_IDLE))
			return false;
	return true;
}

/* Same CPU: complete the requests submitted from @from to @to, in order. */
static void w3smp_complete_range(struct w3smp_bench *b, unsigned int from,
				 unsigned int to)
{
	for (; from != to; from++)
		w3smp_complete(b, &b->reqs[from % W3SMP_REQS]);
}

/*
 * The submitter (and, in the same-CPU variants, the completer too): in
 * round i the implementation and the baseline each run one burst, the
 * implementation first in even rounds.  A burst is timed from its first
 * submission until every I/O of it has completed.  On the wire, one I/O
 * at a time; on the stand-in, W3SMP_REQS submitted, then completed.
 */
static void w3smp_submitter(struct w3smp_bench *b)
{
	unsigned int j, k, p, from, i = 0;
	struct w3smp_req *r;
	u64 t0;

	for (j = 0; j < 2 * b->rounds; j++) {
		p = (j / 2 + j) % 2;	/* 0 1, 1 0, 0 1, ... */
		t0 = ktime_get_ns();
		for (k = 0, from = i; k < b->burst; k++, i++) {
			r = &b->reqs[i % W3SMP_REQS];
			if (b->cross && !w3smp_wait_stage(b, r, W3SMP_IDLE))
				return;
			r->impl = b->pair[p];
			w3smp_submit_req(b, r);
			if (b->cross) {
				/*
				 * Release: the request before the hand-over;
				 * pairs with the reaper's acquire in
				 * w3smp_wait_stage().
				 */
				smp_store_release(&r->stage, W3SMP_POSTED);
			} else if (b->wire) {
				w3smp_complete(b, r);
			} else if (i + 1 - from == W3SMP_REQS ||
				   k + 1 == b->burst) {
				w3smp_complete_range(b, from, i + 1);
				from = i + 1;
			}
		}
		if (b->cross && !w3smp_drain(b))
			return;
		b->bt[(j / 2) * 2 + p] = ktime_get_ns() - t0;
		if (w3smp_stop(b))
			return;
	}
}

/* The reaper on CPU 1: the completion half of every I/O, in order. */
static void w3smp_reaper(struct w3smp_bench *b)
{
	unsigned int i, n = 2 * b->rounds * b->burst;
	struct w3smp_req *r;

	for (i = 0; i < n; i++) {
		r = &b->reqs[i % W3SMP_REQS];
		if (!w3smp_wait_stage(b, r, W3SMP_POSTED))
			return;
		w3smp_complete(b, r);
		/*
		 * Release: the request's fields before the hand-over;
		 * pairs with the submitter's acquire in w3smp_wait_stage().
		 */
		smp_store_release(&r->stage, W3SMP_IDLE);
	}
}

static int w3smp_thread(void *data)
{
	struct w3smp_bench *b = data;
	unsigned int role = raw_smp_processor_id() == 1;

	wait_for_completion(&b->go);
	/* Start when both run: a late wake-up is not the bench's. */
	atomic_inc(&b->ready);
	while (atomic_read(&b->ready) < 1 + b->cross)
		if (w3smp_stop(b))
			break;
	if (!READ_ONCE(b->abort)) {
		if (role)
			w3smp_reaper(b);
		else
			w3smp_submitter(b);
	}
	complete(&b->done[role]);
	return 0;
}

/* One comparison, every round; false on failure. */
static bool w3smp_run(struct w3smp_bench *b)
{
	unsigned int i, nthr = b->cross ? 2 : 1;
	struct task_struct *t;
	bool ok = true;

	b->abort = false;
	atomic_set(&b->ready, 0);
	b->deadline = jiffies + 60 * HZ;
	init_completion(&b->go);
	for (i = 0; i < W3SMP_REQS; i++)
		b->reqs[i].stage = W3SMP_IDLE;
	for (i = 0; i < nthr; i++) {
		init_completion(&b->done[i]);
		t = kthread_create(w3smp_thread, b, "mrkit_w3/%u", i);
		if (IS_ERR(t)) {
			WRITE_ONCE(b->abort, true);
			complete_all(&b->go);
			if (i)
				wait_for_completion(&b->done[0]);
			return false;
		}
		kthread_bind(t, i);
		wake_up_process(t);
	}
	complete_all(&b->go);
	for (i = 0; i < nthr; i++) {
		if (!wait_for_completion_timeout(&b->done[i], 90 * HZ)) {
			WRITE_ONCE(b->abort, true);
			ok = false;
			wait_for_completion(&b->done[i]);
		}
	}
	/* An aborted cross round may leave I/Os submitted: complete them. */
	for (i = 0; b->cross && i < W3SMP_REQS; i++)
		if (b->reqs[i].stage == W3SMP_POSTED)
			w3smp_complete(b, &b->reqs[i]);
	return ok && !b->abort;
}

/* Every request's list: @pages pages of the bench's own. */
static void w3smp_lists(struct w3smp_bench *b, unsigned int pages)
{
	struct w3smp_req *r;
	unsigned int i, j;

	for (i = 0; i < W3SMP_REQS; i++) {
		r = &b->reqs[i];
		sg_init_table(r->sg, pages);
		for (j = 0; j < pages; j++)
			sg_set_page(&r->sg[j], b->pages[j], PAGE_SIZE, 0);
		r->nents = pages;
	}
}

/*
 * One size, one place (wire, same or cross CPU), the bench's variant:
 * each mrkit implementation against the nvme-style path, paired bursts,
 * one line per round.
 */
static int w3smp_measure(struct w3smp_bench *b, unsigned int pages,
			 bool cross)
{
	const char *where = b->wire ? "wire" : cross ? "cross" : "same";
	unsigned int n, i, k;

	w3smp_lists(b, pages);
	b->cross = cross;
	/*
	 * About the same time at every size: fewer I/Os where each maps
	 * more, and fewer across CPUs and on the wire, where each costs
	 * several times more.
	 */
	n = iters / 2 / (pages >= 256 ? 16 : pages >= 16 ? 4 : 1);
	n = b->wire ? n / 100 : cross ? n / 10 : n;
	/*
	 * Bursts long enough to fill the pipeline across CPUs, longer where
	 * the count asks for more rounds than are printed, shorter where it
	 * asks for fewer than W3SMP_MIN_ROUNDS (make check's tiny count).
	 */
	b->burst = cross ? 4 * W3SMP_REQS : pages >= 256 || b->wire ? 4 : 16;
	b->burst = clamp(n / W3SMP_MIN_ROUNDS, 1U,
			 max(b->burst, n / W3SMP_MAX_ROUNDS));
	b->rounds = clamp(n / b->burst, (unsigned int)W3SMP_MIN_ROUNDS,
			  (unsigned int)W3SMP_MAX_ROUNDS);
	if (!cross && !b->wire)
		b->same_depth = max(b->same_depth,
				    min(b->burst, (unsigned int)W3SMP_REQS));
	for (i = 0; i < W3_NR_MRKIT; i++) {
		b->pair[0] = i;
		b->pair[1] = W3_NVME;
		if (!w3smp_run(b) || b->bad) {
			pr_err("MRKIT-VM FAIL: W3SMP %s_%s pages=%u %s: %lu failed cycles\n",
			       where, w3v_names[b->variant], pages,
			       w3smp_names[i], b->bad);
			return -EIO;
		}
		for (k = 0; k < b->rounds; k++)
			pr_info("MRKIT-VM PAIR W3SMP %s_%s %u %s %s %u %llu %llu\n",
				where, w3v_names[b->variant], pages,
				w3smp_names[i], w3smp_names[W3_NVME], b->burst,
				b->bt[2 * k], b->bt[2 * k + 1]);
	}
	return 0;
}

/* The rdma_cm side: record the event, accept a request, wake the waiter. */
static int w3smp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct w3smp_end *e = id->context;
	struct w3smp_bench *b = e->b;
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = W3SMP_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param p = { };
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && e->listens) {
		/* The new id is the server end from now on. */
		e = &b->srv;
		id->context = e;
		qpa.send_cq = e->cq;
		qpa.recv_cq = e->cq;
		ret = rdma_create_qp(id, e->pd, &qpa);
		if (!ret) {
			p.responder_resources = ev->param.conn.initiator_depth;
			p.initiator_depth = ev->param.conn.responder_resources;
			ret = rdma_accept(id, &p);
			if (ret)
				rdma_destroy_qp(id);
		}
		if (ret) {
			e->status = ret;
			complete_all(&e->ev);
			return ret;	/* rdma_cm destroys the id */
		}
		e->id = id;
		return 0;
	}
	e->event = ev->event;
	e->status = ev->status;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		e->connected = true;
	complete_all(&e->ev);
	return 0;
}

/* Wait (bounded) for @e's next event; 0 if it is @want. */
static int w3smp_await(struct w3smp_end *e, int want, const char *what)
{
	if (!wait_for_completion_timeout(&e->ev, 5 * HZ)) {
		pr_err("MRKIT-VM FAIL: W3SMP rdma_cm: no event after %s\n",
		       what);
		return -ETIMEDOUT;
	}
	reinit_completion(&e->ev);
	if (e->event != want || e->status) {
		pr_err("MRKIT-VM FAIL: W3SMP rdma_cm %s: event %d status %d\n",
		       what, e->event, e->status);
		return -EIO;
	}
	return 0;
}

/* PD and CQ of one end, on the device rdma_cm picked. */
static int w3smp_end_res(struct w3smp_end *e, struct ib_device *dev,
			 unsigned int pd_flags)
{
	e->pd = ib_alloc_pd(dev, pd_flags);
	if (IS_ERR(e->pd)) {
		int ret = PTR_ERR(e->pd);

		e->pd = NULL;
		return ret;
	}
	e->cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		int ret = PTR_ERR(e->cq);

		e->cq = NULL;
		return ret;
	}
	return 0;
}

static void w3smp_end_free(struct w3smp_end *e)
{
	if (e->id && e->id->qp)
		rdma_destroy_qp(e->id);
	if (e->id)
		rdma_destroy_id(e->id);
	e->id = NULL;
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
}

static struct rdma_cm_id *w3smp_id(struct w3smp_end *e)
{
	init_completion(&e->ev);
	return rdma_create_id(&init_net, w3smp_cm_handler, e, RDMA_PS_TCP,
			      IB_QPT_RC);
}

/* A listener and a client on @addr, connected; the client's QP for the bench. */
static int w3smp_connect(struct w3smp_bench *b)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(W3SMP_PORT) };
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1, .retry_count = 3 };
	struct rdma_cm_id *id;
	int ret;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	b->lst.b = b;
	b->srv.b = b;
	b->cli.b = b;
	b->lst.listens = true;
	init_completion(&b->srv.ev);
	id = w3smp_id(&b->lst);
	if (IS_ERR(id))
		return PTR_ERR(id);
	b->lst.id = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (ret)
		return ret;
	b->dev = id->device;
	if (!b->dev)
		return -ENODEV;
	ret = w3smp_end_res(&b->srv, b->dev, 0) ?: rdma_listen(id, 4);
	if (ret)
		return ret;

	id = w3smp_id(&b->cli);
	if (IS_ERR(id))
		return PTR_ERR(id);
	b->cli.id = id;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000) ?:
	      w3smp_await(&b->cli, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve_addr");
	if (ret)
		return ret;
	if (id->device != b->dev)
		return -EXDEV;
	ret = rdma_resolve_route(id, 2000) ?:
	      w3smp_await(&b->cli, RDMA_CM_EVENT_ROUTE_RESOLVED,
			  "resolve_route") ?:
	      w3smp_end_res(&b->cli, b->dev, 0);
	if (ret)
		return ret;
	qpa.send_cq = b->cli.cq;
	qpa.recv_cq = b->cli.cq;
	ret = rdma_create_qp(id, b->cli.pd, &qpa) ?: rdma_connect(id, &p) ?:
	      w3smp_await(&b->cli, RDMA_CM_EVENT_ESTABLISHED, "connect") ?:
	      w3smp_await(&b->srv, RDMA_CM_EVENT_ESTABLISHED, "accept");
	if (ret)
		return ret;
	b->qp = id->qp;
	return 0;
}

/* Both ends disconnect (rxe answers only the passive side's), bounded. */
static void w3smp_disconnect(struct w3smp_bench *b)
{
	struct w3smp_end *e[2] = { &b->cli, &b->srv };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (!e[i]->connected)
			continue;
		reinit_completion(&e[i]->ev);
		rdma_disconnect(e[i]->id);
	}
	for (i = 0; i < 2; i++)
		if (e[i]->connected &&
		    !wait_for_completion_timeout(&e[i]->ev, 5 * HZ))
			pr_err("MRKIT-VM FAIL: W3SMP rdma_cm: no DISCONNECTED\n");
}

/* For the wire pass: the server's receives, posted. */
static int w3smp_wire_setup(struct w3smp_bench *b)
{
	struct w3smp_rbuf *rb;
	unsigned int i;
	int ret;

	b->rbufs = kcalloc(W3SMP_RECVS, sizeof(*b->rbufs), GFP_KERNEL);
	if (!b->rbufs)
		return -ENOMEM;
	for (i = 0; i < W3SMP_RECVS; i++) {
		rb = &b->rbufs[i];
		rb->b = b;
		rb->sge.addr = ib_dma_map_single(b->dev, rb->data,
						 sizeof(rb->data),
						 DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(b->dev, rb->sge.addr))
			return -ENOMEM;
		rb->sge.length = sizeof(rb->data);
		rb->sge.lkey = b->srv.pd->local_dma_lkey;
		rb->cqe.done = w3smp_recv_done;
		rb->wr.wr_cqe = &rb->cqe;
		rb->wr.sg_list = &rb->sge;
		rb->wr.num_sge = 1;
		ret = ib_post_recv(b->srv.id->qp, &rb->wr, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/* After the QPs are gone. */
static void w3smp_wire_teardown(struct w3smp_bench *b)
{
	struct w3smp_rbuf *rb;
	unsigned int i;

	for (i = 0; b->rbufs && i < W3SMP_RECVS; i++) {
		rb = &b->rbufs[i];
		if (rb->sge.addr && !ib_dma_mapping_error(b->dev, rb->sge.addr))
			ib_dma_unmap_single(b->dev, rb->sge.addr,
					    sizeof(rb->data), DMA_FROM_DEVICE);
	}
	kfree(b->rbufs);
}

static int w3smp_setup(struct w3smp_bench *b)
{
	static const u32 flags[W3_NR_MRKIT] = {
		0, MRKIT_POOL_LAZY_INV,
		MRKIT_POOL_IO_CACHE,
	};
	struct mrkit_pool_attr attr = {
		.name = "bench_w3", .depth = W3SMP_DEPTH,
		.pages_per_mr = W3SMP_PAGES, .node = NUMA_NO_NODE,
	};
	struct w3smp_req *r;
	unsigned int i;
	int ret;

	INIT_LIST_HEAD(&b->nvme_mrs);
	ret = w3smp_connect(b);
	if (ret) {
		pr_err("MRKIT-VM FAIL: W3SMP loopback connection on %s: %d\n",
		       addr, ret);
		return ret;
	}
	ret = w3smp_wire_setup(b) ?:
	      ib_mr_pool_init(b->qp, &b->nvme_mrs, W3SMP_DEPTH,
			      IB_MR_TYPE_MEM_REG, W3SMP_PAGES, 0);
	if (ret)
		return ret;
	for (i = 0; i < W3_NR_MRKIT; i++) {
		attr.flags = flags[i];
		b->pool[i] = mrkit_pool_create(b->cli.pd, &attr);
		if (IS_ERR(b->pool[i])) {
			ret = PTR_ERR(b->pool[i]);
			b->pool[i] = NULL;
			return ret;
		}
	}
	for (i = 0; i < W3SMP_PAGES; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		if (!b->pages[i])
			return -ENOMEM;
	}
	b->bt = kcalloc(2 * W3SMP_MAX_ROUNDS, sizeof(*b->bt), GFP_KERNEL);
	b->reqs = kcalloc(W3SMP_REQS, sizeof(*b->reqs), GFP_KERNEL);
	if (!b->reqs || !b->bt)
		return -ENOMEM;
	for (i = 0; i < W3SMP_REQS; i++) {
		r = &b->reqs[i];
		r->b = b;
		r->send_sge.addr = (uintptr_t)&r->ksgl;
		r->send_sge.length = sizeof(r->ksgl);
		r->send_sge.lkey = b->cli.pd->local_dma_lkey;
		r->send_cqe.done = w3smp_send_done;
		r->reg_cqe.done = w3smp_reg_done;
		r->inv_cqe.done = w3smp_inv_done;
		mrkit_io_init(&r->io_cached, b->pool[W3_CACHED],
			      MRKIT_PEER_WRITES, w3smp_io_cached_done);
	}
	return 0;
}

/* Pools first, while the stand-in still serves the device (as in UML). */
static void w3smp_teardown_pools(struct w3smp_bench *b)
{
	unsigned int i;

	/* Each request's cached I/O gives its descriptor back. */
	for (i = 0; b->reqs && i < W3SMP_REQS; i++)
		if (b->pool[W3_CACHED] && mrkit_io_release(&b->reqs[i].io_cached, 0))
			b->bad++;
	for (i = 0; i < W3_NR_MRKIT; i++)
		if (b->pool[i])
			mrkit_pool_destroy(b->pool[i]);
	if (b->qp)
		ib_mr_pool_destroy(b->qp, &b->nvme_mrs);
}

static void w3smp_teardown(struct w3smp_bench *b)
{
	unsigned int i;

	w3smp_disconnect(b);
	w3smp_end_free(&b->cli);
	w3smp_end_free(&b->srv);
	w3smp_end_free(&b->lst);
	w3smp_wire_teardown(b);
	for (i = 0; i < W3SMP_PAGES; i++)
		if (b->pages[i])
			__free_page(b->pages[i]);
	kfree(b->reqs);
	kfree(b->bt);
}

/* Nothing left out: every descriptor home, every MR back in its list. */
static bool w3smp_all_home(struct w3smp_bench *b)
{
	struct mrkit_pool_stats st;
	unsigned int i;

	for (i = 0; i < W3_NR_MRKIT; i++) {
		mrkit_pool_get_stats(b->pool[i], &st);
		/* A cached I/O keeps its descriptor until released. */
		if (st.in_use > (i == W3_CACHED ? W3SMP_REQS : 0))
			return false;
	}
	return !b->qp->mrs_used;
}

/*
 * The wire pass, same CPU, before the stand-in: each cycle through rxe
 * (the SEND received by the server end), every completion polled from the
 * CQs and checked.  Local invalidation: nobody sends SEND_WITH_INV here.
 */
static int w3smp_wire(struct w3smp_bench *b)
{
	int ret;

	b->wire = true;
	b->variant = 0;
	ret = w3smp_measure(b, 1, false) ?:
	      w3smp_measure(b, W3SMP_WIRE_PAGES, false);
	b->wire = false;
	return ret;
}

/*
 * After the same-CPU passes: the fenced and the lazy pool had as many
 * descriptors out at once as the passes kept I/Os in flight.
 */
static bool w3smp_same_depth_ok(struct w3smp_bench *b)
{
	struct mrkit_pool_stats st;
	unsigned int i;

	for (i = 0; i < W3_CACHED; i++) {
		mrkit_pool_get_stats(b->pool[i], &st);
		if (st.high_water < b->same_depth) {
			pr_err("MRKIT-VM FAIL: W3SMP same CPU: %s pool held at most %u descriptors, %u I/Os were to be in flight\n",
			       w3smp_names[i], st.high_water, b->same_depth);
			return false;
		}
	}
	return true;
}

static int w3smp_all(struct w3smp_bench *b)
{
	static const unsigned int sizes[] = { 1, 16, 256 };
	unsigned int z, c, v;
	int ret;

	for (c = 0; c < 2; c++) {
		for (v = 0; v < W3V_NR; v++) {
			b->variant = v;
			for (z = 0; z < ARRAY_SIZE(sizes); z++) {
				ret = w3smp_measure(b, sizes[z], c);
				if (ret)
					return ret;
			}
		}
		if (!c && !w3smp_same_depth_ok(b))
			return -EIO;
	}
	if (!w3smp_all_home(b)) {
		pr_err("MRKIT-VM FAIL: W3SMP descriptors not home\n");
		return -EIO;
	}
	return 0;
}

static int __init bench_w3_smp_init(void)
{
	struct w3smp_bench *b;
	u64 t0 = ktime_get_ns();
	int ret;

	if (!cpu_online(0) || !cpu_online(1)) {
		pr_err("MRKIT-VM FAIL: W3SMP needs CPUs 0 and 1 online (%u online)\n",
		       num_online_cpus());
		return -ENODEV;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	ret = w3smp_setup(b);
	if (!ret)
		ret = w3smp_wire(b);
	else
		pr_err("MRKIT-VM FAIL: W3SMP setup: %d\n", ret);
	if (!ret) {
		/* The stand-in send queue, for the measurement only. */
		w3smp_cur = b;
		b->real_post_send = b->dev->ops.post_send;
		b->dev->ops.post_send = w3smp_post_send;
		ret = w3smp_all(b);
	}
	w3smp_teardown_pools(b);
	if (b->real_post_send)
		b->dev->ops.post_send = b->real_post_send;
	w3smp_cur = NULL;
	w3smp_teardown(b);
	if (!ret && b->bad)
		ret = -EIO;
	if (!ret)
		pr_info("MRKIT-VM PASS bench W3SMP: every cycle complete, all descriptors home, %llu ms\n",
			div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC));
	kfree(b);
	return ret;
}

static void __exit bench_w3_smp_exit(void)
{
}

module_init(bench_w3_smp_init);
module_exit(bench_w3_smp_exit);

MODULE_DESCRIPTION("mrkit W3 benchmark (full registration cycle on rxe) on two CPUs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MRKIT);
