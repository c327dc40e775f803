/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrkit - FRWR memory registration for RDMA upper-layer protocols
 *
 * The whole public API.  ULPs add MODULE_IMPORT_NS(MRKIT).
 */
#ifndef _RDMA_MRKIT_H
#define _RDMA_MRKIT_H

#include <linux/llist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/signature.h>

struct mrkit_pool;
struct mrkit_mr;

/* Hard upper bound on descriptors in one pool. */
#define MRKIT_MAX_DEPTH		32768
/* Pages per descriptor mrkit chooses at most when asked for "best". */
#define MRKIT_MAX_PAGES_PER_MR	256

/**
 * enum mrkit_pool_flags - pool creation flags
 * @MRKIT_POOL_SG_GAPS: the caller accepts %IB_MR_TYPE_SG_GAPS descriptors;
 *	used only when the device has %IBK_SG_GAPS_REG, else %IB_MR_TYPE_MEM_REG.
 * @MRKIT_POOL_INTEGRITY: %IB_MR_TYPE_INTEGRITY descriptors for T10-PI
 *	offload; requires %IBK_INTEGRITY_HANDOVER.
 * @MRKIT_POOL_LAZY_INV: turn the rkey fence off: mrkit_io_complete()
 *	leaves rkeys valid until the descriptor's next registration (the
 *	iSER / rdma_rw scheme).  Without it (the default) an I/O completes
 *	only once every rkey it exposed is invalid.
 * @MRKIT_POOL_IO_CACHE: an I/O whose chain completed successfully (or
 *	whose keys the peer invalidated) keeps its descriptors for its next
 *	map instead of giving them back (the xprtrdma per-request model):
 *	no pool round trip per I/O.  They count as in use;
 *	mrkit_io_release() on the idle I/O gives them back, and
 *	mrkit_pool_destroy() takes back those of idle I/Os.  A retired
 *	descriptor is never kept.
 * @MRKIT_POOL_POST_INV: with %MRKIT_POOL_LAZY_INV: mrkit_io_complete()
 *	first posts an unsignaled LOCAL_INV of each key the I/O exposed,
 *	then gives the descriptors back and runs done() at once (the ib_srp
 *	scheme).  The keys die in the send queue's order, before any WR
 *	posted after them on the QP, and a descriptor's next registration
 *	needs no LOCAL_INV of its own unless that one failed.  For pools
 *	whose I/Os post on one QP at a time, drained before the next one
 *	(see mrkit_pool_qp_drained()).
 */
enum mrkit_pool_flags {
	MRKIT_POOL_SG_GAPS	= 1 << 0,
	MRKIT_POOL_INTEGRITY	= 1 << 1,
	MRKIT_POOL_LAZY_INV	= 1 << 2,
	MRKIT_POOL_IO_CACHE	= 1 << 3,
	MRKIT_POOL_POST_INV	= 1 << 4,
};

/* Every pool flag this version knows; others are refused with -EINVAL. */
#define MRKIT_POOL_FLAGS_ALL	(MRKIT_POOL_SG_GAPS | MRKIT_POOL_INTEGRITY | \
				 MRKIT_POOL_LAZY_INV | MRKIT_POOL_IO_CACHE | \
				 MRKIT_POOL_POST_INV)

/**
 * struct mrkit_pool_attr - what a pool is created from
 * @name: names the pool in messages, traces and debugfs; copied.
 * @depth: descriptors allocated at creation (1..%MRKIT_MAX_DEPTH).
 * @max_depth: growth ceiling; 0 means @depth (no growth).
 * @pages_per_mr: pages one descriptor can map; 0 picks the best value for
 *	the device (see mrkit_query_limits()).
 * @meta_pages: with %MRKIT_POOL_INTEGRITY, metadata pages per descriptor;
 *	0 means @pages_per_mr.
 * @flags: &enum mrkit_pool_flags.
 * @node: NUMA node for descriptor memory; %NUMA_NO_NODE means the device's.
 */
struct mrkit_pool_attr {
	const char	*name;
	u32		depth;
	u32		max_depth;
	u32		pages_per_mr;
	u32		meta_pages;
	u32		flags;
	int		node;
};

