// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Remote invalidation
 *
 * **Normal operation**
 * A peer that answers with SEND_WITH_INV invalidates one rkey of the I/O
 * it answers.  The ULP's receive completion handler passes
 * wc->ex.invalidate_rkey to mrkit_io_remote_inv(): when it is the live
 * rkey of one of that I/O's registrations (current generation, posted,
 * not yet invalidated) the registration is marked invalid and will not be
 * invalidated locally; at most one per I/O.  mrkit_io_complete() then
 * invalidates the rest locally and delivers the I/O's completion only
 * after every rkey it exposed is dead (the rkey fence).  Pools created
 * with %MRKIT_POOL_LAZY_INV instead complete at once and leave rkeys valid
 * until reuse, for ULPs that explicitly want the iSER / rdma_rw scheme.
 *
 * Anything else is a bogus remote invalidation - an rkey of another I/O,
 * an older generation of one of this I/O's descriptors, any rkey for an
 * I/O that registered nothing, a second one for the same I/O, or any at
 * all when the peer did not negotiate remote invalidation.  It returns
 * -EPROTO, which the ULP treats as a protocol violation; it releases
 * nothing and changes no state, so every rkey of the I/O is still
 * invalidated locally.  No path dereferences a descriptor the I/O does
 * not hold.
 *
 * Each pool indexes its descriptors by MR index (rkey >> 8) when MRs are
 * allocated, so mrkit_pool_find_rkey() maps any rkey a peer names to the
 * in-flight I/O exposing it in O(1) (an xarray load), without allocating.
 *
 * Recovery: none here; invalidation failures are handled by the chains.
 *
 * Serialization: the caller serializes calls on one I/O (the receive
 * completion of an I/O runs before its completion call).  Descriptor
 * state changes go through cmpxchg; lookups are lock-free, under
 * rcu_read_lock(): a descriptor is freed only by the pool's destroy, or,
 * one a failed growth had indexed, after a grace period.
 */

#include <linux/module.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "frwr/io.h"
#include <trace/events/mrkit.h>

