#!/usr/bin/env python3
"""Checks device_buffers' JSON report: per collective, the calls the program made on host buffers ran
the forced algorithm, and those with device memory on some rank passed through as `native` for the
reason "device memory" (the rows' rule column), no other rows. FORM (blocking, the default, or
nonblocking) is the form the program's calls took: every row must be of that form.

usage: check_device_report.py REPORT.json PROGRAM_OUTPUT [FORM]
"""
import collections
import json
import re
import sys

report_path, output_path = sys.argv[1], sys.argv[2]
form = sys.argv[3] if len(sys.argv) > 3 else "blocking"
forced = {"allgather": "ring", "allgatherv": "bruck", "alltoall": "bruck", "alltoallv": "pairwise",
          "allreduce": "rabenseifner", "gatherv": "binomial", "scatterv": "traff"}
if form != "blocking":
    forced["scatterv"] = "binomial"  # traff is blocking-only (docs/nonblocking.md)
expected = {}
with open(output_path) as f:
    for line in f:
        m = re.search(r"device_buffers: expect MPI_(\w+) host=(\d+) device=(\d+)", line)
        if m:
            collective = m.group(1).lower()
            expected[(form, collective, forced[collective], "forced")] = int(m.group(2))
            expected[(form, collective, "native", "device memory")] = int(m.group(3))
assert len(expected) == 14, f"the program's expectations are missing: {expected}"
with open(report_path) as f:
    report = json.load(f)
# Calls per rank: every rank makes each call, but rooted collectives put the root's and the other
# ranks' calls in different size buckets, so a key's rows are summed over ranks and divided by p.
calls_total = collections.Counter()
for row in report["rows"]:
    calls_total[(row["form"], row["collective"], row["algorithm"], row["rule"])] += row["calls_total"]
actual = {key: total / report["ranks"] for key, total in calls_total.items()}
failures = [f"{key}: {actual.get(key, 0)} calls in the report, {calls} made" for key, calls in sorted(expected.items())
            if actual.get(key, 0) != calls]
failures += [f"unexpected row {key}: {calls} calls" for key, calls in sorted(actual.items()) if key not in expected]
for failure in failures:
    print("FAIL:", failure)
print(f"check_device_report: {len(expected) - len([f for f in failures if not f.startswith('unexpected')])} passed, "
      f"{len(failures)} failed")
sys.exit(1 if failures else 0)
