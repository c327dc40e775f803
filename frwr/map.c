// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: Mapping
 *
 * **Normal operation**
 * mrkit_io_map() takes a DMA-mapped scatterlist (mapping it first when
 * asked to) and covers it with as few pool descriptors as possible.  Each
 * descriptor takes the maximal prefix of what is left that one MR can
 * express: it ends at an interior gap (an entry boundary that is neither
 * contiguous nor page-aligned on both sides; SG_GAPS MRs have none) or
 * when the MR's page list is full.  A full page list can end inside an
 * entry; the next descriptor then starts at that offset (partial mapping
 * as srp and xprtrdma do).  mrkit computes every split itself, so the page
 * limit holds on every provider (siw's map_mr_sg would otherwise take a
 * whole entry), and it checks the
 * provider's answer against the DMA-mapped entry count of the chunk and
 * its byte count - never against a pre-mapping count.  A list of one
 * DMA-mapped entry that one MR takes whole (most small I/Os) skips the
 * walk: mrkit_chunk_one() decides that from the entry alone, and gives
 * whatever it does not take to the walk.  A list of several entries that
 * may fit one MR is not walked twice either: a light walk refuses
 * zero-length entries and short lists (mrkit_list_whole()), the provider
 * maps the whole list, and its answer - every entry, no more pages than
 * the pool's limit (mrkit_map_whole()) - is exactly the single chunk
 * mrkit_chunk() would have computed; any other answer (a gap, too many
 * pages) is mapped again, split, from the same descriptor.  A provider
 * error is an error either way.
 *
 * Nothing is exposed by mapping: rkeys are rotated with ib_inc_rkey()
 * only when mrkit_io_segs() or a post hands the REG_MRs out, so a
 * registration that is mapped and never posted changes nothing at the
 * device and cannot cause a missing or double invalidation.
 *
 * **Recovery**
 * Any failure unwinds everything the call did: descriptors go back to
 * the pool, a DMA mapping mrkit made is undone, and the I/O is idle again.
 * An empty pool gives -EAGAIN (below its max_depth, growth is already
 * queued); a list that the pool can never cover gives -EINVAL with a
 * message saying why.
 *
 * **Serialization**
 * An I/O belongs to its ULP request: the caller serializes calls on one
 * mrkit_io.  The caller's scatterlist is only read, except that the first
 * and last entries of a chunk that starts or ends inside an entry are
 * trimmed for the duration of one ib_map_mr_sg() call.
 */

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <kunit/visibility.h>
#include <rdma/mrkit.h>

#include "mrkit_priv.h"
#include "frwr/io.h"
#include <trace/events/mrkit.h>

/* A chain link: out of line, so that the step below stays a branch. */
static noinline struct scatterlist *mrkit_sg_chained(struct scatterlist *sg)
{
	return sg_chain_ptr(sg);
}

/*
 * Step to the next entry of a (possibly chained) list, inline.  The next
 * entry is the adjacent one unless it is a chain link (rare: one per
 * table of entries), a predicted branch rather than a conditional move,
 * so that reading the next entry never waits for this check's load.
 */
static __always_inline struct scatterlist *mrkit_sg_step(struct scatterlist *sg)
{
	if (sg_is_last(sg))
		return NULL;
	sg++;
	if (unlikely(sg_is_chain(sg)))
		return mrkit_sg_chained(sg);
	return sg;
}

/*
 * The common case of mrkit_chunk(), in a tighter loop: entries of whole,
 * aligned pages (a page list, a block request's segments) from the start
 * of an entry.  Each is a page run of its own whatever its neighbours, and
 * while the page limit holds so does the 32-bit length (checked once), so
 * only the room left under the page limit is kept.  Returns the entries
 * taken; *@sp is the first entry not taken, and the general loop takes
 * over there with the same state and decides everything else.
 */
