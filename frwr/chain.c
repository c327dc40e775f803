// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Work-request chains
 *
 * mrkit_io_post() posts one unsignaled REG_MR per descriptor, each
 * preceded by a LOCAL_INV when the descriptor still holds a lazily kept
 * registration, then the caller's own WR(s) (a SEND carrying the rkeys,
 * an RDMA op).  The caller's WRs carry the signal.  mrkit_io_post_read()
 * posts the LOCAL_INVs of kept keys first, then the REG_MRs and one RDMA
 * READ per descriptor in place of the caller's WRs; on iWARP each is an
 * RDMA_READ_WITH_INV that also invalidates its sink.
 * mrkit_io_invalidate() posts one LOCAL_INV per live registration.
 *
 * No completion can be mistaken for another's.  The unsignaled WRs on a
 * descriptor - its REG_MR, a LOCAL_INV of its key, a READ into it -
 * complete on the descriptor's cqe, and only to report a failure, which
 * means the same whichever it was: the registration's state is unknown
 * and the descriptor is retired.  The one signaled WR of a chain - the
 * last LOCAL_INV, the last READ - completes on the I/O's own cqe.  On one
 * send queue the completion of the last WR implies every earlier one
 * completed, so only that completion finishes the I/O (frwr/io.c).
 *
 * Nothing is allocated per I/O: REG_MR and READ WRs are built on the stack
 * of the post that carries them (providers copy WRs before ib_post_send()
 * returns), %MRKIT_POST_BATCH descriptors per post; an I/O with more
 * descriptors takes one post per batch, in order.
 *
 * A post that fails part-way is split with bad_wr into posted and
 * unposted WRs.  Unposted REG_MRs return their descriptors to MAPPED (the
 * key they held before restored) as if never handed out; a descriptor
 * whose old key's LOCAL_INV was posted but whose REG_MR was not is
 * retired.  Posted ones are reclaimed only by completions; when no
 * completion can be awaited for a posted WR (the signaled WR after it was
 * not posted) its descriptor is parked ("orphan") until the ULP reports
 * the QP drained (mrkit_pool_qp_drained()) or destroys the pool.  A failed
 * mrkit_io_post() leaves the I/O posted: the ULP finishes it with
 * mrkit_io_complete() or mrkit_io_invalidate() - which invalidates for
 * real, even in a lazy pool - and maps again to retry, so the keys it
 * advertises are always the keys posted.
 *
 * Nothing reads the I/O after the ib_post_send() that can lead to its
 * completion: accounting and tracing happen before it.
 */

#include <linux/completion.h>
#include <linux/module.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "frwr/io.h"
#include <trace/events/mrkit.h>

static inline int mrkit_io_post_inv(struct mrkit_io *io, struct ib_qp *qp,
				    u8 inv_state);

/*
 * An IB READ chain completed: its sinks are invalidated now.  Out of line,
 * so that the completion of every other chain does not set up the
 * invalidation's frame.
 */
static noinline void mrkit_io_read_done(struct mrkit_io *io)
{
	mrkit_io_post_inv(io, io->qp, MRKIT_IO_READ_INVALIDATING);
}

/*
 * Trace what a chain is about to post, descriptors [@from, @to): the
 * REG_MRs of REGISTERED descriptors, LOCAL_INVs of INVALIDATING ones
 * (READ_WITH_INVs on an iWARP READ chain).  Called only when one of the
 * events is enabled, and before the post: the I/O may be finished on
 * another CPU as soon as its chain is posted.
 */
static void mrkit_trace_chain(struct mrkit_io *io, struct mrkit_mr *from,
			      struct mrkit_mr *to)
{
	struct mrkit_mr *mr;

	for (mr = from; mr != to; mr = mr->io_next) {
		switch (mrkit_mr_state(mr)) {
		case MRKIT_MR_REGISTERED:
			if (mr->old_inv == MRKIT_OLD_INV_CHAINED)
				trace_mrkit_localinv(mr);
			trace_mrkit_reg(mr);
			break;
		case MRKIT_MR_INVALIDATING:
			if (io->state == MRKIT_IO_READING) {
				trace_mrkit_reg(mr);
				trace_mrkit_read_inv(mr);
			} else {
				trace_mrkit_localinv(mr);
			}
			break;
		default:
			break;
		}
	}
}

/* WARNING: Only wr_cqe and status are reliable in these handlers. */

/*
 * Did the LOCAL_INV mrkit_io_complete() posted for @mr's key (in a
 * %MRKIT_POOL_POST_INV pool) fail?  Then the key may still be valid: the
 * next registration invalidates it first.  Whoever holds the descriptor
 * (the pool, a new I/O, the I/O giving it back) keeps it: nothing posted
 * after that LOCAL_INV on the QP executes, and once the ULP has drained
 * the QP every such failure has been seen.  A later WR of the descriptor
 * (posted after the next chain took the mark) fails as usual.
 */
static bool mrkit_posted_inv_failed(struct mrkit_mr *mr)
{
	if (!(mr->pool->flags & MRKIT_POOL_POST_INV) ||
	    READ_ONCE(mr->old_inv) != MRKIT_OLD_INV_POSTED)
		return false;
	WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_NONE);
	return true;
}

/*
 * An unsignaled REG_MR, LOCAL_INV or READ on a descriptor: only failures
 * and flushes come here, and each leaves the registration's state unknown.
 * The pool may hold the descriptor already, or its idle I/O keep it, or a
 * new I/O have taken it and not posted it yet (a lazy or POST_INV
 * completion of an I/O whose WRs then flushed: its REG_MR's flush took
 * the posted LOCAL_INV's mark, and this is the LOCAL_INV's): an owner
 * posts nothing before its descriptor is REGISTERED, so the WR was a
 * previous registration's.  The descriptor cannot be retired there (the
 * new owner changes its state by plain stores), so it is marked: the
 * next map that takes it retires it, and a post of an I/O that holds it
 * is refused (mrkit_chain_regs()).
 */
