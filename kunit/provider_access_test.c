// SPDX-License-Identifier: GPL-2.0-only
/*
 * Provider conformance: what rxe and siw enforce of an FRWR
 * registration's access rights against a peer.
 *
 * mrkit_provider_access_rdma: a page is registered through mrkit with a
 * REG_MR on a real connection (mrkit_io_set_access(): LOCAL_WRITE plus
 * each combination of remote rights), and the peer tries one operation
 * on it: RDMA READ, RDMA WRITE, ATOMIC CMP_AND_SWP, ATOMIC FETCH_AND_ADD.
 * pa_cases[] says, per provider, rights and operation, what the provider
 * does today: the operation is allowed (the bytes it moved are compared
 * on both sides), refused (it fails at the peer - on rxe with a remote
 * access error, on siw as a flush after the TERMINATE - and neither the
 * registered page nor the peer's landing bytes change), or refused at
 * post (siw has no atomics).  The table is the assertion: a provider
 * that starts or stops enforcing a right fails its rows.  Where a
 * provider departs from the rights registered, the row says so.
 *
 * The same suite proves that a LOCAL_INV'd key is refused for every
 * operation: the key is used once while live (the operation succeeds),
 * invalidated by mrkit, and the operation is tried again from a fresh
 * connection on the same PD.
 *
 * A refused operation ends the connection on both providers (rxe's
 * responder moves its QP to the error state, siw sends a TERMINATE), so
 * every case uses connections of its own.  Every wait is bounded (the
 * fixture's polls, 5 s per WR; the CM's timeouts).  A WRITE's completion
 * at a siw peer does not say where its bytes are, so WRITEs go through
 * mrk_peer_rdma(), which follows a successful WRITE with a placement
 * barrier and reports the barrier's failure as the WRITE's.
 */

#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/mrkit.h>

#include "rdma_fixture.h"
#include "test_util.h"

/* Offsets in the registered page. */
#define PA_WOFF		256	/* READ and WRITE window */
#define PA_WIN		1024
#define PA_AOFF		128	/* the atomic target, 8-byte aligned */
/* Offsets in the peer's buffer. */
#define PEER_SRC	0	/* the WRITE's source */
#define PEER_DST	SZ_64K	/* where a READ lands */
#define PEER_ATOM	SZ_128K	/* where an atomic's original value lands */
#define PEER_RECV	SZ_256K	/* the receive for the registering SEND */

#define PA_ADD		0x0101010101010101ULL

#define RR	IB_ACCESS_REMOTE_READ
#define RW	IB_ACCESS_REMOTE_WRITE
#define RA	IB_ACCESS_REMOTE_ATOMIC

enum pa_op {
	PA_READ,
	PA_WRITE,
	PA_CMP_SWAP,
	PA_FETCH_ADD,
};

enum pa_result {
	PA_ALLOWED,	/* the bytes move */
	PA_REFUSED,	/* the WR fails at the peer; nothing changes */
	PA_NO_POST,	/* the peer's provider refuses the WR at post */
};

struct pa_case {
	enum mrk_kind	kind;
	int		access;	/* remote rights; LOCAL_WRITE is always added */
	enum pa_op	op;
	enum pa_result	expect;
	const char	*why;	/* where the provider departs from @access */
};

#define SIW_READ_GAP	"siw does not enforce REMOTE_READ on inbound RDMA READ"
#define SIW_NO_ATOMICS	"siw has no atomics"

/*
 * What each provider enforces of the registration's rights (Linux 6.1).
 * rxe checks every right on every inbound request.  siw checks
 * REMOTE_WRITE on an inbound WRITE but answers an inbound READ from any
 * valid STag of the PD: its READ response takes the registration's bytes
 * without asking for any right.
 */
