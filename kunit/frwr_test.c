// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites for mrkit's registration path.
 *
 * mrkit_frwr: on the fake device, table-driven over scatterlist layouts
 * (segments, pages, NO_SPLIT refusals), exact WR chains (opcodes, order,
 * keys, access, signaling, iova) for one MR, split MRs, every iova mode,
 * invalidate-then-reregister and READ_WITH_INV; a post failure injected
 * at every WR index with accounting back to the start; flushes making
 * descriptors stale; bad input.
 *
 * mrkit_frwr_rdma: on rxe and siw, a multi-MR buffer is advertised to the
 * peer in a SEND, written and read back by the peer through every
 * segment and compared byte for byte; after the LOCAL_INV chain each old
 * rkey is proven dead from a connection of its own; a list of exactly one
 * descriptor's pages takes one, and moved off alignment two, whatever the
 * provider's page list would take; rkeys change on every
 * reuse; a local sink is filled by mrkit's RDMA READ (READ_WITH_INV on
 * siw, which leaves the sink invalid).
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "rdma_fixture.h"
#include "test_util.h"

#define P	PAGE_SIZE
#define MAX_ENTS	8
#define MAX_SEGS	4

struct layout_case {
	const char *name;
	int nents;
	struct { u64 addr; u32 len; } ent[MAX_ENTS];
	int nsegs;		/* or a negative errno */
	struct mrkit_seg seg[MAX_SEGS];
	u32 pages[MAX_SEGS];	/* pages each MR maps */
	int no_split_err;	/* what NO_SPLIT gives */
};

/* The pool below has 8-page MRs. */
static const struct layout_case layout_cases[] = {
	{ "contiguous", 1, { { 0x100000, 5 * P } }, 1,
	  { { 0x100000, 5 * P } }, { 5 }, 0 },
	{ "page_entries", 6, { { 0x200000, P }, { 0x201000, P }, { 0x202000, P },
			       { 0x203000, P }, { 0x204000, P }, { 0x205000, P } },
	  1, { { 0x200000, 6 * P } }, { 6 }, 0 },
	{ "aligned_discontiguous", 3,
	  { { 0x300000, P }, { 0x310000, P }, { 0x320000, 2 * P } },
	  1, { { 0x300000, 4 * P } }, { 4 }, 0 },
	{ "unaligned_head_tail", 1, { { 0x400100, 3 * P } }, 1,
	  { { 0x400100, 3 * P } }, { 4 }, 0 },
	{ "coalesced_unaligned", 3,
	  { { 0x900000, 0x800 }, { 0x900800, 0x1000 }, { 0x901800, 0x800 } },
	  1, { { 0x900000, 0x2000 } }, { 2 }, 0 },
	{ "mid_list_hole", 3,
	  { { 0x500000, P }, { 0x501000, 0x800 }, { 0x600000, P } }, 2,
	  { { 0x500000, P + 0x800 }, { 0x600000, P } }, { 2, 1 }, -EINVAL },
	{ "too_long", 1, { { 0x700000, 20 * P } }, 3,
	  { { 0x700000, 8 * P }, { 0x708000, 8 * P }, { 0x710000, 4 * P } },
	  { 8, 8, 4 }, -EINVAL },
	{ "too_long_unaligned", 1, { { 0x800200, 16 * P } }, 3,
	  { { 0x800200, 8 * P - 0x200 }, { 0x808000, 8 * P },
	    { 0x810000, 0x200 } }, { 8, 8, 1 }, -EINVAL },
	{ "full_then_gap", 2, { { 0xa00000, 8 * P }, { 0xb00800, 0x100 } }, 2,
	  { { 0xa00000, 8 * P }, { 0xb00800, 0x100 } }, { 8, 1 }, -EINVAL },
	{ "zero_length_entry", 2, { { 0xc00000, P }, { 0xc01000, 0 } },
	  -EINVAL, {}, {}, -EINVAL },
};

static void layout_desc(const struct layout_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(layout, layout_cases, layout_desc);

static struct scatterlist *layout_sg(struct kunit *test,
				     const struct layout_case *c)
{
	struct scatterlist *sgl;
	int i;

	sgl = kunit_kcalloc(test, c->nents, sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, c->nents);
	for (i = 0; i < c->nents; i++) {
		sg_dma_address(&sgl[i]) = c->ent[i].addr;
		sg_dma_len(&sgl[i]) = c->ent[i].len;
	}
	return sgl;
}

static void frwr_layout_test(struct kunit *test)
{
	const struct layout_case *c = test->param_value;
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct scatterlist *sgl = layout_sg(test, c);
	struct mrkit_seg segs[MAX_SEGS];
	struct test_io t;
	struct mrkit_mr *mr;
	int n, i;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	n = mrkit_io_map(&t.io, sgl, c->nents, 0);
	KUNIT_ASSERT_EQ(test, n, c->nsegs);
	if (n < 0) {
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		return;
	}
	/* Each MR maps exactly the pages expected. */
	for (mr = t.io.mrs, i = 0; mr; mr = mr->io_next, i++)
		KUNIT_EXPECT_EQ(test, to_fake_mr(mr->ibmr)->npages, c->pages[i]);
	/* Mapping alone exposes nothing: no WR, no rkey change. */
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, 0U);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, MAX_SEGS), n);
	for (mr = t.io.mrs, i = 0; i < n; mr = mr->io_next, i++) {
		KUNIT_EXPECT_EQ(test, segs[i].addr, c->seg[i].addr);
		KUNIT_EXPECT_EQ(test, segs[i].length, c->seg[i].length);
		/* The keys the hand-out gave the MR. */
		KUNIT_EXPECT_EQ(test, segs[i].key, mr->ibmr->rkey);
		KUNIT_EXPECT_EQ(test, segs[i].lkey, mr->ibmr->lkey);
	}
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	/* The same list with splitting forbidden. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	n = mrkit_io_map(&t.io, sgl, c->nents, MRKIT_MAP_NO_SPLIT);
	KUNIT_EXPECT_EQ(test, n, c->no_split_err ?: 1);
	if (n > 0)
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);

	/*
	 * Map and hand out in one call: the one segment the two calls give,
	 * or their refusal with nothing held and the segment not written.
	 */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	memset(segs, 0xa5, sizeof(segs[0]));
	n = mrkit_io_map_seg(&t.io, sgl, c->nents, 0, &segs[0]);
	KUNIT_EXPECT_EQ(test, n, c->no_split_err ?: 1);
	if (n < 0) {
		KUNIT_EXPECT_EQ(test, segs[0].key, 0xa5a5a5a5U);
		KUNIT_EXPECT_EQ(test, segs[0].addr, 0xa5a5a5a5a5a5a5a5ULL);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		return;
	}
	mr = t.io.mrs;
	KUNIT_EXPECT_EQ(test, to_fake_mr(mr->ibmr)->npages, c->pages[0]);
	KUNIT_EXPECT_EQ(test, segs[0].addr, c->seg[0].addr);
	KUNIT_EXPECT_EQ(test, segs[0].length, c->seg[0].length);
	KUNIT_EXPECT_EQ(test, segs[0].key, mr->ibmr->rkey);
	KUNIT_EXPECT_EQ(test, segs[0].lkey, mr->ibmr->lkey);
	/* Handed out once: asking again gives the same key. */
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &segs[1], 1), 1);
	KUNIT_EXPECT_EQ(test, segs[1].key, segs[0].key);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, 0U);
	/* A mapped I/O is not idle. */
	KUNIT_EXPECT_EQ(test, mrkit_io_map_seg(&t.io, sgl, c->nents, 0,
					       &segs[1]), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
}

