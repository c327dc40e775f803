// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Signature registrations
 *
 * **Normal operation**
 * A ULP describes an I/O's protection once, in struct mrkit_pi, either
 * directly or through the SCSI or NVMe translator; mrkit_pi_to_sig_attrs()
 * is the one path from that description to struct ib_sig_attrs.  Which
 * domain carries PI follows from the operation and the direction:
 *
 *	INSERT to the wire, STRIP from the wire	wire DIF, memory none
 *	INSERT from the wire, STRIP to the wire	memory DIF, wire none
 *	PASS					both DIF
 *
 * mrkit_io_map_pi() takes one descriptor of an integrity pool (devices
 * with IBK_INTEGRITY_HANDOVER only), maps data and protection lists with
 * ib_map_mr_sg_pi() (result checked) and loads the signature attributes;
 * the usual mrkit_io_segs() / mrkit_io_post() then post
 * IB_WR_REG_MR_INTEGRITY, and invalidation is as for plain registrations.
 * After the transfer, mrkit_io_check_pi() reads ib_check_mr_status() and
 * decodes it into the failing tag, expected and actual values, sector,
 * SCSI sense and NVMe status.
 *
 * **Recovery**
 * A protected registration is never invalidated or given back with its
 * status unread: if the ULP did not call mrkit_io_check_pi() (abort and
 * timeout paths), the invalidation or release path reads it, counts it,
 * reports an error with one ratelimited line, and the I/O completes with
 * -EILSEQ.
 *
 * Serialization: per I/O, by the ULP, as for every mrkit_io call.
 */

#include <linux/module.h>
#include <kunit/visibility.h>
#include <linux/nvme.h>
#include <rdma/mrkit.h>
#include <scsi/scsi_cmnd.h>

#include "mrkit_priv.h"
#include "frwr/io.h"
#include <trace/events/mrkit.h>

static bool mrkit_pi_interval_ok(u32 interval)
{
	return interval >= 512 && interval <= 4096 && is_power_of_2(interval);
}

/**
 * mrkit_pi_from_scsi - describe a SCSI command's protection
 * @pi: filled in
 * @prot_op: scsi_get_prot_op()
 * @prot_flags: scsi_cmnd.prot_flags (SCSI_PROT_* flags)
 * @interval: scsi_prot_interval() (the logical block size)
 * @ref_tag: scsi_prot_ref_tag()
 * @lba: the first logical block, for error reports
 *
 * Both escapes are enabled, as the SCSI midlayer expects; the
 * application tag is not checked (the midlayer does not set one).
 *
 * Context: any.
 * Return: 0, or -EINVAL for %SCSI_PROT_NORMAL, an unknown operation or
 * an interval that is not a power of two from 512 to 4096.
 */
int mrkit_pi_from_scsi(struct mrkit_pi *pi, unsigned char prot_op,
		       unsigned int prot_flags, unsigned int interval,
		       u32 ref_tag, u64 lba)
{
	memset(pi, 0, sizeof(*pi));
	switch (prot_op) {
	case SCSI_PROT_WRITE_INSERT:
		pi->op = MRKIT_PI_INSERT;
		pi->flags = MRKIT_PI_TO_WIRE;
		break;
	case SCSI_PROT_READ_STRIP:
		pi->op = MRKIT_PI_STRIP;
		break;
	case SCSI_PROT_READ_INSERT:
		pi->op = MRKIT_PI_INSERT;
		break;
	case SCSI_PROT_WRITE_STRIP:
		pi->op = MRKIT_PI_STRIP;
		pi->flags = MRKIT_PI_TO_WIRE;
		break;
	case SCSI_PROT_READ_PASS:
		pi->op = MRKIT_PI_PASS;
		break;
	case SCSI_PROT_WRITE_PASS:
		pi->op = MRKIT_PI_PASS;
		pi->flags = MRKIT_PI_TO_WIRE;
		break;
	default:
		return -EINVAL;
	}
	if (!mrkit_pi_interval_ok(interval))
		return -EINVAL;
	if (prot_flags & SCSI_PROT_IP_CHECKSUM)
		pi->flags |= MRKIT_PI_MEM_IPCSUM;
	if (prot_flags & SCSI_PROT_REF_INCREMENT)
		pi->flags |= MRKIT_PI_REF_INCREMENT;
	if (prot_flags & SCSI_PROT_GUARD_CHECK)
		pi->flags |= MRKIT_PI_CHECK_GUARD;
	if (prot_flags & SCSI_PROT_REF_CHECK)
		pi->flags |= MRKIT_PI_CHECK_REF;
	pi->flags |= MRKIT_PI_APP_ESCAPE | MRKIT_PI_REF_ESCAPE;
	pi->interval = interval;
	pi->ref_tag = ref_tag;
	pi->app_tag_mask = 0xffff;
	pi->lba = lba;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pi_from_scsi, MRKIT);

