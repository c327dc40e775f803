// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench_rdma: the benchmarks that need a real provider.
 *
 * W2 on rxe and siw: mrkit_io_map + release against a bare ib_map_mr_sg()
 * with the provider's own map_mr_sg and set_page (bench_w2_run(), shared
 * with the fake device).
 *
 * W3, one I/O's full registration cycle on rxe, as nvme-rdma's read
 * command does it (the peer writes the data): DMA-map the list, get a
 * descriptor, map it, build the REG_MR chained to the caller's SEND (the
 * command, whose keyed SGL carries the key), post, take the SEND's
 * completion, then on the response either invalidate locally (a signaled
 * LOCAL_INV and its completion) or take the peer's remote invalidation
 * (SEND_WITH_INV: nothing left to invalidate), put the descriptor back
 * and unmap.  Four variants: the list DMA-mapped by mrkit (MRKIT_MAP_DMA)
 * or by the caller (MRKIT_MAP_4K, as the converted nvme-rdma maps), each
 * with local or remote invalidation.  Compared:
 *  - mrkit with the rkey fence (the default): mrkit_io_map_seg() (one
 *    keyed segment, as nvme-rdma's), mrkit_io_post(), then
 *    mrkit_io_remote_inv() if the peer invalidated, and
 *    mrkit_io_complete();
 *  - mrkit in a MRKIT_POOL_LAZY_INV pool (the rdma_rw and iSER scheme);
 *  - mrkit with per-I/O descriptor caching (MRKIT_POOL_IO_CACHE): one
 *    I/O, initialized once, mapped again and again;
 *  - the baseline, nvme-rdma's own path written after its design
 *    (bench/bench_w3.h).
 * Each mrkit implementation against the baseline in paired bursts
 * (bench.h).  With per-I/O caching, W1's figure for it comes from here
 * too: its pool cost per I/O is mrkit_mr_get+put less what caching saves
 * on a whole cycle (a cached against a fenced cycle), against
 * ib_mr_pool_get+put, all four in one rotation ("PAIRD").
 *
 * Descriptors, MRs, page lists and rkeys are rxe's.  The send queue is
 * not: for the length of the test the device's post_send is replaced by
 * a stand-in that accepts the chain and queues a success completion for
 * each signaled WR, delivered by the bench's "poll" after the post
 * returns, as a CQ would.  rxe's packet processing would be the same for
 * every implementation and would only dilute the ratios; what is measured
 * is what the ULP's registration code costs.  In a separate untimed pass,
 * allocations per I/O are counted by probes on the kmem tracepoints
 * (kmalloc, kmem_cache_alloc) for this thread, with rdma_rw's cycle
 * (rdma_rw_ctx_init/_wrs/_destroy with ib_core.force_mr=1, which
 * allocates per I/O) proving the probes see allocations; and mrkit's
 * locked RMWs where its counting is compiled in.
 *
 * W3PROF says where one cycle's time goes without a PMU: while one
 * implementation runs its cycle over and over, a timer samples the
 * instruction pointer it interrupted; the samples, summed per function,
 * split the measured ns per I/O.  UML's timer runs at HZ, so a profile
 * takes seconds: bench_iters / 2500 of them (40 at make bench's
 * 100,000), at least 1.5, so that a sanitizer build, whose time goes
 * mostly to its checks and to code run with interrupts off, still samples
 * mrkit's own functions.  A sample taken while interrupts were off is
 * delivered when they come back on, with no instruction pointer: it is
 * counted as "(irqs off)".
 *
 * W3ICOUNT counts instead of sampling: scripts/host/icount.py runs the UML
 * kernel under gdb, stops at the entry of one cycle of each
 * implementation and single-steps to its end, attributing every
 * instruction to its function.  The same build gives the same count on
 * every run, so two builds' counts differ by what changed between them,
 * where timed ratios move with the machine.
 */

#include <kunit/test.h>
#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <linux/sort.h>
#include <asm/irq_regs.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>
#include <rdma/rw.h>
#include <trace/events/kmem.h>

#include "rdma_fixture.h"
#include "test_util.h"
#include "bench.h"
#include "bench/bench_w3.h"

static void bench_w2_rdma_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct ib_device *dev = mrk_device(kind);
	struct ib_pd *pd;

	KUNIT_ASSERT_NOT_NULL(test, dev);
	pd = ib_alloc_pd(dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	bench_w2_run(test, mrk_kind_name(kind), pd);
	ib_dealloc_pd(pd);
}

#define W3_MAX_PAGES	256
#define W3_PENDING	16
#define W3_CTXS		16

/* The implementations; W3_GET_PUT_* are W1's, for the PAIRD figure. */
enum w3_impl {
	W3_FENCE, W3_LAZY, W3_CACHED, W3_NVME, W3_RDMA_RW,
	W3_GET_PUT_MRKIT, W3_GET_PUT_IB, W3_NR
};

static const char * const w3_names[W3_NR] = {
	"mrkit_fence", "mrkit_lazy", "mrkit_cached", "nvme_style",
	"rdma_rw_force_mr", "mrkit_get_put", "ib_mr_pool_get_put",
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

struct w3 {
	struct kunit		*test;
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	struct mrkit_pool	*pool[W3_NR_MRKIT];
	struct list_head	nvme_mrs;
	struct scatterlist	sg[W3_MAX_PAGES];
	struct page		*pages[W3_MAX_PAGES];
	int			nents;
	unsigned int		variant;
	/* the send-queue stand-in */
	int			(*real_post_send)(struct ib_qp *qp,
						  const struct ib_send_wr *wr,
						  const struct ib_send_wr **bad);
	struct ib_cqe		*pending[W3_PENDING];
	unsigned int		npending;
	unsigned long		wrs;
	/* one I/O of each kind */
	struct mrkit_io		io;
	bool			io_done;
	struct mrkit_io		io_cached;	/* initialized once */
	bool			cached_done;
	struct rdma_rw_ctx	rw;
	struct ib_reg_wr	reg_wr;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inv_cqe;
	bool			inv_done;
	/* the caller's SEND: the command, carrying the key */
	struct ib_send_wr	send;
	struct ib_sge		send_sge;
	struct ib_cqe		send_cqe;
	struct bench_ksgl	ksgl;
	unsigned long		bad;
};

static struct w3 *w3_cur;	/* the bench the stand-in serves */

static int w3_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	struct w3 *b = w3_cur;

	for (; wr; wr = wr->next) {
		b->wrs++;
		if (!(wr->send_flags & IB_SEND_SIGNALED))
			continue;
		if (b->npending == W3_PENDING) {
			*bad = wr;
			return -ENOMEM;
		}
		b->pending[b->npending++] = wr->wr_cqe;
	}
	return 0;
}

/* Deliver the queued completions, oldest first, as a CQ poll would. */
static void w3_poll(struct w3 *b)
{
	struct ib_wc wc = { .status = IB_WC_SUCCESS, .qp = b->qp };
	unsigned int i;

	for (i = 0; i < b->npending; i++) {
		wc.wr_cqe = b->pending[i];
		wc.wr_cqe->done(b->cq, &wc);
	}
	b->npending = 0;
}

static void w3_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static void w3_nvme_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct w3 *b = container_of(wc->wr_cqe, struct w3, inv_cqe);

	b->inv_done = true;
}