static void frwr_chain_one_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct mrkit_seg seg;
	struct test_io t;
	struct fake_wr_rec *r;
	u32 key_before;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x10000, 3 * P),
					   1, 0), 1);
	key_before = t.io.mrs->ibmr->rkey;
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
	/* Rotated at hand-out, by one step of the key byte. */
	KUNIT_EXPECT_EQ(test, seg.key, ib_inc_rkey(key_before));
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 1U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, 2U);
	KUNIT_EXPECT_EQ(test, fdev->nr_posts, 1U);	/* one ib_post_send */
	r = &fdev->recs[0];
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, r->key, seg.key);
	KUNIT_EXPECT_EQ(test, r->access,
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, r->send_flags, 0);
	KUNIT_EXPECT_EQ(test, r->iova, 0x10000ULL);
	KUNIT_EXPECT_EQ(test, r->length, (u64)3 * P);
	KUNIT_EXPECT_EQ(test, fdev->recs[1].opcode, IB_WR_SEND);

	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 1U);
	r = &fdev->recs[2];
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, r->key, seg.key);
	KUNIT_EXPECT_EQ(test, r->send_flags, IB_SEND_SIGNALED);
	/* Not done until the LOCAL_INV completes. */
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

static void frwr_chain_split_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct mrkit_seg segs[4];
	struct test_io t;
	int i;

	tio_init(&t, pool, MRKIT_PEER_READS);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x700000, 20 * P), 1, 0),
			3);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 3U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, 4U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, fdev->recs[i].opcode, IB_WR_REG_MR);
		KUNIT_EXPECT_EQ(test, fdev->recs[i].key, segs[i].key);
		KUNIT_EXPECT_EQ(test, fdev->recs[i].iova, segs[i].addr);
		KUNIT_EXPECT_EQ(test, fdev->recs[i].access,
				IB_ACCESS_REMOTE_READ);
		KUNIT_EXPECT_EQ(test, fdev->recs[i].send_flags, 0);
	}
	KUNIT_EXPECT_EQ(test, fdev->recs[3].opcode, IB_WR_SEND);

	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, 7U);
	KUNIT_EXPECT_EQ(test, fdev->nr_posts, 2U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, fdev->recs[4 + i].opcode, IB_WR_LOCAL_INV);
		KUNIT_EXPECT_EQ(test, fdev->recs[4 + i].key, segs[i].key);
		KUNIT_EXPECT_EQ(test, fdev->recs[4 + i].send_flags,
				i == 2 ? IB_SEND_SIGNALED : 0);
	}
	/* The SEND's completion is the caller's; deliver it, then the INVs. */
	fake_complete(fdev, IB_WC_SUCCESS, 4);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	fake_complete(fdev, IB_WC_SUCCESS, 2);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	fake_complete(fdev, IB_WC_SUCCESS, 1);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

static void frwr_iova_access_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	/* The access a direction grants, and how mrkit DMA-maps its data. */
	static const struct {
		enum mrkit_dir dir;
		int access;
		enum dma_data_direction dma;
	} dirs[] = {
		{ MRKIT_PEER_WRITES, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		  DMA_FROM_DEVICE },
		{ MRKIT_PEER_READS, IB_ACCESS_REMOTE_READ, DMA_TO_DEVICE },
		{ MRKIT_PEER_BIDI, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ, DMA_BIDIRECTIONAL },
		{ MRKIT_LOCAL_SINK, IB_ACCESS_LOCAL_WRITE, DMA_FROM_DEVICE },
	};
	struct mrkit_seg segs[3];
	struct test_io t;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		tio_init(&t, pool, dirs[i].dir);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
						   test_dma_sg(test, 0x12345000, P), 1,
						   0), 1);
		KUNIT_EXPECT_EQ(test, t.io.access, dirs[i].access);
		KUNIT_EXPECT_EQ(test, t.io.dma_dir, dirs[i].dma);
		KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	}
	tio_init(&t, pool, 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x1000, P), 1, 0),
			-EINVAL);

	/* Explicit access: the ibv_reg_mr(3) rule. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_access(&t.io, IB_ACCESS_REMOTE_WRITE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_access(&t.io, IB_ACCESS_REMOTE_ATOMIC |
						  IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_set_access(&t.io, IB_ACCESS_LOCAL_WRITE |
						  IB_ACCESS_REMOTE_ATOMIC), 0);

	/* iova: DMA address, zero-based, tag in the high 32 bits. */
	tio_init(&t, pool, MRKIT_PEER_READS);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x12345000, 12 * P), 1,
					   MRKIT_MAP_IOVA_ZERO), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 3), 2);
	KUNIT_EXPECT_EQ(test, segs[0].addr, 0ULL);
	KUNIT_EXPECT_EQ(test, segs[1].addr, 0ULL);
	KUNIT_EXPECT_EQ(test, segs[1].length, 4 * P);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);

	tio_init(&t, pool, MRKIT_PEER_READS);
	mrkit_io_set_tag(&t.io, 0xabcd1234);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
					   test_dma_sg(test, 0x7712345000ULL, 12 * P),
					   1, MRKIT_MAP_IOVA_TAG), 2);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 3), 2);
	KUNIT_EXPECT_EQ(test, segs[0].addr, 0xabcd123412345000ULL);
	KUNIT_EXPECT_EQ(test, segs[1].addr, 0xabcd12341234d000ULL);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

