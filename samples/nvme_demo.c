// SPDX-License-Identifier: GPL-2.0-only
/*
 * A minimal NVMe over Fabrics (RDMA transport) initiator on mrkit.
 *
 * Written from the NVMe over Fabrics and NVMe/RDMA transport specifications
 * and the public headers (include/linux/nvme.h, nvme-rdma.h).  At load it
 * connects an admin and an I/O queue to traddr:4420 with in-kernel
 * rdma_cm (NVMe/RDMA private data), sends Fabrics Connect, enables the
 * controller with Property Set/Get, reads Identify Controller and
 * Namespace into mrkit registrations the target RDMA-WRITEs, then writes
 * and reads back transfers from 512 bytes to the largest the controller
 * and one MR allow, page-aligned and not, several in flight at once.
 * Every data buffer is an mrkit registration advertised in a keyed SGL
 * data block descriptor: Writes are RDMA-READ by the target and
 * invalidated locally; Reads ask for remote invalidation, so the target
 * answers with SEND_WITH_INV and mrkit matches the rkey.  Every byte read
 * back is compared with what was written.  The module prints a report and
 * "mrkit_nvme_demo: RESULT PASS" or "RESULT FAIL"; it then stays loaded
 * until removed.
 *
 * Recovery: any failure ends the scenario; everything is torn down in
 * reverse order and every descriptor must be back in its pool.
 * Serialization: one thread (module init) drives the scenario; completion
 * handlers (softirq) only complete requests.
 */

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/nvme.h>
#include <linux/nvme-rdma.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uuid.h>
#include <rdma/mrkit.h>
#include <rdma/rdma_cm.h>

MODULE_IMPORT_NS(MRKIT);

static char *traddr = "10.99.0.1";
module_param(traddr, charp, 0444);
MODULE_PARM_DESC(traddr, "target IPv4 address (guest-only)");
static char *subnqn = "nqn.2014-08.org.example:mrkit";
module_param(subnqn, charp, 0444);
MODULE_PARM_DESC(subnqn, "subsystem NQN");
static int no_inv;
module_param(no_inv, int, 0444);
MODULE_PARM_DESC(no_inv, "Reads without the remote-invalidation subtype");

#define DEMO_QD		8	/* commands in flight per batch */
#define DEMO_QSIZE	32
#define DEMO_TMO	(10 * HZ)

struct demo_queue;

struct demo_req {
	struct demo_queue	*q;
	struct mrkit_io		io;
	struct nvme_command	*cmd;	/* DMA-mapped capsule */
	u64			cmd_dma;
	struct ib_cqe		send_cqe;
	struct ib_sge		sge;
	struct ib_send_wr	send;
	struct completion	done;
	atomic_t		refs;	/* send, reply, invalidation */
	u16			status;
	union nvme_result	result;
	bool			busy;
	int			inv_err;
};

struct demo_queue {
	int			qid;
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct mrkit_pool	*pool;
	struct completion	cm_done;
	int			cm_err;
	struct demo_req		reqs[DEMO_QSIZE];
	struct nvme_completion	*rsp;	/* DEMO_QSIZE receive buffers */
	u64			rsp_dma;
	struct ib_cqe		recv_cqe[DEMO_QSIZE];
	u64			remote_inv, bogus;
	bool			dead;	/* disconnected or the QP failed */
};

static struct demo_queue *admin, *ioq;
static uuid_t demo_hostid;
static struct {
	u64 ios, bytes, regs;
	u32 high_water;
} report;

static void demo_req_put(struct demo_req *r)
{
	if (atomic_dec_and_test(&r->refs))
		complete(&r->done);
}

static void demo_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct demo_req *r = container_of(wc->wr_cqe, struct demo_req,
					  send_cqe);

	if (wc->status != IB_WC_SUCCESS)
		r->status = 0xffff;
	demo_req_put(r);
}

static void demo_io_done(struct mrkit_io *io, int status)
{
	struct demo_req *r = container_of(io, struct demo_req, io);

	r->inv_err = status;
	demo_req_put(r);
}

