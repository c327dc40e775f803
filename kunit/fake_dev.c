// SPDX-License-Identifier: GPL-2.0-only
/*
 * A fake RDMA device for mrkit's deterministic and fault-injection tests.
 *
 * Normal operation: fake_dev_create() builds an unregistered ib_device
 * with an ops table, a PD from the real ib_alloc_pd(), a QP and a CQ
 * that are plain structures (the fake never needs the core to create
 * them).  MRs come from the real ib_alloc_mr()/ib_dereg_mr(), so the
 * core's restrack and PD use counts see them; the fake counts the live
 * ones.  ib_post_send() records every WR (opcode, flags, keys, access,
 * iova) and applies REG_MR / LOCAL_INV to the fake MR's "device" state;
 * fake_complete() later delivers completions to the posted cqes, in
 * order, either successfully or as flushes.
 *
 * Recovery: fake_fail_nth() makes the N-th next call of one op fail with
 * a given errno; post_send fails at WR index @post_fail_wr and reports
 * it through bad_wr as a provider would.
 *
 * Serialization: @lock protects the records and counters; tests drive a
 * fake device from one thread plus mrkit's work items.  Teardown is a
 * KUnit resource, so it runs even when an assertion ends the test early,
 * and it fails the test if an MR is still alive.
 */

#include <kunit/resource.h>
#include <kunit/test-bug.h>
#include <linux/slab.h>
#include <linux/t10-pi.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrkit.h>

#include "fake_dev.h"
#include "t10pi_oracle.h"

struct fake_pd {
	struct ib_pd ibpd;
};

static atomic_t fake_dev_seq = ATOMIC_INIT(0);

static struct fake_dev *to_fdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct fake_dev, ibdev);
}

/* Count a call; true if this one must fail. */
static bool fake_call(struct fake_dev *fdev, enum fake_op op, int *err)
{
	unsigned long flags;
	bool fail;

	spin_lock_irqsave(&fdev->lock, flags);
	fdev->calls[op]++;
	fail = fdev->fail_at[op] && fdev->calls[op] == fdev->fail_at[op];
	if (fail) {
		*err = fdev->fail_err[op];
		fdev->fail_at[op] = 0;
	}
	spin_unlock_irqrestore(&fdev->lock, flags);
	return fail;
}

/**
 * fake_fail_nth - make the n-th next call of an op fail
 * @fdev: the fake device
 * @op: which op
 * @n: 1 = the next call
 * @err: the errno the op returns
 */
void fake_fail_nth(struct fake_dev *fdev, enum fake_op op, unsigned int n,
		   int err)
{
	unsigned long flags;

	spin_lock_irqsave(&fdev->lock, flags);
	fdev->fail_at[op] = fdev->calls[op] + n;
	fdev->fail_err[op] = err;
	spin_unlock_irqrestore(&fdev->lock, flags);
}

void fake_fail_clear(struct fake_dev *fdev)
{
	unsigned long flags;

	spin_lock_irqsave(&fdev->lock, flags);
	memset(fdev->fail_at, 0, sizeof(fdev->fail_at));
	spin_unlock_irqrestore(&fdev->lock, flags);
}

static int fake_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int fake_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static struct ib_mr *fake_new_mr(struct fake_dev *fdev, u32 max_pages)
{
	static atomic_t key_seq = ATOMIC_INIT(0);
	struct fake_mr *fmr;
	u32 key;

	fmr = kzalloc(sizeof(*fmr), GFP_KERNEL);
	if (!fmr)
		return ERR_PTR(-ENOMEM);
	fmr->pages = kcalloc(max_pages, sizeof(u64), GFP_KERNEL);
	if (!fmr->pages) {
		kfree(fmr);
		return ERR_PTR(-ENOMEM);
	}
	fmr->max_pages = max_pages;
	/* Index in the upper 24 bits, key byte in the lower 8, as HCAs do. */
	key = ((atomic_inc_return(&key_seq) & 0xffffff) << 8) | 0x5a;
	fmr->ibmr.lkey = key;
	fmr->ibmr.rkey = key;
	spin_lock_irq(&fdev->lock);
	list_add(&fmr->node, &fdev->mrs);
	spin_unlock_irq(&fdev->lock);
	atomic_inc(&fdev->mrs_alive);
	return &fmr->ibmr;
}

