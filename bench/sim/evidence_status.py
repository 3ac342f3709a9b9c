#!/usr/bin/env python3
"""Where the cost model's targets stand, per process count and platform, from the committed cells.

The model evidence (bench/sim/model_evidence.py) was measured in parts, at several dates, into the
folders of bench/sim/model/. This reads the current cells of each part (CURRENT below: where a part
was measured again, the newer cells replace the older ones) and prints, per p and platform over every
collective measured there, the three targets of the shim's decision (the model confirmed by trial
calls, COLLSHIM_TUNE=confirm):

  - of the oracle (geometric mean) >= 0.95, the oracle being the fastest of every candidate and the
    run's own library;
  - within 5% of the oracle in >= 80% of cells;
  - no cell below 0.97 of the run's own library;

with the speed-ups against the run's own library and the best of SMPI's four selectors, and the
model alone (its pick without trial calls).

Then the cells replayed but not measured through the shim (model_evidence.py --stages replay: the
shim's plan for the key, from collshim-config explain, applied to every candidate's measured time),
where the decision runs were not made, every cell together (measured where it was, replayed
elsewhere), and how the replay compares with the decision runs on the cells where both were made.

  bench/sim/evidence_status.py [--evidence bench/sim/model]
"""
import argparse
import collections
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_evidence as evidence  # noqa: E402  (the figures of a set of cells)

# (folder under --evidence, collectives taken from its cells.csv; None: all of them). The p = 64
# Alltoallv decisions were measured again once every selector's Alltoallv was costed: the confirmed
# rows did not change, the model alone's did.
CURRENT = [
    (".", ["allgather", "allreduce", "alltoall"]),
    ("alltoall-cervino", None),
    ("alltoall-yahoo", None),
    ("alltoallv-every-library-costed", None),
    ("allgather-p128", None),
    ("allreduce-p128", None),
    ("alltoallv-p128", None),
    ("allreduce-p256", None),
    ("allgather-p256", None),
    ("alltoall-p128", None),
]

# Folders with a replay.csv (every one that has one), read in this order: a later one's cell replaces an
# earlier one's.
REPLAYED = [".", "allgather-p128", "allreduce-p128", "alltoallv-p128", "allgather-p256", "allreduce-p256", "alltoall-p128"]

OF_ORACLE, WITHIN, WORST_OWN = 0.95, 0.80, 0.97
# cells.csv's numeric columns, as evidence.figures reads them.
NUMBERS = ["collshim_us", "model_alone_us", "native_us", "best_of_four_us", "oracle_us", "trial_calls", "trial_us",
           "online_us"]


def read_cells(folder_root):
    rows = []
    for folder, collectives in CURRENT:
        path = os.path.join(folder_root, folder, "cells.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if collectives is None or row["collective"] in collectives:
                    rows.append(dict(row, **{k: float(row[k]) for k in NUMBERS}))
    return rows


def read_replayed(folder_root):
    """Every replayed cell (the later folder's where two have one), as the cells' columns: the
    replayed confirmation as collshim_us, the pick alone as model_alone_us; no trial figures."""
    replayed = {}
    for folder in REPLAYED:
        path = os.path.join(folder_root, folder, "replay.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                replayed[evidence.decided_key(row)] = dict(
                    row, pattern=row.get("pattern", ""), collshim_us=float(row["confirm_us"]), model_alone_us=float(row["off_us"]),
                    **{k: float(row[k]) for k in ["native_us", "best_of_four_us", "oracle_us"]},
                    trial_calls=math.nan, trial_us=math.nan, online_us=math.nan)
    return replayed


def status(rows):
    """Per (p, platform) and per p over all platforms: the targets' figures."""
    groups = collections.defaultdict(list)
    for row in rows:
        groups[(int(row["procs"]), row["platform"])].append(row)
        groups[(int(row["procs"]), "all")].append(row)
    lines = []
    for (p, platform), subset in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] == "all", kv[0][1])):
        f = evidence.figures(subset)
        missed = [name for name, ok in (("oracle", f["of_oracle"] >= OF_ORACLE), ("within 5%", f["within"] >= WITHIN),
                                        ("worst", f["worst_own"] >= WORST_OWN)) if not ok]
        lines.append(dict(f, p=p, platform=platform, cells=len(subset),
                          collectives=", ".join(sorted({r["collective"] for r in subset})),
                          missed=", ".join(missed) or "none"))
    return lines


def print_status(rows):
    print("| p | platform | cells | collectives | of oracle | within 5% | worst vs own | vs own | vs best of four "
          "| model alone: of oracle | targets missed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in status(rows):
        print(f"| {s['p']} | {s['platform']} | {s['cells']} | {s['collectives']} | {s['of_oracle']:.3f} | "
              f"{s['within']:.0%} | {s['worst_own']:.3f} | {s['vs_own']:.2f}× | {s['vs_best']:.2f}× | "
              f"{s['alone']:.3f} | {s['missed']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evidence", default=os.path.join(HERE, "model"))
    args = ap.parse_args()
    measured = read_cells(args.evidence)
    print("Measured through the shim's decision path (collshim-bench --rules none, COLLSHIM_PLATFORM):\n")
    print_status(measured)

    replayed = read_replayed(args.evidence)
    by_key = {evidence.decided_key(row): row for row in measured}
    only_replayed = [row for key, row in replayed.items() if key not in by_key]
    if only_replayed:
        print("\nReplayed only (no decision runs there; the replayed confirmation and the pick alone):\n")
        print_status(only_replayed)
        print("\nEvery cell: measured where the decision runs were made, replayed elsewhere:\n")
        print_status(measured + only_replayed)
    both = [(by_key[key], row) for key, row in replayed.items() if key in by_key]
    if both:
        print("\nThe replay against the decision runs, where both were made (measured / replayed collshim time):\n")
        print("| p | cells | measured / replayed (geomean) | within 5% of each other | range | of oracle: measured / "
              "replayed |")
        print("|---|---|---|---|---|---|")
        for p in sorted({int(m["procs"]) for m, _ in both}):
            a = evidence.agreement([(m["collshim_us"], r["collshim_us"], m["oracle_us"], r["oracle_us"])
                                    for m, r in both if int(m["procs"]) == p])
            print(f"| {p} | {a['cells']} | {a['ratio']:.3f} | {a['close']:.1%} | {a['low']:.3f}–{a['high']:.3f} | "
                  f"{a['oracle_measured']:.3f} / {a['oracle_replayed']:.3f} |")


if __name__ == "__main__":
    main()
