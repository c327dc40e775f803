// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signature MR conformance against the kernel's own T10-PI code.
 *
 * Normal operation: mrkit_sigconf_run() connects two RC QPs on one RDMA
 * device (&mrkit_sigconf_args.ibdev, with .addr on its netdev) that offers
 * IBK_INTEGRITY_HANDOVER through the connection manager, checks that the
 * connection carries a plain RDMA WRITE, and runs
 * .cases random transfers through one integrity MR, each moving
 * whole protection blocks over the device's real data path in one of
 * four ways: a peer's RDMA READ of the MR or RDMA WRITE into it (the
 * responder side), or an RDMA WRITE from it or RDMA READ into it posted by
 * the MR's own QP (the requester side) - in one work request or in two
 * split at a random point, often inside a tuple.  Per case: interval 512 or 4096,
 * 1 to 16 blocks (1 to 4 of 4096), T10-DIF type 1 or 3, memory guard CRC or IP checksum,
 * the memory domain DIX (tuples in a separate list), interleaved (tuples
 * in the data list) or none, the wire domain T10-DIF (CRC) or none, data
 * and metadata split over two scatterlist entries at random (unaligned)
 * points, application tag
 * checking on or off, and at most one block made bad in the incoming
 * domain (a data byte, the guard, the application or the reference tag),
 * sometimes behind an application tag escape.
 *
 * Expectations come from the block layer's T10-PI profiles
 * (t10_pi_type1_crc, t10_pi_type1_ip, t10_pi_type3_*): generate_fn makes
 * the incoming tuples and the outgoing ones a block must carry,
 * verify_fn accepts the memory domain a good transfer left behind (6.12
 * has no profiles: sc_generate() and sc_verify() apply the same rules to
 * the same guard functions), and
 * ib_check_mr_status() must report exactly the bad block (type, expected
 * and actual value, offset block * (interval + 8) + interval) or nothing.
 * One more case checks that a registration whose status was not read
 * cannot be registered again, and a last one that the peer's RDMA READ
 * with the key of the invalidated integrity MR fails.  The result is one line:
 *	SIGCONF LABEL cases=N failed=N
 * and a "SIGCONF FAIL" line for each of the first failures.
 *
 * Then .mrkit_cases I/Os go through mrkit on the same connection,
 * as a ULP's would: an integrity pool, mrkit_io_map_pi() with the struct
 * mrkit_pi of a random case, mrkit_io_post() ahead of a zero-length
 * RDMA WRITE of ours, the peer's RDMA READ or WRITE, mrkit_io_check_pi()
 * (the bad block's tag, sector, expected and actual values, or nothing),
 * mrkit_io_complete() until done(); at the end the pool's counters must
 * show every status checked by us, none forced, the expected errors and
 * no descriptor in use:
 *	SIGMR LABEL ios=N reported=N failed=N
 *
 * Recovery: a completion that does not arrive within 2 s or fails ends
 * the run (counted as a failed case).  Serialization: one caller runs
 * everything and waits for each signaled WR in turn.
 *
 * Two callers: the module mrkit_sigconf (sigconf_mod.c) in a guest that
 * loaded rdma_rxe_pi, and the KUnit suite rxe_pi (kunit/rxe_pi_test.c) in
 * the UML kernel that has rxe with integrity MRs built in.
 */

#include <linux/blk-integrity.h>
#include <linux/crc-t10dif.h>
#include <linux/delay.h>
#include <net/checksum.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/inet.h>
#include <linux/scatterlist.h>
#include <linux/t10-pi.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrkit.h>
#include <rdma/rdma_cm.h>

#include "sigconf.h"

#define SC_MAX_BLOCKS	16
#define SC_BUF		(SC_MAX_BLOCKS * 4104 + 64)
#define SC_TUPLE	8
#define SC_LBA		0x1000

enum sc_mode { SC_PEER_READ, SC_PEER_WRITE, SC_LOCAL_WRITE, SC_LOCAL_READ };
static const char * const sc_mode_name[] = {
	"peer-read", "peer-write", "local-write", "local-read"
};

enum sc_bad { SC_GOOD, SC_DATA, SC_GUARD, SC_APP, SC_REF, SC_NR_BAD };
static const char * const sc_bad_name[] = {
	"good", "data", "guard", "app", "ref"
};

/* A signaled WR's completion, waited for. */
struct sc_wait {
	struct ib_cqe		cqe;
	struct completion	done;
	enum ib_wc_status	status;
};

struct sc_ctx {
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_cq		*cq[2];
	struct ib_qp		*qp[2];		/* 0: owns the MR, 1: its peer */
	struct sc_wait		wait[2];
	struct rdma_cm_id	*cm_listen;
	struct rdma_cm_id	*cm_active;	/* QP 0's */
	struct rdma_cm_id	*cm_req;	/* QP 1's */
	unsigned long		cm_state;	/* SC_CM_* bits */
	wait_queue_head_t	cm_wq;
	struct ib_mr		*mr;
	u8			*data;		/* the MR's data list */
	u8			*meta;		/* the MR's metadata list */
	u8			*wire;		/* the peer's buffer */
	u64			wire_dma;
	u8			*want_data;
	u8			*want_meta;
	u8			*want_wire;
	unsigned int		failed;
	unsigned int		reported;
	unsigned int		per_mode[4];
	unsigned int		spoiled;	/* cases with a bad block */
	unsigned int		expected;	/* ... the device must report */
	unsigned int		seen;		/* reports that matched */
	struct mrkit_io		mio;		/* mrkit's part */
	struct completion	mio_done;
	int			mio_status;
	unsigned int		mexpected;
	unsigned int		mseen;
	unsigned int		mfailed;
	unsigned int		ios;		/* mrkit I/Os run */
	const struct mrkit_sigconf_args *a;
};

/* One case: what is moved and how. */
struct sc_case {
	unsigned int		no;
	enum sc_mode		mode;
	u32			interval;
	u32			blocks;
	int			type;		/* 1 or 3 */
	bool			mem_pi;
	bool			wire_pi;
	bool			mem_ip;
	bool			mem_inter;	/* tuples in the data list */
	bool			app_check;
	enum sc_bad		bad;
	u32			bad_block;
	bool			escape;
	u32			ref_seed;
	u32			cut_data;
	u32			cut_meta;
	u32			cut_xfer;	/* 0: one work request */
};

static __printf(3, 4) void sc_fail(struct sc_ctx *c, const struct sc_case *t,
				   const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (c->reported++ >= 20)
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("SIGCONF FAIL case=%u %s iv=%u blocks=%u type=%d mem=%s%s wire=%s bad=%s@%u%s: %pV\n",
		t->no, sc_mode_name[t->mode], t->interval, t->blocks, t->type,
		t->mem_pi ? (t->mem_ip ? "ip" : "crc") : "none",
		t->mem_inter ? "-interleaved" : "",
		t->wire_pi ? "crc" : "none", sc_bad_name[t->bad], t->bad_block,
		t->escape ? " escaped" : "", &vaf);
	va_end(args);
}

static void sc_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sc_wait *w = container_of(wc->wr_cqe, struct sc_wait, cqe);

	w->status = wc->status;
	complete(&w->done);
}