/**
 * mrkit_pi_from_nvme - describe an NVMe command's protection
 * @pi: filled in
 * @write: the command writes (data goes to the wire at the host)
 * @control: the command's control field (NVME_RW_PRINFO_* bits)
 * @pi_type: the namespace's PI type (%NVME_NS_DPS_PI_TYPE1..3)
 * @lba_size: the LBA data size (the protection interval)
 * @ref_tag: the command's initial reference tag
 * @app_tag: the command's application tag
 * @app_mask: the command's application tag mask
 * @lba: the first LBA, for error reports
 *
 * PRACT means the HCA inserts (write) or strips (read) the PI on the wire
 * side; otherwise the PI passes through.  PRCHK_GUARD, PRCHK_REF and
 * PRCHK_APP select the checks - the application tag check included.  The
 * reference tag increments for Types 1 and 2; Type 3 escapes it.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an unknown PI type or LBA size.
 */
int mrkit_pi_from_nvme(struct mrkit_pi *pi, bool write, u16 control,
		       u8 pi_type, u32 lba_size, u32 ref_tag, u16 app_tag,
		       u16 app_mask, u64 lba)
{
	memset(pi, 0, sizeof(*pi));
	if (pi_type < NVME_NS_DPS_PI_TYPE1 || pi_type > NVME_NS_DPS_PI_TYPE3 ||
	    !mrkit_pi_interval_ok(lba_size))
		return -EINVAL;
	if (control & NVME_RW_PRINFO_PRACT)
		pi->op = write ? MRKIT_PI_INSERT : MRKIT_PI_STRIP;
	else
		pi->op = MRKIT_PI_PASS;
	if (write)
		pi->flags |= MRKIT_PI_TO_WIRE;
	if (pi_type != NVME_NS_DPS_PI_TYPE3)
		pi->flags |= MRKIT_PI_REF_INCREMENT;
	else
		pi->flags |= MRKIT_PI_REF_ESCAPE;
	pi->flags |= MRKIT_PI_APP_ESCAPE;
	if (control & NVME_RW_PRINFO_PRCHK_GUARD)
		pi->flags |= MRKIT_PI_CHECK_GUARD;
	if (control & NVME_RW_PRINFO_PRCHK_REF)
		pi->flags |= MRKIT_PI_CHECK_REF;
	if (control & NVME_RW_PRINFO_PRCHK_APP)
		pi->flags |= MRKIT_PI_CHECK_APP;
	pi->interval = lba_size;
	pi->ref_tag = ref_tag;
	pi->app_tag = app_tag;
	pi->app_tag_mask = app_mask;
	pi->lba = lba;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_pi_from_nvme, MRKIT);

static void mrkit_pi_domain(const struct mrkit_pi *pi, bool mem,
			    struct ib_sig_domain *d)
{
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = mem && (pi->flags & MRKIT_PI_MEM_IPCSUM) ?
			     IB_T10DIF_CSUM : IB_T10DIF_CRC;
	d->sig.dif.pi_interval = pi->interval;
	d->sig.dif.ref_tag = pi->ref_tag;
	d->sig.dif.ref_remap = pi->flags & MRKIT_PI_REF_INCREMENT;
	d->sig.dif.app_tag = pi->app_tag;
	d->sig.dif.apptag_check_mask = pi->app_tag_mask;
	d->sig.dif.app_escape = pi->flags & MRKIT_PI_APP_ESCAPE;
	d->sig.dif.ref_escape = pi->flags & MRKIT_PI_REF_ESCAPE;
}