static void frwr_rkey_rotation_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 1, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x40000, P);
	u32 keys[256], before;
	struct mrkit_seg seg;
	struct test_io t;
	int i, j;

	/* Mapped but never handed out: the key does not move. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	before = t.io.mrs->ibmr->rkey;
	KUNIT_ASSERT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_EXPECT_EQ(test, t.io.mrs->ibmr->rkey, before);
	KUNIT_ASSERT_EQ(test, mrkit_io_release(&t.io, 0), 0);

	for (i = 0; i < 256; i++) {
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		fake_complete(fdev, IB_WC_SUCCESS, 8);
		KUNIT_ASSERT_EQ(test, t.rec.calls, 1);
		keys[i] = seg.key;
		fdev->nr_recs = 0;
		fdev->next_complete = 0;
	}
	for (i = 0; i < 256; i++)
		for (j = i + 1; j < 256; j++)
			if (keys[i] == keys[j])
				KUNIT_FAIL(test, "rkey 0x%x repeats: uses %d and %d",
					   keys[i], i, j);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

static void frwr_lazy_reregister_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 1, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x40000, P);
	struct mrkit_pool_stats st;
	struct mrkit_seg seg1, seg2;
	struct test_io t;

	/* Nothing registered yet: a lazy release leaves no key valid. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_release(&t.io, MRKIT_RELEASE_LAZY), 0);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.lazy_released, 0ULL);

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg1, 1), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	/* A live rkey cannot be released without asking for lazy. */
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.lazy_released, 0ULL);
	KUNIT_ASSERT_EQ(test, mrkit_io_release(&t.io, MRKIT_RELEASE_LAZY), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.lazy_released, 1ULL);

	/* The next registration of that descriptor invalidates first. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg2, 1), 1);
	KUNIT_EXPECT_NE(test, seg2.key, seg1.key);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 2U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, 5U);
	KUNIT_EXPECT_EQ(test, fdev->recs[2].opcode, IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, fdev->recs[2].key, seg1.key);
	KUNIT_EXPECT_EQ(test, fdev->recs[2].send_flags, 0);
	KUNIT_EXPECT_EQ(test, fdev->recs[3].opcode, IB_WR_REG_MR);
	KUNIT_EXPECT_EQ(test, fdev->recs[3].key, seg2.key);
	KUNIT_EXPECT_EQ(test, fdev->recs[4].opcode, IB_WR_SEND);
	KUNIT_EXPECT_EQ(test, fdev->nr_posts, 2U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 16);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* Invalidated, not left valid: the count stays. */
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.lazy_released, 1ULL);
}

static void frwr_read_inv_test(struct kunit *test)
{
	struct fake_dev_attr fattr = { .iwarp = true };
	struct fake_dev *fdev;
	struct mrkit_pool *pool;
	struct test_io t;
	unsigned int base;
	int round, i;

	for (round = 0; round < 2; round++) {
		bool iwarp = round == 0;

		fattr.iwarp = iwarp;
		fdev = fake_dev_create(test, &fattr);
		pool = frwr_pool(test, fdev->pd, 4, 8);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io,
						   test_dma_sg(test, 0x700000, 12 * P),
						   1, 0), 2);
		KUNIT_EXPECT_EQ(test, t.io.access, iwarp ?
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE :
				IB_ACCESS_LOCAL_WRITE);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp,
							 0x9000000, 0x4242), 0);
		KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 4U);
		KUNIT_ASSERT_EQ(test, fdev->nr_recs, 4U);
		for (i = 0; i < 2; i++) {
			struct fake_wr_rec *r = &fdev->recs[2 + i];

			KUNIT_EXPECT_EQ(test, fdev->recs[i].opcode, IB_WR_REG_MR);
			KUNIT_EXPECT_EQ(test, r->opcode, iwarp ?
					IB_WR_RDMA_READ_WITH_INV :
					IB_WR_RDMA_READ);
			KUNIT_EXPECT_EQ(test, r->rkey, 0x4242U);
			KUNIT_EXPECT_EQ(test, r->remote_addr,
					i ? 0x9000000ULL + 8 * P : 0x9000000ULL);
			KUNIT_EXPECT_EQ(test, r->lkey, fdev->recs[i].key);
			if (iwarp)
				KUNIT_EXPECT_EQ(test, r->key, fdev->recs[i].key);
			KUNIT_EXPECT_EQ(test, r->send_flags,
					i ? IB_SEND_SIGNALED : 0);
		}
		base = fdev->nr_recs;
		fake_complete(fdev, IB_WC_SUCCESS, 4);
		if (!iwarp) {
			/* The READ's completion posted the LOCAL_INVs. */
			KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
			KUNIT_EXPECT_EQ(test, fake_count(fdev, base,
							 IB_WR_LOCAL_INV), 2U);
			fake_complete(fdev, IB_WC_SUCCESS, 4);
		} else {
			KUNIT_EXPECT_EQ(test, fdev->nr_recs, base);
		}
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
	}
}

/*
 * Map @sg into @nmrs descriptors and make mrkit_io_post()'s @nth
 * ib_post_send() fail at WR index @k: exactly the first @posted
 * descriptors are live, the rest are as if never handed out.  The
 * invalidation then covers only the live ones, and the pool is whole.
 */