/* Connection manager events seen (bits of sc_ctx.cm_state). */
enum {
	SC_CM_ADDR, SC_CM_ROUTE, SC_CM_REQ, SC_CM_EST_A, SC_CM_EST_P, SC_CM_ERR
};

static int sc_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sc_ctx *c = id->context;
	int bit;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		bit = SC_CM_ADDR;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		bit = SC_CM_ROUTE;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		c->cm_req = id;
		bit = SC_CM_REQ;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		bit = id == c->cm_active ? SC_CM_EST_A : SC_CM_EST_P;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		pr_info("SIGCONF connection manager event %s (%d)\n",
			rdma_event_msg(ev->event), ev->status);
		bit = SC_CM_ERR;
		break;
	}
	set_bit(bit, &c->cm_state);
	wake_up(&c->cm_wq);
	return 0;
}

static int sc_cm_wait(struct sc_ctx *c, int bit)
{
	if (!wait_event_timeout(c->cm_wq, test_bit(bit, &c->cm_state) ||
				test_bit(SC_CM_ERR, &c->cm_state), 5 * HZ))
		return -ETIMEDOUT;
	return test_bit(SC_CM_ERR, &c->cm_state) ? -ECONNREFUSED : 0;
}

static int sc_cm_qp(struct sc_ctx *c, struct rdma_cm_id *id, int side)
{
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.send_cq = c->cq[side],
		.recv_cq = c->cq[side],
		.create_flags = side ? 0 : IB_QP_CREATE_INTEGRITY_EN,
	};
	int err = rdma_create_qp(id, c->pd, &qa);

	if (!err)
		c->qp[side] = id->qp;
	return err;
}

/*
 * Connect QP 0 (active, integrity enabled) to QP 1 (passive) through the
 * connection manager, on the device's own address.
 */
static int sc_connect(struct sc_ctx *c)
{
	struct rdma_conn_param param = {
		.responder_resources = 4, .initiator_depth = 4,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_port = htons(19999),
	};
	int err;

	if (!in4_pton(c->a->addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	init_waitqueue_head(&c->cm_wq);
	c->cm_listen = rdma_create_id(&init_net, sc_cm_handler, c, RDMA_PS_TCP,
				      IB_QPT_RC);
	if (IS_ERR(c->cm_listen))
		return PTR_ERR(c->cm_listen);
	c->cm_active = rdma_create_id(&init_net, sc_cm_handler, c, RDMA_PS_TCP,
				      IB_QPT_RC);
	if (IS_ERR(c->cm_active))
		return PTR_ERR(c->cm_active);
	err = rdma_bind_addr(c->cm_listen, (struct sockaddr *)&sin) ?:
	      rdma_listen(c->cm_listen, 1) ?:
	      rdma_resolve_addr(c->cm_active, NULL, (struct sockaddr *)&sin,
				2000) ?:
	      sc_cm_wait(c, SC_CM_ADDR) ?:
	      rdma_resolve_route(c->cm_active, 2000) ?:
	      sc_cm_wait(c, SC_CM_ROUTE);
	if (err)
		return err;
	if (c->cm_active->device != c->dev)
		return -ENODEV;
	err = sc_cm_qp(c, c->cm_active, 0) ?:
	      rdma_connect(c->cm_active, &param) ?:
	      sc_cm_wait(c, SC_CM_REQ);
	if (err)
		return err;
	err = sc_cm_qp(c, c->cm_req, 1);
	if (err)
		return err;
	rdma_lock_handler(c->cm_req);
	err = rdma_accept(c->cm_req, &param);
	rdma_unlock_handler(c->cm_req);
	return err ?: sc_cm_wait(c, SC_CM_EST_A) ?: sc_cm_wait(c, SC_CM_EST_P);
}

/* Make wr the signaled WR a QP's waiter waits for. */
static void sc_arm(struct sc_ctx *c, int side, struct ib_send_wr *wr)
{
	wr->wr_cqe = &c->wait[side].cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	reinit_completion(&c->wait[side].done);
}

static int sc_wait(struct sc_ctx *c, int side)
{
	struct sc_wait *w = &c->wait[side];

	if (!wait_for_completion_timeout(&w->done, 2 * HZ))
		return -ETIMEDOUT;
	if (w->status == IB_WC_SUCCESS)
		return 0;
	pr_info("SIGCONF completion %s on QP %d\n",
		ib_wc_status_msg(w->status), side);
	return -EIO;
}

static int sc_post(struct sc_ctx *c, int side, struct ib_send_wr *wr)
{
	int err;

	sc_arm(c, side, wr);
	err = ib_post_send(c->qp[side], wr, NULL);
	return err ?: sc_wait(c, side);
}

/* The connection carries a plain RDMA WRITE (no integrity MR involved). */
static int sc_plain(struct sc_ctx *c)
{
	struct ib_sge sge = {
		.addr = c->wire_dma, .length = 64, .lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = c->wire_dma + 64,
		.rkey = c->pd->unsafe_global_rkey,
	};
	int err;

	memset(c->wire, 0x11, 64);
	memset(c->wire + 64, 0, 64);
	err = sc_post(c, 1, &wr.wr);
	if (!err && memcmp(c->wire, c->wire + 64, 64))
		err = -EIO;
	if (err)
		pr_info("SIGCONF plain RDMA WRITE: %d\n", err);
	return err;
}

static int sc_setup(struct sc_ctx *c)
{
	int i, err;

	c->dev = ib_device_get_by_name(c->a->ibdev, RDMA_DRIVER_UNKNOWN);
	if (!c->dev)
		return -ENODEV;
	if (!(c->dev->attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER))
		return -EOPNOTSUPP;
	c->pd = ib_alloc_pd(c->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd))
		return PTR_ERR(c->pd);
	for (i = 0; i < 2; i++) {
		c->wait[i].cqe.done = sc_wc_done;
		init_completion(&c->wait[i].done);
		c->cq[i] = ib_alloc_cq(c->dev, NULL, 32, 0, IB_POLL_SOFTIRQ);
		if (IS_ERR(c->cq[i]))
			return PTR_ERR(c->cq[i]);
	}
	err = sc_connect(c);
	if (err)
		return err;
	c->mr = ib_alloc_mr_integrity(c->pd, 2, 2);
	if (IS_ERR(c->mr))
		return PTR_ERR(c->mr);
	c->data = kmalloc(SC_BUF, GFP_KERNEL);
	c->meta = kmalloc(SC_BUF, GFP_KERNEL);
	c->wire = kmalloc(SC_BUF, GFP_KERNEL);
	c->want_data = kmalloc(SC_BUF, GFP_KERNEL);
	c->want_meta = kmalloc(SC_BUF, GFP_KERNEL);
	c->want_wire = kmalloc(SC_BUF, GFP_KERNEL);
	if (!c->data || !c->meta || !c->wire || !c->want_data ||
	    !c->want_meta || !c->want_wire)
		return -ENOMEM;
	c->wire_dma = ib_dma_map_single(c->dev, c->wire, SC_BUF,
					DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, c->wire_dma))
		return -ENOMEM;
	return sc_plain(c);
}

