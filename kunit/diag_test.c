// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for mrkit's diagnosis: tracepoints and debugfs.
 *
 * mrkit_diag: probes are registered on every mrkit event (the 6.1
 * register_trace_*() API) and the flows of pools, registration chains,
 * remote invalidation and signature checks are run on the fake device;
 * each event must fire with the right fields, and none may fire when
 * nothing happens.  A pool's debugfs file is read back through a debugfs
 * mount made inside the kernel, and its numbers must match a known
 * sequence of operations; it must be gone after the pool is destroyed.
 */

#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/nvme.h>
#include <linux/scatterlist.h>
#include <linux/tracepoint.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "t10pi_oracle.h"
#include "test_util.h"
#include <trace/events/mrkit.h>

enum ev {
	EV_POOL_CREATE, EV_POOL_DESTROY, EV_POOL_GROW, EV_POOL_EXHAUSTED,
	EV_MR_GET, EV_MR_PUT, EV_MR_STALE, EV_MR_REPLACED, EV_REG,
	EV_LOCALINV, EV_READ_INV, EV_REMINV, EV_WC_MR, EV_WC_INV, EV_WC_READ,
	EV_MAP, EV_REMINV_BOGUS, EV_SIG_ERR, EV_POST_ERR, EV_POOL_FENCE,
	EV_POOL_COUNTERS, EV_NR
};

static struct {
	unsigned int n[EV_NR];
	const void *obj[EV_NR];
	u64 val[EV_NR][3];
} rec;

static void rec_one(void *data, const void *obj, u64 a, u64 b, u64 c)
{
	long e = (long)data;

	rec.n[e]++;
	rec.obj[e] = obj;
	rec.val[e][0] = a;
	rec.val[e][1] = b;
	rec.val[e][2] = c;
}

static void pr_pool(void *data, const struct mrkit_pool *pool,
		    unsigned int count)
{
	rec_one(data, pool, count, pool->nr_alloc, 0);
}

static void pr_counters(void *data, const struct mrkit_pool *pool,
			const struct mrkit_pool_stats *st)
{
	/* Before the destroy event, which is not yet recorded. */
	rec_one(data, pool, st->stale_replaced, st->exhausted,
		rec.n[EV_POOL_DESTROY]);
}

static void pr_mr(void *data, const struct mrkit_mr *mr)
{
	rec_one(data, mr, mr->ibmr ? mr->ibmr->rkey : 0, mrkit_mr_state(mr), 0);
}

static void pr_wc(void *data, const struct ib_cq *cq, const struct ib_wc *wc,
		  const struct mrkit_mr *mr)
{
	rec_one(data, mr, wc->status, cq->res.id, 0);
}

static void pr_map(void *data, const struct mrkit_io *io, int nents)
{
	rec_one(data, io, nents, io->nr_mrs, 0);
}

static void pr_bogus(void *data, const struct mrkit_pool *pool, u32 rkey)
{
	rec_one(data, pool, rkey, 0, 0);
}

static void pr_sig(void *data, const struct mrkit_mr *mr,
		   const struct mrkit_pi_result *res)
{
	rec_one(data, mr, res->type, res->sector, 0);
}

static void pr_post(void *data, const struct mrkit_pool *pool, int err,
		    unsigned int posted, unsigned int total)
{
	rec_one(data, pool, err, posted, total);
}