static struct ib_mr *fake_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				   u32 max_num_sg)
{
	struct fake_dev *fdev = to_fdev(pd->device);
	int err;

	if (fake_call(fdev, FAKE_OP_ALLOC_MR, &err))
		return ERR_PTR(err);
	if (type == IB_MR_TYPE_SG_GAPS &&
	    !(fdev->ibdev.attrs.kernel_cap_flags & IBK_SG_GAPS_REG))
		return ERR_PTR(-EINVAL);
	if (type != IB_MR_TYPE_MEM_REG && type != IB_MR_TYPE_SG_GAPS)
		return ERR_PTR(-EINVAL);
	if (max_num_sg > fdev->ibdev.attrs.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	if (fdev->roomy_mrs)
		max_num_sg = fdev->ibdev.attrs.max_fast_reg_page_list_len;
	return fake_new_mr(fdev, max_num_sg);
}

static struct ib_mr *fake_alloc_mr_integrity(struct ib_pd *pd,
					     u32 max_num_data_sg,
					     u32 max_num_meta_sg)
{
	struct fake_dev *fdev = to_fdev(pd->device);
	int err;

	if (fake_call(fdev, FAKE_OP_ALLOC_MR_INTEGRITY, &err))
		return ERR_PTR(err);
	return fake_new_mr(fdev, max_num_data_sg + max_num_meta_sg);
}

static int fake_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	struct fake_dev *fdev = to_fdev(mr->device);
	struct fake_mr *fmr = to_fake_mr(mr);
	int err;

	/*
	 * A provider may fail deregistration; the core then keeps the MR.
	 * mrkit must not leak it, so the fake counts the call but never
	 * fails here: failing it would leak for real.
	 */
	fake_call(fdev, FAKE_OP_DEREG_MR, &err);
	spin_lock_irq(&fdev->lock);
	list_del(&fmr->node);
	spin_unlock_irq(&fdev->lock);
	atomic_dec(&fdev->mrs_alive);
	kfree(fmr->pages);
	kfree(fmr);
	return 0;
}

static int fake_set_page(struct ib_mr *mr, u64 addr)
{
	struct fake_mr *fmr = to_fake_mr(mr);

	if (fmr->npages >= fmr->max_pages)
		return -ENOMEM;
	fmr->pages[fmr->npages++] = addr;
	return 0;
}

/*
 * An SG_GAPS MR takes any entries, one page-list slot each (as mlx5's
 * KLM-based MRs do): the iova is the first entry's address, the length
 * the sum.
 */
static int fake_map_gaps(struct ib_mr *mr, struct scatterlist *sgl,
			 int sg_nents)
{
	struct fake_mr *fmr = to_fake_mr(mr);
	struct scatterlist *sg;
	int i;

	mr->iova = sg_dma_address(sgl);
	mr->length = 0;
	for_each_sg(sgl, sg, sg_nents, i) {
		if (fmr->npages == fmr->max_pages)
			break;
		fmr->pages[fmr->npages++] = sg_dma_address(sg);
		mr->length += sg_dma_len(sg);
	}
	return i;
}

static int fake_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg,
			  int sg_nents, unsigned int *sg_offset)
{
	struct fake_dev *fdev = to_fdev(mr->device);
	int err;

	if (fake_call(fdev, FAKE_OP_MAP_MR_SG, &err))
		return err;
	to_fake_mr(mr)->npages = 0;
	if (mr->type == IB_MR_TYPE_SG_GAPS)
		return fake_map_gaps(mr, sg, sg_nents);
	return ib_sg_to_pages(mr, sg, sg_nents, sg_offset, fake_set_page);
}

