// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: The life of an I/O
 *
 * A &struct mrkit_io lives in the ULP's request.  mrkit_io_init() sets it
 * up once; each use then goes::
 *
 *   IDLE -map-> MAPPED -segs-> HANDED_OUT -post-> POSTED
 *                 |               |                 | remote_inv (0 or 1)
 *                 |               |                 v
 *                 +---------------+---post_read--> READING
 *                 |                                 |    \ (IB: the READs
 *                 |     invalidate / complete       |     |  completed)
 *                 |   POSTED ------------------> INVALIDATING
 *                 |                                 |
 *                 | release                         v
 *                 +------> IDLE          DONE <- FENCING (error paths)
 *
 * Mapping attaches pool descriptors to the I/O (frwr/map.c); hand-out
 * rotates their keys; the chains (frwr/chain.c) post REG_MR, READ and
 * LOCAL_INV work requests.  An I/O finishes exactly once: from the
 * completion of its chain's signaled last WR (its own &mrkit_io.cqe), from
 * a post that failed, or from the caller when nothing is left to
 * invalidate.  Finishing settles each descriptor (an invalidated one is
 * reusable, one in an unknown registration state is retired), reads the
 * signature status of protected registrations nobody checked, and gives
 * the descriptors back.  The ULP's done() then runs - at once, or, when a
 * retired descriptor's key may still be valid, only after the pool has
 * deregistered its MR (the rkey fence, &struct mrkit_fence): the I/O waits
 * in FENCING and its fence falls from the pool's work item.  A DMA mapping
 * mrkit made is undone right before done(): never while a key that can
 * reach the memory may be valid.
 *
 * Release gives back the descriptors of an I/O that exposed nothing (or,
 * with %MRKIT_RELEASE_LAZY, leaves live keys valid until each descriptor's
 * next registration); a lazy pool's completion is such a release followed
 * by done(), except after a failed post, whose REG_MRs may still sit in the
 * send queue: that I/O is invalidated for real.
 *
 * Serialization: the ULP serializes its calls on an I/O.  While a READ
 * chain is in flight the chain's completion handler owns the I/O and every
 * call returns -EBUSY, until done() (a chain that failed waits for its
 * fence in READ_FENCING); for that, calls read the state with acquire, and
 * the chain's last store to it (DONE, mrkit_io_notify()) is a release.
 * Nothing touches the I/O after the ib_post_send() that can lead to its
 * completion, and nothing touches the pool after the put of the I/O's last
 * descriptor (the pool may be being destroyed).
 */

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "frwr/io.h"
#include <trace/events/mrkit.h>

/**
 * mrkit_io_set_access - override the access flags derived from the direction
 * @io: an idle I/O
 * @access: IB_ACCESS_* flags for its registrations
 *
 * For protocols whose registrations need other rights than their
 * direction gives (REMOTE_ATOMIC, or a READ sink a peer also writes).  The
 * override lasts until mrkit_io_init(), across failed maps and reuse.
 *
 * Context: any.
 * Return:
 * * %0 - used by the next mrkit_io_map().
 * * %-EINVAL - REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE (the
 *   ibv_reg_mr(3) rule), or flags outside what FRWR can grant.
 * * %-EBUSY - the I/O's RDMA READ chain is in flight; nothing changed.
 */
int mrkit_io_set_access(struct mrkit_io *io, int access)
{
	const int allowed = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	int ret = mrkit_io_busy(io, "access change");

	if (ret)
		return ret;
	if ((access & ~allowed) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IB_ACCESS_LOCAL_WRITE))) {
		mrkit_pool_err(io->pool,
			       "access 0x%x refused: remote write or atomic needs local write\n",
			       access);
		return -EINVAL;
	}
	io->access = access;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_set_access, MRKIT);

/**
 * mrkit_io_set_tag - set the tag %MRKIT_MAP_IOVA_TAG puts in the iova
 * @io: an idle I/O
 * @tag: e.g. an RPC XID
 *
 * Context: any.
 * Return: 0, or -EBUSY while the I/O's RDMA READ chain is in flight.
 */