static void w3_io_done(struct mrkit_io *io, int status)
{
	struct w3 *b = container_of(io, struct w3, io);

	b->io_done = !status;
}

static void w3_io_cached_done(struct mrkit_io *io, int status)
{
	struct w3 *b = container_of(io, struct w3, io_cached);

	b->cached_done = !status;
}

static void w3_mrkit(struct w3 *b, enum w3_impl impl)
{
	bool caller = b->variant & W3V_CALLER_MAPPED;
	struct mrkit_io *io = &b->io;
	bool *done = &b->io_done;
	u32 flags = MRKIT_MAP_DMA;
	int count = b->nents;
	struct mrkit_seg seg;

	if (impl == W3_CACHED) {
		io = &b->io_cached;
		done = &b->cached_done;
	} else {
		mrkit_io_init(io, b->pool[impl], MRKIT_PEER_WRITES, w3_io_done);
	}
	*done = false;
	if (caller) {
		count = ib_dma_map_sg(b->dev, b->sg, b->nents, DMA_FROM_DEVICE);
		flags = MRKIT_MAP_4K;
	}
	if (mrkit_io_map_seg(io, b->sg, count, flags, &seg) != 1)
		goto out_release;
	bench_ksgl_set(&b->ksgl, seg.addr, seg.length, seg.key);
	bench_send_init(&b->send, &b->send_cqe, &b->send_sge);
	if (mrkit_io_post(io, b->qp, &b->send, NULL))
		goto out_release;
	w3_poll(b);			/* the SEND */
	if ((b->variant & W3V_REMOTE_INV) &&
	    mrkit_io_remote_inv(io, bench_ksgl_key(&b->ksgl)))
		b->bad++;
	if (mrkit_io_complete(io, b->qp))
		b->bad++;
	w3_poll(b);			/* the LOCAL_INV, if any */
	if (!*done)
		b->bad++;
	goto out_unmap;

out_release:
	b->bad++;
	mrkit_io_release(io, 0);
out_unmap:
	if (caller)
		ib_dma_unmap_sg(b->dev, b->sg, b->nents, DMA_FROM_DEVICE);
}

