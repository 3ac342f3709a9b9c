#!/usr/bin/env python3
"""Asserts the JSON report of report_calls under collshim-run: exactly these rows, calls and bytes.

usage: check_report.py REPORT.json NPROCS
"""
import json
import sys

path, p = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    report = json.load(f)

assert report["format"] == "collshim-report" and report["version"] == 1, report
assert report["ranks"] == p, report["ranks"]
# (collective, algorithm, rule, bucket_low_bytes) -> (calls per rank, bytes received summed over ranks)
expected = {
    ("allgather", "ring", "forced", 8): (1, 8 * p * p),
    ("allgather", "ring", "forced", 1024): (2, 2 * 1024 * p * p),
    ("allgather", "ring", "forced", 65536): (3, 3 * 65536 * p * p),
    ("alltoallv", "pairwise", "forced", 16): (1, 20 * p * p),
}
actual = {}
for row in report["rows"]:
    assert row["comm_size"] == p, row
    key = (row["collective"], row["algorithm"], row["rule"], row["bucket_low_bytes"])
    assert key not in actual, f"duplicate row {key}"
    actual[key] = (row["calls"], row["bytes"])
    assert row["calls_total"] == row["calls"] * p, row
    assert 0 <= row["time_max_s"] <= row["time_total_s"], row
if actual != expected:
    print(f"rows differ:\n expected {sorted(expected.items())}\n actual   {sorted(actual.items())}")
    sys.exit(1)
print(f"check_report: {len(expected)} passed, 0 failed")
