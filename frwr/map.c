// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit: scatterlist mapping and splitting for one I/O.
 *
 * Normal operation
 * ----------------
 * mrkit_io_map() takes a DMA-mapped scatterlist (mapping it first when
 * asked to) and covers it with as few pool descriptors as possible.  Each
 * descriptor takes the maximal prefix of what is left that one MR can
 * express: it ends at an interior gap (an entry boundary that is neither
 * contiguous nor page-aligned on both sides; SG_GAPS MRs have none) or
 * when the MR's page list is full.  A full page list can end inside an
 * entry; the next descriptor then starts at that offset (partial mapping
 * as srp and xprtrdma do).  mrkit computes every chunk itself, so the page
 * limit holds on every provider (siw's map_mr_sg would otherwise take a
 * whole entry), and it checks the
 * provider's answer against the DMA-mapped entry count of the chunk and
 * its byte count - never against a pre-mapping count.
 *
 * Nothing is exposed by mapping: rkeys are rotated with ib_inc_rkey()
 * only when mrkit_io_segs() or a post hands the REG_MRs out, so a
 * registration that is mapped and never posted changes nothing at the
 * device and cannot cause a missing or double invalidation.
 *
 * Recovery
 * --------
 * Any failure unwinds everything the call did: descriptors go back to
 * the pool, a DMA mapping mrkit made is undone, and the I/O is idle again.
 * An empty pool gives -EAGAIN (growth is already queued); a list that the
 * pool can never cover gives -EINVAL with a message saying why.
 *
 * Serialization
 * -------------
 * An I/O belongs to its ULP request: the caller serializes calls on one
 * mrkit_io.  The caller's scatterlist is only read, except that the first
 * and last entries of a chunk that starts or ends inside an entry are
 * trimmed for the duration of one ib_map_mr_sg() call.
 */

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include <trace/events/mrkit.h>

/**
 * mrkit_io_init - prepare an I/O object
 * @io: the I/O, usually embedded in the ULP's request
 * @pool: the pool its descriptors come from
 * @dir: who accesses the registered memory (&enum mrkit_dir)
 * @done: called once every rkey of the I/O is invalid again, after
 *	mrkit_io_invalidate(); may be NULL when only the sync variant is used
 *
 * Context: any.
 */
void mrkit_io_init(struct mrkit_io *io, struct mrkit_pool *pool,
		   enum mrkit_dir dir, mrkit_io_done_t done)
{
	memset(io, 0, sizeof(*io));
	io->pool = pool;
	io->dir = dir;
	io->done = done;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_init, MRKIT);

static bool mrkit_dev_iwarp(const struct ib_device *dev)
{
	return rdma_node_get_transport(dev->node_type) == RDMA_TRANSPORT_IWARP;
}

static int mrkit_dir_access(const struct mrkit_io *io)
{
	switch (io->dir) {
	case MRKIT_PEER_WRITES:
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	case MRKIT_PEER_READS:
		return IB_ACCESS_REMOTE_READ;
	case MRKIT_PEER_BIDI:
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ;
	case MRKIT_LOCAL_SINK:
		/* iWARP places RDMA READ responses like remote writes. */
		if (mrkit_dev_iwarp(io->pool->dev))
			return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		return IB_ACCESS_LOCAL_WRITE;
	default:
		return -EINVAL;
	}
}

enum dma_data_direction mrkit_io_dma_dir(const struct mrkit_io *io)
{
	switch (io->dir) {
	case MRKIT_PEER_READS:
		return DMA_TO_DEVICE;
	case MRKIT_PEER_BIDI:
		return DMA_BIDIRECTIONAL;
	default:
		return DMA_FROM_DEVICE;
	}
}

/**
 * mrkit_io_set_access - override the access flags derived from the direction
 * @io: an idle I/O
 * @access: %IB_ACCESS_* flags for its registrations
 *
 * The override lasts until mrkit_io_init(), across failed maps and reuse.
 *
 * Context: any.
 * Return values:
 *   %0 - used by the next mrkit_io_map().
 *   %-EINVAL - REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE (the
 *	ibv_reg_mr(3) rule), or flags outside what FRWR can grant.
 */
int mrkit_io_set_access(struct mrkit_io *io, int access)
{
	const int allowed = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;

	if ((access & ~allowed) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IB_ACCESS_LOCAL_WRITE))) {
		mrkit_pool_err(io->pool,
			       "access 0x%x refused: remote write or atomic needs local write\n",
			       access);
		return -EINVAL;
	}
	io->access = access;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_set_access, MRKIT);