int mrkit_io_set_tag(struct mrkit_io *io, u32 tag)
{
	int ret = mrkit_io_busy(io, "tag change");

	if (!ret)
		io->tag = tag;
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_set_tag, MRKIT);

/**
 * mrkit_io_map_refused - say why a map may not begin
 * @io: the I/O
 * @integrity: the map is a protected one
 *
 * The cold half of mrkit_io_begin_map().
 *
 * Return: -EINVAL.
 */
int __cold mrkit_io_map_refused(const struct mrkit_io *io, bool integrity)
{
	struct mrkit_pool *pool = io->pool;

	if ((io->state != MRKIT_IO_IDLE && io->state != MRKIT_IO_DONE) ||
	    io->mrs)
		mrkit_pool_err(pool, "map of an I/O that is not idle\n");
	else if (integrity && !mrkit_pool_integrity(pool))
		mrkit_pool_err(pool, "protected I/O on a pool without integrity MRs\n");
	else if (!integrity && mrkit_pool_integrity(pool))
		mrkit_pool_err(pool, "plain map on an integrity pool: use mrkit_io_map_pi()\n");
	else
		mrkit_pool_err(pool, "invalid direction %u\n", io->dir);
	return -EINVAL;
}

/* Never give a protected registration back unchecked; records -EILSEQ. */
static noinline void mrkit_io_check_pi_all(struct mrkit_io *io)
{
	struct mrkit_mr *mr;

	for (mr = io->mrs; mr; mr = mr->io_next)
		if (mrkit_mr_enforce_pi(io, mr))
			io->status = io->status ?: -EILSEQ;
}

/* Integrity pools only: plain ones never carry protection state. */
static __always_inline void mrkit_io_enforce_pi_all(struct mrkit_io *io)
{
	if (unlikely(mrkit_pool_integrity(io->pool)))
		mrkit_io_check_pi_all(io);
}

/* Undo the DMA mapping mrkit made for the I/O, if any. */
static __always_inline void mrkit_io_unmap(struct mrkit_io *io)
{
	if (!io->sgl)
		return;
	trace_mrkit_unmap(io->pool, io->sg_nents);
	ib_dma_unmap_sg(io->pool->dev, io->sgl, io->sg_nents,
			mrkit_io_dma_dir(io));
	io->sgl = NULL;
	io->sg_nents = 0;
}

/* How mrkit_io_put_all() gives descriptors back. */
enum mrkit_give {
	MRKIT_GIVE_PUT,		/* a WR on them may still complete */
	MRKIT_GIVE_RETIRED,	/* no WR on them can: plain stores do */
	MRKIT_GIVE_KEEP,	/* ... and the I/O keeps them for its next map */
	MRKIT_GIVE_KEEP_LAZY,	/* the I/O keeps them; a flush may still come */
};

/**
 * mrkit_io_refuse - say why a call on an I/O is refused
 * @io: the I/O
 * @what: the call
 * @err: -EBUSY (its READ chain is in flight) or -EINVAL (its state)
 *
 * The cold half of mrkit_io_busy() and mrkit_io_check_live().
 *
 * Return: @err.
 */
int __cold mrkit_io_refuse(const struct mrkit_io *io, const char *what,
			   int err)
{
	if (err == -EBUSY)
		mrkit_pool_err(io->pool,
			       "%s refused: its RDMA READ chain is in flight\n",
			       what);
	else
		mrkit_pool_err(io->pool, "%s of an I/O in state %u\n", what,
			       io->state);
	return err;
}

/**
 * mrkit_io_take_known - retire descriptors whose key's state is unknown
 * @io: a mapping I/O
 * @mr: a RESERVED descriptor, from the pool or the I/O's own,
 *	%MRKIT_OLD_INV_UNKNOWN
 *
 * For mrkit_io_take(): each such descriptor is marked stale and put, so
 * that the pool replaces its MR, and the next one is taken.
 *
 * Return: a RESERVED descriptor whose key's state is known, or an
 * ERR_PTR() from mrkit_mr_get() (%-EAGAIN: the pool is empty until the
 * replacements are in).
 */
