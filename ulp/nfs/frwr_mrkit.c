// SPDX-License-Identifier: GPL-2.0
/* mrkit-splice: whole-file net/sunrpc/xprtrdma/frwr_ops.c */
/*
 * NFS/RDMA client memory registration on mrkit.
 *
 * This file takes the place of xprtrdma's frwr_ops.c at build time and
 * keeps its internal interface (xprt_rdma.h), so rpc_rdma.c, verbs.c,
 * transport.c and backchannel.c build unchanged.  Only the registration
 * work moves: descriptors, mapping, key rotation, the WR chains and their
 * completions, flush recovery and remote invalidation are mrkit's.
 *
 * From per-MR to per-I/O
 * ----------------------
 * xprtrdma thinks in rpcrdma_mr objects: rpc_rdma.c takes one per chunk
 * segment, asks frwr_map() to fill it from the next run of
 * rpcrdma_mr_segs, and XDR-encodes its handle, length and offset.  mrkit
 * thinks in I/Os: one mrkit_io maps a whole scatterlist and splits it
 * across as many descriptors as the device needs.  Here an rpcrdma_mr is
 * only a handle carrying one advertised segment; the registrations live
 * in two mrkit_io's per request ("chunks", added to struct rpcrdma_req at
 * build time): [0] the Read list (the server reads), [1] the Write list
 * or the Reply chunk (the server writes; a call has at most one of the
 * two).  The first frwr_map() of a chunk maps every remaining segment at
 * once and takes all the (iova, length, rkey) triples; each later call
 * hands the next triple to the next handle and tells rpc_rdma.c how many
 * rpcrdma_mr_segs it covered.  The iova carries the XID in its upper 32
 * bits (MRKIT_MAP_IOVA_TAG), as before.
 *
 * Posting and completion
 * ----------------------
 * frwr_send() posts each mapped chunk's REG_MRs ahead of the Send
 * (mrkit_io_post()).  When the reply arrives, frwr_reminv() passes the
 * rkey the server invalidated to mrkit_io_remote_inv() of the chunk that
 * exposed it, and frwr_unmap_async() finishes every chunk with
 * mrkit_io_invalidate(): mrkit posts LOCAL_INV only for what is still
 * live and calls back once every rkey is dead and the pages are DMA-
 * unmapped; the last chunk's callback completes the RPC (the rkey fence).
 * frwr_unmap_sync() does the same and sleeps (mrkit_io_invalidate_sync()).
 *
 * Connection lifetime and recovery
 * --------------------------------
 * Each connection (rpcrdma_ep) has its own mrkit pool on its PD, sized
 * with mrkit_query_limits() in frwr_query_device() and created by the
 * first frwr_mr_init() of the connection.  On disconnect, verbs.c drains
 * the QP and releases every handle; releasing a handle still bound to a
 * live chunk invalidates the chunk on the dead QP (the flushes retire
 * its descriptors, which mrkit replaces), and the last handle's release
 * tells mrkit the QP is drained, logs the pool's counters and destroys
 * the pool.  A new connection starts with a new pool: nothing registered
 * on an old connection can be reused.  An empty pool is -EAGAIN: the RPC
 * waits for buffer space and mrkit's refill notification wakes it.
 *
 * Who serializes what
 * -------------------
 * A chunk is the RPC's: marshalling and frwr_send() run under the
 * transport send lock, the reply's frwr_unmap_async() and its completion
 * with the rqst pinned, frwr_unmap_sync() once the RPC is released.  The
 * one outsider is a disconnect (connect worker, autoclose), which
 * releases every handle and so every live chunk, and may do so while a
 * killed RPC is released: frwr_mk_chunk_drop() lets one of the two
 * finish the chunk and makes the other wait for it.  The request's
 * handle list (rl_registered) is still popped by the disconnect
 * (verbs.c) and walked by the release without a lock they share, as in
 * upstream's frwr_ops.c; that window is verbs.c's to close.
 */

#include <linux/sunrpc/svc_rdma.h>

#include "xprt_rdma.h"

MODULE_IMPORT_NS(MRKIT);

/* Chunk states (struct rpcrdma_mkchunk.mc_state). */
enum {
	FRWR_MK_IDLE = 0,
	FRWR_MK_MAPPED,		/* segments handed out, REG_MRs not posted */
	FRWR_MK_POSTED,		/* REG_MRs posted with (or ahead of) a Send */
	FRWR_MK_INVALIDATING,	/* mrkit_io_invalidate() issued */
	FRWR_MK_DROPPING,	/* one context is in frwr_mk_chunk_drop() */
};