static void post_fail_case(struct kunit *test, struct fake_dev *fdev,
			   struct mrkit_pool *pool, struct scatterlist *sg,
			   int nmrs, unsigned int nth, unsigned int k,
			   unsigned int posted)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	unsigned int i, base;
	struct mrkit_mr *mr;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), nmrs);
	fdev->post_fail_wr = k;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, nth, -ENOMEM);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -ENOMEM);
	for (mr = t.io.mrs, i = 0; mr; mr = mr->io_next, i++) {
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), i < posted ?
				MRKIT_MR_REGISTERED : MRKIT_MR_MAPPED);
		KUNIT_EXPECT_EQ(test, mr->dev_valid, i < posted);
	}
	KUNIT_EXPECT_EQ(test, in_use(pool), (u32)nmrs);
	base = fdev->nr_recs;
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, base, IB_WR_LOCAL_INV), posted);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

/*
 * A post failing at every WR index of [REG REG REG SEND]: WRs before it
 * are posted and live, the rest are as if never handed out, and after the
 * invalidation everything is back where it started.
 */
static void frwr_post_failure_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct mrkit_pool_stats st;
	unsigned int k;
	struct test_io t;

	for (k = 0; k < 4; k++)
		post_fail_case(test, fdev, pool, sg, 3, 1, k, min(k, 3U));
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale, 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);

	/*
	 * Nothing posted at all: the I/O is finished like any other (done at
	 * once, nothing was live) and a retry maps again; posting the same
	 * keys twice is refused.
	 */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	fdev->post_fail_wr = 0;
	fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -EAGAIN);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -EAGAIN);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -EINVAL);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 2);

	/*
	 * The invalidation chain failing at every index: what may still be
	 * referenced is parked until the QP is drained, then deregistered
	 * and replaced; only then does done run, with the error (the rkey
	 * fence holds on error paths).
	 */
	for (k = 0; k < 3; k++) {
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		fdev->post_fail_wr = k;
		fake_fail_nth(fdev, FAKE_OP_POST_SEND, 1, -EIO);
		KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
		mrkit_pool_get_stats(pool, &st);
		KUNIT_EXPECT_EQ(test, st.stale, 3U);
		KUNIT_EXPECT_EQ(test, st.in_use, 0U);
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);	/* the drain */
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
		mrkit_pool_qp_drained(pool);
		flush_workqueue(mrkit_wq);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
		KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
		mrkit_pool_get_stats(pool, &st);
		KUNIT_EXPECT_EQ(test, st.stale, 0U);
		KUNIT_EXPECT_EQ(test, st.allocated, 4U);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 4);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/*
 * Six descriptors take two posts (REG_MR WRs are built on the stack, four
 * descriptors per post): [REG x4] [REG x2 SEND], in order; a failure in
 * the second post at every index leaves the first batch live and the
 * rest as if never handed out.  A READ chain of six: [REG x4 READ x4]
 * [REG x2 READ x2], the peer's range consumed in order, only the last
 * READ signaled.
 */
static void frwr_post_batches_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 8, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x800000, 48 * P);
	unsigned int i, k, base, posts;
	struct fake_wr_rec *r;
	struct test_io t;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 6);
	posts = fdev->nr_posts;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	KUNIT_EXPECT_EQ(test, fdev->nr_posts - posts, 2U);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 6U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs, 7U);
	for (i = 0; i < 6; i++) {
		r = &fdev->recs[i];
		KUNIT_EXPECT_EQ(test, r->opcode, IB_WR_REG_MR);
		KUNIT_EXPECT_EQ(test, r->iova, 0x800000ULL + i * 8 * P);
		KUNIT_EXPECT_EQ(test, r->post, posts + (i < 4 ? 1 : 2));
	}
	KUNIT_EXPECT_EQ(test, fdev->recs[6].opcode, IB_WR_SEND);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, fake_count(fdev, 7, IB_WR_LOCAL_INV), 6U);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	for (k = 0; k < 3; k++)
		post_fail_case(test, fdev, pool, sg, 6, 2, k, 4 + k);

	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 6);
	base = fdev->nr_recs;
	posts = fdev->nr_posts;
	KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, fdev->qp, 0x9000000,
						 0x4242), 0);
	KUNIT_EXPECT_EQ(test, fdev->nr_posts - posts, 2U);
	KUNIT_ASSERT_EQ(test, fdev->nr_recs - base, 12U);
	for (i = 0; i < 12; i++) {
		/* Batch 0: recs 0-3 REG, 4-7 READ; batch 1: 8-9, 10-11. */
		unsigned int j = i < 8 ? i : i - 8, n = i < 8 ? 4 : 2;
		unsigned int m = (i < 8 ? 0 : 4) + j - n;	/* READ's MR */

		r = &fdev->recs[base + i];
		if (j < n) {
			KUNIT_EXPECT_EQ(test, r->opcode, IB_WR_REG_MR);
			continue;
		}
		KUNIT_EXPECT_EQ(test, r->opcode, IB_WR_RDMA_READ);
		KUNIT_EXPECT_EQ(test, r->remote_addr, 0x9000000ULL + m * 8 * P);
		KUNIT_EXPECT_EQ(test, r->send_flags,
				m == 5 ? IB_SEND_SIGNALED : 0);
	}
	fake_complete(fdev, IB_WC_SUCCESS, 64);	/* READs: then LOCAL_INVs */
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->exec_errors, 0U);
}