static void w3_rdma_rw(struct w3 *b)
{
	struct ib_send_wr *first;
	int n;

	bench_send_init(&b->send, &b->send_cqe, &b->send_sge);
	n = rdma_rw_ctx_init(&b->rw, b->qp, 1, b->sg, b->nents, 0, 0x10000,
			     0x1234, DMA_TO_DEVICE);
	if (n <= 0) {
		b->bad++;
		return;
	}
	if (n < 2)	/* no REG_MR + WRITE: force_mr is off */
		b->bad++;
	first = rdma_rw_ctx_wrs(&b->rw, b->qp, 1, NULL, &b->send);
	if (ib_post_send(b->qp, first, NULL))
		b->bad++;
	w3_poll(b);
	rdma_rw_ctx_destroy(&b->rw, b->qp, 1, b->sg, b->nents, DMA_TO_DEVICE);
}

static void w3_nvme(struct w3 *b)
{
	struct ib_send_wr inv = {};
	struct ib_mr *mr;
	int count;

	count = ib_dma_map_sg(b->dev, b->sg, b->nents, DMA_FROM_DEVICE);
	mr = bench_nvme_reg(b->qp, &b->nvme_mrs, b->sg, count, &b->reg_wr,
			    &b->reg_cqe, &b->ksgl);
	if (!mr) {
		b->bad++;
		goto out_unmap;
	}
	bench_send_init(&b->send, &b->send_cqe, &b->send_sge);
	b->reg_wr.wr.next = &b->send;
	if (ib_post_send(b->qp, &b->reg_wr.wr, NULL))
		b->bad++;
	w3_poll(b);			/* the SEND */
	if (b->variant & W3V_REMOTE_INV) {
		/* The peer invalidated; it must have named this MR's key. */
		if (bench_ksgl_key(&b->ksgl) != mr->rkey)
			b->bad++;
		goto out_put;
	}
	b->inv_done = false;
	bench_nvme_inv_init(&inv, &b->inv_cqe, mr->rkey);
	if (ib_post_send(b->qp, &inv, NULL))
		b->bad++;
	w3_poll(b);
	if (!b->inv_done)
		b->bad++;
out_put:
	ib_mr_pool_put(b->qp, &b->nvme_mrs, mr);
out_unmap:
	ib_dma_unmap_sg(b->dev, b->sg, b->nents, DMA_FROM_DEVICE);
}

/* W1's operations, on the same device and pools. */
static void w3_get_put(struct w3 *b, enum w3_impl impl)
{
	void *mr;

	if (impl == W3_GET_PUT_MRKIT) {
		mr = mrkit_mr_get(b->pool[W3_FENCE]);
		b->bad += IS_ERR_OR_NULL(mr);
		mrkit_mr_put(mr);
	} else {
		mr = ib_mr_pool_get(b->qp, &b->nvme_mrs);
		b->bad += !mr;
		ib_mr_pool_put(b->qp, &b->nvme_mrs, mr);
	}
}