/**
 * mrkit_io_set_tag - set the tag %MRKIT_MAP_IOVA_TAG puts in the iova
 * @io: an idle I/O
 * @tag: e.g. an RPC XID
 *
 * Context: any.
 */
void mrkit_io_set_tag(struct mrkit_io *io, u32 tag)
{
	io->tag = tag;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_set_tag, MRKIT);

/* mrkit_chunk(): the list ended before @nents entries. */
#define MRKIT_CHUNK_SHORT	1

/* Why a chunk ended before the end of the list. */
enum mrkit_chunk_end {
	MRKIT_CHUNK_ALL,	/* the rest of the list fits */
	MRKIT_CHUNK_GAP,	/* a gap the MR type cannot express */
	MRKIT_CHUNK_FULL,	/* the page list (or entry list) is full */
};

/* One descriptor's share of the list, as computed before mapping. */
struct mrkit_chunk {
	struct scatterlist	*sg;		/* first entry */
	struct scatterlist	*last;		/* last entry touched */
	unsigned int		off;		/* offset into the first */
	int			nents;		/* entries touched */
	unsigned int		last_len;	/* last entry's DMA length; 0: as is */
	u64			bytes;
	enum mrkit_chunk_end	end;
	int			end_index;	/* entry where it ended */
	struct scatterlist	*next_sg;	/* where the next chunk starts */
	unsigned int		next_off;
};

/*
 * Compute the maximal prefix of (@sg + @off, @left entries) one MR of
 * @max pages of 1 << @shift bytes can map, with the page accounting of
 * ib_sg_to_pages(): entries are coalesced when contiguous, and a new entry
 * not aligned on both sides of a contiguous boundary stops the chunk.
 * @base_index is the list index of @sg, for messages.  One pass, no
 * division: this runs once per entry on the I/O path.  A chunk also ends
 * before its length would pass 4 GiB - 1 (lengths are 32 bits on the
 * wire; SG_GAPS MRs or large pages could exceed that).
 * Return: 0; -1 - index of a zero-length entry; or %MRKIT_CHUNK_SHORT.
 */
static int mrkit_chunk(struct scatterlist *sg, unsigned int off, int left,
		       u32 max, unsigned int shift, bool gaps_ok,
		       int base_index, struct mrkit_chunk *c)
{
	const u64 mask = (1ULL << shift) - 1;
	struct scatterlist *s = sg, *prev = sg;
	u64 prev_end = 0, bytes = 0;
	u32 pages = 0;
	int i;

	c->sg = sg;
	c->off = off;
	c->last_len = 0;
	c->end = MRKIT_CHUNK_ALL;
	for (i = 0; i < left; i++, prev = s, s = sg_next(s)) {
		unsigned int skip = i ? 0 : off;
		u64 a, len, e, base, fit_end;
		u32 add;

		if (unlikely(!s))
			return MRKIT_CHUNK_SHORT;	/* nents beyond the list */
		a = sg_dma_address(s) + skip;
		len = sg_dma_len(s) - skip;
		e = a + len;
		if (unlikely(!sg_dma_len(s)))
			return -(base_index + i) - 1;	/* zero-length entry */
		/* A segment's length is 32 bits on the wire: split before. */
		if (unlikely(bytes + len > U32_MAX)) {
			c->end = MRKIT_CHUNK_FULL;
			break;
		}
		/* Never more entries than pages (siw's PBL counts entries). */
		if (unlikely(i == max)) {
			c->end = MRKIT_CHUNK_FULL;
			break;
		}
		if (gaps_ok) {
			/* SG_GAPS MRs take any entry: the limit is entries. */
			bytes += len;
			continue;
		}
		base = a & ~mask;
		if (unlikely(i && ((prev_end | a) & mask))) {
			if (prev_end != a) {
				c->end = MRKIT_CHUNK_GAP;
				break;
			}
			/* Contiguous: the first page is the previous one's last. */
			base += mask + 1;
			add = e > base ? (e - base + mask) >> shift : 0;
		} else {
			/* A new page run (the common case: page entries). */
			add = (e - base + mask) >> shift;
		}
		if (unlikely(pages + add > max)) {
			c->end = MRKIT_CHUNK_FULL;
			fit_end = base + ((u64)(max - pages) << shift);
			if (fit_end <= a || bytes + fit_end - a > U32_MAX)
				break;
			/* Take the part of this entry that fits. */
			c->nents = i + 1;
			c->bytes = bytes + fit_end - a;
			c->last = s;
			c->last_len = skip + (fit_end - a);
			c->end_index = base_index + i;
			c->next_sg = s;
			c->next_off = c->last_len;
			return 0;
		}
		pages += add;
		bytes += len;
		prev_end = e;
	}
	c->nents = i;
	c->bytes = bytes;
	c->last = prev;
	c->end_index = base_index + i;
	c->next_sg = i < left ? s : NULL;
	c->next_off = 0;
	return 0;
}

