// SPDX-License-Identifier: GPL-2.0-only
/*
 * nvme-rdma on mrkit: the memory registration of the kernel's NVMe/RDMA
 * host driver (drivers/nvme/host/rdma.c of Debian's linux-source-6.1),
 * replaced by mrkit calls.  This file is ours; the upstream file is taken
 * from the unpacked source package at build time, and scripts/ulp/splice.py
 * applies the directives below to a copy of it (printing what it replaced
 * and proving the rest identical).  Not compiled on its own.
 *
 * What changes, and nothing else:
 *  - per-queue pools: ib_mr_pool_init/destroy (and the PI pool) become
 *    mrkit_pool_create/destroy; the send queue and CQ are sized from
 *    mrkit_query_limits();
 *  - a request's registration: mrkit_io_map/segs, and mrkit_io_post()
 *    chains the REG_MR ahead of the command's SEND;
 *  - the rkey fence: the reply's remote invalidation is accounted with
 *    mrkit_io_remote_inv() and the request reaches blk-mq only from the
 *    done() callback of mrkit_io_complete(), once its rkey is dead - also
 *    when it is cancelled by error recovery without a reply, and when the
 *    post failed;
 *  - T10-PI: mrkit_pi_from_nvme + mrkit_io_map_pi, mrkit_io_check_pi.
 *    Integrity MRs need IBK_INTEGRITY_HANDOVER (mlx5); rxe and siw lack it,
 *    so this path builds but has not run here.
 */

/* mrkit-splice: file drivers/nvme/host/rdma.c */

/* mrkit-splice: add-after-includes */
#include <rdma/mrkit.h>

MODULE_IMPORT_NS(MRKIT);

/* mrkit-splice: replace-member nvme_rdma_request mr */
	struct mrkit_io		mio;
	atomic_t		fence;
	bool			inv_started;
	u16			pi_status;

/* mrkit-splice: delete-member nvme_rdma_request reg_wr */

/* mrkit-splice: delete-member nvme_rdma_request reg_cqe */

/* mrkit-splice: member nvme_rdma_queue after qp */
	struct mrkit_pool	*mr_pool;
	struct mrkit_pool	*sig_pool;

/* mrkit-splice: replace nvme_rdma_destroy_queue_ib */
static void nvme_rdma_destroy_queue_ib(struct nvme_rdma_queue *queue)
{
	struct nvme_rdma_device *dev = queue->device;

	if (!test_and_clear_bit(NVME_RDMA_Q_TR_READY, &queue->flags))
		return;

	/* Every request has passed its fence: the pools are idle. */
	mrkit_pool_destroy(queue->sig_pool);
	mrkit_pool_destroy(queue->mr_pool);
	queue->sig_pool = NULL;
	queue->mr_pool = NULL;

	/* Not rdma_destroy_qp(): the cm_id may be gone already. */
	ib_destroy_qp(queue->qp);
	nvme_rdma_free_cq(queue);
	nvme_rdma_free_ring(dev->dev, queue->rsp_ring, queue->queue_size,
			    sizeof(struct nvme_completion), DMA_FROM_DEVICE);
	nvme_rdma_dev_put(dev);
}

/* mrkit-splice: replace nvme_rdma_get_max_fr_pages */
static int nvme_rdma_get_max_fr_pages(struct ib_device *ibdev, bool pi_support)
{
	/*
	 * A command carries one keyed SGL, so a request is one MR: the
	 * largest request the device's page list allows, less a page for an
	 * unaligned head.
	 */
	struct mrkit_io_shape shape = {
		.max_io_bytes = SZ_4K,
		.extra_wrs = 1,
		.flags = pi_support ? MRKIT_POOL_INTEGRITY : 0,
		.map_flags = MRKIT_MAP_4K,
	};
	struct mrkit_limits lim;

	if (mrkit_query_limits(ibdev, &shape, &lim))
		return 0;
	return min_t(u32, NVME_RDMA_MAX_SEGMENTS, lim.max_pages_per_mr - 1);
}

