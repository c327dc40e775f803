/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of mrkit, the FRWR memory registration library.
 *
 * Descriptor events carry the MR's restrack id (mr.id) and completion
 * events the send CQ's (cq.id), as rdma_core's own events do, so traces of
 * mrkit, the ULP and the core line up.  The cq.id is read from the CQ the
 * completion handler is called with.  Arguments are pointers: nothing is
 * computed unless the event is enabled.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mrkit

#if !defined(_TRACE_MRKIT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_MRKIT_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrkit.h>
#include <trace/misc/rdma.h>
#include "mrkit_compat.h"

TRACE_DEFINE_ENUM(MRKIT_MR_FREE);
TRACE_DEFINE_ENUM(MRKIT_MR_RESERVED);
TRACE_DEFINE_ENUM(MRKIT_MR_MAPPED);
TRACE_DEFINE_ENUM(MRKIT_MR_REGISTERED);
TRACE_DEFINE_ENUM(MRKIT_MR_INVALIDATING);
TRACE_DEFINE_ENUM(MRKIT_MR_STALE);
TRACE_DEFINE_ENUM(MRKIT_MR_RETIRING);
TRACE_DEFINE_ENUM(MRKIT_MR_CACHED);

#define mrkit_show_state(x)						\
	__print_symbolic(x,						\
		{ MRKIT_MR_FREE, "FREE" },				\
		{ MRKIT_MR_RESERVED, "RESERVED" },			\
		{ MRKIT_MR_MAPPED, "MAPPED" },				\
		{ MRKIT_MR_REGISTERED, "REGISTERED" },			\
		{ MRKIT_MR_INVALIDATING, "INVALIDATING" },		\
		{ MRKIT_MR_STALE, "STALE" },				\
		{ MRKIT_MR_RETIRING, "RETIRING" },			\
		{ MRKIT_MR_CACHED, "CACHED" })

TRACE_DEFINE_ENUM(MRKIT_PI_BAD_GUARD);
TRACE_DEFINE_ENUM(MRKIT_PI_BAD_APP);
TRACE_DEFINE_ENUM(MRKIT_PI_BAD_REF);
TRACE_DEFINE_ENUM(MRKIT_PI_UNKNOWN);

#define mrkit_show_pi_err(x)						\
	__print_symbolic(x,						\
		{ MRKIT_PI_BAD_GUARD, "guard" },			\
		{ MRKIT_PI_BAD_APP, "apptag" },				\
		{ MRKIT_PI_BAD_REF, "reftag" },				\
		{ MRKIT_PI_UNKNOWN, "unknown" })

/*
 * Event classes
 */

DECLARE_EVENT_CLASS(mrkit_pool_class,
		    TP_PROTO(const struct mrkit_pool *pool, unsigned int count),
		    TP_ARGS(pool, count),
		    TP_STRUCT__entry(__string(device, mrkit_trace_pool_dev(pool))
				     __string(name, mrkit_pool_name(pool))
				     __field(unsigned int, allocated)
				     __field(unsigned int, max_depth)
				     __field(unsigned int, count)),
		    TP_fast_assign(mrkit_assign_str(device,
						    mrkit_trace_pool_dev(pool));
				   mrkit_assign_str(name,
						    mrkit_pool_name(pool));
				   __entry->allocated =
					mrkit_trace_pool_allocated(pool);
				   __entry->max_depth =
					mrkit_trace_pool_max_depth(pool);
				   __entry->count = count;),
		    TP_printk("device=%s pool=%s allocated=%u max_depth=%u count=%u",
			      __get_str(device), __get_str(name),
			      __entry->allocated, __entry->max_depth,
			      __entry->count));

#define DEFINE_POOL_EVENT(name)						\
	DEFINE_EVENT(mrkit_pool_class, mrkit_pool_##name,		\
		     TP_PROTO(const struct mrkit_pool *pool,		\
			      unsigned int count),			\
		     TP_ARGS(pool, count))

