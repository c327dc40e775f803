// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real rxe and siw devices, and connected RC pairs on them, for mrkit's
 * KUnit suites running in the UML kernel.
 *
 * Normal operation: mrk_devices_setup() runs once per boot.  It brings lo
 * up, creates one dummy netdev per RDMA device with an address that exists
 * only inside this kernel (the UML kernel has no network device attached
 * to the host), and creates rxe and siw devices on them through
 * RDMA_NLDEV_CMD_NEWLINK, as "rdma link add" would.  mrk_pair_create()
 * connects two RC QPs on one device with in-kernel rdma_cm (rdma_cm to
 * 127.0.0.1 does not work in 6.1 and siw QPs cannot be connected by hand),
 * and registers the pair as a KUnit resource so that it is torn down even
 * when an assertion ends the test early.
 *
 * Every wait is bounded: CM steps by wait_for_completion_timeout(), CQ
 * polling (IB_POLL_DIRECT, never armed) by a jiffies deadline.
 *
 * Recovery: a pair whose connection a test killed (an rkey probe kills
 * it) is still torn down normally; disconnect waits are bounded.
 *
 * Serialization: device setup under mrk_setup_lock; a pair belongs to one
 * test thread; the CM handlers only complete completions.
 */

#include <kunit/resource.h>
#include <linux/etherdevice.h>
#include <linux/if_addr.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <rdma/mrkit.h>
#include <rdma/rdma_netlink.h>
#include <uapi/rdma/rdma_netlink.h>

#include "rdma_fixture.h"

#define MRK_CM_TIMEOUT_MS	5000

static const struct {
	const char *link_type;
	const char *ibdev;
	const char *netdev;
	__be32 addr;		/* 10.99.<n>.1, guest-only */
} mrk_devs[MRK_NR_KINDS] = {
	[MRK_RXE] = { "rxe", "mrk_rxe0", "mrkd0", htonl(0x0a630001) },
	[MRK_SIW] = { "siw", "mrk_siw0", "mrkd1", htonl(0x0a630101) },
};

static DEFINE_MUTEX(mrk_setup_lock);
static int mrk_setup_err = 1;	/* 1: not tried yet */
static struct ib_device *mrk_ibdevs[MRK_NR_KINDS];

const char *mrk_kind_name(enum mrk_kind kind)
{
	return mrk_devs[kind].link_type;
}

/* Send one netlink request from the kernel and return the ack's error. */
static int mrk_nl_request(int proto, struct sk_buff *skb)
{
	struct sockaddr_nl dst = { .nl_family = AF_NETLINK };
	struct msghdr msg = { .msg_name = &dst, .msg_namelen = sizeof(dst) };
	struct nlmsghdr *nlh;
	struct socket *sock;
	struct kvec iov;
	void *buf;
	int ret;

	ret = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, proto, &sock);
	if (ret)
		return ret;
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out_sock;
	}
	iov.iov_base = skb->data;
	iov.iov_len = skb->len;
	ret = kernel_sendmsg(sock, &msg, &iov, 1, skb->len);
	if (ret < 0)
		goto out_buf;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = PAGE_SIZE;
	ret = kernel_recvmsg(sock, &msg, &iov, 1, PAGE_SIZE, MSG_DONTWAIT);
	if (ret < (int)NLMSG_HDRLEN) {
		ret = ret < 0 ? ret : -EPROTO;
		goto out_buf;
	}
	nlh = buf;
	ret = -EPROTO;
	if (nlh->nlmsg_type == NLMSG_ERROR)
		ret = ((struct nlmsgerr *)nlmsg_data(nlh))->error;
out_buf:
	kfree(buf);
out_sock:
	sock_release(sock);
	return ret;
}

static int mrk_lo_up(void)
{
	struct net_device *lo = init_net.loopback_dev;
	int ret = 0;

	rtnl_lock();
	if (!(lo->flags & IFF_UP))
		ret = dev_change_flags(lo, lo->flags | IFF_UP, NULL);
	rtnl_unlock();
	return ret;
}

