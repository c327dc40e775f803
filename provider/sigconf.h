/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Signature MR conformance (sigconf.c): what a run is asked and what it
 * found.
 */
#ifndef _MRKIT_SIGCONF_H
#define _MRKIT_SIGCONF_H

/**
 * struct mrkit_sigconf_args - one conformance run
 * @ibdev: the RDMA device, which offers IBK_INTEGRITY_HANDOVER
 * @addr: the IPv4 address of its netdev (both QPs connect through it)
 * @label: the device's name in the report lines
 * @cases: random signature cases on the verbs
 * @mrkit_cases: random I/Os through mrkit's integrity pool
 */
struct mrkit_sigconf_args {
	const char	*ibdev;
	const char	*addr;
	const char	*label;
	unsigned int	cases;
	unsigned int	mrkit_cases;
};

/**
 * struct mrkit_sigconf_result - what the SIGCONF and SIGMR lines say
 * @err: 0, or why the run stopped early (setup, a lost completion)
 * @cases: cases run, the fixed ones included
 * @failed: of those, failed
 * @ios: mrkit I/Os run
 * @reported: of those, with the signature error they were given reported
 * @mfailed: mrkit I/Os (or the pool's final counters) that were wrong
 */
struct mrkit_sigconf_result {
	int		err;
	unsigned int	cases;
	unsigned int	failed;
	unsigned int	ios;
	unsigned int	reported;
	unsigned int	mfailed;
};

void mrkit_sigconf_run(const struct mrkit_sigconf_args *a,
		       struct mrkit_sigconf_result *r);

#endif /* _MRKIT_SIGCONF_H */