static void mrkit_wc_mr(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_mr *mr = container_of(wc->wr_cqe, struct mrkit_mr, cqe);
	int state;

	trace_mrkit_wc_mr(cq, wc, mr);
	if (wc->status == IB_WC_SUCCESS)
		return;
	if (mrkit_posted_inv_failed(mr)) {
		mrkit_pool_err(mr->pool,
			       "the LOCAL_INV of descriptor %u's released key: %s; invalidated again at its next registration\n",
			       mr->idx, ib_wc_status_msg(wc->status));
		return;
	}
	/*
	 * One cmpxchg decides: the descriptor may be given back and taken
	 * again at any moment, and a new owner's plain stores would
	 * overwrite a STALE mark.
	 */
	if (mrkit_mr_mark_stale_live(mr, &state)) {
		mrkit_pool_err(mr->pool,
			       "a work request on descriptor %u: %s; retiring it\n",
			       mr->idx, ib_wc_status_msg(wc->status));
		return;
	}
	if (state == MRKIT_MR_STALE || state == MRKIT_MR_RETIRING)
		return;
	WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_UNKNOWN);
	mrkit_pool_err(mr->pool,
		       "a work request on descriptor %u, given back: %s; retired at its next use\n",
		       mr->idx, ib_wc_status_msg(wc->status));
}

/*
 * The completion of a READ chain, of a failed chain, or one for an I/O
 * that is not in flight: mrkit_wc_done() without its common case, out of
 * line so that the common case saves no registers.
 */
static noinline void mrkit_wc_done_other(struct ib_cq *cq, struct ib_wc *wc,
					 struct mrkit_io *io, u8 state)
{
	bool ok = wc->status == IB_WC_SUCCESS;

	if (state == MRKIT_IO_READING)
		trace_mrkit_wc_read(cq, wc, io->mrs);
	else
		trace_mrkit_wc_inv(cq, wc, io->mrs);
	if (!mrkit_io_state_reading(state) && state != MRKIT_IO_INVALIDATING) {
		mrkit_pool_err(io->pool,
			       "completion for an I/O that is not in flight (state %u); ignored\n",
			       state);
		return;
	}
	if (!ok)
		mrkit_pool_err(io->pool, "%s chain: %s\n",
			       state == MRKIT_IO_READING ? "READ" : "LOCAL_INV",
			       ib_wc_status_msg(wc->status));
	if (ok && state == MRKIT_IO_READING && !io->pool->iwarp) {
		mrkit_io_read_done(io);
		return;
	}
	mrkit_io_finish(io, ok ? 0 : -EIO,
			ok ? MRKIT_FIN_RETIRED : MRKIT_FIN_DRAINED);
}

/*
 * The signaled last WR of one of the I/O's chains.  After a READ chain
 * (IB: plain READs) the sinks are invalidated now; anything else
 * finishes the I/O.
 */
static void mrkit_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_io *io = container_of(wc->wr_cqe, struct mrkit_io, cqe);
	u8 state = READ_ONCE(io->state);

	/* The common case first: an invalidation chain that completed. */
	if (likely(wc->status == IB_WC_SUCCESS &&
		   state == MRKIT_IO_INVALIDATING)) {
		trace_mrkit_wc_inv(cq, wc, io->mrs);
		mrkit_io_finish_ok(io);
		return;
	}
	mrkit_wc_done_other(cq, wc, io, state);
}

/* An unsignaled LOCAL_INV of @mr's registered key, into @wr. */
static void mrkit_build_inv(struct mrkit_mr *mr, struct ib_send_wr *wr)
{
	mr->cqe.done = mrkit_wc_mr;
	wr->next = NULL;
	wr->opcode = IB_WR_LOCAL_INV;
	wr->num_sge = 0;
	wr->sg_list = NULL;
	wr->ex.invalidate_rkey = mr->inv_key;
	wr->wr_cqe = &mr->cqe;
	wr->send_flags = 0;
}

/* Make @wr the chain's signaled last WR: its completion is the I/O's. */
static void mrkit_signal_last(struct mrkit_io *io, struct ib_send_wr *wr)
{
	io->cqe.done = mrkit_wc_done;
	wr->wr_cqe = &io->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
}

/*
 * REG_MR, RDMA READ and LOCAL_INV WRs are built on the stack of the post
 * that carries them, for at most MRKIT_POST_BATCH descriptors per
 * ib_post_send(): a provider copies WRs before ib_post_send() returns, so
 * only the cqes live in the descriptor.  I/Os with more descriptors take
 * one post per batch, in order, on the same send queue.  The arrays are
 * __uninitialized (CONFIG_INIT_STACK_ALL_ZERO would zero them on every
 * post, a measurable share of a small I/O): every WR field is written
 * before use.
 */
#define MRKIT_POST_BATCH	4

static void mrkit_build_reg(struct mrkit_mr *mr, struct ib_reg_wr *reg,
			    int access)
{
	struct ib_mr *ibmr = mr->ibmr;

	mr->cqe.done = mrkit_wc_mr;
	reg->wr.next = NULL;
	reg->wr.opcode = ibmr->type == IB_MR_TYPE_INTEGRITY ?
			 IB_WR_REG_MR_INTEGRITY : IB_WR_REG_MR;
	reg->wr.wr_cqe = &mr->cqe;
	reg->wr.sg_list = NULL;
	reg->wr.num_sge = 0;
	reg->wr.send_flags = 0;
	reg->wr.ex.imm_data = 0;
	reg->mr = ibmr;
	reg->key = mr->key;
	reg->access = access;
}