static void sc_teardown(struct sc_ctx *c)
{
	int i;

	if (c->wire_dma && !ib_dma_mapping_error(c->dev, c->wire_dma))
		ib_dma_unmap_single(c->dev, c->wire_dma, SC_BUF,
				    DMA_BIDIRECTIONAL);
	kfree(c->want_wire);
	kfree(c->want_meta);
	kfree(c->want_data);
	kfree(c->wire);
	kfree(c->meta);
	kfree(c->data);
	if (!IS_ERR_OR_NULL(c->mr))
		ib_dereg_mr(c->mr);
	if (c->qp[0])
		rdma_disconnect(c->cm_active);
	if (c->qp[1])
		rdma_destroy_qp(c->cm_req);
	if (c->cm_req)
		rdma_destroy_id(c->cm_req);
	if (c->qp[0])
		rdma_destroy_qp(c->cm_active);
	if (!IS_ERR_OR_NULL(c->cm_active))
		rdma_destroy_id(c->cm_active);
	if (!IS_ERR_OR_NULL(c->cm_listen))
		rdma_destroy_id(c->cm_listen);
	for (i = 1; i >= 0; i--)
		if (!IS_ERR_OR_NULL(c->cq[i]))
			ib_free_cq(c->cq[i]);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
	if (c->dev)
		ib_device_put(c->dev);
}

#ifdef SIGCONF_OWN_T10_PI
/*
 * SIGCONF_OWN_T10_PI: the build found no T10-PI profile exported by the
 * kernel (6.12's block layer keeps its generate and verify to itself):
 * the same rules here, on the same guard functions (crc_t10dif(),
 * ip_compute_csum()).
 */
static __be16 sc_guard(bool ip, const void *data, u32 len)
{
	return ip ? (__force __be16)ip_compute_csum(data, len) :
		    cpu_to_be16(crc_t10dif(data, len));
}

/* The kernel's tuples for blocks of data into prot (one per 8 bytes). */
static void sc_generate(const struct sc_case *t, bool ip, void *data,
			void *prot, u32 blocks)
{
	u32 i;

	for (i = 0; i < blocks; i++) {
		struct t10_pi_tuple *pi = prot + i * SC_TUPLE;

		pi->guard_tag = sc_guard(ip, data + i * t->interval,
					 t->interval);
		pi->app_tag = 0;
		pi->ref_tag = t->type == 1 ? cpu_to_be32(t->ref_seed + i) : 0;
	}
}

static bool sc_verify(const struct sc_case *t, bool ip, void *data,
		      void *prot)
{
	u32 i;

	for (i = 0; i < t->blocks; i++) {
		struct t10_pi_tuple *pi = prot + i * SC_TUPLE;

		if (t->type == 1) {
			if (pi->app_tag == T10_PI_APP_ESCAPE)
				continue;
			if (be32_to_cpu(pi->ref_tag) != (u32)(t->ref_seed + i))
				return false;
		} else if (pi->app_tag == T10_PI_APP_ESCAPE &&
			   pi->ref_tag == T10_PI_REF_ESCAPE) {
			continue;
		}
		if (pi->guard_tag != sc_guard(ip, data + i * t->interval,
					      t->interval))
			return false;
	}
	return true;
}
#else
static const struct blk_integrity_profile *sc_profile(int type, bool ip)
{
	if (type == 3)
		return ip ? &t10_pi_type3_ip : &t10_pi_type3_crc;
	return ip ? &t10_pi_type1_ip : &t10_pi_type1_crc;
}

/* The kernel's tuples for blocks of data into prot (one per 8 bytes). */
static void sc_generate(const struct sc_case *t, bool ip, void *data,
			void *prot, u32 blocks)
{
	struct blk_integrity_iter it = {
		.prot_buf = prot, .data_buf = data, .seed = t->ref_seed,
		.data_size = blocks * t->interval, .interval = t->interval,
		.tuple_size = SC_TUPLE, .disk_name = "sigconf",
	};

	sc_profile(t->type, ip)->generate_fn(&it);
}

static bool sc_verify(const struct sc_case *t, bool ip, void *data,
		      void *prot)
{
	struct blk_integrity_iter it = {
		.prot_buf = prot, .data_buf = data, .seed = t->ref_seed,
		.data_size = t->blocks * t->interval, .interval = t->interval,
		.tuple_size = SC_TUPLE, .disk_name = "sigconf",
	};

	return sc_profile(t->type, ip)->verify_fn(&it) == BLK_STS_OK;
}
#endif

