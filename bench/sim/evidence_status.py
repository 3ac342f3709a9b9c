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

  bench/sim/evidence_status.py [--evidence bench/sim/model]
"""
import argparse
import collections
import csv
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
]

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evidence", default=os.path.join(HERE, "model"))
    args = ap.parse_args()
    print("| p | platform | cells | collectives | of oracle | within 5% | worst vs own | vs own | vs best of four "
          "| model alone: of oracle | targets missed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in status(read_cells(args.evidence)):
        print(f"| {s['p']} | {s['platform']} | {s['cells']} | {s['collectives']} | {s['of_oracle']:.3f} | "
              f"{s['within']:.0%} | {s['worst_own']:.3f} | {s['vs_own']:.2f}× | {s['vs_best']:.2f}× | "
              f"{s['alone']:.3f} | {s['missed']} |")


if __name__ == "__main__":
    main()
