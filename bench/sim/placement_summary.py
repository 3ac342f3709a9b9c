#!/usr/bin/env python3
"""Per placement of a collshim-tune measure CSV (Allgather, blocks up to 64 KiB): how the best
hierarchical variant compares with the best flat algorithm, which flat algorithm wins, and how the
mapping changes the flat algorithms and Sparbit. It restates the fat-pipe sections' comparisons of
docs/results.md on any sweep, so they can be checked on the contending platforms.

    bench/sim/placement_summary.py OUT/yahoo-contending.csv [--flat-set thesis]

`--flat-set thesis` keeps the flat set of the earlier sections (ring, neighbour exchange, recursive
doubling, Bruck, Sparbit, recursive multiplying with default parameters, and SMPI's selectors);
by default every flat candidate in the CSV competes. Times are max over ranks (max_us).
"""
import argparse
import collections
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (CSV files)

THESIS_FLAT = {"ring", "neighbor_exchange", "recursive_doubling", "bruck", "sparbit", "recursive_multiplying"}


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def is_hierarchical(algorithm):
    return algorithm.startswith("hierarchical")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--flat-set", choices=["all", "thesis"], default="all")
    parser.add_argument("--max-block", type=int, default=65536)
    args = parser.parse_args()
    for path in args.csv:
        # (ranks, placement) -> block -> algorithm -> max time
        cells = collections.defaultdict(lambda: collections.defaultdict(dict))
        for row in sim.read_csv(path):
            algorithm = row.get("algorithm")
            if not algorithm or row.get("collective") != "allgather" or not row.get("max_us"):
                continue
            if int(row["block_bytes"]) > args.max_block:
                continue
            flat_kept = algorithm in THESIS_FLAT or algorithm.startswith("smpi_")
            if args.flat_set == "thesis" and not is_hierarchical(algorithm) and not flat_kept:
                continue
            placement = f"{row['mapping']} {row['nodes']}x{row['ppn']}"
            cells[(int(row["ranks"]), placement)][int(row["block_bytes"])][algorithm] = float(row["max_us"])
        print(f"## {path} (flat set: {args.flat_set})")
        for (ranks, placement), by_block in sorted(cells.items()):
            speedups, flat_winners = [], collections.Counter()
            for times in by_block.values():
                flat = {a: t for a, t in times.items() if not is_hierarchical(a)}
                hierarchical = [t for a, t in times.items() if is_hierarchical(a)]
                flat_winners[min(flat, key=flat.get)] += 1
                if hierarchical:
                    speedups.append(min(flat.values()) / min(hierarchical))
            line = f"p={ranks} {placement}: {len(by_block)} blocks"
            if speedups:
                wins = sum(1 for s in speedups if s > 1)
                line += (f"; hierarchical wins {100 * wins / len(speedups):.0f}%, median {statistics.median(speedups):.2f}x"
                         f" [{min(speedups):.2f}x, {max(speedups):.2f}x]")
            print(line + "; best flat: " + ", ".join(f"{a} {n}" for a, n in flat_winners.most_common(3)))
        # Mapping: sequential against cyclic at the same p (placements as the sweep made them).
        for ranks in sorted({r for r, _ in cells}):
            sequential = [p for r, p in cells if r == ranks and p.startswith("sequential") and not p.endswith("x1")]
            cyclic = [p for r, p in cells if r == ranks and p.startswith("cyclic")]
            if not sequential or not cyclic:
                continue
            seq, cyc = cells[(ranks, sequential[0])], cells[(ranks, cyclic[0])]
            blocks = sorted(set(seq) & set(cyc))
            best_flat = lambda times: min(t for a, t in times.items() if not is_hierarchical(a))
            small = [best_flat(seq[b]) / best_flat(cyc[b]) for b in blocks if b <= 1024]
            sparbit = [cyc[b]["sparbit"] / seq[b]["sparbit"] for b in blocks if "sparbit" in seq[b] and "sparbit" in cyc[b]]
            print(f"p={ranks} {sequential[0]} vs {cyclic[0]}: best flat sequential/cyclic up to 1 KiB "
                  f"{geometric_mean(small):.2f} [{min(small):.2f}, {max(small):.2f}]; Sparbit cyclic/sequential "
                  f"{geometric_mean(sparbit):.2f} [{min(sparbit):.2f}, {max(sparbit):.2f}]")


if __name__ == "__main__":
    main()
