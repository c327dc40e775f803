// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit: work-request chains for one I/O - registration, RDMA READ into
 * local sinks, invalidation - and their completions.
 *
 * Normal operation
 * ----------------
 * mrkit_io_post() posts, with one ib_post_send(), a LOCAL_INV for every
 * descriptor that still holds a lazily kept registration, then one
 * unsignaled REG_MR per descriptor, then the caller's own WR(s) (a SEND
 * carrying the rkeys, an RDMA op).  The caller's WRs carry the signal.
 * mrkit_io_post_read() does the same with one RDMA READ per descriptor in
 * place of the caller's WRs; on iWARP each is an RDMA_READ_WITH_INV that
 * also invalidates its sink.
 *
 * mrkit_io_invalidate() posts one LOCAL_INV per live registration with
 * only the last one signaled: on one send queue the completion of the last
 * WR implies every earlier one completed.  That completion finishes the
 * I/O: descriptors go back to the pool (a DMA mapping mrkit made is
 * undone) and then, and only then, the ULP's done callback runs.  The sync
 * variant waits for the same completion instead.  Nothing is allocated
 * per I/O: cqes and LOCAL_INV WRs live in the descriptors, REG_MR and
 * READ WRs on the stack of the post that carries them (providers copy
 * WRs before ib_post_send() returns), MRKIT_POST_BATCH descriptors per
 * post; an I/O with more descriptors takes one post per batch, in order.
 *
 * Recovery
 * --------
 * A REG_MR or LOCAL_INV that completes in error (flushes included) marks
 * its descriptor STALE: its registration state is unknown, so the pool
 * deregisters and replaces it instead of reusing it.
 *
 * A post that fails part-way is split with bad_wr into posted and
 * unposted WRs.  Unposted REG_MRs return their descriptors to MAPPED (or
 * REGISTERED-not-live) as if never handed out; posted ones are reclaimed
 * only by completions.  When no completion can be awaited for a posted WR
 * (the signaled WR after it was not posted), its descriptor is parked
 * ("orphan") until the ULP reports the QP drained
 * (mrkit_pool_qp_drained()) or destroys the pool, instead of mrkit
 * waiting for a completion that cannot come.  The caller always gets the
 * errno.  A failed mrkit_io_post() leaves the I/O posted: the ULP
 * finishes it as any other (mrkit_io_complete() / _invalidate()) and maps
 * again to retry, so the keys it advertises are always the keys posted.
 *
 * The rkey fence holds on these paths too: an I/O that finishes with a
 * retired (STALE) descriptor - a flushed REG_MR or LOCAL_INV, a failed
 * post - is not reported until that descriptor's MR is deregistered,
 * which kills every key it ever had.  The I/O waits in FENCING with one
 * count per such descriptor; the pool's work item deregisters them (for
 * parked ones only after mrkit_pool_qp_drained()), and the last one
 * queues the I/O for done() (or the sync waiter), run by the work item in
 * process context once it dropped the pool's lock.
 *
 * Serialization
 * -------------
 * The ULP serializes calls on one I/O.  Completion handlers run in CQ
 * context and touch only the I/O whose chain completed; they race with
 * nothing else on it because the I/O is INVALIDATING (or READING) until
 * they finish it, and every call but the completion's is refused in those
 * states.  Nothing reads the I/O after the ib_post_send() that can lead
 * to its completion (the last one of a chain): accounting and tracing
 * happen before it.  Descriptor state changes go through cmpxchg
 * (mrkit_mr_transition()) from the first post of a descriptor on, so a
 * stray completion cannot move a descriptor out of a state it is not
 * in; map and hand-out, before that post, and the settle and put after
 * a chain completed successfully (every WR before it did too), are the
 * owner's plain stores (mrkit_mr_own(), mrkit_mr_put_own()).  The fence
 * counts of a FENCING
 * I/O are written by its finisher before the first descriptor is given
 * back, and afterwards only by the pool's work item under the pool lock.
 */

#include <linux/completion.h>
#include <linux/module.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include <trace/events/mrkit.h>