static void w3_once(struct w3 *b, enum w3_impl impl)
{
	switch (impl) {
	case W3_FENCE:
	case W3_LAZY:
	case W3_CACHED:
		w3_mrkit(b, impl);
		break;
	case W3_RDMA_RW:
		w3_rdma_rw(b);
		break;
	case W3_NVME:
		w3_nvme(b);
		break;
	default:
		w3_get_put(b, impl);
		break;
	}
}

static u64 w3_burst(void *ctx, unsigned int impl, unsigned int iters)
{
	struct w3 *b = ctx;
	unsigned int i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < iters; i++)
		w3_once(b, impl);
	return ktime_get_ns() - t0;
}

/* Allocation counting: kmem tracepoint probes, this thread only. */
static struct task_struct *w3_count_task;
static unsigned long w3_allocs;

static void w3_probe_kmalloc(void *data, unsigned long call_site,
			     const void *ptr, size_t req, size_t alloc,
			     gfp_t gfp, int node)
{
	if (current == READ_ONCE(w3_count_task))
		w3_allocs++;
}

static void w3_probe_cache(void *data, unsigned long call_site,
			   const void *ptr, struct kmem_cache *s, gfp_t gfp,
			   int node)
{
	if (current == READ_ONCE(w3_count_task))
		w3_allocs++;
}

static void w3_setup(struct kunit *test, struct w3 *b)
{
	static const u32 flags[W3_NR_MRKIT] = {
		0, MRKIT_POOL_LAZY_INV,
		MRKIT_POOL_IO_CACHE,
	};
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_rdma_ctxs = W3_CTXS },
	};
	struct mrkit_pool_attr attr = {
		.name = "bench3", .depth = W3_CTXS,
		.pages_per_mr = W3_MAX_PAGES, .node = NUMA_NO_NODE,
	};
	unsigned int i;

	b->test = test;
	INIT_LIST_HEAD(&b->nvme_mrs);
	b->dev = mrk_device(MRK_RXE);
	KUNIT_ASSERT_NOT_NULL(test, b->dev);
	b->pd = ib_alloc_pd(b->dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->pd));
	b->cq = ib_alloc_cq(b->dev, NULL, 16, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->cq));
	qpa.send_cq = b->cq;
	qpa.recv_cq = b->cq;
	b->qp = ib_create_qp(b->pd, &qpa);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->qp));
	KUNIT_ASSERT_EQ_MSG(test, ib_mr_pool_init(b->qp, &b->nvme_mrs, W3_CTXS,
						  IB_MR_TYPE_MEM_REG,
						  W3_MAX_PAGES, 0), 0,
			    "nvme-style MR pool");
	for (i = 0; i < W3_NR_MRKIT; i++) {
		attr.flags = flags[i];
		b->pool[i] = mrkit_pool_create(b->pd, &attr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b->pool[i]);
	}
	mrkit_io_init(&b->io_cached, b->pool[W3_CACHED], MRKIT_PEER_WRITES,
		      w3_io_cached_done);
	for (i = 0; i < W3_MAX_PAGES; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b->pages[i]);
	}
	b->send_sge.addr = (uintptr_t)&b->ksgl;
	b->send_sge.length = sizeof(b->ksgl);
	b->send_sge.lkey = b->pd->local_dma_lkey;
	b->send_cqe.done = w3_send_done;
	b->inv_cqe.done = w3_nvme_inv_done;
	b->reg_cqe.done = w3_send_done;
}

/*
 * Tear down what w3_setup() made, while the stand-in still serves the
 * device: lazily kept keys die with the pools (deregistration).
 */
static void w3_teardown(struct w3 *b)
{
	unsigned int i;

	/* The cached I/O gives its descriptor back. */
	KUNIT_EXPECT_EQ(b->test, mrkit_io_release(&b->io_cached, 0), 0);
	for (i = W3_NR_MRKIT; i--;) {
		KUNIT_EXPECT_EQ(b->test, in_use(b->pool[i]), 0U);
		mrkit_pool_destroy(b->pool[i]);
	}
	for (i = 0; i < W3_MAX_PAGES; i++)
		__free_page(b->pages[i]);
	ib_mr_pool_destroy(b->qp, &b->nvme_mrs);
	ib_destroy_qp(b->qp);
	ib_free_cq(b->cq);
	ib_dealloc_pd(b->pd);
}