struct mrkit_mr *mrkit_io_take_known(struct mrkit_io *io, struct mrkit_mr *mr)
{
	do {
		/* A replacement MR starts with nothing to invalidate. */
		WRITE_ONCE(mr->old_inv, MRKIT_OLD_INV_NONE);
		/* Out of the I/O that kept it: no fence waits on it. */
		WRITE_ONCE(mr->io, NULL);
		mrkit_mr_mark_stale(mr);
		mrkit_mr_put(mr);
		mr = __mrkit_mr_get(io->pool);
	} while (!IS_ERR(mr) &&
		 READ_ONCE(mr->old_inv) == MRKIT_OLD_INV_UNKNOWN);
	return mr;
}

/**
 * mrkit_io_drop_cache - give back the descriptors an I/O kept
 * @io: the I/O
 */
void mrkit_io_drop_cache(struct mrkit_io *io)
{
	struct mrkit_mr *mr = io->cache, *next;

	io->cache = NULL;
	for (; mr; mr = next) {
		next = mr->io_next;
		mr->io_next = NULL;
		WRITE_ONCE(mr->io, NULL);
		mrkit_mr_put(mr);
	}
}

/*
 * Give one descriptor back as @give says; @live: it holds a registration
 * (read once by the caller).  Returns true when the I/O keeps it
 * (%MRKIT_GIVE_KEEP*): the caller links it into the I/O's cache.
 */
static __always_inline bool mrkit_io_give_one(struct mrkit_mr *mr,
					      enum mrkit_give give, bool live)
{
	if (give >= MRKIT_GIVE_KEEP)
		return !__mrkit_mr_keep(mr, give == MRKIT_GIVE_KEEP_LAZY);
	/* No fence: the pool must find the owner's word empty. */
	WRITE_ONCE(mr->io, NULL);
	/*
	 * Settled after a successful chain: none is REGISTERED with a live
	 * key (that one would carry the fence).
	 */
	if (give == MRKIT_GIVE_RETIRED)
		__mrkit_mr_put_own(mr);
	else if (live && mr->dev_valid)
		__mrkit_mr_put_valid(mr);
	else
		__mrkit_mr_put(mr);
	return false;
}

/*
 * Give back every descriptor of an I/O.  Those holding a lazily kept
 * registration keep it; retired ones (carrying the I/O's fence) go last,
 * since the fence may fall - and the I/O be gone - as soon as the last of
 * them is put.  With %MRKIT_GIVE_KEEP the reusable ones stay with the I/O
 * (%MRKIT_POOL_IO_CACHE).  With @settle (an I/O given back without a
 * finishing chain) each descriptor is settled on the way: one handed out
 * but never posted holds nothing at the device, and a protected one is
 * checked (mrkit_mr_enforce_pi()).  Returns -EILSEQ when such a check
 * found an error, else 0.
 */
static __always_inline int mrkit_io_put_all(struct mrkit_io *io,
					    enum mrkit_give give, bool fenced,
					    bool settle)
{
	bool integrity = settle && mrkit_pool_integrity(io->pool);
	struct mrkit_mr *mr = io->mrs, *next, *last = NULL;
	struct mrkit_mr **keep = &io->cache;
	int pi_err = 0;

	io->mrs = NULL;
	io->nr_mrs = 0;
	for (; mr; mr = next) {
		/*
		 * Read once for the settle and the put: one that settles to
		 * MAPPED is not a live registration either way, and a put
		 * that finds the state changed meanwhile takes the pool's
		 * out-of-line way.
		 */
		bool live;

		next = mr->io_next;
		mr->io_next = NULL;
		/* The finisher left the I/O's fence in the owner's word. */
		if (fenced && mr->fence == &io->fence) {
			mr->io_next = last;
			last = mr;
			continue;
		}
		/* Constant @give and @settle: no load where neither asks. */
		live = (settle || give == MRKIT_GIVE_PUT) &&
		       mrkit_mr_state(mr) == MRKIT_MR_REGISTERED;
		if (settle && live && !mr->dev_valid)
			mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					    MRKIT_MR_MAPPED);
		if (unlikely(integrity) && mrkit_mr_enforce_pi(io, mr))
			pi_err = -EILSEQ;
		if (mrkit_io_give_one(mr, give, live)) {
			*keep = mr;
			keep = &mr->io_next;
		}
	}
	for (mr = last; mr; mr = next) {
		next = mr->io_next;
		mr->io_next = NULL;
		mrkit_mr_put(mr);
	}
	return pi_err;
}

