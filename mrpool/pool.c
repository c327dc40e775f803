// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Descriptor pools
 *
 * **Normal operation**
 * A pool belongs to one connection's PD.  At creation it allocates @depth
 * descriptors, each owning one FRWR MR of @pages_per_mr pages, on the
 * device's NUMA node.  Free descriptors sit on a LIFO stack whose head (top
 * index, free count, ABA tag) is one 64-bit word, so mrkit_mr_get() and
 * mrkit_mr_put() change it with one cmpxchg each: no lock, no allocation,
 * no sleeping, callable from process, softirq and hard-irq context alike.
 * Descriptors are never freed while the pool lives (but those of a growth
 * that failed, never pushed), so a getter that loses a race never touches
 * freed memory.  LIFO reuse keeps descriptors
 * cache-hot.
 *
 * Each descriptor carries its own state (&enum mrkit_mr_state).  The
 * owner of a descriptor (whoever got it) drives it through
 * RESERVED -> MAPPED -> REGISTERED -> INVALIDATING -> RESERVED, and puts it
 * back from RESERVED or MAPPED, or from REGISTERED with a lazily kept key
 * (mrkit_mr_put_valid()); mrkit_mr_transition() refuses every
 * other change, so a flushed or double-completed WR cannot move a
 * descriptor into a state it was not in.  Where no WR on the descriptor
 * can complete behind its owner - map and hand-out, before the post; the
 * settle and put after a chain completed successfully - the owner's
 * changes are plain stores (mrkit_mr_own(), mrkit_mr_put_own()); every
 * change in between is a cmpxchg.
 *
 * An empty pool returns -EAGAIN.  Below @max_depth it also queues growth,
 * which allocates descriptors in process context and pushes them; either
 * way, the next descriptor that comes back wakes mrkit_pool_wait() sleepers
 * and runs the ULP's notify callback, once per starvation.
 *
 * Nothing on this path writes a shared line but the stack's head: event
 * counts are per CPU, summed when read, and the high-water mark is updated
 * only when a get leaves fewer descriptors free than any get since the
 * pool last grew or replaced a descriptor.  With
 * %MRKIT_POOL_IO_CACHE an owner may keep a descriptor (CACHED) instead of
 * putting it: it stays in use for the counts, and destroy takes it back.
 *
 * The pool knows descriptors, MRs and fences; it knows nothing of work
 * requests, protection or the I/O that holds a descriptor (frwr/ and
 * sigmr/ drive descriptors through the calls below, and never the other
 * way round).
 *
 * **Recovery**
 * A REG_MR, LOCAL_INV or RDMA READ that completes in error (flush
 * included) leaves the MR's registration state unknown, so the completion
 * handler marks the descriptor STALE.  A stale descriptor is never pushed
 * back: when its owner puts it, it moves to RETIRING and the pool's work
 * item deregisters its MR (exactly once) and allocates a replacement into
 * the same slot before pushing it.  If that allocation fails, the slot
 * stays retired until the next work run.
 *
 * A retired descriptor may carry a fence (&struct mrkit_fence): the owner
 * finished with a registration whose state it cannot know, and waits for
 * the deregistration that kills every key the MR ever had.  The work item
 * deregisters first, counts the fences down, lets each fence that reached
 * zero fall (its callback runs with no lock held), and only then
 * allocates replacements: a fence waits for no allocation of its own run
 * (one retired while a run allocates is deregistered by the next run,
 * right after).  The allocations do no I/O (memalloc_noio_save()), so
 * reclaim never waits on I/Os that may be waiting for a fence.
 *
 * mrkit_pool_destroy() sleeps until the pool is empty: it deregisters every
 * free and retired descriptor, lets their fences fall, and waits for each
 * descriptor still handed out to be put back (owners finishing their I/Os
 * in other contexts); then every MR of the pool is gone and the caller may
 * deallocate the PD.  Puts run with preemption off (rcu_read_lock_sched(),
 * which costs a put no call): destroy marks the pool dying and waits with
 * synchronize_rcu(), which waits for such sections too, after which every
 * put hands its descriptor to destroy (@returned) with one llist_add() as
 * its last access to the pool.  mrkit_pool_wait() sleepers are woken with -ENODEV and
 * waited for before the pool is freed.
 *
 * **Serialization**
 * The free stack: cmpxchg only.  A descriptor's state: its owner, plus the
 * completion handlers of WRs the owner posted, through cmpxchg; while no
 * such WR can complete (before the post, after a successful chain), the
 * owner alone (plain stores).
 * @grow_lock (a mutex, process context): growth, replacement, destroy,
 * and the fields they write (@nr_alloc, @descs slots, @grown,
 * @stale_replaced), and the counts of fences.  Counters read by
 * mrkit_pool_get_stats() are snapshots.
 */

#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/visibility.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "mrpool/pool.h"

/* Above this max_sge_rd, devices are fastest with MRs of max_sge_rd pages. */
#define MRKIT_SGE_RD_QUIRK	16

static const char * const mrkit_mr_state_names[MRKIT_MR_NR_STATES] = {
	[MRKIT_MR_FREE]		= "FREE",
	[MRKIT_MR_RESERVED]	= "RESERVED",
	[MRKIT_MR_MAPPED]	= "MAPPED",
	[MRKIT_MR_REGISTERED]	= "REGISTERED",
	[MRKIT_MR_INVALIDATING]	= "INVALIDATING",
	[MRKIT_MR_STALE]	= "STALE",
	[MRKIT_MR_RETIRING]	= "RETIRING",
	[MRKIT_MR_CACHED]	= "CACHED",
};

const char *mrkit_mr_state_name(enum mrkit_mr_state state)
{
	if ((unsigned int)state >= MRKIT_MR_NR_STATES)
		return "?";
	return mrkit_mr_state_names[state];
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_state_name);

const char * const mrkit_fault_site_names[MRKIT_FAULT_NR_SITES] = {
	[MRKIT_FAULT_POOL_ALLOC]	= "pool_alloc",
	[MRKIT_FAULT_DESCS_ALLOC]	= "descs_alloc",
	[MRKIT_FAULT_DESC_ALLOC]	= "desc_alloc",
	[MRKIT_FAULT_RKEY_INDEX]	= "rkey_index",
	[MRKIT_FAULT_DMA_MAP]		= "dma_map_sg",
	[MRKIT_FAULT_ALLOC_MR]		= "alloc_mr",
};
EXPORT_SYMBOL_IF_KUNIT(mrkit_fault_site_names);

#ifdef CONFIG_FAULT_INJECTION
struct fault_attr mrkit_fault_attrs[MRKIT_FAULT_NR_SITES] = {
	[0 ... MRKIT_FAULT_NR_SITES - 1] = FAULT_ATTR_INITIALIZER,
};
EXPORT_SYMBOL_IF_KUNIT(mrkit_fault_attrs);
#endif

#if IS_ENABLED(CONFIG_MRKIT_KUNIT_TEST)
atomic_t mrkit_live_objects = ATOMIC_INIT(0);
EXPORT_SYMBOL_IF_KUNIT(mrkit_live_objects);

unsigned long mrkit_rmw_ops;
EXPORT_SYMBOL_IF_KUNIT(mrkit_rmw_ops);
#endif

/*
 * Descriptors handed out: allocated, less free (@nfree) and retired.  The
 * three are read at different times, so a descriptor popped and retired
 * meanwhile can count twice: clamp, never wrap.
 */
static u32 mrkit_pool_used(struct mrkit_pool *pool, u32 nfree)
{
	s64 used = (s64)READ_ONCE(pool->nr_alloc) - nfree -
		   atomic_read(&pool->nr_stale);

	return clamp_t(s64, used, 0, READ_ONCE(pool->nr_alloc));
}

