// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the scatterlist walk that splits a list into
 * descriptors (mrkit_chunk()), against an oracle (mrk_chunk_oracle()).
 *
 * The oracle is the straightforward walk mrkit used before its walk was
 * fused and inlined: sg_next() per entry, the same page accounting.  The
 * fuzz case builds random lists - chained tables, unaligned heads and
 * tails, contiguous and gapped boundaries, zero-length entries, lists
 * shorter than the count given - splits each into chunks with both walks
 * for page lists of 1 to 256 pages, plain and SG_GAPS, and asserts that
 * every chunk is the same: entries, bytes, where and why it ended, where
 * the next one starts, and the errors.  The one-entry case mrkit_io_map()
 * takes without the walk (mrkit_chunk_one()) is held to the same oracle:
 * on every one-entry remainder of those lists, and on single entries
 * built to sit on its edges.  So is the light walk of a list one
 * descriptor may take whole (mrkit_list_whole()), on every one of those
 * lists, and mrkit_io_map() itself on such lists, on fake devices: its
 * light walk and the provider's answer must give the oracle's chunks too.
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>

#include "mrkit_priv.h"
#include "fake_dev.h"
#include "test_util.h"

/* Descriptors per pool of the map fuzz. */
#define MAP_FUZZ_DEPTH	16

/* The oracle: the list ended before @nents entries. */
#define ORACLE_SHORT	1

/* Why a chunk ended before the end of the list. */
enum mrk_oracle_end {
	ORACLE_ALL,	/* the rest of the list fits */
	ORACLE_GAP,	/* a gap the MR type cannot express */
	ORACLE_FULL,	/* the page list (or entry list) is full */
};

/* One descriptor's share of the list, as computed before mapping. */
struct mrk_oracle_chunk {
	struct scatterlist	*sg;		/* first entry */
	struct scatterlist	*last;		/* last entry touched */
	unsigned int		off;		/* offset into the first */
	int			nents;		/* entries touched */
	unsigned int		last_len;	/* last entry's DMA length; 0: as is */
	u64			bytes;
	enum mrk_oracle_end	end;
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
 * Return: 0; -1 - index of a zero-length entry; or %ORACLE_SHORT.
 */
static int mrk_chunk_oracle(struct scatterlist *sg, unsigned int off,
			    int left, u32 max, unsigned int shift,
			    bool gaps_ok, int base_index,
			    struct mrk_oracle_chunk *c)
{
	const u64 mask = (1ULL << shift) - 1;
	struct scatterlist *s = sg, *prev = sg;
	u64 prev_end = 0, bytes = 0;
	u32 pages = 0;
	int i;

