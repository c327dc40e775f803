// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: The module
 *
 * Loading mrkit creates the descriptor slab caches (one cache line per
 * plain descriptor), mrkit's workqueue (pool growth and the replacement
 * of retired descriptors) and the debugfs directory; pools are created by
 * ULPs.  Every pool is destroyed by its ULP - and mrkit_pool_destroy()
 * returns only once nothing of the pool is left - before the ULP, which
 * holds a reference on this module, can be unloaded: at exit there is
 * nothing to wait for.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "mrkit_priv.h"

/* Pool growth and the replacement of retired descriptors run here. */
struct workqueue_struct *mrkit_wq;
EXPORT_SYMBOL_IF_KUNIT(mrkit_wq);

/* Every pool's descriptors; integrity pools' in the second cache. */
struct kmem_cache *mrkit_mr_cache;
struct kmem_cache *mrkit_sig_mr_cache;

static int __init mrkit_init(void)
{
	BUILD_BUG_ON(sizeof(struct mrkit_mr) > L1_CACHE_BYTES &&
		     L1_CACHE_BYTES >= 64);
	mrkit_mr_cache = KMEM_CACHE(mrkit_mr, SLAB_HWCACHE_ALIGN);
	if (!mrkit_mr_cache)
		return -ENOMEM;
	mrkit_sig_mr_cache = KMEM_CACHE(mrkit_sig_mr, SLAB_HWCACHE_ALIGN);
	if (!mrkit_sig_mr_cache)
		goto out_mr_cache;
	mrkit_wq = alloc_workqueue("mrkit", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!mrkit_wq)
		goto out_sig_cache;
	mrkit_debugfs_init();
	return 0;

out_sig_cache:
	kmem_cache_destroy(mrkit_sig_mr_cache);
out_mr_cache:
	kmem_cache_destroy(mrkit_mr_cache);
	return -ENOMEM;
}

static void __exit mrkit_exit(void)
{
	mrkit_debugfs_exit();
	destroy_workqueue(mrkit_wq);
	kmem_cache_destroy(mrkit_sig_mr_cache);
	kmem_cache_destroy(mrkit_mr_cache);
}

module_init(mrkit_init);
module_exit(mrkit_exit);

MODULE_AUTHOR("mrkit developers");
MODULE_DESCRIPTION("FRWR memory registration library for RDMA upper-layer protocols");
MODULE_LICENSE("GPL");
