/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Benchmark W3's baseline, shared by the UML bench (kunit/bench_rdma.c)
 * and the guest's (bench/bench_w3_smp.c): what nvme-rdma's read command
 * does per I/O to register its data, written after its design (6.1's
 * drivers/nvme/host/rdma.c), and the command both sides send.
 *  - after the caller's ib_dma_map_sg(): ib_mr_pool_get(), ib_map_mr_sg()
 *    at 4 KiB (the controller's page size), ib_update_fast_reg_key() with
 *    ib_inc_rkey(), a memset ib_reg_wr granting LOCAL_WRITE, REMOTE_READ
 *    and REMOTE_WRITE whatever the direction, the keyed SGL filled from
 *    the MR ("invalidate" set), the REG_MR chained ahead of the SEND;
 *  - on the response: a signaled LOCAL_INV of the MR's rkey, or for a
 *    remote invalidation the check that the peer named the MR's rkey;
 *  - then ib_mr_pool_put() and the caller's ib_dma_unmap_sg().
 * nvme's request refcount and blk-mq completion are the same whichever
 * code registers, and are left out.
 */
#ifndef _MRKIT_BENCH_W3_H
#define _MRKIT_BENCH_W3_H

#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include "mrkit_compat.h"

/* An NVMe keyed SGL data block descriptor, as the command carries it. */
struct bench_ksgl {
	__le64	addr;
	u8	length[3];
	u8	key[4];
	u8	type;
};

/* Keyed data block, "invalidate the key" (NVMe's type 4, subtype 0xf). */
static inline void bench_ksgl_set(struct bench_ksgl *k, u64 addr, u32 len,
				  u32 key)
{
	k->addr = cpu_to_le64(addr);
	put_unaligned_le24(len, k->length);
	put_unaligned_le32(key, k->key);
	k->type = 0x4f;
}

/* The rkey a peer answering with SEND_WITH_INV names. */
static inline u32 bench_ksgl_key(const struct bench_ksgl *k)
{
	return get_unaligned_le32(k->key);
}

/* The command's SEND, built per I/O as a ULP does (on either side). */
static inline void bench_send_init(struct ib_send_wr *wr, struct ib_cqe *cqe,
				   struct ib_sge *sge)
{
	wr->next = NULL;
	wr->wr_cqe = cqe;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
}

/*
 * nvme-style registration of @count DMA-mapped entries: @reg ready to be
 * chained ahead of the SEND, @k advertising the key.  Returns the MR, or
 * NULL (none free, or a partial map: the MR is back in @mrs).
 */
static inline struct ib_mr *bench_nvme_reg(struct ib_qp *qp,
					   struct list_head *mrs,
					   struct scatterlist *sg, int count,
					   struct ib_reg_wr *reg,
					   struct ib_cqe *cqe,
					   struct bench_ksgl *k)
{
	struct ib_mr *mr = ib_mr_pool_get(qp, mrs);

	if (!mr)
		return NULL;
	if (ib_map_mr_sg(mr, sg, count, NULL, SZ_4K) < count) {
		ib_mr_pool_put(qp, mrs, mr);
		return NULL;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR;
	reg->wr.wr_cqe = cqe;
	reg->wr.num_sge = 0;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		      IB_ACCESS_REMOTE_WRITE;
	bench_ksgl_set(k, mr->iova, mr->length, mr->rkey);
	return mr;
}

/* nvme-style local invalidation of @rkey, signaled. */
static inline void bench_nvme_inv_init(struct ib_send_wr *wr,
				       struct ib_cqe *cqe, u32 rkey)
{
	wr->next = NULL;
	wr->opcode = IB_WR_LOCAL_INV;
	wr->wr_cqe = cqe;
	wr->num_sge = 0;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->ex.invalidate_rkey = rkey;
}

#endif /* _MRKIT_BENCH_W3_H */