/* Chunk slots in struct rpcrdma_req. */
enum {
	FRWR_MK_READ_LIST = 0,
	FRWR_MK_WRITE_OR_REPLY = 1,
};

static atomic_t frwr_mk_pool_ids = ATOMIC_INIT(0);

static struct ib_qp *frwr_mk_qp(struct rpcrdma_xprt *r_xprt)
{
	return r_xprt->rx_ep->re_id->qp;
}

/*
 * Move the handles on @req's registered list to its free list; with
 * @keep_posted, handles of chunks whose REG_MRs are posted stay.
 */
static void frwr_mk_free_handles(struct rpcrdma_req *req, bool keep_posted)
{
	struct rpcrdma_mr *mr, *tmp;

	list_for_each_entry_safe(mr, tmp, &req->rl_registered, mr_list) {
		if (keep_posted && mr->mr_mkc &&
		    mr->mr_mkc->mc_state == FRWR_MK_POSTED)
			continue;
		list_del_init(&mr->mr_list);
		mr->mr_mkc = NULL;
		rpcrdma_mr_push(mr, &req->rl_free_mrs);
	}
}

/*
 * Make a chunk idle whatever its state, in process context: unposted
 * registrations are given back, posted ones invalidated and waited for
 * (on a dead QP the flushes complete them and mrkit retires the
 * descriptors).  Returns 0 or mrkit's error.
 *
 * Two contexts can get here for one chunk at once: the release of its
 * RPC (xprt_rdma_free() -> frwr_unmap_sync()) and a disconnect, which
 * releases the handles of every request (frwr_mr_release()) without the
 * request's owner.  mrkit wants one caller per I/O, so the first claims
 * the chunk (MAPPED or POSTED -> DROPPING) and the other waits until it
 * is idle: neither returns while the chunk's keys may be live, and the
 * pool is not torn down under a waiter.  A disconnect that waits says
 * again that the QP is drained (@drained), in case the winner's post
 * failed after it last did and parked descriptors that only that call
 * releases.
 */
static int frwr_mk_chunk_drop(struct rpcrdma_ep *ep, struct rpcrdma_mkchunk *c,
			      bool drained)
{
	int old, ret;

	for (;;) {
		/* IDLE is stored with release once the I/O is finished. */
		old = smp_load_acquire(&c->mc_state);
		if (old == FRWR_MK_IDLE || old == FRWR_MK_INVALIDATING)
			return 0;
		if (old != FRWR_MK_DROPPING) {
			if (cmpxchg(&c->mc_state, old, FRWR_MK_DROPPING) == old)
				break;
			continue;
		}
		if (drained && ep->re_mkpool)
			mrkit_pool_qp_drained(ep->re_mkpool);
		wait_var_event_timeout(&c->mc_state,
				       READ_ONCE(c->mc_state) != FRWR_MK_DROPPING,
				       HZ);
	}
	ret = mrkit_io_invalidate_sync(&c->mc_io, ep->re_id->qp);
	/*
	 * The chunk is idle only once mrkit is done with it: a waiter that
	 * sees IDLE also sees the I/O finished (pairs with the
	 * smp_load_acquire() above).
	 */
	smp_store_release(&c->mc_state, FRWR_MK_IDLE);
	wake_up_var(&c->mc_state);
	return ret == -EINVAL ? 0 : ret;
}

/* Every chunk of @req is finished: complete the RPC, or retry it. */
static void frwr_mk_reply_ready(struct rpcrdma_req *req)
{
	struct rpcrdma_rep *rep = req->rl_reply;
	struct rpcrdma_xprt *r_xprt = rep->rr_rxprt;

	/* Pairs with the stores made before the invalidations were posted. */
	smp_rmb();
	frwr_mk_free_handles(req, false);
	if (READ_ONCE(req->rl_mkstatus)) {
		rpcrdma_unpin_rqst(rep);
		rpcrdma_force_disconnect(r_xprt->rx_ep);
		return;
	}
	rpcrdma_complete_rqst(rep);
}

