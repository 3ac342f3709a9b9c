#!/usr/bin/python3
"""Side by side of compare_builds.sh's jobs: per part and build (a, b), the `collshim` row against
native (the library's own choice) and the oracle (the fastest row of the job), over every size of
every job: geometric means, the worst cell, cells within 5% of the oracle and cells below 0.97 of
native.

usage: compare_summary.py --cells CELLS.csv JOB_DIR...   (JOB_DIR: real-node-a1, ...; writes CELLS.csv)
       compare_summary.py CELLS.csv                      (from the compact file alone)
"""
import argparse
import csv
import glob
import math
import os
import re
import sys

import summary  # beside this script

PARTS = ["alltoall", "sparse_8", "power_law", "allgather", "allreduce"]
FIELDS = ["job", "build", "part", "bytes", "native_us", "collshim_us", "oracle_us", "fastest", "collshim_ran",
          "source", "trial_calls", "trial_us", "trials"]


def job_cells(job_dir):
    """One job's cells: per part CSV and size, the collshim and native rows and the fastest row."""
    job = os.path.basename(os.path.normpath(job_dir)).removeprefix("real-node-")
    for part in PARTS:
        path = os.path.join(job_dir, f"{part}.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            lines = f.readlines()
        # "# N bytes: collshim runs X (..., after K trial calls: what each candidate measured)"
        trials = {}
        for line in lines:
            m = re.match(r"# (\d+) bytes: collshim runs .*? trial calls: (.*)\)$", line.strip())
            if m:
                trials[int(m.group(1))] = m.group(2)
        for size, cells, times, fastest in summary.sizes(lines):
            shim = cells["collshim"]
            yield {"job": job, "build": job[0], "part": part, "bytes": size, "native_us": times["native"],
                   "collshim_us": times["collshim"], "oracle_us": times[fastest], "fastest": fastest,
                   "collshim_ran": shim["decision"], "source": shim["source"], "trial_calls": shim["trial_calls"],
                   "trial_us": shim["trial_us"], "trials": trials.get(size, "")}


def summarize(cells):
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    jobs = sorted({c["job"] for c in cells})
    print(f"jobs: {', '.join(jobs)}\n")
    print("| part | build | cells | vs native (geomean) | worst cell | of the oracle | within 5% of the oracle "
          "| below 0.97 of native |")
    print("|---|---|---|---|---|---|---|---|")
    for part in PARTS:
        for build in "ab":
            mine = [c for c in cells if c["part"] == part and c["build"] == build]
            if not mine:
                continue
            vs_native = [float(c["native_us"]) / float(c["collshim_us"]) for c in mine]
            of_oracle = [float(c["oracle_us"]) / float(c["collshim_us"]) for c in mine]
            worst = min(range(len(mine)), key=lambda i: vs_native[i])
            w = mine[worst]
            print(f"| {part} | {build} | {len(mine)} | {geo(vs_native):.3f}x | {vs_native[worst]:.2f}x ({w['bytes']} B, "
                  f"{w['collshim_ran']}, {w['job']}) | {geo(of_oracle):.3f} | "
                  f"{sum(o >= 1 / 1.05 for o in of_oracle)} | {sum(v < 0.97 for v in vs_native)} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="job directories, or one compact cells CSV")
    parser.add_argument("--cells", help="write the compact cells CSV here (with job directories)")
    args = parser.parse_args()
    if len(args.inputs) == 1 and args.inputs[0].endswith(".csv"):
        with open(args.inputs[0], newline="") as f:
            cells = list(csv.DictReader(f))
    else:
        dirs = [d for pattern in args.inputs for d in sorted(glob.glob(pattern))]
        cells = [c for d in dirs for c in job_cells(d)]
        if args.cells:
            with open(args.cells, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
                writer.writeheader()
                for c in cells:
                    writer.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in c.items()})
    if not cells:
        sys.exit("compare_summary: no cells")
    summarize(cells)


if __name__ == "__main__":
    main()