static u32 mrkit_pool_in_use(struct mrkit_pool *pool)
{
	return mrkit_pool_used(pool,
			       mrkit_head_count(atomic64_read(&pool->head)));
}

static u32 mrkit_best_pages(const struct ib_device_attr *a, bool integrity)
{
	u32 frpl = integrity ? a->max_pi_fast_reg_page_list_len :
			       a->max_fast_reg_page_list_len;
	u32 n = frpl;

	/*
	 * Some devices advertise a long page list but perform best with
	 * MRs no larger than max_sge_rd pages (the xprtrdma quirk).
	 */
	if (a->max_sge_rd > MRKIT_SGE_RD_QUIRK)
		n = min(n, a->max_sge_rd);
	return min_t(u32, n, MRKIT_MAX_PAGES_PER_MR);
}

/*
 * Check a device against the requested flags and page count; on success
 * set *type and *pages.  Messages name the device and @name.
 */
static int mrkit_check_device(struct ib_device *dev, const char *name,
			      u32 flags, u32 want_pages, enum ib_mr_type *type,
			      u32 *pages)
{
	const struct ib_device_attr *a = &dev->attrs;
	bool integrity = flags & MRKIT_POOL_INTEGRITY;
	u32 frpl;

	if (!(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !a->max_fast_reg_page_list_len) {
		ibdev_err_ratelimited(dev,
				      "mrkit pool %s: device does not support fast registration (no MEM_MGT_EXTENSIONS)\n",
				      name);
		return -EOPNOTSUPP;
	}
	if (integrity && (!(a->kernel_cap_flags & IBK_INTEGRITY_HANDOVER) ||
			  !a->max_pi_fast_reg_page_list_len)) {
		ibdev_err_ratelimited(dev,
				      "mrkit pool %s: device does not support integrity MRs (no INTEGRITY_HANDOVER)\n",
				      name);
		return -EOPNOTSUPP;
	}
	frpl = integrity ? a->max_pi_fast_reg_page_list_len :
			   a->max_fast_reg_page_list_len;
	if (want_pages > frpl) {
		ibdev_err_ratelimited(dev,
				      "mrkit pool %s: %u pages per MR exceeds the device maximum %u\n",
				      name, want_pages, frpl);
		return -EINVAL;
	}
	*pages = want_pages ?: mrkit_best_pages(a, integrity);
	if (integrity)
		*type = IB_MR_TYPE_INTEGRITY;
	else if ((flags & MRKIT_POOL_SG_GAPS) &&
		 (a->kernel_cap_flags & IBK_SG_GAPS_REG))
		*type = IB_MR_TYPE_SG_GAPS;
	else
		*type = IB_MR_TYPE_MEM_REG;
	return 0;
}

/**
 * mrkit_query_limits - size a ULP's queues for a device and I/O shape
 * @dev: the RDMA device the connection will use
 * @shape: the largest I/O the ULP will register
 * @lim: filled in on success
 *
 * Tells a ULP, before it creates its QP, how many descriptors and send
 * WRs its largest I/O needs at worst, so it can size the send queue, the
 * send CQ and the pool.  The page count per descriptor is the one
 * mrkit_pool_create() will use for the same @shape->pages_per_mr and
 * @shape->flags.  Each descriptor costs one REG_MR and one LOCAL_INV (or
 * RDMA READ), and in lazy pools one more LOCAL_INV for the key it may
 * still hold; an unaligned head and tail cost one page more (of 4 KiB
 * with %MRKIT_MAP_4K in @shape->map_flags), and every interior gap
 * (without SG_GAPS MRs) can start a new descriptor.
 *
 * Context: any.
 * Return:
 * * %0 - @lim is valid.
 * * %-EINVAL - @shape->max_io_bytes is 0, unknown flags, or
 *   @shape->pages_per_mr exceeds the device's page-list limit.
 * * %-EOPNOTSUPP - the device cannot do fast registration, or integrity
 *   was asked for and the device lacks it.
 * * %-EOVERFLOW - the counts for @shape do not fit 32 bits (a huge
 *   @shape->max_gaps or @shape->extra_wrs); nothing wraps.
 */
int mrkit_query_limits(struct ib_device *dev, const struct mrkit_io_shape *shape,
		       struct mrkit_limits *lim)
{
	u32 psize = (shape->map_flags & MRKIT_MAP_4K) ? SZ_4K : PAGE_SIZE;
	u64 pages;
	int ret;

	if (!shape->max_io_bytes) {
		ibdev_err_ratelimited(dev, "mrkit: max_io_bytes is 0\n");
		return -EINVAL;
	}
	if ((shape->flags & ~MRKIT_POOL_FLAGS_ALL) ||
	    (shape->map_flags & ~MRKIT_MAP_FLAGS_ALL)) {
		ibdev_err_ratelimited(dev, "mrkit: unknown shape flags 0x%x / map flags 0x%x\n",
				      shape->flags & ~MRKIT_POOL_FLAGS_ALL,
				      shape->map_flags & ~MRKIT_MAP_FLAGS_ALL);
		return -EINVAL;
	}
	ret = mrkit_check_device(dev, "(limits)", shape->flags,
				 shape->pages_per_mr, &lim->mr_type,
				 &lim->pages_per_mr);
	if (ret)
		return ret;

	lim->max_pages_per_mr = (shape->flags & MRKIT_POOL_INTEGRITY) ?
				dev->attrs.max_pi_fast_reg_page_list_len :
				dev->attrs.max_fast_reg_page_list_len;
	/* In 64 bits: rounding a 4 GiB - 1 I/O up to pages must not wrap. */
	pages = DIV_ROUND_UP((u64)shape->max_io_bytes, psize) + 1;
	lim->mrs_per_io = DIV_ROUND_UP(pages, lim->pages_per_mr);
	if ((lim->mr_type != IB_MR_TYPE_SG_GAPS &&
	     check_add_overflow(lim->mrs_per_io, shape->max_gaps,
				&lim->mrs_per_io)) ||
	    check_mul_overflow(lim->mrs_per_io,
			       (shape->flags & (MRKIT_POOL_LAZY_INV |
						MRKIT_POOL_POST_INV)) ? 3U : 2U,
			       &lim->wrs_per_io) ||
	    check_add_overflow(lim->wrs_per_io, shape->extra_wrs,
			       &lim->wrs_per_io)) {
		ibdev_err_ratelimited(dev, "mrkit: I/O shape needs more than 2^32 WRs (max_gaps %u, extra_wrs %u)\n",
				      shape->max_gaps, shape->extra_wrs);
		return -EOVERFLOW;
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_query_limits, MRKIT);

static struct ib_mr *mrkit_alloc_ibmr(struct mrkit_pool *pool)
{
	if (mrkit_fault(MRKIT_FAULT_ALLOC_MR))
		return ERR_PTR(-ENOMEM);
	if (pool->mr_type == IB_MR_TYPE_INTEGRITY)
		return ib_alloc_mr_integrity(pool->pd, pool->pages_per_mr,
					     pool->meta_pages);
	return ib_alloc_mr(pool->pd, pool->mr_type, pool->pages_per_mr);
}

/* Index a descriptor by its MR's index (the rkey without the key byte). */
static int mrkit_index_mr(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	if (mrkit_fault(MRKIT_FAULT_RKEY_INDEX))
		return -ENOMEM;
	return xa_err(xa_store(&pool->rkeys, mr->ibmr->rkey >> 8, mr,
			       GFP_KERNEL));
}

static void mrkit_unindex_mr(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	xa_cmpxchg(&pool->rkeys, mr->ibmr->rkey >> 8, mr, NULL, 0);
}

/* Allocate descriptors into slots [nr_alloc, nr_alloc + n); caller holds grow_lock. */
static int mrkit_pool_add(struct mrkit_pool *pool, u32 n)
{
	u32 i, j, first = pool->nr_alloc;
	struct mrkit_mr *mr;
	int ret;

	for (i = 0; i < n; i++) {
		mr = mrkit_mr_alloc(pool->node, mrkit_pool_integrity(pool));
		if (!mr) {
			ret = -ENOMEM;
			goto out_unwind;
		}
		mr->ibmr = mrkit_alloc_ibmr(pool);
		if (IS_ERR(mr->ibmr)) {
			ret = PTR_ERR(mr->ibmr);
			mrkit_mr_free(mr, mrkit_pool_integrity(pool));
			mrkit_pool_err(pool, "ib_alloc_mr failed: %d\n", ret);
			goto out_unwind;
		}
		mr->pool = pool;
		mr->idx = first + i;
		atomic_set(&mr->state, MRKIT_MR_FREE);
		pool->descs[first + i] = mr;
		ret = mrkit_index_mr(pool, mr);
		if (ret) {
			i++;
			goto out_unwind;
		}
	}
	/*
	 * Publish the slots before any descriptor can be popped; pairs with
	 * smp_load_acquire() in mrkit_pool_get_stats() and
	 * mrkit_pool_qp_drained(), which read the slots without a lock.
	 */
	smp_store_release(&pool->nr_alloc, first + n);
	for (i = 0; i < n; i++)
		mrkit_push(pool, pool->descs[first + i]);
	WRITE_ONCE(pool->low_free, U32_MAX);
	return 0;

out_unwind:
	/*
	 * The indexed ones were visible to mrkit_pool_find_rkey(): free them
	 * only after a grace period (its lookup runs under rcu_read_lock()).
	 */
	for (j = 0; j < i; j++)
		mrkit_unindex_mr(pool, pool->descs[first + j]);
	synchronize_rcu();
	while (i--) {
		mr = pool->descs[first + i];
		pool->descs[first + i] = NULL;
		ib_dereg_mr(mr->ibmr);
		mrkit_mr_free(mr, mrkit_pool_integrity(pool));
	}
	return ret;
}

/*
 * @mr's MR was just deregistered: no key it ever had is valid.  Count its
 * fence down, and queue the fence to fall with the last.  Caller holds
 * grow_lock; the fence's owner wrote the count before the first of its
 * descriptors was given back (the llist_add() of that put, a full barrier,
 * pairs with the llist_del_all() that took the descriptor here).
 */
static void mrkit_fence_put(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	struct mrkit_fence *fence = mr->fence;

	if (!fence)
		return;
	mr->fence = NULL;
	if (WARN_ON_ONCE(!fence->pending) || --fence->pending)
		return;
	llist_add(&fence->node, &pool->fence_done);
}

/* Let the fences whose MRs are all gone fall; no lock held. */
static void mrkit_fence_deliver(struct mrkit_pool *pool)
{
	struct llist_node *list = llist_del_all(&pool->fence_done);
	struct mrkit_fence *fence, *tmp;

	llist_for_each_entry_safe(fence, tmp, list, node)
		fence->fallen(fence);	/* the fence's owner may be gone now */
}

/* Unindex and deregister a descriptor's MR, if it still has one. */
static void mrkit_mr_dereg(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	if (!mr->ibmr)
		return;
	mrkit_unindex_mr(pool, mr);
	ib_dereg_mr(mr->ibmr);
	mr->ibmr = NULL;
}

/*
 * Deregister the MRs of the retired descriptors given back so far and
 * count their fences down; return them, to be replaced once the fences
 * have fallen.  Caller holds grow_lock.
 */
static struct llist_node *mrkit_pool_retire(struct mrkit_pool *pool)
{
	struct llist_node *list = llist_del_all(&pool->retire_list);
	struct mrkit_mr *mr;

	if (!list)
		return NULL;
	/*
	 * A completion handler that marked one of these STALE may still be
	 * tracing it (pairs with the rcu_read_lock() of
	 * __mrkit_mr_mark_stale()).
	 */
	synchronize_rcu();
	llist_for_each_entry(mr, list, retire_node) {
		mrkit_mr_dereg(pool, mr);
		mrkit_fence_put(pool, mr);
	}
	return list;
}

/* Give retired descriptors (on @list) fresh MRs; caller holds grow_lock. */
static void mrkit_pool_replace(struct mrkit_pool *pool, struct llist_node *list)
{
	struct mrkit_mr *mr, *tmp;
	struct ib_mr *ibmr;

	llist_for_each_entry_safe(mr, tmp, list, retire_node) {
		ibmr = mrkit_alloc_ibmr(pool);
		if (IS_ERR(ibmr)) {
			mrkit_pool_err(pool,
				       "cannot replace stale MR: %ld; slot %u stays retired\n",
				       PTR_ERR(ibmr), mr->idx);
			llist_add(&mr->retire_node, &pool->retire_list);
			continue;
		}
		mr->ibmr = ibmr;
		mr->dev_valid = false;
		mr->orphan = false;
		if (mrkit_index_mr(pool, mr)) {
			mrkit_pool_err(pool,
				       "cannot index replacement MR; slot %u stays retired\n",
				       mr->idx);
			ib_dereg_mr(ibmr);
			mr->ibmr = NULL;
			llist_add(&mr->retire_node, &pool->retire_list);
			continue;
		}
		pool->stale_replaced++;
		atomic_set(&mr->state, MRKIT_MR_FREE);
		trace_mrkit_mr_replaced(mr);
		atomic_dec(&pool->nr_stale);
		mrkit_rmw(1);
		mr->retire_node.next = NULL;
		mrkit_push(pool, mr);
		WRITE_ONCE(pool->low_free, U32_MAX);
	}
}

static void mrkit_pool_wake(struct mrkit_pool *pool)
{
	void (*notify)(struct mrkit_pool *pool, void *ctx);

	mrkit_rmw(1);
	if (!xchg(&pool->starved, false))
		return;
	wake_up_all(&pool->wait);
	/* Pairs with the release in mrkit_pool_set_notify(): ctx first. */
	notify = smp_load_acquire(&pool->notify);
	if (notify)
		notify(pool, READ_ONCE(pool->notify_ctx));
}

static void mrkit_pool_free(struct mrkit_pool *pool)
{
	free_percpu(pool->events);
	xa_destroy(&pool->rkeys);
	mrkit_kvfree(pool->descs);
	mrkit_free(pool);
}

static void mrkit_pool_work(struct work_struct *work)
{
	struct mrkit_pool *pool = container_of(work, struct mrkit_pool, work);
	void (*parked)(struct mrkit_pool *pool, void *ctx);
	struct llist_node *retired;
	unsigned int noio;
	u32 n;
	int ret;

	if (READ_ONCE(pool->parked_pending) &&
	    xchg(&pool->parked_pending, false)) {
		/* Pairs with the release in mrkit_pool_set_parked(). */
		parked = smp_load_acquire(&pool->parked);
		if (parked)
			parked(pool, READ_ONCE(pool->parked_ctx));
	}
	mutex_lock(&pool->grow_lock);
	retired = mrkit_pool_retire(pool);
	mutex_unlock(&pool->grow_lock);
	/* Fenced done() calls before any allocation (they may free memory). */
	mrkit_fence_deliver(pool);

	/* Reclaim must not wait on I/Os that wait for this work's fences. */
	noio = memalloc_noio_save();
	mutex_lock(&pool->grow_lock);
	mrkit_pool_replace(pool, retired);
	/*
	 * Cleared before growing: a getter that finds the pool empty while
	 * this runs queues the work again rather than losing its request.
	 */
	mrkit_rmw(1);
	if (xchg(&pool->grow_pending, false)) {
		n = min(pool->depth, pool->max_depth - pool->nr_alloc);
		ret = n ? mrkit_pool_add(pool, n) : 0;
		if (ret) {
			mrkit_pool_err(pool, "growth by %u failed: %d\n", n, ret);
		} else {
			pool->grown += n;
			trace_mrkit_pool_grow(pool, n);
		}
	}
	mutex_unlock(&pool->grow_lock);
	memalloc_noio_restore(noio);
	if (mrkit_head_top(atomic64_read(&pool->head)) != MRKIT_HEAD_NIL)
		mrkit_pool_wake(pool);
}

/* Check a pool's attributes; on success set its MR type and page count. */
static int mrkit_pool_check_attr(struct ib_device *dev,
				 const struct mrkit_pool_attr *attr,
				 enum ib_mr_type *type, u32 *pages)
{
	u32 max_depth = attr->max_depth ?: attr->depth;
	const char *name = attr->name;
	int ret;

	if (!name || !*name) {
		ibdev_err_ratelimited(dev, "mrkit: a pool needs a name\n");
		return -EINVAL;
	}
	if (!attr->depth || attr->depth > max_depth ||
	    max_depth > MRKIT_MAX_DEPTH) {
		ibdev_err_ratelimited(dev,
				      "mrkit pool %s: bad depth %u / max_depth %u (1 <= depth <= max_depth <= %u)\n",
				      name, attr->depth, attr->max_depth,
				      MRKIT_MAX_DEPTH);
		return -EINVAL;
	}
	if (attr->flags & ~MRKIT_POOL_FLAGS_ALL) {
		ibdev_err_ratelimited(dev, "mrkit pool %s: unknown flags 0x%x\n",
				      name, attr->flags & ~MRKIT_POOL_FLAGS_ALL);
		return -EINVAL;
	}
	if ((attr->flags & MRKIT_POOL_POST_INV) &&
	    !(attr->flags & MRKIT_POOL_LAZY_INV)) {
		ibdev_err_ratelimited(dev, "mrkit pool %s: MRKIT_POOL_POST_INV without MRKIT_POOL_LAZY_INV\n",
				      name);
		return -EINVAL;
	}
	if (attr->node != NUMA_NO_NODE &&
	    (attr->node < 0 || attr->node >= nr_node_ids ||
	     !node_online(attr->node))) {
		ibdev_err_ratelimited(dev, "mrkit pool %s: NUMA node %d is not online\n",
				      name, attr->node);
		return -EINVAL;
	}
	ret = mrkit_check_device(dev, name, attr->flags, attr->pages_per_mr,
				 type, pages);
	if (ret)
		return ret;
	if ((attr->flags & MRKIT_POOL_INTEGRITY) &&
	    attr->meta_pages > dev->attrs.max_pi_fast_reg_page_list_len) {
		ibdev_err_ratelimited(dev,
				      "mrkit pool %s: %u metadata pages exceeds the device maximum %u\n",
				      name, attr->meta_pages,
				      dev->attrs.max_pi_fast_reg_page_list_len);
		return -EINVAL;
	}
	return 0;
}

/**
 * mrkit_pool_create - create a connection's descriptor pool
 * @pd: protection domain of the connection; the pool's MRs belong to it
 * @attr: name, depths, page counts, flags and NUMA node
 *
 * Allocates @attr->depth descriptors, each with one MR of the type and
 * size the device supports best (or as asked), on the device's NUMA node
 * unless @attr->node says otherwise.  Growth up to @attr->max_depth
 * happens later, on demand.  The pool may outlive any one QP on @pd.
 *
 * Context: process context; may sleep.
 * Return: the pool, or an ERR_PTR():
 *
 * * %-EINVAL - no name, a zero depth, a depth above %MRKIT_MAX_DEPTH or
 *   above @attr->max_depth, unknown flags, a NUMA node that is not
 *   online, or more pages per MR than the device allows.
 * * %-EOPNOTSUPP - the device cannot do fast registration, or
 *   %MRKIT_POOL_INTEGRITY was asked for and it lacks integrity handover.
 * * %-ENOMEM, or the provider's error from MR allocation; nothing is
 *   left allocated.
 */
struct mrkit_pool *mrkit_pool_create(struct ib_pd *pd,
				     const struct mrkit_pool_attr *attr)
{
	struct ib_device *dev = pd->device;
	const char *name = attr->name;
	u32 max_depth = attr->max_depth ?: attr->depth;
	struct mrkit_pool *pool;
	enum ib_mr_type type;
	u32 pages;
	int node, ret;

	ret = mrkit_pool_check_attr(dev, attr, &type, &pages);
	if (ret)
		return ERR_PTR(ret);

	node = attr->node == NUMA_NO_NODE ? ibdev_to_node(dev) : attr->node;
	pool = mrkit_zalloc(MRKIT_FAULT_POOL_ALLOC, sizeof(*pool), node);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	pool->descs = mrkit_kvzalloc(MRKIT_FAULT_DESCS_ALLOC,
				     array_size(max_depth, sizeof(*pool->descs)),
				     node);
	if (!pool->descs) {
		ret = -ENOMEM;
		goto out_free_pool;
	}

	pool->events = mrkit_fault(MRKIT_FAULT_POOL_ALLOC) ? NULL :
		       alloc_percpu(struct mrkit_pool_events);
	if (!pool->events) {
		ret = -ENOMEM;
		goto out_free_descs_array;
	}
	atomic64_set(&pool->head, mrkit_head_pack(MRKIT_HEAD_NIL, 0, 0));
	pool->low_free = U32_MAX;
	pool->iwarp = mrkit_iwarp(dev);
	pool->pd = pd;
	pool->dev = dev;
	pool->mr_type = type;
	pool->pages_per_mr = pages;
	pool->meta_pages = attr->meta_pages ?: pages;
	pool->depth = attr->depth;
	pool->max_depth = max_depth;
	pool->node = node;
	pool->flags = attr->flags;
	init_llist_head(&pool->retire_list);
	init_llist_head(&pool->orphan_list);
	init_llist_head(&pool->fence_done);
	init_llist_head(&pool->returned);
	atomic_set(&pool->waiters, 0);
	xa_init(&pool->rkeys);
	mutex_init(&pool->grow_lock);
	INIT_WORK(&pool->work, mrkit_pool_work);
	init_waitqueue_head(&pool->wait);
	strscpy(pool->name, name, sizeof(pool->name));

	mutex_lock(&pool->grow_lock);
	ret = mrkit_pool_add(pool, attr->depth);
	mutex_unlock(&pool->grow_lock);
	if (ret)
		goto out_free_descs;
	mrkit_pool_debugfs_add(pool);
	trace_mrkit_pool_create(pool, attr->depth);
	return pool;

out_free_descs:
	xa_destroy(&pool->rkeys);
	mutex_destroy(&pool->grow_lock);
	free_percpu(pool->events);
out_free_descs_array:
	mrkit_kvfree(pool->descs);
out_free_pool:
	mrkit_free(pool);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_create, MRKIT);

/* How often mrkit_pool_destroy() says what it still waits for. */
#define MRKIT_DESTROY_WARN	(10 * HZ)

/*
 * Deregister and free every descriptor the pool holds now: free, retired,
 * parked, and given back to destroy.  Returns how many slots are still
 * handed out.  Caller holds grow_lock.
 */
static u32 mrkit_pool_reclaim(struct mrkit_pool *pool)
{
	struct llist_node *lists[] = {
		llist_del_all(&pool->retire_list),
		llist_del_all(&pool->orphan_list),
		llist_del_all(&pool->returned),
	};
	struct mrkit_mr *mr, *tmp;
	u32 i, nfree, left = 0;

	while ((mr = mrkit_pop(pool, &nfree))) {
		mr->retire_node.next = lists[0];
		lists[0] = &mr->retire_node;
	}
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		llist_for_each_entry_safe(mr, tmp, lists[i], retire_node) {
			mrkit_mr_dereg(pool, mr);
			mrkit_fence_put(pool, mr);
			pool->descs[mr->idx] = NULL;
			mrkit_mr_free(mr, mrkit_pool_integrity(pool));
		}
	}
	for (i = 0; i < pool->nr_alloc; i++) {
		mr = pool->descs[i];
		if (!mr)
			continue;
		/* Kept by an idle I/O, which may not be used any more. */
		if (atomic_read(&mr->state) == MRKIT_MR_CACHED) {
			mrkit_mr_dereg(pool, mr);
			pool->descs[i] = NULL;
			mrkit_mr_free(mr, mrkit_pool_integrity(pool));
			continue;
		}
		left++;
	}
	return left;
}

/**
 * mrkit_pool_destroy_timeout - mrkit_pool_destroy(), giving up after a while
 * @pool: the pool
 * @timeout: jiffies to wait for descriptors still out, or
 *	%MAX_SCHEDULE_TIMEOUT
 *
 * For test harnesses, where a failed test may leave descriptors out for
 * good: a destroy that would wait forever fails instead, leaving the pool
 * and its MRs allocated (leaked, with a kernel warning).
 *
 * Context: process context; sleeps.
 * Return: 0 when the pool is gone; -ETIMEDOUT when descriptors were still
 * out after @timeout.
 */
int mrkit_pool_destroy_timeout(struct mrkit_pool *pool, unsigned long timeout)
{
	unsigned long warn_at = jiffies + MRKIT_DESTROY_WARN;
	unsigned long give_up = jiffies + timeout;
	u32 left;

	if (trace_mrkit_pool_counters_enabled()) {
		struct mrkit_pool_stats st;

		mrkit_pool_get_stats(pool, &st);
		trace_mrkit_pool_counters(pool, &st);
	}
	trace_mrkit_pool_destroy(pool, mrkit_pool_in_use(pool));
	mrkit_pool_debugfs_remove(pool);
	WRITE_ONCE(pool->dying, true);
	wake_up_all(&pool->wait);
	/*
	 * Every put that saw the pool alive has finished (puts run under
	 * rcu_read_lock_sched(), which synchronize_rcu() waits for); from
	 * here on a put hands its descriptor over on @returned and touches
	 * the pool no more.
	 */
	synchronize_rcu();
	cancel_work_sync(&pool->work);
	for (;;) {
		mutex_lock(&pool->grow_lock);
		left = mrkit_pool_reclaim(pool);
		mutex_unlock(&pool->grow_lock);
		mrkit_fence_deliver(pool);
		if (!left)
			break;
		if (timeout != MAX_SCHEDULE_TIMEOUT &&
		    time_after(jiffies, give_up)) {
			WARN(1, "mrkit pool %s: destroy gives up with %u descriptor(s) still out; the pool is leaked\n",
			     pool->name, left);
			return -ETIMEDOUT;
		}
		/* Pairs with the wake_up_var() of mrkit_mr_put_returned(). */
		if (wait_var_event_timeout(&pool->returned,
					   !llist_empty(&pool->returned), HZ))
			continue;
		if (time_after(jiffies, warn_at)) {
			ibdev_warn(pool->dev,
				   "mrkit pool %s: destroy waits for %u descriptor(s) still held by I/Os\n",
				   pool->name, left);
			warn_at = jiffies + MRKIT_DESTROY_WARN;
		}
	}
	/* Sleepers in mrkit_pool_wait() saw @dying; wait until they left. */
	wait_var_event(&pool->waiters, !atomic_read(&pool->waiters));
	mutex_destroy(&pool->grow_lock);
	mrkit_pool_free(pool);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_pool_destroy_timeout);

/**
 * mrkit_pool_destroy - deregister a pool's MRs and free it
 * @pool: the pool; may be an ERR_PTR or NULL, which is ignored
 *
 * Sleeps until every descriptor of @pool is back and every MR of the pool
 * is deregistered: descriptors still handed out must be coming back from
 * other contexts (I/Os finishing: completions of a QP being drained or
 * destroyed, a request's release), and each fenced I/O's done() runs before
 * this returns.  Parked descriptors (see mrkit_pool_qp_drained()) are
 * deregistered too, so call it once the pool's QPs are drained or
 * destroyed.  While it waits it says every ten seconds how many
 * descriptors are still out.  Afterwards nothing of the pool remains and
 * the caller may deallocate the PD or let the device go.
 *
 * The caller must not get from the pool, map I/Os on it or start
 * mrkit_pool_wait() once this has been called; puts, completions and
 * sleepers already in mrkit_pool_wait() (which return -ENODEV) may run
 * concurrently.
 *
 * Context: process context; sleeps.  Not from a done() callback of the
 * pool's I/Os or from any context the I/Os holding descriptors need in
 * order to finish.
 */
void mrkit_pool_destroy(struct mrkit_pool *pool)
{
	if (!IS_ERR_OR_NULL(pool))
		mrkit_pool_destroy_timeout(pool, MAX_SCHEDULE_TIMEOUT);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_destroy, MRKIT);

/**
 * mrkit_pool_new_low - record a get that left fewer descriptors free than
 *	ever since the last growth
 * @pool: the pool
 * @nfree: the free count the get left
 *
 * Sets the low mark and raises the in-use high-water mark.
 *
 * Context: any; called by __mrkit_mr_get().
 */
void __cold mrkit_pool_new_low(struct mrkit_pool *pool, u32 nfree)
{
	u32 used = mrkit_pool_used(pool, nfree);

	WRITE_ONCE(pool->low_free, nfree);
	if (used > READ_ONCE(pool->high_water))
		WRITE_ONCE(pool->high_water, used);
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_pool_new_low);

static struct mrkit_mr *mrkit_pool_empty(struct mrkit_pool *pool)
{
	mrkit_count(pool, MRKIT_EV_EXHAUSTED);
	trace_mrkit_pool_exhausted(pool, 0);
	if (READ_ONCE(pool->nr_alloc) < pool->max_depth &&
	    !READ_ONCE(pool->grow_pending)) {
		WRITE_ONCE(pool->grow_pending, true);
		queue_work(mrkit_wq, &pool->work);
	}
	return ERR_PTR(-EAGAIN);
}

/*
 * The uncommon cases of __mrkit_mr_get(): a destroyed pool, or a stack
 * found empty - then the pool is marked starved and looked at once more,
 * so that a put racing with the first look wakes nobody in vain.
 */
struct mrkit_mr * __cold mrkit_mr_get_slow(struct mrkit_pool *pool)
{
	struct mrkit_mr *mr;
	u32 nfree;

	if (READ_ONCE(pool->dying)) {
		mrkit_pool_err(pool, "get after destroy\n");
		return ERR_PTR(-ENODEV);
	}
	mr = mrkit_pop(pool, &nfree);
	if (!mr) {
		WRITE_ONCE(pool->starved, true);
		/* Pairs with the full barrier of the cmpxchg in mrkit_push(). */
		smp_mb();
		mr = mrkit_pop(pool, &nfree);
		if (!mr)
			return mrkit_pool_empty(pool);
	}
	return mrkit_mr_got(pool, mr, nfree);
}

/**
 * mrkit_mr_get - take a free descriptor from a pool
 * @pool: the pool
 *
 * For ULPs that manage registrations themselves rather than through
 * mrkit's I/O calls (which use it), and for measuring the pool.
 * O(1): one cmpxchg, no lock, no allocation.  When the pool is empty it
 * counts the event, queues growth if below the maximum depth, and arms the
 * wake-up of mrkit_pool_wait() sleepers and of the notify callback for the
 * next descriptor that comes back.
 *
 * Context: any (process, softirq, hard irq, CQ callback).
 * Return: a descriptor in the RESERVED state, or an ERR_PTR():
 *
 * * %-EAGAIN - the pool is empty; retry after a put, a notify callback or
 *   mrkit_pool_wait().
 * * %-ENODEV - the pool was destroyed.
 */
struct mrkit_mr *mrkit_mr_get(struct mrkit_pool *pool)
{
	return __mrkit_mr_get(pool);
}
EXPORT_SYMBOL_NS_GPL(mrkit_mr_get, MRKIT);

/*
 * While mrkit_pool_destroy() runs: hand the descriptor to it.  The
 * llist_add() is the last access to the pool - destroy may free it at once
 * - and wake_up_var() only hashes the address.
 */
static void mrkit_mr_put_returned(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	llist_add(&mr->retire_node, &pool->returned);
	wake_up_var(&pool->returned);
}

/*
 * The rest of mrkit_mr_push_free(), entered with preemption off (its
 * rcu_read_lock_sched()): hand @mr to a dying pool's destroy, or (@mr
 * NULL: pushed) wake the pool's waiters.  Under rcu_read_lock(), taken
 * before the first is dropped, so that destroy's synchronize_rcu() waits
 * for this too, and the wake may sleep on PREEMPT_RT's spinlocks.
 */
int mrkit_mr_push_slow(struct mrkit_pool *pool, struct mrkit_mr *mr)
	__releases(RCU_SCHED)
{
	rcu_read_lock();
	rcu_read_unlock_sched();
	if (mr)
		mrkit_mr_put_returned(pool, mr);
	else
		mrkit_pool_wake(pool);
	rcu_read_unlock();
	return 0;
}

/* A stale descriptor given back (now RETIRING): deregister and replace it. */
static void mrkit_mr_retire(struct mrkit_pool *pool, struct mrkit_mr *mr)
{
	rcu_read_lock();
	if (unlikely(READ_ONCE(pool->dying))) {
		mrkit_mr_put_returned(pool, mr);
	} else if (mr->orphan) {
		/*
		 * A posted WR may still reference it: wait for the drain, and
		 * have the work item ask the ULP for one.
		 */
		if (llist_add(&mr->retire_node, &pool->orphan_list)) {
			WRITE_ONCE(pool->parked_pending, true);
			queue_work(mrkit_wq, &pool->work);
		}
	} else {
		llist_add(&mr->retire_node, &pool->retire_list);
		queue_work(mrkit_wq, &pool->work);
	}
	rcu_read_unlock();
}

/**
 * mrkit_mr_put - give a descriptor back to its pool
 * @mr: a descriptor from mrkit_mr_get()
 *
 * The counterpart of mrkit_mr_get().  A descriptor with no registration
 * exposed (RESERVED or MAPPED) goes back
 * on the free stack.  A STALE one (see mrkit_mr_mark_stale()) is never
 * reused: its MR is deregistered and replaced in the background.  A
 * descriptor whose rkey may still be valid (REGISTERED or INVALIDATING) is
 * refused: invalidate it first.
 *
 * Context: any.
 * Return:
 * * %0 - taken back.
 * * %-EBUSY - its registration is still live; the caller keeps it.
 * * %-EINVAL - it is already free (double put); nothing changed.
 */
int mrkit_mr_put(struct mrkit_mr *mr)
{
	struct mrkit_pool *pool = mr->pool;
	int st = atomic_read(&mr->state);

again:
	switch (st) {
	case MRKIT_MR_RESERVED:
	case MRKIT_MR_MAPPED:
	case MRKIT_MR_CACHED:
		/* Lost to a flush marking it stale: put it as what it is now. */
		mrkit_rmw(1);
		if (!atomic_try_cmpxchg(&mr->state, &st, MRKIT_MR_FREE))
			goto again;
		return mrkit_mr_push_free(pool, mr);
	case MRKIT_MR_STALE:
		mrkit_rmw(1);
		if (!atomic_try_cmpxchg(&mr->state, &st, MRKIT_MR_RETIRING))
			goto again;
		mrkit_mr_retire(pool, mr);
		return 0;
	case MRKIT_MR_REGISTERED:
	case MRKIT_MR_INVALIDATING:
		mrkit_pool_err(pool,
			       "put of descriptor %u refused: its rkey 0x%x may still be valid (%s)\n",
			       mr->idx, mr->ibmr->rkey, mrkit_mr_state_name(st));
		return -EBUSY;
	default:
		break;
	}
	mrkit_pool_err(pool, "double put of descriptor %u (state %s)\n",
		       mr->idx, mrkit_mr_state_name(atomic_read(&mr->state)));
	return -EINVAL;
}
EXPORT_SYMBOL_NS_GPL(mrkit_mr_put, MRKIT);

/**
 * mrkit_mr_put_own - give back a descriptor no completion can touch
 * @mr: a descriptor of an I/O whose finishing chain completed successfully
 *
 * Every WR on @mr completed (send queue completions are in order), so no
 * flush can mark it STALE behind its owner: a RESERVED descriptor goes
 * FREE by a plain store.  Anything else takes mrkit_mr_put()'s way.
 *
 * Context: any.
 * Return: as mrkit_mr_put().
 */
int mrkit_mr_put_own(struct mrkit_mr *mr)
{
	return __mrkit_mr_put_own(mr);
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_put_own);

/* Give a descriptor back whatever it holds (a lazily kept key included). */
static void mrkit_mr_give(struct mrkit_mr *mr)
{
	WRITE_ONCE(mr->io, NULL);
	if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED && mr->dev_valid)
		mrkit_mr_put_valid(mr);
	else
		mrkit_mr_put(mr);
}