static void frwr_mk_chunk_done(struct mrkit_io *io, int status)
{
	struct rpcrdma_mkchunk *c = container_of(io, struct rpcrdma_mkchunk,
						 mc_io);
	struct rpcrdma_req *req = c->mc_req;

	if (status)
		WRITE_ONCE(req->rl_mkstatus, status);
	c->mc_state = FRWR_MK_IDLE;
	if (atomic_dec_and_test(&req->rl_mkpending))
		frwr_mk_reply_ready(req);
}

static void frwr_mk_refilled(struct mrkit_pool *pool, void *ctx)
{
	struct rpcrdma_xprt *r_xprt = ctx;

	xprt_write_space(&r_xprt->rx_xprt);
}

static int frwr_mk_pool_setup(struct rpcrdma_xprt *r_xprt)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	unsigned int per_io = ep->re_max_rdma_segs;
	struct mrkit_pool_attr attr = {
		.pages_per_mr	= ep->re_max_fr_depth,
		.node		= ibdev_to_node(ep->re_id->device),
	};
	struct mrkit_pool *pool;
	char name[32];

	snprintf(name, sizeof(name), "rpcrdma-%d",
		 atomic_inc_return(&frwr_mk_pool_ids));
	attr.name = name;
	/* A quarter of the credits at full size now, two chunks each later. */
	attr.depth = max(4 * per_io, ep->re_max_requests * per_io / 4);
	attr.max_depth = min_t(u32, 2 * ep->re_max_requests * per_io,
			       MRKIT_MAX_DEPTH);
	attr.depth = min(attr.depth, attr.max_depth);
	if (ep->re_mrtype == IB_MR_TYPE_SG_GAPS)
		attr.flags |= MRKIT_POOL_SG_GAPS;

	pool = mrkit_pool_create(ep->re_pd, &attr);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	/* The client offers Send With Invalidate in its CM private data. */
	mrkit_pool_set_remote_inv(pool, true);
	mrkit_pool_set_notify(pool, frwr_mk_refilled, r_xprt);
	ep->re_mkpool = pool;
	atomic_set(&ep->re_mkhandles, 0);
	return 0;
}

/* The last handle of a connection is gone: so is its pool. */
static void frwr_mk_pool_teardown(struct rpcrdma_ep *ep)
{
	struct mrkit_pool *pool = ep->re_mkpool;
	struct mrkit_pool_stats st;

	if (!pool)
		return;
	mrkit_pool_qp_drained(pool);
	mrkit_pool_get_stats(pool, &st);
	pr_info("rpcrdma-mrkit: pool=%s remote_inv=%llu local_inv=%llu bogus_inv=%llu stale=%u stale_replaced=%llu in_use=%u high_water=%u allocated=%u exhausted=%llu\n",
		mrkit_pool_name(pool), st.remote_inv, st.local_inv,
		st.bogus_inv, st.stale, st.stale_replaced, st.in_use,
		st.high_water, st.allocated, st.exhausted);
	mrkit_pool_destroy(pool);
	ep->re_mkpool = NULL;
}

/**
 * frwr_mr_release - Destroy one MR handle
 * @mr: handle allocated by verbs.c and set up by frwr_mr_init()
 *
 * Called with the QP drained (disconnect) or never connected.  A handle
 * still describing a live chunk takes the chunk down first; the last
 * handle of a connection takes the connection's pool with it.
 */
void frwr_mr_release(struct rpcrdma_mr *mr)
{
	struct rpcrdma_ep *ep = mr->mr_xprt->rx_ep;

	/* The QP is drained: what a failed post parked can be retired. */
	if (ep && ep->re_mkpool)
		mrkit_pool_qp_drained(ep->re_mkpool);
	if (ep && mr->mr_mkc)
		frwr_mk_chunk_drop(ep, mr->mr_mkc, true);
	mr->mr_mkc = NULL;
	if (ep && ep->re_write_pad_mr == mr) {
		mrkit_io_invalidate_sync(&ep->re_mkwp_io, ep->re_id->qp);
		ep->re_write_pad_mr = NULL;
	}
	if (ep && atomic_dec_and_test(&ep->re_mkhandles))
		frwr_mk_pool_teardown(ep);
	kfree(mr);
}

/**
 * frwr_reset - Undo the registrations of a request that failed to marshal
 * @req: the request
 *
 * Chunks mapped for this attempt go back to the pool unposted (their keys
 * were never live) and their handles to the request's free list.  A chunk
 * posted by an earlier transmission keeps its handles: it is invalidated
 * when the RPC is released or the connection goes.
 */