/* The emulated integrity HCA takes one contiguous data and PI entry. */
static int fake_map_mr_sg_pi(struct ib_mr *mr, struct scatterlist *data_sg,
			     int data_sg_nents, unsigned int *data_sg_offset,
			     struct scatterlist *meta_sg, int meta_sg_nents,
			     unsigned int *meta_sg_offset)
{
	struct fake_dev *fdev = to_fdev(mr->device);
	struct fake_mr *fmr = to_fake_mr(mr);
	int err;

	if (fake_call(fdev, FAKE_OP_MAP_MR_SG_PI, &err))
		return err;
	if (data_sg_nents != 1 || (meta_sg && meta_sg_nents != 1))
		return -EINVAL;
	fmr->data_addr = sg_dma_address(data_sg);
	fmr->data_len = sg_dma_len(data_sg);
	fmr->meta_addr = meta_sg ? sg_dma_address(meta_sg) : 0;
	fmr->meta_len = meta_sg ? sg_dma_len(meta_sg) : 0;
	mr->iova = fmr->data_addr;
	mr->length = fmr->data_len + fmr->meta_len;
	return 0;
}

/* A struct mrkit_pi for the software engine, from one signature domain. */
static void fake_domain_pi(const struct ib_sig_attrs *sa,
			   const struct ib_sig_domain *d, struct mrkit_pi *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->op = MRKIT_PI_PASS;
	pi->interval = d->sig.dif.pi_interval;
	pi->ref_tag = d->sig.dif.ref_tag;
	pi->app_tag = d->sig.dif.app_tag;
	pi->app_tag_mask = d->sig.dif.apptag_check_mask;
	if (d->sig.dif.ref_remap)
		pi->flags |= MRKIT_PI_REF_INCREMENT;
	if (d->sig.dif.app_escape)
		pi->flags |= MRKIT_PI_APP_ESCAPE;
	if (d->sig.dif.ref_escape)
		pi->flags |= MRKIT_PI_REF_ESCAPE;
	if (d->sig.dif.bg_type == IB_T10DIF_CSUM)
		pi->flags |= MRKIT_PI_MEM_IPCSUM;
	if (sa->check_mask & IB_SIG_CHECK_GUARD)
		pi->flags |= MRKIT_PI_CHECK_GUARD;
	if (sa->check_mask & IB_SIG_CHECK_APPTAG)
		pi->flags |= MRKIT_PI_CHECK_APP;
	if (sa->check_mask & IB_SIG_CHECK_REFTAG)
		pi->flags |= MRKIT_PI_CHECK_REF;
}

static void fake_inject(void *prot, int inject, u32 k)
{
	struct t10_pi_tuple *t = (struct t10_pi_tuple *)prot + k;

	if (inject == IB_SIG_BAD_GUARD + 1)
		t->guard_tag ^= cpu_to_be16(0x0101);
	else if (inject == IB_SIG_BAD_APPTAG + 1)
		t->app_tag ^= cpu_to_be16(0x0f0f);
	else if (inject == IB_SIG_BAD_REFTAG + 1)
		t->ref_tag = cpu_to_be32(be32_to_cpu(t->ref_tag) + 7);
}

static int fake_verify(struct fake_mr *fmr, const struct ib_sig_attrs *sa,
		       const struct ib_sig_domain *d, bool mem,
		       const void *data, u32 len, const void *prot)
{
	static const u8 to_ib[] = {
		[MRKIT_PI_BAD_GUARD] = IB_SIG_BAD_GUARD,
		[MRKIT_PI_BAD_APP] = IB_SIG_BAD_APPTAG,
		[MRKIT_PI_BAD_REF] = IB_SIG_BAD_REFTAG,
	};
	struct mrkit_pi_result res;
	struct mrkit_pi pi;
	int ret;

	fake_domain_pi(sa, d, &pi);
	ret = mrkit_pi_verify(&pi, mem, data, len, prot, &res);
	if (ret != -EILSEQ)
		return ret;
	fmr->status.fail_status = IB_MR_CHECK_SIG_STATUS;
	fmr->status.sig_err.err_type = to_ib[res.type];
	fmr->status.sig_err.expected = res.expected;
	fmr->status.sig_err.actual = res.actual;
	fmr->status.sig_err.sig_err_offset = res.offset;
	fmr->status.sig_err.key = fmr->ibmr.rkey;
	return 0;
}