DECLARE_EVENT_CLASS(mrkit_mr_class,
		    TP_PROTO(const struct mrkit_mr *mr),
		    TP_ARGS(mr),
		    TP_STRUCT__entry(__field(int, mr_id)
				     __field(unsigned int, idx)
				     __field(u32, key)
				     __field(u64, iova)
				     __field(u64, length)
				     __field(unsigned long, state)),
		    TP_fast_assign(mrkit_trace_mr_fields(mr, &__entry->mr_id,
							 &__entry->idx,
							 &__entry->key,
							 &__entry->iova,
							 &__entry->length,
							 &__entry->state);),
		    TP_printk("mr.id=%d idx=%u key=0x%08x iova=0x%llx length=%llu state=%s",
			      __entry->mr_id, __entry->idx, __entry->key,
			      __entry->iova, __entry->length,
			      mrkit_show_state(__entry->state)));

#define DEFINE_MR_EVENT(name)						\
	DEFINE_EVENT(mrkit_mr_class, mrkit_##name,			\
		     TP_PROTO(const struct mrkit_mr *mr),		\
		     TP_ARGS(mr))

DECLARE_EVENT_CLASS(mrkit_wc_class,
		    TP_PROTO(const struct ib_cq *cq, const struct ib_wc *wc,
			     const struct mrkit_mr *mr),
		    TP_ARGS(cq, wc, mr),
		    TP_STRUCT__entry(__field(u32, cq_id)
				     __field(int, mr_id)
				     __field(unsigned long, status)
				     __field(unsigned int, vendor_err)),
		    TP_fast_assign(mrkit_trace_wc_fields(cq, mr, &__entry->cq_id,
							 &__entry->mr_id);
				   __entry->status = wc->status;
				   __entry->vendor_err =
					wc->status ? wc->vendor_err : 0;),
		    TP_printk("cq.id=%u mr.id=%d status=%s (%lu/0x%x)",
			      __entry->cq_id, __entry->mr_id,
			      rdma_show_wc_status(__entry->status),
			      __entry->status, __entry->vendor_err));

#define DEFINE_WC_EVENT(name)						\
	DEFINE_EVENT(mrkit_wc_class, mrkit_wc_##name,			\
		     TP_PROTO(const struct ib_cq *cq,			\
			      const struct ib_wc *wc,			\
			      const struct mrkit_mr *mr),		\
		     TP_ARGS(cq, wc, mr))

/*
 * Pool events
 */

DEFINE_POOL_EVENT(create);
DEFINE_POOL_EVENT(destroy);
DEFINE_POOL_EVENT(grow);
DEFINE_POOL_EVENT(exhausted);
/* An I/O finished with @count retired descriptors: done() waits for their deregistration. */
DEFINE_POOL_EVENT(fence);

/* A pool's counters (mrkit_pool_get_stats()) as mrkit_pool_destroy() begins. */
TRACE_EVENT(mrkit_pool_counters,
	    TP_PROTO(const struct mrkit_pool *pool,
		     const struct mrkit_pool_stats *st),
	    TP_ARGS(pool, st),
	    TP_STRUCT__entry(__string(device, mrkit_trace_pool_dev(pool))
			     __string(name, mrkit_pool_name(pool))
			     __field(u64, remote_inv)
			     __field(u64, local_inv)
			     __field(u64, bogus_inv)
			     __field(u64, stale_replaced)
			     __field(u64, exhausted)
			     __field(u32, stale)
			     __field(u32, in_use)
			     __field(u32, high_water)
			     __field(u32, allocated)),
	    TP_fast_assign(mrkit_assign_str(device, mrkit_trace_pool_dev(pool));
			   mrkit_assign_str(name, mrkit_pool_name(pool));
			   __entry->remote_inv = st->remote_inv;
			   __entry->local_inv = st->local_inv;
			   __entry->bogus_inv = st->bogus_inv;
			   __entry->stale_replaced = st->stale_replaced;
			   __entry->exhausted = st->exhausted;
			   __entry->stale = st->stale;
			   __entry->in_use = st->in_use;
			   __entry->high_water = st->high_water;
			   __entry->allocated = st->allocated;),
	    TP_printk("device=%s pool=%s remote_inv=%llu local_inv=%llu bogus_inv=%llu stale=%u stale_replaced=%llu in_use=%u high_water=%u allocated=%u exhausted=%llu",
		      __get_str(device), __get_str(name),
		      __entry->remote_inv, __entry->local_inv,
		      __entry->bogus_inv, __entry->stale,
		      __entry->stale_replaced, __entry->in_use,
		      __entry->high_water, __entry->allocated,
		      __entry->exhausted));

/*
 * Descriptor events
 */

