// SPDX-License-Identifier: GPL-2.0-only
/*
 * Integrity memory regions for the software RoCE provider (rdma_rxe_pi).
 *
 * Normal operation.  ib_alloc_mr_integrity() gives an rxe MR of type
 * IB_MR_TYPE_INTEGRITY with a segment table for up to max_num_data_sg data
 * and max_num_meta_sg metadata scatterlist entries, allocated here and
 * never on the data path.  ib_map_mr_sg_pi() records the DMA-mapped lists
 * byte for byte (rxe's DMA addresses are kernel virtual addresses, so no
 * page-alignment rule applies, like an HCA's KLM lists) and makes the MR
 * zero-based: iova 0, length data + metadata.  IB_WR_REG_MR_INTEGRITY is
 * accepted by the post path as a REG_MR of an integrity MR (the completion
 * is IB_WC_REG_MR, as on mlx5); when the requester executes it,
 * rxe_pi_reg_mr() takes a copy of the MR's struct ib_sig_attrs and derives
 * the layout of both domains.
 *
 * The MR's address space is the wire domain: blocks of pi_interval data
 * bytes, each followed by its 8-byte T10-DIF tuple when the wire carries
 * PI.  Every access through the MR - the local side of a post (the
 * requester's payload, a READ response landing) and a peer's READ or
 * WRITE naming its rkey - goes through rxe_mr_copy(), which hands the MR
 * to rxe_pi_copy().  There the memory domain is either data only, or data
 * with the tuples in the metadata list (DIX), or data with the tuples
 * interleaved in the data list:
 *
 *	memory to wire (READ by a peer, WRITE/SEND from the MR): data is
 *	copied; a wire tuple is built per block - the memory tuple checked
 *	(check_mask) and passed or converted (guard type, ref tag base), or
 *	generated when memory has none (insert); a memory tuple with no wire
 *	domain is checked and dropped (strip);
 *	wire to memory (WRITE by a peer, READ response into the MR): data is
 *	copied; a wire tuple is assembled (a packet may end inside it), then
 *	checked against the block's data in memory, and passed, converted or
 *	dropped; a memory tuple is generated when the wire has none (insert).
 *
 * Guards are the kernel's crc_t10dif (T10-DIF CRC, seeded by the domain's
 * bg) and the IP checksum (csum_partial/csum_fold, as ip_compute_csum);
 * the tags follow struct ib_t10_dif_domain: ref tag ref_tag + block when
 * ref_remap, app tag checked under apptag_check_mask, blocks with app tag
 * 0xffff (app_escape) or app 0xffff and ref 0xffffffff (ref_escape) not
 * checked and passed unchanged.  check_mask selects the tuple bytes that
 * are checked, one bit per byte as the verbs define it.  A passed ref tag
 * is moved from the source domain's ref_tag base to the destination's.
 *
 * Recovery.  A check that fails does not stop the transfer: the first
 * failure since the last ib_check_mr_status() is recorded (type, expected
 * and actual values, key, and the offset of the failing block's tuple in
 * the interleaved layout: block * (interval + 8) + interval) and
 * reported there.  As on mlx5, an integrity MR cannot be registered again
 * until its status has been read after the previous registration, and
 * atomics are refused on it.  Attributes the layout cannot honour (unknown
 * signature type or guard, intervals that differ between the domains or
 * are not a power of two from 512 to 4096, lists that do not hold whole
 * blocks) fail the registration with IB_WC_LOC_QP_OP_ERR.  After a retry
 * (a retransmission timeout, an RNR NAK) rxe's requester goes back to the
 * oldest unacknowledged work request and takes the ones after it again,
 * local operations that ran included: an integrity MR's REG_MR or
 * LOCAL_INV that ran is not run again (rxe_pi_local_op(), from the
 * requester's rxe_do_local_ops()); a second REG_MR would find the MR valid,
 * a second LOCAL_INV the key of the registration that followed it.
 *
 * Fault injection.  For tests that PI errors are caught, never delivered:
 * while the module parameter corrupt is 1, 2 or 3, every protection
 * block that leaves an integrity MR for the wire (memory to wire) gets
 * one byte flipped - of its data, its guard or its reference tag - after
 * the memory domain was checked; the receiving side's check must fail.
 * corrupted counts the blocks changed.  A tuple or data stretch that a
 * packet boundary splits is changed in the part that holds the byte.
 *
 * Serialization.  The data path runs in the tasks of the QP that uses the
 * MR, one at a time per QP; the verbs require an MR to be used by one
 * registration at a time, so the layout and the tuple being assembled need
 * no lock.  The error record and its "checked" flag are shared with
 * ib_check_mr_status() and the post path, under pi->lock.
 */