/* A REGISTERED descriptor's registration is about to be posted. */
static void mrkit_mr_posting(struct mrkit_io *io, struct mrkit_mr *mr)
{
	/*
	 * Live from the moment it is posted: a completion on another CPU
	 * may already run the ULP's invalidation.
	 */
	WRITE_ONCE(mr->dev_valid, true);
	WRITE_ONCE(mr->inv_key, mr->key);
	WRITE_ONCE(mr->drained, false);
	WRITE_ONCE(mr->peer_visible,
		   !!(io->access & (IB_ACCESS_REMOTE_READ |
				    IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_ATOMIC)));
	mr->pi_unchecked = mr->ibmr->type == IB_MR_TYPE_INTEGRITY;
}

/* One batch of a registration chain, as built on the posting stack. */
struct mrkit_batch {
	struct ib_reg_wr	reg[MRKIT_POST_BATCH];
	struct ib_send_wr	inv[MRKIT_POST_BATCH];	/* of kept keys */
	struct mrkit_mr		*mr[MRKIT_POST_BATCH];
	u32			old_key[MRKIT_POST_BATCH];
	/* dev_valid and old_inv before the chain, restored on a failure */
	bool			old_valid[MRKIT_POST_BATCH];
	u8			old_inv[MRKIT_POST_BATCH];
	unsigned int		n;
};

/*
 * A descriptor of a posting I/O that a late flush reached (see
 * mrkit_wc_mr()): its key's state is unknown, so neither a LOCAL_INV of
 * the old key nor a REG_MR over it is posted; marked stale, it is retired
 * when the I/O finishes (its MR deregistered: no key of it stays valid).
 */
static void __cold mrkit_chain_refuse(struct mrkit_mr *mr)
{
	mrkit_pool_err(mr->pool,
		       "post refused: descriptor %u was reached by a flush of its previous registration\n",
		       mr->idx);
	WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_NONE);
	mrkit_mr_mark_stale(mr);
}

/*
 * Chain [LOCAL_INV of a lazily kept key] REG_MR for the REGISTERED
 * descriptors from *@pos on, at most MRKIT_POST_BATCH of them; *@pos is
 * left at the first descriptor not looked at.  Returns the tail link.
 * A descriptor a late flush of its previous registration reached since it
 * was taken (STALE, or marked UNKNOWN) cannot be posted: it is marked
 * stale for its owner to retire, *@pos left at it, and NULL returned.
 */
static struct ib_send_wr **mrkit_chain_regs(struct mrkit_io *io,
					    struct mrkit_mr **pos,
					    struct mrkit_batch *b,
					    struct ib_send_wr **prev,
					    unsigned int *count)
{
	struct mrkit_mr *mr;
	unsigned int n = 0;
	bool chained;

	for (mr = *pos; mr && n < MRKIT_POST_BATCH; mr = mr->io_next) {
		b->old_inv[n] = READ_ONCE(mr->old_inv);
		if (unlikely(mrkit_mr_state(mr) != MRKIT_MR_REGISTERED ||
			     b->old_inv[n] == MRKIT_OLD_INV_UNKNOWN)) {
			mrkit_chain_refuse(mr);
			prev = NULL;
			break;
		}
		b->mr[n] = mr;
		b->old_key[n] = mr->inv_key;
		b->old_valid[n] = mr->dev_valid;
		/*
		 * A kept key is invalidated first, unless its LOCAL_INV was
		 * posted already: it ran, or it is queued ahead of this chain,
		 * or it failed and mrkit_wc_mr() said so.
		 */
		chained = mr->dev_valid &&
			  b->old_inv[n] != MRKIT_OLD_INV_POSTED;
		WRITE_ONCE(mr->old_inv, chained ? MRKIT_OLD_INV_CHAINED :
						  MRKIT_OLD_INV_NONE);
		if (chained) {
			mrkit_build_inv(mr, &b->inv[n]);
			*prev = &b->inv[n];
			prev = &b->inv[n].next;
			(*count)++;
		}
		mrkit_mr_posting(io, mr);
		mrkit_build_reg(mr, &b->reg[n], io->access);
		*prev = &b->reg[n].wr;
		prev = &b->reg[n].wr.next;
		n++;
		(*count)++;
	}
	*pos = mr;
	b->n = n;
	return prev;
}

/* Was @wr among the WRs of the chain from @first that the provider took? */
static bool mrkit_wr_posted(const struct ib_send_wr *first,
			    const struct ib_send_wr *bad,
			    const struct ib_send_wr *wr)
{
	const struct ib_send_wr *w;

	for (w = first; w && w != bad; w = w->next)
		if (w == wr)
			return true;
	return false;
}

/*
 * Undo the registration accounting for WRs of the failed batch @b (chain
 * @first, failed at @bad) that were not posted, and for every descriptor
 * from @rest on, which no batch chained.  Each descriptor of the batch is
 * known by its slot, whatever a concurrent flush did to its state.
 */
static void mrkit_chain_regs_failed(struct mrkit_batch *b,
				    const struct ib_send_wr *first,
				    const struct ib_send_wr *bad,
				    struct mrkit_mr *rest)
{
	struct mrkit_mr *mr;
	unsigned int k;

	for (k = 0; k < b->n; k++) {
		mr = b->mr[k];
		if (mrkit_wr_posted(first, bad, &b->reg[k].wr))
			continue;
		if (mr->old_inv == MRKIT_OLD_INV_CHAINED &&
		    mrkit_wr_posted(first, bad, &b->inv[k])) {
			/* Old key being invalidated, new one never posted. */
			mr->orphan = true;
			mrkit_mr_mark_stale(mr);
			continue;
		}
		/* Not posted: as if never handed out, the old key kept. */
		mr->pi_unchecked = false;
		mr->dev_valid = b->old_valid[k];
		WRITE_ONCE(mr->old_inv, b->old_inv[k]);
		mr->inv_key = b->old_key[k];
		mrkit_mr_transition(mr, MRKIT_MR_REGISTERED, MRKIT_MR_MAPPED);
	}
	for (mr = rest; mr; mr = mr->io_next)
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED)
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
}

