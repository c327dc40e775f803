// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Tracepoints
 *
 * The one place CREATE_TRACE_POINTS is defined.
 *
 * The event definitions (include/trace/events/mrkit.h) read pools and
 * descriptors only through the small accessors below, so the header
 * needs no mrkit internals and other modules can include it to attach
 * probes to the exported events.  Nothing here runs unless an event is
 * enabled.
 */

#include <linux/device.h>
#include <linux/module.h>

#include "mrkit_priv.h"

static inline const char *mrkit_trace_pool_dev(const struct mrkit_pool *pool)
{
	return dev_name(&pool->dev->dev) ?: "?";
}

static inline unsigned int
mrkit_trace_pool_allocated(const struct mrkit_pool *pool)
{
	return READ_ONCE(pool->nr_alloc);
}

static inline unsigned int
mrkit_trace_pool_max_depth(const struct mrkit_pool *pool)
{
	return pool->max_depth;
}

static inline void mrkit_trace_mr_fields(const struct mrkit_mr *mr, int *id,
					 unsigned int *idx, u32 *key, u64 *iova,
					 u64 *len, unsigned long *state)
{
	const struct ib_mr *ibmr = mr->ibmr;

	*id = ibmr ? (int)ibmr->res.id : -1;
	*idx = mr->idx;
	*key = ibmr ? ibmr->rkey : 0;
	*iova = ibmr ? ibmr->iova : 0;
	*len = ibmr ? ibmr->length : 0;
	*state = atomic_read(&mr->state);
}

static inline void mrkit_trace_wc_fields(const struct ib_cq *cq,
					 const struct mrkit_mr *mr,
					 u32 *cq_id, int *mr_id)
{
	if (cq_id)
		*cq_id = cq ? cq->res.id : 0;
	*mr_id = mr->ibmr ? (int)mr->ibmr->res.id : -1;
}

static inline void mrkit_trace_map_fields(const struct mrkit_io *io,
					  unsigned int *segs,
					  unsigned int *pages, u64 *iova,
					  u64 *length, u32 *rkey)
{
	const struct mrkit_mr *mr;

	*segs = 0;
	*pages = 0;
	*length = 0;
	*iova = io->mrs ? io->mrs->ibmr->iova : 0;
	*rkey = io->mrs ? io->mrs->ibmr->rkey : 0;
	for (mr = io->mrs; mr; mr = mr->io_next) {
		const struct ib_mr *ibmr = mr->ibmr;
		u32 ps = ibmr->page_size ?: PAGE_SIZE;

		(*segs)++;
		*length += ibmr->length;
		*pages += DIV_ROUND_UP((ibmr->iova & (ps - 1)) + ibmr->length,
				       ps);
	}
}

#define CREATE_TRACE_POINTS
#include <trace/events/mrkit.h>

EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_create);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_destroy);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_counters);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_grow);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_exhausted);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_pool_fence);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_mr_get);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_mr_put);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_mr_stale);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_mr_replaced);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_reg);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_localinv);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_read_inv);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_reminv);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_wc_mr);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_wc_inv);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_wc_read);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_map);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_reminv_bogus);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_sig_err);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_post_err);
EXPORT_TRACEPOINT_SYMBOL_GPL(mrkit_unmap);