#include <linux/crc-t10dif.h>
#include <linux/moduleparam.h>
#include <linux/t10-pi.h>
#include <net/checksum.h>

#include "rxe.h"

#define RXE_PI_TUPLE	sizeof(struct t10_pi_tuple)

/* What leaves for the wire with a flipped byte (see the top of the file). */
enum {
	RXE_PI_CORRUPT_NONE,
	RXE_PI_CORRUPT_DATA,
	RXE_PI_CORRUPT_GUARD,
	RXE_PI_CORRUPT_REFTAG,
};

static int rxe_pi_corrupt;
module_param_named(corrupt, rxe_pi_corrupt, int, 0644);
MODULE_PARM_DESC(corrupt, "flip a byte of each block sent: 1 data, 2 guard, 3 ref tag (tests)");

static atomic_t rxe_pi_corrupted = ATOMIC_INIT(0);

static int rxe_pi_corrupted_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&rxe_pi_corrupted));
}

static const struct kernel_param_ops rxe_pi_corrupted_ops = {
	.get = rxe_pi_corrupted_get,
};

module_param_cb(corrupted, &rxe_pi_corrupted_ops, NULL, 0444);
MODULE_PARM_DESC(corrupted, "blocks sent with a flipped byte so far");

/* Flip byte @at of @buf (@n bytes at offset @k of the field) if asked to. */
static void rxe_pi_inject(int what, u8 *buf, u32 k, u32 n, u32 at)
{
	if (likely(READ_ONCE(rxe_pi_corrupt) != what) || at < k || at >= k + n)
		return;
	buf[at - k] ^= 0x01;
	atomic_inc(&rxe_pi_corrupted);
}

/* One DMA-mapped stretch of a data or metadata list. */
struct rxe_pi_seg {
	u64	start;		/* offset of the stretch in its list */
	u8	*va;
	u32	len;
};

struct rxe_pi_list {
	struct rxe_pi_seg	*seg;
	u32			max;
	u32			n;
	u64			len;
};

/**
 * struct rxe_pi_mr - the integrity state of an rxe MR
 * @data: the data list of the last ib_map_mr_sg_pi()
 * @meta: its metadata list (empty: none, or interleaved in @data)
 * @sa: the signature attributes of the registration in force
 * @interval: bytes of data per protection block
 * @nblocks: protection blocks of the registration
 * @wire_len: bytes of the wire domain (the MR's address space)
 * @wire_pi: the wire domain carries T10-DIF tuples
 * @mem_pi: the memory domain carries T10-DIF tuples
 * @mem_sep: ... in @meta (DIX); else interleaved in @data
 * @stage: the wire tuple being assembled, wire to memory
 * @lock: protects @checked, @err_exists and @err
 * @checked: the status was read since the last registration
 * @err_exists: @err holds an unread failure
 * @err: the first failure since the status was last read
 */
struct rxe_pi_mr {
	struct rxe_pi_list	data;
	struct rxe_pi_list	meta;
	struct ib_sig_attrs	sa;
	u32			interval;
	u64			nblocks;
	u64			wire_len;
	bool			wire_pi;
	bool			mem_pi;
	bool			mem_sep;
	u8			stage[RXE_PI_TUPLE];
	spinlock_t		lock;	/* @checked, @err_exists, @err */
	bool			checked;
	bool			err_exists;
	struct ib_sig_err	err;
};