/**
 * mrkit_mr_keep - keep a descriptor with its owner instead of putting it
 * @mr: a descriptor whose last use ended well: RESERVED, MAPPED, or
 *	REGISTERED holding a lazily kept registration
 * @may_race: a flush of one of its WRs may still mark it STALE (a lazy
 *	completion); false after its chain completed successfully, when
 *	none can
 *
 * For %MRKIT_POOL_IO_CACHE: the descriptor stays in use, CACHED, for its
 * owner's next use (mrkit_mr_unkeep()).  With @may_race it is a cmpxchg
 * that a flush wins, and the descriptor is given back (retired) instead;
 * so it is while the pool is being destroyed.
 *
 * Context: any.
 * Return: 0 when kept; -EAGAIN or -ENODEV when it was given back instead
 * (the owner no longer holds it either way).
 */
int mrkit_mr_keep(struct mrkit_mr *mr, bool may_race)
{
	struct mrkit_pool *pool = mr->pool;
	int cur = atomic_read(&mr->state), ret = 0;

	rcu_read_lock_sched();
	if (unlikely(READ_ONCE(pool->dying))) {
		ret = -ENODEV;
	} else if (!may_race) {
		atomic_set(&mr->state, MRKIT_MR_CACHED);
	} else {
		do {
			if (unlikely(cur == MRKIT_MR_STALE)) {
				ret = -EAGAIN;
				break;
			}
			mrkit_rmw(1);
		} while (!atomic_try_cmpxchg(&mr->state, &cur,
					     MRKIT_MR_CACHED));
	}
	rcu_read_unlock_sched();
	if (ret)
		mrkit_mr_give(mr);
	return ret;
}