static void mrkit_post_failed(struct mrkit_io *io, int ret,
			      const struct ib_send_wr *first,
			      const struct ib_send_wr *bad, const char *what)
{
	unsigned int posted = 0, total;
	const struct ib_send_wr *w;

	for (w = first; w && w != bad; w = w->next)
		posted++;
	for (total = posted; w; w = w->next)
		total++;
	trace_mrkit_post_err(io->pool, ret, posted, total);
	mrkit_pool_err(io->pool, "%s: ib_post_send failed: %d after %u of %u WRs\n",
		       what, ret, posted, total);
}

/*
 * After a failed post: the first of the caller's WRs (@wr...) that was
 * not posted.  @bad is the provider's bad_wr of the failing post, @last
 * says whether that post carried the caller's WRs.
 */
static const struct ib_send_wr *mrkit_caller_bad(const struct ib_send_wr *wr,
						 const struct ib_send_wr *bad,
						 bool last)
{
	const struct ib_send_wr *w;

	if (last)
		for (w = wr; w; w = w->next)
			if (w == bad)
				return bad;
	return wr;
}

/*
 * Undo what a failed or refused registration post accounted: batch @b,
 * whose chain starts at @first, failed at @bad (@first when it was
 * refused: nothing of it posted); @pos is the first descriptor no batch
 * chained, @count mrkit's WRs so far.  The I/O stays posted.
 */
static noinline void mrkit_io_post_undo(struct mrkit_io *io,
					struct mrkit_batch *b,
					const struct ib_send_wr *first,
					const struct ib_send_wr *bad,
					struct mrkit_mr *pos, unsigned int count,
					struct ib_send_wr *wr,
					const struct ib_send_wr **bad_wr)
{
	mrkit_chain_regs_failed(b, first, bad, pos);
	io->post_failed = true;
	io->nr_wrs = count;
	if (bad_wr)
		*bad_wr = mrkit_caller_bad(wr, bad, !pos);
}

/*
 * mrkit_io_post() of an I/O of several descriptors, or of one whose post
 * is refused (mrkit_chain_regs() says why).
 */
static noinline int mrkit_io_post_chain(struct mrkit_io *io,
					struct ib_qp *qp,
					struct ib_send_wr *wr,
					const struct ib_send_wr **bad_wr)
{
	struct mrkit_batch b __uninitialized;
	/* Both set before each post: no zeroing (see MRKIT_POST_BATCH). */
	struct ib_send_wr *first __uninitialized, **prev;
	const struct ib_send_wr *bad __uninitialized;
	struct mrkit_mr *pos = io->mrs;
	unsigned int count = 0;
	int ret;

	do {
		struct mrkit_mr *from = pos;

		first = NULL;
		prev = mrkit_chain_regs(io, &pos, &b, &first, &count);
		if (unlikely(!prev)) {
			/* Nothing of this batch is posted. */
			mrkit_io_post_undo(io, &b, first, first, pos, count,
					   wr, bad_wr);
			return -EIO;
		}
		/* The caller's WRs end the last post. */
		*prev = pos ? NULL : wr;
		if (!pos)
			io->nr_wrs = count;
		if (trace_mrkit_reg_enabled())
			mrkit_trace_chain(io, from, pos);
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		if (ret) {
			mrkit_post_failed(io, ret, first, bad, "registration");
			mrkit_io_post_undo(io, &b, first, bad, pos, count, wr,
					   bad_wr);
			return ret;
		}
	} while (pos);
	return 0;
}

/**
 * mrkit_io_post - register an I/O and post the caller's WRs behind it
 * @io: a mapped I/O (mrkit_io_segs() may have run; if not, keys are
 *	rotated now)
 * @qp: the connection's QP
 * @wr: the caller's WR chain, e.g. the SEND advertising the segments;
 *	it carries the signal and its completion is the caller's.  NULL
 *	posts the REG_MRs alone (several I/Os ahead of one SEND, a
 *	registration no SEND follows): the caller must then post a signaled
 *	WR on the same send queue after them, whose completion implies
 *	theirs.
 * @bad_wr: if not NULL, set on failure to the first of the caller's WRs
 *	that was not posted (@wr when none was)
 *
 * [LOCAL_INV of lazily kept keys] REG_MR... @wr, in one ib_post_send()
 * per %MRKIT_POST_BATCH descriptors, the caller's WRs ending the last.
 * mrkit_io_nr_wrs() tells how many WRs of mrkit's that was.  mrkit does
 * not touch @io after the last ib_post_send() succeeded: the caller's
 * completion may finish it on another CPU at once.
 *
 * Context: any context ib_post_send() allows.  No allocation.
 * Return:
 * * %0 - posted.
 * * %-EINVAL - the I/O is not mapped (or was posted already).
 * * %-EBUSY - the I/O's RDMA READ chain is in flight.
 * * %-EIO - a descriptor of the I/O was reached, since it was taken, by
 *   a flush of its previous registration (a lazy pool gives descriptors
 *   back with their WRs still queued on a QP in error): whether that
 *   registration ran is not known, so nothing of this post goes out from
 *   that descriptor on.  As after a failed post, below; the descriptor is
 *   retired when the I/O finishes.
 * * the provider's errno - the post failed; WRs before the bad one were
 *   posted.  The I/O stays posted: finish it with mrkit_io_complete() or
 *   mrkit_io_invalidate() (which invalidate what reached the device,
 *   in lazy pools too; done() runs once every key that reached the
 *   device is dead) and map it again to retry.  It cannot be posted
 *   again, so the keys a retry advertises are always the keys it posts.
 */
int mrkit_io_post(struct mrkit_io *io, struct ib_qp *qp,
		  struct ib_send_wr *wr, const struct ib_send_wr **bad_wr)
{
	struct mrkit_batch b __uninitialized;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first;
	struct mrkit_mr *mr;
	int ret;