/* mrkit_remote_inv_supported(), @iwarp known (a pool's iwarp). */
static __always_inline bool mrkit_dev_remote_inv(const struct ib_device *dev,
						 bool iwarp)
{
	return iwarp ||
	       (dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
}

/**
 * mrkit_remote_inv_supported - can a device take remote invalidations?
 * @dev: the device
 *
 * For ULPs deciding what to negotiate with their peer (iSER's login
 * offers remote invalidation when the device takes it).  SEND_WITH_INV
 * reception is part of the memory management extensions
 * (FRWR) on InfiniBand and RoCE and always present on iWARP.  Whether the
 * peer may use it is the protocol's business: see
 * mrkit_pool_set_remote_inv().
 *
 * Context: any.
 * Return: true if rkeys registered on @dev can be invalidated remotely.
 */
bool mrkit_remote_inv_supported(const struct ib_device *dev)
{
	return mrkit_dev_remote_inv(dev, mrkit_iwarp(dev));
}
EXPORT_SYMBOL_NS_GPL(mrkit_remote_inv_supported, MRKIT);

/**
 * mrkit_pool_set_remote_inv - record whether the peer may invalidate remotely
 * @pool: the connection's pool
 * @negotiated: the peer negotiated SEND_WITH_INV (iSER's login does); when
 *	false, every remote invalidation on this connection is bogus
 *
 * The default is true, and false on a device without support.
 *
 * Context: any.
 */
void mrkit_pool_set_remote_inv(struct mrkit_pool *pool, bool negotiated)
{
	WRITE_ONCE(pool->no_remote_inv, !negotiated);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_set_remote_inv, MRKIT);

static int mrkit_bogus_inv(struct mrkit_pool *pool, u32 rkey, const char *why)
{
	mrkit_count(pool, MRKIT_EV_BOGUS_INV);
	trace_mrkit_reminv_bogus(pool, rkey);
	mrkit_pool_err(pool, "bogus remote invalidation of rkey 0x%x: %s\n",
		       rkey, why);
	return -EPROTO;
}

/**
 * mrkit_io_remote_inv - account a remote invalidation for an I/O
 * @io: the I/O the peer's reply belongs to (may be NULL)
 * @rkey: wc->ex.invalidate_rkey of a receive completion that has
 *	%IB_WC_WITH_INVALIDATE
 *
 * Call from the receive completion handler, before mrkit_io_complete().
 *
 * Context: any (a CQ handler).
 * Return:
 * * %0 - @rkey was the live rkey of one of @io's registrations; it is
 *   invalid now and will not be invalidated locally.
 * * %-EPROTO - a bogus remote invalidation (see the top of this file):
 *   nothing changed, and every rkey of @io is still invalidated locally
 *   by mrkit_io_complete().  Treat it as a protocol violation.
 * * %-EBUSY - @io's RDMA READ chain is in flight: nothing changed, and
 *   nothing is counted.
 * * %-EINVAL - @io is NULL or was never initialized.
 */
int mrkit_io_remote_inv(struct mrkit_io *io, u32 rkey)
{
	struct mrkit_pool *pool;
	struct mrkit_mr *mr;

	int ret;

	if (!io || !io->pool)
		return -EINVAL;
	ret = mrkit_io_busy(io, "remote invalidation");
	if (ret)
		return ret;
	pool = io->pool;
	if (READ_ONCE(pool->no_remote_inv) ||
	    !mrkit_dev_remote_inv(pool->dev, pool->iwarp))
		return mrkit_bogus_inv(pool, rkey,
				       "remote invalidation not negotiated");
	if (io->state != MRKIT_IO_POSTED || !io->mrs)
		return mrkit_bogus_inv(pool, rkey,
				       "the I/O has no posted registration");
	if (io->remote_inv_done)
		return mrkit_bogus_inv(pool, rkey,
				       "second remote invalidation for one I/O");
	for (mr = io->mrs; mr; mr = mr->io_next) {
		if (!mr->dev_valid || mr->inv_key != rkey)
			continue;
		if (mrkit_mr_transition(mr, MRKIT_MR_REGISTERED,
					MRKIT_MR_RESERVED))
			break;
		mr->dev_valid = false;
		trace_mrkit_reminv(mr);
		io->remote_inv_done = true;
		mrkit_mr_count(mr, MRKIT_EV_REMOTE_INV);
		return 0;
	}
	return mrkit_bogus_inv(pool, rkey, "not a live rkey of this I/O");
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_remote_inv, MRKIT);

/**
 * mrkit_pool_find_rkey - the in-flight I/O exposing an rkey
 * @pool: the connection's pool
 * @rkey: any rkey a peer names
 *
 * For protocols whose reply names only the rkey (a SEND_WITH_INV matched
 * before the reply is parsed), and to validate an rkey a peer names.
 * O(1), lock-free, no allocation.  The answer is exact: an I/O is
 * returned only if @rkey is the key of a registration that grants the
 * peer access (not a READ chain's local sink, except on iWARP where the
 * peer places the READ response), whose REG_MR that I/O has handed to
 * ib_post_send(), and that is live (not invalidated, not remotely
 * invalidated, not retired) throughout the lookup.  A key merely handed
 * out by mrkit_io_segs(), and a lazily kept key of a descriptor that a new
 * I/O has mapped, name no I/O.  During a post that fails, the keys of the
 * WRs the provider did not take are named until the post returns.
 *
 * The descriptor's state is read first and again last (both with acquire,
 * pairing with the release of the hand-out that rotates the key), its key
 * and owner in between: a descriptor that left REGISTERED and came back
 * during the lookup comes back with a rotated key, so a lookup that
 * straddles a completion and a reuse answers NULL, never the new I/O.
 * (Only a lookup stalled across 256 reuses of one descriptor, the 8-bit
 * key space, could be fooled.)  Only the descriptor is read, never its
 * MR, which a concurrent replacement may free.
 *
 * Context: any.  May run concurrently with anything on the pool: gets,
 * puts, maps, posts, completions, invalidations and growth.  The returned
 * I/O is only a name: it stays valid only while the caller keeps it from
 * completing (e.g. inside the receive completion handler of its reply).
 * Return: the I/O whose live registration has exactly @rkey, or NULL.
 */
struct mrkit_io *mrkit_pool_find_rkey(struct mrkit_pool *pool, u32 rkey)
{
	struct mrkit_io *io = NULL;
	struct mrkit_mr *mr;

	/* Against a failed growth, which frees what it had indexed. */
	rcu_read_lock();
	mr = xa_load(&pool->rkeys, rkey >> 8);
	/*
	 * Pairs with the release of REGISTERED in mrkit_mr_hand_out()
	 * (mrkit_mr_own_read()): the key and owner it published.
	 */
	if (!mr || atomic_read_acquire(&mr->state) != MRKIT_MR_REGISTERED)
		goto out;
	io = READ_ONCE(mr->io);
	if (!io || !READ_ONCE(mr->dev_valid) || !READ_ONCE(mr->peer_visible) ||
	    READ_ONCE(mr->inv_key) != rkey || READ_ONCE(mr->key) != rkey) {
		io = NULL;
		goto out;
	}
	/*
	 * The key and owner before the second look at the state.
	 * Pairs with the fully ordered cmpxchg() that takes a descriptor
	 * out of REGISTERED (mrkit_mr_transition(), the stale mark, the
	 * lazy put) before its key or owner can change, so a state still
	 * REGISTERED means they were read from this registration.
	 */
	smp_rmb();
	if (atomic_read_acquire(&mr->state) != MRKIT_MR_REGISTERED ||
	    READ_ONCE(mr->key) != rkey || READ_ONCE(mr->io) != io)
		io = NULL;
out:
	rcu_read_unlock();
	return io;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_find_rkey, MRKIT);