void frwr_reset(struct rpcrdma_req *req)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(req->rl_mkc); i++) {
		struct rpcrdma_mkchunk *c = &req->rl_mkc[i];

		if (c->mc_state != FRWR_MK_MAPPED)
			continue;
		if (mrkit_io_release(&c->mc_io, 0))
			continue;	/* live after all: stays registered */
		c->mc_state = FRWR_MK_IDLE;
	}
	frwr_mk_free_handles(req, true);
}

/**
 * frwr_mr_init - Set up one MR handle
 * @r_xprt: controlling transport instance
 * @mr: handle to set up
 *
 * A handle owns no device resource: the connection's mrkit pool does.
 * The first handle of a connection creates that pool.
 *
 * Returns zero if successful, or a negative errno.
 */
int frwr_mr_init(struct rpcrdma_xprt *r_xprt, struct rpcrdma_mr *mr)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	int ret;

	if (!ep->re_mkpool) {
		ret = frwr_mk_pool_setup(r_xprt);
		if (ret)
			return ret;
	}
	atomic_inc(&ep->re_mkhandles);
	mr->mr_xprt = r_xprt;
	mr->mr_ibmr = NULL;
	mr->mr_device = NULL;
	INIT_LIST_HEAD(&mr->mr_list);
	mr->mr_mkc = NULL;
	return 0;
}

/**
 * frwr_query_device - Size a transport for mrkit registration
 * @ep: endpoint to fill in
 * @device: RDMA device to query
 *
 * mrkit_query_limits() says how many pages one descriptor maps on
 * @device, how many descriptors the largest chunk (1 MiB of pages plus a
 * head and a tail kvec) needs and how many send WRs that takes; the
 * queues and the credit limit follow from that.  Sets ep->re_attr's
 * capabilities, re_max_requests, re_max_rdma_segs, re_max_fr_depth and
 * re_mrtype.
 *
 * Return values:
 *   %0 - the device can carry NFS/RDMA.
 *   %-EINVAL - no fast registration on @device.
 *   %-ENOMEM - @device is too small for NFS/RDMA.
 */
int frwr_query_device(struct rpcrdma_ep *ep, const struct ib_device *device)
{
	struct mrkit_io_shape shape = {
		.max_io_bytes	= RPCRDMA_MAX_DATA_SEGS << PAGE_SHIFT,
		.max_gaps	= 2,	/* head kvec | pages | tail kvec */
		.extra_wrs	= 1,	/* the Send */
		.flags		= MRKIT_POOL_SG_GAPS,
	};
	const struct ib_device_attr *attrs = &device->attrs;
	unsigned int sges, room;
	struct mrkit_limits lim;

	if (mrkit_query_limits((struct ib_device *)device, &shape, &lim)) {
		pr_err("rpcrdma: device %s cannot do fast registration\n",
		       device->name);
		return -EINVAL;
	}

	sges = min_t(unsigned int, attrs->max_send_sge, RPCRDMA_MAX_SEND_SGES);
	if (sges < RPCRDMA_MIN_SEND_SGES) {
		pr_err("rpcrdma: device %s has %u send SGEs, too few\n",
		       device->name, sges);
		return -ENOMEM;
	}
	ep->re_attr.cap.max_send_sge = sges;
	ep->re_attr.cap.max_recv_sge = 1;

	ep->re_mrtype = lim.mr_type;
	ep->re_max_fr_depth = lim.pages_per_mr;
	ep->re_max_rdma_segs = min_t(unsigned int, lim.mrs_per_io,
				     RPCRDMA_MAX_HDR_SEGS);
	/* Any device must carry the largest r/wsize, for failover. */
	if (ep->re_max_rdma_segs * ep->re_max_fr_depth < RPCRDMA_MAX_SEGS)
		return -ENOMEM;

	/* Send queue: every credit at full size, the backchannel, a drain. */
	if (attrs->max_qp_wr < RPCRDMA_BACKWARD_WRS + 1 + RPCRDMA_MIN_SLOT_TABLE)
		return -ENOMEM;
	room = attrs->max_qp_wr - RPCRDMA_BACKWARD_WRS - 1;
	ep->re_max_requests = min(ep->re_max_requests, room / lim.wrs_per_io);
	if (ep->re_max_requests < RPCRDMA_MIN_SLOT_TABLE)
		return -ENOMEM;
	ep->re_attr.cap.max_send_wr = ep->re_max_requests * lim.wrs_per_io +
				      RPCRDMA_BACKWARD_WRS + 1;
	ep->re_attr.cap.max_recv_wr = ep->re_max_requests +
				      RPCRDMA_BACKWARD_WRS +
				      RPCRDMA_MAX_RECV_BATCH + 1;
	return 0;
}

