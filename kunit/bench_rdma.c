// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_bench_rdma: the benchmarks that need a real provider.
 *
 * W2 on rxe and siw: mrkit_io_map + release against a bare ib_map_mr_sg()
 * and ib_sg_to_pages() with a no-op callback, with the provider's own
 * map_mr_sg and set_page (bench_w2_run(), shared with the fake device).
 *
 * W3, one I/O's full registration cycle on rxe: get a descriptor, DMA-map
 * and map the list, build the REG_MR chain ending in the caller's SEND,
 * post it, take the SEND's completion, build and post the invalidation,
 * take its completion, put the descriptor back and unmap.  Side by side:
 *  - mrkit with the fence (the default): mrkit_io_map, mrkit_io_segs,
 *    mrkit_io_post, mrkit_io_complete (a LOCAL_INV, then done);
 *  - mrkit in a MRKIT_POOL_LAZY_INV pool: the key is invalidated by a
 *    LOCAL_INV chained before the descriptor's next REG_MR (the rdma_rw
 *    and iSER scheme);
 *  - rdma_rw_ctx_init() + rdma_rw_ctx_wrs() + rdma_rw_ctx_destroy() with
 *    ib_core.force_mr=1 (the boot must have it; the test fails otherwise),
 *    a target-side RDMA WRITE chained to the same SEND, lazy LOCAL_INV;
 *  - an nvme-rdma-style hand-rolled path: ib_mr_pool_get, ib_dma_map_sg,
 *    ib_update_fast_reg_key, ib_map_mr_sg, one ib_reg_wr chained to the
 *    SEND, a signaled LOCAL_INV, ib_mr_pool_put, ib_dma_unmap_sg.
 * Descriptors, MRs, page lists and rkeys are rxe's.  The send queue is
 * not: for the length of the test the device's post_send is replaced by
 * a stand-in that accepts the chain and queues a success completion for
 * each signaled WR, delivered by the bench's "poll" after the post
 * returns, as a CQ would.  rxe's packet processing would be the same for
 * every implementation and would only dilute the ratios; what is measured
 * is what the ULP's registration code costs.  Allocations per I/O are
 * counted by probes on the kmem tracepoints (kmalloc, kmem_cache_alloc)
 * for this thread, in a separate untimed pass.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <rdma/mr_pool.h>
#include <rdma/mrkit.h>
#include <rdma/rw.h>
#include <trace/events/kmem.h>

#include "mrkit_priv.h"
#include "rdma_fixture.h"
#include "test_util.h"
#include "bench.h"

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

enum w3_impl { W3_MRKIT, W3_MRKIT_LAZY, W3_RDMA_RW, W3_NVME, W3_NR };

static const char * const w3_names[W3_NR] = {
	"mrkit_fence", "mrkit_lazy", "rdma_rw_force_mr", "nvme_style",
};

