// SPDX-License-Identifier: GPL-2.0-only
/*
 * A software T10-PI engine: the oracle of mrkit's signature tests.
 *
 * Normal operation: mrkit_pi_generate() writes one 8-byte tuple (guard,
 * application tag, reference tag; big-endian, struct t10_pi_tuple) per
 * protection interval of a data buffer; mrkit_pi_verify() checks them as
 * an HCA would under a struct mrkit_pi: escapes first, then the guard,
 * application and reference tags the description asks to check, and it
 * reports the first failing interval.  Guards are the kernel's own
 * crc_t10dif() (T10-DIF CRC) or ip_compute_csum() (IP checksum, the
 * memory domain of SCSI DIX), so the engine agrees with the block layer.
 *
 * The fake device emulates an integrity HCA with it, and the signature
 * suite checks it against fixed vectors (and crc_t10dif() against the
 * CRC's standard check value).
 *
 * Recovery: none; bad arguments give -EINVAL.  Serialization: none
 * needed, it only reads and writes the caller's buffers.
 */

#include <linux/crc-t10dif.h>
#include <linux/module.h>
#include <linux/t10-pi.h>
#include <net/checksum.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "t10pi_oracle.h"

static __be16 mrkit_pi_guard(const struct mrkit_pi *pi, bool mem_domain,
			     const void *data)
{
	if (mem_domain && (pi->flags & MRKIT_PI_MEM_IPCSUM))
		return (__force __be16)ip_compute_csum(data, pi->interval);
	return cpu_to_be16(crc_t10dif(data, pi->interval));
}

static u32 mrkit_pi_ref(const struct mrkit_pi *pi, u64 i)
{
	return pi->flags & MRKIT_PI_REF_INCREMENT ? pi->ref_tag + (u32)i :
						    pi->ref_tag;
}

static int mrkit_pi_intervals(const struct mrkit_pi *pi, size_t len, u64 *n)
{
	if (!pi->interval || !is_power_of_2(pi->interval) || !len ||
	    len % pi->interval)
		return -EINVAL;
	*n = len / pi->interval;
	return 0;
}

/**
 * mrkit_pi_generate - compute protection information for a buffer
 * @pi: the description (interval, tags, guard type)
 * @mem_domain: guard of the memory domain (may be the IP checksum) rather
 *	than the wire's (always the T10-DIF CRC)
 * @data: the data, a whole number of intervals
 * @len: its length
 * @prot: receives len / interval tuples of 8 bytes
 *
 * Context: any.
 * Return: 0, or -EINVAL if @len is not a whole number of intervals.
 */
int mrkit_pi_generate(const struct mrkit_pi *pi, bool mem_domain,
		      const void *data, size_t len, void *prot)
{
	struct t10_pi_tuple *t = prot;
	u64 i, n;

	if (mrkit_pi_intervals(pi, len, &n))
		return -EINVAL;
	for (i = 0; i < n; i++, t++, data += pi->interval) {
		t->guard_tag = mrkit_pi_guard(pi, mem_domain, data);
		t->app_tag = cpu_to_be16(pi->app_tag);
		t->ref_tag = cpu_to_be32(mrkit_pi_ref(pi, i));
	}
	return 0;
}

/**
 * mrkit_pi_verify - check protection information against a buffer
 * @pi: the description; its check flags select what is verified
 * @mem_domain: as for mrkit_pi_generate()
 * @data: the data
 * @len: its length, a whole number of intervals
 * @prot: its tuples
 * @res: on a failure, the failing tag, expected and actual values, the
 *	offset of the failing tuple in the interleaved stream (interval + 8
 *	bytes per block) and the sector, SCSI sense and NVMe status
 *
 * Context: any.
 * Return: 0 if every interval passes, -EILSEQ at the first that does not,
 * -EINVAL if @len is not a whole number of intervals.
 */
int mrkit_pi_verify(const struct mrkit_pi *pi, bool mem_domain,
		    const void *data, size_t len, const void *prot,
		    struct mrkit_pi_result *res)
{
	const struct t10_pi_tuple *t = prot;
	struct ib_mr_status st = {};
	u32 expected = 0, actual = 0;
	u64 i, n;
	int type = 0;

	memset(res, 0, sizeof(*res));
	if (mrkit_pi_intervals(pi, len, &n))
		return -EINVAL;
	for (i = 0; i < n; i++, t++, data += pi->interval) {
		u16 app = be16_to_cpu(t->app_tag);
		u32 ref = be32_to_cpu(t->ref_tag);

		if ((pi->flags & MRKIT_PI_APP_ESCAPE) && app == 0xffff &&
		    (!(pi->flags & MRKIT_PI_REF_ESCAPE) || ref == 0xffffffff))
			continue;
		if (pi->flags & MRKIT_PI_CHECK_GUARD) {
			__be16 g = mrkit_pi_guard(pi, mem_domain, data);

			if (g != t->guard_tag) {
				type = IB_SIG_BAD_GUARD;
				expected = be16_to_cpu(g);
				actual = be16_to_cpu(t->guard_tag);
				break;
			}
		}
		if ((pi->flags & MRKIT_PI_CHECK_APP) &&
		    (app & pi->app_tag_mask) != (pi->app_tag & pi->app_tag_mask)) {
			type = IB_SIG_BAD_APPTAG;
			expected = pi->app_tag;
			actual = app;
			break;
		}
		if ((pi->flags & MRKIT_PI_CHECK_REF) && ref != mrkit_pi_ref(pi, i)) {
			type = IB_SIG_BAD_REFTAG;
			expected = mrkit_pi_ref(pi, i);
			actual = ref;
			break;
		}
	}
	if (i == n)
		return 0;
	st.fail_status = IB_MR_CHECK_SIG_STATUS;
	st.sig_err.err_type = type;
	st.sig_err.expected = expected;
	st.sig_err.actual = actual;
	st.sig_err.sig_err_offset = i * (pi->interval + 8) + pi->interval;
	mrkit_pi_decode(pi, &st, 0, res);
	return -EILSEQ;
}