DEFINE_MR_EVENT(mr_get);
DEFINE_MR_EVENT(mr_put);
DEFINE_MR_EVENT(mr_stale);
DEFINE_MR_EVENT(mr_replaced);
DEFINE_MR_EVENT(reg);
DEFINE_MR_EVENT(localinv);
DEFINE_MR_EVENT(read_inv);
DEFINE_MR_EVENT(reminv);

/*
 * Completions
 */

/* A descriptor's unsignaled REG_MR, LOCAL_INV or READ failed. */
DEFINE_WC_EVENT(mr);
/* The signaled last WR of an I/O's LOCAL_INV or READ chain completed. */
DEFINE_WC_EVENT(inv);
DEFINE_WC_EVENT(read);

/*
 * I/O events
 */

TRACE_EVENT(mrkit_map,
	    TP_PROTO(const struct mrkit_io *io, int nents),
	    TP_ARGS(io, nents),
	    TP_STRUCT__entry(__field(int, nents)
			     __field(unsigned int, segs)
			     __field(unsigned int, pages)
			     __field(u64, iova)
			     __field(u64, length)
			     __field(u32, rkey)),
	    TP_fast_assign(__entry->nents = nents;
			   mrkit_trace_map_fields(io, &__entry->segs,
						  &__entry->pages,
						  &__entry->iova,
						  &__entry->length,
						  &__entry->rkey);),
	    TP_printk("nents=%d segs=%u pages=%u iova=0x%llx length=%llu rkey=0x%08x",
		      __entry->nents, __entry->segs, __entry->pages,
		      __entry->iova, __entry->length, __entry->rkey));

/* The DMA mapping mrkit made for an I/O is undone. */
TRACE_EVENT(mrkit_unmap,
	    TP_PROTO(const struct mrkit_pool *pool, int nents),
	    TP_ARGS(pool, nents),
	    TP_STRUCT__entry(__string(name, mrkit_pool_name(pool))
			     __field(int, nents)),
	    TP_fast_assign(mrkit_assign_str(name, mrkit_pool_name(pool));
			   __entry->nents = nents;),
	    TP_printk("pool=%s nents=%d", __get_str(name), __entry->nents));

TRACE_EVENT(mrkit_reminv_bogus,
	    TP_PROTO(const struct mrkit_pool *pool, u32 rkey),
	    TP_ARGS(pool, rkey),
	    TP_STRUCT__entry(__string(name, mrkit_pool_name(pool))
			     __field(u32, rkey)),
	    TP_fast_assign(mrkit_assign_str(name, mrkit_pool_name(pool));
			   __entry->rkey = rkey;),
	    TP_printk("pool=%s rkey=0x%08x", __get_str(name), __entry->rkey));

TRACE_EVENT(mrkit_sig_err,
	    TP_PROTO(const struct mrkit_mr *mr,
		     const struct mrkit_pi_result *res),
	    TP_ARGS(mr, res),
	    TP_STRUCT__entry(__field(int, mr_id)
			     __field(unsigned long, type)
			     __field(u64, sector)
			     __field(u32, expected)
			     __field(u32, actual)),
	    TP_fast_assign(mrkit_trace_wc_fields(NULL, mr, NULL,
						 &__entry->mr_id);
			   __entry->type = res->type;
			   __entry->sector = res->sector;
			   __entry->expected = res->expected;
			   __entry->actual = res->actual;),
	    TP_printk("mr.id=%d bad %s at sector %llu (expected 0x%x actual 0x%x)",
		      __entry->mr_id, mrkit_show_pi_err(__entry->type),
		      __entry->sector, __entry->expected, __entry->actual));

TRACE_EVENT(mrkit_post_err,
	    TP_PROTO(const struct mrkit_pool *pool, int err,
		     unsigned int posted, unsigned int total),
	    TP_ARGS(pool, err, posted, total),
	    TP_STRUCT__entry(__string(name, mrkit_pool_name(pool))
			     __field(int, err)
			     __field(unsigned int, posted)
			     __field(unsigned int, total)),
	    TP_fast_assign(mrkit_assign_str(name, mrkit_pool_name(pool));
			   __entry->err = err;
			   __entry->posted = posted;
			   __entry->total = total;),
	    TP_printk("pool=%s err=%d posted=%u of %u WRs", __get_str(name),
		      __entry->err, __entry->posted, __entry->total));

#endif /* _TRACE_MRKIT_H */

#include <trace/define_trace.h>