/**
 * fake_pi_transfer - emulate an integrity HCA moving a registered buffer
 * @mr: a registered integrity MR
 * @to_wire: memory to wire (else wire to memory)
 * @wire_data: the wire side's data
 * @wire_prot: the wire side's PI tuples
 * @len: data bytes
 * @inject: 0, or 1 + an &enum ib_sig_err_type to corrupt in the source PI
 * @inject_interval: the interval to corrupt
 *
 * Applies the registered signature attributes with mrkit's software
 * engine: the source domain's PI is verified (errors go to the MR's status
 * for check_mr_status), the data is moved, and the destination domain's PI
 * is generated.
 *
 * Return: 0, or -EINVAL for a bad buffer.
 */
int fake_pi_transfer(struct ib_mr *mr, bool to_wire, void *wire_data,
		     void *wire_prot, u32 len, int inject, u32 inject_interval)
{
	struct fake_mr *fmr = to_fake_mr(mr);
	const struct ib_sig_attrs *sa = mr->sig_attrs;
	bool mem_dif = sa->mem.sig_type == IB_SIG_TYPE_T10_DIF;
	bool wire_dif = sa->wire.sig_type == IB_SIG_TYPE_T10_DIF;
	void *mem = (void *)(uintptr_t)fmr->data_addr;
	void *memp = (void *)(uintptr_t)fmr->meta_addr;
	const struct ib_sig_domain *src = to_wire ? &sa->mem : &sa->wire;
	const struct ib_sig_domain *dst = to_wire ? &sa->wire : &sa->mem;
	bool src_dif = to_wire ? mem_dif : wire_dif;
	bool dst_dif = to_wire ? wire_dif : mem_dif;
	u32 plen = len / (src_dif ? src : dst)->sig.dif.pi_interval * 8;
	struct mrkit_pi pi;
	void *tmp;
	int ret = 0;

	if (len != fmr->data_len || (mem_dif && fmr->meta_len != plen))
		return -EINVAL;
	tmp = kmalloc(plen, GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	if (src_dif) {
		memcpy(tmp, to_wire ? memp : wire_prot, plen);
		if (inject)
			fake_inject(tmp, inject, inject_interval);
		ret = fake_verify(fmr, sa, src, to_wire, to_wire ? mem : wire_data,
				  len, tmp);
	}
	if (to_wire)
		memcpy(wire_data, mem, len);
	else
		memcpy(mem, wire_data, len);
	if (!ret && dst_dif) {
		fake_domain_pi(sa, dst, &pi);
		ret = mrkit_pi_generate(&pi, !to_wire, to_wire ? wire_data : mem,
					len, to_wire ? wire_prot : memp);
	}
	kfree(tmp);
	return ret;
}

static int fake_check_mr_status(struct ib_mr *mr, u32 check_mask,
				struct ib_mr_status *mr_status)
{
	struct fake_dev *fdev = to_fdev(mr->device);
	int err;

	if (fake_call(fdev, FAKE_OP_CHECK_MR_STATUS, &err))
		return err;
	/* Like an HCA: report the pending error once, then clear it. */
	*mr_status = to_fake_mr(mr)->status;
	mr_status->fail_status &= check_mask;
	memset(&to_fake_mr(mr)->status, 0, sizeof(to_fake_mr(mr)->status));
	return 0;
}

/*
 * Invalidate the valid registration under @key; false if there is none.
 * With @local (this side's LOCAL_INV) the registration's signature status
 * goes with it: mrkit must read it before it invalidates the key itself
 * (a peer's invalidation cannot wait for that, and keeps it).
 */
static bool fake_invalidate(struct fake_dev *fdev, u32 key, bool local)
{
	struct fake_mr *fmr;

	list_for_each_entry(fmr, &fdev->mrs, node) {
		if (fmr->valid && fmr->dev_key == key) {
			fmr->valid = false;
			if (local)
				memset(&fmr->status, 0, sizeof(fmr->status));
			return true;
		}
	}
	return false;
}

/*
 * Apply one WR to the fake's device state, under fdev->lock; false if a
 * real device would reject it (and move the QP to error).
 */
static bool fake_exec(struct fake_dev *fdev, const struct ib_send_wr *wr)
{
	const struct ib_reg_wr *reg;
	struct fake_mr *fmr;

	switch (wr->opcode) {
	case IB_WR_REG_MR:
	case IB_WR_REG_MR_INTEGRITY:
		reg = reg_wr(wr);
		fmr = to_fake_mr(reg->mr);
		if (fmr->valid)
			return false;	/* REG on a valid MR kills real QPs */
		fmr->valid = true;
		fmr->dev_key = reg->key;
		return true;
	case IB_WR_LOCAL_INV:
		return fake_invalidate(fdev, wr->ex.invalidate_rkey, true);
	case IB_WR_RDMA_READ_WITH_INV:
		return fake_invalidate(fdev, wr->ex.invalidate_rkey, false);
	default:
		return true;
	}
}

/**
 * fake_count - count recorded WRs of one opcode
 * @fdev: the fake device
 * @from: first record index to look at
 * @op: the opcode
 *
 * Return: how many records from @from on have @op.
 */
unsigned int fake_count(struct fake_dev *fdev, unsigned int from,
			enum ib_wr_opcode op)
{
	unsigned int i, n = 0;

	for (i = from; i < fdev->nr_recs; i++)
		n += fdev->recs[i].opcode == op;
	return n;
}

static int fake_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct fake_dev *fdev = to_fdev(qp->device);
	struct fake_wr_rec *rec;
	unsigned long flags;
	unsigned int idx = 0;
	int err = 0;
	bool fail;

	fail = fake_call(fdev, FAKE_OP_POST_SEND, &err);
	spin_lock_irqsave(&fdev->lock, flags);
	fdev->nr_posts++;
	for (; wr; wr = wr->next, idx++) {
		if ((fail && idx == fdev->post_fail_wr) ||
		    fdev->nr_recs == FAKE_MAX_RECORDS) {
			if (!err)
				err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		rec = &fdev->recs[fdev->nr_recs++];
		memset(rec, 0, sizeof(*rec));
		rec->post = fdev->nr_posts;
		rec->opcode = wr->opcode;
		rec->send_flags = wr->send_flags;
		rec->cqe = wr->wr_cqe;
		switch (wr->opcode) {
		case IB_WR_REG_MR:
		case IB_WR_REG_MR_INTEGRITY:
			rec->mr = reg_wr(wr)->mr;
			if (rec->mr->sig_attrs)
				rec->sig = *rec->mr->sig_attrs;
			rec->key = reg_wr(wr)->key;
			rec->access = reg_wr(wr)->access;
			rec->iova = rec->mr->iova;
			rec->length = rec->mr->length;
			break;
		case IB_WR_RDMA_READ_WITH_INV:
		case IB_WR_RDMA_READ:
		case IB_WR_RDMA_WRITE:
			rec->remote_addr = rdma_wr(wr)->remote_addr;
			rec->rkey = rdma_wr(wr)->rkey;
			if (wr->num_sge) {
				rec->lkey = wr->sg_list[0].lkey;
				rec->iova = wr->sg_list[0].addr;
				rec->length = wr->sg_list[0].length;
			}
			rec->key = wr->ex.invalidate_rkey;
			break;
		case IB_WR_LOCAL_INV:
		case IB_WR_SEND_WITH_INV:
			rec->key = wr->ex.invalidate_rkey;
			break;
		default:
			break;
		}
		if (!fdev->qp_error && !fake_exec(fdev, wr)) {
			rec->rejected = true;
			fdev->exec_errors++;
		}
	}
	spin_unlock_irqrestore(&fdev->lock, flags);
	/* A fast device: completions run before ib_post_send() returns. */
	if (fdev->complete_inline && !err)
		fake_complete(fdev, IB_WC_SUCCESS, FAKE_MAX_RECORDS);
	/* A QP going to error while the post fails, flushing what it took. */
	if (err && fdev->fail_flush)
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, fdev->fail_flush);
	if (fdev->flush_inline)
		fake_complete(fdev, IB_WC_WR_FLUSH_ERR, FAKE_MAX_RECORDS);
	return err;
}

