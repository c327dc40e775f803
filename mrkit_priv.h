/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrkit internals shared by mrpool/, frwr/, sigmr/ and the KUnit suites.
 * Nothing here is ABI: ULPs use include/rdma/mrkit.h only.
 */
#ifndef _MRKIT_PRIV_H
#define _MRKIT_PRIV_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/fault-inject.h>
#include <linux/llist.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/mrkit.h>

/*
 * Fault sites: every allocation mrkit makes itself, its MR allocations
 * and its DMA mapping ask mrkit_fault() first.  Other verbs calls are
 * failed by the KUnit fake device.  Keep mrkit_fault_site_names[] in
 * step: the fault-matrix suite enumerates it.
 */
enum mrkit_fault_site {
	MRKIT_FAULT_POOL_ALLOC,
	MRKIT_FAULT_DESCS_ALLOC,
	MRKIT_FAULT_DESC_ALLOC,
	MRKIT_FAULT_RKEY_INDEX,
	MRKIT_FAULT_DMA_MAP,
	MRKIT_FAULT_ALLOC_MR,
	MRKIT_FAULT_NR_SITES
};

#if IS_ENABLED(CONFIG_MRKIT_KUNIT_TEST)
/*
 * Locked read-modify-write operations mrkit performed (make bench's
 * ATOMICS lines); every atomic RMW on mrkit's error-free I/O path is
 * annotated with mrkit_rmw(), counted only in builds with
 * CONFIG_MRKIT_COUNT_RMW (the sanitizer KUnit build), never in the build
 * the benchmark times.  A plain counter: the counting test reads it from
 * one thread on UML.
 */
extern unsigned long mrkit_rmw_ops;
extern atomic_t mrkit_live_objects;
#define mrkit_count_obj(delta)	atomic_add(delta, &mrkit_live_objects)
#else
#define mrkit_count_obj(delta)	((void)(delta))
#endif
#if IS_ENABLED(CONFIG_MRKIT_COUNT_RMW)
#define mrkit_rmw(n)		(mrkit_rmw_ops += (n))
#else
#define mrkit_rmw(n)		((void)(n))
#endif

/*
 * Fault injection on the kernel's framework (CONFIG_FAULT_INJECTION):
 * one fault_attr per site, under /sys/kernel/debug/mrkit/ with
 * CONFIG_FAULT_INJECTION_DEBUG_FS, as failslab's.  Without it, never.
 */
extern const char * const mrkit_fault_site_names[MRKIT_FAULT_NR_SITES];
#ifdef CONFIG_FAULT_INJECTION
extern struct fault_attr mrkit_fault_attrs[MRKIT_FAULT_NR_SITES];
static inline bool mrkit_fault(enum mrkit_fault_site site)
{
	return should_fail(&mrkit_fault_attrs[site], 1);
}
#else
static inline bool mrkit_fault(enum mrkit_fault_site site)
{
	return false;
}
#endif

/**
 * enum mrkit_mr_state - life of one descriptor
 * @MRKIT_MR_FREE: on the pool's free stack.
 * @MRKIT_MR_RESERVED: handed out by mrkit_mr_get(); no page list loaded,
 *	or its registration is known invalid again.
 * @MRKIT_MR_MAPPED: page list loaded; no REG_MR posted, no rkey exposed.
 * @MRKIT_MR_REGISTERED: REG_MR handed out for posting; the rkey may be
 *	valid at the device and known to a peer.
 * @MRKIT_MR_INVALIDATING: LOCAL_INV (or READ_WITH_INV) posted.
 * @MRKIT_MR_STALE: a WR on it was flushed or failed (its registration
 *	state is unknown), or a registration that may be live will never be
 *	invalidated: it is never reused.
 * @MRKIT_MR_RETIRING: a stale descriptor given back; its MR is being
 *	deregistered and replaced.
 * @MRKIT_MR_CACHED: kept by an idle I/O for its next map
 *	(%MRKIT_POOL_IO_CACHE): in use for the pool's counts, taken back by
 *	mrkit_pool_destroy().
 * @MRKIT_MR_NR_STATES: number of states.
 */
