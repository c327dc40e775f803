/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Integrity (T10-PI signature) memory regions for the software RoCE
 * provider: the interface between rxe_pi.c and the rxe files the build
 * splices (provider/rxe/, the .splice files).  Included from rxe.h, after rxe's own
 * headers.
 */
#ifndef RXE_PI_H
#define RXE_PI_H

#include <rdma/ib_verbs.h>

struct rxe_dev;
struct rxe_mr;
struct rxe_qp;
struct rxe_send_wqe;
struct rxe_send_wr;
struct rxe_pi_mr;

/* The stock functions the splice renames; the old names are wrappers. */
int rxe_stock_mr_check_range(struct rxe_mr *mr, u64 iova, size_t length);
#ifdef RXE_PI_REGISTER_NDEV
/*
 * RXE_PI_REGISTER_NDEV: the build found an rxe whose rxe_register_device()
 * takes the netdev (6.12's, provider/rxe/6.12/).  In that rxe,
 * rxe_mr_copy() takes an unsigned length, the MR's type is the ib_mr's, and
 * rxe_alloc_mr() and rxe_dereg_mr() are static (rxe_pi_stock_alloc_mr()
 * and rxe_pi_stock_dereg_mr() call them).
 */
int rxe_stock_register_device(struct rxe_dev *rxe, const char *ibdev_name,
			      struct net_device *ndev);
int rxe_stock_mr_copy(struct rxe_mr *mr, u64 iova, void *addr,
		      unsigned int length, enum rxe_mr_copy_dir dir);
struct ib_mr *rxe_pi_stock_alloc_mr(struct ib_pd *ibpd);
int rxe_pi_stock_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
#define rxe_pi_mr_type(mr) ((mr)->ibmr.type)
#else
int rxe_stock_register_device(struct rxe_dev *rxe, const char *ibdev_name);
int rxe_stock_mr_copy(struct rxe_mr *mr, u64 iova, void *addr, int length,
		      enum rxe_mr_copy_dir dir);
#define rxe_pi_stock_dereg_mr rxe_dereg_mr
#define rxe_pi_mr_type(mr) ((mr)->type)
#endif
int rxe_stock_invalidate_mr(struct rxe_qp *qp, u32 key);
int rxe_stock_reg_fast_mr(struct rxe_qp *qp, struct rxe_send_wqe *wqe);

void rxe_pi_init_device(struct rxe_dev *rxe);
int rxe_pi_check_range(struct rxe_mr *mr, u64 iova, size_t length);
int rxe_pi_copy(struct rxe_mr *mr, u64 iova, void *addr, int length,
		enum rxe_mr_copy_dir dir);
int rxe_pi_invalidate(struct rxe_qp *qp, struct rxe_mr *mr, u32 key);
int rxe_pi_reg_mr(struct rxe_qp *qp, struct rxe_send_wqe *wqe);
bool rxe_pi_local_op(struct rxe_qp *qp, struct rxe_send_wqe *wqe);
int rxe_pi_validate_send_wr(struct rxe_qp *qp, const struct ib_send_wr *ibwr);
void rxe_pi_init_send_wr(struct rxe_send_wr *wr, const struct ib_send_wr *ibwr);

#endif /* RXE_PI_H */