/* Never give a protected registration back unchecked; records -EILSEQ. */
void mrkit_io_enforce_pi_all(struct mrkit_io *io)
{
	struct mrkit_mr *mr;

	for (mr = io->mrs; mr; mr = mr->io_next)
		if (mrkit_mr_enforce_pi(io, mr))
			io->status = io->status ?: -EILSEQ;
}

/*
 * Put back every descriptor of an I/O that exposes nothing (those holding
 * a lazily kept registration keep it), undo mrkit's DMA mapping, and
 * leave the I/O in @state.  With @io->fence_pending set, the retired
 * descriptors the finisher left pointing at @io make the pool's work item
 * its owner from the first put on: the I/O is done with before that.
 * @retired: the chain that finished the I/O completed successfully, so no
 * WR on its descriptors can still complete (mrkit_mr_put_own()).
 * An access override (mrkit_io_set_access()) survives.
 */
void mrkit_io_put_all(struct mrkit_io *io, u8 state, bool retired)
{
	struct mrkit_mr *mr = io->mrs, *next;
	bool fence = io->fence_pending;

	mrkit_io_enforce_pi_all(io);
	io->mrs = NULL;
	io->nr_mrs = 0;
	if (io->sgl)
		ib_dma_unmap_sg(io->pool->dev, io->sgl, io->sg_nents,
				mrkit_io_dma_dir(io));
	io->sgl = NULL;
	io->sg_nents = 0;
	io->state = state;
	for (; mr; mr = next) {
		next = mr->io_next;
		mr->io_next = NULL;
		if (!fence)
			mr->io = NULL;
		if (mrkit_mr_state(mr) == MRKIT_MR_REGISTERED && mr->dev_valid)
			mrkit_mr_put_valid(mr);
		else if (retired)
			mrkit_mr_put_own(mr);
		else
			mrkit_mr_put(mr);
	}
}

static int mrkit_map_one(struct mrkit_io *io, struct mrkit_mr *mr,
			 struct mrkit_chunk *c, u32 psize, u32 flags)
{
	struct scatterlist *first = c->sg, *last = c->last;
	unsigned int first_len = sg_dma_len(first), last_len;
	dma_addr_t first_addr = sg_dma_address(first);
	struct ib_mr *ibmr = mr->ibmr;
	int n;

	last_len = sg_dma_len(last);
	/*
	 * Present the provider exactly the chunk: trim the last entry and
	 * advance the first rather than pass an sg_offset, which not every
	 * provider honours (siw's map_mr_sg builds its PBL from the start of
	 * the first entry and would place data at the wrong address).
	 */
	if (c->last_len)
		sg_dma_len(last) = c->last_len;
	if (c->off) {
		sg_dma_address(first) += c->off;
		sg_dma_len(first) -= c->off;
	}
	n = ib_map_mr_sg(ibmr, first, c->nents, NULL, psize);
	sg_dma_len(last) = last_len;
	sg_dma_address(first) = first_addr;
	sg_dma_len(first) = first_len;

	if (n != c->nents || ibmr->length != c->bytes) {
		mrkit_pool_err(io->pool,
			       "provider mapped %d of %d DMA entries (%llu of %llu bytes)\n",
			       n, c->nents, ibmr->length, c->bytes);
		return n < 0 ? n : -EINVAL;
	}
	if (flags & MRKIT_MAP_IOVA_ZERO)
		ibmr->iova = 0;
	else if (flags & MRKIT_MAP_IOVA_TAG)
		ibmr->iova = (ibmr->iova & 0xffffffffULL) | (u64)io->tag << 32;
	return mrkit_mr_own(mr, MRKIT_MR_RESERVED, MRKIT_MR_MAPPED);
}