static void w3_sg(struct w3 *b, unsigned int pages)
{
	unsigned int i;

	sg_init_table(b->sg, pages);
	for (i = 0; i < pages; i++)
		sg_set_page(&b->sg[i], b->pages[i], PAGE_SIZE, 0);
	b->nents = pages;
}

/* Fewer I/Os counted where each maps more pages. */
static unsigned int w3_scale(unsigned int pages)
{
	return pages >= 256 ? 16 : pages >= 16 ? 4 : 1;
}

/*
 * The untimed pass of one variant and size: allocations, WRs and locked
 * RMWs per I/O (it also warms every path).
 */
static void w3_count(struct kunit *test, struct w3 *b, unsigned int pages)
{
	unsigned int n = 1000 / w3_scale(pages), i, it;
	unsigned long allocs[W3_NR] = {}, wrs[W3_NR] = {}, rmw[W3_NR] = {};
	bool rw = !b->variant;	/* rdma_rw: the probes' positive control */
	char cfg[48];

	WRITE_ONCE(w3_count_task, current);
	for (i = 0; i <= W3_RDMA_RW; i++) {
		unsigned long w0 = b->wrs, r0 = bench_rmw_ops();

		if ((i == W3_RDMA_RW && !rw) || (i == W3_CACHED && W3_NR_MRKIT < 3))
			continue;
		w3_allocs = 0;
		for (it = 0; it < n; it++)
			w3_once(b, i);
		allocs[i] = w3_allocs;
		wrs[i] = b->wrs - w0;
		rmw[i] = bench_rmw_ops() - r0;
	}
	WRITE_ONCE(w3_count_task, NULL);
	/* A probe that counts nothing proves nothing. */
	if (rw)
		KUNIT_EXPECT_GE_MSG(test, allocs[W3_RDMA_RW], (unsigned long)n,
				    "the allocation probes see nothing");
	KUNIT_EXPECT_EQ_MSG(test, allocs[W3_FENCE] + allocs[W3_LAZY] +
			    allocs[W3_CACHED], 0UL,
			    "mrkit allocated on the I/O path");
	for (i = 0; i <= W3_RDMA_RW; i++) {
		if ((i == W3_RDMA_RW && !rw) || (i == W3_CACHED && W3_NR_MRKIT < 3))
			continue;
		snprintf(cfg, sizeof(cfg), "%s pages=%u", w3v_names[b->variant],
			 pages);
		kunit_info(test, "BENCH W3ALLOC %s impl=%s allocs_per_io=%lu.%03lu wrs_per_io=%lu.%03lu\n",
			   cfg, w3_names[i], allocs[i] / n,
			   (allocs[i] % n) * 1000 / n, wrs[i] / n,
			   (wrs[i] % n) * 1000 / n);
		if (BENCH_RMW_COUNTED && pages == 1 && i < W3_NVME)
			kunit_info(test, "ATOMICS W3 %s %s per_io=%lu.%03lu\n",
				   w3v_names[b->variant], w3_names[i],
				   rmw[i] / n, (rmw[i] % n) * 1000 / n);
	}
	/*
	 * Not a timing, so asserted, per one-descriptor I/O with local
	 * invalidation.  With the fence: pop; the state cmpxchg REGISTERED
	 * -> INVALIDATING; push: 3 (the event counts are per CPU).  Lazily:
	 * pop; REGISTERED -> FREE; push: 3.  Kept by its I/O (the fence):
	 * only REGISTERED -> INVALIDATING: 1.  The owner's plain stores
	 * where no WR of the descriptor can complete behind it
	 * (mrkit_mr_own(), mrkit_mr_put_own()): map and hand-out before the
	 * post, and the settle and put or keep after a chain completed
	 * successfully; in between a flush may mark the descriptor STALE, so
	 * those changes are cmpxchgs.
	 */
	if (BENCH_RMW_COUNTED && !(b->variant & W3V_REMOTE_INV)) {
		KUNIT_EXPECT_EQ(test, rmw[W3_FENCE], 3UL * n);
		KUNIT_EXPECT_EQ(test, rmw[W3_LAZY], 3UL * n);
		/* The first cycle may take its descriptor from the pool. */
		KUNIT_EXPECT_GE(test, rmw[W3_CACHED], 1UL * n);
		KUNIT_EXPECT_LE(test, rmw[W3_CACHED], 1UL * n + 1);
	}
	/*
	 * The peer invalidated the key: the REG_MR and every WR before it
	 * executed, so the put or keep after mrkit_io_complete() is a plain
	 * store.  With the fence: pop; REGISTERED -> RESERVED; push: 3.
	 * Kept by its I/O: only REGISTERED -> RESERVED: 1.
	 */
	if (BENCH_RMW_COUNTED && (b->variant & W3V_REMOTE_INV)) {
		KUNIT_EXPECT_EQ(test, rmw[W3_FENCE], 3UL * n);
		KUNIT_EXPECT_GE(test, rmw[W3_CACHED], 1UL * n);
		KUNIT_EXPECT_LE(test, rmw[W3_CACHED], 1UL * n + 1);
	}
}