/**
 * mrkit_io_unwind - undo a map that failed part-way
 * @io: the I/O
 *
 * Its descriptors exposed nothing: they go back, a DMA mapping mrkit made
 * is undone, and the I/O is idle again.
 */
void mrkit_io_unwind(struct mrkit_io *io)
{
	mrkit_io_unmap(io);
	mrkit_io_put_all(io, MRKIT_GIVE_PUT, false, false);
	io->state = MRKIT_IO_IDLE;
}

/*
 * The I/O is finished: tell the ULP.  The last access to @io - the ULP
 * may reuse or free it from done() on - so what done() needs is read
 * before the state says DONE.
 */
static void mrkit_io_notify(struct mrkit_io *io)
{
	struct completion *waiter = io->waiter;
	mrkit_io_done_t done = io->done;
	int status = io->status;

	/* Pairs with the acquire in mrkit_io_busy(): calls are allowed now. */
	smp_store_release(&io->state, MRKIT_IO_DONE);
	if (waiter)
		complete(waiter);
	else if (done)
		done(io, status);
}

/* The pool deregistered the last MR the I/O waited for. */
static void mrkit_io_fence_fallen(struct mrkit_fence *fence)
{
	struct mrkit_io *io = container_of(fence, struct mrkit_io, fence);

	mrkit_io_unmap(io);
	mrkit_io_notify(io);
}

/*
 * Settle one descriptor's state after its I/O finished, before it is put
 * back; @state is the state its finisher read.  @fin: whether a WR on it
 * may still complete (the chain that finished the I/O did not, or did,
 * complete; or completed successfully, which on a send queue's in-order
 * completions means every WR posted before it did too: then no completion
 * handler can touch the descriptor any more, and its owner's stores need
 * no cmpxchg).  Returns whether the descriptor is STALE now.
 */