/* Every mrkit event, each with its index as probe data. */
static int diag_init(struct kunit *test)
{
	int ret = 0;

	memset(&rec, 0, sizeof(rec));
	ret |= register_trace_mrkit_pool_create(pr_pool, (void *)EV_POOL_CREATE);
	ret |= register_trace_mrkit_pool_destroy(pr_pool, (void *)EV_POOL_DESTROY);
	ret |= register_trace_mrkit_pool_grow(pr_pool, (void *)EV_POOL_GROW);
	ret |= register_trace_mrkit_pool_exhausted(pr_pool, (void *)EV_POOL_EXHAUSTED);
	ret |= register_trace_mrkit_mr_get(pr_mr, (void *)EV_MR_GET);
	ret |= register_trace_mrkit_mr_put(pr_mr, (void *)EV_MR_PUT);
	ret |= register_trace_mrkit_mr_stale(pr_mr, (void *)EV_MR_STALE);
	ret |= register_trace_mrkit_mr_replaced(pr_mr, (void *)EV_MR_REPLACED);
	ret |= register_trace_mrkit_reg(pr_mr, (void *)EV_REG);
	ret |= register_trace_mrkit_localinv(pr_mr, (void *)EV_LOCALINV);
	ret |= register_trace_mrkit_read_inv(pr_mr, (void *)EV_READ_INV);
	ret |= register_trace_mrkit_reminv(pr_mr, (void *)EV_REMINV);
	ret |= register_trace_mrkit_wc_mr(pr_wc, (void *)EV_WC_MR);
	ret |= register_trace_mrkit_wc_inv(pr_wc, (void *)EV_WC_INV);
	ret |= register_trace_mrkit_wc_read(pr_wc, (void *)EV_WC_READ);
	ret |= register_trace_mrkit_map(pr_map, (void *)EV_MAP);
	ret |= register_trace_mrkit_reminv_bogus(pr_bogus, (void *)EV_REMINV_BOGUS);
	ret |= register_trace_mrkit_sig_err(pr_sig, (void *)EV_SIG_ERR);
	ret |= register_trace_mrkit_post_err(pr_post, (void *)EV_POST_ERR);
	ret |= register_trace_mrkit_pool_fence(pr_pool, (void *)EV_POOL_FENCE);
	ret |= register_trace_mrkit_pool_counters(pr_counters, (void *)EV_POOL_COUNTERS);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return 0;
}

static void diag_exit(struct kunit *test)
{
	unregister_trace_mrkit_pool_create(pr_pool, (void *)EV_POOL_CREATE);
	unregister_trace_mrkit_pool_destroy(pr_pool, (void *)EV_POOL_DESTROY);
	unregister_trace_mrkit_pool_grow(pr_pool, (void *)EV_POOL_GROW);
	unregister_trace_mrkit_pool_exhausted(pr_pool, (void *)EV_POOL_EXHAUSTED);
	unregister_trace_mrkit_mr_get(pr_mr, (void *)EV_MR_GET);
	unregister_trace_mrkit_mr_put(pr_mr, (void *)EV_MR_PUT);
	unregister_trace_mrkit_mr_stale(pr_mr, (void *)EV_MR_STALE);
	unregister_trace_mrkit_mr_replaced(pr_mr, (void *)EV_MR_REPLACED);
	unregister_trace_mrkit_reg(pr_mr, (void *)EV_REG);
	unregister_trace_mrkit_localinv(pr_mr, (void *)EV_LOCALINV);
	unregister_trace_mrkit_read_inv(pr_mr, (void *)EV_READ_INV);
	unregister_trace_mrkit_reminv(pr_mr, (void *)EV_REMINV);
	unregister_trace_mrkit_wc_mr(pr_wc, (void *)EV_WC_MR);
	unregister_trace_mrkit_wc_inv(pr_wc, (void *)EV_WC_INV);
	unregister_trace_mrkit_wc_read(pr_wc, (void *)EV_WC_READ);
	unregister_trace_mrkit_map(pr_map, (void *)EV_MAP);
	unregister_trace_mrkit_reminv_bogus(pr_bogus, (void *)EV_REMINV_BOGUS);
	unregister_trace_mrkit_sig_err(pr_sig, (void *)EV_SIG_ERR);
	unregister_trace_mrkit_post_err(pr_post, (void *)EV_POST_ERR);
	unregister_trace_mrkit_pool_fence(pr_pool, (void *)EV_POOL_FENCE);
	unregister_trace_mrkit_pool_counters(pr_counters, (void *)EV_POOL_COUNTERS);
	tracepoint_synchronize_unregister();
}

