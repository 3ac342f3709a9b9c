#!/usr/bin/python3
"""The shipped rule table's evidence: tunes collshim on simulated clusters with SimGrid SMPI.

For every platform, mapping and process count of the plan, `collshim-tune measure` runs
collshim-bench (the SMPI build) under smpirun with every tuning candidate next to SMPI's `ompi`
selector, then once more per other library selector (`mpich`, `mvapich2`, `impi`) timing native only;
one skew-free barrier (MPICH's) before every timed call in every run. Simulated time is
deterministic: one timed call per size. Then:

  rules   collshim-tune rules --robust over all platforms -> OUT/tuned.yaml (the candidate default.yaml)
  verify  collshim-tune verify --measured on every platform, and leave-one-platform-out: rules tuned on
          the other platforms, verified on the one left out -> OUT/verify.md

  bench/sim/tune.py [--out bench/sim/out/tune] [--platforms ...] [--procs ...] [--collectives ...]
  bench/sim/tune.py --analyze-only      # rules and verification from the CSVs already measured

Every measurement is resumable (collshim-tune measure's record lines): rerun the same command after
an interruption. Needs build/ (collshim-tune) and build-smpi/ (collshim-bench, -DCOLLSHIM_MPI=smpi).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

PLATFORMS = {  # name: (nodes, cores per node, default process counts: whole nodes in sequential mapping)
    "yahoo-contending": (16, 8, [16, 32, 64, 128]),
    "cervino-contending": (5, 32, [64, 96, 128, 160]),
    "fattree-contending": (64, 16, [32, 64, 128]),
    # 4 leaves of 8 nodes, uplinks 4:1 oversubscribed (make_contending_platforms.py): 256 ranks span two.
    "oversub-contending": (32, 16, [64, 128, 256]),
    "yahoo": (16, 8, [16, 32, 64, 128]),
    "cervino": (5, 32, [64, 96, 128, 160]),
    "fattree": (64, 16, [32, 64, 128]),
}
OTHER_SELECTORS = ["mpich", "mvapich2", "impi"]
# The network model of every run, beyond the platform file:
# - smpi/barrier:mpich: one skew-free barrier before each timed call, whatever the selector (DESIGN.md);
# - smpi/os, smpi/or: 1 us of software overhead per message sent and per message received (LogGP's o;
#   MPI over InfiniBand costs ~0.5-1.5 us). SMPI's default is 0: injecting a message costs nothing,
#   so p-1 direct messages cost the same as one and algorithms that aggregate (grid, Bruck) can never
#   win their real argument. RESULTS.md shows both;
# - smpi/iprobe: 0.1 us per MPI_Probe/Iprobe poll. SMPI's default (100 us per poll) charged the grid
#   Alltoallv ~100 us for every size-headed message it probes (715 us against 19 us at 64 ranks, 8 B).
# - smpi/grow-injected-times:no: every poll costs those 0.1 us. By default SMPI multiplies a poll's
#   cost by a counter that every failed poll of any rank raises and any success resets (one static for
#   the whole simulation), so while many ranks wait in MPI_Probe the polls grow to tens of us and a
#   rank sees its message that late: radix-8 Bruck Alltoall at p = 96, 16 per node, 512 B measured
#   424 us with it and 169 us without (RESULTS.md). No MPI library backs off like that.
COARSE_PRECISION = "--cfg=maxmin/precision:1e-4"
OVERHEAD = ["--cfg=smpi/os:0:1e-6:0", "--cfg=smpi/or:0:1e-6:0"]
SMPI = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/shared-malloc:global",
        "--cfg=smpi/shared-malloc-blocksize:1073741824", "--log=root.thres:critical", "--cfg=smpi/barrier:mpich",
        "--cfg=smpi/iprobe:1e-7", "--cfg=smpi/grow-injected-times:no"]


def topology(platform, mapping, p):
    """COLLSHIM_TOPOLOGY for a contending platform (SMPI sees one host per core: no shared nodes)."""
    nodes, cores, _ = PLATFORMS[platform]
    if not platform.endswith("-contending"):
        return None
    used = min(nodes, -(-p // cores)) if mapping == "sequential" else min(nodes, p)
    if used == 1:
        return "nodes=1,mapping=single_node"
    return f"nodes={used},mapping={mapping}"


def measure(args, platform, mapping, p, selector, native_only):
    out = os.path.join(args.out, f"{platform}.csv")
    launcher = ["smpirun", "-np", str(p), "-platform", os.path.join(HERE, "platforms", platform + ".xml"),
                "-hostfile", os.path.join(HERE, "hostfiles", f"{platform}-{mapping}.txt"),
                f"--cfg=smpi/coll-selector:{selector}", *SMPI, *([] if args.no_overhead else OVERHEAD)]
    cmd = [args.tune, "measure", "-o", out, "--bench", args.bench, "--platform", platform,
           "--iterations", "1", "--warmup", "0", "--min-bytes", args.min_bytes, "--max-bytes", args.max_bytes,
           "--bench-arg=--verify-limit=256MiB"]
    for c in args.collectives:
        cmd += ["--collective", c]
    for v in args.variants:
        cmd += ["--variant", v]
    if native_only:
        cmd += ["--algorithms", "native"]
    else:
        # In SMPI a shared-memory window's loads and stores cost no simulated time (RESULTS.md): the
        # intra=shm variants would win for free.
        cmd += ["--exclude", "intra=shm"]
    env = dict(os.environ)
    if topology(platform, mapping, p):
        env["COLLSHIM_TOPOLOGY"] = topology(platform, mapping, p)
    print(f"tune: {platform} {mapping} p={p} {selector}{' (native only)' if native_only else ''}", flush=True)
    if subprocess.run(cmd + ["--", *launcher], env=env, stdout=subprocess.DEVNULL).returncode == 0:
        return
    # SimGrid's max-min solver can abort on a rounding residue ("Cannot saturate more a constraint that
    # has no active element"); a coarser precision (still 1e-4 B/s on links of MB/s) gets past it.
    # The sizes already measured are kept: the rerun resumes.
    print(f"tune: SimGrid abort, resuming with {COARSE_PRECISION}", flush=True)
    subprocess.run(cmd + ["--", *launcher, COARSE_PRECISION], check=True, env=env, stdout=subprocess.DEVNULL)


def analyze(args):
    csvs = [os.path.join(args.out, f"{p}.csv") for p in args.platforms
            if os.path.exists(os.path.join(args.out, f"{p}.csv"))]
    tuned = os.path.join(args.out, "tuned.yaml")
    subprocess.run([args.tune, "rules", "--robust", *csvs, "-o", tuned], check=True)
    report = ["# Verification of the tuned tables (bench/sim/tune.py)", ""]

    def verify(table, csv):
        proc = subprocess.run([args.tune, "verify", table, "--measured", csv], capture_output=True, text=True)
        lines = proc.stdout.strip().splitlines()
        summary = [l for l in lines if " cells: geometric mean" in l or l.startswith("worst cell")
                   or "left out" in l]
        return proc.returncode, summary, proc.stdout + proc.stderr

    report += ["## The table tuned on all platforms, on each", ""]
    for csv in csvs:
        status, summary, _ = verify(tuned, csv)
        report += [f"- {os.path.basename(csv)} (exit {status}):"] + [f"  - {s}" for s in summary]
    report += ["", "## Leave one platform out: tuned on the others, verified on it", ""]
    for left in csvs:
        others = [c for c in csvs if c != left]
        if not others:
            continue
        table = os.path.join(args.out, "without-" + os.path.basename(left).replace(".csv", ".yaml"))
        subprocess.run([args.tune, "rules", "--robust", *others, "-o", table], check=True, stdout=subprocess.DEVNULL)
        status, summary, _ = verify(table, left)
        report += [f"- left out {os.path.basename(left)} (exit {status}):"] + [f"  - {s}" for s in summary]
    path = os.path.join(args.out, "verify.md")
    with open(path, "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n".join(report))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "out", "tune"))
    ap.add_argument("--platforms", nargs="+", default=[p for p in PLATFORMS if p.endswith("-contending")],
                    choices=list(PLATFORMS))
    ap.add_argument("--mappings", nargs="+", default=["sequential", "cyclic"])
    ap.add_argument("--procs", nargs="+", type=int, help="process counts (default: per platform)")
    ap.add_argument("--collectives", nargs="+", default=["allgather"])
    ap.add_argument("--variants", nargs="+", default=[], help="Allgatherv distributions / Alltoallv patterns")
    ap.add_argument("--min-bytes", default="1")
    ap.add_argument("--max-bytes", default="256KiB")
    ap.add_argument("--tune", default=os.path.join(ROOT, "build", "collshim-tune"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build-smpi", "collshim-bench"))
    ap.add_argument("--other-selectors", nargs="*", default=OTHER_SELECTORS, choices=OTHER_SELECTORS,
                    help="library selectors timed after ompi (native only); none: collshim's candidates and ompi only")
    ap.add_argument("--analyze-only", action="store_true")
    ap.add_argument("--native-only", action="store_true",
                    help="time native only, under ompi and the other selectors (the cost model's native "
                         "decisions are checked against these: bench/sim/model_validation.py --native); no rules")
    ap.add_argument("--no-overhead", action="store_true", help="SMPI's default model: no per-message overhead")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.analyze_only:
        for platform in args.platforms:
            for mapping in args.mappings:
                for p in args.procs or PLATFORMS[platform][2]:
                    measure(args, platform, mapping, p, "ompi", args.native_only)
                    for selector in args.other_selectors:
                        measure(args, platform, mapping, p, selector, True)
    if not args.native_only:
        analyze(args)


if __name__ == "__main__":
    main()