static const struct pa_case pa_cases[] = {
	{ MRK_RXE, 0,       PA_READ,      PA_REFUSED },
	{ MRK_RXE, 0,       PA_WRITE,     PA_REFUSED },
	{ MRK_RXE, 0,       PA_CMP_SWAP,  PA_REFUSED },
	{ MRK_RXE, 0,       PA_FETCH_ADD, PA_REFUSED },
	{ MRK_RXE, RR,      PA_READ,      PA_ALLOWED },
	{ MRK_RXE, RR,      PA_WRITE,     PA_REFUSED },
	{ MRK_RXE, RR,      PA_CMP_SWAP,  PA_REFUSED },
	{ MRK_RXE, RR,      PA_FETCH_ADD, PA_REFUSED },
	{ MRK_RXE, RW,      PA_READ,      PA_REFUSED },
	{ MRK_RXE, RW,      PA_WRITE,     PA_ALLOWED },
	{ MRK_RXE, RW,      PA_CMP_SWAP,  PA_REFUSED },
	{ MRK_RXE, RW,      PA_FETCH_ADD, PA_REFUSED },
	{ MRK_RXE, RR | RW, PA_READ,      PA_ALLOWED },
	{ MRK_RXE, RR | RW, PA_WRITE,     PA_ALLOWED },
	{ MRK_RXE, RR | RW, PA_CMP_SWAP,  PA_REFUSED },
	{ MRK_RXE, RR | RW, PA_FETCH_ADD, PA_REFUSED },
	{ MRK_RXE, RA,      PA_READ,      PA_REFUSED },
	{ MRK_RXE, RA,      PA_WRITE,     PA_REFUSED },
	{ MRK_RXE, RA,      PA_CMP_SWAP,  PA_ALLOWED },
	{ MRK_RXE, RA,      PA_FETCH_ADD, PA_ALLOWED },

	{ MRK_SIW, 0,       PA_READ,      PA_ALLOWED, SIW_READ_GAP },
	{ MRK_SIW, 0,       PA_WRITE,     PA_REFUSED },
	{ MRK_SIW, 0,       PA_CMP_SWAP,  PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, 0,       PA_FETCH_ADD, PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RR,      PA_READ,      PA_ALLOWED },
	{ MRK_SIW, RR,      PA_WRITE,     PA_REFUSED },
	{ MRK_SIW, RR,      PA_CMP_SWAP,  PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RR,      PA_FETCH_ADD, PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RW,      PA_READ,      PA_ALLOWED, SIW_READ_GAP },
	{ MRK_SIW, RW,      PA_WRITE,     PA_ALLOWED },
	{ MRK_SIW, RW,      PA_CMP_SWAP,  PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RW,      PA_FETCH_ADD, PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RR | RW, PA_READ,      PA_ALLOWED },
	{ MRK_SIW, RR | RW, PA_WRITE,     PA_ALLOWED },
	{ MRK_SIW, RR | RW, PA_CMP_SWAP,  PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RR | RW, PA_FETCH_ADD, PA_NO_POST, SIW_NO_ATOMICS },
};

/*
 * A key after LOCAL_INV, registered before with every right the provider
 * has (rxe: READ, WRITE, ATOMIC; siw: READ, WRITE): refused on both.
 */
static const struct pa_case pa_inv_cases[] = {
	{ MRK_RXE, RR | RW | RA, PA_READ,      PA_REFUSED },
	{ MRK_RXE, RR | RW | RA, PA_WRITE,     PA_REFUSED },
	{ MRK_RXE, RR | RW | RA, PA_CMP_SWAP,  PA_REFUSED },
	{ MRK_RXE, RR | RW | RA, PA_FETCH_ADD, PA_REFUSED },
	{ MRK_SIW, RR | RW,      PA_READ,      PA_REFUSED },
	{ MRK_SIW, RR | RW,      PA_WRITE,     PA_REFUSED },
	{ MRK_SIW, RR | RW,      PA_CMP_SWAP,  PA_NO_POST, SIW_NO_ATOMICS },
	{ MRK_SIW, RR | RW,      PA_FETCH_ADD, PA_NO_POST, SIW_NO_ATOMICS },
};

static const char *pa_access_name(int access)
{
	switch (access) {
	case 0:
		return "no remote right";
	case RR:
		return "REMOTE_READ";
	case RW:
		return "REMOTE_WRITE";
	case RR | RW:
		return "REMOTE_READ|REMOTE_WRITE";
	case RA:
		return "REMOTE_ATOMIC";
	default:
		return "all remote rights";
	}
}

