#!/usr/bin/env python3
"""Compares the cost model's predictions costed by a sample of ranks with the exact ones, where both
run (docs/cost-model.md, "The cost of deciding"): `collshim-model predict --exact-up-to 1` samples
wherever the exact orbits leave more than 256 ranks to cost, `--exact-up-to 1048576` costs exactly.

    bench/model/sampled_vs_exact.py build/collshim-model [--procs 1536 2048 ...] [--out FILE.csv]

Writes one CSV row per prediction that was sampled (approximated in the sampled run, exact in the
other), with both times and their relative difference, and prints the error per collective.
"""
import argparse
import csv
import io
import itertools
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLACEMENTS = [("16", "sequential"), ("16", "cyclic"), ("1", "sequential")]
COLLECTIVES = ["allgather", "allgatherv", "alltoall", "alltoallv", "allreduce"]
KEY = ["platform", "collective", "procs", "ppn", "mapping", "bytes", "algorithm"]


def rows(binary, args):
    out = subprocess.run([binary] + args, capture_output=True, text=True, check=True).stdout
    return {tuple(r[k] for k in KEY): r for r in csv.DictReader(io.StringIO(out))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--platform", default="fattree-contending")
    parser.add_argument("--procs", nargs="+", default=["1536", "2048", "3072", "4000", "4096"])
    parser.add_argument("--bytes", nargs="+", default=["8", "1KiB", "64KiB"])
    parser.add_argument("--collectives", nargs="+", default=COLLECTIVES)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/model/results/sampled_vs_exact.csv"))
    options = parser.parse_args()

    def compare(cell):
        (ppn, mapping), collective, procs = cell
        base = ["predict", "--csv", "--platform", os.path.join(ROOT, "config/platforms", options.platform + ".yaml"),
                "--ppn", ppn, "--mapping", mapping, "--collective", collective, "--native", "ompi",
                "--procs", procs, "--bytes"] + options.bytes
        sampled = rows(options.binary, base + ["--exact-up-to", "1"])
        exact = rows(options.binary, base + ["--exact-up-to", "1048576"])
        found = []
        for key, row in sampled.items():
            if row["approximated"] == "1" and exact[key]["approximated"] == "0":
                s, e = float(row["predicted_us"]), float(exact[key]["predicted_us"])
                found.append(dict(zip(KEY, key)) | {"exact_us": e, "sampled_us": s,
                                                    "relative": (s - e) / e if e else 0.0})
        print(f"{collective} p={procs} {ppn} {mapping}: {len(found)} sampled", file=sys.stderr, flush=True)
        return found

    cells = list(itertools.product(PLACEMENTS, options.collectives, options.procs))
    with ThreadPoolExecutor(options.jobs) as pool:
        results = [r for found in pool.map(compare, cells) for r in found]
    with open(options.out, "w", newline="") as f:
        writer = csv.DictWriter(f, KEY + ["exact_us", "sampled_us", "relative"])
        writer.writeheader()
        for r in results:
            writer.writerow(r | {"relative": f"{r['relative']:.6f}"})
    print("| collective | sampled predictions | max abs error | median abs error | within 1% | within 5% |")
    print("|---|---|---|---|---|---|")
    for collective in options.collectives + ["all"]:
        errors = [abs(r["relative"]) for r in results if collective in ("all", r["collective"])]
        if not errors:
            print(f"| {collective} | 0 | | | | |")
            continue
        print(f"| {collective} | {len(errors)} | {100 * max(errors):.2f}% | {100 * statistics.median(errors):.2f}% | "
              f"{sum(e <= 0.01 for e in errors)} | {sum(e <= 0.05 for e in errors)} |")


if __name__ == "__main__":
    main()