/**
 * mrkit_mr_put_valid - give back a descriptor whose registration is live
 * @mr: a REGISTERED descriptor
 *
 * Lazy invalidation only: the rkey stays valid at the device and the
 * descriptor's next registration invalidates it first.  A lazy give-back
 * does not wait for the descriptor's WRs, so a flush of one of them may
 * have marked it STALE since the caller saw it REGISTERED: it is then
 * retired (mrkit_mr_put()), as mrkit_mr_keep() does, never lost.
 *
 * Context: any.
 * Return: 0, or -EINVAL if @mr is neither REGISTERED nor STALE.
 */
int mrkit_mr_put_valid(struct mrkit_mr *mr)
{
	struct mrkit_pool *pool = mr->pool;
	int cur = MRKIT_MR_REGISTERED;

	mrkit_rmw(1);
	if (atomic_try_cmpxchg(&mr->state, &cur, MRKIT_MR_FREE))
		return mrkit_mr_push_free(pool, mr);
	if (cur == MRKIT_MR_STALE)
		return mrkit_mr_put(mr);
	mrkit_pool_err(pool, "descriptor %u: lazy put of a %s descriptor\n",
		       mr->idx, mrkit_mr_state_name(cur));
	return -EINVAL;
}

/**
 * mrkit_pool_qp_drained - release descriptors parked after failed posts
 * @pool: the pool
 *
 * When a chain fails to post part-way, WRs already posted may still
 * reference descriptors whose completion mrkit cannot wait for; those are
 * parked.  Once the ULP has drained or destroyed the QP (so no WR can
 * reference them any more) it calls this, and they are deregistered and
 * replaced; I/Os waiting for them (the rkey fence) get their done() from
 * the pool's work item after that.  mrkit_pool_destroy() releases them
 * too.
 *
 * Every descriptor is marked drained until its next REG_MR is posted, so
 * that a chain failing to post later on this QP (a device in a fatal
 * error refuses every post) parks nothing of a registration posted
 * before: nothing of it can complete, and nothing will call this again.
 *
 * Parked descriptors are kept per pool, not per QP: a pool serves one
 * connection's QP at a time (a reconnect drains the old QP before the
 * new one posts).  A ULP that posts one pool's I/Os on several QPs at
 * once must call this only when all of them are drained.
 *
 * Context: process context (after ib_drain_qp() or QP destruction), with
 *	no post on the pool's I/Os running.
 */
