#!/usr/bin/python3
"""The cost model against the simulator: predictions of collshim-model for every cell SMPI measured.

Reads CSVs written by `collshim-tune measure` (bench/sim/tune.py), predicts the same cells (process count,
ranks per node, mapping, size, algorithm) with `collshim-model predict --csv` on a platform description,
and prints, per process count and mapping and over all:
- winner agreement: cells where the algorithm the model picks is within 5% of the measured best
  (among the algorithms both have);
- proportional error max(measured, predicted) / min(...) (the τ-Lop thesis's metric, 1 = exact):
  median and mean, per algorithm, and the cells where it is largest.
Predictions time each rank from its exit of a dissemination barrier, as bench/sim/tune.py's runs do
(smpi/barrier:mpich before every timed call): the ranks leave it at different times (--no-barrier
leaves that out). Algorithms with opaque phases (a library collective, a shared-memory window) are left out: the model
costs them by an approximation (`collshim-model` marks them), and `native` is the library's own.

With --native the same comparison is made for the libraries' own choices instead: the rows of SMPI's
`ompi`, `mpich`, `mvapich2` and `impi` selectors (bench/sim/tune.py --native-only), or `default` against `collshim-model predict --native`,
which costs the algorithm each selector's decision logic picks (src/model/library/native_decision.hpp).
Cells where the model has no schedule for that algorithm are counted and left out.

  bench/sim/model_validation.py --platform-yaml config/platforms/fattree-contending.yaml OUT/fattree-contending.csv
  bench/sim/model_validation.py --native --platform-yaml config/platforms/fattree-contending.yaml OUT/fattree-contending.csv

Alltoallv rows are compared per pattern (the CSV's `distribution`, predicted with --pattern and the same seed).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the host files and their host names, CSV files)


# SMPI's selectors, as their rows name them, and as collshim-model predict --native names their tables.
NATIVE_LIBRARIES = {"ompi": "ompi", "mpich": "mpich", "mvapich2": "mvapich2", "impi": "impi",
                    "default": "smpi-3.32-default"}


def load(paths, collective, native):
    measured = defaultdict(dict)  # (ranks, ppn, mapping, pattern, bytes) -> algorithm -> median us
    for path in paths:
        for row in sim.read_csv(path):
            algorithm = row["algorithm"]
            if row["collective"] != collective:
                continue
            is_native = algorithm == "native" or algorithm.startswith("smpi_")
            if native:
                if algorithm.removeprefix("smpi_") not in NATIVE_LIBRARIES:
                    continue
                algorithm = "native:" + algorithm.removeprefix("smpi_")
            elif is_native or "intra=shm" in algorithm:
                continue
            key = (int(row["ranks"]), int(row["ppn"]), row["mapping"], row.get("distribution") or "", int(row["bytes"]))
            measured[key][algorithm] = float(row["median_us"])
    return measured


def host_per_core(args):
    """Whether the description's platform is a bench/sim contending one, which has a host per core."""
    return "-contending" in args.platform_name


def placement_args(args, ranks, ppn, mapping):
    """The model's placement for a measured row: bench/sim/tune.py's host file itself where it fills
    nodes sequentially (the rows' ppn rounds 16 + 8 ranks to 2 x 12) or round-robin (96 ranks over 64
    nodes are 2 on some and 1 on others, not 48 x 2), else the row's ranks per node and class."""
    cyclic = mapping == "cyclic"
    hostfile = sim.hostfile(args.platform_name, "cyclic" if cyclic else "sequential")
    if (cyclic or (mapping in ("sequential", "single_node") and ppn > 1)) and os.path.exists(hostfile):
        # The fat-pipe platforms' host files name a node per rank; the contending ones a core.
        pattern = ["--node-pattern", sim.NODE_PATTERN] if host_per_core(args) else []
        return ["--hostfile", hostfile, *pattern]
    return ["--ppn", str(ppn), "--mapping", "sequential" if mapping in ("sequential", "single_node") else mapping]


