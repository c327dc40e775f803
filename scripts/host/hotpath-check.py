#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The calls one I/O's fence cycle makes, from the built module.

Disassembles mrkit.ko (objdump -dr), follows every call and tail call
from the entry points of a one-page I/O with the rkey fence (map, post,
invalidate, the completion, the lazy and remote-invalidation variants)
through mrkit's own functions, and fails when it reaches one of mrkit's
functions that is not listed below: a step moved out of line that was
meant to be inline, or a new call on the I/O path.  The cold paths
(messages, failures) are listed apart; they are reachable, not taken.

usage: hotpath-check.py MODULE.ko
"""
import re
import subprocess
import sys

ENTRIES = [
    "mrkit_io_map", "mrkit_io_segs", "mrkit_io_map_seg", "mrkit_io_post",
    "mrkit_io_invalidate",
    "mrkit_io_complete", "mrkit_io_remote_inv", "mrkit_wc_done",
]
# Out-of-line by design on the taken path: the finish the completion calls
# (straight through for one descriptor, mrkit_io_finish_ok(), the general
# one for several), the chain of several descriptors (or of one whose post
# is refused), the lazy pool's completion, the completion of a READ chain
# (or a failed one) and the invalidation after an IB READ chain, the map of
# a list one descriptor cannot take whole (mrkit_map_walk(),
# mrkit_map_split()) and of a chunk that starts or ends inside an entry, and
# the LOCAL_INVs a MRKIT_POOL_POST_INV pool's completion posts, and the
# invalidation's two posts (one descriptor, or the general chain), whose
# WRs live in their own frames so that a remotely invalidated I/O finishes
# without one.
HOT = {
    "mrkit_io_finish", "mrkit_io_finish_ok", "mrkit_io_post_chain",
    "mrkit_io_inv_one", "mrkit_io_inv_all",
    "mrkit_io_complete_lazy", "mrkit_wc_done_other",
    "mrkit_io_read_done", "mrkit_map_walk", "mrkit_map_split",
    "mrkit_map_trimmed",
    "mrkit_io_post_inv_unsignaled",
}
# Reachable only on failures, exhaustion, protection and diagnostics (the
# pool's out-of-line put, lazy put and keep: where the inline ones meet a
# descriptor in another state, a lost race or a dying pool; a descriptor
# retired at the map that takes it after a late flush).
COLD = {
    "mrkit_mr_put", "mrkit_mr_put_valid", "mrkit_mr_keep",
    "mrkit_io_refuse", "mrkit_mr_refused", "mrkit_mr_mark_stale",
    "mrkit_mr_stale_done", "mrkit_io_unwind", "mrkit_io_drop_cache",
    "mrkit_mr_enforce_pi_slow", "mrkit_pool_new_low", "mrkit_pool_empty",
    "mrkit_pool_wake", "mrkit_mr_put_returned", "mrkit_mr_push_slow",
    "mrkit_mr_retire",
    "mrkit_post_failed", "mrkit_chain_regs_failed", "mrkit_io_post_abort",
    "mrkit_io_post_undo",
    "mrkit_trace_chain", "mrkit_bogus_inv", "mrkit_io_post_inv",
    "mrkit_mr_check_pi", "mrkit_pi_decode", "mrkit_mr_state_name",
    "mrkit_wr_posted", "mrkit_caller_bad", "mrkit_io_notify", "mrkit_mr_give",
    "mrkit_io_check_pi_all", "mrkit_sg_chained", "mrkit_io_map_refused",
    "mrkit_mr_get_slow", "mrkit_io_take_known",
}


def base(name):
    """A compiler clone's function: foo.part.0, foo.isra.0 -> foo."""
    return re.sub(r"\.(part|isra|constprop|cold)(\.\d+)?", "", name)


def call_graph(ko):
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", ko],
                         check=True, capture_output=True, text=True).stdout
    funcs, cur, pending = {}, None, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur, pending = m.group(1), None
            funcs[cur] = set()
            continue
        if cur is None:
            continue
        # A relocation names the real target; the call or jump before it
        # shows only its unrelocated displacement (often the next address,
        # which may be the start of the next function).
        m = re.search(r"R_X86_64_(?:PLT|PC)32\s+([A-Za-z_.][\w.]*)", line)
        if m:
            if not m.group(1).startswith("."):  # a section, not a function
                funcs[cur].add(m.group(1))
            pending = None
            continue
        if pending:
            funcs[cur].add(pending)
        pending = None
        m = re.search(r"\b(?:call|jmp)\s+[0-9a-f]+ <([\w.]+)>$", line)
        if m and m.group(1) != cur:
            pending = m.group(1)
    return funcs


def main():
    funcs = call_graph(sys.argv[1])
    missing = [e for e in ENTRIES if e not in funcs]
    seen, todo = set(), list(ENTRIES)
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.add(f)
        # A .cold part runs only on failures: what it calls is cold.
        if ".cold" not in f:
            todo += [c for c in funcs[f] if c in funcs]
    hot_seen = {base(f) for f in seen
                if f.startswith("mrkit_") and ".cold" not in f}
    reached = sorted(hot_seen - set(ENTRIES))
    bad = [f for f in reached if f not in HOT and f not in COLD]
    hot = [f for f in reached if f in HOT]
    print("hotpath: entries: " + " ".join(ENTRIES))
    print("hotpath: out-of-line mrkit calls on the taken path: " + " ".join(hot))
    print("hotpath: cold: " + " ".join(f for f in reached if f in COLD))
    for e in missing:
        print(f"hotpath: entry {e} not in the module: FAILED")
    for f in bad:
        print(f"hotpath: {f} is reached and listed nowhere: FAILED")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