/* How an I/O finished, for mrkit_io_finish(). */
enum mrkit_fin {
	MRKIT_FIN_UNDRAINED,	/* a WR on it may still complete */
	MRKIT_FIN_DRAINED,	/* its chain completed */
	MRKIT_FIN_RETIRED,	/* ... successfully: every WR before it too */
};

static void mrkit_io_finish(struct mrkit_io *io, int status,
			    enum mrkit_fin fin);
static int mrkit_io_post_inv(struct mrkit_io *io, struct ib_qp *qp);

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
			if (mr->chained_inv)
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

static void mrkit_wc_reg(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_mr *mr = container_of(wc->wr_cqe, struct mrkit_mr,
					   reg_cqe);

	/* REG_MRs are unsignaled: only failures and flushes come here. */
	trace_mrkit_wc_reg(cq, wc, mr);
	if (wc->status != IB_WC_SUCCESS) {
		mrkit_pool_err(mr->pool, "REG_MR of descriptor %u: %s\n",
			       mr->idx, ib_wc_status_msg(wc->status));
		mrkit_mr_mark_stale(mr);
	}
}

static void mrkit_wc_inv(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_mr *mr = container_of(wc->wr_cqe, struct mrkit_mr,
					   inv_cqe);

	trace_mrkit_wc_inv(cq, wc, mr);
	if (wc->status != IB_WC_SUCCESS) {
		mrkit_pool_err(mr->pool, "LOCAL_INV of descriptor %u: %s\n",
			       mr->idx, ib_wc_status_msg(wc->status));
		mrkit_mr_mark_stale(mr);
	}
}

/*
 * A completion that finishes an I/O must find the I/O waiting for it; a
 * stray or duplicated completion (a provider bug, or a ULP that reused
 * the cqe) is reported and otherwise ignored.
 */
static struct mrkit_io *mrkit_wc_io(struct mrkit_mr *mr, u8 want)
{
	struct mrkit_io *io = READ_ONCE(mr->io);

	if (likely(io && io->state == want))
		return io;
	mrkit_pool_err(mr->pool,
		       "completion for descriptor %u, which is not in flight (%s); ignored\n",
		       mr->idx, mrkit_mr_state_name(mrkit_mr_state(mr)));
	return NULL;
}

/* The signaled last WR of an invalidation or READ_WITH_INV chain. */
static void mrkit_wc_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_mr *mr = container_of(wc->wr_cqe, struct mrkit_mr,
					   inv_cqe);
	struct mrkit_io *io = READ_ONCE(mr->io);

	io = mrkit_wc_io(mr, io && io->state == MRKIT_IO_READING ?
			 MRKIT_IO_READING : MRKIT_IO_INVALIDATING);
	if (!io)
		return;
	mrkit_wc_inv(cq, wc);
	if (wc->status == IB_WC_SUCCESS)
		mrkit_io_finish(io, 0, MRKIT_FIN_RETIRED);
	else
		mrkit_io_finish(io, -EIO, MRKIT_FIN_DRAINED);
}

/* The last READ of a non-iWARP READ chain: now invalidate the sinks. */
static void mrkit_wc_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrkit_mr *mr = container_of(wc->wr_cqe, struct mrkit_mr,
					   inv_cqe);
	struct mrkit_io *io = mrkit_wc_io(mr, MRKIT_IO_READING);

	if (!io)
		return;
	trace_mrkit_wc_read(cq, wc, mr);
	if (wc->status != IB_WC_SUCCESS) {
		mrkit_pool_err(mr->pool, "RDMA READ into descriptor %u: %s\n",
			       mr->idx, ib_wc_status_msg(wc->status));
		mrkit_io_finish(io, -EIO, MRKIT_FIN_DRAINED);
		return;
	}
	mrkit_io_post_inv(io, io->qp);
}

/*
 * Settle one descriptor's state after its I/O finished, before it is put
 * back.  @fin: whether a WR on it may still complete (the chain that
 * finished the I/O did not, or did, complete; or completed successfully,
 * which on a send queue's in-order completions means every WR posted
 * before it did too: then no completion handler can touch the
 * descriptor any more, and its owner's stores need no cmpxchg).
 */