static void sc_draw(struct sc_case *t, unsigned int no)
{
	memset(t, 0, sizeof(*t));
	t->no = no;
	t->mode = get_random_u32_below(4);
	t->interval = get_random_u32_below(2) ? 4096 : 512;
	t->blocks = 1 + get_random_u32_below(t->interval == 512 ? 16 : 4);
	t->type = get_random_u32_below(2) ? 3 : 1;
	t->mem_ip = get_random_u32_below(2);
	switch (get_random_u32_below(4)) {
	case 0:
		t->mem_pi = true;
		break;
	case 1:
		t->wire_pi = true;
		break;
	default:
		t->mem_pi = true;
		t->wire_pi = true;
		break;
	}
	t->mem_inter = t->mem_pi && !get_random_u32_below(3);
	t->app_check = get_random_u32_below(2);
	t->ref_seed = get_random_u32() & 0x7fffffff;
	t->cut_data = get_random_u32_below(t->blocks * (t->interval +
			(t->mem_inter ? SC_TUPLE : 0)) - 1) + 1;
	t->cut_meta = get_random_u32_below(t->blocks * SC_TUPLE - 1) + 1;
	t->bad = get_random_u32_below(2) ? SC_GOOD :
		 1 + get_random_u32_below(SC_NR_BAD - 1);
	t->bad_block = get_random_u32_below(t->blocks);
	t->escape = t->bad != SC_GOOD && !get_random_u32_below(5);
	/* Half the transfers in two work requests, often inside a tuple. */
	switch (get_random_u32_below(4)) {
	case 0:
		t->cut_xfer = 1 + get_random_u32_below(t->blocks * t->interval);
		break;
	case 1:
		if (t->wire_pi)
			t->cut_xfer = get_random_u32_below(t->blocks) *
				      (t->interval + SC_TUPLE) + t->interval +
				      1 + get_random_u32_below(SC_TUPLE - 1);
		break;
	}
}

/* Does the incoming domain carry tuples a check could fail on? */
static bool sc_in_pi(const struct sc_case *t)
{
	bool to_wire = t->mode == SC_PEER_READ || t->mode == SC_LOCAL_WRITE;

	return to_wire ? t->mem_pi : t->wire_pi;
}

static void sc_domain(const struct sc_case *t, bool ip,
		      struct ib_sig_domain *d)
{
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = ip ? IB_T10DIF_CSUM : IB_T10DIF_CRC;
	d->sig.dif.pi_interval = t->interval;
	d->sig.dif.ref_tag = t->type == 1 ? t->ref_seed : 0;
	d->sig.dif.ref_remap = t->type == 1;
	d->sig.dif.app_escape = true;
	d->sig.dif.ref_escape = t->type == 3;
	d->sig.dif.apptag_check_mask = t->app_check ? 0xffff : 0;
}

/*
 * Make block b of an incoming image bad (tuple at tp, data at dp), and
 * fill in what the device must report for it.
 */
static void sc_spoil(const struct sc_case *t, u8 *dp, struct t10_pi_tuple *tp,
		     bool ip, struct ib_sig_err *want, bool *expect)
{
	u8 one[SC_TUPLE];

	*expect = !t->escape;
	if (t->escape)
		tp->app_tag = T10_PI_APP_ESCAPE;
	if (t->escape && t->type == 3)
		tp->ref_tag = T10_PI_REF_ESCAPE;
	switch (t->bad) {
	case SC_DATA:
		dp[get_random_u32_below(t->interval)] ^= 1 +
			get_random_u32_below(255);
		sc_generate(t, ip, dp, one, 1);
		want->err_type = IB_SIG_BAD_GUARD;
		want->expected = be16_to_cpu(((struct t10_pi_tuple *)one)->guard_tag);
		want->actual = be16_to_cpu(tp->guard_tag);
		break;
	case SC_GUARD:
		want->err_type = IB_SIG_BAD_GUARD;
		want->expected = be16_to_cpu(tp->guard_tag);
		tp->guard_tag ^= cpu_to_be16(1 + get_random_u32_below(0xffff));
		want->actual = be16_to_cpu(tp->guard_tag);
		break;
	case SC_APP:
		want->err_type = IB_SIG_BAD_APPTAG;
		want->expected = 0;
		if (t->escape)	/* a different app tag would end the escape */
			tp->guard_tag ^= cpu_to_be16(0x0101);
		else
			tp->app_tag = cpu_to_be16(1 + get_random_u32_below(0xfffe));
		want->actual = be16_to_cpu(tp->app_tag);
		*expect = *expect && t->app_check;
		break;
	default:
		want->err_type = IB_SIG_BAD_REFTAG;
		want->expected = be32_to_cpu(tp->ref_tag);
		if (t->escape)
			tp->guard_tag ^= cpu_to_be16(0x0101);
		else
			tp->ref_tag ^= cpu_to_be32(1 + get_random_u32_below(0xffff));
		want->actual = be32_to_cpu(tp->ref_tag);
		/* Type 3 has no reference tag to check. */
		*expect = *expect && t->type == 1;
		break;
	}
	want->sig_err_offset = (u64)t->bad_block * (t->interval + SC_TUPLE) +
			       t->interval;
}

/* Map the MR for case @t and build its registration in @reg. */
static int sc_reg_wr(struct sc_ctx *c, const struct sc_case *t,
		     struct scatterlist *dsg, struct scatterlist *msg,
		     struct ib_reg_wr *reg)
{
	struct ib_sig_attrs *sa = c->mr->sig_attrs;
	bool sep = t->mem_pi && !t->mem_inter;
	int err;

	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR_INTEGRITY;
	reg->wr.send_flags = IB_SEND_SIGNALED;
	reg->mr = c->mr;
	reg->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		      IB_ACCESS_REMOTE_WRITE;
	err = ib_map_mr_sg_pi(c->mr, dsg, 2, NULL, sep ? msg : NULL,
			      sep ? 2 : 0, NULL, SZ_4K);
	if (err)
		return err;
	sa->check_mask = IB_SIG_CHECK_GUARD |
			 (t->type == 1 ? IB_SIG_CHECK_REFTAG : 0) |
			 (t->app_check ? IB_SIG_CHECK_APPTAG : 0);
	sa->mem.sig_type = IB_SIG_TYPE_NONE;
	sa->wire.sig_type = IB_SIG_TYPE_NONE;
	if (t->mem_pi)
		sc_domain(t, t->mem_ip, &sa->mem);
	if (t->wire_pi)
		sc_domain(t, false, &sa->wire);
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->rkey));
	reg->key = c->mr->rkey;
	return 0;
}

static int sc_register(struct sc_ctx *c, const struct sc_case *t,
		       struct scatterlist *dsg, struct scatterlist *msg)
{
	struct ib_reg_wr reg;

