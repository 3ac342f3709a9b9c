#!/usr/bin/env python3
"""Checks the JSON reports of model_decisions under COLLSHIM_PLATFORM.

usage: check_model_report.py REPORT.json --sources S [S...]
           every row was run alike on every rank, and the settled rows carry these rule labels (at least
           one row each)
       check_model_report.py REPORT.json --replays FIRST.json
           a job under FIRST's COLLSHIM_TUNE_OUT rules: no trial rows, no model rows, and every key
           runs the algorithm FIRST settled on
"""
import collections
import json
import sys

MODEL_LABELS = {"model", "model, confirmed", "model, kept native", "model, widened"}


def load(path):
    with open(path) as f:
        report = json.load(f)
    assert report["format"] == "collshim-report", report
    return report


def settled(report, labels):
    """(collective, comm_size, bucket) -> algorithm, for rows with these rule labels. A key may show two:
    a pick that left native ran as "model, confirmed" (or "model, widened") until its second look against native
    (COLLSHIM_TUNE_RECHECK), which brought native back ("model, kept native"): native is what settled."""
    by_key = collections.defaultdict(dict)
    for row in report["rows"]:
        if labels(row["rule"]):
            key = (row["collective"], row["comm_size"], row["bucket_low_bytes"])
            algorithms = by_key[key]
            assert algorithms.get(row["rule"], row["algorithm"]) == row["algorithm"], f"{key}: two algorithms"
            algorithms[row["rule"]] = row["algorithm"]
    keys = {}
    for key, algorithms in by_key.items():
        if len(set(algorithms.values())) > 1:
            assert set(algorithms) in ({"model, confirmed", "model, kept native"},
                                       {"model, widened", "model, kept native"}), f"{key}: two algorithms"
            keys[key] = algorithms["model, kept native"]
        else:
            keys[key] = next(iter(algorithms.values()))
    return keys


failures = []
report = load(sys.argv[1])
if sys.argv[2] == "--sources":
    seen = collections.Counter()
    for row in report["rows"]:
        # A key decided alike everywhere: every rank made every call of the row.
        if row["calls_total"] != row["calls"] * row["comm_size"]:
            failures.append(f"row {row}: the ranks did not all run it")
        seen[row["rule"]] += 1
    for source in sys.argv[3:]:
        if seen[source] == 0:
            failures.append(f"no row settled as '{source}' (rules seen: {dict(seen)})")
    non_native = [r for r in report["rows"] if r["rule"] in MODEL_LABELS and r["algorithm"] != "native"]
    print(f"check_model_report: {len(report['rows'])} rows, rules {dict(seen)}, "
          f"{len(non_native)} rows run a model pick other than native")
elif sys.argv[2] == "--replays":
    first = settled(load(sys.argv[3]), lambda rule: rule in MODEL_LABELS)
    again = settled(report, lambda rule: rule.endswith(".yaml") or ".yaml:" in rule)
    for row in report["rows"]:
        if row["rule"] in MODEL_LABELS or row["rule"] == "tuning trial":
            failures.append(f"row {row['collective']} p={row['comm_size']} bucket {row['bucket_low_bytes']}: "
                            f"rule '{row['rule']}' in the replay")
    for key, algorithm in sorted(first.items()):
        if again.get(key) != algorithm:
            failures.append(f"{key}: first job settled on {algorithm}, the replay ran {again.get(key)}")
    print(f"check_model_report: {len(first)} keys settled by the model, replayed by rules")
for failure in failures:
    print("FAIL:", failure)
print(f"check_model_report: {'passed' if not failures else 'FAILED'}")
sys.exit(1 if failures else 0)