/* mrkit-splice: replace nvme_rdma_create_queue_ib */
/* A queue's pools: one descriptor per request, PI ones on PI queues. */
static int nvme_rdma_create_pools(struct nvme_rdma_queue *queue, u32 pages)
{
	struct mrkit_pool_attr attr = {
		.depth = queue->queue_size,
		.pages_per_mr = pages,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool;
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "%s-q%d", dev_name(queue->ctrl->ctrl.device),
		 nvme_rdma_queue_idx(queue));
	attr.name = name;
	pool = mrkit_pool_create(queue->device->pd, &attr);
	if (IS_ERR(pool)) {
		ret = PTR_ERR(pool);
		goto fail;
	}
	queue->mr_pool = pool;
	if (!queue->pi_support)
		return 0;

	strlcat(name, "-pi", sizeof(name));
	attr.flags = MRKIT_POOL_INTEGRITY;
	pool = mrkit_pool_create(queue->device->pd, &attr);
	if (!IS_ERR(pool)) {
		queue->sig_pool = pool;
		return 0;
	}
	ret = PTR_ERR(pool);
	mrkit_pool_destroy(queue->mr_pool);
	queue->mr_pool = NULL;
fail:
	dev_err(queue->ctrl->ctrl.device,
		"failed to create the mrkit pools (%d descriptors, QID %d): %d\n",
		queue->queue_size, nvme_rdma_queue_idx(queue), ret);
	return ret;
}

static int nvme_rdma_create_queue_ib(struct nvme_rdma_queue *queue)
{
	struct mrkit_io_shape shape = {
		.extra_wrs = 1,			/* the command's SEND */
		.map_flags = MRKIT_MAP_4K,
	};
	const size_t rsp_len = sizeof(struct nvme_completion);
	struct mrkit_limits lim;
	struct ib_device *ibdev;
	u32 wrs;
	int ret;

	queue->device = nvme_rdma_find_get_device(queue->cm_id);
	if (!queue->device) {
		dev_err(queue->cm_id->device->dev.parent, "no client data found!\n");
		return -ECONNREFUSED;
	}
	ibdev = queue->device->dev;

	/* One descriptor per request: its pages plus an unaligned head. */
	shape.pages_per_mr = nvme_rdma_get_max_fr_pages(ibdev,
							queue->pi_support) + 1;
	shape.max_io_bytes = (shape.pages_per_mr - 1) * SZ_4K;
	ret = mrkit_query_limits(ibdev, &shape, &lim);
	wrs = lim.wrs_per_io;
	if (!ret && queue->pi_support) {
		shape.flags = MRKIT_POOL_INTEGRITY;
		ret = mrkit_query_limits(ibdev, &shape, &lim);
		wrs = max(wrs, lim.wrs_per_io);
	}
	if (ret)
		goto put_dev;

	/* A request's send WRs, its RECV, and one for ib_drain_qp(). */
	queue->cq_size = (wrs + 1) * queue->queue_size + 1;
	ret = nvme_rdma_create_cq(ibdev, queue);
	if (ret)
		goto put_dev;
	ret = nvme_rdma_create_qp(queue, wrs);
	if (ret)
		goto free_cq;
	queue->rsp_ring = nvme_rdma_alloc_ring(ibdev, queue->queue_size, rsp_len,
					       DMA_FROM_DEVICE);
	ret = queue->rsp_ring ? 0 : -ENOMEM;
	if (!ret)
		ret = nvme_rdma_create_pools(queue, shape.pages_per_mr);
	if (!ret) {
		set_bit(NVME_RDMA_Q_TR_READY, &queue->flags);
		return 0;
	}

	if (queue->rsp_ring)
		nvme_rdma_free_ring(ibdev, queue->rsp_ring, queue->queue_size,
				    rsp_len, DMA_FROM_DEVICE);
	rdma_destroy_qp(queue->cm_id);
free_cq:
	nvme_rdma_free_cq(queue);
put_dev:
	nvme_rdma_dev_put(queue->device);
	return ret;
}