static unsigned int total_events(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < EV_NR; i++)
		n += rec.n[i];
	return n;
}

static void diag_quiet_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct mrkit_pool_stats st;
	struct test_io t;

	/* Creation fired; then nothing happens and nothing fires. */
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_CREATE], 1U);
	memset(&rec, 0, sizeof(rec));
	mrkit_pool_get_stats(pool, &st);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_NULL(test, mrkit_pool_find_rkey(pool, 0x12345678));
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, total_events(), 0U);
}

static void diag_pool_events_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "diag", .depth = 2, .max_depth = 4, .node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = mrkit_pool_create(fdev->pd, &attr);
	struct mrkit_mr *a, *b;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_CREATE], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_POOL_CREATE], (void *)pool);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_CREATE][0], 2ULL);
	a = mrkit_mr_get(pool);
	b = mrkit_mr_get(pool);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MR_GET], 2U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_MR_GET], (void *)b);
	KUNIT_EXPECT_EQ(test, rec.val[EV_MR_GET][1], (u64)MRKIT_MR_RESERVED);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_EXHAUSTED], 1U);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_GROW], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_GROW][0], 2ULL);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_GROW][1], 4ULL);
	mrkit_mr_put(a);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MR_PUT], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_MR_PUT], (void *)a);
	mrkit_mr_mark_stale(b);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MR_STALE], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_MR_STALE], (void *)b);
	mrkit_mr_put(b);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MR_REPLACED], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_MR_REPLACED], (void *)b);
	KUNIT_EXPECT_EQ(test, rec.val[EV_MR_REPLACED][0], (u64)b->ibmr->rkey);
	mrkit_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_DESTROY], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_DESTROY][0], 0ULL);
	/* The counters, once, as the destroy began: one replaced, one empty get. */
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_COUNTERS], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_POOL_COUNTERS], (void *)pool);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_COUNTERS][0], 1ULL);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_COUNTERS][1], 1ULL);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_COUNTERS][2], 0ULL);
}

static void diag_chain_events_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_seg segs[4];
	struct scatterlist *sg;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x700000, 20 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MAP], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_MAP], (void *)&t.io);
	KUNIT_EXPECT_EQ(test, rec.val[EV_MAP][0], 1ULL);	/* nents */
	KUNIT_EXPECT_EQ(test, rec.val[EV_MAP][1], 3ULL);	/* segments */
	KUNIT_EXPECT_EQ(test, rec.n[EV_REG], 0U);	/* nothing posted yet */
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_REG], 3U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_REG][0], (u64)segs[2].key);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_LOCALINV], 3U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_LOCALINV][0], (u64)segs[2].key);
	KUNIT_EXPECT_EQ(test, rec.n[EV_WC_INV], 0U);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	/* Only the signaled last LOCAL_INV completes. */
	KUNIT_EXPECT_EQ(test, rec.n[EV_WC_INV], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_WC_INV][0], (u64)IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, rec.val[EV_WC_INV][1],
			(u64)fdev->qp->send_cq->res.id);
	KUNIT_EXPECT_EQ(test, rec.n[EV_WC_MR], 0U);

	/* A flushed REG: wc_mr with the status, and the descriptor stale. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x100000, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 16);
	KUNIT_EXPECT_EQ(test, rec.n[EV_WC_MR], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_WC_MR][0], (u64)IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, rec.n[EV_MR_STALE], 1U);
	/* done() waits for the stale MR's deregistration: the fence event. */
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POOL_FENCE], 1U);
	KUNIT_EXPECT_PTR_EQ(test, rec.obj[EV_POOL_FENCE], (void *)pool);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POOL_FENCE][0], 1ULL);	/* count */
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);

	/* A post failing at its second WR. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x700000, 20 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	fdev->post_fail_wr = 1;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, rec.n[EV_POST_ERR], 1U);
	KUNIT_EXPECT_EQ(test, (int)rec.val[EV_POST_ERR][0], -ENOMEM);
	KUNIT_EXPECT_EQ(test, rec.val[EV_POST_ERR][1], 1ULL);	/* posted */
	KUNIT_EXPECT_EQ(test, rec.val[EV_POST_ERR][2], 4ULL);	/* total */
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	flush_workqueue(mrkit_wq);
}

