/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fake RDMA device for deterministic mrkit tests.
 */
#ifndef _MRKIT_FAKE_DEV_H
#define _MRKIT_FAKE_DEV_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

enum fake_op {
	FAKE_OP_ALLOC_MR,
	FAKE_OP_ALLOC_MR_INTEGRITY,
	FAKE_OP_MAP_MR_SG,
	FAKE_OP_MAP_MR_SG_PI,
	FAKE_OP_DEREG_MR,
	FAKE_OP_POST_SEND,
	FAKE_OP_CHECK_MR_STATUS,
	FAKE_OP_NR
};

#define FAKE_MAX_RECORDS	512

/* One posted WR as the fake saw it. */
struct fake_wr_rec {
	unsigned int		post;		/* which ib_post_send() call */
	enum ib_wr_opcode	opcode;
	int			send_flags;
	struct ib_cqe		*cqe;
	u32			key;		/* REG: new key; INV: rkey */
	int			access;
	u64			iova;
	u64			length;
	struct ib_mr		*mr;
	struct ib_sig_attrs	sig;		/* REG_MR_INTEGRITY */
	u64			remote_addr;
	u32			rkey;
	u32			lkey;		/* READ: the sink's lkey */
	bool			completed;
	bool			rejected;	/* the "device" refused it */
};

struct fake_mr {
	struct ib_mr		ibmr;
	u64			*pages;
	u32			max_pages;
	u32			npages;
	bool			valid;		/* registered at the "device" */
	u32			dev_key;	/* key it was registered with */
	/* integrity MRs: what map_mr_sg_pi loaded, and the pending status */
	u64			data_addr;
	u32			data_len;
	u64			meta_addr;
	u32			meta_len;
	struct ib_mr_status	status;
	struct list_head	node;		/* on fake_dev.mrs */
};

struct fake_dev {
	struct ib_device	ibdev;	/* must be first: ib_alloc_device() */
	struct ib_pd		*pd;
	struct ib_qp		*qp;
	spinlock_t		lock;	/* counters, fault plan, records */
	atomic_t		mrs_alive;
	unsigned int		calls[FAKE_OP_NR];
	unsigned int		fail_at[FAKE_OP_NR];	/* absolute call number */
	int			fail_err[FAKE_OP_NR];
	unsigned int		post_fail_wr;	/* index of the bad WR */
	unsigned int		nr_posts;
	unsigned int		exec_errors;	/* WRs the device refused */
	bool			complete_inline; /* complete inside post_send */
	/*
	 * A QP in error whose flushes run on the posting CPU: after every
	 * post, every WR not completed yet is flushed before ib_post_send()
	 * returns.
	 */
	bool			flush_inline;
	/* A QP in error: WRs are recorded, not executed (flush them). */
	bool			qp_error;
	bool			roomy_mrs;	/* see &struct fake_dev_attr */
	/* A failing post first flushes this many uncompleted WRs. */
	unsigned int		fail_flush;
	struct list_head	mrs;
	unsigned int		nr_recs;
	unsigned int		next_complete;
	struct fake_wr_rec	recs[FAKE_MAX_RECORDS];
};

/*
 * Attributes a fake device is created with.  Zero fields get defaults
 * that look like rxe (frpl 512, max_sge_rd 32, MEM_MGT_EXTENSIONS).
 */
struct fake_dev_attr {
	u32	frpl;
	u32	pi_frpl;
	u32	max_sge_rd;
	u64	device_cap_flags;
	u64	kernel_cap_flags;
	bool	no_defaults;
	bool	iwarp;
	/*
	 * Every MR takes up to frpl pages whatever it was allocated for, as
	 * siw's, whose page list counts entries, takes an entry of any size.
	 */
	bool	roomy_mrs;
};

struct fake_dev *fake_dev_create(struct kunit *test,
				 const struct fake_dev_attr *attr);
void fake_fail_nth(struct fake_dev *fdev, enum fake_op op, unsigned int n,
		   int err);
void fake_fail_clear(struct fake_dev *fdev);
unsigned int fake_complete(struct fake_dev *fdev, enum ib_wc_status status,
			   unsigned int max);
int fake_pi_transfer(struct ib_mr *mr, bool to_wire, void *wire_data,
		     void *wire_prot, u32 len, int inject, u32 inject_interval);
unsigned int fake_count(struct fake_dev *fdev, unsigned int from,
			enum ib_wr_opcode op);
bool fake_mr_alive(struct fake_dev *fdev, u32 key);
bool fake_peer_invalidate(struct fake_dev *fdev, u32 key);
static inline struct fake_mr *to_fake_mr(struct ib_mr *mr)
{
	return container_of(mr, struct fake_mr, ibmr);
}

#endif /* _MRKIT_FAKE_DEV_H */