/* mrkit-splice: replace __nvme_rdma_stop_queue */
static void __nvme_rdma_stop_queue(struct nvme_rdma_queue *queue)
{
	rdma_disconnect(queue->cm_id);
	ib_drain_qp(queue->qp);
	/* No WR references a descriptor now: mrkit may replace parked ones. */
	if (queue->mr_pool)
		mrkit_pool_qp_drained(queue->mr_pool);
	if (queue->sig_pool)
		mrkit_pool_qp_drained(queue->sig_pool);
}

/* mrkit-splice: delete nvme_rdma_memreg_done */

/* mrkit-splice: delete nvme_rdma_inv_rkey_done */

/* mrkit-splice: replace nvme_rdma_inv_rkey */
/*
 * The rkey fence of a request (req->fence).  A request with a registration
 * holds one more reference, dropped by done() once every rkey it exposed
 * is dead.  A request completed without its reply (cancelled by error
 * recovery) is deferred until then.
 */
enum {
	NVME_RDMA_FENCE_NONE,		/* no registration outstanding */
	NVME_RDMA_FENCE_LIVE,		/* registered; done() still to come */
	NVME_RDMA_FENCE_DEFERRED,	/* and the completion waits for it */
};

static void nvme_rdma_fence_arm(struct nvme_rdma_request *req)
{
	req->inv_started = false;
	atomic_set(&req->fence, NVME_RDMA_FENCE_LIVE);
	refcount_inc(&req->ref);
}

/* The fence passed (or nothing was left to fence): release the request. */
static void nvme_rdma_fence_passed(struct nvme_rdma_request *req)
{
	switch (atomic_xchg(&req->fence, NVME_RDMA_FENCE_NONE)) {
	case NVME_RDMA_FENCE_LIVE:
		nvme_rdma_end_request(req);
		break;
	case NVME_RDMA_FENCE_DEFERRED:
		nvme_rdma_complete_rq(blk_mq_rq_from_pdu(req));
		break;
	}
}

static void nvme_rdma_fence_done(struct mrkit_io *io, int status)
{
	struct nvme_rdma_request *req =
		container_of(io, struct nvme_rdma_request, mio);

	if (status == -EILSEQ) {
		/* mrkit found a PI error the reply's check had not seen. */
		if (!req->pi_status)
			req->pi_status = NVME_SC_INVALID_PI;
	} else if (status) {
		nvme_rdma_error_recovery(req->queue->ctrl);
	}
	nvme_rdma_fence_passed(req);
}

/*
 * Invalidate what the peer did not: done() ends the fence (maybe before
 * mrkit_io_complete() returns, so nothing of @req is touched after it).
 * When mrkit has nothing left to invalidate, its descriptors (if any) go
 * back here.
 */
static void nvme_rdma_inv_rkey(struct nvme_rdma_queue *queue,
			       struct nvme_rdma_request *req)
{
	req->inv_started = true;
	if (!mrkit_io_complete(&req->mio, queue->qp))
		return;
	mrkit_io_release(&req->mio, 0);
	nvme_rdma_fence_passed(req);
}

/* mrkit-splice: replace nvme_rdma_unmap_data */
static void nvme_rdma_unmap_data(struct nvme_rdma_queue *queue,
				 struct request *rq)
{
	if (!blk_rq_nr_phys_segments(rq))
		return;

	/* The descriptors went back to their pool when the fence passed. */
	nvme_rdma_dma_unmap_req(queue->device->dev, rq);
}

/* mrkit-splice: replace nvme_rdma_map_sg_fr */
/* Advertise a request's registration in the command's keyed SGL. */
static int nvme_rdma_set_sg_mrkit(struct nvme_rdma_request *req,
				  struct nvme_keyed_sgl_desc *sg, u8 type)
{
	struct mrkit_seg seg;
	int ret;