/*
 * A peer's SEND_WITH_INV naming @key, as the device executes it: the
 * valid registration under @key is invalid afterwards.  False if there
 * was none (the receive would complete with an error).
 */
bool fake_peer_invalidate(struct fake_dev *fdev, u32 key)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&fdev->lock, flags);
	done = fake_invalidate(fdev, key, false);
	spin_unlock_irqrestore(&fdev->lock, flags);
	return done;
}

/**
 * fake_mr_alive - is an MR still registered with the fake device?
 * @fdev: the fake device
 * @key: any key the MR had (its index, the upper 24 bits, is unique per
 *	allocation; a pointer is not: a replacement may reuse the memory)
 *
 * Return: true until ib_dereg_mr() of that MR.
 */
bool fake_mr_alive(struct fake_dev *fdev, u32 key)
{
	struct fake_mr *fmr;
	bool alive = false;

	spin_lock_irq(&fdev->lock);
	list_for_each_entry(fmr, &fdev->mrs, node)
		if ((fmr->ibmr.lkey >> 8) == (key >> 8))
			alive = true;
	spin_unlock_irq(&fdev->lock);
	return alive;
}

static enum ib_wc_opcode fake_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_REG_MR:
	case IB_WR_REG_MR_INTEGRITY:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/**
 * fake_complete - deliver completions for posted WRs, in posting order
 * @fdev: the fake device
 * @status: IB_WC_SUCCESS, or an error such as IB_WC_WR_FLUSH_ERR
 * @max: at most this many WRs are consumed
 *
 * On success only signaled WRs produce a completion; on an error every
 * WR does, as a real send queue flushes them.
 *
 * Return: the number of completions delivered.
 */