	return sc_reg_wr(c, t, dsg, msg, &reg) ?: sc_post(c, 0, &reg.wr);
}

static int sc_invalidate(struct sc_ctx *c)
{
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = c->mr->rkey,
	};

	return sc_post(c, 0, &inv);
}

/*
 * Move the wire image one of the four ways, in one work request or in
 * two split at t->cut_xfer (so that a block or a tuple may straddle two
 * operations); a peer addresses the integrity MR at raddr with rkey.
 */
static int sc_transfer(struct sc_ctx *c, const struct sc_case *t, u32 len,
		       u64 raddr, u32 rkey)
{
	bool peer = t->mode == SC_PEER_READ || t->mode == SC_PEER_WRITE;
	bool read = t->mode == SC_PEER_READ || t->mode == SC_LOCAL_READ;
	u32 cut = t->cut_xfer && t->cut_xfer < len ? t->cut_xfer : len;
	struct ib_sge sge[2];
	struct ib_rdma_wr wr[2] = {};
	int i;

	for (i = 0; i < 2; i++) {
		u32 off = i ? cut : 0;

		wr[i].wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		sge[i].length = i ? len - cut : cut;
		if (peer) {
			sge[i].addr = c->wire_dma + off;
			sge[i].lkey = c->pd->local_dma_lkey;
			wr[i].remote_addr = raddr + off;
			wr[i].rkey = rkey;
		} else {
			sge[i].addr = c->mr->iova + off;
			sge[i].lkey = c->mr->lkey;
			wr[i].remote_addr = c->wire_dma + off;
			wr[i].rkey = c->pd->unsafe_global_rkey;
		}
	}
	if (cut == len)
		return sc_post(c, peer ? 1 : 0, &wr[0].wr);
	wr[0].wr.next = &wr[1].wr;
	sc_arm(c, peer ? 1 : 0, &wr[1].wr);
	return ib_post_send(c->qp[peer ? 1 : 0], &wr[0].wr, NULL) ?:
	       sc_wait(c, peer ? 1 : 0);
}

/* Interleave data and tuples into a wire image (or gather them back). */
static void sc_weave(const struct sc_case *t, u8 *wire, u8 *data, u8 *prot,
		     bool gather)
{
	u32 i, blk = t->interval + SC_TUPLE;

	for (i = 0; i < t->blocks; i++) {
		u8 *w = wire + i * blk, *d = data + i * t->interval;
		u8 *p = prot + i * SC_TUPLE;

		if (gather) {
			memcpy(d, w, t->interval);
			memcpy(p, w + t->interval, SC_TUPLE);
		} else {
			memcpy(w, d, t->interval);
			memcpy(w + t->interval, p, SC_TUPLE);
		}
	}
}

/* Compare the tuples of every block but skip. */
static int sc_tuples_cmp(const struct sc_case *t, const u8 *got,
			 const u8 *want, u32 skip)
{
	u32 i;

	for (i = 0; i < t->blocks; i++)
		if (i != skip && memcmp(got + i * SC_TUPLE, want + i * SC_TUPLE,
					SC_TUPLE))
			return i;
	return -1;
}

/*
 * Fill the incoming side of case t: memory (to the wire) or the wire
 * image.  c->want_data gets the data as it will arrive, c->want_meta
 * the tuples the outgoing domain must carry.
 */
static void sc_prepare(struct sc_ctx *c, struct sc_case *t,
		       struct ib_sig_err *want, bool *expect)
{
	bool to_wire = t->mode == SC_PEER_READ || t->mode == SC_LOCAL_WRITE;
	bool in_ip = to_wire && t->mem_ip;
	u32 dlen = t->blocks * t->interval, b = t->bad_block;
	u8 *dp, *tuples = c->meta;

	get_random_bytes(c->want_data, dlen);
	/* The outgoing domain's tuples, from the kernel. */
	sc_generate(t, to_wire ? false : t->mem_ip, c->want_data, c->want_meta,
		    t->blocks);
	/* The incoming domain's tuples, from the kernel. */
	sc_generate(t, in_ip, c->want_data, tuples, t->blocks);
	memcpy(c->data, c->want_data, dlen);
	dp = c->data + b * t->interval;
	*expect = false;
	if (t->bad != SC_GOOD)
		sc_spoil(t, dp, (struct t10_pi_tuple *)(tuples + b * SC_TUPLE),
			 in_ip, want, expect);
	memcpy(c->want_data + b * t->interval, dp, t->interval);
	if (to_wire) {
		memset(c->wire, 0xa5, SC_BUF);
		if (t->mem_inter) {
			sc_weave(t, c->want_wire, c->data, tuples, false);
			memcpy(c->data, c->want_wire, dlen + t->blocks * SC_TUPLE);
		}
		return;
	}
	if (t->wire_pi)
		sc_weave(t, c->wire, c->data, tuples, false);
	else
		memcpy(c->wire, c->data, dlen);
	memset(c->data, 0x5a, SC_BUF);
	memset(c->meta, 0x5a, SC_BUF);
}

/* What the outgoing side holds after case t. */
static void sc_outcome(struct sc_ctx *c, struct sc_case *t, bool errors)
{
	bool to_wire = t->mode == SC_PEER_READ || t->mode == SC_LOCAL_WRITE;
	u32 dlen = t->blocks * t->interval;
	u32 skip = t->bad == SC_GOOD ? U32_MAX : t->bad_block;
	u8 *got_data = c->data, *got_meta = c->meta;
	int bad;

	if (!to_wire && t->mem_inter) {
		got_data = c->want_wire;
		got_meta = c->want_wire + SC_BUF / 2;
		sc_weave(t, c->data, got_data, got_meta, true);
	} else if (to_wire && t->wire_pi) {
		got_data = c->want_wire;
		got_meta = c->want_wire + SC_BUF / 2;
		sc_weave(t, c->wire, got_data, got_meta, true);
	} else if (to_wire) {
		got_data = c->wire;
	}
	if (memcmp(got_data, c->want_data, dlen))
		sc_fail(c, t, "data differs");
	if (to_wire ? t->wire_pi : t->mem_pi) {
		bad = sc_tuples_cmp(t, got_meta, c->want_meta, skip);
		if (bad >= 0)
			sc_fail(c, t, "tuple of block %d differs from the kernel's",
				bad);
		if (t->bad == SC_GOOD &&
		    !sc_verify(t, to_wire ? false : t->mem_ip, got_data,
			       got_meta))
			sc_fail(c, t, "the kernel's verify_fn rejects the result");
	}
	if (to_wire && !t->wire_pi && c->wire[dlen] != 0xa5)
		sc_fail(c, t, "bytes beyond the stripped image");
	if (errors)
		c->failed++;
}

