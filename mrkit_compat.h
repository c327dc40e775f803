/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel interfaces mrkit uses that differ between the kernels it
 * builds against - Linux 6.1 and 6.12 - in this one place, keyed on the
 * version of the headers being built against.  The rest of the sources
 * name these macros and headers and no version: checkpatch refuses
 * LINUX_VERSION_CODE in any other file (scripts/host/static.sh).
 *
 * Unchanged between the two and so not here: ib_core's verbs and MR pool
 * calls mrkit makes, EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS() with a
 * bare namespace, EXPORT_SYMBOL_IF_KUNIT() and the KUnit API.
 */
#ifndef _MRKIT_COMPAT_H
#define _MRKIT_COMPAT_H

#include <linux/version.h>

/*
 * Trace events: from 6.10 __assign_str() takes the destination field
 * alone and copies from the source its __string() declaration names.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define mrkit_assign_str(dst, src)	__assign_str(dst)
#else
#define mrkit_assign_str(dst, src)	__assign_str(dst, src)
#endif

/* The unaligned accessors: <linux/unaligned.h> from 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* _MRKIT_COMPAT_H */