static __always_inline bool mrkit_io_settle_one(struct mrkit_mr *mr,
						int state, int status,
						enum mrkit_fin fin)
{
	switch (state) {
	case MRKIT_MR_INVALIDATING:
		if (status) {
			mrkit_mr_mark_stale(mr);
			break;
		}
		mr->dev_valid = false;
		mrkit_mr_count(mr, MRKIT_EV_LOCAL_INV);
		/* Nothing can race the owner's store: no state to read back. */
		if (fin == MRKIT_FIN_RETIRED) {
			mrkit_mr_own_read(mr, state, MRKIT_MR_INVALIDATING,
					  MRKIT_MR_RESERVED);
			return false;
		}
		mrkit_mr_transition(mr, MRKIT_MR_INVALIDATING,
				    MRKIT_MR_RESERVED);
		break;
	case MRKIT_MR_REGISTERED:
		/* Handed out, never posted: nothing live at the device. */
		if (!mr->dev_valid || mr->inv_key != mr->key) {
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
	/* A completion on another CPU may have retired it meanwhile. */
	return mrkit_mr_state(mr) == MRKIT_MR_STALE;
}

/**
 * mrkit_io_finish - an I/O's chain is over: settle, give back, tell
 * @io: the I/O
 * @status: 0, or the error that ended the chain
 * @fin: whether a WR on its descriptors may still complete
 *
 * Every descriptor goes back to the pool and then, and only then, the ULP
 * is told.  A STALE descriptor's key may still be valid at the device
 * until its MR is deregistered: with any, the I/O waits in FENCING and
 * its fence falls from the pool's work item after the last
 * deregistration; nothing here touches the I/O after the first of those
 * descriptors is given back.
 */
void mrkit_io_finish(struct mrkit_io *io, int status, enum mrkit_fin fin)
{
	struct mrkit_mr *mr;
	unsigned int fenced = 0;
	int err = status;

	for (mr = io->mrs; mr; mr = mr->io_next) {
		int state = mrkit_mr_state(mr);

		/*
		 * The common case first: its LOCAL_INV completed.  Each is
		 * settled by the chain's @status alone: a retired neighbour
		 * says nothing about this one's LOCAL_INV.
		 */
		if (likely(state == MRKIT_MR_INVALIDATING) ||
		    state != MRKIT_MR_STALE) {
			if (!mrkit_io_settle_one(mr, state, status, fin))
				continue;
		} else {
			/*
			 * A WR on it failed, or its key was left to its
			 * deregistration: so did the I/O's registration.
			 */
			err = err ?: -EIO;
		}
		mr->fence = &io->fence;
		fenced++;
	}
	/* A PI error mrkit found itself (see mrkit_mr_enforce_pi()). */
	mrkit_io_enforce_pi_all(io);
	io->status = err ?: io->status;
	if (!fenced) {
		enum mrkit_give give = MRKIT_GIVE_PUT;

		if (fin == MRKIT_FIN_RETIRED)
			give = io->status ||
			       !(io->pool->flags & MRKIT_POOL_IO_CACHE) ?
			       MRKIT_GIVE_RETIRED : MRKIT_GIVE_KEEP;
		mrkit_io_unmap(io);
		/* Each with its own loop: every branch folded. */
		if (give == MRKIT_GIVE_RETIRED)
			mrkit_io_put_all(io, MRKIT_GIVE_RETIRED, false, false);
		else if (give == MRKIT_GIVE_KEEP)
			mrkit_io_put_all(io, MRKIT_GIVE_KEEP, false, false);
		else
			mrkit_io_put_all(io, MRKIT_GIVE_PUT, false, false);
		mrkit_io_notify(io);
		return;
	}
	trace_mrkit_pool_fence(io->pool, fenced);
	io->fence.pending = fenced;
	io->fence.fallen = mrkit_io_fence_fallen;
	/* After a READ chain, the chain's ownership lasts until done(). */
	WRITE_ONCE(io->state, mrkit_io_state_reading(io->state) ?
		   MRKIT_IO_READ_FENCING : MRKIT_IO_FENCING);
	mrkit_io_put_all(io, MRKIT_GIVE_PUT, true, false);
}

/*
 * Give back the descriptors of a mapped or posted I/O without posting
 * anything, each settled on the way (mrkit_io_put_all()).  Not @lazy:
 * refused while a registration is or may still be live.  With
 * %MRKIT_GIVE_KEEP_LAZY an I/O without error keeps them; a PI error found
 * on the way becomes the I/O's status and gives back what it kept, as if
 * it had never kept it.  The DMA mapping is undone first: after the last
 * put nothing here touches the pool.  Returns 0 or -EBUSY (nothing
 * changed).
 */
static __always_inline int mrkit_io_give_back(struct mrkit_io *io, bool lazy,
					      enum mrkit_give give)
{
	struct mrkit_mr *mr;
	int pi_err;

	for (mr = io->mrs; mr && !lazy; mr = mr->io_next) {
		if (mrkit_mr_state(mr) == MRKIT_MR_STALE && mr->dev_valid) {
			mrkit_pool_err(io->pool,
				       "release refused: descriptor %u was retired with rkey 0x%x possibly live; invalidate instead\n",
				       mr->idx, mr->inv_key);
			return -EBUSY;
		}
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED &&
		    mrkit_mr_owns_live_key(mr)) {
			mrkit_pool_err(io->pool,
				       "release refused: rkey 0x%x of descriptor %u is %s; invalidate first\n",
				       mr->inv_key, mr->idx,
				       io->post_failed ? "in a failed post" : "live");
			return -EBUSY;
		}
	}
	mrkit_io_unmap(io);
	/* Each call with a constant @give: its branches fold. */
	if (give >= MRKIT_GIVE_KEEP && likely(!io->status))
		pi_err = mrkit_io_put_all(io, give, false, true);
	else
		pi_err = mrkit_io_put_all(io, MRKIT_GIVE_PUT, false, true);
	if (unlikely(pi_err)) {
		io->status = io->status ?: pi_err;
		if (give >= MRKIT_GIVE_KEEP)
			mrkit_io_drop_cache(io);
	}
	return 0;
}

/*
 * The registrations a lazy release leaves valid (the pool's
 * lazy_released): the I/O's own, not a previous owner's key that a
 * descriptor handed out but never posted still carries.
 */
static void mrkit_io_count_lazy(struct mrkit_io *io)
{
	struct mrkit_mr *mr;

	for (mr = io->mrs; mr; mr = mr->io_next)
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED &&
		    mrkit_mr_owns_live_key(mr))
			mrkit_count(io->pool, MRKIT_EV_LAZY_RELEASED);
}