static void sc_status_cmp(struct sc_ctx *c, struct sc_case *t, bool expect,
			  const struct ib_sig_err *want)
{
	struct ib_mr_status st;
	int err = ib_check_mr_status(c->mr, IB_MR_CHECK_SIG_STATUS, &st);
	const struct ib_sig_err *e = &st.sig_err;

	if (err) {
		sc_fail(c, t, "ib_check_mr_status: %d", err);
		return;
	}
	if (!(st.fail_status & IB_MR_CHECK_SIG_STATUS) != !expect) {
		sc_fail(c, t, "signature error %s", expect ? "missed" : "reported");
		return;
	}
	if (!expect)
		return;
	if (e->err_type == want->err_type && e->expected == want->expected &&
	    e->actual == want->actual && e->key == c->mr->lkey &&
	    e->sig_err_offset == want->sig_err_offset) {
		c->seen++;
		return;
	}
	sc_fail(c, t, "type %d exp %#x act %#x off %llu, want %d %#x %#x %llu",
		e->err_type, e->expected, e->actual, e->sig_err_offset,
		want->err_type, want->expected, want->actual,
		want->sig_err_offset);
}

/* The MR's data and metadata lists, two entries each, cut unaligned. */
static int sc_map_lists(struct sc_ctx *c, const struct sc_case *t,
			struct scatterlist *dsg, struct scatterlist *msg)
{
	u32 mlen = t->blocks * SC_TUPLE;
	u32 dlen = t->blocks * t->interval + (t->mem_inter ? mlen : 0);

	sg_init_table(dsg, 2);
	sg_set_buf(&dsg[0], c->data, t->cut_data);
	sg_set_buf(&dsg[1], c->data + t->cut_data, dlen - t->cut_data);
	sg_init_table(msg, 2);
	sg_set_buf(&msg[0], c->meta, t->cut_meta);
	sg_set_buf(&msg[1], c->meta + t->cut_meta, mlen - t->cut_meta);
	if (ib_dma_map_sg(c->dev, dsg, 2, DMA_BIDIRECTIONAL) != 2)
		return -ENOMEM;
	if (ib_dma_map_sg(c->dev, msg, 2, DMA_BIDIRECTIONAL) != 2) {
		ib_dma_unmap_sg(c->dev, dsg, 2, DMA_BIDIRECTIONAL);
		return -ENOMEM;
	}
	return 0;
}

static void sc_unmap_lists(struct sc_ctx *c, struct scatterlist *dsg,
			   struct scatterlist *msg)
{
	ib_dma_unmap_sg(c->dev, msg, 2, DMA_BIDIRECTIONAL);
	ib_dma_unmap_sg(c->dev, dsg, 2, DMA_BIDIRECTIONAL);
}

static int sc_one(struct sc_ctx *c, struct sc_case *t)
{
	u32 dlen = t->blocks * t->interval, mlen = t->blocks * SC_TUPLE;
	u32 wlen = t->wire_pi ? dlen + mlen : dlen;
	unsigned int before = c->reported;
	struct scatterlist dsg[2], msg[2];
	struct ib_sig_err want = {};
	const char *step;
	bool expect;
	int err;

	if (!sc_in_pi(t))
		t->bad = SC_GOOD;
	sc_prepare(c, t, &want, &expect);
	c->per_mode[t->mode]++;
	c->spoiled += t->bad != SC_GOOD;
	c->expected += expect;
	err = sc_map_lists(c, t, dsg, msg);
	if (err)
		return err;
	step = "registration";
	err = sc_register(c, t, dsg, msg);
	if (!err && c->mr->length != dlen + (t->mem_pi ? mlen : 0))
		sc_fail(c, t, "MR length %llu", c->mr->length);
	if (!err) {
		step = "transfer";
		err = sc_transfer(c, t, wlen, c->mr->iova, c->mr->rkey);
	}
	if (!err) {
		sc_status_cmp(c, t, expect, &want);
		step = "invalidation";
		err = sc_invalidate(c);
	}
	sc_unmap_lists(c, dsg, msg);
	if (err) {
		sc_fail(c, t, "%s: %d", step, err);
		c->failed++;
		return err;
	}
	sc_outcome(c, t, c->reported != before);
	return 0;
}

/*
 * A registration whose signature status was not read cannot be
 * registered again; once read, it can.
 */
static int sc_unchecked(struct sc_ctx *c, struct sc_case *t)
{
	struct scatterlist dsg[2], msg[2];
	struct ib_mr_status st;
	int err, again;

	err = sc_map_lists(c, t, dsg, msg);
	if (err)
		return err;
	err = sc_register(c, t, dsg, msg) ?: sc_invalidate(c);
	again = err ?: sc_register(c, t, dsg, msg);
	err = err ?: ib_check_mr_status(c->mr, IB_MR_CHECK_SIG_STATUS, &st);
	err = err ?: sc_register(c, t, dsg, msg) ?: sc_invalidate(c);
	err = err ?: ib_check_mr_status(c->mr, IB_MR_CHECK_SIG_STATUS, &st);
	sc_unmap_lists(c, dsg, msg);
	if (err || again != -EINVAL) {
		sc_fail(c, t, "re-registration with the status unread: %d (want %d), then %d",
			again, -EINVAL, err);
		c->failed++;
	}
	return err;
}

/*
 * A registration behind a SEND that the peer first answers with an RNR
 * NAK (no receive posted): the REG_MR runs at once; after the NAK's timer
 * the SEND goes again, and the REG_MR, which has run, must not run a
 * second time (its MR is valid then, and a second run would be refused).
 * With @inv, an invalidation of the registered key goes between the two:
 * rxe runs a LOCAL_INV only once every work request before it has
 * completed (its local invalidate fence), so both wait for the SEND's
 * retry and then must run once each.  Either way the MR ends valid with
 * the new key, which the next LOCAL_INV invalidates.
 */