void mrkit_pool_qp_drained(struct mrkit_pool *pool)
{
	struct llist_node *list;
	struct mrkit_mr *mr, *tmp;
	u32 i, n;

	/*
	 * The drain the parked callback asks for has happened; one parked
	 * after the llist_del_all() asks again.
	 */
	WRITE_ONCE(pool->parked_pending, false);
	list = llist_del_all(&pool->orphan_list);

	/* Pairs with smp_store_release() in mrkit_pool_add(). */
	n = smp_load_acquire(&pool->nr_alloc);
	for (i = 0; i < n; i++) {
		mr = READ_ONCE(pool->descs[i]);
		if (mr)
			WRITE_ONCE(mr->drained, true);
	}
	if (!list)
		return;
	llist_for_each_entry_safe(mr, tmp, list, retire_node)
		llist_add(&mr->retire_node, &pool->retire_list);
	queue_work(mrkit_wq, &pool->work);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_qp_drained, MRKIT);

/**
 * mrkit_pool_visit_held - visit the descriptors their owners hold
 * @pool: the pool
 * @fn: called for each descriptor in an owner's state (RESERVED to
 *	STALE); it may give the descriptor back
 * @ctx: @fn's argument
 *
 * Under @grow_lock: no growth or replacement runs meanwhile.
 *
 * Context: process context.
 */