/**
 * mrkit_io_release - give back an I/O's descriptors without invalidating
 * @io: the I/O
 * @flags: &enum mrkit_release_flags
 *
 * For I/Os that exposed nothing (mapped but never posted, or a post that
 * failed before any REG_MR): the descriptors go back to the pool and a
 * DMA mapping mrkit made is undone.  On an idle I/O of a
 * %MRKIT_POOL_IO_CACHE pool it gives back the descriptors the I/O kept:
 * call it before freeing or re-initializing such an I/O.  An I/O with
 * live rkeys is refused, unless %MRKIT_RELEASE_LAZY says the ULP wants
 * them left valid - but not after a failed mrkit_io_post(), whose REG_MRs
 * may still be queued: such an I/O must be invalidated
 * (mrkit_io_invalidate()).  Without %MRKIT_RELEASE_LAZY, so must one
 * holding a retired descriptor whose key may still be valid; with it, that
 * descriptor's MR is deregistered.  The I/O is idle again afterwards.
 *
 * Context: any.
 * Return:
 * * %0 - released.
 * * %-EBUSY - a registration is or may still be live, or the I/O's RDMA
 *   READ chain is in flight; nothing was released.
 * * %-EINVAL - unknown @flags, or the I/O is being invalidated or is
 *   finished.
 */
int mrkit_io_release(struct mrkit_io *io, u32 flags)
{
	bool lazy;
	int ret;

	if (flags & ~MRKIT_RELEASE_FLAGS_ALL) {
		mrkit_pool_err(io->pool, "release: unknown flags 0x%x\n",
			       flags & ~MRKIT_RELEASE_FLAGS_ALL);
		return -EINVAL;
	}
	ret = mrkit_io_busy(io, "release");
	if (ret)
		return ret;
	/* Idle: give back what it kept; a no-op before the first map. */
	if ((io->state == MRKIT_IO_IDLE || io->state == MRKIT_IO_DONE) &&
	    !io->mrs) {
		mrkit_io_drop_cache(io);
		return 0;
	}
	ret = mrkit_io_check_live(io, "release");
	if (ret)
		return ret;
	lazy = (flags & MRKIT_RELEASE_LAZY) && !io->post_failed;
	if (lazy)
		mrkit_io_count_lazy(io);
	ret = mrkit_io_give_back(io, lazy, MRKIT_GIVE_PUT);
	if (!ret) {
		if (unlikely(io->cache))
			mrkit_io_drop_cache(io);
		io->state = MRKIT_IO_IDLE;
	}
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_release, MRKIT);

/*
 * A descriptor its I/O still holds at teardown: release the I/O lazily,
 * or, where that is refused (its post failed: a key may be live at the
 * device), retire its live registrations - after the drain no WR can
 * reference them, and deregistration kills their keys.
 */
