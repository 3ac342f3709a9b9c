#!/usr/bin/env python3
"""bench/sim/evidence_status.py on a made-up evidence folder: two measured cells, three replayed (two
of them the measured ones, one only replayed). Checks that the replayed-only table holds the one cell
the decision runs did not make, that every cell counts each once, and the replay check's ratios
(measured / replayed collshim time: 1.000 and 1.100).

  evidence_status_test.py SOURCE_DIR
"""
import csv
import os
import subprocess
import sys
import tempfile

CELLS = ["platform", "mapping", "procs", "collective", "pattern", "bytes", "selector", "collshim_us", "decision",
         "source", "model_pick", "model_alone_us", "native_us", "best_of_four_us", "oracle_us", "trial_calls",
         "trial_us", "online_calls", "online_us"]
REPLAY = ["platform", "mapping", "procs", "collective", "pattern", "bytes", "selector", "native_us", "best_of_four_us",
          "oracle_us", "off_us", "off_trial", "confirm_us", "confirm_trial", "online_us", "online_trial", "measured_us"]


def cell(size, collshim):
    return {"platform": "p1", "mapping": "sequential 4x16", "procs": 64, "collective": "allgather", "pattern": "",
            "bytes": size, "selector": "ompi", "collshim_us": collshim, "decision": "ring", "source": "model",
            "model_pick": "ring", "model_alone_us": collshim, "native_us": 20.0, "best_of_four_us": 20.0,
            "oracle_us": 10.0, "trial_calls": 12, "trial_us": 100.0, "online_calls": 40, "online_us": 1000.0}


def replayed(size, confirm):
    return {"platform": "p1", "mapping": "sequential 4x16", "procs": 64, "collective": "allgather", "pattern": "",
            "bytes": size, "selector": "ompi", "native_us": 20.0, "best_of_four_us": 20.0, "oracle_us": 10.0,
            "off_us": 40.0, "off_trial": "ring", "confirm_us": confirm, "confirm_trial": "native ring",
            "online_us": confirm, "online_trial": "native ring", "measured_us": ""}


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def main():
    script = os.path.join(sys.argv[1], "bench", "sim", "evidence_status.py")
    with tempfile.TemporaryDirectory() as evidence:
        write(os.path.join(evidence, "cells.csv"), CELLS, [cell(1, 10.0), cell(2, 11.0)])
        # 1 B and 2 B measured (10 and 11 us) and replayed (10 and 10 us); 4 B replayed only (25 us:
        # below the own library's 20 us, a miss of the worst-cell target).
        write(os.path.join(evidence, "replay.csv"), REPLAY, [replayed(1, 10.0), replayed(2, 10.0), replayed(4, 25.0)])
        out = subprocess.run([sys.executable, script, "--evidence", evidence], capture_output=True, text=True,
                             check=True).stdout
    print(out)
    sections = out.split("\n\n")
    tables = {sections[i].strip(): sections[i + 1] for i in range(0, len(sections) - 1, 2)}
    measured = next(t for h, t in tables.items() if h.startswith("Measured"))
    only = next(t for h, t in tables.items() if h.startswith("Replayed only"))
    every = next(t for h, t in tables.items() if h.startswith("Every cell"))
    check = next(t for h, t in tables.items() if h.startswith("The replay against"))
    expect = [
        ("measured: two cells, the 2 B one 0.909 of the oracle",
         "| 64 | p1 | 2 | allgather | 0.953 | 50% | 1.818 |" in measured),
        ("replayed only: the 4 B cell, worst 0.800 of the own library",
         "| 64 | p1 | 1 | allgather | 0.400 | 0% | 0.800 |" in only),
        ("every cell: three", "| 64 | p1 | 3 | allgather |" in every),
        ("replay check: two cells, geomean 1.049, half within 5%, range 1.000-1.100",
         "| 64 | 2 | 1.049 | 50.0% | 1.000–1.100 |" in check),
    ]
    failed = [what for what, ok in expect if not ok]
    for what in failed:
        print("FAIL:", what, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
