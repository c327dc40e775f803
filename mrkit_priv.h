/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrkit internals shared by mrpool/, frwr/, sigmr/ and the KUnit suites.
 * Nothing here is ABI: ULPs use include/rdma/mrkit.h only.
 */
#ifndef _MRKIT_PRIV_H
#define _MRKIT_PRIV_H

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/mrkit.h>

/**
 * enum mrkit_mr_state - life of one descriptor
 * @MRKIT_MR_FREE: on the pool's free stack.
 * @MRKIT_MR_RESERVED: handed out by mrkit_mr_get(); no page list loaded,
 *	or its registration is known invalid again.
 * @MRKIT_MR_MAPPED: page list loaded; no REG_MR posted, no rkey exposed.
 * @MRKIT_MR_REGISTERED: REG_MR handed out for posting; the rkey may be
 *	valid at the device and known to a peer.
 * @MRKIT_MR_INVALIDATING: LOCAL_INV (or READ_WITH_INV) posted.
 * @MRKIT_MR_STALE: a REG_MR or LOCAL_INV on it was flushed or failed: its
 *	registration state is unknown, so it is never reused.
 * @MRKIT_MR_RETIRING: a stale descriptor given back; its MR is being
 *	deregistered and replaced.
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
	MRKIT_MR_NR_STATES
};

/**
 * struct mrkit_mr - one FRWR descriptor
 * @ibmr: the provider MR; replaced (never reused) after a flush.
 * @pool: owning pool.
 * @state: &enum mrkit_mr_state; changed only by mrkit_mr_transition(),
 *	mrkit_mr_own() and the pool's get/put.
 * @idx: slot in &mrkit_pool.descs.
 * @next_free: free-stack link, meaningful only while %MRKIT_MR_FREE.
 * @dev_valid: the device holds a valid registration under @inv_key (a
 *	REG_MR was posted and no invalidation has completed since).
 * @orphan: a WR on it was posted but its completion can no longer be
 *	awaited (a chain failed to post after it): parked until the QP is
 *	drained.
 * @chained_inv: the chain being posted invalidates its old key first.
 * @pi_unchecked: an integrity registration was posted and its signature
 *	status has not been read yet.
 * @inv_key: the key registered at the device while @dev_valid.
 * @io: the I/O holding it, while it is handed out; kept while the
 *	descriptor is retired (%MRKIT_MR_RETIRING) if that I/O's done() waits
 *	for its MR's deregistration (the rkey fence on error paths).
 * @io_next: next descriptor of the same I/O.
 * @retire_node: link on &mrkit_pool.retire_list or .orphan_list; shares
 *	@io_next's word: a descriptor is put back (leaving its I/O, @io_next
 *	cleared) before it can be retired.
 * @reg_cqe: completion entry of its REG_MR.
 * @inv_cqe: completion entry of its LOCAL_INV, or of its RDMA READ.
 * @inv: LOCAL_INV work request (a lazy one is chained before the next
 *	REG_MR); REG_MR and READ WRs are built on the posting stack.
 *
 * 104 bytes, from its own slab cache (mrkit_mr_cache).
 */
struct mrkit_mr {
	struct ib_mr		*ibmr;
	struct mrkit_pool	*pool;
	atomic_t		state;
	u16			idx;
	u16			next_free;
	bool			dev_valid;
	bool			orphan;
	bool			chained_inv;
	bool			pi_unchecked;
	u32			inv_key;
	struct mrkit_io		*io;
	union {
		struct mrkit_mr		*io_next;
		struct llist_node	retire_node;
	};
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_send_wr	inv;
};

/**
 * struct mrkit_pool - per-connection descriptor pool
 * @head: free stack: top index (bits 0-15), free count (16-31) and an ABA
 *	tag (32-63), changed only by one 64-bit cmpxchg.
 * @descs: descriptor slots, @max_depth long; a slot is written before the
 *	descriptor is first pushed and never cleared while the pool lives.
 * @nr_alloc: slots filled so far (written under @grow_lock).
 * @nr_stale: descriptors in %MRKIT_MR_STALE or %MRKIT_MR_RETIRING.
 * @starved: a getter found the stack empty; the next put wakes waiters.
 * @dead: mrkit_pool_destroy() ran with descriptors outstanding.
 * @high_water: largest in-use count seen.
 * @exhausted: count of failed gets.
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
 * @remote_inv: registrations the peer invalidated.
 * @local_inv: registrations invalidated by LOCAL_INV / READ_WITH_INV.
 * @bogus_inv: remote invalidations that matched nothing.
 * @sig_checks: signature statuses read.
 * @sig_errors: signature statuses reporting a PI error.
 * @sig_forced: statuses mrkit read because the ULP had not.
 * @no_remote_inv: the peer did not negotiate SEND_WITH_INV
 *	(mrkit_pool_set_remote_inv(); frwr/ decides, the pool only stores it).
 * @rkeys: descriptors by MR index (rkey >> 8), filled when MRs are
 *	allocated so that lookups on the I/O path never allocate.
 * @retire_list: stale descriptors given back, awaiting replacement.
 * @orphan_list: descriptors parked until mrkit_pool_qp_drained().
 * @fence_done: I/Os whose last retired MR was deregistered, their done()
 *	to run once @grow_lock is dropped.
 * @grow_lock: serializes growth, replacement and destroy.
 * @work: growth, replacement and dead-pool reaping.
 * @grow_pending: growth was asked for and has not run yet.
 * @outstanding: after destroy, descriptors not yet given back (written
 *	under @grow_lock by destroy and the reaper).
 * @dead_node: on the list of dead pools the module's reaper frees.
 * @wait: mrkit_pool_wait() sleepers.
 * @notify: optional callback run when a descriptor returns to a starved
 *	pool; @notify_ctx is its argument.
 * @notify_ctx: see @notify.
 * @debugfs: the pool's debugfs directory.
 * @name: copy of &mrkit_pool_attr.name.
 */