static int demo_post_recv(struct demo_queue *q, int i)
{
	struct ib_sge sge = {
		.addr = q->rsp_dma + i * sizeof(struct nvme_completion),
		.length = sizeof(struct nvme_completion),
		.lkey = q->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &q->recv_cqe[i],
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(q->id->qp, &wr, NULL);
}

static void demo_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct demo_queue *q = cq->cq_context;
	int i = wc->wr_cqe - q->recv_cqe;
	struct nvme_completion *c = &q->rsp[i];
	struct demo_req *r;

	if (wc->status != IB_WC_SUCCESS)
		return;
	ib_dma_sync_single_for_cpu(q->id->device, q->rsp_dma,
				   DEMO_QSIZE * sizeof(*c), DMA_FROM_DEVICE);
	if (c->command_id >= DEMO_QSIZE || !q->reqs[c->command_id].busy) {
		pr_err("mrkit_nvme_demo: q%d: reply for unknown command %u\n",
		       q->qid, c->command_id);
		demo_post_recv(q, i);
		return;
	}
	r = &q->reqs[c->command_id];
	r->status = le16_to_cpu(c->status) >> 1;
	r->result = c->result;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		if (mrkit_io_remote_inv(&r->io, wc->ex.invalidate_rkey)) {
			q->bogus++;
			r->status = 0xfffe;
		} else {
			q->remote_inv++;
		}
	}
	demo_post_recv(q, i);
	/* The fence: the request ends once every rkey it exposed is dead. */
	if (mrkit_io_nr_mrs(&r->io) && mrkit_io_complete(&r->io, q->id->qp))
		demo_req_put(r);	/* no done() will come */
	demo_req_put(r);
}

static int demo_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct demo_queue *q = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ESTABLISHED:
		q->cm_err = 0;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		WRITE_ONCE(q->dead, true);
		pr_info("mrkit_nvme_demo: q%d: disconnected by the target\n",
			q->qid);
		return 0;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		q->cm_err = ev->status ?: -ECONNREFUSED;
		pr_err("mrkit_nvme_demo: q%d: CM event %d status %d\n", q->qid,
		       ev->event, ev->status);
		break;
	}
	complete(&q->cm_done);
	return 0;
}

static int demo_cm_wait(struct demo_queue *q)
{
	if (!wait_for_completion_timeout(&q->cm_done, DEMO_TMO))
		return -ETIMEDOUT;
	reinit_completion(&q->cm_done);
	return q->cm_err;
}

static void demo_queue_free(struct demo_queue *q)
{
	int i;

	if (!q)
		return;
	if (q->id && q->id->qp) {
		rdma_disconnect(q->id);
		/*
		 * Requests cut off by a lost connection still own exposed
		 * rkeys: complete them (the QP is in error, so mrkit parks
		 * what it cannot invalidate), drain, then let mrkit replace
		 * the parked descriptors.
		 */
		for (i = 0; i < DEMO_QSIZE; i++)
			if (q->reqs[i].busy && mrkit_io_nr_mrs(&q->reqs[i].io))
				mrkit_io_complete(&q->reqs[i].io, q->id->qp);
		ib_drain_qp(q->id->qp);
		mrkit_pool_qp_drained(q->pool);
		rdma_destroy_qp(q->id);
	}
	for (i = 0; i < DEMO_QSIZE; i++) {
		if (q->reqs[i].cmd_dma)
			ib_dma_unmap_single(q->id->device, q->reqs[i].cmd_dma,
					    sizeof(struct nvme_command),
					    DMA_TO_DEVICE);
		kfree(q->reqs[i].cmd);
	}
	if (q->rsp_dma)
		ib_dma_unmap_single(q->id->device, q->rsp_dma,
				    DEMO_QSIZE * sizeof(*q->rsp),
				    DMA_FROM_DEVICE);
	kfree(q->rsp);
	if (q->pool) {
		struct mrkit_pool_stats st;

		/* Replacements of retired descriptors run in the background. */
		for (i = 0; i < 50; i++) {
			mrkit_pool_get_stats(q->pool, &st);
			if (!st.in_use && !st.stale)
				break;
			msleep(20);
		}
		pr_info("mrkit_nvme_demo: q%d: teardown: %u descriptors in use, %u stale, %llu replaced\n",
			q->qid, st.in_use, st.stale, st.stale_replaced);
		if (st.in_use)
			pr_err("mrkit_nvme_demo: q%d: %u descriptors not back\n",
			       q->qid, st.in_use);
		mrkit_pool_destroy(q->pool);
	}
	if (q->cq)
		ib_free_cq(q->cq);
	if (q->pd)
		ib_dealloc_pd(q->pd);
	if (q->id)
		rdma_destroy_id(q->id);
	kfree(q);
}

