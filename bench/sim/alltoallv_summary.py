#!/usr/bin/env python3
"""Alltoallv under SMPI: collshim's algorithms against the best of SMPI's four library selectors.

Reads the CSV that `bench/sim/tune.py --collectives alltoallv` measures (collshim-tune measure rows:
collshim's candidates next to smpi_ompi, smpi_mpich, smpi_mvapich2, smpi_impi) and prints Markdown:
one summary row per (p, pattern), or with --per-pattern a table per (p, pattern) with every size.
Ratios are best selector time / algorithm time (median over timed calls of the slowest rank).

  bench/sim/alltoallv_summary.py OUT/fattree-contending.csv [MORE.csv...] [--per-pattern]
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (CSV files)

ALGORITHMS = ["linear", "pairwise", "grid", "grid:dims=3", "grid:dims=hypercube",
              "node_grid", "node_grid:dims=2", "node_grid:dims=hypercube"]
FORWARDING = ALGORITHMS[2:]  # the algorithms that route blocks through other ranks
SELECTORS = ["smpi_ompi", "smpi_mpich", "smpi_mvapich2", "smpi_impi"]
PATTERNS = ["uniform", "sparse_1", "sparse_8", "sparse_sqrt", "power_law", "hot_spot", "shift"]


def size_text(b):
    return f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


def load(paths):
    times = defaultdict(dict)
    for path in paths:
        for row in sim.read_csv(path):
            if row["collective"] == "alltoallv":
                key = (int(row["ranks"]), row["distribution"], int(row["bytes"]))
                times[key][row["algorithm"]] = float(row["median_us"])
    return times


def best(cell, names):
    present = [(cell[name], name) for name in names if name in cell]
    return min(present) if present else None


def summary(times):
    print("| p | pattern | best selector at 8 B | best collshim at 8 B | 2D grid at 8 B | at 1 KiB | at 64 KiB "
          "| grid routing beats linear by 3% | collshim > 1.05x up to |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in sorted({key[0] for key in times}):
        for pattern in PATTERNS:
            keys = sorted(key for key in times if key[:2] == (p, pattern))
            if not keys:
                continue

            def at(size):
                cell = times.get((p, pattern, size), {})
                selector, ours = best(cell, SELECTORS), best(cell, ALGORITHMS)
                return f"`{ours[1]}` {selector[0] / ours[0]:.2f}x" if selector and ours else "–"

            cell = times.get((p, pattern, 8), {})
            selector = best(cell, SELECTORS)
            grid = f"{selector[0] / cell['grid']:.2f}x" if selector and "grid" in cell else "–"
            grid_wins = [k[2] for k in keys if "linear" in times[k] and best(times[k], FORWARDING)
                         and best(times[k], FORWARDING)[0] < times[k]["linear"] / 1.03]
            wins = [k[2] for k in keys if best(times[k], SELECTORS) and best(times[k], ALGORITHMS)
                    and best(times[k], SELECTORS)[0] / best(times[k], ALGORITHMS)[0] > 1.05]
            print(f"| {p} | `{pattern}` | {f'{selector[0]:.1f} us ({selector[1][5:]})' if selector else '–'} "
                  f"| {at(8)} | {grid} | {at(1024)} | {at(65536)} "
                  f"| {size_text(min(grid_wins)) + '–' + size_text(max(grid_wins)) if grid_wins else 'never'} "
                  f"| {size_text(max(wins)) if wins else 'never'} (of {size_text(keys[-1][2])}) |")


def per_pattern(times):
    for p in sorted({key[0] for key in times}):
        for pattern in PATTERNS:
            keys = sorted(key for key in times if key[:2] == (p, pattern))
            if not keys:
                continue
            print(f"\n#### p = {p}, `{pattern}`\n")
            print("| bytes per pair | best selector | " + " | ".join(f"`{a}`" for a in ALGORITHMS) + " |")
            print("|---|---|" + "---|" * len(ALGORITHMS))
            for key in keys:
                cell = times[key]
                selector = best(cell, SELECTORS)
                if not selector:
                    continue
                ratios = [f"{selector[0] / cell[a]:.2f}" if a in cell else "–" for a in ALGORITHMS]
                print(f"| {size_text(key[2])} | {selector[0]:.1f} us ({selector[1][5:]}) | " + " | ".join(ratios) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="several CSVs of one platform are merged (e.g. a later run of more algorithms)")
    parser.add_argument("--per-pattern", action="store_true")
    args = parser.parse_args()
    times = load(args.csv)
    (per_pattern if args.per_pattern else summary)(times)


if __name__ == "__main__":
    main()