static void diag_read_reminv_events_test(struct kunit *test)
{
	static const struct fake_dev_attr iw = { .iwarp = true };
	struct fake_dev *fdev = fake_dev_create(test, &iw);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_seg segs[2];
	struct scatterlist *sg;
	struct test_io t;

	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	sg = test_dma_sg(test, 0x100000, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x1000, 7), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_READ_INV], 1U);
	KUNIT_EXPECT_EQ(test, rec.n[EV_REG], 1U);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	/* The READ_WITH_INV chain's signaled last READ. */
	KUNIT_EXPECT_EQ(test, rec.n[EV_WC_READ], 1U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);

	/* Remote invalidation: matched, then bogus. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	sg = test_dma_sg(test, 0x100000, 2 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 2), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, segs[0].key ^ 0x100),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, rec.n[EV_REMINV_BOGUS], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_REMINV_BOGUS][0],
			(u64)(segs[0].key ^ 0x100));
	KUNIT_EXPECT_EQ(test, rec.n[EV_REMINV], 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_remote_inv(&t.io, segs[0].key), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_REMINV], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_REMINV][0], (u64)segs[0].key);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_LOCALINV], 0U);
}

static void diag_sig_events_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {
		.pi_frpl = 64, .kernel_cap_flags = IBK_INTEGRITY_HANDOVER,
	};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "dsig", .depth = 1, .flags = MRKIT_POOL_INTEGRITY,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = test_pool(test, fdev->pd, &attr);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct scatterlist dsg, psg;
	struct mrkit_pi_result res;
	struct mrkit_pi pi;
	struct test_io t;
	u8 *data, *prot, *wire, *wirep;

	data = kunit_kzalloc(test, 4096, GFP_KERNEL);
	prot = kunit_kzalloc(test, 64, GFP_KERNEL);
	wire = kunit_kzalloc(test, 4096, GFP_KERNEL);
	wirep = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, data && prot && wire && wirep);
	KUNIT_ASSERT_EQ(test, mrkit_pi_from_nvme(&pi, true,
						 NVME_RW_PRINFO_PRCHK_GUARD, 1,
						 512, 0, 0, 0xffff, 1000), 0);
	KUNIT_ASSERT_EQ(test, mrkit_pi_generate(&pi, true, data, 4096, prot), 0);
	sg_init_one(&dsg, data, 4096);
	sg_init_one(&psg, prot, 64);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(&fdev->ibdev, &dsg, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(&fdev->ibdev, &psg, 1,
					    DMA_BIDIRECTIONAL), 1);
	tio_init(&t, pool, MRKIT_PEER_READS);
	KUNIT_ASSERT_EQ(test, mrkit_io_map_pi(&t.io, &dsg, 1, &psg, 1, &pi), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, fake_pi_transfer(t.io.mrs->ibmr, true, wire, wirep,
					       4096, IB_SIG_BAD_GUARD + 1, 6), 0);
	KUNIT_EXPECT_EQ(test, rec.n[EV_SIG_ERR], 0U);
	KUNIT_EXPECT_EQ(test, mrkit_io_check_pi(&t.io, &res), -EILSEQ);
	KUNIT_EXPECT_EQ(test, rec.n[EV_SIG_ERR], 1U);
	KUNIT_EXPECT_EQ(test, rec.val[EV_SIG_ERR][0], (u64)MRKIT_PI_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, rec.val[EV_SIG_ERR][1], 1006ULL);
	KUNIT_ASSERT_EQ(test, mrkit_io_complete(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
}

/* Read a pool's debugfs stats through a debugfs mount of our own. */
static int diag_read_stats(const char *dir, char *buf, size_t len)
{
	struct file_system_type *fs = get_fs_type("debugfs");
	struct vfsmount *mnt;
	struct file *f;
	char path[64];
	loff_t pos = 0;
	ssize_t n;

	if (!fs)
		return -ENODEV;
	mnt = vfs_kern_mount(fs, 0, "debugfs", NULL);
	put_filesystem(fs);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	snprintf(path, sizeof(path), "mrkit/%s/stats", dir);
	f = file_open_root_mnt(mnt, path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		mntput(mnt);
		return PTR_ERR(f);
	}
	n = kernel_read(f, buf, len - 1, &pos);
	fput(f);
	mntput(mnt);
	if (n < 0)
		return n;
	buf[n] = 0;
	return 0;
}