	ret = mrkit_io_check_mapped(io, "post");
	if (ret < 0)
		return ret;
	mrkit_io_hand_out(io, ret);
	io->qp = qp;
	io->state = MRKIT_IO_POSTED;
	mr = io->mrs;
	/*
	 * The common I/O, one descriptor: mrkit_chain_regs() for one,
	 * straight through.  A kept key is invalidated first, unless its
	 * LOCAL_INV was posted already.
	 */
	b.old_inv[0] = READ_ONCE(mr->old_inv);
	if (unlikely(mr->io_next || mrkit_mr_state(mr) != MRKIT_MR_REGISTERED ||
		     b.old_inv[0] == MRKIT_OLD_INV_UNKNOWN))
		return mrkit_io_post_chain(io, qp, wr, bad_wr);
	b.mr[0] = mr;
	b.old_key[0] = mr->inv_key;
	b.old_valid[0] = mr->dev_valid;
	b.n = 1;
	first = &b.reg[0].wr;
	if (mr->dev_valid && b.old_inv[0] != MRKIT_OLD_INV_POSTED) {
		WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_CHAINED);
		mrkit_build_inv(mr, &b.inv[0]);
		b.inv[0].next = first;
		first = &b.inv[0];
		io->nr_wrs = 2;
	} else {
		WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_NONE);
		io->nr_wrs = 1;
	}
	mrkit_mr_posting(io, mr);
	mrkit_build_reg(mr, &b.reg[0], io->access);
	b.reg[0].wr.next = wr;
	if (trace_mrkit_reg_enabled())
		mrkit_trace_chain(io, mr, NULL);
	ret = ib_post_send(qp, first, &bad);
	if (unlikely(ret)) {
		mrkit_post_failed(io, ret, first, bad, "registration");
		mrkit_io_post_undo(io, &b, first, bad, NULL, io->nr_wrs, wr,
				   bad_wr);
	}
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_post, MRKIT);

/*
 * After a failed post that carried the I/O's signal: park and finish.
 * @all: every descriptor (a READ chain), else those being invalidated;
 * @none_posted: no WR of the failed chain reached the QP.
 */
static void mrkit_io_post_abort(struct mrkit_io *io, int ret, bool all,
				bool none_posted)
{
	struct mrkit_mr *mr;

	/*
	 * The signaled WR was not posted, so no completion will finish the
	 * I/O: whatever was posted can no longer be waited for; park it
	 * until the drain and finish the I/O now with the error.  A
	 * registration posted before a drain the ULP already reported, with
	 * nothing of this chain posted, has nothing left to wait for: its
	 * MR is deregistered at once.
	 */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (all || mrkit_mr_state(mr) == MRKIT_MR_INVALIDATING) {
			mr->orphan = !none_posted || !READ_ONCE(mr->drained);
			mrkit_mr_mark_stale(mr);
		}
	}
	mrkit_io_finish(io, ret, MRKIT_FIN_UNDRAINED);
}

/*
 * Post the LOCAL_INVs of the kept keys of a READ chain's sinks; *@posted
 * is set once a WR may have reached the QP.
 */
static int mrkit_post_kept_invs(struct mrkit_io *io, struct ib_qp *qp,
				bool *posted)
{
	struct ib_send_wr inv[MRKIT_POST_BATCH] __uninitialized;
	struct ib_send_wr *first, **prev;
	const struct ib_send_wr *bad;
	struct mrkit_mr *mr = io->mrs;
	unsigned int n;
	int ret;

	while (mr) {
		first = NULL;
		prev = &first;
		for (n = 0; mr && n < MRKIT_POST_BATCH; mr = mr->io_next) {
			/* Not when its LOCAL_INV is posted already. */
			if (!mrkit_mr_key_live(mr))
				continue;
			mrkit_build_inv(mr, &inv[n]);
			*prev = &inv[n];
			prev = &inv[n].next;
			io->nr_wrs++;
			n++;
		}
		if (!first)
			break;
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		*posted |= bad != first;
		if (ret) {
			mrkit_post_failed(io, ret, first, bad, "READ");
			return ret;
		}
	}
	return 0;
}

/* One batch of a READ chain, as built on the posting stack. */
struct mrkit_read_batch {
	struct ib_reg_wr	reg[MRKIT_POST_BATCH];
	struct ib_rdma_wr	rd[MRKIT_POST_BATCH];
	struct ib_sge		sge[MRKIT_POST_BATCH];
	u64			raddr;	/* where the next batch reads from */
};

/*
 * Build the REG_MRs of up to MRKIT_POST_BATCH descriptors from *@pos on,
 * then one READ into each (the last of the I/O signaled); *@pos is left
 * at the first descriptor not taken.  Returns the batch's first WR.
 */
static struct ib_send_wr *mrkit_read_batch(struct mrkit_io *io,
					   struct mrkit_mr **pos,
					   struct mrkit_read_batch *b,
					   u64 raddr, u32 rkey, bool with_inv)
{
	struct ib_send_wr *first = NULL, **prev = &first;
	struct mrkit_mr *mr = *pos, *from = mr;
	unsigned int n, k;

	for (n = 0; mr && n < MRKIT_POST_BATCH; mr = mr->io_next, n++) {
		mrkit_build_reg(mr, &b->reg[n], io->access);
		*prev = &b->reg[n].wr;
		prev = &b->reg[n].wr.next;
	}
	for (k = 0; k < n; k++, from = from->io_next) {
		struct ib_rdma_wr *rd = &b->rd[k];
		struct ib_mr *ibmr = from->ibmr;

		b->sge[k].addr = ibmr->iova;
		b->sge[k].length = ibmr->length;
		b->sge[k].lkey = ibmr->lkey;
		memset(rd, 0, sizeof(*rd));
		rd->wr.sg_list = &b->sge[k];
		rd->wr.num_sge = 1;
		rd->wr.wr_cqe = &from->cqe;
		rd->remote_addr = raddr;
		rd->rkey = rkey;
		if (with_inv) {
			rd->wr.opcode = IB_WR_RDMA_READ_WITH_INV;
			rd->wr.ex.invalidate_rkey = ibmr->lkey;
		} else {
			rd->wr.opcode = IB_WR_RDMA_READ;
		}
		if (!from->io_next)
			mrkit_signal_last(io, &rd->wr);
		raddr += ibmr->length;
		*prev = &rd->wr;
		prev = &rd->wr.next;
	}
	b->raddr = raddr;
	*pos = mr;
	return first;
}