static void mrkit_io_settle_one(struct mrkit_mr *mr, int status,
				enum mrkit_fin fin)
{
	switch (mrkit_mr_state(mr)) {
	case MRKIT_MR_INVALIDATING:
		if (status) {
			mrkit_mr_mark_stale(mr);
			break;
		}
		mr->dev_valid = false;
		atomic64_inc(&mr->pool->local_inv);
		mrkit_rmw(1);
		if (fin == MRKIT_FIN_RETIRED)
			mrkit_mr_own(mr, MRKIT_MR_INVALIDATING,
				     MRKIT_MR_RESERVED);
		else
			mrkit_mr_transition(mr, MRKIT_MR_INVALIDATING,
					    MRKIT_MR_RESERVED);
		break;
	case MRKIT_MR_REGISTERED:
		/* Handed out, never posted: nothing live at the device. */
		if (!mr->dev_valid || mr->inv_key != mr->ibmr->rkey) {
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
			break;
		}
		/*
		 * A live registration nobody will invalidate: retire it
		 * (deregistration kills the rkey), and if a WR may still
		 * reference it, only once the QP is drained.
		 */
		mr->orphan = fin == MRKIT_FIN_UNDRAINED;
		mrkit_mr_mark_stale(mr);
		break;
	default:
		break;
	}
}

/**
 * mrkit_io_notify - tell the ULP its I/O is finished
 * @io: a finished I/O; its status is in @io->status
 *
 * Wakes mrkit_io_invalidate_sync(), or runs done().  The last access to
 * @io: the ULP may free it from here on.
 */
void mrkit_io_notify(struct mrkit_io *io)
{
	struct completion *waiter = io->waiter;

	if (waiter)
		complete(waiter);
	else if (io->done)
		io->done(io, io->status);
}

/*
 * Every descriptor of @io goes back to the pool, the DMA mapping mrkit
 * made is undone, and only then is the ULP told.  A STALE
 * descriptor's key may still be valid at the device until its MR is
 * deregistered: with any, the I/O waits in FENCING and the pool's work
 * item tells the ULP after the last deregistration (mrkit_io_put_all()
 * leaves those descriptors pointing at the I/O; nothing here touches the
 * I/O after the first of them is given back).
 */
static void mrkit_io_finish(struct mrkit_io *io, int status,
			    enum mrkit_fin fin)
{
	struct mrkit_mr *mr;
	u16 fenced = 0;

	for (mr = io->mrs; mr; mr = mr->io_next) {
		mrkit_io_settle_one(mr, status, fin);
		if (mrkit_mr_state(mr) == MRKIT_MR_STALE)
			fenced++;
		else
			mr->io = NULL;
	}
	/* A PI error mrkit found itself (see mrkit_mr_enforce_pi()). */
	mrkit_io_enforce_pi_all(io);
	io->status = status ?: io->status;
	io->fence_pending = fenced;
	if (fenced)
		trace_mrkit_pool_fence(io->pool, fenced);
	mrkit_io_put_all(io, fenced ? MRKIT_IO_FENCING : MRKIT_IO_DONE,
			 fin == MRKIT_FIN_RETIRED);
	if (!fenced)
		mrkit_io_notify(io);
}

static void mrkit_build_inv(struct mrkit_mr *mr, bool last)
{
	mr->inv.next = NULL;
	mr->inv.opcode = IB_WR_LOCAL_INV;
	mr->inv.num_sge = 0;
	mr->inv.sg_list = NULL;
	mr->inv.ex.invalidate_rkey = mr->inv_key;
	mr->inv.wr_cqe = &mr->inv_cqe;
	mr->inv_cqe.done = last ? mrkit_wc_inv_done : mrkit_wc_inv;
	mr->inv.send_flags = last ? IB_SEND_SIGNALED : 0;
}