void mrkit_pool_visit_held(struct mrkit_pool *pool, mrkit_mr_visit_t fn,
			   void *ctx)
{
	u32 i;

	mutex_lock(&pool->grow_lock);
	for (i = 0; i < pool->nr_alloc; i++) {
		struct mrkit_mr *mr = pool->descs[i];
		int st;

		if (!mr)
			continue;
		st = atomic_read(&mr->state);
		if (st >= MRKIT_MR_RESERVED && st <= MRKIT_MR_STALE)
			fn(mr, ctx);
	}
	mutex_unlock(&pool->grow_lock);
}

/**
 * mrkit_mr_refused - report a refused descriptor transition
 * @mr: the descriptor
 * @from: the state the caller believed it was in
 * @to: the state it asked for
 * @cur: the state it is in
 *
 * The cold half of mrkit_mr_transition() and mrkit_mr_own().
 *
 * Return: -EINVAL.
 */
int __cold mrkit_mr_refused(struct mrkit_mr *mr, enum mrkit_mr_state from,
			    enum mrkit_mr_state to, int cur)
{
	mrkit_pool_err(mr->pool,
		       "descriptor %u: illegal transition %s -> %s (it is %s)\n",
		       mr->idx, mrkit_mr_state_name(from),
		       mrkit_mr_state_name(to), mrkit_mr_state_name(cur));
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_refused);