/**
 * mrkit_io_post_read - register local sinks and RDMA READ into them
 * @io: a mapped I/O, normally %MRKIT_LOCAL_SINK
 * @qp: the connection's QP
 * @raddr: the peer's address of the first byte
 * @rkey: the peer's rkey
 *
 * For targets that pull an initiator's data (NVMe-oF, iSER and NFS/RDMA
 * servers; mrkit's own initiators never READ).  Posts [LOCAL_INV of
 * lazily kept keys] REG_MR... and one RDMA READ per descriptor (the
 * peer's range is consumed in list order), the last READ signaled.  On
 * iWARP each READ is an RDMA_READ_WITH_INV that invalidates
 * its sink, and the READ's completion finishes the I/O; elsewhere the
 * completion posts the LOCAL_INV chain and that finishes it.  Either way
 * @io's done callback runs once the data is in and every sink is invalid.
 * Until then every other call on @io is refused with -EBUSY.
 *
 * Context: any context ib_post_send() allows.  No allocation.
 * Return:
 * * %0 - posted; done() will run.
 * * %-EINVAL - the I/O is not mapped.
 * * %-EBUSY - a READ chain of the I/O is in flight already.
 * * %-EIO - a descriptor was reached by a flush of its previous
 *   registration since it was taken (see mrkit_io_post()); nothing was
 *   posted.  The I/O is finished as below.
 * * the provider's errno - the post failed.  The I/O is finished by the
 *   failure: every descriptor is parked, and done() runs once, with the
 *   errno, after mrkit_pool_qp_drained() when their MRs are deregistered
 *   (never before this returns).  When nothing of the chain reached the
 *   QP and every descriptor's last registration was posted before a
 *   drain already reported, nothing is parked: the MRs are deregistered
 *   at once.
 */
int mrkit_io_post_read(struct mrkit_io *io, struct ib_qp *qp, u64 raddr,
		       u32 rkey)
{
	bool with_inv = io->pool->iwarp, posted = false, drained = true;
	struct mrkit_read_batch b __uninitialized;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first;
	struct mrkit_mr *mr;
	int ret;

	ret = mrkit_io_check_mapped(io, "READ");
	if (ret < 0)
		return ret;
	mrkit_io_hand_out(io, ret);
	io->qp = qp;
	io->nr_wrs = 0;
	/* A late flush reached a descriptor (mrkit_chain_regs()). */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (unlikely(mrkit_mr_state(mr) != MRKIT_MR_REGISTERED ||
			     READ_ONCE(mr->old_inv) == MRKIT_OLD_INV_UNKNOWN)) {
			mrkit_chain_refuse(mr);
			mrkit_io_post_abort(io, -EIO, true, true);
			return -EIO;
		}
		/* mrkit_mr_posting() clears it before the post. */
		drained &= READ_ONCE(mr->drained);
	}

	/* Lazily kept keys go first, in posts of their own. */
	ret = mrkit_post_kept_invs(io, qp, &posted);
	if (ret)
		goto out_failed;

	io->nr_wrs += 2 * io->nr_mrs;
	/* Before the post: the completion may run on another CPU at once. */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		/* The kept keys' LOCAL_INVs are queued ahead. */
		WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_NONE);
		mrkit_mr_posting(io, mr);
		if (with_inv)
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_INVALIDATING);
	}
	WRITE_ONCE(io->state, MRKIT_IO_READING);

	/* Per batch: its REG_MRs, then one READ per descriptor. */
	for (mr = io->mrs; mr;) {
		struct mrkit_mr *from = mr;

		first = mrkit_read_batch(io, &mr, &b, raddr, rkey, with_inv);
		raddr = b.raddr;
		if (trace_mrkit_reg_enabled() || trace_mrkit_read_inv_enabled())
			mrkit_trace_chain(io, from, mr);
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		if (ret) {
			mrkit_post_failed(io, ret, first, bad, "READ");
			posted |= bad != first;
			goto out_failed;
		}
		posted = true;
	}
	return 0;

out_failed:
	/* Nothing reached the QP: each descriptor is as drained as before. */
	if (!posted && drained)
		for (mr = io->mrs; mr; mr = mr->io_next)
			WRITE_ONCE(mr->drained, true);
	mrkit_io_post_abort(io, ret, true, !posted);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_post_read, MRKIT);

/*
 * Start invalidating a REGISTERED descriptor whose REG_MR was posted.
 * False when a flush of that REG_MR, on another CPU, marked it STALE
 * first: its key is then the fence's, and no LOCAL_INV is posted for it.
 */
static __always_inline bool mrkit_mr_start_inv(struct mrkit_mr *mr)
{
	int cur = MRKIT_MR_REGISTERED;

	mrkit_rmw(1);
	if (likely(atomic_try_cmpxchg(&mr->state, &cur,
				      MRKIT_MR_INVALIDATING)))
		return true;
	if (cur != MRKIT_MR_STALE)
		mrkit_mr_refused(mr, MRKIT_MR_REGISTERED,
				 MRKIT_MR_INVALIDATING, cur);
	return false;
}

/*
 * Post one batch of an I/O's LOCAL_INVs, the last one signaled when
 * @last.  On a failure the I/O is finished here, with the error, and
 * nothing of it may be touched any more: returns false then.
 */
static __always_inline bool mrkit_io_post_invs(struct mrkit_io *io,
					       struct ib_qp *qp,
					       struct ib_send_wr *first,
					       struct ib_send_wr *tail,
					       bool last)
{
	const struct ib_send_wr *bad = NULL;
	int ret;

	if (last)
		mrkit_signal_last(io, tail);
	ret = ib_post_send(qp, first, &bad);
	if (likely(!ret))
		return true;
	mrkit_post_failed(io, ret, first, bad, "invalidation");
	/* io->nr_wrs counts this chain's WRs up to this post's last. */
	mrkit_io_post_abort(io, ret, false,
			    bad == first && io->nr_wrs <= MRKIT_POST_BATCH);
	return false;
}

