#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: mrkit against the anchors' approaches, side by side.
#  - the mrkit_bench and mrkit_bench_rdma KUnit suites in the UML kernel
#    (one CPU), 5 x 100,000 operations per figure (make check runs them
#    with a tiny count): W1 pool get+put, W2 map on the fake device, rxe
#    and siw, W3 the full registration cycle on rxe (booted with
#    ib_core.force_mr=1 for rdma_rw), memory and slab growth;
#  - W1's contention variant in the qemu guest of make demo (Debian's
#    kernel, 2 vCPUs): get on CPU 0, put on CPU 1;
#  - end to end, A/B: Debian's stock nvme-rdma.ko against the kernel's
#    nvme-rdma converted to mrkit, in one guest boot per transport (rxe,
#    siw), interleaved stock, mrkit, stock, mrkit, against nvmet-rdma: fio
#    sequential 1 MiB read and write, 4 KiB random read, iodepth 32
#    (NVME_AB_ROUNDS rounds, default 4, of NVME_AB_SECS seconds per job, default 5);
#  - the same for NFS/RDMA: Debian's stock rpcrdma.ko against rpcrdma with
#    frwr_ops.c on mrkit, an NFSv4.2 mount over RDMA to knfsd in the guest,
#    fio on a file, O_DIRECT, iodepth 32 (NFS_AB_ROUNDS, NFS_AB_SECS);
#  - the same for iSER: Debian's stock ib_iser.ko against ib_iser on mrkit
#    (lazy, iSER's scheme) and on mrkit with its rkey fence (mrkit_fence=1),
#    logged in to LIO's ib_isert on a RAM LUN, interleaved stock, mrkit,
#    fence, twice: fio sequential 512 KiB write and read, 4 KiB random read,
#    iodepth 32 (ISER_AB_SECS seconds per job, default 8).
# Prints a table and the goals as met / not met; writes .check/bench.csv.
set -euo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
"$proj/scripts/deps.sh" check
cache=${MRKIT_CACHE:-/var/cache/mrkit}
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
tree=$("$proj/scripts/prep-tree.sh")
build=$cache/build-$ver/normal
out=$proj/.check
mkdir -p "$out" "$build"
iters=${BENCH_ITERS:-100000}