/* Flushed REG_MRs and LOCAL_INVs retire their descriptors. */
static void frwr_flush_stale_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct mrkit_mr *got[4];
	struct mrkit_pool_stats st;
	u32 keys[3];
	struct test_io t;
	struct mrkit_mr *mr;
	int i;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	for (mr = t.io.mrs, i = 0; mr; mr = mr->io_next, i++)
		keys[i] = mr->ibmr->lkey >> 8;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	/* The QP goes to error: REGs and the SEND are flushed. */
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
	for (mr = t.io.mrs; mr; mr = mr->io_next)
		KUNIT_EXPECT_EQ(test, mrkit_mr_state(mr), MRKIT_MR_STALE);
	/*
	 * Invalidation posts nothing for stale descriptors; done runs once
	 * their MRs are deregistered (the pool's work item).
	 */
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 3ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	/* No flushed MR is ever handed out again. */
	for (i = 0; i < 4; i++) {
		got[i] = mrkit_mr_get(pool);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, got[i]);
		KUNIT_EXPECT_NE(test, got[i]->ibmr->lkey >> 8, keys[0]);
		KUNIT_EXPECT_NE(test, got[i]->ibmr->lkey >> 8, keys[1]);
		KUNIT_EXPECT_NE(test, got[i]->ibmr->lkey >> 8, keys[2]);
	}
	for (i = 0; i < 4; i++)
		mrkit_mr_put(got[i]);

	/* A flushed LOCAL_INV chain: done with -EIO, all retired. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
	fake_complete(fdev, IB_WC_SUCCESS, 64);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), 0);
	fake_complete(fdev, IB_WC_WR_FLUSH_ERR, 64);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
	flush_workqueue(mrkit_wq);
	KUNIT_EXPECT_EQ(test, t.rec.calls, 1);
	KUNIT_EXPECT_EQ(test, t.rec.status, -EIO);
	mrkit_pool_get_stats(pool, &st);
	KUNIT_EXPECT_EQ(test, st.stale_replaced, 6ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fdev->mrs_alive), 4);
}

static void frwr_bad_input_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 2, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct mrkit_seg segs[4];
	struct test_io t, t2;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, NULL, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x1000, P), 0, 0),
			-EINVAL);
	/* Never posted or mapped: nothing to post, segs, invalidate. */
	KUNIT_EXPECT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_segs(&t.io, segs, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate(&t.io, fdev->qp), -EINVAL);
	/* Longer than the pool can ever cover (2 x 8 pages). */
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x100000, 17 * P),
					   1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* Mapped twice. */
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x1000, P), 1, 0),
			1);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, test_dma_sg(test, 0x1000, P), 1, 0),
			-EINVAL);
	/* Too little room for the segments: nothing handed out. */
	KUNIT_EXPECT_EQ(test, mrkit_io_segs(&t.io, segs, 0), -ENOSPC);
	KUNIT_EXPECT_EQ(test, mrkit_mr_state(t.io.mrs), MRKIT_MR_MAPPED);
	/* The pool has one left: an I/O needing two gets -EAGAIN, holds none. */
	tio_init(&t2, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t2.io,
					   test_dma_sg(test, 0x100000, 9 * P), 1, 0),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, in_use(pool), 1U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, fdev->nr_recs, 0U);
}

/* mrkit DMA-maps the list itself; the provider count is checked. */
static void frwr_dma_map_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct scatterlist sgl[3];
	struct mrkit_seg seg;
	struct test_io t;
	void *buf;

	buf = kunit_kzalloc(test, 4 * P, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sg_init_table(sgl, 3);
	sg_set_buf(&sgl[0], buf, P);
	sg_set_buf(&sgl[1], buf + P, P);
	sg_set_buf(&sgl[2], buf + 2 * P, 100);
	tio_init(&t, pool, MRKIT_PEER_READS);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sgl, 3, MRKIT_MAP_DMA), 1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg, 1), 1);
	KUNIT_EXPECT_EQ(test, seg.length, 2 * P + 100);
	KUNIT_EXPECT_EQ(test, seg.addr, (u64)sg_dma_address(&sgl[0]));
	KUNIT_EXPECT_EQ(test, to_fake_mr(t.io.mrs->ibmr)->npages, 3U);
	KUNIT_EXPECT_EQ(test, mrkit_io_release(&t.io, 0), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* A provider that maps less than asked is caught. */
	tio_init(&t, pool, MRKIT_PEER_READS);
	fake_fail_nth(fdev, FAKE_OP_MAP_MR_SG, 1, -EINVAL);
	KUNIT_EXPECT_EQ(test, mrkit_io_map(&t.io, sgl, 3, MRKIT_MAP_DMA),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
}

struct sync_ctx {
	struct delayed_work	work;
	struct fake_dev		*fdev;
	enum ib_wc_status	status;
	unsigned int		delivered;
};

/* The "CQ handler": completions arrive while the test thread sleeps. */
static void sync_complete_work(struct work_struct *w)
{
	struct sync_ctx *c = container_of(to_delayed_work(w), struct sync_ctx,
					  work);

	c->delivered = fake_complete(c->fdev, c->status, FAKE_MAX_RECORDS);
}

static void frwr_invalidate_sync_test(struct kunit *test)
{
	static const struct fake_dev_attr fattr = {};
	struct fake_dev *fdev = fake_dev_create(test, &fattr);
	struct mrkit_pool *pool = frwr_pool(test, fdev->pd, 4, 8);
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct scatterlist *sg = test_dma_sg(test, 0x700000, 20 * P);
	struct mrkit_pool_stats st;
	struct sync_ctx *c;
	struct test_io t;
	int round;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->fdev = fdev;
	INIT_DELAYED_WORK(&c->work, sync_complete_work);

	/* Nothing to invalidate on an idle I/O. */
	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_EXPECT_EQ(test, mrkit_io_invalidate_sync(&t.io, fdev->qp),
			-EINVAL);

	/* Round 0: the LOCAL_INVs complete; round 1: they are flushed. */
	for (round = 0; round < 2; round++) {
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sg, 1, 0), 3);
		KUNIT_ASSERT_EQ(test, mrkit_io_post(&t.io, fdev->qp, &send, NULL), 0);
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
		c->status = round ? IB_WC_WR_FLUSH_ERR : IB_WC_SUCCESS;
		c->delivered = 0;
		schedule_delayed_work(&c->work, msecs_to_jiffies(50));
		KUNIT_EXPECT_EQ(test, mrkit_io_invalidate_sync(&t.io, fdev->qp),
				round ? -EIO : 0);
		flush_delayed_work(&c->work);
		/* It waited for the completion; done() is not also called. */
		KUNIT_EXPECT_GT(test, c->delivered, 0U);
		KUNIT_EXPECT_EQ(test, t.rec.calls, 0);
		flush_workqueue(mrkit_wq);
		mrkit_pool_get_stats(pool, &st);
		KUNIT_EXPECT_EQ(test, st.in_use, 0U);
		KUNIT_EXPECT_EQ(test, st.stale, 0U);
		KUNIT_EXPECT_EQ(test, st.stale_replaced, round ? 3ULL : 0ULL);
	}
	/* A post failure: see contract_fence_sync_test (it waits for the drain). */
}