static __always_inline int
mrkit_chunk_whole_pages(struct scatterlist **sp, struct scatterlist **prevp,
			int left, u32 max, unsigned int shift, u32 *pages,
			u64 *bytes, u64 *prev_end)
{
	const u64 mask = (1ULL << shift) - 1, limit = (u64)max << shift;
	struct scatterlist *s = *sp, *prev = NULL;
	u64 room = limit;
	int i = 0;

	if (limit > U32_MAX || left <= 0)
		return 0;
	for (;;) {
		u64 a = sg_dma_address(s), len = sg_dma_len(s);

		/*
		 * Whole pages, at least one (len - 1 wraps for an empty
		 * entry), and no more than the room left: one compare.
		 */
		if (unlikely(((a | len) & mask) || len - 1 >= room))
			break;
		room -= len;
		prev = s;
		/* The end of the count or of the list: nothing to step to. */
		if (++i == left || sg_is_last(s)) {
			s = NULL;
			break;
		}
		s++;
		if (unlikely(sg_is_chain(s)))
			s = mrkit_sg_chained(s);
	}
	if (prev) {
		*prevp = prev;
		*prev_end = sg_dma_address(prev) + sg_dma_len(prev);
	}
	/* Whole pages only: the pages are the bytes'. */
	*bytes = limit - room;
	*pages = *bytes >> shift;
	*sp = s;
	return i;
}

/**
 * mrkit_chunk - one descriptor's share of a DMA-mapped list
 * @sg: where the chunk starts
 * @off: bytes of @sg that earlier chunks took
 * @left: entries of the list from @sg on
 * @max: pages one MR maps
 * @shift: log2 of the page size
 * @gaps_ok: the MR takes any entry (SG_GAPS): only entries count
 * @base_index: the list index of @sg, for messages
 * @c: the chunk
 *
 * The maximal prefix of (@sg + @off, @left entries) one MR can map, with
 * the page accounting of ib_sg_to_pages(): contiguous entries coalesce, and
 * an entry not aligned on both sides of a boundary ends the chunk (a gap).
 * A chunk also ends before its length would pass 4 GiB - 1 (segment
 * lengths are 32 bits on the wire) and never has more entries than pages
 * (siw's page list counts entries).  A full page list can end inside an
 * entry; @c then says where the next chunk starts.  One pass over the
 * entries with an inline step, no division: it runs once per entry on the
 * I/O path, and the entry count, the zero-length check, the gap and page
 * accounting and the byte total all come from it.
 *
 * Return: 0; or -EINVAL when the list has a zero-length entry
 * (@c->end is %MRKIT_CHUNK_ZERO) or ends before @left entries
 * (%MRKIT_CHUNK_SHORT), @c->end_index naming the entry.
 */
VISIBLE_IF_KUNIT __always_inline int
mrkit_chunk(struct scatterlist *sg, unsigned int off, int left, u32 max,
	    unsigned int shift, bool gaps_ok, int base_index,
	    struct mrkit_chunk *c)
{
	const u64 mask = (1ULL << shift) - 1;
	struct scatterlist *s = sg, *prev = sg;
	u64 prev_end = 0, bytes = 0;
	unsigned int skip = off;
	u32 pages = 0;
	int i = 0;