struct w3 {
	struct kunit		*test;
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	struct mrkit_pool	*pool[2];	/* fence, lazy */
	struct list_head	nvme_mrs;
	struct scatterlist	sg[W3_MAX_PAGES];
	struct page		*pages[W3_MAX_PAGES];
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
	struct rdma_rw_ctx	rw;
	struct ib_reg_wr	reg_wr;
	struct ib_send_wr	inv_wr;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inv_cqe;
	bool			inv_done;
	/* the caller's SEND, carrying the keys */
	struct ib_send_wr	send;
	struct ib_sge		send_sge;
	struct ib_cqe		send_cqe;
	struct mrkit_seg	segs[4];
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

static void w3_mrkit(struct w3 *b, struct mrkit_pool *pool, int nents)
{
	int n;

	b->io_done = false;
	mrkit_io_init(&b->io, pool, MRKIT_PEER_WRITES, w3_io_done);
	n = mrkit_io_map(&b->io, b->sg, nents, MRKIT_MAP_DMA);
	if (n <= 0 || mrkit_io_segs(&b->io, b->segs, ARRAY_SIZE(b->segs)) != 1 ||
	    mrkit_io_post(&b->io, b->qp, &b->send, NULL)) {
		b->bad++;
		mrkit_io_release(&b->io, 0);
		return;
	}
	w3_poll(b);			/* the SEND */
	if (mrkit_io_complete(&b->io, b->qp))
		b->bad++;
	w3_poll(b);			/* the LOCAL_INV, if any */
	if (!b->io_done)
		b->bad++;
}

static void w3_rdma_rw(struct w3 *b, int nents)
{
	struct ib_send_wr *first;

	int n = rdma_rw_ctx_init(&b->rw, b->qp, 1, b->sg, nents, 0, 0x10000,
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
	rdma_rw_ctx_destroy(&b->rw, b->qp, 1, b->sg, nents, DMA_TO_DEVICE);
}

static void w3_nvme(struct w3 *b, int nents)
{
	struct ib_mr *mr = ib_mr_pool_get(b->qp, &b->nvme_mrs);
	int count, n;

	if (!mr) {
		b->bad++;
		return;
	}
	count = ib_dma_map_sg(b->dev, b->sg, nents, DMA_FROM_DEVICE);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, b->sg, count, NULL, SZ_4K);
	if (n < count) {
		b->bad++;
		goto out;
	}
	b->reg_wr.wr.opcode = IB_WR_REG_MR;
	b->reg_wr.wr.wr_cqe = &b->reg_cqe;
	b->reg_wr.wr.num_sge = 0;
	b->reg_wr.wr.send_flags = 0;
	b->reg_wr.wr.next = &b->send;
	b->reg_wr.mr = mr;
	b->reg_wr.key = mr->rkey;
	b->reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	b->segs[0].addr = mr->iova;	/* the keyed SGL descriptor */
	b->segs[0].length = mr->length;
	b->segs[0].key = mr->rkey;
	if (ib_post_send(b->qp, &b->reg_wr.wr, NULL))
		b->bad++;
	w3_poll(b);
	b->inv_done = false;
	b->inv_wr.next = NULL;
	b->inv_wr.wr_cqe = &b->inv_cqe;
	b->inv_wr.opcode = IB_WR_LOCAL_INV;
	b->inv_wr.num_sge = 0;
	b->inv_wr.send_flags = IB_SEND_SIGNALED;
	b->inv_wr.ex.invalidate_rkey = mr->rkey;
	if (ib_post_send(b->qp, &b->inv_wr, NULL))
		b->bad++;
	w3_poll(b);
	if (!b->inv_done)
		b->bad++;
out:
	ib_mr_pool_put(b->qp, &b->nvme_mrs, mr);
	ib_dma_unmap_sg(b->dev, b->sg, nents, DMA_FROM_DEVICE);
}

static void w3_once(struct w3 *b, enum w3_impl impl, int nents)
{
	switch (impl) {
	case W3_MRKIT:
		w3_mrkit(b, b->pool[0], nents);
		break;
	case W3_MRKIT_LAZY:
		w3_mrkit(b, b->pool[1], nents);
		break;
	case W3_RDMA_RW:
		w3_rdma_rw(b, nents);
		break;
	default:
		w3_nvme(b, nents);
		break;
	}
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
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_rdma_ctxs = W3_CTXS },
	};
	struct mrkit_pool_attr attr = {
		.depth = W3_CTXS, .pages_per_mr = W3_MAX_PAGES,
		.node = NUMA_NO_NODE,
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
	attr.name = "bench3f";
	b->pool[0] = mrkit_pool_create(b->pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b->pool[0]);
	attr.name = "bench3l";
	attr.flags = MRKIT_POOL_LAZY_INV;
	b->pool[1] = mrkit_pool_create(b->pd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b->pool[1]);
	for (i = 0; i < W3_MAX_PAGES; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b->pages[i]);
	}
	b->send.opcode = IB_WR_SEND;
	b->send.send_flags = IB_SEND_SIGNALED;
	b->send.wr_cqe = &b->send_cqe;
	b->send.sg_list = &b->send_sge;
	b->send.num_sge = 1;
	b->send_sge.addr = (uintptr_t)b->segs;
	b->send_sge.length = sizeof(b->segs[0]);
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

	mrkit_pool_destroy(b->pool[1]);
	mrkit_pool_destroy(b->pool[0]);
	for (i = 0; i < W3_MAX_PAGES; i++)
		__free_page(b->pages[i]);
	ib_mr_pool_destroy(b->qp, &b->nvme_mrs);
	ib_destroy_qp(b->qp);
	ib_free_cq(b->cq);
	ib_dealloc_pd(b->pd);
}

static int w3_sg(struct w3 *b, unsigned int pages)
{
	unsigned int i;

	sg_init_table(b->sg, pages);
	for (i = 0; i < pages; i++)
		sg_set_page(&b->sg[i], b->pages[i], PAGE_SIZE, 0);
	return pages;
}