enum mrkit_mr_state {
	MRKIT_MR_FREE,
	MRKIT_MR_RESERVED,
	MRKIT_MR_MAPPED,
	MRKIT_MR_REGISTERED,
	MRKIT_MR_INVALIDATING,
	MRKIT_MR_STALE,
	MRKIT_MR_RETIRING,
	MRKIT_MR_CACHED,
	MRKIT_MR_NR_STATES
};

/**
 * struct mrkit_mr - one FRWR descriptor
 * @ibmr: the provider MR; replaced (never reused) after a flush.
 * @pool: owning pool.
 * @state: &enum mrkit_mr_state; changed only by mrkit_mr_transition(),
 *	mrkit_mr_own(), mrkit_mr_mark_stale(), the start of an invalidation
 *	chain (frwr/chain.c) and the pool (get, put, keep, growth and
 *	replacement).
 * @idx: slot in &mrkit_pool.descs.
 * @next_free: free-stack link, meaningful only while %MRKIT_MR_FREE.
 * @dev_valid: the device holds a valid registration under @inv_key (a
 *	REG_MR was handed to ib_post_send() and no invalidation has
 *	completed since).
 * @orphan: a WR on it was posted but its completion can no longer be
 *	awaited (a chain failed to post after it): parked until the QP is
 *	drained.
 * @old_inv: how the key under @inv_key is invalidated before the next
 *	registration (&enum mrkit_old_inv): by a LOCAL_INV chained ahead of
 *	the REG_MR being posted, or by one already posted
 *	(%MRKIT_POOL_POST_INV).
 * @pi_unchecked: an integrity registration was posted and its signature
 *	status has not been read yet.
 * @peer_visible: the registration under @inv_key grants the peer access
 *	(a READ chain's sink does only on iWARP).
 * @drained: the QP was reported drained (mrkit_pool_qp_drained()) since
 *	the last REG_MR on it was posted: no WR of its registration can
 *	complete any more.  Set by the pool, cleared by the next post.
 * @ev: the pool's per-I/O events on this descriptor (&enum
 *	mrkit_pool_event below %MRKIT_EV_MR_NR), modulo 256; see
 *	mrkit_mr_count().
 * @key: the key of the current registration, rotated at hand-out
 *	(a copy of the MR's rkey that stays readable when the MR is
 *	replaced).
 * @inv_key: the key registered at the device while @dev_valid.
 * @io: the I/O holding it, while it is handed out (frwr/'s; the pool
 *	never reads it).
 * @fence: while retired (%MRKIT_MR_RETIRING), the fence of an I/O whose
 *	done() waits for this MR's deregistration, or NULL; shares @io's
 *	word: a descriptor leaves its I/O before it is retired.
 * @io_next: next descriptor of the same I/O.
 * @retire_node: link on &mrkit_pool.retire_list or .orphan_list; shares
 *	@io_next's word: a descriptor is put back (leaving its I/O, @io_next
 *	cleared) before it can be retired.
 * @cqe: completion entry of its unsignaled REG_MR, LOCAL_INV and RDMA
 *	READ: each reports only a failure, after which the registration's
 *	state is unknown and the descriptor is retired, whichever WR it was.
 *	A chain's signaled last WR completes on the I/O's own cqe.  Every
 *	WR is built on the posting stack.
 *
 * One cache line, from its own slab cache (mrkit_mr_cache).
 */
