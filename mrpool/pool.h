/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inline half of the pool (mrpool/pool.c): the free stack, and the get
 * and the puts and keep of a descriptor that an I/O takes on every use.
 * frwr/ inlines them so that one I/O's get and put are no call and change
 * the stack's head with one cmpxchg each; the exported mrkit_mr_get() and
 * mrkit_mr_put_own() are the same code out of line, and mrkit_mr_put(),
 * mrkit_mr_put_valid() and mrkit_mr_keep() the whole of what their inline
 * common cases do.
 * Everything that is not the common case - a dying, empty or starved
 * pool, a descriptor in another state than the common one - is a call
 * into pool.c.  Like the rest of the pool, nothing here knows WRs,
 * protection or the I/O.
 */
#ifndef _MRKIT_MRPOOL_POOL_H
#define _MRKIT_MRPOOL_POOL_H

#include <linux/rcupdate.h>

#include "mrkit_priv.h"
#include <trace/events/mrkit.h>

/*
 * The head of the free stack, one 64-bit word: the top descriptor's index,
 * the free count and an ABA tag that every change increments.
 */
#define MRKIT_HEAD_NIL		0xffffU

static inline u64 mrkit_head_pack(u32 top, u32 count, u32 tag)
{
	return (u64)tag << 32 | (u64)(count & 0xffff) << 16 | (top & 0xffff);
}

static inline u32 mrkit_head_top(u64 head)
{
	return head & 0xffff;
}

static inline u32 mrkit_head_count(u64 head)
{
	return (head >> 16) & 0xffff;
}

static inline u32 mrkit_head_tag(u64 head)
{
	return head >> 32;
}

/*
 * The head after a push (@dcount one) or a pop (minus one) that leaves
 * @top on top, in one addition: the tag goes one up (a carry out of it is
 * dropped, as its own 32-bit increment would), and the count cannot carry
 * into it - a push finds fewer than MRKIT_MAX_DEPTH free, a pop at least
 * one.
 */
static_assert(MRKIT_MAX_DEPTH < MRKIT_HEAD_NIL);

static __always_inline u64 mrkit_head_step(u64 old, u32 top, int dcount)
{
	return ((old & ~0xffffULL) + (1ULL << 32) + ((u64)(s64)dcount << 16)) |
	       (top & 0xffff);
}

static __always_inline void mrkit_push(struct mrkit_pool *pool,
				       struct mrkit_mr *mr)
{
	s64 old = atomic64_read(&pool->head);
	u64 new;

	do {
		mr->next_free = mrkit_head_top(old);
		new = mrkit_head_step(old, mr->idx, 1);
		mrkit_rmw(1);
	} while (!atomic64_try_cmpxchg(&pool->head, &old, new));
}

/* Returns NULL when the stack is empty. */
static __always_inline struct mrkit_mr *mrkit_pop(struct mrkit_pool *pool,
						  u32 *nfree)
{
	s64 old = atomic64_read(&pool->head);
	struct mrkit_mr *mr;
	u64 new;

	do {
		u32 top = mrkit_head_top(old);

		if (top == MRKIT_HEAD_NIL)
			return NULL;
		mr = READ_ONCE(pool->descs[top]);
		new = mrkit_head_step(old, READ_ONCE(mr->next_free), -1);
		mrkit_rmw(1);
	} while (!atomic64_try_cmpxchg(&pool->head, &old, new));
	*nfree = mrkit_head_count(new);
	return mr;
}

struct mrkit_mr *mrkit_mr_get_slow(struct mrkit_pool *pool);
void mrkit_pool_new_low(struct mrkit_pool *pool, u32 nfree);
int mrkit_mr_push_slow(struct mrkit_pool *pool, struct mrkit_mr *mr)
	__releases(RCU_SCHED);

/* A descriptor just popped with @nfree left: it is the getter's now. */
static __always_inline struct mrkit_mr *mrkit_mr_got(struct mrkit_pool *pool,
						     struct mrkit_mr *mr,
						     u32 nfree)
{
	atomic_set(&mr->state, MRKIT_MR_RESERVED);
	trace_mrkit_mr_get(mr);
	/* The head's line is ours already: no other line is written. */
	if (unlikely(nfree < READ_ONCE(pool->low_free)))
		mrkit_pool_new_low(pool, nfree);
	return mr;
}

/**
 * __mrkit_mr_get - mrkit_mr_get(), inline
 * @pool: the pool
 *
 * Context: any.
 * Return: as mrkit_mr_get().
 */