struct mrkit_pool {
	atomic64_t		head ____cacheline_aligned_in_smp;
	struct mrkit_mr		**descs;
	u32			nr_alloc;
	atomic_t		nr_stale;
	bool			starved;
	bool			dead;
	u32			high_water;
	atomic64_t		exhausted;

	struct ib_pd		*pd ____cacheline_aligned_in_smp;
	struct ib_device	*dev;
	enum ib_mr_type		mr_type;
	u32			pages_per_mr;
	u32			meta_pages;
	u32			depth;
	u32			max_depth;
	int			node;
	u32			flags;
	u32			grown;
	u64			stale_replaced;
	atomic64_t		remote_inv;
	atomic64_t		local_inv;
	atomic64_t		bogus_inv;
	atomic64_t		sig_checks;
	atomic64_t		sig_errors;
	atomic64_t		sig_forced;
	bool			no_remote_inv;
	struct xarray		rkeys;
	struct llist_head	retire_list;
	struct llist_head	orphan_list;
	struct llist_head	fence_done;
	struct mutex		grow_lock;	/* see the kernel-doc above */
	struct work_struct	work;
	bool			grow_pending;
	u32			outstanding;
	struct list_head	dead_node;
	wait_queue_head_t	wait;
	void			(*notify)(struct mrkit_pool *pool, void *ctx);
	void			*notify_ctx;
	struct dentry		*debugfs;
	char			name[32];
};

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

int mrkit_mr_transition(struct mrkit_mr *mr, enum mrkit_mr_state from,
			enum mrkit_mr_state to);
int mrkit_mr_own(struct mrkit_mr *mr, enum mrkit_mr_state from,
		 enum mrkit_mr_state to);
void mrkit_mr_mark_stale(struct mrkit_mr *mr);
const char *mrkit_mr_state_name(enum mrkit_mr_state state);
int mrkit_mr_put_valid(struct mrkit_mr *mr);
void mrkit_io_hand_out(struct mrkit_io *io);
void mrkit_io_put_all(struct mrkit_io *io, u8 state, bool retired);
int mrkit_mr_put_own(struct mrkit_mr *mr);
void mrkit_io_enforce_pi_all(struct mrkit_io *io);
void mrkit_io_notify(struct mrkit_io *io);
int mrkit_io_check_live(struct mrkit_io *io, const char *what);
int mrkit_mr_enforce_pi_slow(struct mrkit_io *io, struct mrkit_mr *mr);

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

enum dma_data_direction mrkit_io_dma_dir(const struct mrkit_io *io);

/* &mrkit_io.state */
enum mrkit_io_state {
	MRKIT_IO_IDLE,
	MRKIT_IO_MAPPED,	/* descriptors mapped, nothing handed out */
	MRKIT_IO_HANDED_OUT,	/* rkeys given to the ULP, not posted */
	MRKIT_IO_POSTED,	/* REG_MRs posted (some may have failed) */
	MRKIT_IO_READING,	/* REG_MR + RDMA READ chain in flight */
	MRKIT_IO_INVALIDATING,	/* the invalidation chain is posted */
	MRKIT_IO_FENCING,	/* finished; done() waits for deregistrations */
	MRKIT_IO_DONE,
};

static inline enum mrkit_mr_state mrkit_mr_state(const struct mrkit_mr *mr)
{
	return atomic_read(&mr->state);
}

/*
 * Fault injection: every allocation mrkit makes itself asks mrkit_fault()
 * first.  Only KUnit builds have a hook; elsewhere this is constant false.
 * Verbs calls are failed by the fake device instead.  Keep
 * mrkit_fault_site_names[] in step: the fault-matrix suite enumerates it.
 */
enum mrkit_fault_site {
	MRKIT_FAULT_POOL_ALLOC,
	MRKIT_FAULT_DESCS_ALLOC,
	MRKIT_FAULT_DESC_ALLOC,
	MRKIT_FAULT_RKEY_INDEX,
	MRKIT_FAULT_DMA_MAP,
	MRKIT_FAULT_NR_SITES
};

#if IS_ENABLED(CONFIG_MRKIT_KUNIT_TEST)
/*
 * Locked read-modify-write operations mrkit performed (make bench's
 * ATOMICS lines); every atomic RMW in mrkit is annotated with mrkit_rmw().
 * A plain counter: the benchmark reads it from one thread on UML.
 */
extern unsigned long mrkit_rmw_ops;
#define mrkit_rmw(n)	(mrkit_rmw_ops += (n))
extern const char * const mrkit_fault_site_names[MRKIT_FAULT_NR_SITES];
extern bool (*mrkit_fault_hook)(enum mrkit_fault_site site);
extern atomic_t mrkit_live_objects;
bool mrkit_fault(enum mrkit_fault_site site);
#define mrkit_count_obj(delta)	atomic_add(delta, &mrkit_live_objects)
#else
static inline bool mrkit_fault(enum mrkit_fault_site site)
{
	return false;
}

#define mrkit_count_obj(delta)	do { } while (0)
#define mrkit_rmw(n)		do { } while (0)
#endif

/* Every object mrkit allocates itself goes through these two pairs. */
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
 * Descriptors come from their own caches: 104-byte objects (integrity
 * ones larger), no rounding.
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