/*
 * A W3 bench with the stand-in send queue in place of the device's, for
 * the length of one test; w3_end() gives the device its post_send back,
 * so no assertion may stop a test between the two.
 */
static struct w3 *w3_begin(struct kunit *test)
{
	struct w3 *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	w3_setup(test, b);
	w3_cur = b;
	b->real_post_send = b->dev->ops.post_send;
	b->dev->ops.post_send = w3_post_send;
	return b;
}

static void w3_end(struct w3 *b)
{
	w3_teardown(b);
	b->dev->ops.post_send = b->real_post_send;
	w3_cur = NULL;
}

static void bench_w3_test(struct kunit *test)
{
	static const unsigned int sizes[] = { 1, 16, 256 };
	struct bench_run r = { .nimpl = 2 };
	unsigned int v, z, i;
	struct w3 *b;

	b = w3_begin(test);
	/* No assertion from here on: the device must get its post_send back. */
	KUNIT_EXPECT_EQ(test, register_trace_kmalloc(w3_probe_kmalloc, NULL), 0);
	KUNIT_EXPECT_EQ(test, register_trace_kmem_cache_alloc(w3_probe_cache,
							      NULL), 0);
	for (v = 0; v < W3V_NR; v++) {
		b->variant = v;
		for (z = 0; z < ARRAY_SIZE(sizes); z++) {
			w3_sg(b, sizes[z]);
			w3_count(test, b, sizes[z]);
			for (i = 0; i < W3_NR_MRKIT; i++) {
				r.impl[0] = i;
				r.impl[1] = W3_NVME;
				if (bench_plan(test, &r)) {
					b->bad++;
					continue;
				}
				bench_rounds(&r, w3_burst, b);
				bench_print(test, &r, "W3", w3v_names[v],
					    sizes[z], w3_names[i], "nvme_style");
			}
		}
	}
	/*
	 * W1 with per-I/O caching: mrkit_mr_get+put less what caching saves
	 * on a whole cycle, against ib_mr_pool_get+put.  One page, the
	 * caller-mapped list invalidated by the peer: the cycle with the
	 * least else in it.
	 */
	b->variant = W3V_CALLER_MAPPED | W3V_REMOTE_INV;
	w3_sg(b, 1);
	r.nimpl = 4;
	r.impl[0] = W3_CACHED;
	r.impl[1] = W3_FENCE;
	r.impl[2] = W3_GET_PUT_MRKIT;
	r.impl[3] = W3_GET_PUT_IB;
	if (!bench_plan(test, &r)) {
		bench_rounds(&r, w3_burst, b);
		bench_print(test, &r, "W1", "io_cache", 1, "mrkit_cached",
			    "ib_mr_pool");
	}
	unregister_trace_kmem_cache_alloc(w3_probe_cache, NULL);
	unregister_trace_kmalloc(w3_probe_kmalloc, NULL);
	tracepoint_synchronize_unregister();

	KUNIT_EXPECT_EQ_MSG(test, b->bad, 0UL,
			    "a cycle failed (rdma_rw without ib_core.force_mr=1?)");
	w3_end(b);
}