/**
 * mrkit_io_map - map a scatterlist onto pool descriptors
 * @io: an idle I/O from mrkit_io_init()
 * @sgl: the data; DMA-mapped by the caller unless @flags has %MRKIT_MAP_DMA
 * @nents: entries in @sgl (the DMA-mapped count when the caller mapped it)
 * @flags: &enum mrkit_map_flags
 *
 * Splits the list across as many descriptors as needed (see the top of
 * this file), unless %MRKIT_MAP_NO_SPLIT.  No rkey is exposed yet: call
 * mrkit_io_segs() for what to advertise, then mrkit_io_post().
 *
 * Context: any; with %MRKIT_MAP_DMA, whatever ib_dma_map_sg() allows.
 *	No allocation, no sleeping.
 * Return values: the number of descriptors (segments) used, or:
 *   %-EINVAL - the I/O is not idle, unknown @flags, an integrity pool
 *	(use mrkit_io_map_pi()), the list is empty or shorter than @nents,
 *	an entry has zero length, the direction or access is invalid,
 *	splitting is forbidden and needed, or the list needs more
 *	descriptors than the pool can ever have; nothing is left mapped.
 *   %-EAGAIN - the pool has too few free descriptors now; retry later.
 *   %-EIO - DMA mapping failed.
 */
int mrkit_io_map(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		 u32 flags)
{
	struct mrkit_pool *pool = io->pool;
	struct mrkit_mr *mr, **tail = &io->mrs;
	struct scatterlist *sg;
	struct mrkit_chunk c;
	u32 psize = (flags & MRKIT_MAP_4K) ? SZ_4K : PAGE_SIZE;
	unsigned int shift = (flags & MRKIT_MAP_4K) ? 12 : PAGE_SHIFT;
	bool gaps_ok = pool->mr_type == IB_MR_TYPE_SG_GAPS;
	unsigned int off = 0;
	int index = 0, dma_nents, ret;

	if ((io->state != MRKIT_IO_IDLE && io->state != MRKIT_IO_DONE) ||
	    io->mrs) {
		mrkit_pool_err(pool, "map of an I/O that is not idle\n");
		return -EINVAL;
	}
	if (flags & ~MRKIT_MAP_FLAGS_ALL) {
		mrkit_pool_err(pool, "map: unknown flags 0x%x\n",
			       flags & ~MRKIT_MAP_FLAGS_ALL);
		return -EINVAL;
	}
	if (pool->mr_type == IB_MR_TYPE_INTEGRITY) {
		mrkit_pool_err(pool, "plain map on an integrity pool: use mrkit_io_map_pi()\n");
		return -EINVAL;
	}
	io->state = MRKIT_IO_IDLE;
	io->status = 0;
	io->remote_inv_done = false;
	if (!sgl || nents <= 0) {
		mrkit_pool_err(pool, "map of an empty scatterlist\n");
		return -EINVAL;
	}
	if (!io->access) {
		io->access = mrkit_dir_access(io);
		if (io->access < 0) {
			mrkit_pool_err(pool, "invalid direction %u\n", io->dir);
			io->access = 0;
			return -EINVAL;
		}
	}
	if ((flags & MRKIT_MAP_IOVA_ZERO) && (flags & MRKIT_MAP_IOVA_TAG))
		return -EINVAL;

	dma_nents = nents;
	if (flags & MRKIT_MAP_DMA) {
		/* ib_dma_map_sg() would walk off a list shorter than @nents. */
		if (unlikely(sg_nents(sgl) < nents)) {
			mrkit_pool_err(pool, "%d entries passed, the list has %d\n",
				       nents, sg_nents(sgl));
			return -EINVAL;
		}
		dma_nents = mrkit_fault(MRKIT_FAULT_DMA_MAP) ? 0 :
			    ib_dma_map_sg(pool->dev, sgl, nents,
					  mrkit_io_dma_dir(io));
		if (!dma_nents) {
			mrkit_pool_err(pool, "DMA mapping of %d entries failed\n",
				       nents);
			return -EIO;
		}
		io->sgl = sgl;
		io->sg_nents = nents;
	}
	io->map_flags = flags;

	sg = sgl;
	while (sg) {
		ret = mrkit_chunk(sg, off, dma_nents - index,
				  pool->pages_per_mr, shift, gaps_ok, index, &c);
		if (ret == MRKIT_CHUNK_SHORT) {
			mrkit_pool_err(pool, "%d entries passed, the list is shorter\n",
				       dma_nents);
			ret = -EINVAL;
			goto out_unwind;
		} else if (ret) {
			mrkit_pool_err(pool, "scatterlist entry %d has zero length\n",
				       -ret - 1);
			ret = -EINVAL;
			goto out_unwind;
		}
		if (!c.nents) {
			/* Cannot happen with a sane pool; never loop. */
			ret = -EINVAL;
			goto out_unwind;
		}
		if ((flags & MRKIT_MAP_NO_SPLIT) && c.end != MRKIT_CHUNK_ALL) {
			if (c.end == MRKIT_CHUNK_GAP)
				mrkit_pool_err(pool,
					       "no split allowed: gap between entries %d and %d\n",
					       c.end_index - 1, c.end_index);
			else
				mrkit_pool_err(pool,
					       "no split allowed: page list of %u full at entry %d\n",
					       pool->pages_per_mr, c.end_index);
			ret = -EINVAL;
			goto out_unwind;
		}
		if (io->nr_mrs >= pool->max_depth || io->nr_mrs == U16_MAX) {
			mrkit_pool_err(pool,
				       "scatterlist needs more than %u descriptors (max_depth)\n",
				       pool->max_depth);
			ret = -EINVAL;
			goto out_unwind;
		}
		mr = mrkit_mr_get(pool);
		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto out_unwind;
		}
		mr->io = io;
		mr->io_next = NULL;
		*tail = mr;
		tail = &mr->io_next;
		io->nr_mrs++;
		ret = mrkit_map_one(io, mr, &c, psize, flags);
		if (ret)
			goto out_unwind;

		index += c.nents - (c.next_off ? 1 : 0);
		sg = c.next_sg;
		off = c.next_off;
	}
	io->state = MRKIT_IO_MAPPED;
	trace_mrkit_map(io, nents);
	return io->nr_mrs;