static struct demo_queue *demo_queue_connect(int qid)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(NVME_RDMA_IP_PORT) };
	struct nvme_rdma_cm_req priv = {
		.recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0),
		.qid = cpu_to_le16(qid),
		.hrqsize = cpu_to_le16(DEMO_QSIZE),
		.hsqsize = cpu_to_le16(DEMO_QSIZE - 1),
	};
	struct mrkit_pool_attr pattr = {
		.name = qid ? "nvme_demo_q1" : "nvme_demo_q0",
		.depth = DEMO_QSIZE, .max_depth = 2 * DEMO_QSIZE,
		.node = NUMA_NO_NODE,
	};
	struct rdma_conn_param param = {};
	struct ib_qp_init_attr qpa = {};
	struct demo_queue *q;
	int i, ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->qid = qid;
	init_completion(&q->cm_done);
	if (!in4_pton(traddr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL)) {
		ret = -EINVAL;
		goto out;
	}
	q->id = rdma_create_id(&init_net, demo_cm_handler, q, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(q->id)) {
		ret = PTR_ERR(q->id);
		q->id = NULL;
		goto out;
	}
	ret = rdma_resolve_addr(q->id, NULL, (struct sockaddr *)&sin, 5000) ?:
	      demo_cm_wait(q) ?:
	      rdma_resolve_route(q->id, 5000) ?: demo_cm_wait(q);
	if (ret)
		goto out;
	q->pd = ib_alloc_pd(q->id->device, 0);
	if (IS_ERR(q->pd)) {
		ret = PTR_ERR(q->pd);
		q->pd = NULL;
		goto out;
	}
	/* One MR per command: the largest page list the device allows. */
	pattr.pages_per_mr = min_t(u32, MRKIT_MAX_PAGES_PER_MR,
				   q->id->device->attrs.max_fast_reg_page_list_len);
	q->pool = mrkit_pool_create(q->pd, &pattr);
	if (IS_ERR(q->pool)) {
		ret = PTR_ERR(q->pool);
		q->pool = NULL;
		goto out;
	}
	q->cq = ib_alloc_cq(q->id->device, q, 4 * DEMO_QSIZE + 8, 0,
			    IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		goto out;
	}
	qpa.send_cq = q->cq;
	qpa.recv_cq = q->cq;
	qpa.qp_type = IB_QPT_RC;
	qpa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qpa.cap.max_send_wr = 3 * DEMO_QSIZE + 1;
	qpa.cap.max_recv_wr = DEMO_QSIZE + 1;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(q->id, q->pd, &qpa);
	if (ret)
		goto out;

	q->rsp = kcalloc(DEMO_QSIZE, sizeof(*q->rsp), GFP_KERNEL);
	if (!q->rsp) {
		ret = -ENOMEM;
		goto out;
	}
	q->rsp_dma = ib_dma_map_single(q->id->device, q->rsp,
				       DEMO_QSIZE * sizeof(*q->rsp),
				       DMA_FROM_DEVICE);
	for (i = 0; i < DEMO_QSIZE; i++) {
		struct demo_req *r = &q->reqs[i];

		q->recv_cqe[i].done = demo_recv_done;
		r->q = q;
		r->send_cqe.done = demo_send_done;
		r->cmd = kzalloc(sizeof(*r->cmd), GFP_KERNEL);
		if (!r->cmd) {
			ret = -ENOMEM;
			goto out;
		}
		r->cmd_dma = ib_dma_map_single(q->id->device, r->cmd,
					       sizeof(*r->cmd), DMA_TO_DEVICE);
		init_completion(&r->done);
		ret = demo_post_recv(q, i);
		if (ret)
			goto out;
	}

	/* The host must answer the target's RDMA READs of command data. */
	param.responder_resources = q->id->device->attrs.max_qp_rd_atom;
	param.initiator_depth = 0;
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	ret = rdma_connect(q->id, &param) ?: demo_cm_wait(q);
	if (ret)
		goto out;
	return q;