/**
 * struct mrkit_pool_stats - a snapshot of a pool's counters
 * @allocated: descriptors the pool owns (free, in use and stale).
 * @in_use: descriptors handed out and not yet put back.
 * @high_water: the largest @in_use seen.
 * @exhausted: mrkit_mr_get() calls that found no free descriptor.
 * @grown: descriptors added by growth after creation.
 * @stale: descriptors retired (a work request on them flushed or failed,
 *	or a key that may be live was left to deregistration) and not yet
 *	replaced.
 * @stale_replaced: retired descriptors whose MR was deregistered and
 *	replaced by a fresh one.
 * @remote_inv: registrations invalidated by the peer (SEND_WITH_INV).
 * @local_inv: registrations invalidated by LOCAL_INV or READ_WITH_INV.
 * @bogus_inv: remote invalidations that matched nothing of their I/O.
 * @sig_checks: signature statuses checked.
 * @sig_errors: signature statuses that reported a PI error.
 * @sig_forced: statuses mrkit had to check itself because the ULP put or
 *	invalidated a protected registration without checking it.
 * @lazy_released: registrations given back with their keys left valid by
 *	mrkit_io_release() with %MRKIT_RELEASE_LAZY (or for the ULP by
 *	mrkit_pool_release_held()); the descriptor's next registration
 *	invalidates first.
 * @depth: @allocated at creation.
 * @max_depth: the growth ceiling.
 * @pages_per_mr: pages one descriptor maps.
 */
struct mrkit_pool_stats {
	u32	allocated;
	u32	in_use;
	u32	high_water;
	u64	exhausted;
	u32	grown;
	u32	stale;
	u64	stale_replaced;
	u64	remote_inv;
	u64	local_inv;
	u64	bogus_inv;
	u64	sig_checks;
	u64	sig_errors;
	u64	sig_forced;
	u64	lazy_released;
	u32	depth;
	u32	max_depth;
	u32	pages_per_mr;
};

/**
 * struct mrkit_io_shape - the largest I/O a ULP will register
 * @max_io_bytes: bytes in the largest I/O.
 * @max_gaps: interior discontiguities one I/O may have (0 when the ULP sets
 *	a virt_boundary so that only the head and tail are unaligned).
 * @extra_wrs: the ULP's own send WRs per I/O (SEND, RDMA READ/WRITE).
 * @pages_per_mr: as &mrkit_pool_attr.pages_per_mr.
 * @flags: as &mrkit_pool_attr.flags; include %MRKIT_POOL_LAZY_INV also
 *	when a fenced pool's I/Os are ever released with %MRKIT_RELEASE_LAZY
 *	(a lazily kept key costs a LOCAL_INV at the next registration).
 * @map_flags: the &enum mrkit_map_flags the ULP maps with (%MRKIT_MAP_4K
 *	changes the page count).
 */
struct mrkit_io_shape {
	u32	max_io_bytes;
	u32	max_gaps;
	u32	extra_wrs;
	u32	pages_per_mr;
	u32	flags;
	u32	map_flags;
};

/**
 * struct mrkit_limits - sizing for one device and I/O shape
 * @mr_type: the &enum ib_mr_type the pool will allocate.
 * @pages_per_mr: pages one descriptor maps.
 * @mrs_per_io: descriptors the largest I/O needs at worst.
 * @wrs_per_io: send-queue slots the largest I/O occupies at worst at any
 *	one time: per descriptor one REG_MR and one LOCAL_INV (or RDMA READ),
 *	plus the LOCAL_INV of a lazily kept key in lazy pools, plus
 *	&mrkit_io_shape.extra_wrs.  The LOCAL_INV chain mrkit posts from a
 *	READ chain's completion reuses the READs' slots (the signaled last
 *	READ completed, so every earlier WR of the I/O did).  A send queue of
 *	(I/Os in flight) x @wrs_per_io never overflows.
 * @max_pages_per_mr: the most pages one descriptor of this device can
 *	map (its fast-registration page-list limit, of integrity MRs with
 *	%MRKIT_POOL_INTEGRITY), whatever @pages_per_mr was chosen: for ULPs
 *	that must fit an I/O in one MR and ask for min(their need, this).
 */
struct mrkit_limits {
	enum ib_mr_type	mr_type;
	u32		pages_per_mr;
	u32		mrs_per_io;
	u32		wrs_per_io;
	u32		max_pages_per_mr;
};

int mrkit_query_limits(struct ib_device *dev, const struct mrkit_io_shape *shape,
		       struct mrkit_limits *lim);

struct mrkit_pool *mrkit_pool_create(struct ib_pd *pd,
				     const struct mrkit_pool_attr *attr);