/*
 * Post the invalidation chain of an I/O.  Returns 0 when the I/O is (or
 * will be) finished and notified; on a post failure it is finished here,
 * with the error.  One pass over the descriptors decides and builds each
 * LOCAL_INV: a descriptor's state is read once, so a flush that marks one
 * STALE meanwhile (on another CPU) cannot make the chain disagree with
 * what was counted.  Batches of MRKIT_POST_BATCH are posted as they fill,
 * unsignaled; the last WR of the last batch is signaled.  The I/O's state
 * becomes @inv_state with the first LOCAL_INV: %MRKIT_IO_INVALIDATING, or
 * %MRKIT_IO_READ_INVALIDATING for a READ chain's sinks, which keeps every
 * other call refused with -EBUSY until done().
 */
static __always_inline int mrkit_io_post_inv(struct mrkit_io *io,
					     struct ib_qp *qp, u8 inv_state)
{
	struct ib_send_wr inv[MRKIT_POST_BATCH] __uninitialized;
	struct ib_send_wr *wr = inv, *last = NULL;
	unsigned int count = 0;
	struct mrkit_mr *mr;

	for (mr = io->mrs; mr; mr = mr->io_next) {
		/* Never invalidate a protected registration unchecked. */
		if (mrkit_mr_enforce_pi(io, mr))
			io->status = io->status ?: -EILSEQ;
		if (mrkit_mr_state(mr) != MRKIT_MR_REGISTERED)
			continue;
		if (!mrkit_mr_owns_live_key(mr)) {
			/* Handed out, never posted. */
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
			continue;
		}
		if (!mrkit_mr_start_inv(mr))
			continue;
		if (wr == inv + MRKIT_POST_BATCH) {
			/* A full batch, and more to come. */
			io->nr_wrs = count;
			if (!mrkit_io_post_invs(io, qp, inv, last, false))
				return 0;
			wr = inv;
			last = NULL;
		}
		if (!count++) {
			io->qp = qp;
			WRITE_ONCE(io->state, inv_state);
		}
		mrkit_build_inv(mr, wr);
		if (last)
			last->next = wr;
		trace_mrkit_localinv(mr);
		last = wr++;
	}
	io->nr_wrs = count;
	if (!count) {
		/*
		 * Nothing live: every registration was invalidated by the
		 * peer or never posted.  A successful remote invalidation of
		 * a key means its REG_MR, and every WR before it on the send
		 * queue, executed without error, so no completion can come
		 * for those descriptors: they settle as after a successful
		 * chain (and stay with the I/O in a caching pool).  A WR
		 * parked after a failed post, or flushed, left its descriptor
		 * STALE, which the fence handles whatever this says.
		 */
		mrkit_io_finish(io, 0, MRKIT_FIN_RETIRED);
		return 0;
	}
	mrkit_io_post_invs(io, qp, inv, last, true);
	return 0;
}

/*
 * A batch of mrkit_io_post_inv_unsignaled() failed to post, after earlier
 * ones reached the QP: the I/O is invalidated as in a fenced pool next,
 * which must not invalidate those keys a second time (a device may fail a
 * LOCAL_INV of a key that is invalid already) nor count them invalid
 * before their LOCAL_INVs ran.  Each is retired instead: parked until
 * mrkit_pool_qp_drained(), then deregistered, which kills its key
 * whatever its LOCAL_INV did; the I/O's done() waits for that.
 */
static void mrkit_io_park_posted_invs(struct mrkit_io *io)
{
	struct mrkit_mr *mr;

	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (READ_ONCE(mr->old_inv) != MRKIT_OLD_INV_POSTED ||
		    mrkit_mr_state(mr) != MRKIT_MR_REGISTERED)
			continue;
		mr->orphan = true;
		mrkit_mr_mark_stale(mr);
	}
}

/**
 * mrkit_io_post_inv_unsignaled - post the LOCAL_INVs of a completing I/O
 * @io: a posted I/O of a %MRKIT_POOL_POST_INV pool
 * @qp: the QP its registrations were posted on
 *
 * One unsignaled LOCAL_INV per live registration, %MRKIT_POST_BATCH per
 * ib_post_send(), for mrkit_io_complete(), which gives the descriptors
 * back right after.  Each descriptor whose LOCAL_INV reached the QP is
 * marked %MRKIT_OLD_INV_POSTED, so that its next registration does not
 * invalidate the key again; a failure completes on the descriptor's cqe
 * and takes the mark back (mrkit_posted_inv_failed()).  A protected
 * registration's signature status is read first (mrkit_mr_enforce_pi()):
 * an error becomes the I/O's -EILSEQ.
 *
 * Return: 0, or the provider's errno when a batch failed to post; the
 * descriptors whose LOCAL_INVs reached the QP before it are then retired
 * (mrkit_io_park_posted_invs()).
 */