out:
	pr_err("mrkit_nvme_demo: q%d: connect failed: %d\n", qid, ret);
	demo_queue_free(q);
	return ERR_PTR(ret);
}

/*
 * Submit a command; @sg (nents DMA-unmapped entries) is registered with
 * mrkit and advertised in a keyed SGL descriptor.  Waits for nothing.
 */
static int demo_submit(struct demo_queue *q, int tag, struct nvme_command *c,
		       struct scatterlist *sg, int nents, enum mrkit_dir dir,
		       bool invalidate)
{
	struct demo_req *r = &q->reqs[tag];
	struct mrkit_seg seg;
	int ret;

	c->common.command_id = tag;
	mrkit_io_init(&r->io, q->pool, dir, demo_io_done);
	r->status = 0;
	r->inv_err = 0;
	reinit_completion(&r->done);
	atomic_set(&r->refs, 2);	/* the send and the reply */
	if (sg) {
		ret = mrkit_io_map_seg(&r->io, sg, nents, MRKIT_MAP_DMA, &seg);
		if (ret < 0)
			return ret;
		atomic_inc(&r->refs);	/* the invalidation */
		c->common.flags = NVME_CMD_SGL_METABUF;
		c->common.dptr.ksgl.addr = cpu_to_le64(seg.addr);
		put_unaligned_le24(seg.length, c->common.dptr.ksgl.length);
		put_unaligned_le32(seg.key, c->common.dptr.ksgl.key);
		c->common.dptr.ksgl.type = NVME_KEY_SGL_FMT_DATA_DESC << 4 |
			(invalidate ? NVME_SGL_FMT_INVALIDATE :
				      NVME_SGL_FMT_ADDRESS);
		report.regs++;
	} else {
		/* No data: a null keyed SGL data block descriptor. */
		c->common.flags = NVME_CMD_SGL_METABUF;
		memset(&c->common.dptr, 0, sizeof(c->common.dptr));
		c->common.dptr.ksgl.type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
	}
	memcpy(r->cmd, c, sizeof(*c));
	ib_dma_sync_single_for_device(q->id->device, r->cmd_dma,
				      sizeof(*c), DMA_TO_DEVICE);
	r->sge.addr = r->cmd_dma;
	r->sge.length = sizeof(*c);
	r->sge.lkey = q->pd->local_dma_lkey;
	r->send.next = NULL;
	r->send.wr_cqe = &r->send_cqe;
	r->send.sg_list = &r->sge;
	r->send.num_sge = 1;
	r->send.opcode = IB_WR_SEND;
	r->send.send_flags = IB_SEND_SIGNALED;
	r->busy = true;
	if (sg)
		ret = mrkit_io_post(&r->io, q->id->qp, &r->send, NULL);
	else
		ret = ib_post_send(q->id->qp, &r->send, NULL);
	if (ret)
		r->busy = false;
	return ret;
}