static int mrk_dummy_create(const char *name, __be32 addr)
{
	struct net_device *ndev;
	struct ifinfomsg *ifm;
	struct ifaddrmsg *ifa;
	struct nlmsghdr *nlh;
	struct sk_buff *skb;
	struct nlattr *info;
	int ifindex, ret;

	skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 1, RTM_NEWLINK, sizeof(*ifm),
			NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		goto nospace;
	ifm = nlmsg_data(nlh);
	memset(ifm, 0, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_flags = IFF_UP;
	ifm->ifi_change = IFF_UP;
	if (nla_put_string(skb, IFLA_IFNAME, name))
		goto nospace;
	info = nla_nest_start(skb, IFLA_LINKINFO);
	if (!info || nla_put_string(skb, IFLA_INFO_KIND, "dummy"))
		goto nospace;
	nla_nest_end(skb, info);
	nlmsg_end(skb, nlh);
	ret = mrk_nl_request(NETLINK_ROUTE, skb);
	kfree_skb(skb);
	if (ret)
		return ret;

	ndev = dev_get_by_name(&init_net, name);
	if (!ndev)
		return -ENODEV;
	ifindex = ndev->ifindex;
	dev_put(ndev);

	skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 2, RTM_NEWADDR, sizeof(*ifa),
			NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		goto nospace;
	ifa = nlmsg_data(nlh);
	memset(ifa, 0, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = 24;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = ifindex;
	if (nla_put_in_addr(skb, IFA_LOCAL, addr) ||
	    nla_put_in_addr(skb, IFA_ADDRESS, addr))
		goto nospace;
	nlmsg_end(skb, nlh);
	ret = mrk_nl_request(NETLINK_ROUTE, skb);
	kfree_skb(skb);
	return ret;

nospace:
	kfree_skb(skb);
	return -EMSGSIZE;
}

static int mrk_rdma_link_add(const char *ibdev, const char *type,
			     const char *netdev)
{
	struct nlmsghdr *nlh;
	struct sk_buff *skb;
	int ret;

	skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 3,
			RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK),
			0, NLM_F_REQUEST | NLM_F_ACK);
	if (!nlh ||
	    nla_put_string(skb, RDMA_NLDEV_ATTR_DEV_NAME, ibdev) ||
	    nla_put_string(skb, RDMA_NLDEV_ATTR_LINK_TYPE, type) ||
	    nla_put_string(skb, RDMA_NLDEV_ATTR_NDEV_NAME, netdev)) {
		kfree_skb(skb);
		return -EMSGSIZE;
	}
	nlmsg_end(skb, nlh);
	ret = mrk_nl_request(NETLINK_RDMA, skb);
	kfree_skb(skb);
	return ret;
}

/**
 * mrk_devices_setup - create the rxe and siw devices, once per boot
 *
 * Return: 0, or the first error (remembered for later callers).
 */
int mrk_devices_setup(void)
{
	enum mrk_kind k;
	int ret;

	mutex_lock(&mrk_setup_lock);
	if (mrk_setup_err != 1)
		goto out;
	ret = mrk_lo_up();
	if (ret) {
		pr_err("mrkit fixture: lo up: %d\n", ret);
		goto fail;
	}
	for (k = 0; k < MRK_NR_KINDS; k++) {
		ret = mrk_dummy_create(mrk_devs[k].netdev, mrk_devs[k].addr);
		if (ret) {
			pr_err("mrkit fixture: dummy %s: %d\n",
			       mrk_devs[k].netdev, ret);
			goto fail;
		}
		ret = mrk_rdma_link_add(mrk_devs[k].ibdev,
					mrk_devs[k].link_type,
					mrk_devs[k].netdev);
		if (ret) {
			pr_err("mrkit fixture: rdma link add %s: %d\n",
			       mrk_devs[k].ibdev, ret);
			goto fail;
		}
		mrk_ibdevs[k] = ib_device_get_by_name(mrk_devs[k].ibdev,
						      RDMA_DRIVER_UNKNOWN);
		if (!mrk_ibdevs[k]) {
			ret = -ENODEV;
			goto fail;
		}
	}
	mrk_setup_err = 0;
	goto out;
fail:
	mrk_setup_err = ret;
out:
	ret = mrk_setup_err;
	mutex_unlock(&mrk_setup_lock);
	return ret;
}

/**
 * mrk_device - the device of one kind, after mrk_devices_setup()
 * @kind: rxe or siw
 *
 * Return: the device; the fixture holds a reference for the whole boot.
 */
struct ib_device *mrk_device(enum mrk_kind kind)
{
	return mrk_ibdevs[kind];
}