/* Which domains carry PI for an operation: bit 0 memory, bit 1 wire. */
static int mrkit_pi_domains(const struct mrkit_pi *pi)
{
	bool to_wire = pi->flags & MRKIT_PI_TO_WIRE;

	switch (pi->op) {
	case MRKIT_PI_INSERT:
		return to_wire ? 2 : 1;
	case MRKIT_PI_STRIP:
		return to_wire ? 1 : 2;
	case MRKIT_PI_PASS:
		return 3;
	default:
		return 0;
	}
}

/**
 * mrkit_pi_to_sig_attrs - the signature attributes for a description
 * @pi: the protection description
 * @sa: filled in (meta_length is set when the data length is known, by
 *	mrkit_io_map_pi())
 *
 * Context: any.
 * Return: 0, or -EINVAL for an unknown operation or a bad interval.
 */
int mrkit_pi_to_sig_attrs(const struct mrkit_pi *pi, struct ib_sig_attrs *sa)
{
	int domains = mrkit_pi_domains(pi);

	memset(sa, 0, sizeof(*sa));
	if (!domains || !mrkit_pi_interval_ok(pi->interval))
		return -EINVAL;
	sa->mem.sig_type = IB_SIG_TYPE_NONE;
	sa->wire.sig_type = IB_SIG_TYPE_NONE;
	if (domains & 1)
		mrkit_pi_domain(pi, true, &sa->mem);
	if (domains & 2)
		mrkit_pi_domain(pi, false, &sa->wire);
	if (pi->flags & MRKIT_PI_CHECK_GUARD)
		sa->check_mask |= IB_SIG_CHECK_GUARD;
	if (pi->flags & MRKIT_PI_CHECK_APP)
		sa->check_mask |= IB_SIG_CHECK_APPTAG;
	if (pi->flags & MRKIT_PI_CHECK_REF)
		sa->check_mask |= IB_SIG_CHECK_REFTAG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_pi_to_sig_attrs);

static u64 mrkit_sg_bytes(struct scatterlist *sgl, int nents)
{
	struct scatterlist *sg;
	u64 len = 0;
	int i;

	for_each_sg(sgl, sg, nents, i)
		len += sg_dma_len(sg);
	return len;
}

/**
 * mrkit_io_map_pi - map a protected I/O onto one integrity descriptor
 * @io: an idle I/O of an integrity pool (%MRKIT_POOL_INTEGRITY)
 * @data: DMA-mapped data list
 * @data_nents: its DMA-mapped entry count
 * @prot: DMA-mapped protection list, or NULL when memory holds no PI
 * @prot_nents: its DMA-mapped entry count
 * @pi: the protection description; copied
 *
 * No splitting: the data and protection must fit one descriptor.  Then
 * mrkit_io_segs() / mrkit_io_post() post IB_WR_REG_MR_INTEGRITY.
 *
 * Context: any.  No allocation.
 * The registration grants the access of the I/O's direction
 * (&enum mrkit_dir) or of mrkit_io_set_access(), as plain ones do.
 *
 * Return: 1 (one segment), or:
 *
 * * %-EBUSY - the I/O's RDMA READ chain is in flight.
 * * %-EINVAL - not an integrity pool, the I/O is not idle, the description
 *   is invalid, the data is not a whole number of intervals, the
 *   protection list has the wrong size, or the lists do not fit.
 * * %-EAGAIN - the pool is empty.
 */