static int demo_wait(struct demo_queue *q, int tag)
{
	struct demo_req *r = &q->reqs[tag];
	unsigned long end = jiffies + DEMO_TMO;

	while (!wait_for_completion_timeout(&r->done, HZ / 10)) {
		if (READ_ONCE(q->dead) || time_after(jiffies, end)) {
			pr_err("mrkit_nvme_demo: q%d: command %d: %s\n", q->qid,
			       tag, q->dead ? "connection lost" : "timed out");
			return -ENOTCONN;
		}
	}
	r->busy = false;
	if (r->status || r->inv_err) {
		pr_err("mrkit_nvme_demo: q%d: command %d: status 0x%x, invalidation %d\n",
		       q->qid, tag, r->status, r->inv_err);
		return -EIO;
	}
	return 0;
}

static int demo_exec(struct demo_queue *q, struct nvme_command *c,
		     void *buf, size_t len, enum mrkit_dir dir)
{
	struct scatterlist sg;
	int ret;

	if (buf)
		sg_init_one(&sg, buf, len);
	ret = demo_submit(q, 0, c, buf ? &sg : NULL, 1, dir, false);
	return ret ?: demo_wait(q, 0);
}

static int demo_connect(struct demo_queue *q, u16 cntlid, u16 *out_cntlid)
{
	struct nvmf_connect_data *data;
	struct nvme_command c = {};
	int ret;

	data = kzalloc(sizeof(*data), GFP_KERNEL);
	if (!data)
		return -ENOMEM;
	/* One host: the same host ID and NQN on every queue. */
	if (uuid_is_null(&demo_hostid))
		uuid_gen(&demo_hostid);
	uuid_copy(&data->hostid, &demo_hostid);
	data->cntlid = cpu_to_le16(cntlid);
	strscpy(data->subsysnqn, subnqn, NVMF_NQN_SIZE);
	snprintf(data->hostnqn, NVMF_NQN_SIZE,
		 "nqn.2014-08.org.nvmexpress:uuid:%pUb", &data->hostid);
	c.connect.opcode = nvme_fabrics_command;
	c.connect.fctype = nvme_fabrics_type_connect;
	c.connect.recfmt = 0;
	c.connect.qid = cpu_to_le16(q->qid);
	c.connect.sqsize = cpu_to_le16(DEMO_QSIZE - 1);
	/* The target RDMA-READs the connect data from an mrkit registration. */
	ret = demo_exec(q, &c, data, sizeof(*data), MRKIT_PEER_READS);
	if (!ret && out_cntlid)
		*out_cntlid = le16_to_cpu(q->reqs[0].result.u16);
	kfree(data);
	return ret;
}

static int demo_prop(struct demo_queue *q, bool set, u32 off, u64 *val)
{
	struct nvme_command c = {};
	int ret;

	c.prop_set.opcode = nvme_fabrics_command;
	c.prop_set.fctype = set ? nvme_fabrics_type_property_set :
				  nvme_fabrics_type_property_get;
	c.prop_set.offset = cpu_to_le32(off);
	c.prop_set.attrib = off == NVME_REG_CAP;	/* 8 bytes */
	if (set)
		c.prop_set.value = cpu_to_le64(*val);
	ret = demo_exec(q, &c, NULL, 0, 0);
	if (!ret && !set)
		*val = le64_to_cpu(q->reqs[0].result.u64);
	return ret;
}

static int demo_identify(struct demo_queue *q, u8 cns, u32 nsid, void *buf)
{
	struct nvme_command c = {};

	c.identify.opcode = nvme_admin_identify;
	c.identify.cns = cns;
	c.identify.nsid = cpu_to_le32(nsid);
	/* The target RDMA-WRITEs the data into an mrkit registration. */
	return demo_exec(q, &c, buf, NVME_IDENTIFY_DATA_SIZE,
			 MRKIT_PEER_WRITES);
}

