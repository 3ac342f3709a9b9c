#!/usr/bin/python3
"""Per size of collshim-bench --csv files with a `collshim` row: the row's time against native (the
library's own choice) and against the oracle (the fastest row of the run), and what it ran.

usage: summary.py RESULTS.csv...
"""
import csv
import math
import sys


def sizes(lines):
    """Per size that has a `collshim` and a `native` row, in increasing order: (size, rows by
    algorithm, median time by algorithm, the fastest algorithm). `lines`: a collshim-bench CSV, its
    comment lines included."""
    by_size = {}
    for row in csv.DictReader(line for line in lines if not line.startswith("#")):
        by_size.setdefault(int(row["bytes"]), {})[row["algorithm"]] = row
    for size in sorted(by_size):
        cells = by_size[size]
        if "collshim" not in cells or "native" not in cells:
            continue
        times = {name: float(r["median_us"]) for name, r in cells.items()}
        yield size, cells, times, min(times, key=times.get)


def main():
    for path in sys.argv[1:]:
        with open(path, newline="") as f:
            lines = f.readlines()
        first = next(csv.DictReader(line for line in lines if not line.startswith("#")))
        pattern = f" {first['distribution']}" if first["distribution"] else ""
        print(f"\n{path}: {first['collective']}{pattern} on {first['ranks']} ranks, {first['mpi_library']}\n")
        print("| bytes | native us | collshim us | vs native | of oracle | collshim ran | fastest |")
        print("|---|---|---|---|---|---|---|")
        vs_native, of_oracle = [], []
        for size, cells, times, fastest in sizes(lines):
            shim, native = times["collshim"], times["native"]
            vs_native.append(native / shim)
            of_oracle.append(times[fastest] / shim)
            print(f"| {size} | {native:.1f} | {shim:.1f} | {native / shim:.2f}x | {times[fastest] / shim:.2f} | "
                  f"{cells['collshim']['decision']} ({cells['collshim']['source']}) | {fastest} |")
        if vs_native:
            geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
            print(f"\ngeometric mean: {geo(vs_native):.2f}x native, {geo(of_oracle):.3f} of the oracle; "
                  f"worst cell {min(vs_native):.2f}x native; within 5% of the oracle in "
                  f"{sum(o >= 1 / 1.05 for o in of_oracle)}/{len(of_oracle)} sizes")


if __name__ == "__main__":
    main()