static const char * const pa_op_names[] = {
	[PA_READ] = "RDMA READ",
	[PA_WRITE] = "RDMA WRITE",
	[PA_CMP_SWAP] = "ATOMIC CMP_AND_SWP",
	[PA_FETCH_ADD] = "ATOMIC FETCH_AND_ADD",
};

static const char * const pa_result_names[] = {
	[PA_ALLOWED] = "allowed",
	[PA_REFUSED] = "refused",
	[PA_NO_POST] = "refused at post",
};

static void pa_desc(const struct pa_case *c, const char *rights, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s, %s: %s%s%s%s",
		 mrk_kind_name(c->kind), rights, pa_op_names[c->op],
		 pa_result_names[c->expect], c->why ? " (" : "",
		 c->why ?: "", c->why ? ")" : "");
}

static void pa_case_desc(const struct pa_case *c, char *desc)
{
	pa_desc(c, pa_access_name(c->access), desc);
}

static void pa_inv_case_desc(const struct pa_case *c, char *desc)
{
	pa_desc(c, "after LOCAL_INV", desc);
}

KUNIT_ARRAY_PARAM(pa, pa_cases, pa_case_desc);
KUNIT_ARRAY_PARAM(pa_inv, pa_inv_cases, pa_inv_case_desc);

/* One registration of one page through mrkit. */
struct pa_reg {
	struct test_io		t;
	struct scatterlist	sg;
	struct mrkit_seg	seg;
	u8			*buf;		/* the registered page */
	u8			*before;	/* its bytes before the peer's op */
};

static u8 *pa_page(struct kunit *test, u8 seed)
{
	u8 *buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < PAGE_SIZE; i++)
		buf[i] = (u8)(i * 7 + seed);
	return buf;
}

/*
 * Register a page of pattern @seed with LOCAL_WRITE | @access by a REG_MR
 * on @pair's local QP, ahead of an empty SEND, as a ULP advertises it.
 */
static struct pa_reg *pa_register(struct kunit *test, struct mrk_pair *pair,
				  int access, u8 seed)
{
	struct mrkit_pool *pool = frwr_pool(test, pair->local.pd, 1, 0);
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct mrk_wait sent, recv;
	struct pa_reg *r;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->buf = pa_page(test, seed);
	r->before = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->before);
	memcpy(r->before, r->buf, PAGE_SIZE);

	sg_init_one(&r->sg, r->buf, PAGE_SIZE);
	tio_init(&r->t, pool, MRKIT_PEER_BIDI);
	KUNIT_ASSERT_EQ(test, mrkit_io_set_access(&r->t.io,
						  IB_ACCESS_LOCAL_WRITE | access),
			0);
	KUNIT_ASSERT_EQ(test, mrkit_io_map(&r->t.io, &r->sg, 1, MRKIT_MAP_DMA),
			1);
	KUNIT_ASSERT_EQ(test, mrkit_io_segs(&r->t.io, &r->seg, 1), 1);
	KUNIT_ASSERT_EQ(test, mrk_peer_post_recv(pair, PEER_RECV, 64, &recv),
			0);
	mrk_wait_init(&sent);
	send.wr_cqe = &sent.cqe;
	KUNIT_ASSERT_EQ(test, mrkit_io_post(&r->t.io, pair->local.qp, &send,
					    NULL), 0);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &sent, 5000), 0);
	KUNIT_ASSERT_EQ(test, sent.wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, mrk_poll(pair, &recv, 5000), 0);
	KUNIT_ASSERT_EQ(test, recv.wc.status, IB_WC_SUCCESS);
	return r;
}

/* LOCAL_INV the registration and wait until mrkit finished the I/O. */
static int pa_invalidate(struct kunit *test, struct mrk_pair *pair,
			 struct pa_reg *r)
{
	KUNIT_ASSERT_EQ(test, mrkit_io_invalidate(&r->t.io, pair->local.qp), 0);
	KUNIT_ASSERT_EQ(test, wait_io(pair, &r->t), 0);
	return r->t.rec.status;
}

static u64 pa_u64(const u8 *p)
{
	return *(const u64 *)p;
}

