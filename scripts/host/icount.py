# SPDX-License-Identifier: GPL-2.0-only
"""W3ICOUNT: the instructions one registration cycle executes, per function.

A gdb script (gdb -batch -x icount.py --args VMLINUX ARGS...), run by
scripts/host/icount.sh on the UML kernel of the bench build with the KUnit
case mrkit_bench_rdma.bench_w3_icount_test.  At each entry of
w3_icount_cycle(b, impl, variant, pages) it single-steps until the
function returns and attributes every instruction to the kernel function
it belongs to (by the symbol table, nm -n).  Host signals (UML's timer and
I/O) are held back while it steps, so the count is the cycle's alone.
Prints one line per cycle:

  ICOUNT W3 <variant> pages=<N> <impl> insns=<N> mrkit=<N> irqemu=<N> top=<fn>:<N>,...

(mrkit: the instructions in functions named mrkit_* or __mrkit_*; irqemu:
those in UML's emulation of the interrupt flag, IRQEMU, which an x86
kernel's local_irq_save() and local_irq_restore() do inline in a few
instructions), and with ICOUNT_TRACE=FILE writes every stepped address
too.
"""
import bisect
import collections
import os
import subprocess

import gdb  # pylint: disable=import-error

VMLINUX = os.environ["ICOUNT_VMLINUX"]
LIMIT = int(os.environ.get("ICOUNT_LIMIT", "200000"))
HOLD = "SIGALRM SIGVTALRM SIGIO SIGUSR1 SIGUSR2 SIGWINCH"
# UML keeps the interrupt flag in the host's signal mask: these functions
# are what local_irq_save() and local_irq_restore() call there.
IRQEMU = ("block_signals", "unblock_signals", "um_set_signals", "um_set_signals_trace",
          "um_get_signals")


def symbols():
    """Text symbols by address, and the data symbols the names are read from."""
    text, data = [], {}
    nm = subprocess.run(["nm", "-n", VMLINUX], check=True, capture_output=True, text=True)
    for line in nm.stdout.splitlines():
        f = line.split()
        if len(f) != 3:
            continue
        if f[1] in "tTwW":
            text.append((int(f[0], 16), f[2]))
        data[f[2]] = int(f[0], 16)
    return text, data


TEXT, DATA = symbols()
ADDRS = [a for a, _ in TEXT]
ETEXT = DATA.get("_etext", 1 << 63)


def function(pc):
    i = bisect.bisect_right(ADDRS, pc) - 1
    if i < 0 or pc >= ETEXT:
        return "(outside the kernel)"
    return TEXT[i][1]


def name(table, index):
    """names[index] of a static const char * const names[] in the kernel."""
    inf = gdb.selected_inferior()
    ptr = int.from_bytes(inf.read_memory(DATA[table] + 8 * index, 8), "little")
    raw = bytes(inf.read_memory(ptr, 64))
    return raw.split(b"\0")[0].decode()


def reg(r):
    return int(gdb.parse_and_eval(r)) & 0xffffffffffffffff


def count_cycle(trace):
    """Step from the entry of w3_icount_cycle() to its return."""
    sp = reg("$sp")
    ret = int.from_bytes(gdb.selected_inferior().read_memory(sp, 8), "little")
    per_fn, n = collections.Counter(), 0
    gdb.execute(f"handle {HOLD} nopass", to_string=True)
    while n < LIMIT:
        gdb.execute("stepi", to_string=True)
        pc = reg("$pc")
        if pc == ret and reg("$sp") > sp:
            break
        fn = function(pc)
        per_fn[fn] += 1
        n += 1
        if trace:
            trace.write(f"{pc:x} {fn}\n")
    gdb.execute(f"handle {HOLD} pass", to_string=True)
    return n, per_fn


def main():
    trace_path = os.environ.get("ICOUNT_TRACE")
    trace = open(trace_path, "w", encoding="ascii") if trace_path else None
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("handle all nostop noprint pass", to_string=True)
    gdb.execute("break w3_icount_cycle", to_string=True)
    gdb.execute("run", to_string=True)
    while True:
        try:
            impl, variant, pages = reg("$esi"), reg("$edx"), reg("$ecx")
        except gdb.error:
            break		# the kernel halted: every cycle was counted
        label = f"W3 {name('w3v_names', variant)} pages={pages} {name('w3_names', impl)}"
        if trace:
            trace.write(f"# {label}\n")
        n, per_fn = count_cycle(trace)
        mrkit = sum(k for f, k in per_fn.items() if f.startswith(("mrkit_", "__mrkit_")))
        irqemu = sum(per_fn[f] for f in IRQEMU)
        top = ",".join(f"{f}:{k}" for f, k in per_fn.most_common(16))
        print(f"ICOUNT {label} insns={n} mrkit={mrkit} irqemu={irqemu} top={top}", flush=True)
        if n >= LIMIT:
            print(f"ICOUNT-ERROR {label}: no return after {LIMIT} instructions", flush=True)
        try:
            gdb.execute("continue", to_string=True)
        except gdb.error:
            break
    if trace:
        trace.close()


main()