/*
 * After a failed post: was @wr posted?  Every WR before @bad was.
 * @passed tracks whether @bad has been reached while walking in order.
 */
static bool mrkit_wr_posted(const struct ib_send_wr *wr,
			    const struct ib_send_wr *bad, bool *passed)
{
	if (wr == bad)
		*passed = true;
	return !*passed;
}

/*
 * REG_MR (and RDMA READ) WRs are built on the stack of the post that
 * carries them, for at most MRKIT_POST_BATCH descriptors per
 * ib_post_send(): a provider copies WRs before ib_post_send() returns, so
 * only the cqes (and the LOCAL_INV, which a lazy chain shares with the
 * REG_MR) live in the descriptor.  I/Os with more descriptors take one
 * post per batch, in order, on the same send queue.  The arrays are
 * __uninitialized (CONFIG_INIT_STACK_ALL_ZERO would zero them on every
 * post, a measurable share of a small I/O): every WR field is written
 * before use.
 */
#define MRKIT_POST_BATCH	4

static void mrkit_build_reg(struct mrkit_mr *mr, struct ib_reg_wr *reg,
			    int access)
{
	struct ib_mr *ibmr = mr->ibmr;

	/* Every field: the array is exempt from stack auto-init. */
	reg->wr.next = NULL;
	reg->wr.opcode = ibmr->type == IB_MR_TYPE_INTEGRITY ?
			 IB_WR_REG_MR_INTEGRITY : IB_WR_REG_MR;
	reg->wr.wr_cqe = &mr->reg_cqe;
	reg->wr.sg_list = NULL;
	reg->wr.num_sge = 0;
	reg->wr.send_flags = 0;
	reg->wr.ex.imm_data = 0;
	reg->mr = ibmr;
	reg->key = ibmr->rkey;
	reg->access = access;
}

/*
 * Chain [LOCAL_INV of a lazily kept key] REG_MR for the REGISTERED
 * descriptors from *@pos on, at most MRKIT_POST_BATCH of them, their
 * REG_MRs in @reg (*@nreg of them); *@pos is left at the first descriptor
 * not looked at.
 */
static struct ib_send_wr **mrkit_chain_regs(struct mrkit_io *io,
					    struct mrkit_mr **pos,
					    struct ib_reg_wr *reg,
					    unsigned int *nreg,
					    struct ib_send_wr **prev,
					    unsigned int *count)
{
	struct mrkit_mr *mr;
	unsigned int n = 0;

	for (mr = *pos; mr && n < MRKIT_POST_BATCH; mr = mr->io_next) {
		if (mrkit_mr_state(mr) != MRKIT_MR_REGISTERED)
			continue;
		mr->chained_inv = mr->dev_valid;
		if (mr->dev_valid) {
			mrkit_build_inv(mr, false);
			*prev = &mr->inv;
			prev = &mr->inv.next;
			(*count)++;
		}
		/*
		 * Live from the moment it is posted: a completion on another
		 * CPU may already run the ULP's invalidation.
		 */
		mr->dev_valid = true;
		mr->inv_key = mr->ibmr->rkey;
		mr->pi_unchecked = mr->ibmr->type == IB_MR_TYPE_INTEGRITY;
		mr->reg_cqe.done = mrkit_wc_reg;
		mrkit_build_reg(mr, &reg[n], io->access);
		*prev = &reg[n].wr;
		prev = &reg[n].wr.next;
		n++;
		(*count)++;
	}
	*pos = mr;
	*nreg = n;
	return prev;
}

/*
 * Undo the registration accounting for WRs that were not posted: those
 * of the failed batch (from @from, @nreg REG_MRs in @reg) from @bad on,
 * and every descriptor after it, which no batch chained.
 */
