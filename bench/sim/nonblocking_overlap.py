#!/usr/bin/env python3
"""The nonblocking collectives under SimGrid SMPI: collshim-bench --overlap (docs/nonblocking.md,
"Measuring overlap") on one contending platform, under each collective selector as the run's own
library. Per part and selector one smpirun: native (the selector's blocking collective and SMPI's
MPI_I<collective>) beside the shim's schedules run without blocking, with the blocking shim call's
time alongside. The shim's algorithms do not depend on the selector, so only the first selector's
run times all of them; the others time native beside one (PARTS).

usage: bench/sim/nonblocking_overlap.py --out OUT [--platform P] [--mapping M] [--procs 256]
           [--selectors ompi mpich mvapich2 impi] [--parts allgather allreduce alltoallv]
           [--test-every US] [--compact DIR]

Resumable (a finished run's file is kept). Writes OUT/PART-SELECTOR-SIZE.csv (collshim-bench's --overlap CSV) and, with --compact DIR, DIR/PART.csv: the
columns figures need, every selector's rows. The flags are the other scripts' (smpi_common.py), with
smpi/or and smpi/os at 1 us and smpi/ois too (the engine's messages and SMPI's nonblocking collectives
are Isends), and smpi/test at 0.1 us: SMPI charges every MPI_Test 100 us by default, which no MPI
does (as smpi/iprobe).
"""
import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402

# Per part: collective, pattern, sizes (each its own smpirun, so that what finished stays), the
# algorithms of the first selector's run (Sparbit is left out: its small messages in flight take
# SimGrid minutes per call at p = 256, docs/simulation.md; hierarchical runs with intra=p2p, its
# nonblocking form), those of the others'.
# Ring and pairwise (p - 1 steps) are left out too: at p = 256 on this machine a cell took minutes.
PARTS = {
    "allgather": ("allgather", None, ["8", "32KiB"], "recursive_doubling,bruck,hierarchical:inter=recursive_doubling,intra=p2p",
                  "recursive_doubling"),
    "allreduce": ("allreduce", None, ["8", "32KiB"], "recursive_doubling,rabenseifner,hierarchical:intra=p2p",
                  "recursive_doubling"),
    "alltoallv": ("alltoallv", "sparse_8", ["8", "4KiB"], "linear,grid", "linear"),
}
CHEAP_TESTS = "--cfg=smpi/test:1e-7"
NO_DETACHED = "--cfg=smpi/send-is-detached-thresh:0"
COMPACT = ["selector", "collective", "distribution", "ranks", "bytes", "algorithm", "blocking_us", "pure_us",
           "persistent_us", "cpu_us", "overlapped_us", "overlap_pct", "verified"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--platform", default="oversub-contending")
    ap.add_argument("--mapping", default="sequential")
    ap.add_argument("--procs", type=int, default=256)
    ap.add_argument("--selectors", nargs="+", default=["ompi", "mpich", "mvapich2", "impi"])
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    ap.add_argument("--test-every", default="10")
    ap.add_argument("--no-detached", action="store_true",
                    help="--cfg=smpi/send-is-detached-thresh:0: no message is sent detached. The libraries' "
                         "nonblocking calls post p-1 messages per rank at once, which SimGrid 3.32 simulates in "
                         "about p^5 time when they are small and detached (docs/simulation.md); a different model, "
                         "for every row of the run alike")
    ap.add_argument("--compact", metavar="DIR")
    ap.add_argument("--bench", default=sim.BENCH)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    p = args.procs
    env = sim.environment(args.platform, args.mapping, p)
    # The small size of every part and selector first (cheap to simulate), then the large ones; under
    # each selector the first's runs (the shim's algorithms and the library's calls) first.
    for size_index in range(2):
        for index, selector in enumerate(args.selectors):
            for name in args.parts:
                collective, variant, sizes, first, others = PARTS[name]
                size = sizes[size_index]
                out = os.path.join(args.out, f"{name}-{selector}-{size}.csv")
                if os.path.exists(out):
                    print(f"nonblocking_overlap: {out} exists, kept", flush=True)
                    continue
                cmd = [*sim.smpirun(args.platform, args.mapping, p), sim.selector_flag(selector), *sim.SMPI_FLAGS,
                       *sim.OVERHEAD_NONBLOCKING, CHEAP_TESTS, *([NO_DETACHED] if args.no_detached else []),
                       args.bench, "--overlap", "--csv", "--collective",
                       collective, *(["--pattern", variant] if variant else []), "--min-bytes", size, "--max-bytes",
                       size, "--iterations", "1", "--warmup", "1", "--test-every", args.test_every, "--verify-limit",
                       "256MiB", "--platform", args.platform, "--algorithms", first if index == 0 else others]
                print("nonblocking_overlap:", " ".join(cmd), flush=True)
                with open(out + ".part", "w") as f:
                    code = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
                if code != 0:
                    print(f"nonblocking_overlap: FAILED ({code}) {name} {selector} {size}: {out}.part", flush=True)
                    continue
                os.rename(out + ".part", out)
    if args.compact:
        os.makedirs(args.compact, exist_ok=True)
        for name in args.parts:
            rows = []
            for selector in args.selectors:
                for size in PARTS[name][2]:
                    path = os.path.join(args.out, f"{name}-{selector}-{size}.csv")
                    if os.path.exists(path):
                        rows += [dict(row, selector=selector) for row in sim.read_csv(path)]
            with open(os.path.join(args.compact, f"{name}.csv"), "w", newline="") as f:
                writer = csv.DictWriter(f, COMPACT, extrasaction="ignore")
                writer.writeheader()
                writer.writerows(rows)


if __name__ == "__main__":
    main()
