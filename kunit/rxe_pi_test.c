// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite rxe_pi: rxe with integrity MRs, checked against the
 * kernel's T10-PI rules, and mrkit's integrity pool on it as a real device.
 *
 * The KUnit kernel built with CONFIG_MRKIT_KUNIT_RXE_PI (kunit/rxe-pi.config)
 * has rdma_rxe_pi - linux-source's rxe with provider/rxe/ spliced in - in
 * place of the stock rxe, and scripts/host/kunit.sh runs this suite alone
 * in it; every other suite runs on the stock rxe, in the kernel without
 * it.  The fixture's "rxe" device is then the integrity-capable one, and
 * the conformance run of provider/sigconf.c - the same code the guests
 * load as mrkit_sigconf - goes over its real data path: random signature
 * cases on the verbs, then I/Os through mrkit_io_map_pi(),
 * mrkit_io_check_pi() and the pool's counters.  It prints the SIGCONF and
 * SIGMR lines.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "provider/sigconf.h"
#include "rdma_fixture.h"
#include "test_util.h"

#define RXE_PI_CASES	2000
#define RXE_PI_IOS	500

static void rxe_pi_sigconf_test(struct kunit *test)
{
	const struct mrkit_sigconf_args a = {
		.ibdev = "mrk_rxe0", .addr = "10.99.0.1", .label = "rxe-pi",
		.cases = RXE_PI_CASES, .mrkit_cases = RXE_PI_IOS,
	};
	struct ib_device *dev = mrk_device(MRK_RXE);
	struct mrkit_sigconf_result r;

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_STREQ(test, dev_name(&dev->dev), a.ibdev);
	KUNIT_ASSERT_TRUE_MSG(test, dev->attrs.kernel_cap_flags &
			      IBK_INTEGRITY_HANDOVER,
			      "%s has no integrity MRs: a kernel with the stock rxe",
			      a.ibdev);
	mrkit_sigconf_run(&a, &r);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	/*
	 * The random cases, the unread-status one, the registration and the
	 * invalidation with a registration behind a retried SEND, and the
	 * dead rkey.
	 */
	KUNIT_EXPECT_EQ(test, r.cases, RXE_PI_CASES + 4U);
	KUNIT_EXPECT_EQ(test, r.failed, 0U);
	KUNIT_EXPECT_EQ(test, r.ios, (unsigned int)RXE_PI_IOS);
	KUNIT_EXPECT_EQ(test, r.mfailed, 0U);
	/* Some I/Os carried a bad block, and mrkit reported each. */
	KUNIT_EXPECT_GT(test, r.reported, 0U);
}

static struct kunit_case rxe_pi_cases[] = {
	KUNIT_CASE(rxe_pi_sigconf_test),
	{}
};

static struct kunit_suite rxe_pi_suite = {
	.name = "rxe_pi",
	.suite_init = mrk_rdma_suite_init,
	.test_cases = rxe_pi_cases,
};

kunit_test_suites(&rxe_pi_suite);