static void mrkit_chain_regs_failed(struct mrkit_io *io,
				    struct mrkit_mr *from,
				    const struct ib_reg_wr *reg,
				    unsigned int nreg,
				    const struct ib_send_wr *bad)
{
	bool passed = false;
	unsigned int n = 0;
	struct mrkit_mr *mr;

	for (mr = from; mr; mr = mr->io_next) {
		bool inv_posted = false;

		if (mrkit_mr_state(mr) != MRKIT_MR_REGISTERED)
			continue;
		if (n < nreg && reg[n].mr == mr->ibmr) {
			/* Chained in the failed batch. */
			if (mr->chained_inv)
				inv_posted = mrkit_wr_posted(&mr->inv, bad,
							     &passed);
			if (mrkit_wr_posted(&reg[n++].wr, bad, &passed))
				continue;
			if (inv_posted) {
				/* Old key being invalidated, new one never posted. */
				mr->orphan = true;
				mrkit_mr_mark_stale(mr);
				continue;
			}
			mr->pi_unchecked = false;
			mr->dev_valid = mr->chained_inv;
			mr->inv_key = mr->inv.ex.invalidate_rkey;
		}
		/* Not posted: as if never handed out. */
		mrkit_mr_transition(mr, MRKIT_MR_REGISTERED, MRKIT_MR_MAPPED);
	}
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
 * mrkit_io_nr_wrs() tells how many WRs that was.  mrkit does not touch
 * @io after the last ib_post_send() succeeded: the caller's completion
 * may finish it on another CPU at once.
 *
 * Context: any context ib_post_send() allows.  No allocation.
 * Return values:
 *   %0 - posted.
 *   %-EINVAL - the I/O is not mapped (or was posted already).
 *   the provider's errno - the post failed; WRs before the bad one were
 *	posted.  The I/O stays posted: finish it with mrkit_io_complete() or
 *	mrkit_io_invalidate() (done() runs once every key that reached the
 *	device is dead) and map it again to retry.  It cannot be posted
 *	again, so the keys a retry advertises are always the keys it posts.
 */
int mrkit_io_post(struct mrkit_io *io, struct ib_qp *qp,
		  struct ib_send_wr *wr, const struct ib_send_wr **bad_wr)
{
	struct ib_reg_wr reg[MRKIT_POST_BATCH] __uninitialized;
	struct ib_send_wr *first, **prev, *w;
	struct mrkit_mr *pos, *from;
	const struct ib_send_wr *bad;
	unsigned int count = 0, nreg;
	int ret;

	if (io->state != MRKIT_IO_MAPPED && io->state != MRKIT_IO_HANDED_OUT) {
		mrkit_pool_err(io->pool, "post of an I/O that is not mapped\n");
		return -EINVAL;
	}
	mrkit_io_hand_out(io);
	io->qp = qp;
	for (w = wr; w; w = w->next)
		count++;
	io->state = MRKIT_IO_POSTED;
	pos = io->mrs;
	do {
		from = pos;
		first = NULL;
		prev = mrkit_chain_regs(io, &pos, reg, &nreg, &first, &count);
		/* The caller's WRs end the last post. */
		*prev = pos ? NULL : wr;
		if (!pos)
			io->nr_wrs = count;
		if (trace_mrkit_reg_enabled())
			mrkit_trace_chain(io, from, pos);
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		if (ret)
			goto out_failed;
	} while (pos);
	return 0;

out_failed:
	mrkit_chain_regs_failed(io, from, reg, nreg, bad);
	mrkit_post_failed(io, ret, first, bad, "registration");
	io->nr_wrs = count;
	if (bad_wr)
		*bad_wr = mrkit_caller_bad(wr, bad, !pos);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_post, MRKIT);

/**
 * mrkit_io_post_read - register local sinks and RDMA READ into them
 * @io: a mapped I/O, normally %MRKIT_LOCAL_SINK
 * @qp: the connection's QP
 * @raddr: the peer's address of the first byte
 * @rkey: the peer's rkey
 *
 * Posts [LOCAL_INV of lazily kept keys] REG_MR... and one RDMA READ per
 * descriptor (the peer's range is consumed in list order), the last READ
 * signaled.  On iWARP each READ is an RDMA_READ_WITH_INV that invalidates
 * its sink, and the READ's completion finishes the I/O; elsewhere the
 * completion posts the LOCAL_INV chain and that finishes it.  Either way
 * @io's done callback runs once the data is in and every sink is invalid.
 * Until then every other call on @io is refused with -EBUSY.
 *
 * Context: any context ib_post_send() allows.  No allocation.
 * Return values:
 *   %0 - posted; done() will run.
 *   %-EINVAL - the I/O is not mapped.
 *   the provider's errno - the post failed.  The I/O is finished by the
 *	failure: every descriptor is parked, and done() runs once, with the
 *	errno, after mrkit_pool_qp_drained() when their MRs are deregistered
 *	(never before this returns).
 */
int mrkit_io_post_read(struct mrkit_io *io, struct ib_qp *qp, u64 raddr,
		       u32 rkey)
{
	bool with_inv = rdma_node_get_transport(io->pool->dev->node_type) ==
			RDMA_TRANSPORT_IWARP;
	struct ib_reg_wr reg[MRKIT_POST_BATCH] __uninitialized;
	struct ib_rdma_wr rd[MRKIT_POST_BATCH] __uninitialized;
	struct ib_sge sge[MRKIT_POST_BATCH] __uninitialized;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL, **prev;
	struct mrkit_mr *mr, *last = NULL;
	unsigned int count = 0;
	int ret;

	if (io->state != MRKIT_IO_MAPPED && io->state != MRKIT_IO_HANDED_OUT) {
		mrkit_pool_err(io->pool, "READ for an I/O that is not mapped\n");
		return -EINVAL;
	}
	mrkit_io_hand_out(io);

	/* Lazily kept keys go first, in a post of their own. */
	prev = &first;
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (!mr->dev_valid)
			continue;
		mrkit_build_inv(mr, false);
		*prev = &mr->inv;
		prev = &mr->inv.next;
		count++;
	}
	if (first) {
		ret = ib_post_send(qp, first, &bad);
		if (ret)
			goto out_failed;
		for (mr = io->mrs; mr; mr = mr->io_next)
			mr->dev_valid = false;
	}

	for (mr = io->mrs; mr; mr = mr->io_next) {
		mr->reg_cqe.done = mrkit_wc_reg;
		mr->inv_cqe.done = mrkit_wc_inv;
		last = mr;
		count += 2;
	}
	last->inv_cqe.done = with_inv ? mrkit_wc_inv_done : mrkit_wc_read_done;
	io->nr_wrs = count;
	io->state = MRKIT_IO_READING;
	io->qp = qp;
	/* Before the post: the completion may run on another CPU at once. */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		mr->dev_valid = true;
		mr->inv_key = mr->ibmr->rkey;
		if (with_inv)
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_INVALIDATING);
	}

	/* Per batch: its REG_MRs, then one READ per descriptor. */
	for (mr = io->mrs; mr;) {
		struct mrkit_mr *from = mr, *from_batch = mr;
		unsigned int n, k;

		first = NULL;
		prev = &first;
		for (n = 0; mr && n < MRKIT_POST_BATCH; mr = mr->io_next, n++) {
			mrkit_build_reg(mr, &reg[n], io->access);
			*prev = &reg[n].wr;
			prev = &reg[n].wr.next;
		}
		for (k = 0; k < n; k++, from = from->io_next) {
			struct ib_mr *ibmr = from->ibmr;

			sge[k].addr = ibmr->iova;
			sge[k].length = ibmr->length;
			sge[k].lkey = ibmr->lkey;
			memset(&rd[k], 0, sizeof(rd[k]));
			rd[k].wr.sg_list = &sge[k];
			rd[k].wr.num_sge = 1;
			rd[k].wr.wr_cqe = &from->inv_cqe;
			rd[k].remote_addr = raddr;
			rd[k].rkey = rkey;
			if (with_inv) {
				rd[k].wr.opcode = IB_WR_RDMA_READ_WITH_INV;
				rd[k].wr.ex.invalidate_rkey = ibmr->lkey;
			} else {
				rd[k].wr.opcode = IB_WR_RDMA_READ;
			}
			if (from == last)
				rd[k].wr.send_flags = IB_SEND_SIGNALED;
			raddr += ibmr->length;
			*prev = &rd[k].wr;
			prev = &rd[k].wr.next;
		}
		if (trace_mrkit_reg_enabled() || trace_mrkit_read_inv_enabled())
			mrkit_trace_chain(io, from_batch, mr);
		bad = NULL;
		ret = ib_post_send(qp, first, &bad);
		if (ret)
			goto out_failed;
	}
	return 0;