	c->sg = sg;
	c->off = off;
	c->last_len = 0;
	c->end = MRKIT_CHUNK_ALL;
	if (!off && !gaps_ok)	/* the common case first */
		i = mrkit_chunk_whole_pages(&s, &prev, left, max, shift, &pages,
					    &bytes, &prev_end);
	for (; i < left; i++, skip = 0, prev = s, s = mrkit_sg_step(s)) {
		u64 a, len, e, base, fit_end;
		u32 add;

		if (unlikely(!s)) {
			c->end = MRKIT_CHUNK_SHORT;
			c->end_index = base_index + i;
			return -EINVAL;
		}
		if (unlikely(!sg_dma_len(s))) {
			c->end = MRKIT_CHUNK_ZERO;
			c->end_index = base_index + i;
			return -EINVAL;
		}
		a = sg_dma_address(s) + skip;
		len = sg_dma_len(s) - skip;
		e = a + len;
		/* A segment's length is 32 bits on the wire: split before. */
		if (unlikely(bytes + len > U32_MAX || i == max)) {
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
EXPORT_SYMBOL_IF_KUNIT(mrkit_chunk);

/**
 * mrkit_chunk_one - a one-entry list that one descriptor maps whole
 * @sg: the entry
 * @max: pages one MR maps
 * @shift: log2 of the page size
 * @gaps_ok: the MR takes any entry (SG_GAPS)
 *
 * The common I/O of one DMA-mapped entry, without mrkit_chunk()'s walk:
 * exactly the cases where mrkit_chunk(@sg, 0, 1, ...) gives one chunk of
 * the whole entry (no error, nothing left), with the same page
 * accounting.  Everything else - a zero-length entry, one that needs more
 * pages than one MR has - is for mrkit_chunk() to split or refuse.
 *
 * Return: the entry's length (the chunk's bytes), or 0.
 */
VISIBLE_IF_KUNIT __always_inline u32
mrkit_chunk_one(const struct scatterlist *sg, u32 max, unsigned int shift,
		bool gaps_ok)
{
	const u64 mask = (1ULL << shift) - 1;
	u64 a = sg_dma_address(sg);
	u32 len = sg_dma_len(sg);

	/* SG_GAPS: one entry within one entry of the list. */
	if (gaps_ok)
		return max ? len : 0;
	/* Pages as mrkit_chunk() counts them: from the entry's first page. */
	if (((a + len - (a & ~mask) + mask) >> shift) > max)
		return 0;
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_chunk_one);

/**
 * mrkit_list_whole - may one descriptor take a list of several entries whole?
 * @sg: the first entry
 * @nents: the DMA-mapped entries
 *
 * The light walk of a list of several entries that fits one MR's entry
 * count: no page, gap or byte accounting (the provider's own walk does
 * that, and mrkit_map_whole() checks its answer), only what the provider
 * would not refuse: a zero-length entry (ib_sg_to_pages() maps one as a
 * page of its own, shifting the data after it) and a list shorter than
 * @nents.  Four entries at a time while no chain link and no end is among
 * them: one test of their links together, one of each length.
 *
 * Return: true when none of the @nents entries has zero length and the
 * list has that many; false otherwise (mrkit_chunk() then says which).
 */
VISIBLE_IF_KUNIT __always_inline bool
mrkit_list_whole(struct scatterlist *sg, int nents)
{
	while (nents > 4) {
		if (unlikely((sg[0].page_link | sg[1].page_link |
			      sg[2].page_link | sg[3].page_link) &
			     (SG_CHAIN | SG_END)))
			break;
		if (unlikely(!sg_dma_len(&sg[0]) || !sg_dma_len(&sg[1]) ||
			     !sg_dma_len(&sg[2]) || !sg_dma_len(&sg[3])))
			return false;
		sg += 4;
		nents -= 4;
	}
	for (;;) {
		if (unlikely(sg_is_chain(sg))) {
			sg = mrkit_sg_chained(sg);
			continue;
		}
		if (unlikely(!sg_dma_len(sg)))
			return false;
		if (!--nents)
			return true;
		if (unlikely(sg_is_last(sg)))
			return false;
		sg++;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mrkit_list_whole);

/**
 * mrkit_map_whole - did the provider map a whole list as mrkit_chunk() would?
 * @ibmr: the MR the whole list was given to
 * @n: ib_map_mr_sg()'s answer
 * @nents: the list's entries
 * @max: pages one descriptor maps
 * @shift: log2 of the page size
 *
 * ib_sg_to_pages() counts an entry only once all of it is mapped and
 * stops at a gap, so a list it maps whole (@n == @nents) is one run of
 * pages from the first entry's page, every byte of it in the MR's length:
 * the pages are the iova's offset and the length, rounded up.  The limit
 * holds on every provider (siw's page list counts entries and takes more
 * pages); the length is 32 bits on the wire.
 *
 * Return: true when one descriptor holds exactly the list within the
 * pool's limits, as mrkit_chunk() would have computed it.
 */
static __always_inline bool mrkit_map_whole(const struct ib_mr *ibmr, int n,
					    int nents, u32 max,
					    unsigned int shift)
{
	const u64 mask = (1ULL << shift) - 1;
	u64 bytes = ibmr->length;

	return n == nents && bytes <= U32_MAX &&
	       ((ibmr->iova & mask) + bytes + mask) >> shift <= max;
}

/*
 * Present the provider exactly the chunk: trim the last entry and advance
 * the first rather than pass an sg_offset, which not every provider
 * honours (siw's map_mr_sg builds its PBL from the start of the first
 * entry and would place data at the wrong address).  The entries are
 * restored before this returns.
 */
static noinline int mrkit_map_trimmed(struct ib_mr *ibmr,
				      const struct mrkit_chunk *c, u32 psize)
{
	struct scatterlist *first = c->sg, *last = c->last;
	unsigned int first_len = sg_dma_len(first), last_len;
	dma_addr_t first_addr = sg_dma_address(first);
	int n;

	last_len = sg_dma_len(last);
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
	return n;
}

/*
 * Check what the provider mapped (@n entries, from ib_map_mr_sg()) against
 * the chunk (@nents entries, @bytes), set the iova and make @mr MAPPED.
 */
static __always_inline int mrkit_map_check(struct mrkit_io *io,
					   struct mrkit_mr *mr, int n,
					   int nents, u64 bytes, u32 flags)
{
	struct ib_mr *ibmr = mr->ibmr;

	if (n != nents || ibmr->length != bytes) {
		mrkit_pool_err(io->pool,
			       "provider mapped %d of %d DMA entries (%llu of %llu bytes)\n",
			       n, nents, ibmr->length, bytes);
		return n < 0 ? n : -EINVAL;
	}
	if (flags & MRKIT_MAP_IOVA_ZERO)
		ibmr->iova = 0;
	else if (flags & MRKIT_MAP_IOVA_TAG)
		ibmr->iova = (ibmr->iova & 0xffffffffULL) | (u64)io->tag << 32;
	/* mrkit_io_take() gave it RESERVED, and nothing else holds it. */
	return mrkit_mr_own_read(mr, MRKIT_MR_RESERVED, MRKIT_MR_RESERVED,
				 MRKIT_MR_MAPPED);
}

static __always_inline int mrkit_map_one(struct mrkit_io *io,
					 struct mrkit_mr *mr,
					 struct mrkit_chunk *c, u32 psize,
					 u32 flags)
{
	int n;

	if (likely(!c->last_len && !c->off))
		n = ib_map_mr_sg(mr->ibmr, c->sg, c->nents, NULL, psize);
	else
		n = mrkit_map_trimmed(mr->ibmr, c, psize);
	return mrkit_map_check(io, mr, n, c->nents, c->bytes, flags);
}

/*
 * Check a map's arguments and DMA-map the list when asked to: the number
 * of DMA-mapped entries, or a negative errno (nothing mapped).
 */
static __always_inline int
mrkit_map_prepare(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		  u32 flags)
{
	struct mrkit_pool *pool = io->pool;
	int dma_nents;

	if (unlikely(flags & ~MRKIT_MAP_FLAGS_ALL)) {
		mrkit_pool_err(pool, "map: unknown flags 0x%x\n",
			       flags & ~MRKIT_MAP_FLAGS_ALL);
		return -EINVAL;
	}
	if (unlikely(!sgl || nents <= 0)) {
		mrkit_pool_err(pool, "map of an empty scatterlist\n");
		return -EINVAL;
	}
	if (unlikely((flags & MRKIT_MAP_IOVA_ZERO) &&
		     (flags & MRKIT_MAP_IOVA_TAG))) {
		mrkit_pool_err(pool, "map: a zero-based and a tagged iova at once\n");
		return -EINVAL;
	}
	if (!(flags & MRKIT_MAP_DMA))
		return nents;
	/*
	 * Like the DMA API, mrkit trusts @nents here (a shorter list would
	 * make ib_dma_map_sg() walk off its end); CONFIG_DEBUG_SG checks it
	 * first.
	 */
	if (IS_ENABLED(CONFIG_DEBUG_SG) && unlikely(sg_nents(sgl) < nents)) {
		mrkit_pool_err(pool, "%d entries passed, the list has %d\n",
			       nents, sg_nents(sgl));
		return -EINVAL;
	}
	dma_nents = mrkit_fault(MRKIT_FAULT_DMA_MAP) ? 0 :
		    ib_dma_map_sg(pool->dev, sgl, nents, mrkit_io_dma_dir(io));
	if (unlikely(!dma_nents)) {
		mrkit_pool_err(pool, "DMA mapping of %d entries failed\n", nents);
		return -EIO;
	}
	io->sgl = sgl;
	io->sg_nents = nents;
	return dma_nents;
}

/*
 * Can the I/O take this chunk?  (No split allowed, or too many.)  @taken:
 * its descriptor is attached already (the first, after a whole-list try).
 */
static __always_inline bool mrkit_chunk_refused(const struct mrkit_io *io,
						const struct mrkit_chunk *c,
						u32 flags, bool taken)
{
	return !c->nents ||
	       ((flags & MRKIT_MAP_NO_SPLIT) && c->end != MRKIT_CHUNK_ALL) ||
	       (!taken && (io->nr_mrs >= io->pool->max_depth ||
			   io->nr_mrs == U16_MAX));
}

/* Say why a list cannot be mapped (mrkit_chunk() or mrkit_chunk_refused()). */
static void __cold mrkit_chunk_bad(const struct mrkit_pool *pool,
				   const struct mrkit_chunk *c, int ret,
				   int nents)
{
	if (ret && c->end == MRKIT_CHUNK_SHORT)
		mrkit_pool_err(pool, "%d entries passed, the list has %d\n",
			       nents, c->end_index);
	else if (ret)
		mrkit_pool_err(pool, "scatterlist entry %d has zero length\n",
			       c->end_index);
	else if (!c->nents)
		mrkit_pool_err(pool, "a chunk of no entry at entry %d\n",
			       c->end_index);
	else if (c->end == MRKIT_CHUNK_GAP)
		mrkit_pool_err(pool,
			       "no split allowed: gap between entries %d and %d\n",
			       c->end_index - 1, c->end_index);
	else if (c->end == MRKIT_CHUNK_FULL)
		mrkit_pool_err(pool,
			       "no split allowed: page list of %u full at entry %d\n",
			       pool->pages_per_mr, c->end_index);
	else
		mrkit_pool_err(pool,
			       "scatterlist needs more than %u descriptors (max_depth)\n",
			       pool->max_depth);
}

/*
 * Map a list chunk by chunk, one descriptor each, from its first chunk @c
 * (@ret: mrkit_chunk()'s answer for it); the first descriptor is @taken
 * when the whole list was tried on it (already attached).  Returns 0, or
 * an errno with the I/O's descriptors left for mrkit_io_unwind().  Out
 * of line: a list of one descriptor does not set up its frame.
 */
static noinline int mrkit_map_split(struct mrkit_io *io,
				    struct mrkit_chunk *c, int ret,
				    int dma_nents, struct mrkit_mr *taken,
				    u32 psize, u32 flags)
{
	struct mrkit_pool *pool = io->pool;
	unsigned int shift = ilog2(psize);
	struct mrkit_mr *mr, **tail = &io->mrs;
	int index = 0;

	for (;;) {
		if (unlikely(ret || mrkit_chunk_refused(io, c, flags, taken))) {
			mrkit_chunk_bad(pool, c, ret, dma_nents);
			return -EINVAL;
		}
		if (taken) {
			mr = taken;
			taken = NULL;
			tail = &mr->io_next;
		} else {
			mr = mrkit_io_take(io);
			if (IS_ERR(mr))
				return PTR_ERR(mr);
			tail = mrkit_io_attach(io, mr, tail);
		}
		ret = mrkit_map_one(io, mr, c, psize, flags);
		if (ret)
			return ret;

		index += c->nents - (c->next_off ? 1 : 0);
		if (!c->next_sg)
			return 0;
		ret = mrkit_chunk(c->next_sg, c->next_off, dma_nents - index,
				  pool->pages_per_mr, shift,
				  pool->mr_type == IB_MR_TYPE_SG_GAPS, index, c);
	}
}

/*
 * Map a list the straight path of mrkit_io_map() does not take whole:
 * walk it (mrkit_chunk()) and map it chunk by chunk (mrkit_map_split()),
 * one chunk if that is all it needs; @taken as mrkit_map_split()'s.  Out
 * of line, with the walk's state on its own stack.
 */
static noinline int mrkit_map_walk(struct mrkit_io *io, struct scatterlist *sg,
				   int dma_nents, struct mrkit_mr *taken,
				   u32 psize, u32 flags)
{
	struct mrkit_pool *pool = io->pool;
	struct mrkit_chunk c __uninitialized;
	int ret;

	ret = mrkit_chunk(sg, 0, dma_nents, pool->pages_per_mr, ilog2(psize),
			  pool->mr_type == IB_MR_TYPE_SG_GAPS, 0, &c);
	return mrkit_map_split(io, &c, ret, dma_nents, taken, psize, flags);
}

/*
 * mrkit_io_map()'s body, inline in it and in mrkit_io_map_seg(): the I/O
 * mapped (the number of descriptors), or an errno and nothing mapped.
 */
static __always_inline int __mrkit_io_map(struct mrkit_io *io,
					  struct scatterlist *sgl, int nents,
					  u32 flags)
{
	struct mrkit_pool *pool = io->pool;
	struct scatterlist *sg = sgl;
	u32 max = pool->pages_per_mr;
	u32 psize = (flags & MRKIT_MAP_4K) ? SZ_4K : PAGE_SIZE;
	unsigned int shift = (flags & MRKIT_MAP_4K) ? 12 : PAGE_SHIFT;
	bool gaps_ok = pool->mr_type == IB_MR_TYPE_SG_GAPS, whole = false;
	int dma_nents, ents = 1, ret;
	struct mrkit_mr *mr;
	u64 bytes = 0;

	ret = mrkit_io_begin_map(io, false);
	if (ret)
		return ret;
	dma_nents = mrkit_map_prepare(io, sgl, nents, flags);
	if (dma_nents < 0)
		return dma_nents;
	/*
	 * One entry that one descriptor maps whole: no walk.  Several that
	 * may fit one descriptor: the light walk, and the provider's walk
	 * decides (mrkit_map_whole()); any other list: the walk, and a split
	 * where it needs one (mrkit_map_walk()).
	 */
	if (dma_nents == 1) {
		bytes = mrkit_chunk_one(sg, max, shift, gaps_ok);
	} else if (!gaps_ok && dma_nents <= max) {
		ents = dma_nents;
		whole = mrkit_list_whole(sg, dma_nents);
	}
	if (unlikely(!bytes && !whole)) {
		ret = mrkit_map_walk(io, sg, dma_nents, NULL, psize, flags);
		goto out_check;
	}
	/*
	 * The whole list in one descriptor (most I/Os): no split to refuse,
	 * a pool has at least one descriptor, and the chunk starts and ends
	 * with the list.
	 */
	mr = mrkit_io_take(io);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto out_unwind;
	}
	mrkit_io_attach(io, mr, &io->mrs);
	ret = ib_map_mr_sg(mr->ibmr, sg, ents, NULL, psize);
	if (whole && ret >= 0) {
		/*
		 * Too many pages or a gap (the provider mapped less): split
		 * after all, the first chunk on this descriptor.  A provider
		 * error is an error.
		 */
		if (unlikely(!mrkit_map_whole(mr->ibmr, ret, ents, max,
					      shift))) {
			ret = mrkit_map_walk(io, sg, dma_nents, mr, psize,
					     flags);
			goto out_check;
		}
		bytes = mr->ibmr->length;
	}
	ret = mrkit_map_check(io, mr, ret, ents, bytes, flags);
out_check:
	if (ret)
		goto out_unwind;
	mrkit_io_map_done(io);
	trace_mrkit_map(io, nents);
	return io->nr_mrs;

out_unwind:
	mrkit_io_unwind(io);
	return ret;
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
 * Return: the number of descriptors (segments) used, or:
 *
 * * %-EBUSY - the I/O's RDMA READ chain is in flight.
 * * %-EINVAL - the I/O is not idle, unknown @flags, an integrity pool
 *   (use mrkit_io_map_pi()), the list is empty or shorter than @nents,
 *   an entry has zero length, the direction or access is invalid,
 *   splitting is forbidden and needed, or the list needs more
 *   descriptors than the pool can ever have; nothing is left mapped.
 * * %-EAGAIN - the pool has too few free descriptors now; retry later.
 * * %-EIO - DMA mapping failed.
 */
int mrkit_io_map(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		 u32 flags)
{
	return __mrkit_io_map(io, sgl, nents, flags);
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_map, MRKIT);

/*
 * What to advertise of a handed-out descriptor; @lkey as read before the
 * hand-out.  The lkey as ib_update_fast_reg_key() left it, whose low byte
 * is the key's since the hand-out, without reading it back: a load right
 * after that byte store would wait for it.
 */
static __always_inline void mrkit_seg_fill(struct mrkit_seg *seg,
					   const struct mrkit_mr *mr, u32 lkey)
{
	const struct ib_mr *ibmr = mr->ibmr;

	seg->addr = ibmr->iova;
	seg->length = ibmr->length;
	seg->key = mr->key;
	seg->lkey = (lkey & 0xffffff00) | (mr->key & 0xff);
}

/**
 * mrkit_io_segs - hand out an I/O's registrations and say what to advertise
 * @io: a mapped I/O
 * @segs: filled with one (iova, length, rkey, lkey) per descriptor, in list
 *	order
 * @max: room in @segs
 *
 * Rotates each descriptor's rkey (ib_inc_rkey(): a descriptor does not
 * repeat an rkey within 256 registrations); the REG_MRs are built when
 * the I/O is posted.  The rkeys are exposed from now on: the ULP must post
 * the I/O (mrkit_io_post()) and later invalidate it, or release it
 * unposted.
 *
 * Context: any.
 * Return: the number of segments, or:
 *
 * * %-EINVAL - the I/O is not mapped.
 * * %-EBUSY - the I/O's RDMA READ chain is in flight.
 * * %-ENOSPC - @max is smaller than mrkit_io_nr_mrs(); nothing changed.
 */
int mrkit_io_segs(struct mrkit_io *io, struct mrkit_seg *segs,
		  unsigned int max)
{
	int state = mrkit_io_check_mapped(io, "segments");
	bool hand_out = state == MRKIT_IO_MAPPED;
	unsigned int nr = io->nr_mrs;
	struct mrkit_mr *mr;

	if (state < 0)
		return state;
	if (max < nr)
		return -ENOSPC;
	/*
	 * The hand-out (mrkit_io_hand_out()) and the segments in one pass,
	 * one per descriptor of the list: nr_mrs of them.
	 */
	for (mr = io->mrs; mr; mr = mr->io_next, segs++) {
		u32 lkey = mr->ibmr->lkey;

		if (hand_out)
			mrkit_mr_hand_out(mr);
		mrkit_seg_fill(segs, mr, lkey);
	}
	io->state = MRKIT_IO_HANDED_OUT;
	return nr;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_segs, MRKIT);

/**
 * mrkit_io_map_seg - map a scatterlist onto one descriptor and hand it out
 * @io: an idle I/O from mrkit_io_init()
 * @sgl: as mrkit_io_map()
 * @nents: as mrkit_io_map()
 * @flags: as mrkit_io_map(); %MRKIT_MAP_NO_SPLIT is implied
 * @seg: filled with what to advertise: (iova, length, rkey, lkey)
 *
 * mrkit_io_map() and mrkit_io_segs() in one call, for a protocol that
 * advertises a buffer as one keyed segment (an NVMe keyed SGL, an SRP
 * direct descriptor): the whole list on one descriptor, its rkey rotated
 * and exposed from now on, as after mrkit_io_segs().  Post it with
 * mrkit_io_post(), or release it unposted.
 *
 * Context: any; with %MRKIT_MAP_DMA, whatever ib_dma_map_sg() allows.
 *	No allocation, no sleeping; the caller serializes calls on @io.
 * Return: 1, or an errno as mrkit_io_map()'s (%-EINVAL when the list
 * needs more than one descriptor); then nothing is mapped or exposed and
 * @seg is not written.
 */
int mrkit_io_map_seg(struct mrkit_io *io, struct scatterlist *sgl, int nents,
		     u32 flags, struct mrkit_seg *seg)
{
	int ret = __mrkit_io_map(io, sgl, nents, flags | MRKIT_MAP_NO_SPLIT);
	struct mrkit_mr *mr;
	u32 lkey;

	if (ret < 0)
		return ret;
	/* One descriptor, MAPPED: handed out as mrkit_io_segs() does. */
	mr = io->mrs;
	lkey = mr->ibmr->lkey;
	mrkit_mr_hand_out(mr);
	mrkit_seg_fill(seg, mr, lkey);
	io->state = MRKIT_IO_HANDED_OUT;
	return 1;
}
EXPORT_SYMBOL_NS_GPL(mrkit_io_map_seg, MRKIT);
