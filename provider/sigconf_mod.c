// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrkit_sigconf: the signature MR conformance run (sigconf.c) as a module
 * for a guest that loaded rdma_rxe_pi in place of rxe.
 *
 * Normal operation: at load, one run on param ibdev with the counts the
 * params give; the SIGCONF and SIGMR lines in the kernel log are the
 * result, and the load succeeds either way (the guest's /init reads the
 * lines).  Recovery and serialization: sigconf.c's.
 */

#include <linux/module.h>

#include "sigconf.h"

static char *ibdev = "mrkd0";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "RDMA device with integrity MRs");
static char *addr = "10.99.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address of the device's netdev");
static char *label = "rxe-pi";
module_param(label, charp, 0444);
MODULE_PARM_DESC(label, "name of the device in the report line");
static unsigned int cases = 400;
module_param(cases, uint, 0444);
MODULE_PARM_DESC(cases, "random transfers");
static unsigned int mrkit_cases = 100;
module_param(mrkit_cases, uint, 0444);
MODULE_PARM_DESC(mrkit_cases, "random I/Os through mrkit's integrity pool");

static int __init sc_mod_init(void)
{
	const struct mrkit_sigconf_args a = {
		.ibdev = ibdev, .addr = addr, .label = label,
		.cases = cases, .mrkit_cases = mrkit_cases,
	};
	struct mrkit_sigconf_result r;

	mrkit_sigconf_run(&a, &r);
	return 0;
}

static void __exit sc_mod_exit(void)
{
}

module_init(sc_mod_init);
module_exit(sc_mod_exit);
MODULE_DESCRIPTION("Signature MR conformance against the kernel's T10-PI code");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MRKIT);