out_failed:
	mrkit_post_failed(io, ret, first, bad, "READ");
	/*
	 * Whatever was posted can no longer be waited for (the signaled
	 * READ was not posted): park every descriptor until the drain.
	 */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		mr->orphan = true;
		mrkit_mr_mark_stale(mr);
	}
	mrkit_io_finish(io, ret, MRKIT_FIN_UNDRAINED);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_post_read, MRKIT);

/*
 * Post the invalidation chain of an I/O.  Returns 0 when the I/O is (or
 * will be) finished and notified; on a post failure it is finished here,
 * with the error.
 */
static int mrkit_io_post_inv(struct mrkit_io *io, struct ib_qp *qp)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL, **prev = &first;
	struct mrkit_mr *mr, *last = NULL;
	unsigned int count = 0;
	int ret;

	for (mr = io->mrs; mr; mr = mr->io_next) {
		/* Never invalidate a protected registration unchecked. */
		if (mrkit_mr_enforce_pi(io, mr))
			io->status = io->status ?: -EILSEQ;
		if (mrkit_mr_state(mr) != MRKIT_MR_REGISTERED)
			continue;
		if (!mr->dev_valid) {
			/* Handed out, never posted. */
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
			continue;
		}
		mrkit_build_inv(mr, false);
		mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
				    MRKIT_MR_INVALIDATING);
		*prev = &mr->inv;
		prev = &mr->inv.next;
		last = mr;
		count++;
	}
	io->nr_wrs = count;
	if (!last) {
		mrkit_io_finish(io, 0, MRKIT_FIN_DRAINED);
		return 0;
	}
	mrkit_build_inv(last, true);
	*prev = NULL;
	io->state = MRKIT_IO_INVALIDATING;
	io->qp = qp;
	if (trace_mrkit_localinv_enabled())
		mrkit_trace_chain(io, io->mrs, NULL);
	ret = ib_post_send(qp, first, &bad);
	if (!ret)
		return 0;

	mrkit_post_failed(io, ret, first, bad, "invalidation");
	/*
	 * The signaled LOCAL_INV was not posted, so no completion will
	 * finish the I/O: park what was posted or is still live, and
	 * finish it now with the error.
	 */
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (mrkit_mr_state(mr) == MRKIT_MR_INVALIDATING) {
			mr->orphan = true;
			mrkit_mr_mark_stale(mr);
		}
	}
	mrkit_io_finish(io, ret, MRKIT_FIN_UNDRAINED);
	return 0;
}