/* W3PROF: the sampling profile of one implementation's cycle. */
#define PROF_MAX_SAMPLES	8192
#define PROF_MAX_FNS		256
#define PROF_PRINT_FNS		24

struct prof_fn {
	char		name[KSYM_NAME_LEN];
	unsigned int	hits;
};

struct prof {
	struct hrtimer	timer;
	unsigned long	*ip;
	unsigned int	n;
	struct prof_fn	*fns;
	unsigned int	nfns;
};

static enum hrtimer_restart prof_sample(struct hrtimer *t)
{
	struct prof *p = container_of(t, struct prof, timer);
	struct pt_regs *regs = get_irq_regs();

	if (p->n < PROF_MAX_SAMPLES)
		p->ip[p->n++] = regs ? instruction_pointer(regs) : 0;
	hrtimer_forward_now(t, ns_to_ktime(TICK_NSEC));
	return HRTIMER_RESTART;
}

static int prof_by_hits(const void *a, const void *b)
{
	const struct prof_fn *x = a, *y = b;

	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

/* Sum the samples per function, most hit first. */
static void prof_fold(struct prof *p)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned int i, j;

	p->nfns = 0;
	for (i = 0; i < p->n; i++) {
		if (p->ip[i])
			sprint_symbol_no_offset(buf, p->ip[i]);
		if (!p->ip[i] || !strncmp(buf, "0x", 2))
			strscpy(buf, "(irqs off)", sizeof(buf));
		for (j = 0; j < p->nfns; j++)
			if (!strcmp(p->fns[j].name, buf))
				break;
		if (j == p->nfns) {
			if (j == PROF_MAX_FNS)
				j--;	/* the last slot takes the tail */
			else
				p->nfns++;
			strscpy(p->fns[j].name, buf, sizeof(p->fns[j].name));
			p->fns[j].hits = 0;
		}
		p->fns[j].hits++;
	}
	sort(p->fns, p->nfns, sizeof(*p->fns), prof_by_hits, NULL);
}

/* Profile @impl's cycle for @ms; print its samples per function. */
static void w3_profile(struct w3 *b, struct prof *p, enum w3_impl impl,
		       unsigned int ms)
{
	u64 t0, ns, ios = 0;
	unsigned int i, mrkit = 0;

	for (i = 0; i < 1000; i++)		/* warm */
		w3_once(b, impl);
	p->n = 0;
	hrtimer_init(&p->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	p->timer.function = prof_sample;
	t0 = ktime_get_ns();
	hrtimer_start(&p->timer, ns_to_ktime(TICK_NSEC), HRTIMER_MODE_REL);
	do {
		for (i = 0; i < 256; i++)
			w3_once(b, impl);
		ios += 256;
		ns = ktime_get_ns() - t0;
	} while (ns < (u64)ms * NSEC_PER_MSEC && p->n < PROF_MAX_SAMPLES);
	hrtimer_cancel(&p->timer);
	prof_fold(p);
	kunit_info(b->test, "BENCH PROFILE W3 %s pages=%d %s ios=%llu elapsed_ns=%llu samples=%u\n",
		   w3v_names[b->variant], b->nents, w3_names[impl], ios, ns,
		   p->n);
	for (i = 0; i < p->nfns; i++) {
		if (!strncmp(p->fns[i].name, "mrkit_", 6))
			mrkit += p->fns[i].hits;
		if (i < PROF_PRINT_FNS)
			kunit_info(b->test, "BENCH PROFILE W3 %s pages=%d %s fn=%s hits=%u\n",
				   w3v_names[b->variant], b->nents,
				   w3_names[impl], p->fns[i].name,
				   p->fns[i].hits);
	}
	/* A profile that sampled nothing, or missed mrkit's code, says nothing. */
	KUNIT_EXPECT_GT_MSG(b->test, p->n, 0U, "no sample in %u ms", ms);
	if (impl < W3_NR_MRKIT)
		KUNIT_EXPECT_GT_MSG(b->test, mrkit, 0U,
				    "%u samples, none in mrkit's functions",
				    p->n);
}

/*
 * The one-page cycle, profiled: locally invalidated, each implementation;
 * caller-mapped and remotely invalidated (the converted nvme-rdma's common
 * path), the fence and the baseline.
 */
static void bench_w3_profile_test(struct kunit *test)
{
	static const struct {
		unsigned int variant;
		enum w3_impl impl;
	} runs[] = {
		{ 0, W3_FENCE }, { 0, W3_LAZY }, { 0, W3_CACHED }, { 0, W3_NVME },
		{ W3V_CALLER_MAPPED | W3V_REMOTE_INV, W3_FENCE },
		{ W3V_CALLER_MAPPED | W3V_REMOTE_INV, W3_NVME },
	};
	unsigned int ms = max(bench_iters / 25 * 10, 1500U), i;
	struct prof *p;
	struct w3 *b;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->ip = kunit_kcalloc(test, PROF_MAX_SAMPLES, sizeof(*p->ip),
			      GFP_KERNEL);
	p->fns = kunit_kcalloc(test, PROF_MAX_FNS, sizeof(*p->fns), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->ip);
	KUNIT_ASSERT_NOT_NULL(test, p->fns);
	b = w3_begin(test);
	/* No assertion from here on: the device must get its post_send back. */
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		b->variant = runs[i].variant;
		w3_sg(b, 1);
		w3_profile(b, p, runs[i].impl, ms);
	}
	KUNIT_EXPECT_EQ(test, b->bad, 0UL);
	w3_end(b);
}