int mrkit_io_map_pi(struct mrkit_io *io, struct scatterlist *data,
		    int data_nents, struct scatterlist *prot, int prot_nents,
		    const struct mrkit_pi *pi)
{
	struct mrkit_pool *pool = io->pool;
	u64 len, plen, want;
	struct mrkit_mr *mr;
	int domains, ret;

	ret = mrkit_io_begin_map(io, true);
	if (ret)
		return ret;
	if (!data || data_nents <= 0)
		return -EINVAL;
	domains = mrkit_pi_domains(pi);
	if (!domains || !mrkit_pi_interval_ok(pi->interval))
		return -EINVAL;
	len = mrkit_sg_bytes(data, data_nents);
	plen = prot && prot_nents > 0 ? mrkit_sg_bytes(prot, prot_nents) : 0;
	want = (domains & 1) ? div_u64(len, pi->interval) * 8 : 0;
	if (!len || len % pi->interval || plen != want) {
		mrkit_pool_err(pool,
			       "protected I/O: %llu data bytes, %llu PI bytes (interval %u, %llu PI bytes expected)\n",
			       len, plen, pi->interval, want);
		return -EINVAL;
	}
	mr = mrkit_io_take(io);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	ret = mrkit_pi_to_sig_attrs(pi, mr->ibmr->sig_attrs);
	if (ret)
		goto out_put;
	mr->ibmr->sig_attrs->meta_length = div_u64(len, pi->interval) * 8;
	ret = ib_map_mr_sg_pi(mr->ibmr, data, data_nents, NULL,
			      want ? prot : NULL, want ? prot_nents : 0, NULL,
			      SZ_4K);
	if (ret) {
		mrkit_pool_err(pool, "ib_map_mr_sg_pi of %d+%d entries failed: %d\n",
			       data_nents, prot_nents, ret);
		ret = ret < 0 ? ret : -EINVAL;
		goto out_put;
	}
	ret = mrkit_mr_own(mr, MRKIT_MR_RESERVED, MRKIT_MR_MAPPED);
	if (ret)
		goto out_put;
	mrkit_io_attach(io, mr, &io->mrs);
	mrkit_sig_mr(mr)->pi = *pi;
	/*
	 * A new registration: nothing of it is unchecked yet, whatever an
	 * abandoned one left (mrkit_pool_release_held() reads no status).
	 */
	mr->pi_unchecked = false;
	mrkit_io_map_done(io);
	trace_mrkit_map(io, data_nents);
	return 1;

out_put:
	mrkit_mr_put(mr);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_map_pi, MRKIT);

/**
 * mrkit_pi_decode - decode a signature status
 * @pi: the I/O's protection description (interval, lba)
 * @st: what ib_check_mr_status() returned
 * @check_ret: ib_check_mr_status()'s return value
 * @res: filled in
 *
 * A failed check, or a description whose interval is not a power of two
 * in 512..4096 (the sector cannot be computed), decodes as
 * %MRKIT_PI_UNKNOWN with the catch-all SCSI and NVMe codes.
 *
 * Context: any.
 */