int mrkit_io_post_inv_unsignaled(struct mrkit_io *io, struct ib_qp *qp)
{
	struct ib_send_wr inv[MRKIT_POST_BATCH] __uninitialized;
	struct mrkit_mr *batch[MRKIT_POST_BATCH];
	struct ib_send_wr *first, **prev;
	const struct ib_send_wr *bad;
	struct mrkit_mr *mr = io->mrs;
	unsigned int n, k;
	int ret;

	while (mr) {
		first = NULL;
		prev = &first;
		for (n = 0; mr && n < MRKIT_POST_BATCH; mr = mr->io_next) {
			/* Never invalidate a protected registration unchecked. */
			if (mrkit_mr_enforce_pi(io, mr))
				io->status = io->status ?: -EILSEQ;
			if (mrkit_mr_state(mr) != MRKIT_MR_REGISTERED ||
			    !mrkit_mr_owns_live_key(mr))
				continue;
			mrkit_build_inv(mr, &inv[n]);
			trace_mrkit_localinv(mr);
			*prev = &inv[n];
			prev = &inv[n].next;
			batch[n++] = mr;
		}
		if (!first)
			break;
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		for (k = 0; k < n && &inv[k] != bad; k++) {
			mrkit_mr_count(batch[k], MRKIT_EV_LOCAL_INV);
			WRITE_ONCE(batch[k]->old_inv, MRKIT_OLD_INV_POSTED);
		}
		if (ret) {
			mrkit_post_failed(io, ret, first, bad, "invalidation");
			mrkit_io_park_posted_invs(io);
			return ret;
		}
	}
	return 0;
}

/*
 * mrkit_io_invalidate() of one plain descriptor whose registration is
 * live (INVALIDATING now): its signaled LOCAL_INV.  Returns 0.
 */
static noinline int mrkit_io_inv_one(struct mrkit_io *io, struct ib_qp *qp,
				     struct mrkit_mr *mr)
{
	struct ib_send_wr inv __uninitialized;

	io->qp = qp;
	WRITE_ONCE(io->state, MRKIT_IO_INVALIDATING);
	mrkit_build_inv(mr, &inv);
	trace_mrkit_localinv(mr);
	io->nr_wrs = 1;
	mrkit_io_post_invs(io, qp, &inv, &inv, true);
	return 0;
}

/* mrkit_io_invalidate() of any other I/O: mrkit_io_post_inv(). */
static noinline int mrkit_io_inv_all(struct mrkit_io *io, struct ib_qp *qp)
{
	return mrkit_io_post_inv(io, qp, MRKIT_IO_INVALIDATING);
}

/**
 * mrkit_io_invalidate - invalidate every registration of an I/O, async
 * @io: the I/O
 * @qp: the QP its registrations were posted on
 *
 * Posts one LOCAL_INV per live registration, only the last signaled, and
 * returns.  When that completes, the descriptors go back to the pool (or
 * are retired after an error), a DMA mapping mrkit made is undone, and the
 * I/O's done callback runs - only then may the ULP reuse the memory.  With
 * nothing live (never posted, all remotely invalidated) done runs before
 * this returns.  If the post fails, done runs with the errno once the
 * descriptors that may still be referenced by posted WRs are parked and,
 * after mrkit_pool_qp_drained(), deregistered.
 *
 * When an invalidation fails (flushed, or the post fails) the affected
 * descriptors are retired and done() runs with the error only after their
 * MRs are deregistered, from the pool's work item (for parked ones, after
 * mrkit_pool_qp_drained()).
 *
 * Context: any context ib_post_send() allows (a CQ handler included).
 * Return:
 * * %0 - done() has run or will run exactly once.
 * * %-EBUSY - the I/O's RDMA READ chain is in flight; nothing changed.
 * * %-EINVAL - the I/O is not in a state that has registrations (not
 *   mapped, or already finished); done() will not run.
 */
int mrkit_io_invalidate(struct mrkit_io *io, struct ib_qp *qp)
{
	int ret = mrkit_io_check_live(io, "invalidation");
	struct mrkit_mr *mr = io->mrs;

	if (ret)
		return ret;
	/*
	 * The common I/O, one plain descriptor: its registration is live,
	 * or the peer invalidated it (RESERVED: nothing to post, as in
	 * mrkit_io_post_inv()).  A flush that marks it STALE before the
	 * cmpxchg sends it the general way, which finishes it on its fence.
	 * The WRs are built in the frames of the calls below, so that a
	 * remotely invalidated I/O finishes without one.
	 */
	if (likely(mr && !mr->io_next && !mr->pi_unchecked)) {
		int state = mrkit_mr_state(mr);

		if (state == MRKIT_MR_RESERVED) {
			io->nr_wrs = 0;
			mrkit_io_finish_ok(io);
			return 0;
		}
		if (likely(state == MRKIT_MR_REGISTERED &&
			   mrkit_mr_owns_live_key(mr) &&
			   mrkit_mr_start_inv(mr)))
			return mrkit_io_inv_one(io, qp, mr);
	}
	return mrkit_io_inv_all(io, qp);
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_invalidate, MRKIT);

/**
 * mrkit_io_invalidate_sync - invalidate every registration and wait
 * @io: the I/O
 * @qp: the QP its registrations were posted on
 *
 * As mrkit_io_invalidate(), but waits for the last LOCAL_INV instead of
 * calling done().  The QP's send CQ must be polled by someone else
 * (IB_POLL_SOFTIRQ or IB_POLL_WORKQUEUE); a flushed QP completes it too.
 * After a failure it returns only once the retired MRs are deregistered;
 * if the invalidation post itself failed, that is after another context
 * calls mrkit_pool_qp_drained() (or destroys the pool).
 *
 * Context: process context; sleeps.
 * Return:
 * * %0 - every registration is invalid and the memory may be reused.
 * * %-EBUSY - the I/O's RDMA READ chain is in flight.
 * * %-EINVAL - the I/O has no registrations to invalidate.
 * * %-EIO, or the provider's post errno - an invalidation failed; the
 *   affected descriptors were deregistered and the memory may be reused.
 * * %-EILSEQ - mrkit found a PI error while invalidating.
 */
int mrkit_io_invalidate_sync(struct mrkit_io *io, struct ib_qp *qp)
{
	DECLARE_COMPLETION_ONSTACK(done);
	int ret;

	might_sleep();
	ret = mrkit_io_check_live(io, "invalidation");
	if (ret)
		return ret;
	io->waiter = &done;
	mrkit_io_post_inv(io, qp, MRKIT_IO_INVALIDATING);
	wait_for_completion(&done);
	io->waiter = NULL;
	return io->status;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_invalidate_sync, MRKIT);
