#!/usr/bin/python3
"""config/default.yaml from the committed simulated evidence: one rule set per MPI library.

The evidence is bench/sim/model/**/candidates.csv: model_evidence.py's candidates stage, every tuning
candidate beside SimGrid SMPI's `ompi` selector, then native alone under `mpich`, `mvapich2` and
`impi`, on the four contending platforms (one skew-free barrier before every timed call, 1 us per
message). Stages:

  measurements  the compact rows back in collshim-bench --csv's columns, one file per platform
                -> OUT/measured-PLATFORM.csv. The placement the shim saw (nodes, most ranks on a node)
                is smpi_common.topology()'s; an Alltoallv size's average block (what rules key
                Alltoallv on) is collshim-model predict's for the same pattern and seed
  rules         collshim-tune rules --robust over every platform -> OUT/tuned.yaml: per SMPI selector,
                rules only where an algorithm beats that selector's own choice by 5% in every
                measured cell of the rule's range (`library: smpi-ompi 3.32`, ...)
  verify        collshim-tune verify --measured on every platform, and leave one platform out (rules
                from the others, verified on it) -> OUT/verify.md
  table         config/default.yaml: the header below, then OUT/tuned.yaml's rules (with --write)

  bench/sim/shipped_table.py --out OUT [--write]

Needs build/ (collshim-tune, collshim-model). No simulation runs: the evidence is committed.
"""
import argparse
import collections
import csv
import glob
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_evidence as evidence  # noqa: E402  (its cells' placement key)
import smpi_common as sim  # noqa: E402  (the platforms, their placements, CSV files, rules and verify)

EVIDENCE = os.path.join(sim.HERE, "model")
DEFAULT_TABLE = os.path.join(sim.ROOT, "config", "default.yaml")
# SMPI's MPI_Get_library_version: the rules' `library` versions come from it.
SMPI_LIBRARY = "SMPI Version 3.32. Copyright The SimGrid Team 2007-2022"
COLUMNS = ["platform", "mpi_library", "date", "collective", "distribution", "ranks", "nodes", "ppn", "mapping",
           "bytes", "block_bytes", "algorithm", "median_us", "spread_us", "verified"]


def commit_date(path):
    """The day the evidence file was committed (the measurement's own date column is not kept)."""
    out = subprocess.run(["git", "-C", os.path.dirname(path), "log", "-1", "--format=%cs", "--", path],
                         capture_output=True, text=True).stdout.strip()
    return out or "uncommitted"


def average_blocks(model, platform, p, ppn, mapping, pattern, sizes):
    """An Alltoallv size's average block (total / p^2), as collshim-bench computes it for the pattern."""
    out = subprocess.run([model, "predict", "--platform", os.path.join(sim.ROOT, "config", "platforms",
                                                                       platform + ".yaml"),
                          "--procs", str(p), "--ppn", str(ppn), "--mapping", mapping, "--collective", "alltoallv",
                          "--pattern", pattern, "--bytes", *map(str, sorted(sizes)), "--algorithms", "linear",
                          "--csv"], capture_output=True, text=True, check=True).stdout
    return {int(r["bytes"]): int(r["block_bytes"]) for r in sim.csv_rows(out.splitlines(keepends=True))}


def check_natives(args, by_platform):
    """The placements given by run order must be the ones the analysis saw: every selector's native time
    equals the one cells.csv (the analyze stage, keyed by the placement the shim reported) has."""
    expected = {}
    for path in glob.glob(os.path.join(args.evidence, "**", "cells.csv"), recursive=True):
        for r in sim.read_csv(path):
            if r["native_us"]:
                # cells.csv's mapping column is already model_evidence.cell_key's placement text.
                expected[(r["platform"], r["mapping"], int(r["procs"]), r["collective"], r["pattern"],
                          int(r["bytes"]), r["selector"])] = float(r["native_us"])
    checked = 0
    for platform, rows in by_platform.items():
        for r in rows:
            if not r["algorithm"].startswith("smpi_"):
                continue
            key = (platform, *evidence.cell_key(r), r["algorithm"][5:])
            if key in expected:
                if abs(expected[key] - float(r["median_us"])) > 1e-3:
                    sys.exit(f"shipped_table: {key}: native {r['median_us']} us, cells.csv has {expected[key]}")
                checked += 1
    print(f"shipped_table: {checked} native times agree with the analyses' cells.csv", flush=True)


def stage_measurements(args):
    """The compact candidates rows as collshim-tune reads measurements, per platform."""
    by_platform = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(args.evidence, "**", "candidates.csv"), recursive=True)):
        date = commit_date(path)
        try:
            rows = sim.restore_placements(sim.read_csv(path), path)
        except ValueError as e:
            sys.exit(f"shipped_table: {e}")
        for r in rows:
            p, mapping, nodes, ppn = int(r["ranks"]), r["mapping"], int(r["nodes"]), int(r["ppn"])
            by_platform[r["platform"]].append({
                "platform": r["platform"], "mpi_library": SMPI_LIBRARY, "date": date, "collective": r["collective"],
                "distribution": r["distribution"], "ranks": p, "nodes": nodes, "ppn": ppn, "mapping": mapping,
                "bytes": int(r["bytes"]), "block_bytes": int(r["bytes"]), "algorithm": r["algorithm"],
                # Simulated time is deterministic: one timed call, no spread.
                "median_us": r["median_us"], "spread_us": "0", "verified": "ok"})
    check_natives(args, by_platform)
    # Alltoallv's rules test the average block, which the compact rows do not keep.
    alltoallv = collections.defaultdict(set)
    for platform, rows in by_platform.items():
        for r in rows:
            if r["collective"] == "alltoallv":
                alltoallv[(platform, r["ranks"], r["ppn"], r["mapping"], r["distribution"])].add(r["bytes"])
    blocks = {key: average_blocks(args.model, *key, sizes) for key, sizes in alltoallv.items()}
    os.makedirs(args.out, exist_ok=True)
    paths = []
    for platform, rows in sorted(by_platform.items()):
        for r in rows:
            if r["collective"] == "alltoallv":
                r["block_bytes"] = blocks[(platform, r["ranks"], r["ppn"], r["mapping"], r["distribution"])][r["bytes"]]
        path = os.path.join(args.out, f"measured-{platform}.csv")
        with open(path, "w", newline="") as f:
            out = csv.DictWriter(f, COLUMNS)
            out.writeheader()
            out.writerows(rows)
        print(f"shipped_table: {path}: {len(rows)} rows", flush=True)
        paths.append(path)
    return paths


