#!/usr/bin/python3
"""The shipped rule table's evidence: tunes collshim on simulated clusters with SimGrid SMPI.

For every platform, mapping and process count of the plan, `collshim-tune measure` runs
collshim-bench (the SMPI build) under smpirun with every tuning candidate next to SMPI's `ompi`
selector, then once more per other library selector (`mpich`, `mvapich2`, `impi`) timing native only;
one skew-free barrier (MPICH's) before every timed call in every run. Simulated time is
deterministic: one timed call per size. Then:

  rules   collshim-tune rules --robust over all platforms -> OUT/tuned.yaml (config/default.yaml is
          bench/sim/shipped_table.py's, from the committed evidence)
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms, SMPI's flags, COLLSHIM_TOPOLOGY)

OTHER_SELECTORS = ["mpich", "mvapich2", "impi"]


def measure(args, platform, mapping, p, selector, native_only):
    out = os.path.join(args.out, f"{platform}.csv")
    launcher = [*sim.smpirun(platform, mapping, p), sim.selector_flag(selector), *sim.SMPI_FLAGS,
                *([] if args.no_overhead else sim.OVERHEAD)]
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
        # In SMPI a shared-memory window's loads and stores cost no simulated time (docs/simulation.md): the
        # intra=shm variants would win for free.
        cmd += ["--exclude", "intra=shm"]
    env = sim.environment(platform, mapping, p)
    print(f"tune: {platform} {mapping} p={p} {selector}{' (native only)' if native_only else ''}", flush=True)
    if subprocess.run(cmd + ["--", *launcher], env=env, stdout=subprocess.DEVNULL).returncode == 0:
        return
    # SimGrid's max-min solver can abort on a rounding residue ("Cannot saturate more a constraint that
    # has no active element"); a coarser precision (still 1e-4 B/s on links of MB/s) gets past it.
    # The sizes already measured are kept: the rerun resumes.
    print(f"tune: SimGrid abort, resuming with {sim.COARSE_PRECISION}", flush=True)
    subprocess.run(cmd + ["--", *launcher, sim.COARSE_PRECISION], check=True, env=env, stdout=subprocess.DEVNULL)


def analyze(args):
    csvs = [os.path.join(args.out, f"{p}.csv") for p in args.platforms
            if os.path.exists(os.path.join(args.out, f"{p}.csv"))]
    tuned = os.path.join(args.out, "tuned.yaml")
    sim.robust_rules(args.tune, csvs, tuned, quiet=False)
    sim.verification_report(args.tune, args.out, csvs, tuned, "Verification of the tuned tables (bench/sim/tune.py)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(sim.HERE, "out", "tune"))
    ap.add_argument("--platforms", nargs="+", default=sim.CONTENDING, choices=list(sim.CLUSTERS))
    ap.add_argument("--mappings", nargs="+", default=["sequential", "cyclic"])
    ap.add_argument("--procs", nargs="+", type=int, help="process counts (default: per platform)")
    ap.add_argument("--collectives", nargs="+", default=["allgather"])
    ap.add_argument("--variants", nargs="+", default=[], help="Allgatherv distributions / Alltoallv patterns")
    ap.add_argument("--min-bytes", default="1")
    ap.add_argument("--max-bytes", default="256KiB")
    ap.add_argument("--tune", default=sim.TUNE)
    ap.add_argument("--bench", default=sim.BENCH)
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
                for p in args.procs or sim.CLUSTERS[platform].procs:
                    measure(args, platform, mapping, p, "ompi", args.native_only)
                    for selector in args.other_selectors:
                        measure(args, platform, mapping, p, selector, True)
    if not args.native_only:
        analyze(args)


if __name__ == "__main__":
    main()
