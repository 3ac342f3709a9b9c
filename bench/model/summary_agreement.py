#!/usr/bin/env python3
"""How often the Alltoallv decision from the ranks' summaries matches the exact pattern's.

Reads `decision_cost --compare-summary` CSVs and prints a Markdown table: per process count and
pattern, the keys, those with the same pick, and those whose summary pick is within 5% of the exact
pick as the exact pattern costs it (same pick counts as within), with the worst ratio; and how far
the summary's prediction of its pick is from the exact pattern's prediction of it (median, largest).

  bench/model/summary_agreement.py bench/model/results/alltoallv_summary_vs_exact.csv
"""
import argparse
import csv
from collections import defaultdict


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+")
    args = parser.parse_args()
    rows = [row for path in args.csv for row in csv.DictReader(open(path, newline=""))]
    cells = defaultdict(list)
    for row in rows:
        cells[(int(row["procs"]), row["pattern"])].append(row)
        cells[(int(row["procs"]), "all")].append(row)
    print("| p | pattern | keys | same pick | within 5% | worst ratio | prediction off by: median, largest |")
    print("|---|---|---|---|---|---|---|")
    for (p, pattern), keyed in sorted(cells.items(), key=lambda c: (c[0][0], c[0][1] == "all", c[0][1])):
        same = sum(int(r["same_pick"]) for r in keyed)
        within = sum(int(r["within_5pct"]) for r in keyed)
        worst = max(float(r["ratio"]) for r in keyed)
        off = sorted(abs(float(r["summary_pick_us"]) / float(r["summary_pick_exact_us"]) - 1) for r in keyed
                     if float(r["summary_pick_exact_us"]) > 0)
        name = "**all**" if pattern == "all" else f"`{pattern}`"
        print(f"| {p} | {name} | {len(keyed)} | {same} ({100 * same / len(keyed):.0f}%) "
              f"| {within} ({100 * within / len(keyed):.1f}%) | {worst:.3f} "
              f"| {100 * off[len(off) // 2]:.1f}%, {100 * off[-1]:.1f}% |")
    same = sum(int(r["same_pick"]) for r in rows)
    within = sum(int(r["within_5pct"]) for r in rows)
    print(f"\nAll {len(rows)} keys: same pick {same} ({100 * same / len(rows):.1f}%), within 5% {within} "
          f"({100 * within / len(rows):.1f}%)")


if __name__ == "__main__":
    main()