(cd "$tree" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$proj/kunit/.kunitconfig" --build_dir="$build" \
	--jobs="$(nproc)" --timeout=1800 \
	--kernel_args="mrkit_kunit.bench_iters=$iters" \
	--kernel_args="mrkit_kunit.bench_reps=5" \
	--kernel_args="mrkit_kunit.bench_pools=${BENCH_POOLS:-1000}" \
	--kernel_args=ib_core.force_mr=1 'mrkit_bench*') \
	> "$out/bench.log" 2>&1 || { tail -n 30 "$out/bench.log"; exit 1; }
cp "$build/test.log" "$out/bench-uml.log"

BENCH_SMP_ITERS=$iters "$proj/scripts/vm/run.sh" bench > "$out/bench-vm.out" 2>&1 ||
	{ cat "$out/bench-vm.out"; exit 1; }

python3 - "$out/bench-uml.log" "$out/vm-bench.log" "$out/bench.csv" "$iters" <<'PY'
import re, sys
log, vmlog, csv, iters = sys.argv[1:]
rows, allocs, slab, mem, slabgoal = [], {}, [], "?", "?"
atomics, iosize = [], None
pat = re.compile(r"BENCH (W\w+) (.*?) impl=(\S+) median_ns=(\S+) min=(\S+) max=(\S+) ratio_vs_(\S+)=(\S+)")
for path, where in ((log, "uml"), (vmlog, "vm")):
    for line in open(path, errors="replace"):
        m = pat.search(line)
        if m:
            rows.append(m.groups())
        m = re.search(r"BENCH W3ALLOC (.*?) impl=(\S+) allocs_per_io=(\S+) wrs_per_io=(\S+)", line)
        if m:
            allocs[(m.group(1), m.group(2))] = (m.group(3), m.group(4))
        m = re.search(r"BENCH MEM (.*)", line)
        if m:
            mem = m.group(1)
        m = re.search(r"BENCH SLAB (pools=.*)", line)
        if m:
            slab.append(m.group(1))
        m = re.search(r"BENCH SLABGOAL (.*)", line)
        if m:
            slabgoal = m.group(1)
        m = re.search(r"(ATOMICS \S+ \S+ per_io=\S+)", line)
        if m:
            atomics.append(m.group(1))
        m = re.search(r"BENCH IOSIZE bytes=(\d+)", line)
        if m:
            iosize = int(m.group(1))
with open(csv, "w") as f:
    f.write("workload,config,impl,median_ns,min_ns,max_ns,baseline,ratio\n")
    for r in rows:
        f.write(",".join(r) + "\n")
print(f"mrkit_bench: median of 5 repetitions x {iters} operations, ns per operation")
print("W1-W3 in UML (one CPU); W1SMP in the qemu guest (Debian's kernel, 2 vCPUs, TCG)")
print(f"{'work':5} {'config':44} {'impl':20} {'median':>8} {'min':>8} {'max':>8} {'ratio':>7}")
for w, cfg, impl, med, mn, mx, base, ratio in rows:
    extra = ""
    if (cfg, impl) in allocs:
        extra = f"  allocs/io {allocs[(cfg, impl)][0]}, WRs/io {allocs[(cfg, impl)][1]}"
    print(f"{w:5} {cfg:44} {impl:20} {med:>8} {mn:>8} {mx:>8} {ratio:>7}  (vs {base}){extra}")
print()
for s in slab:
    print(f"slab growth: {s}")
def worst(w, impl, pred=lambda c: True):
    r = [float(x[7]) for x in rows if x[0] == w and x[2] == impl and pred(x[1])]
    return max(r) if r else None
def met(v, lim):
    return "not measured" if v is None else ("met" if v <= lim else "not met")
w1, w2, w3 = worst("W1", "mrkit"), worst("W2", "mrkit_map+release"), worst("W3", "mrkit_fence")
w3l = worst("W3", "mrkit_lazy")
w1s = worst("W1SMP", "mrkit")
a3 = max((float(v[0]) for (c, i), v in allocs.items() if i.startswith("mrkit")), default=None)
print()
print("goals:")
print(f"  W1 pool get+put <= 0.5 x ib_mr_pool_get/put (UML): {met(w1, 0.5)} (worst ratio {w1})")
print(f"  W1 contention variant (VM, 2 vCPUs):             {'ratio ' + str(w1s) if w1s is not None else 'not measured'} vs ib_mr_pool ({met(w1s, 0.5)} against the same goal)")
print(f"  W2 map <= 1.05 x bare ib_map_mr_sg:                {met(w2, 1.05)} (worst ratio {w2})")
print(f"  W3 full cycle <= 0.8 x rdma_rw:                    {met(w3, 0.8)} (worst ratio {w3} with the fence, {w3l} lazy)")
print(f"  W3 0 allocations per I/O:                          {'met' if a3 == 0 else 'not met'} (mrkit {a3}; rdma_rw 1 per I/O)")
mk = None
for x in slab:
    m = re.search(r"pools=(\d+) .*mrkit=(-?\d+)", x)
    if m and (mk is None or int(m.group(1)) >= mk[0]):
        mk = (int(m.group(1)), int(m.group(2)))
print(f"  memory <= 128 bytes per descriptor:                {met(mk[1] if mk else None, 128)} ({mk[1] if mk else '?'} bytes beyond the provider's MR at {mk[0] if mk else '?'} pools; {mem})")
print(f"  slab growth linear (n/10 -> n pools):              {slabgoal}")
# Issue L: the abstraction against the hand-rolled path it replaces.
def vs_nvme(impl):
    r = []
    for cfg in sorted({x[1] for x in rows if x[0] == "W3"}):
        a = [float(x[3]) for x in rows if x[0] == "W3" and x[1] == cfg and x[2] == impl]
        b = [float(x[3]) for x in rows if x[0] == "W3" and x[1] == cfg and x[2] == "nvme_style"]
        if a and b:
            r.append(round(a[0] / b[0], 3))
    return max(r) if r else None
f3, l3 = vs_nvme("mrkit_fence"), vs_nvme("mrkit_lazy")
w2r = worst("W2", "mrkit_map+release", lambda c: "rxe" in c)
print(f"  L: W3 <= 1.0 x the nvme-style hand-rolled path:   {met(f3, 1.0)} (worst {f3} with the fence, {l3} lazy)")
print(f"  L: W3 <= 0.6 x rdma_rw:                            {met(w3, 0.6)} (worst {w3} with the fence, {w3l} lazy)")
print(f"  L: W2 <= 1.05 x bare ib_map_mr_sg on rxe:          {met(w2r, 1.05)} (worst {w2r}; siw's pass is its sg_offset workaround)")
print(f"  L: W1 <= 0.5 x ib_mr_pool (UML and VM):            {met(max([v for v in (w1, w1s) if v is not None], default=None), 0.5)} (UML {w1}, VM {w1s})")
print(f"  L: memory <= 128 bytes per descriptor:             {met(mk[1] if mk else None, 128)} ({mk[1] if mk else '?'} bytes)")
print(f"  L: sizeof(struct mrkit_io) <= 96 bytes:            {met(iosize, 96)} ({iosize} bytes; PI state is still inline)")
fa = [float(a.split('per_io=')[1]) for a in atomics if ' mrkit_fence ' in a]
print(f"  L: <= 2 atomic RMWs per descriptor (fence path):   {met(max(fa) if fa else None, 2)} ({max(fa) if fa else '?'} per one-descriptor I/O)")
for a in atomics:
    print(a)
print(f"csv: {csv}")
PY

echo
echo "nvme-rdma A/B: stock nvme-rdma.ko vs nvme-rdma on mrkit, one boot per transport, interleaved"
echo "(metric, stock, mrkit: medians of the runs; ratio mrkit/stock; spread = largest (max-min)/mean of one driver's runs, %)"
ab=0
for t in rxe siw; do
	"$proj/scripts/vm/ulp.sh" nvme "$t" bench > "$out/bench-nvme-$t.out" 2>&1 || ab=1
	grep -E '^(AB |nvme-report|ulp: nvme over)' "$out/bench-nvme-$t.out" || true
done
[ $ab = 0 ] || { echo "bench: nvme-rdma A/B failed (see .check/bench-nvme-*.out)"; exit 1; }

echo
echo "NFS/RDMA A/B: stock rpcrdma.ko vs rpcrdma with frwr_ops.c on mrkit, one boot per transport, interleaved"
echo "(metric, stock, mrkit, ratio mrkit/stock, spread = largest (max-min)/mean of one module's runs, %)"
ab=0
for t in rxe siw; do
	"$proj/scripts/vm/ulp.sh" nfs "$t" bench > "$out/bench-nfs-$t.out" 2>&1 || ab=1
	grep -E '^(AB |nfs-report|ulp: nfs over)' "$out/bench-nfs-$t.out" || true
done
[ $ab = 0 ] || { echo "bench: NFS/RDMA A/B failed (see .check/bench-nfs-*.out)"; exit 1; }

echo
echo "iSER A/B: stock ib_iser.ko vs ib_iser on mrkit (AB), and mrkit lazy vs its rkey fence (FENCE), one boot per transport, interleaved"
echo "(metric, MiB/s or IOPS, ratio, spread = largest (max-min)/mean of one driver's runs, %)"
ab=0
for t in rxe siw; do
	"$proj/scripts/vm/ulp.sh" iser "$t" bench > "$out/bench-iser-$t.out" 2>&1 || ab=1
	grep -E '^(AB |FENCE |iser-report|ulp: iser over)' "$out/bench-iser-$t.out" || true
done
[ $ab = 0 ] || { echo "bench: iSER A/B failed (see .check/bench-iser-*.out)"; exit 1; }