/* Write then read back @n transfers of @len bytes at @off in @bufs. */
static int demo_rw_batch(u8 **wbuf, u8 **rbuf, int n, u32 off, u32 len,
			 u32 lba_shift, u64 slba, u32 seed)
{
	struct scatterlist sg[DEMO_QD];
	struct nvme_command c;
	int i, j, sent, ret = 0;

	for (j = 0; j < 2 && !ret; j++) {
		bool write = j == 0;

		for (sent = 0, i = 0; i < n; i++) {
			u32 k;

			if (write)
				for (k = 0; k < len; k++)
					wbuf[i][off + k] =
						(u8)(seed + i * 7 + k * 13 + (k >> 9));
			else
				memset(rbuf[i] + off, 0, len);
			memset(&c, 0, sizeof(c));
			c.rw.opcode = write ? nvme_cmd_write : nvme_cmd_read;
			c.rw.nsid = cpu_to_le32(1);
			c.rw.slba = cpu_to_le64(slba + i * (len >> lba_shift));
			c.rw.length = cpu_to_le16((len >> lba_shift) - 1);
			sg_init_one(&sg[i], (write ? wbuf[i] : rbuf[i]) + off,
				    len);
			ret = demo_submit(ioq, i, &c, &sg[i], 1,
					  write ? MRKIT_PEER_READS :
						  MRKIT_PEER_WRITES,
					  !write && !no_inv);
			if (ret)
				break;
			sent++;
		}
		/* Several in flight: now wait for all of them. */
		for (i = 0; i < sent; i++)
			ret = demo_wait(ioq, i) ?: ret;
	}
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (memcmp(wbuf[i] + off, rbuf[i] + off, len)) {
			pr_err("mrkit_nvme_demo: read-back mismatch: %u bytes at offset %u, I/O %d\n",
			       len, off, i);
			return -EILSEQ;
		}
		report.ios += 2;
		report.bytes += len;
	}
	return 0;
}

static void demo_pool_report(struct demo_queue *q)
{
	struct mrkit_pool_stats st;

	mrkit_pool_get_stats(q->pool, &st);
	pr_info("mrkit_nvme_demo: pool q%d: registrations remote-invalidated %llu, locally invalidated %llu, bogus %llu, high water %u, in use %u, stale replaced %llu\n",
		q->qid, st.remote_inv, st.local_inv, st.bogus_inv,
		st.high_water, st.in_use, st.stale_replaced);
	report.high_water = max(report.high_water, st.high_water);
}