/**
 * mrkit_mr_stale_done - account a descriptor that just went STALE
 * @mr: the descriptor
 */
void mrkit_mr_stale_done(struct mrkit_mr *mr)
{
	atomic_inc(&mr->pool->nr_stale);
	mrkit_rmw(1);
	trace_mrkit_mr_stale(mr);
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_stale_done);

/*
 * Mark @mr STALE in one cmpxchg if its state is @from..INVALIDATING (the
 * owned states from @from on); else leave it and say in *@found what it
 * is.
 */
static bool __mrkit_mr_mark_stale(struct mrkit_mr *mr, int from, int *found)
{
	int cur = atomic_read(&mr->state);
	bool marked = false;

	/*
	 * Once STALE is published the owner may give the descriptor back
	 * and the work item deregister its MR, which the mr_stale event
	 * still reads: the work item waits a grace period first (pairs with
	 * the synchronize_rcu() of mrkit_pool_retire()).
	 */
	rcu_read_lock();
	while (cur >= from && cur <= MRKIT_MR_INVALIDATING) {
		mrkit_rmw(1);
		if (atomic_try_cmpxchg(&mr->state, &cur, MRKIT_MR_STALE)) {
			mrkit_mr_stale_done(mr);
			marked = true;
			break;
		}
	}
	rcu_read_unlock();
	if (!marked)
		*found = cur;
	return marked;
}

/**
 * mrkit_mr_mark_stale - retire a descriptor that must not be reused
 * @mr: the descriptor, in any owned state
 *
 * Called from completion handlers on a flushed or failed REG_MR,
 * LOCAL_INV or RDMA READ, and by frwr/ for a registration that may be
 * live but will never be invalidated (a failed post, an I/O finished or
 * abandoned with its key live).  The descriptor stays with its owner, who
 * puts it back as usual; it is then replaced instead of reused.
 *
 * Context: any.
 */
void mrkit_mr_mark_stale(struct mrkit_mr *mr)
{
	int cur;

	if (__mrkit_mr_mark_stale(mr, MRKIT_MR_RESERVED, &cur))
		return;
	/* A late flush of a parked or retired descriptor changes nothing. */
	if (cur != MRKIT_MR_STALE && cur != MRKIT_MR_RETIRING)
		mrkit_pool_err(mr->pool,
			       "descriptor %u: cannot mark %s descriptor stale\n",
			       mr->idx, mrkit_mr_state_name(cur));
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_mark_stale);

/**
 * mrkit_mr_mark_stale_live - retire a descriptor a failed WR was posted on,
 *	if it still holds that registration
 * @mr: the descriptor
 * @found: set to the state found when @mr is not marked
 *
 * For a completion handler, which does not own @mr: marks it STALE only
 * from REGISTERED or INVALIDATING, in one cmpxchg.  A descriptor given
 * back meanwhile (FREE, CACHED) or taken by a new owner (RESERVED,
 * MAPPED, whose owner changes its state by plain stores) is left as it
 * is, and so is one already STALE or RETIRING.
 *
 * Context: any.
 * Return: true if this call marked @mr STALE, else false.
 */