void mrkit_pool_destroy(struct mrkit_pool *pool);
void mrkit_pool_get_stats(struct mrkit_pool *pool, struct mrkit_pool_stats *st);
const char *mrkit_pool_name(const struct mrkit_pool *pool);

struct mrkit_mr *mrkit_mr_get(struct mrkit_pool *pool);
int mrkit_mr_put(struct mrkit_mr *mr);
int mrkit_pool_wait(struct mrkit_pool *pool, unsigned long timeout);
void mrkit_pool_set_notify(struct mrkit_pool *pool,
			   void (*notify)(struct mrkit_pool *pool, void *ctx),
			   void *ctx);
void mrkit_pool_set_parked(struct mrkit_pool *pool,
			   void (*parked)(struct mrkit_pool *pool, void *ctx),
			   void *ctx);

/**
 * enum mrkit_dir - who accesses a registration, and how
 * @MRKIT_PEER_WRITES: the peer RDMA-WRITEs into the buffer (e.g. the data
 *	of a read command): LOCAL_WRITE | REMOTE_WRITE, DMA_FROM_DEVICE.
 * @MRKIT_PEER_READS: the peer RDMA-READs the buffer: REMOTE_READ,
 *	DMA_TO_DEVICE.
 * @MRKIT_PEER_BIDI: both: LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ.
 * @MRKIT_LOCAL_SINK: no peer access; the sink of our own RDMA READ (a
 *	target pulling write data): LOCAL_WRITE, plus REMOTE_WRITE on iWARP,
 *	where the READ response is placed by the peer's "write".
 */
enum mrkit_dir {
	MRKIT_PEER_WRITES = 1,
	MRKIT_PEER_READS,
	MRKIT_PEER_BIDI,
	MRKIT_LOCAL_SINK,
};

/**
 * enum mrkit_map_flags - options of mrkit_io_map()
 * @MRKIT_MAP_DMA: mrkit DMA-maps the list (and unmaps it right before
 *	done(), or when the I/O is released); without it the list is
 *	already DMA-mapped by the caller and @nents is the DMA-mapped entry
 *	count.
 * @MRKIT_MAP_NO_SPLIT: the list must fit one descriptor; -EINVAL if not.
 * @MRKIT_MAP_4K: 4 KiB pages instead of PAGE_SIZE.
 * @MRKIT_MAP_IOVA_ZERO: zero-based iova (each segment starts at 0).
 * @MRKIT_MAP_IOVA_TAG: the low 32 bits of the DMA address with the I/O's
 *	tag (mrkit_io_set_tag()) in the high 32 bits.
 */
enum mrkit_map_flags {
	MRKIT_MAP_DMA		= 1 << 0,
	MRKIT_MAP_NO_SPLIT	= 1 << 1,
	MRKIT_MAP_4K		= 1 << 2,
	MRKIT_MAP_IOVA_ZERO	= 1 << 3,
	MRKIT_MAP_IOVA_TAG	= 1 << 4,
};

/* Every map flag this version knows; others are refused with -EINVAL. */
#define MRKIT_MAP_FLAGS_ALL	(MRKIT_MAP_DMA | MRKIT_MAP_NO_SPLIT | \
				 MRKIT_MAP_4K | MRKIT_MAP_IOVA_ZERO | \
				 MRKIT_MAP_IOVA_TAG)

/**
 * struct mrkit_seg - one registered segment, as advertised to the peer
 * @addr: the iova the peer addresses
 * @length: bytes
 * @key: the rkey
 * @lkey: the local key, for the ULP's own SGEs over the registered
 *	buffer (iSER's immediate data and unsolicited Data-Out)
 */
struct mrkit_seg {
	u64	addr;
	u32	length;
	u32	key;
	u32	lkey;
};

/* ---- signature (T10-PI) registrations ---- */

/**
 * enum mrkit_pi_op - what the HCA does with protection information
 * @MRKIT_PI_INSERT: generate PI on the protected side (the wire when data
 *	goes to the wire, memory when it comes from it).
 * @MRKIT_PI_STRIP: verify and remove PI coming from the protected side.
 * @MRKIT_PI_PASS: PI on both sides; verify and pass it through.
 */
enum mrkit_pi_op {
	MRKIT_PI_INSERT = 1,
	MRKIT_PI_STRIP,
	MRKIT_PI_PASS,
};