static int sc_retried(struct sc_ctx *c, struct sc_case *t, bool inv)
{
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct ib_send_wr linv = { .opcode = IB_WR_LOCAL_INV };
	struct scatterlist dsg[2], msg[2];
	struct ib_recv_wr recv = {};
	struct ib_mr_status st;
	struct ib_reg_wr reg;
	int err;

	err = sc_map_lists(c, t, dsg, msg);
	if (err)
		return err;
	if (inv)
		err = sc_register(c, t, dsg, msg) ?:
		      ib_check_mr_status(c->mr, IB_MR_CHECK_SIG_STATUS, &st);
	/* Unsignaled; a failure of its own completes the REG_MR's wait. */
	linv.wr_cqe = &c->wait[0].cqe;
	linv.ex.invalidate_rkey = c->mr->rkey;
	linv.next = &reg.wr;
	err = err ?: sc_reg_wr(c, t, dsg, msg, &reg);
	if (!err) {
		send.next = inv ? &linv : &reg.wr;
		sc_arm(c, 0, &reg.wr);
		err = ib_post_send(c->qp[0], &send, NULL);
	}
	if (!err) {
		/* Within the NAK's timer (the connection's, 655 ms). */
		msleep(100);
		recv.wr_cqe = &c->wait[1].cqe;
		reinit_completion(&c->wait[1].done);
		err = ib_post_recv(c->qp[1], &recv, NULL) ?: sc_wait(c, 0) ?:
		      sc_wait(c, 1) ?: sc_invalidate(c) ?:
		      ib_check_mr_status(c->mr, IB_MR_CHECK_SIG_STATUS, &st);
	}
	sc_unmap_lists(c, dsg, msg);
	if (err) {
		sc_fail(c, t, "registration%s behind a SEND retried after an RNR NAK: %d",
			inv ? " and invalidation" : "", err);
		c->failed++;
	}
	return err;
}

/*
 * mrkit's signature registrations on the same connection: a peer's
 * RDMA READ (a write command's data) or WRITE (a read command's) through
 * an I/O of an integrity pool, described by the struct mrkit_pi that
 * matches case t.
 */
static void sc_mrkit_pi(const struct sc_case *t, struct mrkit_pi *pi)
{
	bool to_wire = t->mode == SC_PEER_READ;

	memset(pi, 0, sizeof(*pi));
	if (t->mem_pi && t->wire_pi)
		pi->op = MRKIT_PI_PASS;
	else if (t->wire_pi)
		pi->op = to_wire ? MRKIT_PI_INSERT : MRKIT_PI_STRIP;
	else
		pi->op = to_wire ? MRKIT_PI_STRIP : MRKIT_PI_INSERT;
	pi->flags = MRKIT_PI_APP_ESCAPE | MRKIT_PI_CHECK_GUARD |
		    (to_wire ? MRKIT_PI_TO_WIRE : 0) |
		    (t->mem_ip ? MRKIT_PI_MEM_IPCSUM : 0) |
		    (t->app_check ? MRKIT_PI_CHECK_APP : 0) |
		    (t->type == 1 ? MRKIT_PI_REF_INCREMENT | MRKIT_PI_CHECK_REF :
				    MRKIT_PI_REF_ESCAPE);
	pi->interval = t->interval;
	pi->ref_tag = t->type == 1 ? t->ref_seed : 0;
	pi->app_tag_mask = t->app_check ? 0xffff : 0;
	pi->lba = SC_LBA;
}

static void sc_mrkit_done(struct mrkit_io *io, int status)
{
	struct sc_ctx *c = container_of(io, struct sc_ctx, mio);

	c->mio_status = status;
	complete(&c->mio_done);
}

/* What mrkit_io_check_pi() returned against what the block must give. */
static void sc_mrkit_res(struct sc_ctx *c, struct sc_case *t, int ret,
			 const struct mrkit_pi_result *res, bool expect,
			 const struct ib_sig_err *want)
{
	static const u8 type[] = {
		[IB_SIG_BAD_GUARD] = MRKIT_PI_BAD_GUARD,
		[IB_SIG_BAD_REFTAG] = MRKIT_PI_BAD_REF,
		[IB_SIG_BAD_APPTAG] = MRKIT_PI_BAD_APP,
	};

	if (!expect) {
		if (ret || res->type != MRKIT_PI_OK)
			sc_fail(c, t, "mrkit_io_check_pi: %d, type %d", ret,
				res->type);
		return;
	}
	if (ret != -EILSEQ || res->type != type[want->err_type] ||
	    res->sector != SC_LBA + t->bad_block ||
	    res->expected != want->expected || res->actual != want->actual) {
		sc_fail(c, t, "mrkit_io_check_pi: %d, type %d sector %llu exp %#x act %#x",
			ret, res->type, res->sector, res->expected,
			res->actual);
		return;
	}
	c->mseen++;
}

static int sc_mrkit_one(struct sc_ctx *c, struct mrkit_pool *pool,
			struct sc_case *t)
{
	u32 dlen = t->blocks * t->interval, mlen = t->blocks * SC_TUPLE;
	struct ib_rdma_wr nop = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.remote_addr = c->wire_dma,
		.rkey = c->pd->unsafe_global_rkey,
	};
	unsigned int before = c->reported;
	struct scatterlist dsg[2], msg[2];
	struct mrkit_pi_result res;
	struct ib_sig_err want = {};
	struct mrkit_seg seg;
	struct mrkit_pi pi;
	bool expect;
	int err, ret;

	if (!sc_in_pi(t))
		t->bad = SC_GOOD;
	sc_prepare(c, t, &want, &expect);
	c->mexpected += expect;
	sc_mrkit_pi(t, &pi);
	err = sc_map_lists(c, t, dsg, msg);
	if (err)
		return err;
	mrkit_io_init(&c->mio, pool, MRKIT_PEER_BIDI, sc_mrkit_done);
	ret = mrkit_io_map_pi(&c->mio, dsg, 2, t->mem_pi ? msg : NULL,
			      t->mem_pi ? 2 : 0, &pi);
	err = ret == 1 ? 0 : ret ?: -EINVAL;
	if (!err && mrkit_io_segs(&c->mio, &seg, 1) != 1)
		err = -EINVAL;
	if (!err && seg.length != dlen + (t->mem_pi ? mlen : 0))
		sc_fail(c, t, "segment length %u", seg.length);
	/* Its REG_MR_INTEGRITY, then a WR of ours whose completion implies it. */
	if (!err) {
		sc_arm(c, 0, &nop.wr);
		err = mrkit_io_post(&c->mio, c->qp[0], &nop.wr, NULL) ?:
		      sc_wait(c, 0) ?:
		      sc_transfer(c, t, t->wire_pi ? dlen + mlen : dlen,
				  seg.addr, seg.key);
	}
	if (!err) {
		ret = mrkit_io_check_pi(&c->mio, &res);
		sc_mrkit_res(c, t, ret, &res, expect, &want);
		reinit_completion(&c->mio_done);
		err = mrkit_io_complete(&c->mio, c->qp[0]);
		if (!err && !wait_for_completion_timeout(&c->mio_done, 2 * HZ))
			err = -ETIMEDOUT;
		if (!err && c->mio_status)
			sc_fail(c, t, "done() status %d", c->mio_status);
	}
	sc_unmap_lists(c, dsg, msg);
	if (err) {
		sc_fail(c, t, "mrkit: %d", err);
		c->mfailed++;
		return err;
	}
	sc_outcome(c, t, false);
	c->mfailed += c->reported != before;
	return 0;
}