static int mrk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static int mrk_side_resources(struct mrk_pair *pair, struct mrk_side *side,
			      struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qpa = {};
	int ret;

	if (!side->pd) {
		side->pd = ib_alloc_pd(id->device, 0);
		if (IS_ERR(side->pd)) {
			ret = PTR_ERR(side->pd);
			side->pd = NULL;
			return ret;
		}
	}
	side->cq = ib_alloc_cq(id->device, NULL, 1024, 0, IB_POLL_DIRECT);
	if (IS_ERR(side->cq)) {
		ret = PTR_ERR(side->cq);
		side->cq = NULL;
		return ret;
	}
	qpa.send_cq = side->cq;
	qpa.recv_cq = side->cq;
	qpa.qp_type = IB_QPT_RC;
	qpa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qpa.cap.max_send_wr = side->max_send_wr ?: 256;
	qpa.cap.max_recv_wr = 64;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(id, side->pd, &qpa);
	if (ret)
		return ret;
	side->qp = id->qp;
	side->id = id;
	return 0;
}

static void mrk_conn_param(struct ib_device *dev, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = min_t(int, dev->attrs.max_qp_rd_atom, 4);
	p->initiator_depth = min_t(int, dev->attrs.max_qp_init_rd_atom, 4);
	p->retry_count = 3;
	p->rnr_retry_count = 3;
}

static int mrk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct mrk_pair *pair = id->context;
	struct rdma_conn_param p;
	bool peer = id != pair->local.id && id != pair->listen;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		complete_all(&pair->resolved);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ret = mrk_side_resources(pair, &pair->peer, id);
		if (ret) {
			pair->cm_error = ret;
			pair->peer.id = NULL;
			return ret;	/* the CM destroys the new id */
		}
		mrk_conn_param(id->device, &p);
		p.responder_resources = min(p.responder_resources,
					    ev->param.conn.initiator_depth);
		p.initiator_depth = min(p.initiator_depth,
					ev->param.conn.responder_resources);
		ret = rdma_accept(id, &p);
		if (ret)
			pair->cm_error = ret;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		complete_all(peer ? &pair->peer_established :
				    &pair->established);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		complete_all(peer ? &pair->peer_disconnected :
				    &pair->disconnected);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		pair->cm_error = ev->status ?: -ECONNREFUSED;
		complete_all(&pair->resolved);
		complete_all(&pair->established);
		break;
	default:
		break;
	}
	return 0;
}

static int mrk_wait_cm(struct mrk_pair *pair, struct completion *c)
{
	if (!wait_for_completion_timeout(c,
					 msecs_to_jiffies(MRK_CM_TIMEOUT_MS)))
		return -ETIMEDOUT;
	return pair->cm_error;
}

static void mrk_side_destroy(struct mrk_side *side)
{
	if (side->qp && side->id)
		rdma_destroy_qp(side->id);
	side->qp = NULL;
	if (side->cq)
		ib_free_cq(side->cq);
	side->cq = NULL;
	if (side->pd && !side->borrowed_pd)
		ib_dealloc_pd(side->pd);
	side->pd = NULL;
}

static void mrk_pair_teardown(struct mrk_pair *pair)
{
	unsigned long t = msecs_to_jiffies(MRK_CM_TIMEOUT_MS);

	if (pair->local.id && pair->local.qp)
		rdma_disconnect(pair->local.id);
	if (pair->peer.id && pair->peer.qp)
		rdma_disconnect(pair->peer.id);
	if (pair->local.qp)
		wait_for_completion_timeout(&pair->disconnected, t);
	if (pair->peer.qp)
		wait_for_completion_timeout(&pair->peer_disconnected, t);
	if (pair->peer_mr)
		ib_dereg_mr(pair->peer_mr);
	if (pair->barrier_mr)
		ib_dereg_mr(pair->barrier_mr);
	if (pair->bbuf_dma)
		ib_dma_unmap_single(pair->dev, pair->bbuf_dma, MRK_BARRIER_LEN,
				    DMA_BIDIRECTIONAL);
	kfree(pair->bbuf);
	if (pair->pbuf_dma)
		ib_dma_unmap_single(pair->dev, pair->pbuf_dma,
				    MRK_PEER_BUF + MRK_BARRIER_LEN,
				    DMA_BIDIRECTIONAL);
	kfree(pair->pbuf);
	mrk_side_destroy(&pair->local);
	if (pair->local.id)
		rdma_destroy_id(pair->local.id);
	mrk_side_destroy(&pair->peer);
	if (pair->peer.id)
		rdma_destroy_id(pair->peer.id);
	if (pair->listen)
		rdma_destroy_id(pair->listen);
}