void mrkit_pi_decode(const struct mrkit_pi *pi, const struct ib_mr_status *st,
		     int check_ret, struct mrkit_pi_result *res)
{
	memset(res, 0, sizeof(*res));
	if (check_ret || !mrkit_pi_interval_ok(pi->interval)) {
		/* Unknown: report it as the SCSI midlayer's catch-all guard. */
		res->type = MRKIT_PI_UNKNOWN;
		res->scsi_asc = 0x10;
		res->scsi_ascq = 0x01;
		res->nvme_status = NVME_SC_INVALID_PI;
		return;
	}
	if (!(st->fail_status & IB_MR_CHECK_SIG_STATUS))
		return;
	res->expected = st->sig_err.expected;
	res->actual = st->sig_err.actual;
	res->offset = st->sig_err.sig_err_offset;
	res->sector = pi->lba + div_u64(res->offset, pi->interval + 8);
	res->scsi_asc = 0x10;
	switch (st->sig_err.err_type) {
	case IB_SIG_BAD_GUARD:
		res->type = MRKIT_PI_BAD_GUARD;
		res->scsi_ascq = 0x01;
		res->nvme_status = NVME_SC_GUARD_CHECK;
		break;
	case IB_SIG_BAD_APPTAG:
		res->type = MRKIT_PI_BAD_APP;
		res->scsi_ascq = 0x02;
		res->nvme_status = NVME_SC_APPTAG_CHECK;
		break;
	case IB_SIG_BAD_REFTAG:
		res->type = MRKIT_PI_BAD_REF;
		res->scsi_ascq = 0x03;
		res->nvme_status = NVME_SC_REFTAG_CHECK;
		break;
	default:
		res->type = MRKIT_PI_UNKNOWN;
		res->scsi_ascq = 0x01;
		res->nvme_status = NVME_SC_INVALID_PI;
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_pi_decode);

static const char * const mrkit_pi_err_names[] = {
	[MRKIT_PI_OK] = "ok",
	[MRKIT_PI_BAD_GUARD] = "guard",
	[MRKIT_PI_BAD_APP] = "application tag",
	[MRKIT_PI_BAD_REF] = "reference tag",
	[MRKIT_PI_UNKNOWN] = "unknown",
};

/* Read and decode one protected descriptor's status; 0, -EILSEQ or errno. */
static int mrkit_mr_check_pi(struct mrkit_io *io, struct mrkit_mr *mr,
			     struct mrkit_pi_result *res)
{
	struct mrkit_pool *pool = io->pool;
	struct ib_mr_status st = {};
	int ret;

	ret = ib_check_mr_status(mr->ibmr, IB_MR_CHECK_SIG_STATUS, &st);
	mrkit_pi_decode(&mrkit_sig_mr(mr)->pi, &st, ret, res);
	mr->pi_unchecked = false;
	mrkit_count(pool, MRKIT_EV_SIG_CHECKS);
	if (ret) {
		mrkit_pool_err(pool, "ib_check_mr_status failed: %d\n", ret);
		return ret;
	}
	if (res->type == MRKIT_PI_OK)
		return 0;
	mrkit_count(pool, MRKIT_EV_SIG_ERRORS);
	trace_mrkit_sig_err(mr, res);
	mrkit_pool_err(pool,
		       "PI error: bad %s at sector %llu (expected 0x%x, actual 0x%x)\n",
		       mrkit_pi_err_names[res->type], res->sector, res->expected,
		       res->actual);
	return -EILSEQ;
}

/**
 * mrkit_io_check_pi - check a protected I/O's signature status
 * @io: a posted protected I/O, after its data transfer
 * @res: the decoded status
 *
 * @res is written on every return: where nothing was read (%-EINVAL,
 * %-EBUSY) it says no error (%MRKIT_PI_OK, statuses 0).
 *
 * Context: any.
 * Return:
 * * %0 - no PI error.
 * * %-EILSEQ - a PI error; @res says which tag, where, and the SCSI sense
 *   and NVMe status to report.
 * * %-EINVAL - @io holds no protected registration.
 * * %-EBUSY - @io's RDMA READ chain or its invalidation is in flight:
 *   its completion reads the status and hands the descriptors back.
 * * another errno - the status could not be read; @res is the catch-all
 *   (guard / NVME_SC_INVALID_PI).
 */
int mrkit_io_check_pi(struct mrkit_io *io, struct mrkit_pi_result *res)
{
	/* Pairs with the release in mrkit_io_notify(). */
	enum mrkit_io_state state = smp_load_acquire(&io->state);
	struct mrkit_mr *mr;

	memset(res, 0, sizeof(*res));
	if (unlikely(mrkit_io_state_busy(state) ||
		     state == MRKIT_IO_INVALIDATING ||
		     state == MRKIT_IO_FENCING))
		return mrkit_io_refuse(io, "signature check", -EBUSY);
	mr = io->mrs;
	if (!mr || mr->ibmr->type != IB_MR_TYPE_INTEGRITY)
		return -EINVAL;
	return mrkit_mr_check_pi(io, mr, res);
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_check_pi, MRKIT);

/*
 * The enforcement: called before a protected descriptor is invalidated or
 * given back.  Returns -EILSEQ (or the check's errno) when the status mrkit
 * had to read itself reports an error.
 */
int mrkit_mr_enforce_pi_slow(struct mrkit_io *io, struct mrkit_mr *mr)
{
	mrkit_count(io->pool, MRKIT_EV_SIG_FORCED);
	mrkit_pool_err(io->pool,
		       "protected descriptor %u released without a signature check; checking it now\n",
		       mr->idx);
	return mrkit_mr_check_pi(io, mr, &mrkit_sig_mr(mr)->result);
}