static struct kunit_case mrkit_frwr_cases[] = {
	KUNIT_CASE_PARAM(frwr_layout_test, layout_gen_params),
	KUNIT_CASE(frwr_chain_one_test),
	KUNIT_CASE(frwr_chain_split_test),
	KUNIT_CASE(frwr_iova_access_test),
	KUNIT_CASE(frwr_rkey_rotation_test),
	KUNIT_CASE(frwr_lazy_reregister_test),
	KUNIT_CASE(frwr_read_inv_test),
	KUNIT_CASE(frwr_post_failure_test),
	KUNIT_CASE(frwr_post_batches_test),
	KUNIT_CASE(frwr_flush_stale_test),
	KUNIT_CASE(frwr_bad_input_test),
	KUNIT_CASE(frwr_dma_map_test),
	KUNIT_CASE(frwr_invalidate_sync_test),
	{}
};

static struct kunit_suite mrkit_frwr_suite = {
	.name = "mrkit_frwr",
	.test_cases = mrkit_frwr_cases,
};

/* ---- real devices ---- */

#define RD_PAGES	20
#define RD_LEN		(RD_PAGES * PAGE_SIZE - 700)

/* RD_PAGES separate pages, as scattered page-cache data would be. */
static struct scatterlist *page_sgl(struct kunit *test, struct page **pages)
{
	struct scatterlist *sgl;
	int i;

	sgl = kunit_kcalloc(test, RD_PAGES, sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, RD_PAGES);
	for (i = 0; i < RD_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		sg_set_page(&sgl[i], pages[i],
			    i == RD_PAGES - 1 ? PAGE_SIZE - 700 : PAGE_SIZE, 0);
	}
	return sgl;
}

static void free_pages_arr(struct page **pages)
{
	int i;

	for (i = 0; i < RD_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
}

static u8 *sgl_byte(struct page **pages, u32 off)
{
	return (u8 *)page_address(pages[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

/* The CPU sees exactly the peer's bytes in the pages, or the test fails. */
static void expect_pages_eq(struct kunit *test, struct page **pages,
			    const u8 *pb)
{
	u32 i;

	for (i = 0; i < RD_LEN; i++) {
		if (*sgl_byte(pages, i) != pb[i]) {
			KUNIT_FAIL(test, "byte %u: 0x%x, the peer's is 0x%x", i,
				   *sgl_byte(pages, i), pb[i]);
			return;
		}
	}
}

/*
 * A 20-page buffer in 8-page MRs (3 segments), advertised to the peer in a
 * SEND; the peer writes every segment, reads it back, and the bytes are
 * compared; after the LOCAL_INV chain every old rkey is dead.
 */
static void frwr_rdma_multi_mr_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 8);
	struct page *pages[RD_PAGES] = {};
	struct scatterlist *sgl = page_sgl(test, pages);
	struct mrkit_seg segs[4], *wire;
	struct mrk_wait w;
	struct test_io t;
	u8 *msg, *pb = pair->pbuf;
	u64 msg_dma;
	u32 off, i;
	int n, s;

	msg = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	msg_dma = ib_dma_map_single(pair->dev, msg, 256, DMA_TO_DEVICE);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(pair->dev, msg_dma));

	tio_init(&t, pool, MRKIT_PEER_BIDI);
	memset(&t.rec, 0, sizeof(t.rec));
	n = mrkit_io_map(&t.io, sgl, RD_PAGES, MRKIT_MAP_DMA);
	KUNIT_ASSERT_EQ(test, n, 3);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 4), 3);
	memcpy(msg, segs, sizeof(segs));

	/* The segments travel in the caller's SEND, behind the REG_MRs. */
	KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t.io, msg_dma, sizeof(segs),
					  SZ_512K), 0);
	wire = (struct mrkit_seg *)(pb + SZ_512K);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 3U);

	/* The peer writes a pattern through every segment it was told of. */
	for (i = 0; i < RD_LEN; i++)
		pb[i] = (u8)(i * 13 + kind);
	for (s = 0, off = 0; s < 3; off += wire[s].length, s++) {
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, off,
						    wire[s].length, wire[s].addr,
						    wire[s].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_EQ(test, off, (u32)RD_LEN);
	for (s = 0, off = 0; s < 3; off += wire[s].length, s++) {
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ,
						    SZ_256K + off,
						    wire[s].length, wire[s].addr,
						    wire[s].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_EQ(test, memcmp(pb + SZ_256K, pb, RD_LEN), 0);

	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, pair->local.qp), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 3U);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	/* Unmapped by mrkit now: the CPU sees exactly what the peer wrote. */
	expect_pages_eq(test, pages, pb);

	/* Each old rkey is dead, each probed from a connection of its own. */
	for (s = 0; s < 3; s++) {
		struct mrk_pair *probe = mrk_pair_create_pd(test, kind,
							    pair->local.pd);
		u32 first = s * 8 * PAGE_SIZE;

		KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, wire[s].addr,
							   wire[s].key,
							   sgl_byte(pages, first),
							   64), 0);
	}
	ib_dma_unmap_single(pair->dev, msg_dma, 256, DMA_TO_DEVICE);
	free_pages_arr(pages);
}

/*
 * Lists one descriptor may take whole, decided by the provider's walk:
 * two contiguous entries of exactly the pool's 8 pages take one
 * descriptor; the same entries 256 bytes further on span 9 pages and take
 * two (siw's page list, which counts entries, would take them in one).
 * The peer learns the segments from a SEND, writes a pattern through
 * each, reads it back, and the CPU sees exactly its bytes.
 */