def predict(args, ranks, ppn, mapping, pattern, sizes, algorithms):
    cmd = [args.model, "predict", "--csv", "--platform", args.platform_yaml, "--collective", args.collective,
           "--procs", str(ranks), *placement_args(args, ranks, ppn, mapping),
           "--bytes", *[str(s) for s in sizes]]
    if pattern:
        cmd += ["--pattern", pattern]
    if args.native:
        cmd += ["--algorithms", "native", "--native", *[NATIVE_LIBRARIES[a.removeprefix("native:")] for a in algorithms]]
        if host_per_core(args):
            # SMPI shows the libraries one rank per node (MVAPICH2's and Intel MPI's tables are chosen
            # by it).
            cmd += ["--library-ranks-per-node", "1"]
    else:
        cmd += ["--algorithms", *algorithms]
    if not args.no_barrier:
        cmd.append("--after-barrier")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    predicted = defaultdict(dict)
    by_table = {f"native:{table}": f"native:{name}" for name, table in NATIVE_LIBRARIES.items()}
    for row in csv.DictReader(out.splitlines()):
        if row["approximated"] == "0":
            predicted[int(row["bytes"])][by_table.get(row["algorithm"], row["algorithm"])] = float(row["predicted_us"])
    return predicted


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csvs", nargs="+")
    ap.add_argument("--platform-yaml", required=True)
    ap.add_argument("--collective", default="allgather")
    ap.add_argument("--model", default=sim.MODEL)
    ap.add_argument("--no-barrier", action="store_true",
                    help="predict from a common start, leaving out the skew of the barrier before every timed call")
    ap.add_argument("--worst", type=int, default=8, help="cells with the largest errors to list")
    ap.add_argument("--csv", help="also write every compared cell (measured and predicted) to this CSV file")
    ap.add_argument("--native", action="store_true",
                    help="the libraries' own choices (SMPI's ompi, mpich, mvapich2 and impi selectors) instead of collshim's algorithms")
    args = ap.parse_args()
    with open(args.platform_yaml) as f:
        args.platform_name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("name:")), "")
    measured = load(args.csvs, args.collective, args.native)
    if not measured:
        sys.exit(f"model_validation: no {args.collective} rows in {', '.join(args.csvs)}")

    groups = defaultdict(list)
    for key in measured:
        groups[key[:4]].append(key[4])
    rows, errors, per_algorithm, worst, misses, compared = [], [], defaultdict(list), [], [], []
    agree_total = cells_total = not_costed = 0
    for (ranks, ppn, mapping, pattern), sizes in sorted(groups.items()):
        algorithms = sorted({a for s in sizes for a in measured[(ranks, ppn, mapping, pattern, s)]})
        predicted = predict(args, ranks, ppn, mapping, pattern, sorted(sizes), algorithms)
        where = f"{mapping} {pattern}".strip()
        agree = cells = 0
        group_errors = []
        for size in sorted(sizes):
            got, want = measured[(ranks, ppn, mapping, pattern, size)], predicted.get(size, {})
            both = [a for a in got if a in want]
            not_costed += len(got) - len(both)
            if len(both) < (1 if args.native else 2):
                continue
            best = min(got[a] for a in both)
            pick = min(both, key=lambda a: want[a])
            cells += 1
            agree += got[pick] <= 1.05 * best
            if got[pick] > 1.05 * best:
                fastest = min(both, key=lambda a: got[a])
                misses.append((ranks, ppn, where, size, pick, got[pick], want[pick], fastest, best, want[fastest]))
            for a in both:
                mu = max(got[a], want[a]) / min(got[a], want[a])
                group_errors.append(mu)
                per_algorithm[a].append(mu)
                worst.append((mu, ranks, ppn, where, size, a, got[a], want[a]))
                compared.append([args.platform_name, ranks, ppn, mapping, pattern, size, a, got[a], want[a]])
        errors += group_errors
        agree_total += agree
        cells_total += cells
        if cells:
            rows.append(f"| {ranks} | {ppn} | {where} | {cells} | {agree / cells:.0%} | "
                        f"{statistics.median(group_errors):.2f} | {statistics.mean(group_errors):.2f} |")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["platform", "ranks", "ppn", "mapping", "pattern", "bytes", "algorithm", "measured_us",
                          "predicted_us"])
            out.writerows(row[:7] + [f"{row[7]:.3f}", f"{row[8]:.3f}"] for row in compared)
    what = "the libraries' own choices" if args.native else "opaque phases left out"
    print(f"Model {args.platform_yaml} against {', '.join(args.csvs)} ({args.collective}; {what})\n")
    if not_costed:
        print(f"{not_costed} measured times have no prediction (not modelled there) and are left out.\n")
    print("| p | ppn | mapping | cells | winner within 5% | median error | mean error |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if cells_total:
        print(f"| all | | | {cells_total} | {agree_total / cells_total:.0%} | {statistics.median(errors):.2f} | "
              f"{statistics.mean(errors):.2f} |")
    print("\nPer algorithm (median proportional error over its cells):\n")
    print(", ".join(f"`{a}` {statistics.median(v):.2f}" for a, v in sorted(per_algorithm.items())))
    print(f"\nLargest errors:\n")
    print("| p | ppn | mapping | bytes | algorithm | measured us | predicted us | error |")
    print("|---|---|---|---|---|---|---|---|")
    for mu, ranks, ppn, mapping, size, a, got, want in sorted(worst, reverse=True)[:args.worst]:
        print(f"| {ranks} | {ppn} | {mapping} | {size} | `{a}` | {got:.1f} | {want:.1f} | {mu:.2f} |")
    if misses:
        print("\nCells where the model's pick is more than 5% slower than the fastest (measured / predicted us):\n")
        print("| p | ppn | mapping | bytes | model's pick | its us | fastest | its us | pick's loss |")
        print("|---|---|---|---|---|---|---|---|---|")
        for ranks, ppn, mapping, size, pick, got_pick, want_pick, fastest, best, want_best in misses:
            print(f"| {ranks} | {ppn} | {mapping} | {size} | `{pick}` | {got_pick:.1f} / {want_pick:.1f} | `{fastest}` | "
                  f"{best:.1f} / {want_best:.1f} | {got_pick / best:.2f}x |")


if __name__ == "__main__":
    main()