struct mrkit_mr {
	struct ib_mr		*ibmr;
	struct mrkit_pool	*pool;
	atomic_t		state;
	u32			key;
	u32			inv_key;
	u16			idx;
	u16			next_free;
	bool			dev_valid;
	bool			orphan;
	u8			old_inv;
	bool			pi_unchecked;
	bool			peer_visible;
	u8			ev[2];
	bool			drained;
	union {
		struct mrkit_io		*io;
		struct mrkit_fence	*fence;
	};
	union {
		struct mrkit_mr		*io_next;
		struct llist_node	retire_node;
	};
	struct ib_cqe		cqe;
} ____cacheline_aligned_in_smp;

/**
 * enum mrkit_old_inv - the invalidation of a descriptor's previous key
 * @MRKIT_OLD_INV_NONE: none is needed, or none is under way.
 * @MRKIT_OLD_INV_CHAINED: the chain being posted invalidates it first.
 * @MRKIT_OLD_INV_POSTED: an unsignaled LOCAL_INV of it was posted
 *	(%MRKIT_POOL_POST_INV): it ran, or is queued ahead of whatever is
 *	posted next on the QP, so the next registration needs none of its
 *	own; a failure of it (mrkit_wc_mr()) sets %MRKIT_OLD_INV_NONE.
 * @MRKIT_OLD_INV_UNKNOWN: a WR of its last registration failed after the
 *	descriptor went back to the pool, its idle I/O kept it or a new I/O
 *	took it and had not posted it (a lazy or %MRKIT_POOL_POST_INV
 *	completion gives descriptors back with their WRs still queued):
 *	whether that REG_MR ran is not known, so neither a LOCAL_INV of its
 *	key nor a REG_MR over it is safe.  The next map retires it (its MR is
 *	replaced) and takes another (mrkit_io_take()); a post of the I/O that
 *	holds it is refused and it is retired (mrkit_chain_regs()).
 */
enum mrkit_old_inv {
	MRKIT_OLD_INV_NONE,
	MRKIT_OLD_INV_CHAINED,
	MRKIT_OLD_INV_POSTED,
	MRKIT_OLD_INV_UNKNOWN,
};

/*
 * Event counts of a pool, per CPU: incremented without a shared cache
 * line, summed by mrkit_pool_get_stats().  The events of every I/O, those
 * below MRKIT_EV_MR_NR, are counted in the descriptor instead (see
 * mrkit_mr_count()).
 */
enum mrkit_pool_event {
	MRKIT_EV_LOCAL_INV,
	MRKIT_EV_REMOTE_INV,
	MRKIT_EV_MR_NR,
	MRKIT_EV_BOGUS_INV = MRKIT_EV_MR_NR,
	MRKIT_EV_EXHAUSTED,
	MRKIT_EV_SIG_CHECKS,
	MRKIT_EV_SIG_ERRORS,
	MRKIT_EV_SIG_FORCED,
	MRKIT_EV_LAZY_RELEASED,
	MRKIT_EV_NR
};

struct mrkit_pool_events {
	u64	n[MRKIT_EV_NR];
};

#define mrkit_count(pool, ev)	this_cpu_inc((pool)->events->n[ev])

