/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrkit - FRWR memory registration for RDMA upper-layer protocols
 *
 * The whole public API.  ULPs add MODULE_IMPORT_NS(MRKIT).
 */
#ifndef _RDMA_MRKIT_H
#define _RDMA_MRKIT_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

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
 */
enum mrkit_pool_flags {
	MRKIT_POOL_SG_GAPS	= 1 << 0,
	MRKIT_POOL_INTEGRITY	= 1 << 1,
};

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
 * @stale: descriptors retired after a flushed or failed REG/LOCAL_INV,
 *	and not yet replaced.
 * @stale_replaced: retired descriptors whose MR was deregistered and
 *	replaced by a fresh one.
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
 * @flags: as &mrkit_pool_attr.flags.
 */
struct mrkit_io_shape {
	u32	max_io_bytes;
	u32	max_gaps;
	u32	extra_wrs;
	u32	pages_per_mr;
	u32	flags;
};

/**
 * struct mrkit_limits - sizing for one device and I/O shape
 * @mr_type: the &enum ib_mr_type the pool will allocate.
 * @pages_per_mr: pages one descriptor maps.
 * @mrs_per_io: descriptors the largest I/O needs at worst.
 * @wrs_per_io: send-queue WRs the largest I/O needs at worst: one REG_MR
 *	and one LOCAL_INV per descriptor plus &mrkit_io_shape.extra_wrs.
 */
struct mrkit_limits {
	enum ib_mr_type	mr_type;
	u32		pages_per_mr;
	u32		mrs_per_io;
	u32		wrs_per_io;
};

int mrkit_query_limits(struct ib_device *dev, const struct mrkit_io_shape *shape,
		       struct mrkit_limits *lim);

struct mrkit_pool *mrkit_pool_create(struct ib_pd *pd,
				     const struct mrkit_pool_attr *attr);
void mrkit_pool_destroy(struct mrkit_pool *pool);
void mrkit_pool_stats(struct mrkit_pool *pool, struct mrkit_pool_stats *st);
const char *mrkit_pool_name(const struct mrkit_pool *pool);

struct mrkit_mr *mrkit_mr_get(struct mrkit_pool *pool);
int mrkit_mr_put(struct mrkit_mr *mr);
int mrkit_pool_wait(struct mrkit_pool *pool, unsigned long timeout);
void mrkit_pool_set_notify(struct mrkit_pool *pool,
			   void (*notify)(struct mrkit_pool *pool, void *ctx),
			   void *ctx);

#endif /* _RDMA_MRKIT_H */