	c->sg = sg;
	c->off = off;
	c->last_len = 0;
	c->end = ORACLE_ALL;
	for (i = 0; i < left; i++, prev = s, s = sg_next(s)) {
		unsigned int skip = i ? 0 : off;
		u64 a, len, e, base, fit_end;
		u32 add;

		if (unlikely(!s))
			return ORACLE_SHORT;	/* nents beyond the list */
		a = sg_dma_address(s) + skip;
		len = sg_dma_len(s) - skip;
		e = a + len;
		if (unlikely(!sg_dma_len(s)))
			return -(base_index + i) - 1;	/* zero-length entry */
		/* A segment's length is 32 bits on the wire: split before. */
		if (unlikely(bytes + len > U32_MAX)) {
			c->end = ORACLE_FULL;
			break;
		}
		/* Never more entries than pages (siw's PBL counts entries). */
		if (unlikely(i == max)) {
			c->end = ORACLE_FULL;
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
				c->end = ORACLE_GAP;
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
			c->end = ORACLE_FULL;
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

/* A random list of @n entries, chained in two tables when @chain. */
struct fuzz_list {
	struct scatterlist	t1[24];
	struct scatterlist	t2[24];
	struct scatterlist	*sg;
	int			n;
};

/*
 * @short_lists: at most 12 entries of at most 8 pages each, lists one
 * small pool can map (else up to 40 entries of up to 300 pages).
 */
static void fuzz_fill(struct rnd_state *rnd, struct fuzz_list *l,
		      bool short_lists)
{
	u32 most = short_lists ? 8 : 300;
	struct scatterlist *s;
	u64 addr = (u64)(prandom_u32_state(rnd) & 0xffff) << 12;
	int i, n1, n = 1 + prandom_u32_state(rnd) % (short_lists ? 12 : 40);
	bool chain = n > 2 && (prandom_u32_state(rnd) & 1);

	n1 = chain ? 1 + prandom_u32_state(rnd) % min(n - 1, 22) : min(n, 24);
	if (!chain)
		n = n1;
	else if (n - n1 > 23)
		n = n1 + 23;
	if (chain) {
		sg_init_table(l->t1, n1 + 1);
		sg_init_table(l->t2, n - n1);
		sg_chain(l->t1, n1 + 1, l->t2);
	} else {
		sg_init_table(l->t1, n);
	}
	l->sg = l->t1;
	l->n = n;
	for (i = 0, s = l->sg; i < n; i++, s = sg_next(s)) {
		u32 r = prandom_u32_state(rnd), len;

		switch (r % 8) {
		case 0:	/* a gap, unaligned start */
			addr += SZ_64K + (prandom_u32_state(rnd) & 0xfff);
			break;
		case 1:
		case 2:	/* a new page-aligned run */
			addr = ALIGN(addr + SZ_1M, SZ_4K);
			break;
		default:	/* contiguous with the previous entry */
			break;
		}
		switch ((r >> 8) % 8) {
		case 0:
			len = 1 + (prandom_u32_state(rnd) & 0x1fff);
			break;
		case 1:
			len = (prandom_u32_state(rnd) % 3) ? SZ_4K : 0;
			break;
		case 2:
			len = SZ_4K * (1 + prandom_u32_state(rnd) % most);
			break;
		default:
			len = SZ_4K * (1 + prandom_u32_state(rnd) % 4);
			break;
		}
		sg_dma_address(s) = addr;
		sg_dma_len(s) = len;
		addr += len;
	}
}

/*
 * mrkit_chunk_one() on a one-entry list at @sg against the oracle's chunk
 * of it: the entry's length exactly when the oracle maps the whole entry
 * in one chunk, else 0.  Returns whether it took the entry.
 */
static bool chunk_one_check(struct kunit *test, struct scatterlist *sg,
			    u32 max, unsigned int shift, bool gaps)
{
	struct mrk_oracle_chunk o = {};
	int ro = mrk_chunk_oracle(sg, 0, 1, max, shift, gaps, 0, &o);
	bool whole = !ro && o.nents == 1 && !o.next_sg && o.end == ORACLE_ALL;
	u32 len = mrkit_chunk_one(sg, max, shift, gaps);

	KUNIT_ASSERT_EQ_MSG(test, len, whole ? (u32)o.bytes : 0,
			    "addr %pad len %u max %u shift %u gaps %d",
			    &sg_dma_address(sg), sg_dma_len(sg), max, shift,
			    gaps);
	return whole;
}

/*
 * mrkit_list_whole() on (@sg, @left entries) against the oracle's walk,
 * sg_next() per entry: true exactly when the list has @left entries and
 * none of them is empty.  Returns its answer.
 */
static bool list_whole_check(struct kunit *test, struct scatterlist *sg,
			     int left)
{
	struct scatterlist *s;
	int i;

	for (i = 0, s = sg; i < left && s && sg_dma_len(s); i++)
		s = sg_next(s);
	KUNIT_ASSERT_EQ_MSG(test, mrkit_list_whole(sg, left), i == left,
			    "%d entries claimed, %d walked", left, i);
	return i == left;
}

static void chunk_fuzz_test(struct kunit *test)
{
	static const u32 maxes[] = { 1, 2, 3, 8, 32, 256 };
	struct fuzz_list *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	unsigned int iter, chunks = 0, errors = 0, ones = 0, wholes = 0;
	struct rnd_state rnd;

	KUNIT_ASSERT_NOT_NULL(test, l);
	prandom_seed_state(&rnd, 0x63686b31);
	for (iter = 0; iter < 20000; iter++) {
		u32 max = maxes[prandom_u32_state(&rnd) % ARRAY_SIZE(maxes)];
		bool gaps = !(prandom_u32_state(&rnd) % 4);
		struct scatterlist *sg;
		unsigned int off = 0;
		int left, index = 0;

		fuzz_fill(&rnd, l, false);
		/* Sometimes claim more entries than the list has. */
		left = l->n + ((prandom_u32_state(&rnd) % 8) ? 0 : 3);
		if (left > 1)
			wholes += list_whole_check(test, l->sg, left);
		for (sg = l->sg; sg; ) {
			struct mrk_oracle_chunk o = {};
			struct mrkit_chunk c = {};
			int ro, rc;

			ro = mrk_chunk_oracle(sg, off, left - index, max, 12, gaps,
					      index, &o);
			rc = mrkit_chunk(sg, off, left - index, max, 12, gaps,
					 index, &c);
			if (ro) {
				errors++;
				KUNIT_ASSERT_EQ_MSG(test, rc, -EINVAL, "iter %u", iter);
				if (ro == ORACLE_SHORT) {
					KUNIT_ASSERT_EQ(test, c.end, MRKIT_CHUNK_SHORT);
				} else {
					KUNIT_ASSERT_EQ(test, c.end, MRKIT_CHUNK_ZERO);
					KUNIT_ASSERT_EQ(test, c.end_index, -ro - 1);
				}
				break;
			}
			KUNIT_ASSERT_EQ_MSG(test, rc, 0, "iter %u", iter);
			KUNIT_ASSERT_EQ(test, c.nents, o.nents);
			KUNIT_ASSERT_EQ(test, c.bytes, o.bytes);
			KUNIT_ASSERT_EQ(test, (int)c.end, (int)o.end);
			KUNIT_ASSERT_EQ(test, c.end_index, o.end_index);
			KUNIT_ASSERT_PTR_EQ(test, c.sg, o.sg);
			KUNIT_ASSERT_PTR_EQ(test, c.last, o.last);
			KUNIT_ASSERT_EQ(test, c.off, o.off);
			KUNIT_ASSERT_EQ(test, c.last_len, o.last_len);
			KUNIT_ASSERT_PTR_EQ(test, c.next_sg, o.next_sg);
			KUNIT_ASSERT_EQ(test, c.next_off, o.next_off);
			if (!off && left - index == 1)
				ones += chunk_one_check(test, sg, max, 12, gaps);
			chunks++;
			if (!c.nents)
				break;
			index += c.nents - (c.next_off ? 1 : 0);
			sg = c.next_sg;
			off = c.next_off;
		}
	}
	kunit_info(test, "chunk fuzz: 20000 lists, %u chunks, %u bad lists, %u one-entry remainders taken whole, %u lists passed by the light walk, all equal to the oracle\n",
		   chunks, errors, ones, wholes);
	KUNIT_EXPECT_GT(test, chunks, 20000U);
	KUNIT_EXPECT_GT(test, wholes, 5000U);
	KUNIT_EXPECT_GT(test, errors, 100U);
	KUNIT_EXPECT_GT(test, ones, 100U);
}

/*
 * Single entries on the edges of mrkit_chunk_one(): offsets into the
 * first page, lengths that end just before, on and just after a page
 * boundary, exactly one MR's pages and one byte more, lengths far past
 * any MR (up to 4 GiB - 1), zero length; page lists of 0 to 256 pages,
 * 4 KiB and 64 KiB pages, plain and SG_GAPS.
 */
static void chunk_one_fuzz_test(struct kunit *test)
{
	static const u32 maxes[] = { 0, 1, 2, 3, 8, 32, 256 };
	unsigned int iter, taken = 0, refused = 0;
	struct scatterlist sg;
	struct rnd_state rnd;

	prandom_seed_state(&rnd, 0x6f6e6531);
	for (iter = 0; iter < 50000; iter++) {
		u32 r = prandom_u32_state(&rnd);
		u32 max = maxes[r % ARRAY_SIZE(maxes)];
		unsigned int shift = (r >> 4) & 1 ? 16 : 12;
		bool gaps = !((r >> 5) % 4);
		u64 page = 1ULL << shift, addr, len;

		addr = (u64)(prandom_u32_state(&rnd) & 0xfffff) << shift;
		switch ((r >> 8) % 4) {
		case 0:		/* page-aligned */
			break;
		case 1:		/* one byte before a page boundary */
			addr += page - 1;
			break;
		default:	/* anywhere in the page */
			addr += prandom_u32_state(&rnd) & (page - 1);
			break;
		}
		switch ((r >> 12) % 8) {
		case 0:		/* zero length */
			len = 0;
			break;
		case 1:		/* ends just before, on or after a boundary */
			len = ALIGN(addr + 1, page) - addr +
			      page * ((r >> 16) % 3) + ((r >> 20) % 3) - 1;
			break;
		case 2:		/* one MR's pages, +-1 byte */
			len = max * page + ((r >> 16) % 3) - 1;
			break;
		case 3:		/* far past any MR */
			len = U32_MAX - ((r >> 16) & 0xfff);
			break;
		default:	/* a few pages' worth, any length */
			len = 1 + prandom_u32_state(&rnd) % (5 * page);
			break;
		}
		len = min_t(u64, len, U32_MAX);
		sg_init_table(&sg, 1);
		sg_dma_address(&sg) = addr;
		sg_dma_len(&sg) = len;
		if (chunk_one_check(test, &sg, max, shift, gaps))
			taken++;
		else
			refused++;
	}
	kunit_info(test, "one-entry chunks: %u taken whole, %u left to the walk, all equal to the oracle\n",
		   taken, refused);
	KUNIT_EXPECT_GT(test, taken, 10000U);
	KUNIT_EXPECT_GT(test, refused, 10000U);
}

/*
 * A list on the edge of one descriptor of @max (2 or more) pages: 2 to 7
 * contiguous entries (no more than @max) of exactly @max pages, page
 * aligned or, half of the time, moved off alignment - then it needs one
 * page more than one descriptor has.
 */
static void fuzz_edge(struct rnd_state *rnd, struct fuzz_list *l, u32 max)
{
	int i, n = 2 + prandom_u32_state(rnd) % min(max - 1, 6U);
	u64 addr = (u64)(prandom_u32_state(rnd) & 0xffff) << 12;
	u32 each = max / n, left = max;
	struct scatterlist *s;

	if (prandom_u32_state(rnd) & 1)
		addr += 1 + prandom_u32_state(rnd) % 0xfff;
	sg_init_table(l->t1, n);
	l->sg = l->t1;
	l->n = n;
	for (i = 0, s = l->sg; i < n; i++, s = sg_next(s)) {
		u32 pages = i == n - 1 ? left : each;

		sg_dma_address(s) = addr;
		sg_dma_len(s) = pages * SZ_4K;
		addr += pages * SZ_4K;
		left -= pages;
	}
}

/* Move every entry of @l by @by bytes. */
static void fuzz_shift(struct fuzz_list *l, u32 by)
{
	struct scatterlist *s;

	for (s = l->sg; s; s = sg_next(s))
		sg_dma_address(s) += by;
}

/* What mrkit_io_map() must do with a list, from the oracle's chunks. */
struct map_expect {
	int			n;	/* descriptors, or -EINVAL */
	int			calls;	/* ib_map_mr_sg() calls */
	bool			tried;	/* taken whole first, split after */
	struct mrk_oracle_chunk	c[MAP_FUZZ_DEPTH];
};

/*
 * The oracle's split of (@sg, @left entries) for a pool of @depth
 * descriptors of @max pages, and the provider calls mrkit_io_map() makes:
 * one per chunk, and one more when it first gives the whole list to one
 * descriptor and has to split after all - exactly when the list has
 * several entries, no more than @max, none empty, on a plain MR.
 */
static void map_expect(struct scatterlist *sg, int left, u32 max, bool gaps,
		       bool no_split, struct map_expect *e)
{
	struct scatterlist *s = sg;
	unsigned int off = 0;
	int index = 0, ro = 0;

	e->n = 0;
	while (s && e->n <= MAP_FUZZ_DEPTH) {
		struct mrk_oracle_chunk o = {};

		ro = mrk_chunk_oracle(s, off, left - index, max, 12, gaps,
				      index, &o);
		if (ro || !o.nents)
			break;
		if (e->n < MAP_FUZZ_DEPTH)
			e->c[e->n] = o;
		e->n++;
		index += o.nents - (o.next_off ? 1 : 0);
		s = o.next_sg;
		off = o.next_off;
	}
	e->tried = false;
	if (left > 1 && left <= max && !gaps) {
		int i;

		for (i = 0, s = sg; i < left && s && sg_dma_len(s);
		     i++, s = sg_next(s))
			;
		e->tried = i == left;
	}
	e->calls = e->n + (e->tried && e->n != 1);
	if (ro || s || e->n > MAP_FUZZ_DEPTH || (no_split && e->n > 1))
		e->n = -EINVAL;
}

/*
 * mrkit_io_map() on random lists (fuzz_fill(), mostly short ones),
 * caller-mapped, against the oracle: on the fake device, whose MRs take
 * what they were sized for; on one whose MRs take any number of pages (as
 * siw's, so that only mrkit's own limit holds it); and with SG_GAPS MRs.
 * Pools of 1 to 256 pages per descriptor, splitting allowed or not; a
 * quarter of the lists on the edge of one descriptor (fuzz_edge()).  Each descriptor
 * must hold exactly the oracle's chunk - iova, length, pages - and
 * refusals are -EINVAL with nothing left out.  The provider calls say
 * which way the list went: a list tried whole and split after costs one
 * more call, and no other does.
 */
static void chunk_map_fuzz_test(struct kunit *test)
{
	static const u32 maxes[] = { 1, 2, 3, 8, 32, 256 };
	static const struct fake_dev_attr attrs[] = {
		{},
		{ .roomy_mrs = true },
		{ .kernel_cap_flags = IBK_SG_GAPS_REG },
	};
	struct fuzz_list *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct map_expect *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct mrkit_pool *pools[ARRAY_SIZE(attrs)][ARRAY_SIZE(maxes)];
	struct fake_dev *fdevs[ARRAY_SIZE(attrs)];
	unsigned int iter, whole = 0, split_after = 0, refused = 0;
	struct rnd_state rnd;
	struct test_io t;
	int d, m;

	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_ASSERT_NOT_NULL(test, e);
	for (d = 0; d < ARRAY_SIZE(attrs); d++) {
		fdevs[d] = fake_dev_create(test, &attrs[d]);
		for (m = 0; m < ARRAY_SIZE(maxes); m++) {
			struct mrkit_pool_attr pa = {
				.name = "map_fuzz", .depth = MAP_FUZZ_DEPTH,
				.pages_per_mr = maxes[m], .node = NUMA_NO_NODE,
				.flags = d == 2 ? MRKIT_POOL_SG_GAPS : 0,
			};

			pools[d][m] = test_pool(test, fdevs[d]->pd, &pa);
			KUNIT_ASSERT_EQ(test, pools[d][m]->pages_per_mr,
					maxes[m]);
			KUNIT_ASSERT_EQ(test,
					pools[d][m]->mr_type == IB_MR_TYPE_SG_GAPS,
					d == 2);
		}
	}
	prandom_seed_state(&rnd, 0x6d617031);
	for (iter = 0; iter < 6000; iter++) {
		u32 r = prandom_u32_state(&rnd);
		struct mrkit_pool *pool;
		struct fake_dev *fdev;
		bool no_split = !(r % 4);
		unsigned int calls;
		struct mrkit_mr *mr;
		int left, n, i;

		d = (r >> 2) % ARRAY_SIZE(attrs);
		m = (r >> 4) % ARRAY_SIZE(maxes);
		fdev = fdevs[d];
		pool = pools[d][m];
		if (maxes[m] > 1 && !((r >> 16) % 4)) {
			fuzz_edge(&rnd, l, maxes[m]);
		} else {
			fuzz_fill(&rnd, l, (r >> 12) % 4);
			/* Sometimes the whole list off page alignment. */
			if (!((r >> 14) % 4))
				fuzz_shift(l, 1 + prandom_u32_state(&rnd) % 0xfff);
		}
		left = l->n + ((r >> 8) % 8 ? 0 : 3);
		map_expect(l->sg, left, maxes[m], d == 2, no_split, e);
		calls = fdev->calls[FAKE_OP_MAP_MR_SG];
		tio_init(&t, pool, MRKIT_PEER_WRITES);
		n = mrkit_io_map(&t.io, l->sg, left,
				 no_split ? MRKIT_MAP_NO_SPLIT : 0);
		KUNIT_ASSERT_EQ_MSG(test, n, e->n, "iter %u device %d max %u",
				    iter, d, maxes[m]);
		if (n < 0) {
			refused++;
			KUNIT_ASSERT_EQ(test, in_use(pool), 0U);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test,
				    fdev->calls[FAKE_OP_MAP_MR_SG] - calls,
				    (unsigned int)e->calls, "iter %u", iter);
		for (mr = t.io.mrs, i = 0; mr; mr = mr->io_next, i++) {
			const struct mrk_oracle_chunk *o = &e->c[i];
			u64 iova = sg_dma_address(o->sg) + o->off;
			u32 pages = d == 2 ? o->nents :
				    ((iova & 0xfff) + o->bytes + 0xfff) >> 12;

			KUNIT_ASSERT_EQ_MSG(test, mr->ibmr->iova, iova,
					    "iter %u descriptor %d", iter, i);
			KUNIT_ASSERT_EQ(test, mr->ibmr->length, o->bytes);
			KUNIT_ASSERT_EQ(test, to_fake_mr(mr->ibmr)->npages,
					pages);
		}
		KUNIT_ASSERT_EQ(test, i, n);
		KUNIT_ASSERT_EQ(test, mrkit_io_release(&t.io, 0), 0);
		KUNIT_ASSERT_EQ(test, in_use(pool), 0U);
		if (e->tried && n == 1)
			whole++;
		else if (e->tried)
			split_after++;
	}
	kunit_info(test, "map fuzz: 6000 lists, %u taken whole after the light walk, %u split after the try, %u refused, all equal to the oracle\n",
		   whole, split_after, refused);
	KUNIT_EXPECT_GT(test, whole, 200U);
	KUNIT_EXPECT_GT(test, split_after, 200U);
	KUNIT_EXPECT_GT(test, refused, 100U);
}

static struct kunit_case chunk_cases[] = {
	KUNIT_CASE(chunk_fuzz_test),
	KUNIT_CASE(chunk_one_fuzz_test),
	KUNIT_CASE(chunk_map_fuzz_test),
	{}
};

static struct kunit_suite chunk_suite = {
	.name = "mrkit_chunk",
	.test_cases = chunk_cases,
};

kunit_test_suite(chunk_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