/**
 * struct mrkit_pool - per-connection descriptor pool
 * @head: free stack: top index (bits 0-15), free count (16-31) and an ABA
 *	tag (32-63), changed only by one 64-bit cmpxchg.
 * @descs: descriptor slots, @max_depth long; a slot is written before the
 *	descriptor is first pushed and never cleared while the pool lives.
 * @nr_alloc: slots filled so far (written under @grow_lock).
 * @low_free: the fewest free descriptors a get left since the pool last
 *	grew or replaced a descriptor; a get that goes lower updates
 *	@high_water (rarely: only new lows are recorded).
 * @high_water: largest in-use count seen.
 * @starved: a getter found the stack empty; the next put wakes waiters.
 * @dying: mrkit_pool_destroy() has begun: puts hand descriptors to it.
 * @nr_stale: descriptors in %MRKIT_MR_STALE or %MRKIT_MR_RETIRING.
 * @events: per-CPU event counts.
 * @iwarp: the device is iWARP (READ responses are placed like writes).
 * @pd: protection domain the MRs belong to.
 * @dev: its device.
 * @mr_type: type of every MR.
 * @pages_per_mr: page-list length of every MR.
 * @meta_pages: metadata page-list length (integrity pools).
 * @depth: descriptors allocated at creation.
 * @max_depth: growth ceiling.
 * @node: NUMA node of descriptor memory.
 * @flags: &enum mrkit_pool_flags.
 * @grown: descriptors added by growth.
 * @stale_replaced: stale descriptors whose MR was replaced.
 * @no_remote_inv: the peer did not negotiate SEND_WITH_INV
 *	(mrkit_pool_set_remote_inv(); frwr/ decides, the pool only stores it).
 * @rkeys: descriptors by MR index (rkey >> 8), filled when MRs are
 *	allocated so that lookups on the I/O path never allocate.
 * @retire_list: stale descriptors given back, awaiting replacement.
 * @orphan_list: descriptors parked until mrkit_pool_qp_drained().
 * @fence_done: fences whose last retired MR was deregistered, to fall
 *	once @grow_lock is dropped.
 * @returned: descriptors put back while mrkit_pool_destroy() runs.
 * @grow_lock: serializes growth, replacement and destroy.
 * @work: growth and replacement of retired descriptors.
 * @grow_pending: growth was asked for and has not run yet.
 * @waiters: mrkit_pool_wait() callers inside the call.
 * @wait: mrkit_pool_wait() sleepers.
 * @notify: optional callback run when a descriptor returns to a starved
 *	pool; @notify_ctx is its argument.
 * @notify_ctx: see @notify.
 * @parked: optional callback run from @work when descriptors were parked
 *	on an empty @orphan_list; @parked_ctx is its argument.
 * @parked_ctx: see @parked.
 * @parked_pending: @parked is to run on @work's next run.
 * @debugfs: the pool's debugfs directory.
 * @name: copy of &mrkit_pool_attr.name.
 */
struct mrkit_pool {
	/* Written by every get and put. */
	atomic64_t		head ____cacheline_aligned_in_smp;
	u32			low_free;
	u32			high_water;
	bool			starved;

	/* Read on the I/O path, written rarely. */
	struct mrkit_mr		**descs ____cacheline_aligned_in_smp;
	struct mrkit_pool_events __percpu *events;
	struct ib_device	*dev;
	u32			nr_alloc;
	u32			flags;
	enum ib_mr_type		mr_type;
	u32			pages_per_mr;
	bool			dying;
	bool			iwarp;
	bool			no_remote_inv;

	/* The rest: creation, growth, recovery and destroy. */
	atomic_t		nr_stale ____cacheline_aligned_in_smp;
	struct ib_pd		*pd;
	u32			meta_pages;
	u32			depth;
	u32			max_depth;
	int			node;
	u32			grown;
	u64			stale_replaced;
	struct xarray		rkeys;
	struct llist_head	retire_list;
	struct llist_head	orphan_list;
	struct llist_head	fence_done;
	struct llist_head	returned;
	struct mutex		grow_lock;	/* see the kernel-doc above */
	struct work_struct	work;
	bool			grow_pending;
	atomic_t		waiters;
	wait_queue_head_t	wait;
	void			(*notify)(struct mrkit_pool *pool, void *ctx);
	void			*notify_ctx;
	void			(*parked)(struct mrkit_pool *pool, void *ctx);
	void			*parked_ctx;
	bool			parked_pending;
	struct dentry		*debugfs;
	char			name[32];
};

/*
 * Count an event of @mr's I/O, by the descriptor's owner: a plain byte
 * store on the descriptor's own cache line, where this_cpu_inc() would
 * disable interrupts or preemption on most architectures.  For these
 * events the pool's per-CPU count counts the bytes' wraps, one per 256;
 * mrkit_pool_get_stats() adds 256 per wrap to what the descriptors hold.
 */