/*
 * Register @len bytes at @dma with the fresh MR @mr: map it, post the
 * REG_MR on @qp and wait for it.
 */
static int mrk_fast_reg(struct mrk_pair *pair, struct ib_qp *qp,
			struct ib_mr *mr, u64 dma, u32 len, int access)
{
	struct ib_reg_wr reg = {};
	struct scatterlist sg;
	struct mrk_wait w;
	int n, ret;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = dma;
	sg_dma_len(&sg) = len;
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	mrk_wait_init(&w);
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &w.cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = access;
	ret = ib_post_send(qp, &reg.wr, NULL);
	if (ret)
		return ret;
	ret = mrk_poll(pair, &w, 5000);
	if (ret)
		return ret;
	return w.wc.status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
 * A few local bytes the peer may RDMA-READ, registered on the local QP
 * before the test starts: the target of mrk_peer_rdma()'s placement
 * barrier.
 */
static int mrk_barrier_reg(struct mrk_pair *pair)
{
	struct ib_mr *mr;

	pair->bbuf = kzalloc(MRK_BARRIER_LEN, GFP_KERNEL);
	if (!pair->bbuf)
		return -ENOMEM;
	pair->bbuf_dma = ib_dma_map_single(pair->dev, pair->bbuf,
					   MRK_BARRIER_LEN, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(pair->dev, pair->bbuf_dma)) {
		pair->bbuf_dma = 0;
		return -EIO;
	}
	mr = ib_alloc_mr(pair->local.pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	pair->barrier_mr = mr;
	return mrk_fast_reg(pair, pair->local.qp, mr, pair->bbuf_dma,
			    MRK_BARRIER_LEN,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
}

static int mrk_pair_connect(struct mrk_pair *pair)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = mrk_devs[pair->kind].addr,
	};
	struct rdma_conn_param p;
	struct rdma_cm_id *id;
	int ret;

	init_completion(&pair->resolved);
	init_completion(&pair->established);
	init_completion(&pair->peer_established);
	init_completion(&pair->disconnected);
	init_completion(&pair->peer_disconnected);

	id = rdma_create_id(&init_net, mrk_cm_handler, pair, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	pair->listen = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&addr);
	if (ret)
		return ret;
	if (id->device != mrk_ibdevs[pair->kind])
		return -ENXIO;
	ret = rdma_listen(id, 4);
	if (ret)
		return ret;
	/* Port 0 above: the CM chose one; connect to it. */
	addr.sin_port = ((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port;

	id = rdma_create_id(&init_net, mrk_cm_handler, pair, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	pair->local.id = id;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr,
				MRK_CM_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = mrk_wait_cm(pair, &pair->resolved);
	if (ret)
		return ret;
	reinit_completion(&pair->resolved);
	ret = rdma_resolve_route(id, MRK_CM_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = mrk_wait_cm(pair, &pair->resolved);
	if (ret)
		return ret;
	if (id->device != mrk_ibdevs[pair->kind])
		return -ENXIO;
	ret = mrk_side_resources(pair, &pair->local, id);
	if (ret)
		return ret;
	mrk_conn_param(id->device, &p);
	ret = rdma_connect(id, &p);
	if (ret)
		return ret;
	ret = mrk_wait_cm(pair, &pair->established);
	if (ret)
		return ret;
	ret = mrk_wait_cm(pair, &pair->peer_established);
	if (ret)
		return ret;
	pair->dev = id->device;

	pair->pbuf = kzalloc(MRK_PEER_BUF + MRK_BARRIER_LEN, GFP_KERNEL);
	if (!pair->pbuf)
		return -ENOMEM;
	pair->pbuf_dma = ib_dma_map_single(pair->dev, pair->pbuf,
					   MRK_PEER_BUF + MRK_BARRIER_LEN,
					   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(pair->dev, pair->pbuf_dma)) {
		pair->pbuf_dma = 0;
		return -EIO;
	}
	return mrk_barrier_reg(pair);
}

static int mrk_pair_res_init(struct kunit_resource *res, void *context)
{
	struct mrk_pair *pair = context;
	int ret;

	ret = mrk_pair_connect(pair);
	if (ret) {
		kunit_err(pair->test, "%s pair: connect failed: %d\n",
			  mrk_kind_name(pair->kind), ret);
		mrk_pair_teardown(pair);
		return ret;
	}
	res->data = pair;
	return 0;
}

static void mrk_pair_res_free(struct kunit_resource *res)
{
	struct mrk_pair *pair = res->data;

	mrk_pair_teardown(pair);
	kfree(pair);
}

static struct mrk_pair *mrk_pair_create_full(struct kunit *test,
					     enum mrk_kind kind,
					     struct ib_pd *local_pd,
					     u32 max_send_wr);

/**
 * mrk_pair_create - a connected RC pair on the rxe or siw device
 * @test: the test; the pair is torn down when it ends
 * @kind: which device
 *
 * Return: the pair; the test is aborted if it cannot be made.
 */
struct mrk_pair *mrk_pair_create(struct kunit *test, enum mrk_kind kind)
{
	return mrk_pair_create_pd(test, kind, NULL);
}

/**
 * mrk_pair_create_pd - a connected pair whose local side uses a given PD
 * @test: the test; the pair is torn down when it ends
 * @kind: which device
 * @local_pd: the local side's PD (borrowed, not freed), or NULL for a new
 *	one; lets several connections reach memory one pool registered
 *
 * Return: the pair; the test is aborted if it cannot be made.
 */
struct mrk_pair *mrk_pair_create_pd(struct kunit *test, enum mrk_kind kind,
				    struct ib_pd *local_pd)
{
	return mrk_pair_create_full(test, kind, local_pd, 0);
}

/**
 * mrk_pair_create_sq - a connected pair whose local send queue has a size
 * @test: the test owning the pair
 * @kind: rxe or siw
 * @max_send_wr: the local QP's send queue size (what a ULP would ask for)
 *
 * Return: the pair; the test fails if it cannot be made.
 */
struct mrk_pair *mrk_pair_create_sq(struct kunit *test, enum mrk_kind kind,
				    u32 max_send_wr)
{
	return mrk_pair_create_full(test, kind, NULL, max_send_wr);
}

static struct mrk_pair *mrk_pair_create_full(struct kunit *test,
					     enum mrk_kind kind,
					     struct ib_pd *local_pd,
					     u32 max_send_wr)
{
	struct mrk_pair *pair, *ret;

	KUNIT_ASSERT_EQ(test, mrk_devices_setup(), 0);
	pair = kzalloc(sizeof(*pair), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pair);
	pair->test = test;
	pair->kind = kind;
	pair->local.pd = local_pd;
	pair->local.borrowed_pd = local_pd;
	pair->local.max_send_wr = max_send_wr;
	ret = kunit_alloc_resource(test, mrk_pair_res_init, mrk_pair_res_free,
				   GFP_KERNEL, pair);
	if (!ret)
		kfree(pair);
	KUNIT_ASSERT_NOT_NULL(test, ret);
	return ret;
}

static void mrk_wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrk_wait *w = container_of(wc->wr_cqe, struct mrk_wait, cqe);

	w->wc = *wc;
	w->done = true;
}

void mrk_wait_init(struct mrk_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = mrk_wait_done;
}

/**
 * mrk_poll - poll both CQs of a pair until @w completes
 * @pair: the pair
 * @w: the completion to wait for; may be NULL to just drain for @ms
 * @ms: the bound
 *
 * Return: 0 when @w completed (whatever its status), -ETIMEDOUT if not.
 */
int mrk_poll(struct mrk_pair *pair, struct mrk_wait *w, unsigned int ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		if (pair->local.cq)
			ib_process_cq_direct(pair->local.cq, 16);
		if (pair->peer.cq)
			ib_process_cq_direct(pair->peer.cq, 16);
		if (w && w->done)
			return 0;
		if (time_after(jiffies, deadline))
			return w ? -ETIMEDOUT : 0;
		cond_resched();
	}
}

/**
 * mrk_peer_rdma - the peer reads or writes the local side's memory
 * @pair: the pair
 * @op: IB_WR_RDMA_READ or IB_WR_RDMA_WRITE
 * @off: offset in the peer's buffer
 * @len: bytes
 * @raddr: remote (local side's) address, i.e. the registration's iova
 * @rkey: the rkey
 * @w: completion; the caller checks w->wc.status
 *
 * A WRITE's completion at the peer does not say its bytes are placed: siw
 * (iWARP) completes it once TCP has the data, and the local side may have
 * invalidated the rkey before its receive path gets there (the peer then
 * gets a TERMINATE).  So a WRITE that completed is followed by a one-byte
 * READ of the pair's barrier MR; the local side answers it only after it
 * placed everything before it on the connection, as a ULP's reply does.
 * If the barrier fails, its status is the WRITE's: the bytes did not land.
 *
 * Return: 0 when the WR completed, -ETIMEDOUT, or a post error.
 */
int mrk_peer_rdma(struct mrk_pair *pair, enum ib_wr_opcode op, u32 off,
		  u32 len, u64 raddr, u32 rkey, struct mrk_wait *w)
{
	struct ib_sge sge = {
		.addr = pair->pbuf_dma + off,
		.length = len,
		.lkey = pair->peer.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &w->cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};
	struct mrk_wait b;
	int ret;

	if (off + len > MRK_PEER_BUF)
		return -EINVAL;
	mrk_wait_init(w);
	ret = ib_post_send(pair->peer.qp, &wr.wr, NULL);
	if (ret)
		return ret;
	ret = mrk_poll(pair, w, 5000);
	if (ret || op != IB_WR_RDMA_WRITE || w->wc.status != IB_WC_SUCCESS)
		return ret;

	sge.addr = pair->pbuf_dma + MRK_PEER_BUF;
	sge.length = 1;
	wr.wr.wr_cqe = &b.cqe;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.remote_addr = pair->barrier_mr->iova;
	wr.rkey = pair->barrier_mr->rkey;
	mrk_wait_init(&b);
	ret = ib_post_send(pair->peer.qp, &wr.wr, NULL);
	if (ret)
		return ret;
	ret = mrk_poll(pair, &b, 5000);
	if (!ret && b.wc.status != IB_WC_SUCCESS)
		w->wc.status = b.wc.status;
	return ret;
}

/**
 * mrk_peer_access_dead - prove that a peer can no longer use an rkey
 * @pair: the pair; its connection is dead afterwards on both devices
 * @raddr: an address the rkey covered
 * @rkey: the rkey
 * @target: the local side's CPU view of @raddr
 * @len: bytes to try (at most 4096)
 *
 * The peer RDMA-WRITEs a pattern different from what @target holds, then
 * posts a signaled READ with the same rkey.  The rkey is dead when the
 * target bytes are unchanged and the two WRs did not both succeed (rxe
 * fails the WRITE with a remote access error; siw sends the WRITE and the
 * local side terminates the connection, so the WRITE's placement barrier
 * and the READ flush).
 *
 * Return: 0 if dead, -EIO if the peer could still access the memory,
 * -ETIMEDOUT if the completions did not come.
 */
int mrk_peer_access_dead(struct mrk_pair *pair, u64 raddr, u32 rkey,
			 void *target, u32 len)
{
	struct mrk_wait wwr, wrd;
	u8 *before, pat;
	int ret;

	if (len > 4096)
		return -EINVAL;
	before = kmemdup(target, len, GFP_KERNEL);
	if (!before)
		return -ENOMEM;
	pat = ~((u8 *)target)[0];
	memset(pair->pbuf, pat, len);

	ret = mrk_peer_rdma(pair, IB_WR_RDMA_WRITE, 0, len, raddr, rkey, &wwr);
	if (ret)
		goto out;
	ret = mrk_peer_rdma(pair, IB_WR_RDMA_READ, 8192, len, raddr, rkey,
			    &wrd);
	if (ret)
		goto out;
	if (memcmp(before, target, len) ||
	    (wwr.wc.status == IB_WC_SUCCESS && wrd.wc.status == IB_WC_SUCCESS))
		ret = -EIO;
out:
	kfree(before);
	return ret;
}

/**
 * mrk_peer_post_recv - the peer posts a receive into its buffer
 * @pair: the pair
 * @off: offset in the peer's buffer
 * @len: bytes
 * @w: completion, polled with mrk_poll()
 *
 * Return: the post's result.
 */
int mrk_peer_post_recv(struct mrk_pair *pair, u32 off, u32 len,
		       struct mrk_wait *w)
{
	struct ib_sge sge = {
		.addr = pair->pbuf_dma + off,
		.length = len,
		.lkey = pair->peer.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &w->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	mrk_wait_init(w);
	return ib_post_recv(pair->peer.qp, &wr, NULL);
}

/**
 * mrk_peer_reg - the peer registers part of its buffer for remote access
 * @pair: the pair; the MR lives as long as the pair (one per pair)
 * @off: offset in the peer's buffer
 * @len: bytes
 * @rkey: its rkey
 * @iova: its iova
 *
 * Return: 0, or an error from allocation, mapping or the REG_MR.
 */
int mrk_peer_reg(struct mrk_pair *pair, u32 off, u32 len, u32 *rkey,
		 u64 *iova)
{
	struct ib_mr *mr;
	int ret;

	if (pair->peer_mr || off + len > MRK_PEER_BUF)
		return -EINVAL;
	mr = ib_alloc_mr(pair->peer.pd, IB_MR_TYPE_MEM_REG,
			 DIV_ROUND_UP(len, PAGE_SIZE) + 1);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	pair->peer_mr = mr;
	ret = mrk_fast_reg(pair, pair->peer.qp, mr, pair->pbuf_dma + off, len,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			   IB_ACCESS_REMOTE_WRITE);
	if (ret)
		return ret;
	*rkey = mr->rkey;
	*iova = mr->iova;
	return 0;
}

static bool mrk_res_is(struct kunit *test, struct kunit_resource *res,
		       void *data)
{
	return res->data == data;
}

/**
 * mrk_pair_destroy - tear a pair down before its test ends
 * @pair: from mrk_pair_create*()
 */

void mrk_pair_destroy(struct mrk_pair *pair)
{
	kunit_destroy_resource(pair->test, mrk_res_is, pair);
}

/**
 * mrk_local_post_recv - the local side posts a receive
 * @pair: the pair
 * @dma: DMA address of the buffer (local_dma_lkey)
 * @len: bytes
 * @w: completion, polled with mrk_poll(); w->wc has the invalidated rkey
 *
 * Return: the post's result.
 */
int mrk_local_post_recv(struct mrk_pair *pair, u64 dma, u32 len,
			struct mrk_wait *w)
{
	struct ib_sge sge = {
		.addr = dma,
		.length = len,
		.lkey = pair->local.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &w->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	mrk_wait_init(w);
	return ib_post_recv(pair->local.qp, &wr, NULL);
}

/**
 * mrk_peer_send - the peer sends an empty message
 * @pair: the pair
 * @op: IB_WR_SEND or IB_WR_SEND_WITH_INV
 * @inv_key: the rkey to invalidate at the receiver (SEND_WITH_INV)
 * @w: the send's completion
 *
 * Return: 0 when the send completed (see w->wc.status), or an error.
 */
int mrk_peer_send(struct mrk_pair *pair, enum ib_wr_opcode op, u32 inv_key,
		  struct mrk_wait *w)
{
	struct ib_send_wr wr = {
		.wr_cqe = &w->cqe,
		.opcode = op,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = inv_key,
	};
	int ret;

	mrk_wait_init(w);
	ret = ib_post_send(pair->peer.qp, &wr, NULL);
	if (ret)
		return ret;
	return mrk_poll(pair, w, 5000);
}

/**
 * mrk_io_send - post an I/O's chain with a SEND the peer receives
 * @pair: the connection; @io's pool is on its local PD
 * @io: a handed-out I/O (mrkit_io_segs() done)
 * @dma: what the SEND carries (e.g. the segments), DMA-mapped on the
 *	local device
 * @len: its length, at most 256; 0 sends nothing
 * @off: where in the peer's buffer it lands (256 bytes are posted)
 *
 * The SEND follows the I/O's REG_MRs in one chain, as a ULP's command does.
 *
 * Return: 0 once the SEND and the peer's receive both completed
 * successfully; the post's errno, -ETIMEDOUT, or -EIO for a failed
 * completion.
 */
int mrk_io_send(struct mrk_pair *pair, struct mrkit_io *io, u64 dma, u32 len,
		u32 off)
{
	struct ib_sge sge = {
		.addr = dma, .length = len,
		.lkey = pair->local.pd->local_dma_lkey,
	};
	struct mrk_wait recv, sent;
	struct ib_send_wr send = {
		.wr_cqe = &sent.cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
	};
	int ret;

	ret = mrk_peer_post_recv(pair, off, 256, &recv);
	if (ret)
		return ret;
	mrk_wait_init(&sent);
	ret = mrkit_io_post(io, pair->local.qp, &send, NULL);
	if (ret)
		return ret;
	ret = mrk_poll(pair, &sent, 5000);
	if (!ret)
		ret = mrk_poll(pair, &recv, 5000);
	if (ret)
		return ret;
	return sent.wc.status || recv.wc.status ? -EIO : 0;
}

/**
 * mrk_device_add - a device of its own, for a test that removes it
 * @kind: rxe or siw
 * @ibdev: the RDMA device's name
 * @netdev: the dummy netdev to create under it
 * @addr: the netdev's address (10.99.x.1: exists only in this kernel)
 *
 * Return: the device with a reference the caller hands to
 * mrk_device_del(), or an ERR_PTR().
 */
struct ib_device *mrk_device_add(enum mrk_kind kind, const char *ibdev,
				 const char *netdev, __be32 addr)
{
	struct ib_device *dev;
	int ret;

	ret = mrk_devices_setup();
	if (ret)
		return ERR_PTR(ret);
	ret = mrk_dummy_create(netdev, addr);
	if (ret)
		return ERR_PTR(ret);
	ret = mrk_rdma_link_add(ibdev, mrk_devs[kind].link_type, netdev);
	if (ret)
		return ERR_PTR(ret);
	dev = ib_device_get_by_name(ibdev, RDMA_DRIVER_UNKNOWN);
	return dev ?: ERR_PTR(-ENODEV);
}

/**
 * mrk_device_del - remove a device as "rdma link delete" does, then its netdev
 * @dev: from mrk_device_add(); the caller's reference is dropped first
 * @netdev: the netdev it was created on
 *
 * Unregistration runs every client's remove callback before it returns.
 *
 * Return: 0 or the first error.
 */
int mrk_device_del(struct ib_device *dev, const char *netdev)
{
	u32 index = dev->index;
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh;
	struct sk_buff *skb;
	int ret;

	ib_device_put(dev);
	skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 4,
			RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_DELLINK),
			0, NLM_F_REQUEST | NLM_F_ACK);
	if (!nlh || nla_put_u32(skb, RDMA_NLDEV_ATTR_DEV_INDEX, index)) {
		kfree_skb(skb);
		return -EMSGSIZE;
	}
	nlmsg_end(skb, nlh);
	ret = mrk_nl_request(NETLINK_RDMA, skb);
	kfree_skb(skb);
	if (ret)
		return ret;

	skb = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 5, RTM_DELLINK, sizeof(*ifm),
			NLM_F_REQUEST | NLM_F_ACK);
	if (!nlh || nla_put_string(skb, IFLA_IFNAME, netdev)) {
		kfree_skb(skb);
		return -EMSGSIZE;
	}
	ifm = nlmsg_data(nlh);
	memset(ifm, 0, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	nlmsg_end(skb, nlh);
	ret = mrk_nl_request(NETLINK_ROUTE, skb);
	kfree_skb(skb);
	return ret;
}

/**
 * mrk_peer_atomic - the peer runs an atomic on the local side's memory
 * @pair: the pair
 * @op: IB_WR_ATOMIC_CMP_AND_SWP or IB_WR_ATOMIC_FETCH_AND_ADD
 * @off: 8-byte aligned offset in the peer's buffer: the original value
 *	lands there
 * @raddr: remote (local side's) address, 8-byte aligned
 * @rkey: the rkey
 * @compare_add: the compare value (CMP_AND_SWP) or the addend
 * @swap: the swap value (CMP_AND_SWP)
 * @w: completion; the caller checks w->wc.status
 *
 * Context: process context, the pair's test thread.
 * Return: 0 when the WR completed, -ETIMEDOUT, -ERANGE for a bad @off, or
 * the provider's post error (siw has no atomics and refuses the WR).
 */
int mrk_peer_atomic(struct mrk_pair *pair, enum ib_wr_opcode op, u32 off,
		    u64 raddr, u32 rkey, u64 compare_add, u64 swap,
		    struct mrk_wait *w)
{
	struct ib_sge sge = {
		.addr = pair->pbuf_dma + off,
		.length = sizeof(u64),
		.lkey = pair->peer.pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_cqe = &w->cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.compare_add = compare_add,
		.swap = swap,
		.rkey = rkey,
	};
	int ret;

	if (off + sizeof(u64) > MRK_PEER_BUF || off % sizeof(u64))
		return -ERANGE;
	mrk_wait_init(w);
	ret = ib_post_send(pair->peer.qp, &wr.wr, NULL);
	if (ret)
		return ret;
	return mrk_poll(pair, w, 5000);
}