static void frwr_rdma_whole_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 4, 8);
	u8 *buf = kunit_kzalloc(test, 16 * PAGE_SIZE, GFP_KERNEL);
	u8 *msg = kunit_kzalloc(test, 256, GFP_KERNEL);
	u8 *pb = pair->pbuf;
	unsigned int shift;
	u64 msg_dma;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_TRUE(test, PAGE_ALIGNED(buf));
	msg_dma = ib_dma_map_single(pair->dev, msg, 256, DMA_TO_DEVICE);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(pair->dev, msg_dma));
	for (shift = 0; shift <= 256; shift += 256) {
		struct mrkit_seg segs[2], *wire;
		struct scatterlist sgl[2];
		u32 len = 8 * PAGE_SIZE, off;
		struct mrk_wait w;
		struct test_io t;
		int n = shift ? 2 : 1, s;

		sg_init_table(sgl, 2);
		sg_set_buf(&sgl[0], buf + shift, 3 * PAGE_SIZE);
		sg_set_buf(&sgl[1], buf + shift + 3 * PAGE_SIZE, 5 * PAGE_SIZE);
		tio_init(&t, pool, MRKIT_PEER_BIDI);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sgl, 2, MRKIT_MAP_DMA),
				n);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 2), n);
		KUNIT_EXPECT_EQ(test, segs[0].length,
				shift ? len - shift : len);
		memcpy(msg, segs, sizeof(segs));

		KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t.io, msg_dma,
						  sizeof(segs), SZ_512K), 0);
		wire = (struct mrkit_seg *)(pb + SZ_512K);

		for (off = 0; off < len; off++)
			pb[off] = (u8)(off * 7 + shift + kind);
		for (s = 0, off = 0; s < n; off += wire[s].length, s++) {
			KUNIT_ASSERT_EQ(test,
					mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, off,
						      wire[s].length, wire[s].addr,
						      wire[s].key, &w), 0);
			KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
			KUNIT_ASSERT_EQ(test,
					mrk_peer_rdma(pair, IB_WR_RDMA_READ,
						      SZ_256K + off,
						      wire[s].length, wire[s].addr,
						      wire[s].key, &w), 0);
			KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		}
		KUNIT_EXPECT_EQ(test, off, len);
		KUNIT_EXPECT_EQ(test, memcmp(pb + SZ_256K, pb, len), 0);

		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, pair->local.qp),
				0);
		KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		/* Unmapped by mrkit now: the CPU sees the peer's bytes. */
		KUNIT_EXPECT_EQ(test, memcmp(buf + shift, pb, len), 0);
	}
	ib_dma_unmap_single(pair->dev, msg_dma, 256, DMA_TO_DEVICE);
}

/* rkeys change on every reuse of a descriptor; old ones die. */
static void frwr_rdma_reuse_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 1, 0);
	struct mrkit_seg seg[3];
	struct mrk_wait w;
	struct scatterlist sg;
	struct test_io t;
	u8 *buf;
	int r;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (r = 0; r < 3; r++) {
		sg_init_one(&sg, buf, PAGE_SIZE);
		tio_init(&t, pool, MRKIT_PEER_BIDI);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA),
				1);
		KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, &seg[r], 1), 1);
		/* The caller's WR: an empty SEND (the peer has a receive). */
		KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t.io, 0, 0, 8192), 0);
		/* The registration is live: the peer can write through it. */
		memset(pair->pbuf, 0x30 + r, 64);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
						    seg[r].addr, seg[r].key, &w),
				0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ, 4096,
						    64, seg[r].addr, seg[r].key,
						    &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
		if (r == 2) {
			/* Control: the dead-rkey probe does see a live one. */
			struct mrk_pair *probe;

			probe = mrk_pair_create_pd(test, kind, pair->local.pd);
			KUNIT_EXPECT_EQ(test,
					mrk_peer_access_dead(probe,
							     seg[r].addr + 1024,
							     seg[r].key,
							     buf + 1024, 64),
					-EIO);
		}
		KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, pair->local.qp),
				0);
		KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
		KUNIT_EXPECT_EQ(test, buf[0], (u8)(0x30 + r));
		if (r)
			KUNIT_EXPECT_NE(test, seg[r].key, seg[r - 1].key);
	}
	KUNIT_EXPECT_NE(test, seg[2].key, seg[0].key);
	/* The first generation's rkey no longer works. */
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(pair, seg[0].addr, seg[0].key,
						   buf, 64), 0);
}

/*
 * mrkit_io_map_seg() on a real device: a list of two entries on one
 * descriptor, whose one segment the peer writes and reads through at
 * once (crossing the entries), and whose key is dead after the
 * invalidation; a list that needs a second descriptor is refused with
 * nothing held.
 */
static void frwr_rdma_map_seg_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 2, 4);
	struct scatterlist sgl[2];
	struct mrkit_seg seg;
	struct mrk_wait w;
	struct test_io t;
	u8 *buf;

	buf = kunit_kzalloc(test, 8 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_TRUE(test, PAGE_ALIGNED(buf));
	/* Two pages apart, then the 5 pages a 4-page descriptor cannot take. */
	sg_init_table(sgl, 2);
	sg_set_buf(&sgl[0], buf, PAGE_SIZE);
	sg_set_buf(&sgl[1], buf + 3 * PAGE_SIZE, 5 * PAGE_SIZE);
	tio_init(&t, pool, MRKIT_PEER_BIDI);
	KUNIT_EXPECT_EQ(test, mrkit_io_map_seg(&t.io, sgl, 2, MRKIT_MAP_DMA,
					       &seg), -EINVAL);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);

	sg_init_table(sgl, 2);
	sg_set_buf(&sgl[0], buf, PAGE_SIZE);
	sg_set_buf(&sgl[1], buf + 3 * PAGE_SIZE, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrkit_io_map_seg(&t.io, sgl, 2, MRKIT_MAP_DMA,
					       &seg), 1);
	KUNIT_EXPECT_EQ(test, seg.length, 2 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t.io, 0, 0, 8192), 0);
	/* 64 bytes across the two entries, written, then read back. */
	memset(pair->pbuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, 64,
					    seg.addr + PAGE_SIZE - 32, seg.key,
					    &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_READ, 4096, 64,
					    seg.addr + PAGE_SIZE - 32, seg.key,
					    &w), 0);
	KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
	KUNIT_EXPECT_EQ(test, buf[PAGE_SIZE - 32], 0x5a);
	KUNIT_EXPECT_EQ(test, buf[3 * PAGE_SIZE + 31], 0x5a);
	KUNIT_EXPECT_EQ(test, buf[3 * PAGE_SIZE + 32], 0);
	KUNIT_EXPECT_EQ(test, memcmp(pair->pbuf + 4096, pair->pbuf, 64), 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(pair, seg.addr, seg.key,
						   buf, 64), 0);
}