static void bench_w3_test(struct kunit *test)
{
	static const unsigned int sizes[] = { 1, 16, 256 };
	unsigned int reps = bench_nreps();
	u64 s[W3_NR][BENCH_MAX_REPS], med[W3_NR], mn[W3_NR], mx[W3_NR];
	unsigned long allocs[W3_NR], wrs[W3_NR], rmw[W3_NR];
	unsigned int z, r, i, it, count_iters = 1000;
	struct w3 *b;
	char cfg[48];
	int nents;

	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	w3_setup(test, b);

	/* The stand-in send queue, for this test only. */
	w3_cur = b;
	b->real_post_send = b->dev->ops.post_send;
	b->dev->ops.post_send = w3_post_send;

	/* No assertion from here on: the device must get its post_send back. */
	KUNIT_EXPECT_EQ(test, register_trace_kmalloc(w3_probe_kmalloc, NULL), 0);
	KUNIT_EXPECT_EQ(test, register_trace_kmem_cache_alloc(w3_probe_cache,
							      NULL), 0);
	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		nents = w3_sg(b, sizes[z]);
		/* Counting pass, untimed; it also warms every path. */
		WRITE_ONCE(w3_count_task, current);
		for (i = 0; i < W3_NR; i++) {
			unsigned long w0 = b->wrs, r0 = mrkit_rmw_ops;

			w3_allocs = 0;
			for (it = 0; it < count_iters; it++)
				w3_once(b, i, nents);
			allocs[i] = w3_allocs;
			wrs[i] = b->wrs - w0;
			rmw[i] = mrkit_rmw_ops - r0;
		}
		WRITE_ONCE(w3_count_task, NULL);
		/* A probe that counts nothing proves nothing: rdma_rw's
		 * per-I/O kcalloc must be seen.
		 */
		KUNIT_EXPECT_GE_MSG(test, allocs[W3_RDMA_RW], count_iters,
				    "the allocation probes see nothing");
		KUNIT_EXPECT_EQ_MSG(test, allocs[W3_MRKIT] + allocs[W3_MRKIT_LAZY],
				    0UL, "mrkit allocated on the I/O path");

		for (r = 0; r < reps; r++) {
			for (i = 0; i < W3_NR; i++) {
				u64 t0 = ktime_get_ns();

				for (it = 0; it < bench_iters; it++)
					w3_once(b, i, nents);
				s[i][r] = ktime_get_ns() - t0;
			}
		}
		for (i = 0; i < W3_NR; i++)
			bench_stats(s[i], reps, bench_iters, &med[i], &mn[i],
				    &mx[i]);
		snprintf(cfg, sizeof(cfg), "dev=rxe pages=%u", sizes[z]);
		for (i = 0; i < W3_NR; i++) {
			bench_line(test, "W3", cfg, w3_names[i], med[i], mn[i],
				   mx[i], med[W3_RDMA_RW], "rdma_rw");
			kunit_info(test, "BENCH W3ALLOC %s impl=%s allocs_per_io=%lu.%03lu wrs_per_io=%lu.%03lu\n",
				   cfg, w3_names[i], allocs[i] / count_iters,
				   allocs[i] % count_iters, wrs[i] / count_iters,
				   wrs[i] % count_iters);
		}
		/*
		 * mrkit's locked read-modify-writes, counted by its own
		 * annotations (mrkit_rmw()); one descriptor per I/O here.
		 * The other paths' are in ib_core, which is not annotated.
		 */
		if (sizes[z] == 1)
			for (i = W3_MRKIT; i <= W3_MRKIT_LAZY; i++)
				kunit_info(test, "ATOMICS W3 %s per_io=%lu.%03lu\n",
					   w3_names[i], rmw[i] / count_iters,
					   rmw[i] % count_iters);
		/*
		 * Not a timing, so asserted, per one-descriptor I/O.  With
		 * the fence: pop; the state cmpxchg REGISTERED ->
		 * INVALIDATING; the local_inv counter; push: 4.  Lazily:
		 * pop; REGISTERED -> FREE; push: 3.  The owner's plain
		 * stores where no WR of the descriptor can complete behind
		 * it (mrkit_mr_own(), mrkit_mr_put_own()): map and hand-out
		 * before the post, and the settle and put after a chain
		 * completed successfully; in between a flush may mark the
		 * descriptor STALE, so those changes are cmpxchgs.
		 */
		KUNIT_EXPECT_EQ(test, rmw[W3_MRKIT], 4UL * count_iters);
		KUNIT_EXPECT_EQ(test, rmw[W3_MRKIT_LAZY], 3UL * count_iters);
	}
	unregister_trace_kmem_cache_alloc(w3_probe_cache, NULL);
	unregister_trace_kmalloc(w3_probe_kmalloc, NULL);
	tracepoint_synchronize_unregister();

	KUNIT_EXPECT_EQ_MSG(test, b->bad, 0UL,
			    "a cycle failed (rdma_rw without ib_core.force_mr=1?)");
	KUNIT_EXPECT_EQ(test, in_use(b->pool[0]), 0U);
	KUNIT_EXPECT_EQ(test, in_use(b->pool[1]), 0U);
	w3_teardown(b);
	b->dev->ops.post_send = b->real_post_send;
	w3_cur = NULL;
}

static struct kunit_case mrkit_bench_rdma_cases[] = {
	KUNIT_CASE_PARAM(bench_w2_rdma_test, mrk_kind_gen_params),
	KUNIT_CASE(bench_w3_test),
	{}
};

static struct kunit_suite mrkit_bench_rdma_suite = {
	.name = "mrkit_bench_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_bench_rdma_cases,
};

kunit_test_suites(&mrkit_bench_rdma_suite);