def per_library(result):
    """Per library: geometric mean and worst speedup over its own choice, and over the best of the four
    selectors in the same cell (a pass-through under a slow selector is below 1 there), from
    collshim-tune verify --json's cells."""
    cells = collections.defaultdict(dict)
    for c in result["cells"]:
        key = (c["platform"], c["collective"], c["variant"], c["procs"], c["nodes"], c["ppn"], c["mapping"],
               c["block_bytes"])
        cells[key][c["library"]] = (c["native_us"], c["table_us"])
    own, best = collections.defaultdict(list), collections.defaultdict(list)
    for libraries in cells.values():
        fastest = min(native for native, _ in libraries.values())
        for library, (native, table) in libraries.items():
            own[library].append(native / table)
            best[library].append(fastest / table)

    def geomean(values):
        return math.exp(sum(map(math.log, values)) / len(values))
    return [f"{library}: {len(own[library])} cells, {geomean(own[library]):.2f}x its own choice (worst "
            f"{min(own[library]):.2f}x), {geomean(best[library]):.2f}x the best of four (worst {min(best[library]):.2f}x)"
            for library in sorted(own)]


HEADER = """\
# collshim's shipped rule table: what runs when COLLSHIM_CONFIG is not set (or lists "default").
# Rules are tried top to bottom; the first match wins; a call no rule matches passes through to the
# MPI library ("native"), so the shim never replaces the library's choice without evidence.
# Check a file with `collshim-config check FILE`; see which rule a call gets with `collshim-config
# explain --library "smpi-ompi 3.32" --collective allgather --procs 64 --block-bytes 4KiB
# --mapping sequential --nodes 8 --ppn 8`.
#
# Generated by bench/sim/shipped_table.py (docs/results.md, "The shipped rule table") with
# `collshim-tune rules --robust` from the committed evidence bench/sim/model/**/candidates.csv:
# SimGrid SMPI 3.32, every tuning candidate beside the four library selectors (ompi, mpich,
# mvapich2, impi), one skew-free barrier before every timed call and 1 us per message, on four
# simulated clusters whose nodes contend inside (one shared memory link per node):
#   yahoo-contending     16 nodes x  8 cores, two-tier GigE
#   cervino-contending    5 nodes x 32 cores, 40 Gb/s
#   fattree-contending   64 nodes x 16 cores, 100 Gb/s fat tree
#   oversub-contending   32 nodes x 16 cores, 4 leaves with 4:1 oversubscribed uplinks
# at 64 ranks (128 and 256 where measured), sequential and cyclic mapping: Allgather 1 B-256 KiB,
# Allreduce int64 sums 8 B-64 KiB, Alltoall 1 B-4 KiB, Alltoallv sparse_8 and power_law 8-512 B.
#
# Rules are per MPI library: each `library:` is the SMPI selector whose own choice the rule beat, by
# at least 5% in every measured cell of its range (and within 3% of the cell's best algorithm).
# Another library's choice was not measured against, so under Open MPI, MPICH or any other library
# no rule here applies and calls pass through (or the cost model decides, with COLLSHIM_PLATFORM).
# Rules are keyed on the measured placements (procs, nodes, ranks per node, mapping), widened only
# where every measured cell inside agrees. Alltoallv rules test the average block (total / p^2).
# An Allreduce rule changes the summation order, so floating-point sums take it only where
# reordering is allowed (COLLSHIM_ALLREDUCE_REORDER or a rule's `reorder: true`,
# docs/rules-and-tuning.md); integer, logical, bitwise, min/max and other exact reductions always do.
"""


def stage_table(tuned):
    with open(tuned) as f:
        body = [line for line in f if not line.startswith("#")]
    with open(DEFAULT_TABLE, "w") as f:
        f.write(HEADER)
        f.writelines(body)
    print(f"shipped_table: wrote {DEFAULT_TABLE}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(sim.HERE, "out", "shipped"))
    ap.add_argument("--evidence", default=EVIDENCE)
    ap.add_argument("--write", action="store_true", help="replace config/default.yaml with the table")
    ap.add_argument("--tune", default=sim.TUNE)
    ap.add_argument("--model", default=sim.MODEL)
    args = ap.parse_args()
    csvs = stage_measurements(args)
    tuned = os.path.join(args.out, "tuned.yaml")
    sim.robust_rules(args.tune, csvs, tuned)
    sim.verification_report(args.tune, args.out, csvs, tuned,
                            "The shipped table on the evidence (bench/sim/shipped_table.py)", per_library)
    if args.write:
        stage_table(tuned)


if __name__ == "__main__":
    main()