/* The stretch holding byte off of a list, by bisection. */
static const struct rxe_pi_seg *rxe_pi_find(const struct rxe_pi_list *l,
					    u64 off)
{
	u32 lo = 0, hi = l->n;

	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (l->seg[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (lo >= l->n || off - l->seg[lo].start >= l->seg[lo].len)
		return NULL;
	return &l->seg[lo];
}

/* Copy len bytes between buf and a list at off. */
static int rxe_pi_list_io(const struct rxe_pi_list *l, u64 off, void *buf,
			  u32 len, bool to_list)
{
	const struct rxe_pi_seg *s = rxe_pi_find(l, off);
	const struct rxe_pi_seg *end = l->seg + l->n;
	u8 *b = buf;

	if (!s || len > l->len - off)
		return -EFAULT;
	while (len) {
		u64 in = off - s->start;
		u32 n = min_t(u64, len, s->len - in);

		if (to_list)
			memcpy(s->va + in, b, n);
		else
			memcpy(b, s->va + in, n);
		b += n;
		off += n;
		len -= n;
		if (len && ++s == end)
			return -EFAULT;
	}
	return 0;
}

/* The guard of len data bytes at off of a list, as the domain computes it. */
static int rxe_pi_guard(const struct rxe_pi_list *l,
			const struct ib_t10_dif_domain *dif, u64 off, u32 len,
			__be16 *guard)
{
	const struct rxe_pi_seg *s = rxe_pi_find(l, off);
	const struct rxe_pi_seg *end = l->seg + l->n;
	u16 crc = dif->bg;
	__wsum sum = 0;
	u32 done = 0;

	if (!s || len > l->len - off)
		return -EFAULT;
	while (done < len) {
		u64 in = off - s->start;
		u32 n = min_t(u64, len - done, s->len - in);

		if (dif->bg_type == IB_T10DIF_CSUM)
			sum = csum_block_add(sum, csum_partial(s->va + in, n, 0),
					     done);
		else
			crc = crc_t10dif_update(crc, s->va + in, n);
		done += n;
		off += n;
		if (done < len && ++s == end)
			return -EFAULT;
	}
	*guard = dif->bg_type == IB_T10DIF_CSUM ?
		 (__force __be16)csum_fold(sum) : cpu_to_be16(crc);
	return 0;
}

/* Where block i's data starts in the data list. */
static u64 rxe_pi_data_off(const struct rxe_pi_mr *pi, u64 i)
{
	if (pi->mem_pi && !pi->mem_sep)
		return i * (pi->interval + RXE_PI_TUPLE);
	return i * pi->interval;
}

static int rxe_pi_mem_tuple_io(struct rxe_pi_mr *pi, u64 i,
			       struct t10_pi_tuple *t, bool to_mem)
{
	if (pi->mem_sep)
		return rxe_pi_list_io(&pi->meta, i * RXE_PI_TUPLE, t,
				      RXE_PI_TUPLE, to_mem);
	return rxe_pi_list_io(&pi->data, rxe_pi_data_off(pi, i) + pi->interval,
			      t, RXE_PI_TUPLE, to_mem);
}

static bool rxe_pi_escaped(const struct ib_t10_dif_domain *dif,
			   const struct t10_pi_tuple *t)
{
	if (t->app_tag != T10_PI_APP_ESCAPE)
		return false;
	return dif->app_escape ||
	       (dif->ref_escape && t->ref_tag == T10_PI_REF_ESCAPE);
}

/* The bytes of a field that check_mask selects (bit 7: tuple byte 0). */
static u32 rxe_pi_field_mask(u8 check_mask, unsigned int first,
			     unsigned int bytes)
{
	u32 m = 0;
	unsigned int b;

	for (b = first; b < first + bytes; b++)
		if (check_mask & BIT(7 - b))
			m |= 0xffU << (8 * (first + bytes - 1 - b));
	return m;
}

static void rxe_pi_fail(struct rxe_mr *mr, enum ib_sig_err_type type,
			u32 expected, u32 actual, u64 i)
{
	struct rxe_pi_mr *pi = mr->pi;
	unsigned long flags;

	spin_lock_irqsave(&pi->lock, flags);
	if (!pi->err_exists) {
		pi->err_exists = true;
		pi->err.err_type = type;
		pi->err.expected = expected;
		pi->err.actual = actual;
		pi->err.sig_err_offset = i * (pi->interval + RXE_PI_TUPLE) +
					 pi->interval;
		pi->err.key = mr->lkey;
	}
	spin_unlock_irqrestore(&pi->lock, flags);
}

/*
 * Check block i's incoming tuple t against its domain and the guard of
 * its data (computed with that domain's guard type).
 */
static void rxe_pi_check(struct rxe_mr *mr, const struct ib_t10_dif_domain *dif,
			 u64 i, const struct t10_pi_tuple *t, __be16 guard)
{
	u8 cm = mr->pi->sa.check_mask;
	u32 m, want;

	if (rxe_pi_escaped(dif, t))
		return;
	m = rxe_pi_field_mask(cm, 0, 2);
	if ((be16_to_cpu(guard) ^ be16_to_cpu(t->guard_tag)) & m) {
		rxe_pi_fail(mr, IB_SIG_BAD_GUARD, be16_to_cpu(guard),
			    be16_to_cpu(t->guard_tag), i);
		return;
	}
	m = rxe_pi_field_mask(cm, 2, 2) & dif->apptag_check_mask;
	if ((dif->app_tag ^ be16_to_cpu(t->app_tag)) & m) {
		rxe_pi_fail(mr, IB_SIG_BAD_APPTAG, dif->app_tag,
			    be16_to_cpu(t->app_tag), i);
		return;
	}
	m = rxe_pi_field_mask(cm, 4, 4);
	want = dif->ref_tag + (dif->ref_remap ? (u32)i : 0);
	if ((want ^ be32_to_cpu(t->ref_tag)) & m)
		rxe_pi_fail(mr, IB_SIG_BAD_REFTAG, want,
			    be32_to_cpu(t->ref_tag), i);
}

/*
 * Block i's tuple in the domain out, from the tuple in of the domain
 * src (pass or convert) or, with no in, generated (insert).  guard is
 * the data's guard computed with src's guard type (unused without in).
 */
static int rxe_pi_convert(struct rxe_pi_mr *pi,
			  const struct ib_t10_dif_domain *src,
			  const struct ib_t10_dif_domain *out, u64 i,
			  const struct t10_pi_tuple *in, __be16 guard,
			  struct t10_pi_tuple *t)
{
	u64 doff = rxe_pi_data_off(pi, i);

	if (in && rxe_pi_escaped(src, in)) {
		*t = *in;
		return 0;
	}
	if (in && src->bg_type == out->bg_type && src->bg == out->bg) {
		t->guard_tag = in->guard_tag;
	} else {
		int err = rxe_pi_guard(&pi->data, out, doff, pi->interval,
				       &t->guard_tag);

		if (err)
			return err;
	}
	if (in) {
		t->app_tag = in->app_tag;
		t->ref_tag = cpu_to_be32(be32_to_cpu(in->ref_tag) -
					 src->ref_tag + out->ref_tag);
	} else {
		t->app_tag = cpu_to_be16(out->app_tag);
		t->ref_tag = cpu_to_be32(out->ref_tag +
					 (out->ref_remap ? (u32)i : 0));
	}
	return 0;
}

/* Memory to wire: block i's wire tuple, the memory tuple checked. */
static int rxe_pi_wire_tuple(struct rxe_mr *mr, u64 i, struct t10_pi_tuple *t)
{
	struct rxe_pi_mr *pi = mr->pi;
	const struct ib_t10_dif_domain *mem = &pi->sa.mem.sig.dif;
	const struct ib_t10_dif_domain *wire = &pi->sa.wire.sig.dif;
	struct t10_pi_tuple in;
	__be16 guard;
	int err;

	if (!pi->mem_pi)
		return rxe_pi_convert(pi, NULL, wire, i, NULL, 0, t);
	err = rxe_pi_mem_tuple_io(pi, i, &in, false) ?:
	      rxe_pi_guard(&pi->data, mem, rxe_pi_data_off(pi, i),
			   pi->interval, &guard);
	if (err)
		return err;
	rxe_pi_check(mr, mem, i, &in, guard);
	return rxe_pi_convert(pi, mem, wire, i, &in, guard, t);
}

/* Wire to memory: block i's wire tuple (in pi->stage) has arrived. */
static int rxe_pi_wire_tuple_in(struct rxe_mr *mr, u64 i)
{
	struct rxe_pi_mr *pi = mr->pi;
	const struct ib_t10_dif_domain *mem = &pi->sa.mem.sig.dif;
	const struct ib_t10_dif_domain *wire = &pi->sa.wire.sig.dif;
	struct t10_pi_tuple in, t;
	__be16 guard;
	int err;

	memcpy(&in, pi->stage, sizeof(in));
	err = rxe_pi_guard(&pi->data, wire, rxe_pi_data_off(pi, i),
			   pi->interval, &guard);
	if (err)
		return err;
	rxe_pi_check(mr, wire, i, &in, guard);
	if (!pi->mem_pi)
		return 0;
	err = rxe_pi_convert(pi, wire, mem, i, &in, guard, &t);
	return err ?: rxe_pi_mem_tuple_io(pi, i, &t, true);
}

/*
 * No wire tuples, memory tuples: block i's data has been copied; insert
 * its memory tuple (wire to memory) or check and strip it.
 */
static int rxe_pi_mem_only(struct rxe_mr *mr, u64 i, bool to_mem)
{
	struct rxe_pi_mr *pi = mr->pi;
	const struct ib_t10_dif_domain *mem = &pi->sa.mem.sig.dif;
	struct t10_pi_tuple t;
	__be16 guard;
	int err;

	if (to_mem) {
		err = rxe_pi_convert(pi, NULL, mem, i, NULL, 0, &t);
		return err ?: rxe_pi_mem_tuple_io(pi, i, &t, true);
	}
	err = rxe_pi_mem_tuple_io(pi, i, &t, false) ?:
	      rxe_pi_guard(&pi->data, mem, rxe_pi_data_off(pi, i),
			   pi->interval, &guard);
	if (!err)
		rxe_pi_check(mr, mem, i, &t, guard);
	return err;
}

/* The tuple bytes k..k+n of block i, either way. */
static int rxe_pi_tuple_bytes(struct rxe_mr *mr, u64 i, u32 k, u8 *buf,
			      u32 n, bool to_mem)
{
	struct rxe_pi_mr *pi = mr->pi;
	struct t10_pi_tuple t;
	int err;

	if (to_mem) {
		memcpy(pi->stage + k, buf, n);
		return k + n == RXE_PI_TUPLE ? rxe_pi_wire_tuple_in(mr, i) : 0;
	}
	err = rxe_pi_wire_tuple(mr, i, &t);
	if (err)
		return err;
	memcpy(buf, (u8 *)&t + k, n);
	rxe_pi_inject(RXE_PI_CORRUPT_GUARD, buf, k, n,
		      offsetof(struct t10_pi_tuple, guard_tag));
	rxe_pi_inject(RXE_PI_CORRUPT_REFTAG, buf, k, n,
		      offsetof(struct t10_pi_tuple, ref_tag));
	return 0;
}

/**
 * rxe_pi_copy - move bytes between a buffer and an integrity MR
 * @mr: the integrity MR (rxe_mr_copy() checked its type)
 * @iova: where in the MR's wire-domain address space
 * @addr: the packet payload or the buffer
 * @length: how many bytes
 * @dir: %RXE_TO_MR_OBJ (wire to memory) or %RXE_FROM_MR_OBJ
 *
 * Translates between the wire domain and the memory domain block by
 * block; check failures are recorded for ib_check_mr_status().
 *
 * Context: the QP's requester, completer or responder task.
 * Return: 0, or -EFAULT for a range outside the registration or the
 * lists.
 */
int rxe_pi_copy(struct rxe_mr *mr, u64 iova, void *addr, int length,
		enum rxe_mr_copy_dir dir)
{
	struct rxe_pi_mr *pi = mr->pi;
	bool to_mem = dir == RXE_TO_MR_OBJ;
	u32 blk = pi->interval + (pi->wire_pi ? RXE_PI_TUPLE : 0);
	u8 *buf = addr;
	u64 off;
	int err = 0;

	if (rxe_pi_check_range(mr, iova, length))
		return -EFAULT;
	off = iova - mr->ibmr.iova;
	if (!pi->wire_pi && !pi->mem_pi)
		return rxe_pi_list_io(&pi->data, off, buf, length, to_mem);
	while (length > 0 && !err) {
		u32 r, n;
		u64 i = div_u64_rem(off, blk, &r);

		if (r < pi->interval) {
			n = min_t(u32, length, pi->interval - r);
			err = rxe_pi_list_io(&pi->data,
					     rxe_pi_data_off(pi, i) + r, buf, n,
					     to_mem);
			if (!err && !to_mem && pi->wire_pi)
				rxe_pi_inject(RXE_PI_CORRUPT_DATA, buf, r, n, 0);
			if (!err && !pi->wire_pi && r + n == pi->interval)
				err = rxe_pi_mem_only(mr, i, to_mem);
		} else {
			r -= pi->interval;
			n = min_t(u32, length, RXE_PI_TUPLE - r);
			err = rxe_pi_tuple_bytes(mr, i, r, buf, n, to_mem);
		}
		off += n;
		buf += n;
		length -= n;
	}
	return err;
}

/**
 * rxe_pi_check_range - whether an access stays inside an integrity MR
 * @mr: the integrity MR
 * @iova: start of the access
 * @length: its length
 *
 * Context: any.
 * Return: 0, or -EFAULT outside the wire domain of the registration.
 */
int rxe_pi_check_range(struct rxe_mr *mr, u64 iova, size_t length)
{
	u64 len = mr->pi->wire_len;

	if (iova < mr->ibmr.iova || length > len ||
	    iova - mr->ibmr.iova > len - length)
		return -EFAULT;
	return 0;
}

static bool rxe_pi_dif_ok(const struct ib_sig_domain *d)
{
	const struct ib_t10_dif_domain *dif = &d->sig.dif;

	if (d->sig_type == IB_SIG_TYPE_NONE)
		return true;
	return d->sig_type == IB_SIG_TYPE_T10_DIF &&
	       (dif->bg_type == IB_T10DIF_CRC ||
		dif->bg_type == IB_T10DIF_CSUM) &&
	       dif->pi_interval >= 512 && dif->pi_interval <= 4096 &&
	       is_power_of_2(dif->pi_interval);
}

/* The layout of a registration from its signature attributes. */
static int rxe_pi_layout(struct rxe_pi_mr *pi, const struct ib_sig_attrs *sa)
{
	u64 blocks, rem;
	u32 iv, stride;

	if (!rxe_pi_dif_ok(&sa->mem) || !rxe_pi_dif_ok(&sa->wire))
		return -EINVAL;
	pi->sa = *sa;
	pi->mem_pi = sa->mem.sig_type == IB_SIG_TYPE_T10_DIF;
	pi->wire_pi = sa->wire.sig_type == IB_SIG_TYPE_T10_DIF;
	pi->mem_sep = pi->mem_pi && pi->meta.n;
	if (!pi->mem_pi && !pi->wire_pi) {
		pi->wire_len = pi->data.len;
		return 0;
	}
	iv = pi->mem_pi ? sa->mem.sig.dif.pi_interval :
			  sa->wire.sig.dif.pi_interval;
	if (pi->mem_pi && pi->wire_pi && sa->wire.sig.dif.pi_interval != iv)
		return -EINVAL;
	stride = pi->mem_pi && !pi->mem_sep ? iv + RXE_PI_TUPLE : iv;
	blocks = div64_u64_rem(pi->data.len, stride, &rem);
	if (rem || !blocks ||
	    (pi->mem_sep && pi->meta.len < blocks * RXE_PI_TUPLE))
		return -EINVAL;
	pi->interval = iv;
	pi->nblocks = blocks;
	pi->wire_len = blocks * (iv + (pi->wire_pi ? RXE_PI_TUPLE : 0));
	return 0;
}

/**
 * rxe_pi_reg_mr - execute the registration of an integrity MR
 * @qp: the QP whose send queue holds it
 * @wqe: the REG_MR work request (posted as IB_WR_REG_MR_INTEGRITY)
 *
 * Context: the QP's requester task.
 * Return: 0, or -EINVAL (the work request completes with
 * %IB_WC_LOC_QP_OP_ERR).
 */
int rxe_pi_reg_mr(struct rxe_qp *qp, struct rxe_send_wqe *wqe)
{
	struct rxe_mr *mr = to_rmr(wqe->wr.wr.reg.mr);
	struct rxe_pi_mr *pi = mr->pi;
	u32 key = wqe->wr.wr.reg.key;
	int access = wqe->wr.wr.reg.access;
	const char *why = NULL;
	unsigned long flags;

	if (mr->state != RXE_MR_STATE_FREE)
		why = "the MR is not free";
	else if (qp->ibqp.pd != mr->ibmr.pd)
		why = "the MR is in another PD";
	else if ((mr->lkey & ~0xff) != (key & ~0xff))
		why = "the key is another MR's";
	else if (access & IB_ACCESS_REMOTE_ATOMIC)
		why = "remote atomic access";
	else if (!mr->ibmr.sig_attrs)
		why = "no signature attributes";
	else if (rxe_pi_layout(pi, mr->ibmr.sig_attrs))
		why = "attributes the mapped lists cannot follow";
	if (why) {
		pr_warn_ratelimited("%s: REG_MR_INTEGRITY of MR %#x (key %#x, state %d) refused: %s\n",
				    dev_name(&mr->ibmr.device->dev), mr->lkey,
				    key, mr->state, why);
		return -EINVAL;
	}
	memset(pi->stage, 0, sizeof(pi->stage));
	spin_lock_irqsave(&pi->lock, flags);
	pi->checked = false;
	spin_unlock_irqrestore(&pi->lock, flags);
	mr->access = access;
	mr->lkey = key;
	mr->rkey = access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE) ?
		   key : 0;
	mr->ibmr.iova = wqe->wr.wr.reg.mr->iova;
	mr->state = RXE_MR_STATE_VALID;
	return 0;
}

/**
 * rxe_pi_invalidate - invalidate an integrity MR (LOCAL_INV or remote)
 * @qp: the QP the invalidation came through
 * @mr: the integrity MR (a reference held by the caller)
 * @key: the key to invalidate
 *
 * Context: the QP's requester or responder task.
 * Return: 0, or -EINVAL when @key is not the MR's current key.
 */
int rxe_pi_invalidate(struct rxe_qp *qp, struct rxe_mr *mr, u32 key)
{
	if (key != (mr->rkey ? mr->rkey : mr->lkey) ||
	    qp->ibqp.pd != mr->ibmr.pd)
		return -EINVAL;
	mr->state = RXE_MR_STATE_FREE;
	return 0;
}

/**
 * rxe_pi_local_op - whether a local work request acts on an integrity MR
 * @qp: the QP whose send queue holds it
 * @wqe: a local work request (REG_MR, LOCAL_INV or BIND_MW)
 *
 * Context: the QP's requester task.
 * Return: true for the registration of an integrity MR and for the
 * invalidation of a key of one.
 */
bool rxe_pi_local_op(struct rxe_qp *qp, struct rxe_send_wqe *wqe)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	u32 key = wqe->wr.ex.invalidate_rkey;
	struct rxe_mr *mr;
	bool pi;

	if (wqe->wr.opcode == IB_WR_REG_MR)
		return wqe->wr.wr.reg.mr->type == IB_MR_TYPE_INTEGRITY;
	if (wqe->wr.opcode != IB_WR_LOCAL_INV || rkey_is_mw(key))
		return false;
	mr = rxe_pool_get_index(&rxe->mr_pool, key >> 8);
	if (!mr)
		return false;
	pi = mr->ibmr.type == IB_MR_TYPE_INTEGRITY;
	rxe_put(mr);
	return pi;
}