bool mrkit_mr_mark_stale_live(struct mrkit_mr *mr, int *found)
{
	return __mrkit_mr_mark_stale(mr, MRKIT_MR_REGISTERED, found);
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_mr_mark_stale_live);

/*
 * mrkit_pool_wait()'s condition, looked at before each sleep: the pool is
 * marked starved every time, since a wake-up clears the mark and the
 * descriptor that came back may be gone again (another getter) when the
 * sleeper looks.
 */
static bool mrkit_pool_wait_done(struct mrkit_pool *pool)
{
	WRITE_ONCE(pool->starved, true);
	/* Pairs with the full barrier of the cmpxchg in mrkit_push(). */
	smp_mb();
	return READ_ONCE(pool->dying) ||
	       mrkit_head_top(atomic64_read(&pool->head)) != MRKIT_HEAD_NIL;
}

/**
 * mrkit_pool_wait - wait for a descriptor to come back to a pool
 * @pool: the pool
 * @timeout: in jiffies
 *
 * For ULPs that may block (a target's process context; initiators restart
 * their queues from mrkit_pool_set_notify() instead): after a map or
 * mrkit_mr_get() returned -EAGAIN, sleep until a descriptor is free (a
 * put, growth or a replacement).
 *
 * Context: process context; may sleep.
 * Return:
 * * %0 - a descriptor is free now (another getter may still win it).
 * * %-ETIMEDOUT - none came back in time.
 * * %-ENODEV - the pool was destroyed.
 */
int mrkit_pool_wait(struct mrkit_pool *pool, unsigned long timeout)
{
	bool dying;
	long left;

	atomic_inc(&pool->waiters);
	left = wait_event_timeout(pool->wait, mrkit_pool_wait_done(pool),
				  timeout);
	dying = READ_ONCE(pool->dying);
	/*
	 * The last access to the pool: destroy frees it once no caller is
	 * inside (the barrier orders the reads above before the decrement;
	 * pairs with the read of the count by wait_var_event() in
	 * mrkit_pool_destroy(), after which it frees the pool);
	 * wake_up_var() only hashes the address.
	 */
	smp_mb__before_atomic();
	atomic_dec(&pool->waiters);
	/*
	 * wake_up_var() looks for sleepers without a lock: pairs with the
	 * barrier of the set_current_state() in destroy's wait_var_event(),
	 * before it reads the count.
	 */
	smp_mb__after_atomic();
	wake_up_var(&pool->waiters);
	if (dying)
		return -ENODEV;
	return left ? 0 : -ETIMEDOUT;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_wait, MRKIT);

/**
 * mrkit_pool_set_notify - run a callback when a starved pool refills
 * @pool: the pool
 * @notify: called when a descriptor comes back to (or is added to) a pool
 *	that a get or mrkit_pool_wait() found empty, once per such
 *	starvation; NULL disables it
 * @ctx: its argument
 *
 * @notify runs in the context of the put (possibly a CQ callback or hard
 * irq), so it must not sleep; ULPs typically restart a queue from it.
 *
 * Context: any; not concurrently with itself for one pool.
 */
void mrkit_pool_set_notify(struct mrkit_pool *pool,
			   void (*notify)(struct mrkit_pool *pool, void *ctx),
			   void *ctx)
{
	WRITE_ONCE(pool->notify_ctx, ctx);
	/*
	 * The context must be visible before the callback that uses it:
	 * pairs with the acquire in mrkit_pool_wake().
	 */
	smp_store_release(&pool->notify, notify);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_set_notify, MRKIT);

/**
 * mrkit_pool_set_parked - run a callback when descriptors wait for a drain
 * @pool: the pool
 * @parked: called when a post failed part-way (or an I/O was released with
 *	a key live on an undrained QP) and descriptors were parked: they,
 *	and the done() of the I/Os fenced on them, wait until the ULP drains
 *	the QP and calls mrkit_pool_qp_drained(), which nothing else will
 *	prompt.  Once per parking: again only after mrkit_pool_qp_drained()
 *	released the parked ones, and not at all when that call came before
 *	the work item ran.  NULL disables it.
 * @ctx: its argument
 *
 * ULPs start their connection recovery from @parked, as they would after
 * a failed ib_post_send() of their own.  It runs from the pool's work item
 * (process context, may sleep) and must not call mrkit_pool_destroy() or
 * wait for anything that does; it does not run once mrkit_pool_destroy()
 * has begun.
 *
 * Context: any; not concurrently with itself for one pool.
 */
void mrkit_pool_set_parked(struct mrkit_pool *pool,
			   void (*parked)(struct mrkit_pool *pool, void *ctx),
			   void *ctx)
{
	WRITE_ONCE(pool->parked_ctx, ctx);
	/*
	 * The context must be visible before the callback that uses it:
	 * pairs with the acquire in mrkit_pool_work().
	 */
	smp_store_release(&pool->parked, parked);
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_set_parked, MRKIT);

/**
 * mrkit_pool_get_stats - snapshot a pool's counters
 * @pool: the pool
 * @st: filled in
 *
 * Context: any.  The fields are read without a lock (the event counts are
 * summed over the CPUs and the descriptors); each is exact when the pool
 * is quiescent.
 */
void mrkit_pool_get_stats(struct mrkit_pool *pool, struct mrkit_pool_stats *st)
{
	u32 i, n;
	int cpu;

	memset(st, 0, sizeof(*st));
	/* Pairs with smp_store_release() in mrkit_pool_add(). */
	n = smp_load_acquire(&pool->nr_alloc);
	for (i = 0; i < n; i++) {
		const struct mrkit_mr *mr = READ_ONCE(pool->descs[i]);

		if (!mr)
			continue;
		st->local_inv += READ_ONCE(mr->ev[MRKIT_EV_LOCAL_INV]);
		st->remote_inv += READ_ONCE(mr->ev[MRKIT_EV_REMOTE_INV]);
	}
	for_each_possible_cpu(cpu) {
		const struct mrkit_pool_events *ev = per_cpu_ptr(pool->events, cpu);

		st->exhausted += READ_ONCE(ev->n[MRKIT_EV_EXHAUSTED]);
		/* Counted in the descriptors: here, their bytes' wraps. */
		st->remote_inv += READ_ONCE(ev->n[MRKIT_EV_REMOTE_INV]) << 8;
		st->local_inv += READ_ONCE(ev->n[MRKIT_EV_LOCAL_INV]) << 8;
		st->bogus_inv += READ_ONCE(ev->n[MRKIT_EV_BOGUS_INV]);
		st->sig_checks += READ_ONCE(ev->n[MRKIT_EV_SIG_CHECKS]);
		st->sig_errors += READ_ONCE(ev->n[MRKIT_EV_SIG_ERRORS]);
		st->sig_forced += READ_ONCE(ev->n[MRKIT_EV_SIG_FORCED]);
		st->lazy_released += READ_ONCE(ev->n[MRKIT_EV_LAZY_RELEASED]);
	}
	st->allocated = READ_ONCE(pool->nr_alloc);
	st->in_use = mrkit_pool_in_use(pool);
	st->high_water = READ_ONCE(pool->high_water);
	st->grown = READ_ONCE(pool->grown);
	st->stale = atomic_read(&pool->nr_stale);
	st->stale_replaced = READ_ONCE(pool->stale_replaced);
	st->depth = pool->depth;
	st->max_depth = pool->max_depth;
	st->pages_per_mr = pool->pages_per_mr;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_get_stats, MRKIT);

/**
 * mrkit_pool_name - the name a pool was created with
 * @pool: the pool
 *
 * Context: any.
 * Return: the pool's name, valid as long as the pool.
 */
const char *mrkit_pool_name(const struct mrkit_pool *pool)
{
	return pool->name;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pool_name, MRKIT);
