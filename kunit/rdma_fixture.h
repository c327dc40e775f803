/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Real rxe and siw devices for mrkit's KUnit suites.
 */
#ifndef _MRKIT_RDMA_FIXTURE_H
#define _MRKIT_RDMA_FIXTURE_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

struct mrkit_io;

enum mrk_kind {
	MRK_RXE,
	MRK_SIW,
	MRK_NR_KINDS
};

/* One end of a connection. */
struct mrk_side {
	struct rdma_cm_id	*id;
	u32			max_send_wr;	/* 0: 256 */
	struct ib_pd		*pd;
	bool			borrowed_pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp;
};

/* A completion a test waits for. */
struct mrk_wait {
	struct ib_cqe	cqe;
	struct ib_wc	wc;
	bool		done;
};

#define MRK_PEER_BUF	(1024 * 1024)
/* Behind @pbuf: where the peer's placement barrier READs land. */
#define MRK_BARRIER_LEN	64

/*
 * A connected RC pair on one device: @local is the side a ULP on mrkit
 * would be, @peer the remote that accesses its memory by rkey.  @pbuf is
 * the peer's own DMA-mapped buffer, lkey pd->local_dma_lkey.
 */
struct mrk_pair {
	struct kunit		*test;
	enum mrk_kind		kind;
	struct ib_device	*dev;
	struct rdma_cm_id	*listen;
	struct mrk_side		local;
	struct mrk_side		peer;
	void			*pbuf;
	u64			pbuf_dma;
	struct ib_mr		*peer_mr;	/* see mrk_peer_reg() */
	/* the local side's remotely readable bytes, see mrk_peer_rdma() */
	void			*bbuf;
	u64			bbuf_dma;
	struct ib_mr		*barrier_mr;
	/* connection manager state, written by the CM handlers */
	struct completion	resolved;
	struct completion	established;
	struct completion	peer_established;
	struct completion	disconnected;
	struct completion	peer_disconnected;
	int			cm_error;
};

const char *mrk_kind_name(enum mrk_kind kind);
int mrk_devices_setup(void);
struct ib_device *mrk_device(enum mrk_kind kind);
struct mrk_pair *mrk_pair_create(struct kunit *test, enum mrk_kind kind);
struct mrk_pair *mrk_pair_create_pd(struct kunit *test, enum mrk_kind kind,
				    struct ib_pd *local_pd);
struct mrk_pair *mrk_pair_create_sq(struct kunit *test, enum mrk_kind kind,
				    u32 max_send_wr);
void mrk_pair_destroy(struct mrk_pair *pair);
int mrk_local_post_recv(struct mrk_pair *pair, u64 dma, u32 len,
			struct mrk_wait *w);
int mrk_peer_send(struct mrk_pair *pair, enum ib_wr_opcode op, u32 inv_key,
		  struct mrk_wait *w);
int mrk_peer_post_recv(struct mrk_pair *pair, u32 off, u32 len,
		       struct mrk_wait *w);
int mrk_io_send(struct mrk_pair *pair, struct mrkit_io *io, u64 dma, u32 len,
		u32 off);
int mrk_peer_reg(struct mrk_pair *pair, u32 off, u32 len, u32 *rkey,
		 u64 *iova);

void mrk_wait_init(struct mrk_wait *w);
int mrk_poll(struct mrk_pair *pair, struct mrk_wait *w, unsigned int ms);
int mrk_peer_rdma(struct mrk_pair *pair, enum ib_wr_opcode op, u32 off,
		  u32 len, u64 raddr, u32 rkey, struct mrk_wait *w);
int mrk_peer_access_dead(struct mrk_pair *pair, u64 raddr, u32 rkey,
			 void *target, u32 len);
struct ib_device *mrk_device_add(enum mrk_kind kind, const char *ibdev,
				 const char *netdev, __be32 addr);
int mrk_device_del(struct ib_device *dev, const char *netdev);
int mrk_peer_atomic(struct mrk_pair *pair, enum ib_wr_opcode op, u32 off,
		    u64 raddr, u32 rkey, u64 compare_add, u64 swap,
		    struct mrk_wait *w);

#endif /* _MRKIT_RDMA_FIXTURE_H */