static void mrkit_io_abandon(struct mrkit_mr *mr, void *ctx)
{
	struct mrkit_io *io = READ_ONCE(mr->io);
	unsigned int *released = ctx;
	struct mrkit_mr *m;
	int ret;

	if (!io || !io->mrs)
		return;
	/* Pairs with the release in mrkit_io_notify(). */
	if (mrkit_io_state_reading(smp_load_acquire(&io->state))) {
		mrkit_pool_err(io->pool,
			       "release of held descriptors: an RDMA READ chain is in flight; drain the QP first\n");
		return;
	}
	ret = mrkit_io_release(io, MRKIT_RELEASE_LAZY);
	if (ret != -EBUSY) {
		/* Released; or refused, with a message, and left alone. */
		*released += !ret;
		return;
	}
	(*released)++;
	for (m = io->mrs; m; m = m->io_next) {
		if (mrkit_mr_state(m) != MRKIT_MR_REGISTERED || !m->dev_valid)
			continue;
		m->orphan = false;	/* the QP is drained */
		mrkit_mr_mark_stale(m);
	}
	mrkit_io_unmap(io);
	mrkit_io_put_all(io, MRKIT_GIVE_PUT, false, false);
	if (unlikely(io->cache))
		mrkit_io_drop_cache(io);
	io->state = MRKIT_IO_IDLE;
}

/**
 * mrkit_pool_release_held - give back what abandoned I/Os still hold
 * @pool: a pool whose QP is drained (mrkit_pool_qp_drained() called)
 *
 * For a ULP tearing down a connection whose error handling can end a
 * request without giving its registrations back (a SCSI abort that failed,
 * a command the error handler ended): instead of keeping a list of such
 * requests, it calls this between the drain and mrkit_pool_destroy().
 * Every I/O still holding descriptors of @pool is released as by
 * mrkit_io_release() with %MRKIT_RELEASE_LAZY: its keys stay valid until
 * mrkit_pool_destroy() deregisters the MRs.  Where that is refused (the
 * I/O's post failed, so a key may be live at the device) its live
 * registrations are retired instead, their MRs deregistered and replaced.
 * A DMA mapping mrkit made is undone, the I/Os are idle afterwards, and
 * their done() does not run.  Descriptors taken with mrkit_mr_get() and
 * those idle I/Os keep (%MRKIT_POOL_IO_CACHE) are left to
 * mrkit_pool_destroy().
 *
 * Context: process context, after the pool's QPs are drained or
 *	destroyed; no call on the pool's I/Os may run concurrently, and
 *	every I/O that holds descriptors must still exist.
 * Return: the number of I/Os released (0 when none held anything).
 */
unsigned int mrkit_pool_release_held(struct mrkit_pool *pool)
{
	unsigned int released = 0;

	mrkit_pool_visit_held(pool, mrkit_io_abandon, &released);
	return released;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_release_held, MRKIT);

/**
 * mrkit_io_finish_ok - an I/O's registrations are invalid, none failed
 * @io: the I/O: its invalidation chain completed successfully, or the
 *	peer invalidated its registrations
 *
 * mrkit_io_finish(@io, 0, %MRKIT_FIN_RETIRED) straight through for the
 * common I/O: one plain descriptor, whose LOCAL_INV completed
 * (INVALIDATING) or whose key the peer invalidated (RESERVED).  Either
 * way no WR on it can complete any more (the LOCAL_INV was the chain's
 * signaled last WR; a remote invalidation means every WR before it
 * executed): it settles by plain stores (mrkit_io_settle_one()) and goes
 * back to the pool, or stays with the I/O in a caching pool, before
 * done() runs.  Anything else - several descriptors, one a flush retired
 * (before or meanwhile), an integrity pool - takes mrkit_io_finish().
 */