/*
 * How many of the @nsegs rpcrdma_mr_segs each registered segment covers:
 * a segment is charged with every input run that ends inside it, so the
 * counts add up to @nsegs even when a descriptor boundary falls inside a
 * run (a kvec longer than the MR's page list).
 */
static void frwr_mk_count_runs(struct rpcrdma_mkchunk *c,
			       const struct rpcrdma_mr_seg *seg, int nsegs)
{
	u64 covered = 0, run_end = 0;
	int i, run = 0;

	for (i = 0; i < c->mc_nsegs; i++) {
		int first = run;

		covered += c->mc_segs[i].length;
		while (run < nsegs && run_end + seg[run].mr_len <= covered)
			run_end += seg[run++].mr_len;
		c->mc_nents[i] = run - first;
	}
	/* Rounding cannot happen (mrkit maps every byte); never loop forever. */
	c->mc_nents[c->mc_nsegs - 1] += nsegs - run;
}

/* Map a whole chunk: every remaining segment, one mrkit I/O. */
static int frwr_mk_chunk_map(struct rpcrdma_xprt *r_xprt,
			     struct rpcrdma_req *req, struct rpcrdma_mkchunk *c,
			     const struct rpcrdma_mr_seg *seg, int nsegs,
			     bool writing, __be32 xid)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	int i, n;

	/* Left over from an earlier transmission of this RPC. */
	if (c->mc_state != FRWR_MK_IDLE) {
		struct rpcrdma_mr *mr, *tmp;

		frwr_mk_chunk_drop(ep, c, false);
		list_for_each_entry_safe(mr, tmp, &req->rl_registered, mr_list)
			if (mr->mr_mkc == c) {
				list_del_init(&mr->mr_list);
				mr->mr_mkc = NULL;
				rpcrdma_mr_push(mr, &req->rl_free_mrs);
			}
	}
	if (nsegs <= 0 || nsegs > RPCRDMA_MAX_SEGS)
		return -EIO;

	sg_init_table(c->mc_sg, nsegs);
	for (i = 0; i < nsegs; i++)
		sg_set_page(&c->mc_sg[i], seg[i].mr_page, seg[i].mr_len,
			    seg[i].mr_offset);

	c->mc_req = req;
	mrkit_io_init(&c->mc_io, ep->re_mkpool,
		      writing ? MRKIT_PEER_WRITES : MRKIT_PEER_READS,
		      frwr_mk_chunk_done);
	mrkit_io_set_tag(&c->mc_io, be32_to_cpu(xid));
	n = mrkit_io_map(&c->mc_io, c->mc_sg, nsegs,
			 MRKIT_MAP_DMA | MRKIT_MAP_IOVA_TAG);
	if (n == -EAGAIN) {
		/* Growth is queued; mrkit's refill notification wakes us. */
		xprt_wait_for_buffer_space(&r_xprt->rx_xprt);
		return -EAGAIN;
	}
	if (n <= 0)
		return -EIO;
	if (n > ARRAY_SIZE(c->mc_segs)) {
		mrkit_io_release(&c->mc_io, 0);
		return -EIO;
	}
	c->mc_nsegs = mrkit_io_segs(&c->mc_io, c->mc_segs,
				    ARRAY_SIZE(c->mc_segs));
	frwr_mk_count_runs(c, seg, nsegs);
	c->mc_next = 0;
	c->mc_state = FRWR_MK_MAPPED;
	return 0;
}

/**
 * frwr_map - Describe the next registered segment of a chunk
 * @r_xprt: controlling transport
 * @seg: the chunk's remaining rpcrdma_mr_segs
 * @nsegs: how many remain
 * @writing: true for a Write list or Reply chunk (the server writes)
 * @xid: XID of the RPC, placed in the upper half of each iova
 * @mr: the handle to fill in (already on the request's registered list)
 *
 * The first call of a chunk registers all of it (see the top of this
 * file); every call fills @mr with the next (rkey, length, iova) and the
 * number of rpcrdma_mr_segs it covers.  Nothing is posted here.
 *
 * Returns the next segment, ERR_PTR(-EAGAIN) when the pool is empty for
 * now (the RPC waits for buffer space), or ERR_PTR(-EIO).
 */
