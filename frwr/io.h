/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inline half of the life of an I/O (frwr/io.c): the steps every I/O
 * takes on its way through frwr/ and sigmr/, kept inline so that one I/O
 * does not zig-zag between files; their cold halves (messages) and the
 * finishing steps are in frwr/io.c.
 */
#ifndef _MRKIT_FRWR_IO_H
#define _MRKIT_FRWR_IO_H

#include "mrkit_priv.h"
#include "mrpool/pool.h"

int mrkit_io_refuse(const struct mrkit_io *io, const char *what, int err);
int mrkit_io_map_refused(const struct mrkit_io *io, bool integrity);
void mrkit_io_drop_cache(struct mrkit_io *io);
int mrkit_io_post_inv_unsignaled(struct mrkit_io *io, struct ib_qp *qp);
struct mrkit_mr *mrkit_io_take_known(struct mrkit_io *io, struct mrkit_mr *mr);

/**
 * mrkit_io_busy - refuse a call while the I/O's READ chain is in flight
 * @io: the I/O
 * @what: the call, for the message
 *
 * Return: -EBUSY with a ratelimited message while @io's READ chain owns
 * it (in flight, its sinks' invalidation included, or failed and waiting
 * for its fence: until done()), else 0.
 */
static __always_inline int mrkit_io_busy(const struct mrkit_io *io,
					 const char *what)
{
	/* Pairs with the release in mrkit_io_notify(). */
	if (likely(!mrkit_io_state_busy(smp_load_acquire(&io->state))))
		return 0;
	return mrkit_io_refuse(io, what, -EBUSY);
}

/**
 * mrkit_io_check_live - may an I/O be finished now?
 * @io: the I/O
 * @what: the caller's name, for the message
 *
 * Return: 0 when @io is mapped or posted; -EBUSY while its RDMA READ
 * chain is in flight, or failed and waits for its fence (done() will run
 * either way); -EINVAL when it has nothing to finish (idle, being
 * invalidated, finished).
 */
static __always_inline int mrkit_io_check_live(struct mrkit_io *io,
					       const char *what)
{
	/* Pairs with the release in mrkit_io_notify(). */
	u8 state = smp_load_acquire(&io->state);

	if (likely(state == MRKIT_IO_MAPPED || state == MRKIT_IO_HANDED_OUT ||
		   state == MRKIT_IO_POSTED))
		return 0;
	return mrkit_io_refuse(io, what, mrkit_io_state_busy(state) ?
				   -EBUSY : -EINVAL);
}

/**
 * mrkit_io_check_mapped - may an I/O's registrations be handed out now?
 * @io: the I/O
 * @what: the caller's name, for the message
 *
 * Return: the I/O's state when it is mapped or handed out; -EBUSY while
 * its RDMA READ chain is in flight or, failed, waits for its fence;
 * -EINVAL (with a message) otherwise.
 */
static __always_inline int mrkit_io_check_mapped(struct mrkit_io *io,
						 const char *what)
{
	/* Pairs with the release in mrkit_io_notify(). */
	u8 state = smp_load_acquire(&io->state);

	if (likely(state == MRKIT_IO_MAPPED || state == MRKIT_IO_HANDED_OUT))
		return state;
	if (mrkit_io_state_busy(state))
		return mrkit_io_refuse(io, what, -EBUSY);
	mrkit_pool_err(io->pool, "%s of an I/O that is not mapped\n", what);
	return -EINVAL;
}

/*
 * The access a direction grants on the I/O's device; -EINVAL for an
 * unknown direction.  mrkit_io_init() takes those the direction alone
 * decides (__mrkit_dir_access()).
 */
static __always_inline int mrkit_dir_access(const struct mrkit_io *io)
{
	if (io->dir != MRKIT_LOCAL_SINK)
		return __mrkit_dir_access(io->dir);
	/* iWARP places RDMA READ responses like remote writes. */
	if (io->pool->iwarp)
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	return IB_ACCESS_LOCAL_WRITE;
}

/**
 * mrkit_io_begin_map - the checks and resets every map starts with
 * @io: the I/O about to be mapped
 * @integrity: the map is a protected one (mrkit_io_map_pi())
 *
 * The access its direction grants is taken on the first map after
 * mrkit_io_init(), unless mrkit_io_set_access() gave one.
 *
 * Return: 0; -EBUSY while a READ chain is in flight; -EINVAL (with a
 * message) when the I/O is not idle, the pool's kind does not match the
 * map, or the direction is unknown.
 */
static __always_inline int mrkit_io_begin_map(struct mrkit_io *io,
					      bool integrity)
{
	/* Pairs with the release in mrkit_io_notify(). */
	u8 state = smp_load_acquire(&io->state);
	int access = io->access;

	if (!access)
		access = mrkit_dir_access(io);
	if (unlikely((state != MRKIT_IO_IDLE && state != MRKIT_IO_DONE) ||
		     io->mrs || mrkit_pool_integrity(io->pool) != integrity ||
		     access < 0)) {
		if (mrkit_io_state_busy(state))
			return mrkit_io_refuse(io, "map", -EBUSY);
		return mrkit_io_map_refused(io, integrity);
	}
	/*
	 * The state stays IDLE or DONE (the same to every call) until the
	 * map succeeds (mrkit_io_map_done()) or unwinds (mrkit_io_unwind()).
	 */
	io->access = access;
	io->status = 0;
	io->remote_inv_done = false;
	io->post_failed = false;
	return 0;
}

/* The direction of the DMA mapping mrkit makes (MRKIT_MAP_DMA). */
static __always_inline enum dma_data_direction
mrkit_io_dma_dir(const struct mrkit_io *io)
{
	return io->dma_dir;
}