/**
 * mrkit_io_check_live - may an I/O be finished now?
 * @io: the I/O
 * @what: the caller's name, for the message
 *
 * Return: 0 when @io is mapped or posted; -EBUSY while its RDMA READ
 * chain is in flight (done() will run when the data is in); -EINVAL when
 * it has nothing to finish (idle, being invalidated, finished).
 */
int mrkit_io_check_live(struct mrkit_io *io, const char *what)
{
	switch (io->state) {
	case MRKIT_IO_MAPPED:
	case MRKIT_IO_HANDED_OUT:
	case MRKIT_IO_POSTED:
		return 0;
	case MRKIT_IO_READING:
		mrkit_pool_err(io->pool, "%s refused: its RDMA READ chain is in flight\n",
			       what);
		return -EBUSY;
	default:
		mrkit_pool_err(io->pool, "%s of an I/O in state %u\n", what,
			       io->state);
		return -EINVAL;
	}
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
 * this returns.  If the post fails, done runs before this returns with
 * the errno, and descriptors that may still be referenced by posted WRs
 * are parked until mrkit_pool_qp_drained().
 *
 * When an invalidation fails (flushed, or the post fails) the affected
 * descriptors are retired and done() runs with the error only after their
 * MRs are deregistered, from the pool's work item (for parked ones, after
 * mrkit_pool_qp_drained()).
 *
 * Context: any context ib_post_send() allows (a CQ handler included).
 * Return values:
 *   %0 - done() has run or will run exactly once.
 *   %-EBUSY - the I/O's RDMA READ chain is in flight; nothing changed.
 *   %-EINVAL - the I/O is not in a state that has registrations (not
 *	mapped, or already finished); done() will not run.
 */