static void pa_set_u64(u8 *p, u64 v)
{
	*(u64 *)p = v;
}

/* What one peer operation did. */
struct pa_outcome {
	int			post;	/* the post's result */
	enum ib_wc_status	status;	/* the WR's, if posted */
};

/*
 * The peer runs @op against @seg, whose page the local CPU saw as
 * @before when the operation started.  The peer's source and landing
 * bytes are the complement of the page's, so every byte that moves
 * changes something.
 */
static void pa_peer_op(struct kunit *test, struct mrk_pair *pair,
		       const struct mrkit_seg *seg, const u8 *before,
		       enum pa_op op, struct pa_outcome *out)
{
	u8 *pb = pair->pbuf;
	u64 v = pa_u64(before + PA_AOFF);
	struct mrk_wait w;
	u32 i;
	int ret;

	out->post = 0;
	switch (op) {
	case PA_READ:
		for (i = 0; i < PA_WIN; i++)
			pb[PEER_DST + i] = ~before[PA_WOFF + i];
		ret = mrk_peer_rdma(pair, IB_WR_RDMA_READ, PEER_DST, PA_WIN,
				    seg->addr + PA_WOFF, seg->key, &w);
		break;
	case PA_WRITE:
		for (i = 0; i < PA_WIN; i++)
			pb[PEER_SRC + i] = ~before[PA_WOFF + i];
		ret = mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, PEER_SRC, PA_WIN,
				    seg->addr + PA_WOFF, seg->key, &w);
		break;
	case PA_CMP_SWAP:
	case PA_FETCH_ADD:
		pa_set_u64(pb + PEER_ATOM, ~v);
		ret = mrk_peer_atomic(pair, op == PA_CMP_SWAP ?
				      IB_WR_ATOMIC_CMP_AND_SWP :
				      IB_WR_ATOMIC_FETCH_AND_ADD,
				      PEER_ATOM, seg->addr + PA_AOFF, seg->key,
				      op == PA_CMP_SWAP ? v : PA_ADD, ~v, &w);
		if (ret && ret != -ETIMEDOUT) {
			out->post = ret;
			return;
		}
		break;
	default:
		KUNIT_FAIL(test, "op %d", op);
		return;
	}
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s did not complete",
			    pa_op_names[op]);
	out->status = w.wc.status;
}