	ret = mrkit_io_segs(&req->mio, &seg, 1);
	if (unlikely(ret < 0)) {
		mrkit_io_release(&req->mio, 0);
		return ret;
	}
	sg->addr = cpu_to_le64(seg.addr);
	put_unaligned_le24(seg.length, sg->length);
	put_unaligned_le32(seg.key, sg->key);
	sg->type = type;
	nvme_rdma_fence_arm(req);
	return 0;
}

static enum mrkit_dir nvme_rdma_peer_access(struct nvme_rdma_request *req)
{
	if (rq_data_dir(blk_mq_rq_from_pdu(req)) == WRITE)
		return MRKIT_PEER_READS;
	return MRKIT_PEER_WRITES;
}

static int nvme_rdma_map_sg_fr(struct nvme_rdma_queue *queue,
			       struct nvme_rdma_request *req, struct nvme_command *c,
			       int count)
{
	int ret;

	mrkit_io_init(&req->mio, queue->mr_pool, nvme_rdma_peer_access(req),
		      nvme_rdma_fence_done);
	/* 4 KiB pages: the controller's page size and the virt boundary. */
	ret = mrkit_io_map(&req->mio, req->data_sgl.sg_table.sgl, count,
			   MRKIT_MAP_4K | MRKIT_MAP_NO_SPLIT);
	if (unlikely(ret < 0))
		return ret;

	return nvme_rdma_set_sg_mrkit(req, &c->common.dptr.ksgl,
				      (NVME_KEY_SGL_FMT_DATA_DESC << 4) |
				      NVME_SGL_FMT_INVALIDATE);
}

/* mrkit-splice: delete nvme_rdma_set_sig_domain */

/* mrkit-splice: delete nvme_rdma_set_sig_attrs */

/* mrkit-splice: delete nvme_rdma_set_prot_checks */

/* mrkit-splice: delete nvme_rdma_sig_done */

/* mrkit-splice: replace nvme_rdma_map_sg_pi */
static int nvme_rdma_map_sg_pi(struct nvme_rdma_queue *queue,
			       struct nvme_rdma_request *req, struct nvme_command *c,
			       int count, int pi_count)
{
	struct request *rq = blk_mq_rq_from_pdu(req);
	struct blk_integrity *bi = blk_get_integrity(rq->bio->bi_bdev->bd_disk);
	struct nvme_ns *ns = rq->q->queuedata;
	u16 control = le16_to_cpu(c->rw.control);
	struct scatterlist *prot = NULL;
	struct mrkit_pi pi;
	int ret;

	ret = mrkit_pi_from_nvme(&pi, rq_data_dir(rq) == WRITE, control,
				 ns->pi_type, 1 << bi->interval_exp,
				 le32_to_cpu(c->rw.reftag),
				 le16_to_cpu(c->rw.apptag),
				 le16_to_cpu(c->rw.appmask),
				 le64_to_cpu(c->rw.slba));
	if (ret)
		return ret;
	/* With PRACT the HCA inserts or strips the PI, not the controller. */
	if (control & NVME_RW_PRINFO_PRACT)
		c->rw.control = cpu_to_le16(control & ~NVME_RW_PRINFO_PRACT);
	if (blk_integrity_rq(rq))
		prot = req->metadata_sgl->sg_table.sgl;

	mrkit_io_init(&req->mio, queue->sig_pool, nvme_rdma_peer_access(req),
		      nvme_rdma_fence_done);
	ret = mrkit_io_map_pi(&req->mio, req->data_sgl.sg_table.sgl, count,
			      prot, pi_count, &pi);
	if (unlikely(ret < 0))
		return ret;

	return nvme_rdma_set_sg_mrkit(req, &c->common.dptr.ksgl,
				      NVME_KEY_SGL_FMT_DATA_DESC << 4);
}