struct rpcrdma_mr_seg *frwr_map(struct rpcrdma_xprt *r_xprt,
				struct rpcrdma_mr_seg *seg,
				int nsegs, bool writing, __be32 xid,
				struct rpcrdma_mr *mr)
{
	struct rpcrdma_req *req = mr->mr_req;
	struct rpcrdma_mkchunk *c;
	struct mrkit_seg *s;
	int ret;

	if (!req)
		return ERR_PTR(-EIO);
	c = &req->rl_mkc[writing ? FRWR_MK_WRITE_OR_REPLY : FRWR_MK_READ_LIST];
	if (c->mc_state != FRWR_MK_MAPPED || c->mc_next >= c->mc_nsegs) {
		ret = frwr_mk_chunk_map(r_xprt, req, c, seg, nsegs, writing,
					xid);
		if (ret)
			return ERR_PTR(ret);
	}

	s = &c->mc_segs[c->mc_next];
	mr->mr_mkc = c;
	mr->mr_handle = s->key;
	mr->mr_length = s->length;
	mr->mr_offset = s->addr;
	mr->mr_nents = c->mc_nents[c->mc_next];
	mr->mr_dir = rpcrdma_data_dir(writing);
	c->mc_next++;
	return seg + mr->mr_nents;
}

/**
 * frwr_send - post the registrations of an RPC Call and its Send
 * @r_xprt: controlling transport instance
 * @req: prepared RPC Call
 *
 * Each chunk mapped for this Call posts its REG_MRs ahead of the Send on
 * the same send queue (mrkit_io_post(); with a Read list and a Write or
 * Reply chunk, the first goes alone, the second with the Send, whose
 * completion implies both).  The Send is signaled as before:
 * when it unmaps pages or the unsignaled WRs since the last signal
 * outgrow the batch.
 *
 * Caller holds the transport send lock, so re_id->qp is stable.
 * Returns 0 or the errno of the post.
 */