static long stat_of(struct kunit *test, const char *buf, const char *key)
{
	char k[40];
	const char *p;
	long v = -1;

	snprintf(k, sizeof(k), "\n%s: ", key);
	p = strstr(buf, k);
	KUNIT_ASSERT_NOT_NULL_MSG(test, p, "no %s in stats", key);
	if (sscanf(p + strlen(k), "%ld", &v) != 1)
		KUNIT_FAIL(test, "bad value for %s", key);
	return v;
}

static void diag_debugfs_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool_attr attr = {
		.name = "dbgfs", .depth = 3, .max_depth = 6,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = mrkit_pool_create(fdev->pd, &attr);
	struct mrkit_mr *m[4];
	char *buf;
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	buf = kunit_kzalloc(test, 2048, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	/* A known sequence: take 3, run dry once, grow, put 1, retire 1. */
	for (i = 0; i < 3; i++)
		m[i] = mrkit_mr_get(pool);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrkit_mr_get(pool)), -EAGAIN);
	flush_workqueue(mrkit_wq);
	m[3] = mrkit_mr_get(pool);
	mrkit_mr_put(m[0]);
	mrkit_mr_mark_stale(m[1]);
	KUNIT_ASSERT_EQ(test, diag_read_stats("dbgfs", buf, 2048), 0);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "depth"), 3L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "max_depth"), 6L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "allocated"), 6L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "in_use"), 2L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "high_water"), 4L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "exhausted"), 1L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "grown"), 3L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "stale"), 1L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "state_FREE"), 3L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "state_RESERVED"), 2L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "state_STALE"), 1L);
	mrkit_mr_put(m[1]);
	flush_workqueue(mrkit_wq);
	KUNIT_ASSERT_EQ(test, diag_read_stats("dbgfs", buf, 2048), 0);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "stale"), 0L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "stale_replaced"), 1L);
	KUNIT_EXPECT_EQ(test, stat_of(test, buf, "in_use"), 2L);
	mrkit_mr_put(m[2]);
	mrkit_mr_put(m[3]);
	mrkit_pool_destroy(pool);
	/* Removed with the pool. */
	KUNIT_EXPECT_EQ(test, diag_read_stats("dbgfs", buf, 2048), -ENOENT);
}

static struct kunit_case mrkit_diag_cases[] = {
	KUNIT_CASE(diag_quiet_test),
	KUNIT_CASE(diag_pool_events_test),
	KUNIT_CASE(diag_chain_events_test),
	KUNIT_CASE(diag_read_reminv_events_test),
	KUNIT_CASE(diag_sig_events_test),
	KUNIT_CASE(diag_debugfs_test),
	{}
};

static struct kunit_suite mrkit_diag_suite = {
	.name = "mrkit_diag",
	.init = diag_init,
	.exit = diag_exit,
	.test_cases = mrkit_diag_cases,
};

kunit_test_suites(&mrkit_diag_suite);