void mrkit_io_finish_ok(struct mrkit_io *io)
{
	struct mrkit_mr *mr = io->mrs;
	int state = mrkit_mr_state(mr);

	if (unlikely(mr->io_next || mrkit_pool_integrity(io->pool) ||
		     (state != MRKIT_MR_INVALIDATING &&
		      state != MRKIT_MR_RESERVED))) {
		mrkit_io_finish(io, 0, MRKIT_FIN_RETIRED);
		return;
	}
	/* A flush on another CPU may have retired it meanwhile: the fence. */
	if (unlikely(mrkit_io_settle_one(mr, state, 0, MRKIT_FIN_RETIRED))) {
		mrkit_io_finish(io, 0, MRKIT_FIN_RETIRED);
		return;
	}
	mrkit_io_unmap(io);
	/* mrkit_io_put_all() of its one descriptor, without the loop. */
	io->mrs = NULL;
	io->nr_mrs = 0;
	if (!io->status && (io->pool->flags & MRKIT_POOL_IO_CACHE)) {
		if (mrkit_io_give_one(mr, MRKIT_GIVE_KEEP, false))
			io->cache = mr;
	} else {
		mrkit_io_give_one(mr, MRKIT_GIVE_RETIRED, false);
	}
	mrkit_io_notify(io);
}

/*
 * mrkit_io_complete() in a lazy pool, out of line, so that the fenced
 * pool's tail call to mrkit_io_invalidate() needs no frame: a lazy
 * release (mrkit_io_give_back()) that keeps the descriptors in a caching
 * pool, then done().  In a %MRKIT_POOL_POST_INV pool the live keys'
 * LOCAL_INVs are posted first; if that post fails, the I/O is
 * invalidated as in a fenced pool.
 */
static noinline int mrkit_io_complete_lazy(struct mrkit_io *io,
					   struct ib_qp *qp)
{
	int ret = mrkit_io_check_live(io, "completion");

	if (ret)
		return ret;
	if ((io->pool->flags & MRKIT_POOL_POST_INV) &&
	    mrkit_io_post_inv_unsignaled(io, qp))
		return mrkit_io_invalidate(io, qp);
	if (io->pool->flags & MRKIT_POOL_IO_CACHE)
		mrkit_io_give_back(io, true, MRKIT_GIVE_KEEP_LAZY);
	else
		mrkit_io_give_back(io, true, MRKIT_GIVE_PUT);
	mrkit_io_notify(io);
	return 0;
}

/**
 * mrkit_io_complete - finish an I/O under its pool's fence policy
 * @io: the I/O (posted, possibly remotely invalidated)
 * @qp: the QP its registrations were posted on
 *
 * With the fence (the default): mrkit_io_invalidate(), so @io's done
 * callback runs only once every rkey it exposed is invalid.  In a
 * %MRKIT_POOL_LAZY_INV pool: the descriptors go back (in a
 * %MRKIT_POOL_IO_CACHE pool, stay with the I/O) with their rkeys still
 * valid and done runs before this returns, with -EILSEQ if mrkit
 * found a PI error, else 0 - except after a failed mrkit_io_post(), whose
 * REG_MRs may still sit in the send queue: then the I/O is invalidated as
 * in a fenced pool.  With %MRKIT_POOL_POST_INV too, an unsignaled
 * LOCAL_INV of each live key is posted first (if that post fails, the I/O
 * is invalidated as in a fenced pool, and the keys whose LOCAL_INVs were
 * posted before the failure are retired: done() gets -EIO once they are
 * deregistered, after mrkit_pool_qp_drained()).
 *
 * Context: any context ib_post_send() allows.
 * Return: as mrkit_io_invalidate(): %0, %-EBUSY while the I/O's
 * RDMA READ chain is in flight, %-EINVAL when it is not mapped or posted
 * (a finished I/O included: done() never runs twice).
 */
int mrkit_io_complete(struct mrkit_io *io, struct ib_qp *qp)
{
	if (likely(!(io->pool->flags & MRKIT_POOL_LAZY_INV)) || io->post_failed)
		return mrkit_io_invalidate(io, qp);
	return mrkit_io_complete_lazy(io, qp);
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_complete, MRKIT);