/**
 * enum mrkit_pi_flags - protection details
 * @MRKIT_PI_TO_WIRE: data goes from memory to the wire (a write at the
 *	initiator); else it comes from the wire into memory.
 * @MRKIT_PI_MEM_IPCSUM: the memory domain's guard is the IP checksum
 *	(SCSI DIX); the wire always uses the T10-DIF CRC.
 * @MRKIT_PI_REF_INCREMENT: the reference tag increments per interval
 *	(Type 1 and 2).
 * @MRKIT_PI_APP_ESCAPE: an application tag of 0xffff disables checking
 *	of that interval.
 * @MRKIT_PI_REF_ESCAPE: with 0xffff, a reference tag of 0xffffffff
 *	disables checking too (Type 3).
 * @MRKIT_PI_CHECK_GUARD: verify guard tags.
 * @MRKIT_PI_CHECK_REF: verify reference tags.
 * @MRKIT_PI_CHECK_APP: verify application tags under @app_tag_mask.
 */
enum mrkit_pi_flags {
	MRKIT_PI_TO_WIRE	= 1 << 0,
	MRKIT_PI_MEM_IPCSUM	= 1 << 1,
	MRKIT_PI_REF_INCREMENT	= 1 << 2,
	MRKIT_PI_APP_ESCAPE	= 1 << 3,
	MRKIT_PI_REF_ESCAPE	= 1 << 4,
	MRKIT_PI_CHECK_GUARD	= 1 << 5,
	MRKIT_PI_CHECK_REF	= 1 << 6,
	MRKIT_PI_CHECK_APP	= 1 << 7,
};

/**
 * struct mrkit_pi - a protection description, free of SCSI and NVMe
 * @op: &enum mrkit_pi_op
 * @flags: &enum mrkit_pi_flags
 * @interval: bytes of data per 8-byte PI tuple (a power of two from 512
 *	to 4096)
 * @ref_tag: reference tag of the first interval
 * @app_tag: application tag
 * @app_tag_mask: bits of @app_tag that are checked
 * @lba: first logical block, for reporting the failing sector
 */
struct mrkit_pi {
	u8	op;
	u16	flags;
	u32	interval;
	u32	ref_tag;
	u16	app_tag;
	u16	app_tag_mask;
	u64	lba;
};

/**
 * enum mrkit_pi_err_type - which tag failed
 * @MRKIT_PI_OK: none
 * @MRKIT_PI_BAD_GUARD: the guard tag
 * @MRKIT_PI_BAD_APP: the application tag
 * @MRKIT_PI_BAD_REF: the reference tag
 * @MRKIT_PI_UNKNOWN: the status could not be read
 */
enum mrkit_pi_err_type {
	MRKIT_PI_OK,
	MRKIT_PI_BAD_GUARD,
	MRKIT_PI_BAD_APP,
	MRKIT_PI_BAD_REF,
	MRKIT_PI_UNKNOWN,
};

/**
 * struct mrkit_pi_result - a decoded signature status
 * @type: &enum mrkit_pi_err_type
 * @expected: the tag value expected
 * @actual: the tag value found
 * @offset: byte offset of the error in the protected stream
 * @sector: the failing logical block: lba + offset / (interval + 8)
 * @scsi_asc: SCSI sense ASC (0x10), 0 when no error
 * @scsi_ascq: 0x01 guard, 0x02 application tag, 0x03 reference tag
 * @nvme_status: NVME_SC_GUARD_CHECK (0x282), _APPTAG_CHECK (0x283),
 *	_REFTAG_CHECK (0x284), or NVME_SC_INVALID_PI (0x181) if unknown
 */
struct mrkit_pi_result {
	u8	type;
	u32	expected;
	u32	actual;
	u64	offset;
	u64	sector;
	u8	scsi_asc;
	u8	scsi_ascq;
	u16	nvme_status;
};

/**
 * enum mrkit_release_flags - options of mrkit_io_release()
 * @MRKIT_RELEASE_LAZY: leave live rkeys valid; each descriptor's next
 *	registration invalidates its old key first (the iSER / rdma_rw
 *	scheme).  Only for protocols where the peer can no longer use them.
 */
enum mrkit_release_flags {
	MRKIT_RELEASE_LAZY	= 1 << 0,
};

#define MRKIT_RELEASE_FLAGS_ALL	MRKIT_RELEASE_LAZY

struct mrkit_io;

/**
 * struct mrkit_fence - an I/O waiting for its retired registrations to die
 *
 * Embedded in &struct mrkit_io; private to mrkit.  The descriptors an I/O
 * finished with in an unknown registration state are retired pointing at
 * it; the pool counts down @pending as their MRs are deregistered and runs
 * @fallen once the last one is gone, in process context with no lock held.
 */
