#!/usr/bin/env python3
"""Runs two collshim-model binaries over one grid of predictions and says whether every prediction is
equal: the check that a speed-up of the cost model changed no prediction (docs/cost-model.md).

    bench/model/compare_predictions.py OLD/collshim-model build/collshim-model [--quick] [--jobs 2]

Every row of `collshim-model predict --csv` is compared field by field except model_seconds (the time
it took); rows are matched by platform, collective, pattern, procs, placement, bytes and algorithm, and
the CSV is read with the csv module (labels such as "hierarchical:inter=ring,intra=shm" hold commas).
Exit status 0 when every row is equal and both sides have the same rows, 1 otherwise.
"""
import argparse
import csv
import io
import itertools
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PLATFORMS = ["fattree-contending", "fattree", "yahoo-contending"]
PLACEMENTS = [("16", "sequential"), ("16", "cyclic"), ("4", "sequential"), ("4", "cyclic"), ("1", "sequential")]
COLLECTIVES = ["allgather", "allgatherv", "alltoall", "allreduce", "alltoallv"]
PATTERNS = ["uniform", "sparse_1", "sparse_8", "sparse_sqrt", "power_law", "hot_spot", "shift"]
NATIVES = ["ompi", "mpich", "mvapich2", "impi"]
SIZES = ["1", "8", "24", "1KiB", "3000", "64KiB", "1MiB"]
PROCS = ["2", "3", "5", "8", "16", "17", "31", "32", "48", "64", "100", "128", "256"]
LARGE_PROCS = ["512", "1024"]  # fewer sizes: the old model takes seconds per cell there
KEY = ["platform", "collective", "pattern", "procs", "ppn", "mapping", "bytes", "algorithm"]


def commands(quick):
    procs = PROCS[:6] if quick else PROCS
    for platform, (ppn, mapping), collective in itertools.product(PLATFORMS, PLACEMENTS, COLLECTIVES):
        patterns = PATTERNS if collective == "alltoallv" else ["uniform"]
        for pattern in patterns:
            base = ["predict", "--csv", "--platform", os.path.join(ROOT, "config/platforms", platform + ".yaml"),
                    "--ppn", ppn, "--mapping", mapping, "--collective", collective, "--pattern", pattern,
                    "--native"] + NATIVES
            yield base + ["--procs"] + procs + ["--bytes"] + SIZES
            if not quick and ppn != "4" and pattern in ("uniform", "sparse_8", "power_law"):
                yield base + ["--procs"] + LARGE_PROCS + ["--bytes", "8", "1KiB", "64KiB"]


def rows(binary, args):
    result = subprocess.run([binary] + args, capture_output=True, text=True, check=True)
    table = {}
    for row in csv.DictReader(io.StringIO(result.stdout)):
        row.pop("model_seconds")
        key = tuple(row[k] for k in KEY)
        if key in table:
            raise SystemExit(f"duplicate row {key} from {' '.join(args)}")
        table[key] = row
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--quick", action="store_true", help="a small grid")
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args()

    def compare(args):
        return rows(options.old, args), rows(options.new, args), args

    compared, differences = 0, []
    with ThreadPoolExecutor(options.jobs) as pool:
        for old, new, args in pool.map(compare, list(commands(options.quick))):
            if old.keys() != new.keys():
                differences.append(f"rows differ for {' '.join(args)}: "
                                   f"{sorted(old.keys() ^ new.keys())[:3]}")
            for key in old.keys() & new.keys():
                compared += 1
                if old[key] != new[key]:
                    fields = [f"{k}: {old[key][k]} -> {new[key][k]}" for k in old[key] if old[key][k] != new[key][k]]
                    differences.append(f"{key}: {'; '.join(fields)}")
    for line in differences[:50]:
        print(line)
    print(f"{compared} rows compared, {len(differences)} differences")
    return 0 if not differences else 1


if __name__ == "__main__":
    sys.exit(main())