static int demo_run(void)
{
	struct nvme_id_ctrl *idc = NULL;
	struct nvme_id_ns *idn = NULL;
	u8 *wbuf[DEMO_QD] = {}, *rbuf[DEMO_QD] = {};
	u32 lba_shift, max_bytes, max_aligned, len, mdts_bytes, pages;
	u64 val, cap, slba = 0;
	u16 cntlid = 0;
	int i, ret, tmo;

	admin = demo_queue_connect(0);
	if (IS_ERR(admin)) {
		ret = PTR_ERR(admin);
		admin = NULL;
		return ret;
	}
	ret = demo_connect(admin, 0xffff, &cntlid);
	if (ret)
		return ret;
	pr_info("mrkit_nvme_demo: admin queue connected, controller %u\n",
		cntlid);
	ret = demo_prop(admin, false, NVME_REG_CAP, &cap);
	if (ret)
		return ret;
	val = NVME_CC_CSS_NVM | NVME_CC_ENABLE | NVME_CC_IOSQES |
	      NVME_CC_IOCQES;
	ret = demo_prop(admin, true, NVME_REG_CC, &val);
	for (tmo = 0; !ret && tmo < 100; tmo++) {
		ret = demo_prop(admin, false, NVME_REG_CSTS, &val);
		if (ret || (val & NVME_CSTS_RDY))
			break;
		msleep(50);
	}
	if (ret || !(val & NVME_CSTS_RDY)) {
		pr_err("mrkit_nvme_demo: controller not ready (CSTS 0x%llx)\n",
		       val);
		return ret ?: -ETIMEDOUT;
	}
	idc = kzalloc(NVME_IDENTIFY_DATA_SIZE, GFP_KERNEL);
	idn = kzalloc(NVME_IDENTIFY_DATA_SIZE, GFP_KERNEL);
	if (!idc || !idn) {
		ret = -ENOMEM;
		goto out;
	}
	ret = demo_identify(admin, NVME_ID_CNS_CTRL, 0, idc) ?:
	      demo_identify(admin, NVME_ID_CNS_NS, 1, idn);
	if (ret)
		goto out;
	lba_shift = idn->lbaf[idn->flbas & NVME_NS_FLBAS_LBA_MASK].ds;
	mdts_bytes = idc->mdts ? (1U << idc->mdts) * 4096 : SZ_4M;
	pages = min_t(u32, MRKIT_MAX_PAGES_PER_MR,
		      admin->id->device->attrs.max_fast_reg_page_list_len);
	/* One MR per command: a page-aligned transfer may fill it, an
	 * unaligned one needs a page more.
	 */
	max_aligned = min_t(u32, mdts_bytes, pages * PAGE_SIZE);
	max_bytes = min_t(u32, mdts_bytes, (pages - 1) * PAGE_SIZE);
	pr_info("mrkit_nvme_demo: identify: model '%.40s' mdts %u, ns 1: %llu blocks of %u bytes; max transfer %u bytes (%u unaligned)\n",
		idc->mn, idc->mdts, le64_to_cpu(idn->nsze), 1U << lba_shift,
		max_aligned, max_bytes);

	ioq = demo_queue_connect(1);
	if (IS_ERR(ioq)) {
		ret = PTR_ERR(ioq);
		ioq = NULL;
		goto out;
	}
	ret = demo_connect(ioq, cntlid, NULL);
	if (ret)
		goto out;
	for (i = 0; i < DEMO_QD; i++) {
		/* physically contiguous: one sg entry each */
		wbuf[i] = kmalloc(max_aligned + PAGE_SIZE, GFP_KERNEL);
		rbuf[i] = kmalloc(max_aligned + PAGE_SIZE, GFP_KERNEL);
		if (!wbuf[i] || !rbuf[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	/* 512 B up to the maximum, page-aligned and at +512 bytes. */
	for (len = 1U << lba_shift; !ret && len <= max_bytes; len *= 4) {
		ret = demo_rw_batch(wbuf, rbuf, DEMO_QD, 0, len, lba_shift,
				    slba, len);
		slba += DEMO_QD * (len >> lba_shift);
		if (!ret && len + 512 <= max_bytes)
			ret = demo_rw_batch(wbuf, rbuf, DEMO_QD, 512, len,
					    lba_shift, slba, len + 1);
		slba += DEMO_QD * (len >> lba_shift);
	}
	/* The controller's (and one MR's) maximum, page-aligned. */
	if (!ret)
		ret = demo_rw_batch(wbuf, rbuf, 2, 0,
				    max_aligned & ~((1U << lba_shift) - 1),
				    lba_shift, slba, 99);
out:
	for (i = 0; i < DEMO_QD; i++) {
		kfree(wbuf[i]);
		kfree(rbuf[i]);
	}
	kfree(idn);
	kfree(idc);
	return ret;
}

static int __init demo_init(void)
{
	int ret = demo_run();

	if (admin)
		demo_pool_report(admin);
	if (ioq)
		demo_pool_report(ioq);
	pr_info("mrkit_nvme_demo: %llu I/Os, %llu bytes verified, %llu registrations, %llu remote invalidations matched, %llu bogus\n",
		report.ios, report.bytes, report.regs,
		(admin ? admin->remote_inv : 0) + (ioq ? ioq->remote_inv : 0),
		(admin ? admin->bogus : 0) + (ioq ? ioq->bogus : 0));
	demo_queue_free(ioq);
	demo_queue_free(admin);
	ioq = NULL;
	admin = NULL;
	pr_info("mrkit_nvme_demo: RESULT %s (%d)\n", ret ? "FAIL" : "PASS",
		ret);
	return 0;
}

static void __exit demo_exit(void)
{
}

module_init(demo_init);
module_exit(demo_exit);

MODULE_DESCRIPTION("mrkit sample: a minimal NVMe/RDMA initiator");
MODULE_LICENSE("GPL");