struct mrkit_fence {
	/* private: */
	struct llist_node	node;
	unsigned int		pending;
	void			(*fallen)(struct mrkit_fence *fence);
};

/**
 * typedef mrkit_io_done_t - an I/O is finished
 * @io: the I/O
 * @status: 0; -EILSEQ when mrkit found a PI error; or a negative errno
 *	when a post or an invalidation failed (the descriptors involved are
 *	retired, never reused)
 *
 * Runs exactly once per posted I/O that is not released with
 * mrkit_io_release().  In a fenced pool it runs only when no peer can use
 * any rkey the I/O exposed: each was invalidated by a completed LOCAL_INV
 * or RDMA_READ_WITH_INV or by the peer, or its MR was deregistered.  In a
 * %MRKIT_POOL_LAZY_INV pool the keys stay valid until each descriptor's
 * next registration (unless the I/O's post failed).  Normally from CQ
 * completion context (or the caller's, when nothing had to be posted);
 * after an error from the pool's work item in process context, once the
 * retired MRs are deregistered - for descriptors parked by a failed post,
 * only after mrkit_pool_qp_drained().  It must not call
 * mrkit_pool_destroy().  The memory the I/O registered may be reused now.
 */
typedef void (*mrkit_io_done_t)(struct mrkit_io *io, int status);

/**
 * struct mrkit_io - the registrations of one I/O
 *
 * Embedded in the ULP's request; set up by mrkit_io_init().  All fields
 * are mrkit's; a ULP reads them only through the accessors.
 *
 * One caller at a time: the ULP serializes its calls on an I/O (mrkit
 * keeps no lock and no atomic on the I/O's own state).  Where two contexts
 * may both finish one I/O - a request's release and a connection's
 * teardown - the ULP decides which one does and makes the other wait until
 * the I/O is finished.  While an RDMA READ chain is in flight
 * (mrkit_io_post_read()) the chain's completion owns the I/O: every call
 * returns -EBUSY and changes nothing until done() has run.
 */
struct mrkit_io {
	/* private: */
	struct mrkit_pool	*pool;
	struct mrkit_mr		*mrs;
	struct mrkit_mr		*cache;		/* kept for the next map */
	struct ib_qp		*qp;
	struct ib_cqe		cqe;		/* its chains' signaled last WR */
	struct mrkit_fence	fence;
	struct scatterlist	*sgl;
	int			sg_nents;
	u16			nr_mrs;
	u8			dir;
	u8			state;
	bool			remote_inv_done;
	bool			post_failed;	/* a REG_MR may still be queued */
	u8			dma_dir;	/* enum dma_data_direction */
	u32			tag;
	int			access;
	u32			nr_wrs;
	int			status;
	mrkit_io_done_t		done;
	struct completion	*waiter;
};

/*
 * The access flags @dir grants, for mrkit_io_init(): 0 for
 * %MRKIT_LOCAL_SINK, whose flags depend on the device (taken at the first
 * map), -EINVAL for no direction (refused by the first map).
 */
static inline int __mrkit_dir_access(enum mrkit_dir dir)
{
	switch (dir) {
	case MRKIT_PEER_WRITES:
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	case MRKIT_PEER_READS:
		return IB_ACCESS_REMOTE_READ;
	case MRKIT_PEER_BIDI:
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ;
	case MRKIT_LOCAL_SINK:
		return 0;
	default:
		return -EINVAL;
	}
}

/* The DMA direction of @dir's data, for mrkit_io_init(). */
static inline enum dma_data_direction __mrkit_dma_dir(enum mrkit_dir dir)
{
	switch (dir) {
	case MRKIT_PEER_READS:
		return DMA_TO_DEVICE;
	case MRKIT_PEER_BIDI:
		return DMA_BIDIRECTIONAL;
	default:
		return DMA_FROM_DEVICE;
	}
}

/**
 * mrkit_io_init - prepare an I/O object
 * @io: the I/O, usually embedded in the ULP's request
 * @pool: the pool its descriptors come from
 * @dir: who accesses the registered memory (&enum mrkit_dir)
 * @done: called once the I/O is finished (&mrkit_io_done_t); may be NULL
 *	when only the sync variant is used
 *
 * Inline: ULPs initialize an I/O per request, with a constant @dir, whose
 * access flags and DMA direction are then taken at compile time (the
 * access of %MRKIT_LOCAL_SINK, which depends on the device, at the first
 * map, which also refuses an invalid @dir).  An I/O of a
 * %MRKIT_POOL_IO_CACHE pool that kept descriptors is released first
 * (mrkit_io_release()).
 *
 * Context: any.
 */