/* mrkit-splice: replace nvme_rdma_post_send */
static int nvme_rdma_post_send(struct nvme_rdma_queue *queue,
			       struct nvme_rdma_qe *qe, struct ib_sge *sge, u32 num_sge,
			       struct mrkit_io *io)
{
	struct ib_send_wr wr = {
		.wr_cqe = &qe->cqe,
		.sg_list = sge,
		.num_sge = num_sge,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	sge->addr = qe->dma;
	sge->length = sizeof(struct nvme_command);
	sge->lkey = queue->device->pd->local_dma_lkey;

	/* A registered request: mrkit posts its REG_MR ahead of the SEND. */
	if (io)
		ret = mrkit_io_post(io, queue->qp, &wr, NULL);
	else
		ret = ib_post_send(queue->qp, &wr, NULL);
	if (unlikely(ret))
		dev_err(queue->ctrl->ctrl.device,
			"%s failed with error code %d\n", __func__, ret);
	return ret;
}

/* mrkit-splice: replace nvme_rdma_process_nvme_rsp */
static void nvme_rdma_check_pi_status(struct nvme_rdma_request *req);

static void nvme_rdma_process_nvme_rsp(struct nvme_rdma_queue *queue,
				       struct nvme_completion *cqe, struct ib_wc *wc)
{
	struct nvme_rdma_request *req;
	struct request *rq;

	rq = nvme_find_rq(nvme_rdma_tagset(queue), cqe->command_id);
	if (unlikely(!rq)) {
		dev_err(queue->ctrl->ctrl.device, "got bad command_id %#x on QP %#x\n",
			cqe->command_id, queue->qp->qp_num);
		nvme_rdma_error_recovery(queue->ctrl);
		return;
	}
	req = blk_mq_rq_to_pdu(rq);
	req->status = cqe->status;
	req->result = cqe->result;

	if (atomic_read(&req->fence) == NVME_RDMA_FENCE_LIVE) {
		if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
		    mrkit_io_remote_inv(&req->mio, wc->ex.invalidate_rkey))
			goto bogus;
		if (req->use_sig_mr)
			nvme_rdma_check_pi_status(req);
		nvme_rdma_inv_rkey(queue, req);
	} else if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		goto bogus;
	}
	nvme_rdma_end_request(req);
	return;

bogus:
	/* mrkit still invalidates every rkey of the request itself. */
	dev_err(queue->ctrl->ctrl.device,
		"Bogus remote invalidation for rkey %#x\n",
		wc->ex.invalidate_rkey);
	nvme_rdma_error_recovery(queue->ctrl);
	if (atomic_read(&req->fence) == NVME_RDMA_FENCE_LIVE)
		nvme_rdma_inv_rkey(queue, req);
	nvme_rdma_end_request(req);
}