static __always_inline struct mrkit_mr *__mrkit_mr_get(struct mrkit_pool *pool)
{
	struct mrkit_mr *mr;
	u32 nfree;

	if (unlikely(READ_ONCE(pool->dying)))
		return mrkit_mr_get_slow(pool);
	mr = mrkit_pop(pool, &nfree);
	if (unlikely(!mr))
		return mrkit_mr_get_slow(pool);
	return mrkit_mr_got(pool, mr, nfree);
}

/* The last step of every put of a reusable descriptor (now FREE). */
static __always_inline int mrkit_mr_push_free(struct mrkit_pool *pool,
					      struct mrkit_mr *mr)
{
	trace_mrkit_mr_put(mr);
	/*
	 * Against mrkit_pool_destroy() (see the pool's DOC), with no call:
	 * a dying pool, or a waiter to wake, takes mrkit_mr_push_slow().
	 */
	rcu_read_lock_sched();
	if (likely(!READ_ONCE(pool->dying))) {
		mrkit_push(pool, mr);
		/*
		 * Read after the push's cmpxchg, a full barrier: pairs with
		 * the smp_mb() of mrkit_mr_get_slow() after its mark.
		 */
		if (likely(!READ_ONCE(pool->starved))) {
			rcu_read_unlock_sched();
			return 0;
		}
		mr = NULL;
	}
	return mrkit_mr_push_slow(pool, mr);
}

/**
 * __mrkit_mr_put_own - mrkit_mr_put_own(), inline
 * @mr: a descriptor of an I/O whose finishing chain completed successfully
 *
 * Context: any.
 * Return: as mrkit_mr_put().
 */
static __always_inline int __mrkit_mr_put_own(struct mrkit_mr *mr)
{
	if (unlikely(atomic_read(&mr->state) != MRKIT_MR_RESERVED))
		return mrkit_mr_put(mr);
	atomic_set(&mr->state, MRKIT_MR_FREE);
	return mrkit_mr_push_free(mr->pool, mr);
}

/**
 * __mrkit_mr_put - mrkit_mr_put(), inline
 * @mr: a descriptor
 *
 * The common case: a RESERVED or MAPPED descriptor goes FREE.  Anything
 * else, a lost race included, takes the out-of-line way.
 *
 * Context: any.
 * Return: as mrkit_mr_put().
 */
static __always_inline int __mrkit_mr_put(struct mrkit_mr *mr)
{
	int cur = atomic_read(&mr->state);

	if (likely(cur == MRKIT_MR_RESERVED || cur == MRKIT_MR_MAPPED)) {
		mrkit_rmw(1);
		if (likely(atomic_try_cmpxchg(&mr->state, &cur, MRKIT_MR_FREE)))
			return mrkit_mr_push_free(mr->pool, mr);
	}
	return mrkit_mr_put(mr);
}

/**
 * __mrkit_mr_put_valid - mrkit_mr_put_valid(), inline
 * @mr: a REGISTERED descriptor
 *
 * Anything but a REGISTERED descriptor takes the out-of-line way, which
 * refuses it with its message.
 *
 * Context: any.
 * Return: as mrkit_mr_put_valid().
 */
static __always_inline int __mrkit_mr_put_valid(struct mrkit_mr *mr)
{
	int cur = MRKIT_MR_REGISTERED;

	mrkit_rmw(1);
	if (unlikely(!atomic_try_cmpxchg(&mr->state, &cur, MRKIT_MR_FREE)))
		return mrkit_mr_put_valid(mr);
	return mrkit_mr_push_free(mr->pool, mr);
}

/**
 * __mrkit_mr_keep - mrkit_mr_keep(), inline
 * @mr: as mrkit_mr_keep()
 * @may_race: as mrkit_mr_keep()
 *
 * The common case: the pool lives and @mr is not STALE.  Anything else
 * takes the out-of-line way, which gives @mr back.
 *
 * Context: any.
 * Return: as mrkit_mr_keep().
 */
static __always_inline int __mrkit_mr_keep(struct mrkit_mr *mr, bool may_race)
{
	bool kept = false;
	int cur;

	/* Against mrkit_pool_destroy(), as mrkit_mr_keep(). */
	rcu_read_lock_sched();
	if (likely(!READ_ONCE(mr->pool->dying))) {
		if (!may_race) {
			atomic_set(&mr->state, MRKIT_MR_CACHED);
			kept = true;
		} else {
			cur = atomic_read(&mr->state);
			if (likely(cur != MRKIT_MR_STALE)) {
				mrkit_rmw(1);
				kept = atomic_try_cmpxchg(&mr->state, &cur,
							  MRKIT_MR_CACHED);
			}
		}
	}
	rcu_read_unlock_sched();
	if (likely(kept))
		return 0;
	return mrkit_mr_keep(mr, may_race);
}

#endif /* _MRKIT_MRPOOL_POOL_H */