out_unwind:
	mrkit_io_put_all(io, MRKIT_IO_IDLE, false);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_map, MRKIT);

/*
 * Hand a mapped descriptor out for posting: rotate the key now.  Its
 * REG_MR WR is built by the post that carries it (mrkit_build_reg()).
 */
static void mrkit_mr_hand_out(struct mrkit_io *io, struct mrkit_mr *mr)
{
	struct ib_mr *ibmr = mr->ibmr;

	ib_update_fast_reg_key(ibmr, ib_inc_rkey(ibmr->rkey));
	mrkit_mr_own(mr, MRKIT_MR_MAPPED, MRKIT_MR_REGISTERED);
}

/* Called by the post paths; a no-op when mrkit_io_segs() already ran. */
void mrkit_io_hand_out(struct mrkit_io *io)
{
	struct mrkit_mr *mr;

	if (io->state != MRKIT_IO_MAPPED)
		return;
	for (mr = io->mrs; mr; mr = mr->io_next)
		if (mrkit_mr_state(mr) == MRKIT_MR_MAPPED)
			mrkit_mr_hand_out(io, mr);
	io->state = MRKIT_IO_HANDED_OUT;
}

/**
 * mrkit_io_segs - hand out an I/O's registrations and say what to advertise
 * @io: a mapped I/O
 * @segs: filled with one (iova, length, rkey, lkey) per descriptor, in list
 *	order
 * @max: room in @segs
 *
 * Rotates each descriptor's rkey (ib_inc_rkey(): a descriptor does not
 * repeat an rkey within 256 registrations) and builds its REG_MR.  The
 * rkeys are exposed from now on: the ULP must post the I/O
 * (mrkit_io_post()) and later invalidate it, or release it unposted.
 *
 * Context: any.
 * Return values: the number of segments, or:
 *   %-EINVAL - the I/O is not mapped.
 *   %-ENOSPC - @max is smaller than mrkit_io_nr_mrs(); nothing changed.
 */
int mrkit_io_segs(struct mrkit_io *io, struct mrkit_seg *segs,
		  unsigned int max)
{
	struct mrkit_mr *mr;
	unsigned int i = 0;

	if (io->state != MRKIT_IO_MAPPED && io->state != MRKIT_IO_HANDED_OUT) {
		mrkit_pool_err(io->pool, "segments of an I/O that is not mapped\n");
		return -EINVAL;
	}
	if (max < io->nr_mrs)
		return -ENOSPC;
	mrkit_io_hand_out(io);
	for (mr = io->mrs; mr; mr = mr->io_next, i++) {
		segs[i].addr = mr->ibmr->iova;
		segs[i].length = mr->ibmr->length;
		segs[i].key = mr->ibmr->rkey;
		segs[i].lkey = mr->ibmr->lkey;
	}
	return i;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_segs, MRKIT);