/* mrkit-splice: replace nvme_rdma_queue_rq */
static blk_status_t nvme_rdma_queue_rq(struct blk_mq_hw_ctx *hctx,
				       const struct blk_mq_queue_data *bd)
{
	struct nvme_rdma_queue *queue = hctx->driver_data;
	struct nvme_ns *ns = hctx->queue->queuedata;
	struct nvme_ctrl *nctrl = &queue->ctrl->ctrl;
	const size_t cmd_len = sizeof(struct nvme_command);
	struct request *rq = bd->rq;
	struct nvme_rdma_request *req = blk_mq_rq_to_pdu(rq);
	struct nvme_command *c = nvme_req(rq)->cmd;
	struct ib_device *dev;
	bool registered;
	blk_status_t ret;
	int err;

	WARN_ON_ONCE(rq->tag < 0);
	if (!nvme_check_ready(nctrl, rq, test_bit(NVME_RDMA_Q_LIVE, &queue->flags)))
		return nvme_fail_nonready_command(nctrl, rq);

	dev = queue->device->dev;
	req->sqe.dma = ib_dma_map_single(dev, req->sqe.data, cmd_len,
					 DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(dev, req->sqe.dma)))
		return BLK_STS_RESOURCE;
	ib_dma_sync_single_for_cpu(dev, req->sqe.dma, cmd_len, DMA_TO_DEVICE);

	ret = nvme_setup_cmd(ns, rq);
	if (ret)
		goto unmap_cmd;
	nvme_start_request(rq);

	req->use_sig_mr = IS_ENABLED(CONFIG_BLK_DEV_INTEGRITY) &&
			  queue->pi_support && nvme_ns_has_pi(ns) &&
			  (c->common.opcode == nvme_cmd_read ||
			   c->common.opcode == nvme_cmd_write);
	atomic_set(&req->fence, NVME_RDMA_FENCE_NONE);
	req->pi_status = 0;

	err = nvme_rdma_map_data(queue, rq, c);
	if (unlikely(err < 0)) {
		dev_err(nctrl->device, "Failed to map data (%d)\n", err);
		goto fail;
	}

	req->sqe.cqe.done = nvme_rdma_send_done;
	ib_dma_sync_single_for_device(dev, req->sqe.dma, cmd_len, DMA_TO_DEVICE);
	registered = atomic_read(&req->fence) == NVME_RDMA_FENCE_LIVE;
	err = nvme_rdma_post_send(queue, &req->sqe, req->sge, req->num_sge,
				  registered ? &req->mio : NULL);
	if (likely(!err))
		return BLK_STS_OK;
	if (registered) {
		/*
		 * The REG_MR may have reached the device: neither the SEND
		 * nor a reply completes, and the request ends with a path
		 * error (to be retried) once its rkey is dead.
		 */
		req->status = cpu_to_le16(NVME_SC_HOST_PATH_ERROR << 1);
		refcount_set(&req->ref, 1);
		nvme_rdma_inv_rkey(queue, req);
		return BLK_STS_OK;
	}
	nvme_rdma_unmap_data(queue, rq);

fail:
	if (err == -EIO) {
		ib_dma_unmap_single(dev, req->sqe.dma, cmd_len, DMA_TO_DEVICE);
		return nvme_host_path_error(rq);
	}
	nvme_cleanup_cmd(rq);
	ret = (err == -ENOMEM || err == -EAGAIN) ? BLK_STS_RESOURCE :
						   BLK_STS_IOERR;
unmap_cmd:
	ib_dma_unmap_single(dev, req->sqe.dma, cmd_len, DMA_TO_DEVICE);
	return ret;
}

/* mrkit-splice: replace nvme_rdma_check_pi_status */
static void nvme_rdma_check_pi_status(struct nvme_rdma_request *req)
{
	struct mrkit_pi_result res;
	int ret;

	ret = mrkit_io_check_pi(&req->mio, &res);
	if (!ret)
		return;
	req->pi_status = res.nvme_status;
	if (ret == -EILSEQ)
		pr_err("PI error found type %d expected 0x%x vs actual 0x%x\n",
		       res.type, res.expected, res.actual);
	else
		pr_err("mrkit_io_check_pi failed, ret %d\n", ret);
}

/* mrkit-splice: replace nvme_rdma_complete_rq */
static void nvme_rdma_complete_rq(struct request *rq)
{
	struct nvme_rdma_request *req = blk_mq_rq_to_pdu(rq);
	struct nvme_rdma_queue *queue = req->queue;
	struct ib_device *ibdev = queue->device->dev;

	/*
	 * Cancelled with its rkey still live (no reply, or its invalidation
	 * still running): the request completes from done(), once the rkey
	 * is dead.
	 */
	if (atomic_cmpxchg(&req->fence, NVME_RDMA_FENCE_LIVE,
			   NVME_RDMA_FENCE_DEFERRED) == NVME_RDMA_FENCE_LIVE) {
		if (!req->inv_started)
			nvme_rdma_inv_rkey(queue, req);
		return;
	}

	if (req->pi_status)
		nvme_req(rq)->status = req->pi_status;
	nvme_rdma_unmap_data(queue, rq);
	ib_dma_unmap_single(ibdev, req->sqe.dma, sizeof(struct nvme_command),
			    DMA_TO_DEVICE);
	nvme_complete_rq(rq);
}