int mrkit_io_invalidate(struct mrkit_io *io, struct ib_qp *qp)
{
	int ret = mrkit_io_check_live(io, "invalidation");

	if (ret)
		return ret;
	return mrkit_io_post_inv(io, qp);
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
 * Return values:
 *   %0 - every registration is invalid and the memory may be reused.
 *   %-EBUSY - the I/O's RDMA READ chain is in flight.
 *   %-EINVAL - the I/O has no registrations to invalidate.
 *   %-EIO, or the provider's post errno - an invalidation failed; the
 *	affected descriptors were deregistered and the memory may be reused.
 *   %-EILSEQ - mrkit found a PI error while invalidating.
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
	mrkit_io_post_inv(io, qp);
	wait_for_completion(&done);
	io->waiter = NULL;
	return io->status;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_invalidate_sync, MRKIT);

/**
 * mrkit_io_release - give back an I/O's descriptors without invalidating
 * @io: the I/O
 * @flags: &enum mrkit_release_flags
 *
 * For I/Os that exposed nothing (mapped but never posted, or a post that
 * failed before any REG_MR): the descriptors go back to the pool and a
 * DMA mapping mrkit made is undone.  An I/O with live rkeys is refused,
 * unless %MRKIT_RELEASE_LAZY says the ULP wants them left valid; so is
 * one holding a retired descriptor whose key may still be valid (finish
 * it with mrkit_io_invalidate(), which waits for the deregistration).
 * The I/O is idle again afterwards.
 *
 * Context: any.
 * Return values:
 *   %0 - released.
 *   %-EBUSY - a registration is or may still be live, or the I/O's RDMA
 *	READ chain is in flight; nothing was released.
 *   %-EINVAL - unknown @flags, or the I/O is being invalidated or is
 *	finished.
 */
int mrkit_io_release(struct mrkit_io *io, u32 flags)
{
	struct mrkit_mr *mr;
	int ret;

	if (flags & ~MRKIT_RELEASE_FLAGS_ALL) {
		mrkit_pool_err(io->pool, "release: unknown flags 0x%x\n",
			       flags & ~MRKIT_RELEASE_FLAGS_ALL);
		return -EINVAL;
	}
	/* Nothing held: a no-op, as before the first map. */
	if ((io->state == MRKIT_IO_IDLE || io->state == MRKIT_IO_DONE) &&
	    !io->mrs)
		return 0;
	ret = mrkit_io_check_live(io, "release");
	if (ret)
		return ret;
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (flags & MRKIT_RELEASE_LAZY)
			break;
		if (mrkit_mr_state(mr) == MRKIT_MR_STALE && mr->dev_valid) {
			mrkit_pool_err(io->pool,
				       "release refused: descriptor %u was retired with rkey 0x%x possibly live; invalidate instead\n",
				       mr->idx, mr->inv_key);
			return -EBUSY;
		}
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED && mr->dev_valid) {
			mrkit_pool_err(io->pool,
				       "release refused: rkey 0x%x of descriptor %u is live; invalidate first\n",
				       mr->inv_key, mr->idx);
			return -EBUSY;
		}
	}
	for (mr = io->mrs; mr; mr = mr->io_next)
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED && !mr->dev_valid)
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
	io->fence_pending = 0;
	mrkit_io_put_all(io, MRKIT_IO_IDLE, false);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_release, MRKIT);