static __always_inline void mrkit_mr_count(struct mrkit_mr *mr,
					   enum mrkit_pool_event ev)
{
	u8 n;

	BUILD_BUG_ON(ARRAY_SIZE(mr->ev) < MRKIT_EV_MR_NR);
	n = mr->ev[ev] + 1;
	WRITE_ONCE(mr->ev[ev], n);
	if (unlikely(!n))
		this_cpu_inc(mr->pool->events->n[ev]);
}

/* Integrity pools allocate struct mrkit_sig_mr descriptors. */
static inline bool mrkit_pool_integrity(const struct mrkit_pool *pool)
{
	return pool->mr_type == IB_MR_TYPE_INTEGRITY;
}

/* One ratelimited line naming the device and the pool. */
#define mrkit_pool_err(pool, fmt, ...)					\
	do {								\
		const struct mrkit_pool *__mp = (pool);			\
									\
		ibdev_err_ratelimited(__mp->dev, "mrkit pool %s: " fmt,	\
				      __mp->name, ##__VA_ARGS__);	\
	} while (0)

extern struct workqueue_struct *mrkit_wq;

/*
 * Legal owner-driven transitions.  FREE <-> RESERVED and RETIRING are the
 * pool's own and not reachable from here; any owned state may go STALE.
 * A constant expression: at every call site with constant states the
 * check folds away, or into the error path.
 */
static __always_inline bool mrkit_mr_legal(enum mrkit_mr_state from,
					   enum mrkit_mr_state to)
{
	switch (from) {
	case MRKIT_MR_RESERVED:
		return to == MRKIT_MR_MAPPED || to == MRKIT_MR_STALE;
	case MRKIT_MR_MAPPED:
		return to == MRKIT_MR_RESERVED || to == MRKIT_MR_REGISTERED ||
		       to == MRKIT_MR_STALE;
	case MRKIT_MR_REGISTERED:
		return to == MRKIT_MR_MAPPED || to == MRKIT_MR_INVALIDATING ||
		       to == MRKIT_MR_RESERVED || to == MRKIT_MR_STALE;
	case MRKIT_MR_INVALIDATING:
		return to == MRKIT_MR_REGISTERED || to == MRKIT_MR_RESERVED ||
		       to == MRKIT_MR_STALE;
	default:
		return false;
	}
}

int mrkit_mr_refused(struct mrkit_mr *mr, enum mrkit_mr_state from,
		     enum mrkit_mr_state to, int cur);
void mrkit_mr_stale_done(struct mrkit_mr *mr);

/**
 * mrkit_mr_transition - move a descriptor between owner-driven states
 * @mr: the descriptor
 * @from: the state the caller believes it is in
 * @to: the new state
 *
 * A cmpxchg: for the changes a completion of a WR on the descriptor may
 * race (it can mark the descriptor STALE).  Refuses transitions the state
 * machine does not have, and transitions from a state the descriptor is
 * not in (a stale completion, a double invalidation); the descriptor is
 * left unchanged then.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an illegal or lost transition.
 */
static __always_inline int mrkit_mr_transition(struct mrkit_mr *mr,
					       enum mrkit_mr_state from,
					       enum mrkit_mr_state to)
{
	int cur = from;

	if (unlikely(!mrkit_mr_legal(from, to)))
		return mrkit_mr_refused(mr, from, to, atomic_read(&mr->state));
	mrkit_rmw(1);
	if (unlikely(!atomic_try_cmpxchg(&mr->state, &cur, to)))
		return mrkit_mr_refused(mr, from, to, cur);
	if (to == MRKIT_MR_STALE)
		mrkit_mr_stale_done(mr);
	return 0;
}

/**
 * mrkit_mr_own_read - mrkit_mr_own() on the state its caller read
 * @mr: the descriptor
 * @cur: @mr's state, as its owner read it just before; nothing can have
 *	changed it since (see mrkit_mr_own())
 * @from: the state it must be in
 * @to: the new state
 *
 * For an owner that has just read the state to decide on the change (a
 * hand-out, a settle): the check needs no second load, and where @cur is
 * known to be @from it costs nothing.
 *
 * Context: any; the caller owns @mr.
 * Return: 0, or -EINVAL if @cur is not @from or the change is illegal.
 */
static __always_inline int mrkit_mr_own_read(struct mrkit_mr *mr, int cur,
					     enum mrkit_mr_state from,
					     enum mrkit_mr_state to)
{
	if (unlikely(!mrkit_mr_legal(from, to) || cur != from))
		return mrkit_mr_refused(mr, from, to, cur);
	/*
	 * What the owner wrote before is visible with the state: pairs with
	 * the acquires of mrkit_pool_find_rkey() (a hand-out's key and owner).
	 */
	atomic_set_release(&mr->state, to);
	return 0;
}

/**
 * mrkit_mr_own - an owner's state change no completion can race
 * @mr: the descriptor
 * @from: the state it must be in
 * @to: the new state
 *
 * For the changes made while no WR on the descriptor can complete: map
 * and hand-out, before the descriptor's first WR of its current use is
 * posted, and the settle after a chain completed successfully (every WR
 * before it did too).  Only a completion of a WR on the descriptor can
 * mark it STALE behind its owner's back, and none is outstanding then,
 * so a load and a store do where mrkit_mr_transition() needs a locked
 * cmpxchg.  The store is a release: what the owner wrote before (the
 * rotated key and the owning I/O at hand-out) is visible to whoever reads
 * the new state with acquire (mrkit_pool_find_rkey()).
 *
 * Context: any; the caller owns @mr.
 * Return: 0, or -EINVAL if @mr is not in @from or the change is illegal.
 */
static __always_inline int mrkit_mr_own(struct mrkit_mr *mr,
					enum mrkit_mr_state from,
					enum mrkit_mr_state to)
{
	return mrkit_mr_own_read(mr, atomic_read(&mr->state), from, to);
}

void mrkit_mr_mark_stale(struct mrkit_mr *mr);
bool mrkit_mr_mark_stale_live(struct mrkit_mr *mr, int *found);
int mrkit_mr_keep(struct mrkit_mr *mr, bool may_race);
int mrkit_pool_destroy_timeout(struct mrkit_pool *pool, unsigned long timeout);
/* A visit to one descriptor (mrkit_pool_visit_held()). */
typedef void (*mrkit_mr_visit_t)(struct mrkit_mr *mr, void *ctx);
void mrkit_pool_visit_held(struct mrkit_pool *pool, mrkit_mr_visit_t fn,
			   void *ctx);

/**
 * mrkit_mr_unkeep - take a kept descriptor back for a new use
 * @mr: a descriptor its owner kept (%MRKIT_MR_CACHED)
 *
 * Context: any; the caller owns @mr.
 */
static inline void mrkit_mr_unkeep(struct mrkit_mr *mr)
{
	atomic_set(&mr->state, MRKIT_MR_RESERVED);
}

const char *mrkit_mr_state_name(enum mrkit_mr_state state);
int mrkit_mr_put_valid(struct mrkit_mr *mr);
int mrkit_mr_put_own(struct mrkit_mr *mr);
int mrkit_mr_enforce_pi_slow(struct mrkit_io *io, struct mrkit_mr *mr);
int mrkit_pi_to_sig_attrs(const struct mrkit_pi *pi, struct ib_sig_attrs *sa);
void mrkit_pi_decode(const struct mrkit_pi *pi, const struct ib_mr_status *st,
		     int check_ret, struct mrkit_pi_result *res);

/* Why a chunk ended where it did (frwr/map.c, mrkit_chunk()). */
enum mrkit_chunk_end {
	MRKIT_CHUNK_ALL,	/* the rest of the list fits */
	MRKIT_CHUNK_GAP,	/* a gap the MR type cannot express */
	MRKIT_CHUNK_FULL,	/* the page list (or entry list) is full */
	MRKIT_CHUNK_ZERO,	/* error: a zero-length entry */
	MRKIT_CHUNK_SHORT,	/* error: the list is shorter than said */
};

/* One descriptor's share of a list, as computed before mapping. */
struct mrkit_chunk {
	struct scatterlist	*sg;		/* first entry */
	struct scatterlist	*last;		/* last entry touched */
	unsigned int		off;		/* offset into the first */
	int			nents;		/* entries touched */
	unsigned int		last_len;	/* last entry's DMA length; 0: as is */
	u64			bytes;
	enum mrkit_chunk_end	end;
	int			end_index;	/* entry where it ended */
	struct scatterlist	*next_sg;	/* where the next chunk starts */
	unsigned int		next_off;
};

#if IS_ENABLED(CONFIG_KUNIT)
int mrkit_chunk(struct scatterlist *sg, unsigned int off, int left, u32 max,
		unsigned int shift, bool gaps_ok, int base_index,
		struct mrkit_chunk *c);
bool mrkit_list_whole(struct scatterlist *sg, int nents);
u32 mrkit_chunk_one(const struct scatterlist *sg, u32 max, unsigned int shift,
		    bool gaps_ok);
#endif

/* How an I/O finished, for mrkit_io_finish(). */
enum mrkit_fin {
	MRKIT_FIN_UNDRAINED,	/* a WR on it may still complete */
	MRKIT_FIN_DRAINED,	/* its chain completed */
	MRKIT_FIN_RETIRED,	/* ... successfully: every WR before it too */
};

/* frwr/io.c: the life of an I/O (its inline half: frwr/io.h). */
void mrkit_io_unwind(struct mrkit_io *io);
void mrkit_io_finish(struct mrkit_io *io, int status, enum mrkit_fin fin);
void mrkit_io_finish_ok(struct mrkit_io *io);

/* iWARP places RDMA READ responses as writes and has READ_WITH_INV. */
static inline bool mrkit_iwarp(const struct ib_device *dev)
{
	return rdma_node_get_transport(dev->node_type) == RDMA_TRANSPORT_IWARP;
}

/*
 * The seam between plain registration and sigmr/: only a descriptor an
 * integrity registration was posted on has pi_unchecked set, so plain
 * registrations never call into the signature code.
 */
static inline int mrkit_mr_enforce_pi(struct mrkit_io *io,
				      struct mrkit_mr *mr)
{
	if (likely(!mr->pi_unchecked))
		return 0;
	return mrkit_mr_enforce_pi_slow(io, mr);
}

void mrkit_debugfs_init(void);
void mrkit_debugfs_exit(void);
void mrkit_pool_debugfs_add(struct mrkit_pool *pool);
void mrkit_pool_debugfs_remove(struct mrkit_pool *pool);

/* &mrkit_io.state */
enum mrkit_io_state {
	MRKIT_IO_IDLE = 0,	/* what mrkit_io_init() writes */
	MRKIT_IO_MAPPED,	/* descriptors mapped, nothing handed out */
	MRKIT_IO_HANDED_OUT,	/* rkeys given to the ULP, not posted */
	MRKIT_IO_POSTED,	/* REG_MRs posted (some may have failed) */
	MRKIT_IO_READING,	/* REG_MR + RDMA READ chain in flight */
	MRKIT_IO_READ_INVALIDATING, /* that chain's sinks' LOCAL_INVs (IB) */
	MRKIT_IO_INVALIDATING,	/* the invalidation chain is posted */
	MRKIT_IO_FENCING,	/* finished; done() waits for deregistrations */
	MRKIT_IO_READ_FENCING,	/* the same, after a READ chain */
	MRKIT_IO_DONE,
};

/*
 * A READ chain is in flight, or the LOCAL_INVs that invalidate its sinks
 * after it (not on iWARP): the chain owns the I/O until done() and every
 * other call is refused with -EBUSY.
 */
static __always_inline bool mrkit_io_state_reading(u8 state)
{
	BUILD_BUG_ON(MRKIT_IO_READING + 1 != MRKIT_IO_READ_INVALIDATING);
	return (u8)(state - MRKIT_IO_READING) <= 1;
}

/*
 * The I/O's READ chain owns it until done(): in flight (above), or
 * finished and waiting for its fence.  Calls are refused with -EBUSY.
 */
static __always_inline bool mrkit_io_state_busy(u8 state)
{
	return mrkit_io_state_reading(state) || state == MRKIT_IO_READ_FENCING;
}

static inline enum mrkit_mr_state mrkit_mr_state(const struct mrkit_mr *mr)
{
	return atomic_read(&mr->state);
}

/*
 * Every object mrkit allocates itself, but a pool's per-CPU event counts,
 * goes through the three pairs below.
 */
static inline void *mrkit_zalloc(enum mrkit_fault_site site, size_t size,
				 int node)
{
	void *p;

	if (mrkit_fault(site))
		return NULL;
	p = kzalloc_node(size, GFP_KERNEL, node);
	if (p)
		mrkit_count_obj(1);
	return p;
}

static inline void mrkit_free(void *p)
{
	if (p)
		mrkit_count_obj(-1);
	kfree(p);
}

extern struct kmem_cache *mrkit_mr_cache;
extern struct kmem_cache *mrkit_sig_mr_cache;

/*
 * An integrity descriptor: the descriptor and the protection state of the
 * I/O it serves (the T10-PI parameters, and the status mrkit read when it
 * had to check the signature itself).  Only integrity pools allocate these
 * (mrkit_sig_mr_cache), so neither a plain descriptor nor struct mrkit_io
 * carries protection state; sigmr/ reaches it with mrkit_sig_mr().
 */
struct mrkit_sig_mr {
	struct mrkit_mr		mr;
	struct mrkit_pi		pi;
	struct mrkit_pi_result	result;
};

static inline struct mrkit_sig_mr *mrkit_sig_mr(struct mrkit_mr *mr)
{
	return container_of(mr, struct mrkit_sig_mr, mr);
}

static inline struct kmem_cache *mrkit_desc_cache(bool integrity)
{
	return integrity ? mrkit_sig_mr_cache : mrkit_mr_cache;
}

/*
 * Descriptors come from their own caches: one cache line each
 * (integrity ones larger), cache-aligned.
 */
static inline struct mrkit_mr *mrkit_mr_alloc(int node, bool integrity)
{
	struct mrkit_mr *mr;

	if (mrkit_fault(MRKIT_FAULT_DESC_ALLOC))
		return NULL;
	mr = kmem_cache_alloc_node(mrkit_desc_cache(integrity),
				   GFP_KERNEL | __GFP_ZERO, node);
	if (mr)
		mrkit_count_obj(1);
	return mr;
}

static inline void mrkit_mr_free(struct mrkit_mr *mr, bool integrity)
{
	if (!mr)
		return;
	mrkit_count_obj(-1);
	kmem_cache_free(mrkit_desc_cache(integrity), mr);
}

static inline void *mrkit_kvzalloc(enum mrkit_fault_site site, size_t size,
				   int node)
{
	void *p;

	if (mrkit_fault(site))
		return NULL;
	p = kvzalloc_node(size, GFP_KERNEL, node);
	if (p)
		mrkit_count_obj(1);
	return p;
}

static inline void mrkit_kvfree(void *p)
{
	if (p)
		mrkit_count_obj(-1);
	kvfree(p);
}

#endif /* _MRKIT_PRIV_H */