/* The first byte where @a and @b differ, or -1. */
static int pa_diff(const u8 *a, const u8 *b, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

/*
 * Check the outcome of @op against what @expect says: the peer's WR
 * status, the registered page @buf (the CPU's view, once the I/O is
 * finished) against @before, and the peer's landing bytes.
 */
static void pa_check(struct kunit *test, struct mrk_pair *pair,
		     const u8 *before, const u8 *buf, enum pa_op op,
		     enum pa_result expect, const struct pa_outcome *out)
{
	const u8 *pb = pair->pbuf;
	u64 v = pa_u64(before + PA_AOFF);
	u8 *want;
	u32 i;

	want = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	memcpy(want, before, PAGE_SIZE);

	switch (expect) {
	case PA_NO_POST:
		KUNIT_EXPECT_EQ(test, out->post, -EINVAL);
		break;
	case PA_REFUSED:
		KUNIT_EXPECT_EQ(test, out->post, 0);
		KUNIT_EXPECT_NE_MSG(test, out->status, IB_WC_SUCCESS,
				    "%s was not refused", pa_op_names[op]);
		/*
		 * rxe's responder NAKs the request itself; a siw peer sees
		 * the TERMINATE as a flush of whichever WR it reaches first.
		 */
		if (pair->kind == MRK_RXE)
			KUNIT_EXPECT_EQ_MSG(test, out->status, IB_WC_REM_ACCESS_ERR,
					    "%s", ib_wc_status_msg(out->status));
		if (op == PA_READ) {
			for (i = 0; i < PA_WIN; i++)
				if (pb[PEER_DST + i] != (u8)~before[PA_WOFF + i])
					break;
			KUNIT_EXPECT_EQ_MSG(test, i, (u32)PA_WIN,
					    "a refused READ landed bytes at the peer");
		} else if (op != PA_WRITE) {
			KUNIT_EXPECT_EQ(test, pa_u64(pb + PEER_ATOM), ~v);
		}
		break;
	case PA_ALLOWED:
		KUNIT_EXPECT_EQ(test, out->post, 0);
		KUNIT_EXPECT_EQ_MSG(test, out->status, IB_WC_SUCCESS, "%s: %s",
				    pa_op_names[op],
				    ib_wc_status_msg(out->status));
		switch (op) {
		case PA_READ:
			KUNIT_EXPECT_EQ_MSG(test, pa_diff(pb + PEER_DST,
							  before + PA_WOFF,
							  PA_WIN), -1,
					    "READ bytes differ from the page's");
			break;
		case PA_WRITE:
			memcpy(want + PA_WOFF, pb + PEER_SRC, PA_WIN);
			break;
		case PA_CMP_SWAP:
			KUNIT_EXPECT_EQ(test, pa_u64(pb + PEER_ATOM), v);
			pa_set_u64(want + PA_AOFF, ~v);
			break;
		case PA_FETCH_ADD:
			KUNIT_EXPECT_EQ(test, pa_u64(pb + PEER_ATOM), v);
			pa_set_u64(want + PA_AOFF, v + PA_ADD);
			break;
		}
		break;
	}
	KUNIT_EXPECT_EQ_MSG(test, pa_diff(buf, want, PAGE_SIZE), -1,
			    "registered page: wrong byte (%s %s)",
			    pa_op_names[op], pa_result_names[expect]);
}

/* One row of pa_cases[]: register with the row's rights, run its op. */
static void provider_access_test(struct kunit *test)
{
	const struct pa_case *c = test->param_value;
	struct mrk_pair *pair = mrk_pair_create(test, c->kind);
	struct pa_reg *r = pa_register(test, pair, c->access, 1 + c->op);
	struct pa_outcome out;
	int status;

	pa_peer_op(test, pair, &r->seg, r->before, c->op, &out);
	/* The page is read once mrkit finished the I/O and unmapped it. */
	status = pa_invalidate(test, pair, r);
	/*
	 * A refused operation ends the connection, so the LOCAL_INV may be
	 * flushed (-EIO) instead; nothing else may fail it.
	 */
	if (c->expect != PA_REFUSED)
		KUNIT_EXPECT_EQ(test, status, 0);
	pa_check(test, pair, r->before, r->buf, c->op, c->expect, &out);
}

/*
 * One row of pa_inv_cases[]: the key works, is invalidated, and the same
 * operation from a fresh connection on the same PD is refused.
 */
static void provider_invalidated_test(struct kunit *test)
{
	const struct pa_case *c = test->param_value;
	struct mrk_pair *pair = mrk_pair_create(test, c->kind), *probe;
	struct pa_reg *r = pa_register(test, pair, c->access, 3 + c->op);
	struct pa_outcome out;

	/* Live: the operation works (where the provider has it at all). */
	pa_peer_op(test, pair, &r->seg, r->before, c->op, &out);
	KUNIT_ASSERT_EQ(test, pa_invalidate(test, pair, r), 0);
	pa_check(test, pair, r->before, r->buf, c->op,
		 c->expect == PA_NO_POST ? PA_NO_POST : PA_ALLOWED, &out);

	/* Dead: the same operation with the old key. */
	memcpy(r->before, r->buf, PAGE_SIZE);
	probe = mrk_pair_create_pd(test, c->kind, pair->local.pd);
	pa_peer_op(test, probe, &r->seg, r->before, c->op, &out);
	pa_check(test, probe, r->before, r->buf, c->op, c->expect, &out);
}

static struct kunit_case mrkit_provider_access_rdma_cases[] = {
	KUNIT_CASE_PARAM(provider_access_test, pa_gen_params),
	KUNIT_CASE_PARAM(provider_invalidated_test, pa_inv_gen_params),
	{}
};

static struct kunit_suite mrkit_provider_access_rdma_suite = {
	.name = "mrkit_provider_access_rdma",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = mrkit_provider_access_rdma_cases,
};

kunit_test_suites(&mrkit_provider_access_rdma_suite);