unsigned int fake_complete(struct fake_dev *fdev, enum ib_wc_status status,
			   unsigned int max)
{
	unsigned int delivered = 0;
	struct fake_wr_rec *rec;
	struct ib_wc wc;

	while (max-- && fdev->next_complete < fdev->nr_recs) {
		rec = &fdev->recs[fdev->next_complete++];
		rec->completed = true;
		if (status == IB_WC_SUCCESS &&
		    !(rec->send_flags & IB_SEND_SIGNALED))
			continue;
		if (!rec->cqe)
			continue;
		memset(&wc, 0, sizeof(wc));
		wc.wr_cqe = rec->cqe;
		wc.status = status;
		wc.opcode = fake_wc_opcode(rec->opcode);
		wc.qp = fdev->qp;
		rec->cqe->done(fdev->qp->send_cq, &wc);
		delivered++;
	}
	return delivered;
}

static const struct ib_device_ops fake_ops = {
	.owner = THIS_MODULE,
	.alloc_pd = fake_alloc_pd,
	.dealloc_pd = fake_dealloc_pd,
	.alloc_mr = fake_alloc_mr,
	.alloc_mr_integrity = fake_alloc_mr_integrity,
	.dereg_mr = fake_dereg_mr,
	.map_mr_sg = fake_map_mr_sg,
	.map_mr_sg_pi = fake_map_mr_sg_pi,
	.post_send = fake_post_send,
	.check_mr_status = fake_check_mr_status,
	INIT_RDMA_OBJ_SIZE(ib_pd, fake_pd, ibpd),
};

