// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: debugfs
 *
 * mrkit debugfs: /sys/kernel/debug/mrkit/<pool>/stats, and with
 * CONFIG_FAULT_INJECTION_DEBUG_FS the fault-injection knobs of each of
 * mrkit's fault sites in /sys/kernel/debug/mrkit/faults/<site>/ (the
 * kernel's fault_attr files: probability, interval, times, ...; see
 * Documentation/fault-injection/), as failslab has.
 *
 * Normal operation: each pool gets a directory named after it (with a
 * numeric suffix when the name is taken) holding "stats": every counter
 * of mrkit_pool_get_stats() and how many descriptors are in each state.  The
 * directory is removed when the pool is destroyed; removal waits for a
 * read in progress (debugfs_file_get()), and a later read of a file that
 * is still open fails, so a read never sees a freed pool.  Counters are
 * read without locks: each line is a snapshot.
 *
 * Recovery: debugfs failures are ignored (debugfs is optional).
 * Serialization: creation and removal run in mrkit_pool_create() and
 * mrkit_pool_destroy(), outside the pool's grow_lock; reads take nothing.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "mrkit_priv.h"

static struct dentry *mrkit_debugfs_root;
static atomic_t mrkit_debugfs_seq = ATOMIC_INIT(0);

static int mrkit_stats_show(struct seq_file *m, void *v)
{
	struct dentry *dentry = m->file->f_path.dentry;
	struct mrkit_pool *pool = m->private;
	unsigned int states[MRKIT_MR_NR_STATES] = {};
	struct mrkit_pool_stats st;
	u32 i, n;

	/* Fails once the pool's directory is being removed. */
	if (debugfs_file_get(dentry))
		return -EIO;
	n = READ_ONCE(pool->nr_alloc);

	mrkit_pool_get_stats(pool, &st);
	for (i = 0; i < n; i++) {
		struct mrkit_mr *mr = READ_ONCE(pool->descs[i]);

		if (mr)
			states[mrkit_mr_state(mr)]++;
	}
	seq_printf(m, "device: %s\n", dev_name(&pool->dev->dev));
	seq_printf(m, "mr_type: %s\n", pool->mr_type == IB_MR_TYPE_SG_GAPS ?
		   "sg_gaps" : pool->mr_type == IB_MR_TYPE_INTEGRITY ?
		   "integrity" : "mem_reg");
	seq_printf(m, "fence: %s\n",
		   pool->flags & MRKIT_POOL_LAZY_INV ? "off" : "on");
	seq_printf(m, "pages_per_mr: %u\n", st.pages_per_mr);
	seq_printf(m, "depth: %u\n", st.depth);
	seq_printf(m, "max_depth: %u\n", st.max_depth);
	seq_printf(m, "allocated: %u\n", st.allocated);
	seq_printf(m, "in_use: %u\n", st.in_use);
	seq_printf(m, "high_water: %u\n", st.high_water);
	seq_printf(m, "exhausted: %llu\n", st.exhausted);
	seq_printf(m, "grown: %u\n", st.grown);
	seq_printf(m, "stale: %u\n", st.stale);
	seq_printf(m, "stale_replaced: %llu\n", st.stale_replaced);
	seq_printf(m, "remote_inv: %llu\n", st.remote_inv);
	seq_printf(m, "local_inv: %llu\n", st.local_inv);
	seq_printf(m, "bogus_inv: %llu\n", st.bogus_inv);
	seq_printf(m, "sig_checks: %llu\n", st.sig_checks);
	seq_printf(m, "sig_errors: %llu\n", st.sig_errors);
	seq_printf(m, "sig_forced: %llu\n", st.sig_forced);
	seq_printf(m, "lazy_released: %llu\n", st.lazy_released);
	for (i = 0; i < MRKIT_MR_NR_STATES; i++)
		seq_printf(m, "state_%s: %u\n", mrkit_mr_state_name(i),
			   states[i]);
	debugfs_file_put(dentry);
	return 0;
}

static int mrkit_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, mrkit_stats_show, inode->i_private);
}

/*
 * read_iter, so that kernel_read() works too; removal is guarded in the
 * show function (hence debugfs_create_file_unsafe()).
 */
static const struct file_operations mrkit_stats_fops = {
	.owner = THIS_MODULE,
	.open = mrkit_stats_open,
	.read_iter = seq_read_iter,
	.llseek = seq_lseek,
	.release = single_release,
};

void mrkit_debugfs_init(void)
{
	mrkit_debugfs_root = debugfs_create_dir("mrkit", NULL);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	{
		struct dentry *faults = debugfs_create_dir("faults",
							   mrkit_debugfs_root);
		int i;

		for (i = 0; i < MRKIT_FAULT_NR_SITES; i++)
			fault_create_debugfs_attr(mrkit_fault_site_names[i],
						  faults, &mrkit_fault_attrs[i]);
	}
#endif
}

void mrkit_debugfs_exit(void)
{
	debugfs_remove_recursive(mrkit_debugfs_root);
}

void mrkit_pool_debugfs_add(struct mrkit_pool *pool)
{
	char name[48];
	struct dentry *old;

	strscpy(name, pool->name, sizeof(name));
	old = debugfs_lookup(name, mrkit_debugfs_root);
	if (old) {
		dput(old);
		snprintf(name, sizeof(name), "%s-%d", pool->name,
			 atomic_inc_return(&mrkit_debugfs_seq));
	}
	pool->debugfs = debugfs_create_dir(name, mrkit_debugfs_root);
	debugfs_create_file_unsafe("stats", 0444, pool->debugfs, pool,
				   &mrkit_stats_fops);
}

void mrkit_pool_debugfs_remove(struct mrkit_pool *pool)
{
	debugfs_remove_recursive(pool->debugfs);
	pool->debugfs = NULL;
}