int frwr_send(struct rpcrdma_xprt *r_xprt, struct rpcrdma_req *req)
{
	struct rpcrdma_mkchunk *todo[ARRAY_SIZE(req->rl_mkc)];
	struct ib_send_wr *send_wr = &req->rl_wr;
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	struct ib_qp *qp = frwr_mk_qp(r_xprt);
	unsigned int i, n = 0, wrs = 1;
	int ret;

	for (i = 0; i < ARRAY_SIZE(req->rl_mkc); i++) {
		if (req->rl_mkc[i].mc_state != FRWR_MK_MAPPED)
			continue;
		todo[n++] = &req->rl_mkc[i];
		wrs += mrkit_io_nr_mrs(&req->rl_mkc[i].mc_io);
	}

	if (!req->rl_sendctx->sc_unmap_count && wrs <= ep->re_send_count) {
		send_wr->send_flags &= ~IB_SEND_SIGNALED;
		ep->re_send_count -= wrs;
	} else {
		send_wr->send_flags |= IB_SEND_SIGNALED;
		ep->re_send_count = min_t(unsigned int, ep->re_send_batch,
					  wrs - ep->re_send_count);
	}

	if (!n)
		return ib_post_send(qp, send_wr, NULL);
	for (i = 0; i < n; i++) {
		bool last = i == n - 1;

		/* Whatever happens, a drop or release will invalidate it. */
		todo[i]->mc_state = FRWR_MK_POSTED;
		ret = mrkit_io_post(&todo[i]->mc_io, qp, last ? send_wr : NULL,
				    NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * frwr_reminv - account the rkey the server invalidated with its reply
 * @rep: the received reply (rr_inv_rkey is valid)
 * @mrs: the request's registered handles
 *
 * The chunk that exposed the rkey is told (mrkit_io_remote_inv()); mrkit
 * then leaves that registration out of the local invalidation.  An rkey
 * that matches nothing live is refused by mrkit and changes nothing:
 * every registration is then invalidated locally.
 */
void frwr_reminv(struct rpcrdma_rep *rep, struct list_head *mrs)
{
	struct rpcrdma_mr *mr;

	list_for_each_entry(mr, mrs, mr_list) {
		if (!mr->mr_mkc || mr->mr_handle != rep->rr_inv_rkey)
			continue;
		mrkit_io_remote_inv(&mr->mr_mkc->mc_io, rep->rr_inv_rkey);
		return;
	}
}

/**
 * frwr_unmap_async - invalidate a request's registrations, then complete it
 * @r_xprt: controlling transport instance
 * @req: request whose reply arrived, with registrations
 *
 * Every chunk is finished with mrkit_io_invalidate(): LOCAL_INV for the
 * registrations the server did not invalidate, nothing for the one it
 * did.  The last chunk to finish completes the RPC, so the RPC consumer
 * sees the data only once every rkey is dead.  If an invalidation fails
 * the RPC is unpinned for retransmission and the connection is dropped.
 */
void frwr_unmap_async(struct rpcrdma_xprt *r_xprt, struct rpcrdma_req *req)
{
	struct ib_qp *qp = frwr_mk_qp(r_xprt);
	int i;

	req->rl_mkstatus = 0;
	atomic_set(&req->rl_mkpending, 1);
	for (i = 0; i < ARRAY_SIZE(req->rl_mkc); i++) {
		struct rpcrdma_mkchunk *c = &req->rl_mkc[i];

		if (c->mc_state != FRWR_MK_MAPPED &&
		    c->mc_state != FRWR_MK_POSTED)
			continue;
		r_xprt->rx_stats.local_inv_needed++;
		atomic_inc(&req->rl_mkpending);
		c->mc_state = FRWR_MK_INVALIDATING;
		if (mrkit_io_invalidate(&c->mc_io, qp)) {
			/* Nothing to invalidate and no callback. */
			c->mc_state = FRWR_MK_IDLE;
			atomic_dec(&req->rl_mkpending);
		}
	}
	if (atomic_dec_and_test(&req->rl_mkpending))
		frwr_mk_reply_ready(req);
}

/**
 * frwr_unmap_sync - invalidate a request's registrations and wait
 * @r_xprt: controlling transport instance
 * @req: request released without its reply processed
 *
 * Sleeps until every rkey of @req is dead and its pages are unmapped, so
 * the RPC consumer may touch the memory again and the send queue entries
 * are free.  A failed invalidation drops the connection.
 */
void frwr_unmap_sync(struct rpcrdma_xprt *r_xprt, struct rpcrdma_req *req)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	int i, err = 0;

	for (i = 0; i < ARRAY_SIZE(req->rl_mkc); i++) {
		if (READ_ONCE(req->rl_mkc[i].mc_state) == FRWR_MK_IDLE)
			continue;
		r_xprt->rx_stats.local_inv_needed++;
		err = frwr_mk_chunk_drop(ep, &req->rl_mkc[i], false) ?: err;
	}
	frwr_mk_free_handles(req, false);
	if (err)
		rpcrdma_force_disconnect(ep);
}

/**
 * frwr_wp_create - register the connection's Write chunk pad
 * @r_xprt: transport resources to use
 *
 * XDR_UNIT bytes in the endpoint that the server may write the pad of an
 * unaligned Write chunk into, registered once per connection with a
 * zero XID tag.
 *
 * Return 0 on success, negative errno on failure.
 */
int frwr_wp_create(struct rpcrdma_xprt *r_xprt)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	struct mrkit_io *io = &ep->re_mkwp_io;
	struct rpcrdma_mr *mr;
	struct mrkit_seg s;
	int ret;

	mr = rpcrdma_mr_get(r_xprt);
	if (!mr)
		return -EAGAIN;
	mr->mr_req = NULL;
	ep->re_write_pad_mr = mr;

	sg_init_one(&ep->re_mkwp_sg, ep->re_write_pad, XDR_UNIT);
	mrkit_io_init(io, ep->re_mkpool, MRKIT_PEER_WRITES, NULL);
	mrkit_io_set_tag(io, 0);
	ret = mrkit_io_map(io, &ep->re_mkwp_sg, 1, MRKIT_MAP_DMA |
			   MRKIT_MAP_IOVA_TAG | MRKIT_MAP_NO_SPLIT);
	if (ret != 1 || mrkit_io_segs(io, &s, 1) != 1)
		return -EIO;
	mr->mr_handle = s.key;
	mr->mr_length = s.length;
	mr->mr_offset = s.addr;
	mr->mr_nents = 1;
	mr->mr_dir = DMA_FROM_DEVICE;

	/* No Send follows: the REG_MR goes alone, ahead of the next Send. */
	return mrkit_io_post(io, frwr_mk_qp(r_xprt), NULL, NULL);
}