/* Every descriptor back, every status read by the ULP, errors counted. */
static void sc_mrkit_stats(struct sc_ctx *c, struct mrkit_pool *pool,
			   unsigned int ios)
{
	struct mrkit_pool_stats st;

	mrkit_pool_get_stats(pool, &st);
	if (st.in_use || st.sig_checks != ios || st.sig_forced ||
	    st.sig_errors != c->mexpected) {
		pr_info("SIGCONF FAIL mrkit pool: in_use %u sig_checks %llu sig_forced %llu sig_errors %llu (want 0 %u 0 %u)\n",
			st.in_use, st.sig_checks, st.sig_forced, st.sig_errors,
			ios, c->mexpected);
		c->mfailed++;
	}
}

static void sc_mrkit_run(struct sc_ctx *c)
{
	struct mrkit_pool_attr attr = {
		.name = "sigconf", .depth = 2, .flags = MRKIT_POOL_INTEGRITY,
		.node = NUMA_NO_NODE,
	};
	struct mrkit_pool *pool = mrkit_pool_create(c->pd, &attr);
	unsigned int i, done = 0;
	struct sc_case t;
	int err = 0;

	if (IS_ERR(pool)) {
		pr_info("SIGCONF FAIL mrkit_pool_create: %ld\n", PTR_ERR(pool));
		c->mfailed++;
		goto out;
	}
	init_completion(&c->mio_done);
	for (i = 0; i < c->a->mrkit_cases && !err; i++, done++) {
		sc_draw(&t, c->a->cases + 1 + i);
		t.mode = get_random_u32_below(2) ? SC_PEER_READ : SC_PEER_WRITE;
		/* mrkit maps DIX: a protection list, or no PI in memory. */
		t.mem_inter = false;
		t.cut_data = min(t.cut_data, t.blocks * t.interval - 1);
		err = sc_mrkit_one(c, pool, &t);
	}
	if (!err)
		sc_mrkit_stats(c, pool, done);
	mrkit_pool_destroy(pool);
out:
	pr_info("SIGMR %s ios=%u reported=%u failed=%u\n", c->a->label, done,
		c->mseen, c->mfailed);
	c->ios = done;
}

/*
 * The integrity MR, invalidated by the last case, is dead: the peer's
 * RDMA READ with its last rkey must fail with a remote access error.
 */
static void sc_dead_key(struct sc_ctx *c)
{
	struct ib_sge sge = {
		.addr = c->wire_dma, .length = SC_TUPLE,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = c->mr->iova,
		.rkey = c->mr->rkey,
	};
	int err;

	/* Not sc_post(): the failed completion is the expected outcome. */
	sc_arm(c, 1, &wr.wr);
	err = ib_post_send(c->qp[1], &wr.wr, NULL);
	if (!err && !wait_for_completion_timeout(&c->wait[1].done, 2 * HZ))
		err = -ETIMEDOUT;
	if (!err && c->wait[1].status == IB_WC_REM_ACCESS_ERR)
		return;
	pr_info("SIGCONF FAIL a peer's READ with the invalidated rkey %#x: %d (%s)\n",
		c->mr->rkey, err, ib_wc_status_msg(c->wait[1].status));
	c->failed++;
}

/**
 * mrkit_sigconf_run - run the conformance cases and mrkit's integrity I/Os
 * @a: the device, its address, the label and how many of each
 * @r: filled with the counts the SIGCONF and SIGMR lines print
 *
 * Context: process; sleeps.  Prints the SIGCONF and SIGMR lines.
 */
void mrkit_sigconf_run(const struct mrkit_sigconf_args *a,
		       struct mrkit_sigconf_result *r)
{
	struct sc_ctx *c = kzalloc(sizeof(*c), GFP_KERNEL);
	struct sc_case t;
	unsigned int i, done = 0;
	int err;

	memset(r, 0, sizeof(*r));
	if (!c) {
		r->err = -ENOMEM;
		return;
	}
	c->a = a;
	err = sc_setup(c);
	if (err) {
		pr_info("SIGCONF %s setup on %s failed: %d\n", a->label,
			a->ibdev, err);
		goto out;
	}
	for (i = 0; i < a->cases && !err; i++, done++) {
		sc_draw(&t, i);
		err = sc_one(c, &t);
	}
	if (!err) {
		sc_draw(&t, i);
		t.mem_pi = true;
		err = sc_unchecked(c, &t);
		done++;
	}
	if (!err)
		sc_mrkit_run(c);
	if (!err) {
		sc_draw(&t, i + 1);
		err = sc_retried(c, &t, false);
		done++;
	}
	if (!err) {
		sc_draw(&t, i + 2);
		err = sc_retried(c, &t, true);
		done++;
	}
	/* Last: the probe leaves the peer's QP in the error state. */
	if (!err) {
		sc_dead_key(c);
		done++;
	}
	pr_info("SIGCONF %s: %u peer-read, %u peer-write, %u local-write, %u local-read; %u with a bad block, %u to be reported, %u reported as expected\n",
		a->label, c->per_mode[0], c->per_mode[1], c->per_mode[2],
		c->per_mode[3], c->spoiled, c->expected, c->seen);
	pr_info("SIGCONF %s cases=%u failed=%u\n", a->label, done, c->failed);
	r->cases = done;
	r->failed = c->failed;
	r->ios = c->ios;
	r->reported = c->mseen;
	r->mfailed = c->mfailed;
out:
	r->err = err;
	sc_teardown(c);
	kfree(c);
}