/*
 * mrkit RDMA-READs the peer's buffer into a local sink.  On siw (iWARP)
 * that is RDMA_READ_WITH_INV; the proof that the sink is invalid
 * afterwards is that registering it again (a REG_MR on a valid MR kills
 * the QP on both devices) works and carries the next READ.
 */
static void frwr_rdma_read_sink_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 1, 0);
	u8 *pb = pair->pbuf, *sink;
	struct scatterlist sg;
	struct test_io t;
	u32 rkey, i;
	u64 iova;
	int r;

	sink = kunit_kzalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sink);
	KUNIT_ASSERT_EQ(test, mrk_peer_reg(pair, 0, 2 * PAGE_SIZE, &rkey, &iova),
			0);
	for (r = 0; r < 2; r++) {
		for (i = 0; i < 2 * PAGE_SIZE; i++)
			pb[i] = (u8)(i * 3 + r);
		sg_init_one(&sg, sink, 2 * PAGE_SIZE);
		tio_init(&t, pool, MRKIT_LOCAL_SINK);
		KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, &sg, 1, MRKIT_MAP_DMA),
				1);
		KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, pair->local.qp,
							 iova, rkey), 0);
		/* REG + READ: no LOCAL_INV needed on iWARP, one more on RoCE. */
		KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 2U);
		KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
		KUNIT_EXPECT_EQ(test, t.rec.status, 0);
		KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io),
				kind == MRK_SIW ? 2U : 1U);
		KUNIT_EXPECT_EQ(test, memcmp(sink, pb, 2 * PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
		KUNIT_EXPECT_EQ(test, pool->descs[0]->dev_valid, false);
	}
}

/*
 * More descriptors than one post carries (3-page MRs over the 20-page
 * buffer: 7 segments, posted as 4 + 3): the peer writes through every
 * segment and the bytes are compared, the first and last old rkeys are
 * dead after the invalidation; then the same buffer as the sink of a
 * 7-descriptor RDMA READ chain (two posts), compared with the peer's data.
 */
static void frwr_rdma_batches_test(struct kunit *test)
{
	enum mrk_kind kind = mrk_param_kind(test);
	struct mrk_pair *pair = mrk_pair_create(test, kind);
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 8, 3);
	struct page *pages[RD_PAGES] = {};
	struct scatterlist *sgl = page_sgl(test, pages);
	struct mrkit_seg segs[8];
	u8 *pb = pair->pbuf;
	struct mrk_wait w;
	struct test_io t;
	u32 off, i, rkey;
	u64 iova;
	int s;

	tio_init(&t, pool, MRKIT_PEER_WRITES);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sgl, RD_PAGES, MRKIT_MAP_DMA),
			7);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&t.io, segs, 8), 7);
	/* A zero-length SEND stands in for the ULP's message. */
	KUNIT_ASSERT_EQ(test, mrk_io_send(pair, &t.io, 0, 0, SZ_512K), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 7U);
	for (i = 0; i < RD_LEN; i++)
		pb[i] = (u8)(i * 7 + 5 + kind);
	for (s = 0, off = 0; s < 7; off += segs[s].length, s++) {
		KUNIT_ASSERT_EQ(test, mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, off,
						    segs[s].length, segs[s].addr,
						    segs[s].key, &w), 0);
		KUNIT_ASSERT_EQ(test, w.wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_EQ(test, off, (u32)RD_LEN);
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&t.io, pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	expect_pages_eq(test, pages, pb);
	for (s = 0; s < 7; s += 6) {
		struct mrk_pair *probe = mrk_pair_create_pd(test, kind,
							    pair->local.pd);

		KUNIT_EXPECT_EQ(test, mrk_peer_access_dead(probe, segs[s].addr,
							   segs[s].key,
							   sgl_byte(pages, s * 3 * PAGE_SIZE),
							   64), 0);
	}

	/* The same pages as READ sinks: 7 REG_MRs and 7 READs, two posts. */
	for (i = 0; i < RD_LEN; i++)
		pb[i] = (u8)(i * 11 + 1 + kind);
	KUNIT_ASSERT_EQ(test, mrk_peer_reg(pair, 0, RD_LEN, &rkey, &iova), 0);
	tio_init(&t, pool, MRKIT_LOCAL_SINK);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&t.io, sgl, RD_PAGES, MRKIT_MAP_DMA),
			7);
	KUNIT_ASSERT_EQ(test, mrkit_io_post_read(&t.io, pair->local.qp, iova,
						 rkey), 0);
	KUNIT_EXPECT_EQ(test, mrkit_io_nr_wrs(&t.io), 14U);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &t), 0);
	KUNIT_EXPECT_EQ(test, t.rec.status, 0);
	KUNIT_EXPECT_EQ(test, in_use(pool), 0U);
	expect_pages_eq(test, pages, pb);
	free_pages_arr(pages);
}

static struct kunit_case mrkit_frwr_rdma_cases[] = {
	KUNIT_CASE_PARAM(frwr_rdma_multi_mr_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(frwr_rdma_whole_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(frwr_rdma_reuse_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(frwr_rdma_map_seg_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(frwr_rdma_read_sink_test, mrk_kind_gen_params),
	KUNIT_CASE_PARAM(frwr_rdma_batches_test, mrk_kind_gen_params),
	{}
};

static struct kunit_suite mrkit_frwr_rdma_suite = {
	.name = "mrkit_frwr_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_frwr_rdma_cases,
};

kunit_test_suites(&mrkit_frwr_suite, &mrkit_frwr_rdma_suite);