static inline void mrkit_io_init(struct mrkit_io *io, struct mrkit_pool *pool,
				 enum mrkit_dir dir, mrkit_io_done_t done)
{
	/*
	 * Field by field, not a memset: of the fields only the chain's cqe
	 * and fence are left, which mrkit writes before it reads them.
	 */
	io->pool = pool;
	io->mrs = NULL;
	io->cache = NULL;
	io->qp = NULL;
	io->sgl = NULL;
	io->sg_nents = 0;
	io->nr_mrs = 0;
	io->dir = dir;
	io->state = 0;		/* idle */
	io->remote_inv_done = false;
	io->post_failed = false;
	io->dma_dir = __mrkit_dma_dir(dir);
	io->tag = 0;
	io->access = __mrkit_dir_access(dir);
	io->nr_wrs = 0;
	io->status = 0;
	io->done = done;
	io->waiter = NULL;
}

int mrkit_io_set_access(struct mrkit_io *io, int access);
int mrkit_io_set_tag(struct mrkit_io *io, u32 tag);
int mrkit_io_map(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		 u32 flags);
int mrkit_io_segs(struct mrkit_io *io, struct mrkit_seg *segs,
		  unsigned int max);
int mrkit_io_map_seg(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		     u32 flags, struct mrkit_seg *seg);
int mrkit_io_post(struct mrkit_io *io, struct ib_qp *qp,
		  struct ib_send_wr *wr, const struct ib_send_wr **bad_wr);
int mrkit_io_post_read(struct mrkit_io *io, struct ib_qp *qp, u64 raddr,
		       u32 rkey);
int mrkit_io_invalidate(struct mrkit_io *io, struct ib_qp *qp);
int mrkit_io_invalidate_sync(struct mrkit_io *io, struct ib_qp *qp);
int mrkit_io_release(struct mrkit_io *io, u32 flags);
int mrkit_io_complete(struct mrkit_io *io, struct ib_qp *qp);
int mrkit_io_remote_inv(struct mrkit_io *io, u32 rkey);
struct mrkit_io *mrkit_pool_find_rkey(struct mrkit_pool *pool, u32 rkey);
bool mrkit_remote_inv_supported(const struct ib_device *dev);
void mrkit_pool_set_remote_inv(struct mrkit_pool *pool, bool negotiated);
void mrkit_pool_qp_drained(struct mrkit_pool *pool);
unsigned int mrkit_pool_release_held(struct mrkit_pool *pool);

/**
 * mrkit_io_nr_mrs - descriptors an I/O holds
 * @io: the I/O
 *
 * Return: the number of registrations (segments) of @io.
 */
static inline unsigned int mrkit_io_nr_mrs(const struct mrkit_io *io)
{
	return io->nr_mrs;
}

/**
 * mrkit_io_nr_wrs - send WRs mrkit put in the last chain of an I/O
 * @io: the I/O
 *
 * For send-queue credit accounting: valid after mrkit_io_post(),
 * mrkit_io_post_read() or mrkit_io_invalidate().
 *
 * Return: the number of mrkit's WRs (LOCAL_INV, REG_MR, RDMA READ); the
 * caller's own WRs behind them are not counted.
 */
static inline unsigned int mrkit_io_nr_wrs(const struct mrkit_io *io)
{
	return io->nr_wrs;
}

int mrkit_pi_from_scsi(struct mrkit_pi *pi, unsigned char prot_op,
		       unsigned int prot_flags, unsigned int interval,
		       u32 ref_tag, u64 lba);
int mrkit_pi_from_nvme(struct mrkit_pi *pi, bool write, u16 control,
		       u8 pi_type, u32 lba_size, u32 ref_tag, u16 app_tag,
		       u16 app_mask, u64 lba);
int mrkit_io_map_pi(struct mrkit_io *io, struct scatterlist *data,
		    int data_nents, struct scatterlist *prot, int prot_nents,
		    const struct mrkit_pi *pi);
int mrkit_io_check_pi(struct mrkit_io *io, struct mrkit_pi_result *res);

#endif /* _RDMA_MRKIT_H */