/**
 * mrkit_io_take - a descriptor for a mapping I/O: one it kept, or the pool's
 * @io: the I/O
 *
 * One whose key's state is unknown (%MRKIT_OLD_INV_UNKNOWN) is retired
 * instead, and the next taken from the pool (mrkit_io_take_known()).
 *
 * Return: a RESERVED descriptor, or an ERR_PTR() from mrkit_mr_get().
 */
static __always_inline struct mrkit_mr *mrkit_io_take(struct mrkit_io *io)
{
	struct mrkit_mr *mr = io->cache;

	if (!mr) {
		mr = __mrkit_mr_get(io->pool);
		if (!IS_ERR(mr) &&
		    unlikely(READ_ONCE(mr->old_inv) == MRKIT_OLD_INV_UNKNOWN))
			return mrkit_io_take_known(io, mr);
		return mr;
	}
	io->cache = mr->io_next;
	mr->io_next = NULL;
	/*
	 * Out of the I/O until mrkit_io_attach(): a map that fails before it
	 * puts the descriptor back with no owner, as one from the pool.
	 */
	WRITE_ONCE(mr->io, NULL);
	mrkit_mr_unkeep(mr);
	if (unlikely(READ_ONCE(mr->old_inv) == MRKIT_OLD_INV_UNKNOWN))
		return mrkit_io_take_known(io, mr);
	return mr;
}

/**
 * mrkit_io_attach - add a descriptor to a mapping I/O
 * @io: the I/O
 * @mr: a RESERVED descriptor
 * @tail: where the I/O's list ends (&io->mrs for the first)
 *
 * Return: the new end of the list.
 */
static __always_inline struct mrkit_mr **
mrkit_io_attach(struct mrkit_io *io, struct mrkit_mr *mr,
		struct mrkit_mr **tail)
{
	WRITE_ONCE(mr->io, io);
	mr->io_next = NULL;
	*tail = mr;
	io->nr_mrs++;
	return &mr->io_next;
}

/**
 * mrkit_io_map_done - a map completed: the I/O keeps only what it uses
 * @io: the I/O
 */
static __always_inline void mrkit_io_map_done(struct mrkit_io *io)
{
	if (unlikely(io->cache))
		mrkit_io_drop_cache(io);
	io->state = MRKIT_IO_MAPPED;
}

/**
 * mrkit_mr_key_live - does the device hold a registration of @mr that no
 *	posted WR invalidates yet?
 * @mr: a descriptor of an I/O
 *
 * A registration is live from its REG_MR's post (dev_valid) until an
 * invalidation completes; a %MRKIT_POOL_POST_INV completion's unsignaled
 * LOCAL_INV of it, once posted, is the invalidation
 * (%MRKIT_OLD_INV_POSTED; a failure of it clears that mark).
 *
 * Return: true when a LOCAL_INV of @mr->inv_key must still be posted.
 */
static __always_inline bool mrkit_mr_key_live(const struct mrkit_mr *mr)
{
	return mr->dev_valid && READ_ONCE(mr->old_inv) != MRKIT_OLD_INV_POSTED;
}

/**
 * mrkit_mr_owns_live_key - must @mr's owner invalidate a registration?
 * @mr: a handed-out descriptor of an I/O
 *
 * The live registration (mrkit_mr_key_live()) is under the key the owner
 * handed out: the hand-out rotated @mr->key, and only the owner's REG_MR
 * makes it the registered @mr->inv_key.  An I/O that handed @mr out but
 * never posted it exposed no registered key: a previous owner's key that
 * a lazy pool left valid, or whose posted LOCAL_INV was flushed, stays
 * for the next registration to invalidate ahead of its REG_MR.
 *
 * Return: true when the owner must invalidate (or retire) @mr's key.
 */
static __always_inline bool mrkit_mr_owns_live_key(const struct mrkit_mr *mr)
{
	return mrkit_mr_key_live(mr) && mr->inv_key == mr->key;
}

/**
 * mrkit_mr_hand_out - rotate the key of one descriptor of a mapped I/O
 * @mr: the descriptor
 *
 * A no-op unless @mr is MAPPED.  Its key is rotated (ib_inc_rkey()), then
 * its state released as REGISTERED: the key and the owner are visible to
 * mrkit_pool_find_rkey() with it.
 */
static __always_inline void mrkit_mr_hand_out(struct mrkit_mr *mr)
{
	struct ib_mr *ibmr = mr->ibmr;
	int state = mrkit_mr_state(mr);

	if (state != MRKIT_MR_MAPPED)
		return;
	ib_update_fast_reg_key(ibmr, ib_inc_rkey(ibmr->rkey));
	WRITE_ONCE(mr->key, ibmr->rkey);
	mrkit_mr_own_read(mr, state, MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED);
}

/**
 * mrkit_io_hand_out - rotate the keys of a mapped I/O's descriptors
 * @io: the I/O
 * @state: its state, as its caller's check read it
 *
 * Called by the post paths (mrkit_io_segs() does the same in its own
 * pass); a no-op when the keys were handed out already.  Each descriptor
 * is handed out by mrkit_mr_hand_out().
 */
static __always_inline void mrkit_io_hand_out(struct mrkit_io *io, u8 state)
{
	struct mrkit_mr *mr;

	if (state != MRKIT_IO_MAPPED)
		return;
	for (mr = io->mrs; mr; mr = mr->io_next)
		mrkit_mr_hand_out(mr);
	io->state = MRKIT_IO_HANDED_OUT;
}

#endif /* _MRKIT_FRWR_IO_H */