/*
 * W3ICOUNT: one cycle of @impl, for scripts/host/icount.py.  A debugger
 * stops here and single-steps until it returns, counting the instructions
 * each function executes: a figure with no noise, where the timed
 * figures have some.  Out of line, so that its arguments are in
 * registers when it is entered; they are checked, so they stay there.
 */
static noinline void w3_icount_cycle(struct w3 *b, enum w3_impl impl,
				     unsigned int variant, unsigned int pages)
{
	if (variant != b->variant || pages != b->nents)
		b->bad++;
	w3_once(b, impl);
}

/* Counts one W3ICOUNT cycle of each implementation at @pages pages. */
static unsigned int w3_icount_size(struct w3 *b, unsigned int variant,
				   unsigned int pages)
{
	static const enum w3_impl impls[] = {
		W3_FENCE, W3_LAZY, W3_CACHED, W3_NVME,
	};
	unsigned int i, k;

	b->variant = variant;
	w3_sg(b, pages);
	for (i = 0; i < ARRAY_SIZE(impls); i++) {
		for (k = 0; k < 64; k++)
			w3_once(b, impls[i]);
		w3_icount_cycle(b, impls[i], variant, b->nents);
	}
	return ARRAY_SIZE(impls);
}

/*
 * Every variant at one and 16 pages, and the local invalidation at 256
 * (where the walk of a long list, not the fixed cost, decides), each
 * implementation: warmed, then one cycle through w3_icount_cycle().  Run
 * alone, without a debugger, it checks that every such cycle works.
 */
static void bench_w3_icount_test(struct kunit *test)
{
	unsigned int v, cycles = 0;
	struct w3 *b;

	b = w3_begin(test);
	/* No assertion from here on: the device must get its post_send back. */
	for (v = 0; v < W3V_NR; v++) {
		cycles += w3_icount_size(b, v, 1);
		cycles += w3_icount_size(b, v, 16);
	}
	cycles += w3_icount_size(b, 0, W3_MAX_PAGES);
	kunit_info(test, "BENCH ICOUNT cycles=%u\n", cycles);
	KUNIT_EXPECT_EQ(test, b->bad, 0UL);
	w3_end(b);
}

static struct kunit_case mrkit_bench_rdma_cases[] = {
	KUNIT_CASE_PARAM(bench_w2_rdma_test, mrk_kind_gen_params),
	KUNIT_CASE(bench_w3_test),
	KUNIT_CASE(bench_w3_profile_test),
	KUNIT_CASE(bench_w3_icount_test),
	{}
};

static struct kunit_suite mrkit_bench_rdma_suite = {
	.name = "mrkit_bench_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_bench_rdma_cases,
};

kunit_test_suites(&mrkit_bench_rdma_suite);