static int fake_res_init(struct kunit_resource *res, void *context)
{
	const struct fake_dev_attr *attr = context;
	struct ib_device_attr *a;
	struct fake_dev *fdev;
	struct ib_cq *cq;

	fdev = ib_alloc_device(fake_dev, ibdev);
	if (!fdev)
		return -ENOMEM;
	spin_lock_init(&fdev->lock);
	INIT_LIST_HEAD(&fdev->mrs);
	ib_set_device_ops(&fdev->ibdev, &fake_ops);
	if (dev_set_name(&fdev->ibdev.dev, "mrkit_fake%d",
			 atomic_inc_return(&fake_dev_seq)))
		goto err_dev;
	fdev->ibdev.node_type = attr->iwarp ? RDMA_NODE_RNIC : RDMA_NODE_IB_CA;
	fdev->ibdev.phys_port_cnt = 1;
	fdev->roomy_mrs = attr->roomy_mrs;
	a = &fdev->ibdev.attrs;
	if (!attr->no_defaults) {
		a->max_fast_reg_page_list_len = attr->frpl ?: 512;
		a->max_pi_fast_reg_page_list_len = attr->pi_frpl;
		a->max_sge_rd = attr->max_sge_rd ?: 32;
		a->device_cap_flags = attr->device_cap_flags ?:
				      IB_DEVICE_MEM_MGT_EXTENSIONS;
	} else {
		a->max_fast_reg_page_list_len = attr->frpl;
		a->max_pi_fast_reg_page_list_len = attr->pi_frpl;
		a->max_sge_rd = attr->max_sge_rd;
		a->device_cap_flags = attr->device_cap_flags;
	}
	a->kernel_cap_flags = attr->kernel_cap_flags | IBK_LOCAL_DMA_LKEY;
	a->max_qp_wr = 4096;

	fdev->pd = ib_alloc_pd(&fdev->ibdev, 0);
	if (IS_ERR(fdev->pd))
		goto err_dev;
	fdev->qp = kzalloc(sizeof(*fdev->qp), GFP_KERNEL);
	cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	if (!fdev->qp || !cq) {
		kfree(cq);
		kfree(fdev->qp);
		ib_dealloc_pd(fdev->pd);
		goto err_dev;
	}
	cq->device = &fdev->ibdev;
	fdev->qp->device = &fdev->ibdev;
	fdev->qp->pd = fdev->pd;
	fdev->qp->send_cq = cq;
	fdev->qp->recv_cq = cq;
	fdev->qp->qp_num = 0x100;
	res->data = fdev;
	return 0;

err_dev:
	ib_dealloc_device(&fdev->ibdev);
	return -ENOMEM;
}

static void fake_res_free(struct kunit_resource *res)
{
	struct fake_dev *fdev = res->data;
	int alive = atomic_read(&fdev->mrs_alive);

	if (alive)
		kunit_fail_current_test("%d MRs of the fake device alive at its teardown",
					alive);
	kfree(fdev->qp->send_cq);
	kfree(fdev->qp);
	ib_dealloc_pd(fdev->pd);
	ib_dealloc_device(&fdev->ibdev);
}

/**
 * fake_dev_create - a fake device, torn down when the test ends
 * @test: the test
 * @attr: capabilities; see &struct fake_dev_attr
 *
 * Return: the device (the test is aborted if it cannot be made).
 */
struct fake_dev *fake_dev_create(struct kunit *test,
				 const struct fake_dev_attr *attr)
{
	struct fake_dev *fdev;

	fdev = kunit_alloc_resource(test, fake_res_init, fake_res_free,
				    GFP_KERNEL, (void *)attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fdev);
	return fdev;
}