/**
 * rxe_pi_validate_send_wr - the post-time rules of integrity registrations
 * @qp: the QP posted to
 * @ibwr: the work request
 *
 * IB_WR_REG_MR_INTEGRITY must name an integrity MR and IB_WR_REG_MR must
 * not; the QP must have been created with IB_QP_CREATE_INTEGRITY_EN; no
 * remote atomic access; the status of the MR's previous registration must
 * have been read.
 *
 * Context: any (the post path).
 * Return: 0, or -EINVAL.
 */
int rxe_pi_validate_send_wr(struct rxe_qp *qp, const struct ib_send_wr *ibwr)
{
	const struct ib_reg_wr *reg = reg_wr(ibwr);
	struct rxe_pi_mr *pi;
	unsigned long flags;
	bool checked;

	if (ibwr->opcode != IB_WR_REG_MR &&
	    ibwr->opcode != IB_WR_REG_MR_INTEGRITY)
		return 0;
	pi = to_rmr(reg->mr)->pi;
	if (ibwr->opcode == IB_WR_REG_MR)
		return pi ? -EINVAL : 0;
	if (!pi)
		return -EINVAL;
	if (!qp->ibqp.integrity_en || (reg->access & IB_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	spin_lock_irqsave(&pi->lock, flags);
	checked = pi->checked;
	spin_unlock_irqrestore(&pi->lock, flags);
	return checked ? 0 : -EINVAL;
}

/**
 * rxe_pi_init_send_wr - queue IB_WR_REG_MR_INTEGRITY as a REG_MR
 * @wr: the send queue's copy of the work request
 * @ibwr: the work request posted
 *
 * Context: any (the post path).
 */
void rxe_pi_init_send_wr(struct rxe_send_wr *wr, const struct ib_send_wr *ibwr)
{
	if (ibwr->opcode != IB_WR_REG_MR_INTEGRITY)
		return;
	wr->opcode = IB_WR_REG_MR;
	wr->wr.reg.mr = reg_wr(ibwr)->mr;
	wr->wr.reg.key = reg_wr(ibwr)->key;
	wr->wr.reg.access = reg_wr(ibwr)->access;
}

static struct ib_mr *rxe_pi_alloc_mr_integrity(struct ib_pd *ibpd,
					       u32 max_data, u32 max_meta)
{
	struct rxe_dev *rxe = to_rdev(ibpd->device);
	struct rxe_pi_mr *pi;
	struct rxe_mr *mr;
	int err = -ENOMEM;

	if (!max_data || max_data > rxe->attr.max_pi_fast_reg_page_list_len ||
	    max_meta > rxe->attr.max_pi_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	pi = kzalloc(sizeof(*pi), GFP_KERNEL);
	if (!pi)
		goto err;
	pi->data.seg = kcalloc(max_data + max_meta, sizeof(*pi->data.seg),
			       GFP_KERNEL);
	if (!pi->data.seg)
		goto err_pi;
	pi->data.max = max_data;
	pi->meta.seg = pi->data.seg + max_data;
	pi->meta.max = max_meta;
	spin_lock_init(&pi->lock);
	pi->checked = true;

#ifdef RXE_PI_REGISTER_NDEV
	{
		struct ib_mr *ibmr = rxe_pi_stock_alloc_mr(ibpd);

		if (IS_ERR(ibmr)) {
			err = PTR_ERR(ibmr);
			goto err_seg;
		}
		mr = to_rmr(ibmr);
	}
#else
	mr = rxe_alloc(&rxe->mr_pool);
	if (!mr)
		goto err_seg;
	rxe_get(to_rpd(ibpd));
	mr->ibmr.pd = ibpd;
	err = rxe_mr_init_fast(1, mr);
	if (err) {
		rxe_cleanup(mr);
		goto err_seg;
	}
#endif
	rxe_pi_mr_type(mr) = IB_MR_TYPE_INTEGRITY;
	mr->pi = pi;
#ifndef RXE_PI_REGISTER_NDEV
	rxe_finalize(mr);
#endif
	return &mr->ibmr;

err_seg:
	kfree(pi->data.seg);
err_pi:
	kfree(pi);
err:
	return ERR_PTR(err);
}

static int rxe_pi_map_list(struct rxe_pi_list *l, struct scatterlist *sgl,
			   int nents, unsigned int *sg_offset)
{
	unsigned int skip = sg_offset ? *sg_offset : 0;
	struct scatterlist *sg;
	int i;

	l->n = 0;
	l->len = 0;
	for_each_sg(sgl, sg, nents, i) {
		u32 len = sg_dma_len(sg) - skip;

		if (l->n == l->max)
			return -ENOMEM;
		if (!len)
			continue;
		l->seg[l->n].start = l->len;
		l->seg[l->n].va = (u8 *)(uintptr_t)sg_dma_address(sg) + skip;
		l->seg[l->n].len = len;
		l->n++;
		l->len += len;
		skip = 0;
	}
	return 0;
}

static int rxe_pi_map_mr_sg_pi(struct ib_mr *ibmr, struct scatterlist *data_sg,
			       int data_nents, unsigned int *data_offset,
			       struct scatterlist *meta_sg, int meta_nents,
			       unsigned int *meta_offset)
{
	struct rxe_pi_mr *pi = to_rmr(ibmr)->pi;
	int err;

	pi->meta.n = 0;
	pi->meta.len = 0;
	err = rxe_pi_map_list(&pi->data, data_sg, data_nents, data_offset);
	if (!err && meta_sg)
		err = rxe_pi_map_list(&pi->meta, meta_sg, meta_nents,
				      meta_offset);
	if (err)
		return err;
	ibmr->iova = 0;
	ibmr->length = pi->data.len + pi->meta.len;
	ibmr->sig_attrs->meta_length = pi->meta.len;
	return 0;
}

static int rxe_pi_check_mr_status(struct ib_mr *ibmr, u32 check_mask,
				  struct ib_mr_status *status)
{
	struct rxe_pi_mr *pi = to_rmr(ibmr)->pi;
	unsigned long flags;

	if (check_mask & ~IB_MR_CHECK_SIG_STATUS)
		return -EINVAL;
	status->fail_status = 0;
	if (!(check_mask & IB_MR_CHECK_SIG_STATUS))
		return 0;
	if (!pi)
		return -EINVAL;
	spin_lock_irqsave(&pi->lock, flags);
	pi->checked = true;
	if (pi->err_exists) {
		status->sig_err = pi->err;
		status->fail_status |= IB_MR_CHECK_SIG_STATUS;
		pi->err_exists = false;
	}
	spin_unlock_irqrestore(&pi->lock, flags);
	return 0;
}

static int rxe_pi_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rxe_pi_mr *pi = to_rmr(ibmr)->pi;
	int err;

	/* rxe_dereg_mr() returns once the data path holds no reference. */
	err = rxe_pi_stock_dereg_mr(ibmr, udata);
	if (!err && pi) {
		kfree(pi->data.seg);
		kfree(pi);
	}
	return err;
}

static const struct ib_device_ops rxe_pi_dev_ops = {
	.alloc_mr_integrity = rxe_pi_alloc_mr_integrity,
	.check_mr_status = rxe_pi_check_mr_status,
	.dereg_mr = rxe_pi_dereg_mr,
	.map_mr_sg_pi = rxe_pi_map_mr_sg_pi,
};

/**
 * rxe_pi_init_device - make an rxe device offer integrity MRs
 * @rxe: the device, before its registration
 *
 * Sets %IBK_INTEGRITY_HANDOVER and max_pi_fast_reg_page_list_len (the
 * ULPs and rdma_rw look for them), the protection types and guards the
 * signature attributes may name (T10-DIF types 1 to 3, CRC and IP
 * checksum guards; iSER offers its SCSI host only the types in
 * sig_prot_cap), and installs the integrity verbs ahead of rxe's own
 * (dereg_mr included, which frees the integrity state).
 *
 * Context: process (rxe_register_device()).
 */
void rxe_pi_init_device(struct rxe_dev *rxe)
{
	rxe->attr.kernel_cap_flags |= IBK_INTEGRITY_HANDOVER;
	rxe->attr.max_pi_fast_reg_page_list_len =
		rxe->attr.max_fast_reg_page_list_len;
	rxe->attr.sig_prot_cap = IB_PROT_T10DIF_TYPE_1 | IB_PROT_T10DIF_TYPE_2 |
				 IB_PROT_T10DIF_TYPE_3;
	rxe->attr.sig_guard_cap = IB_GUARD_T10DIF_CRC | IB_GUARD_T10DIF_CSUM;
	ib_set_device_ops(&rxe->ib_dev, &rxe_pi_dev_ops);
}
