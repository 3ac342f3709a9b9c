#!/usr/bin/env python3
"""The tools' JSON says what their other outputs say: collshim-model predict --json carries every
prediction of predict --csv (the CSV read by its header); collshim-tune verify --json carries every
cell and the summary of verify's table (bench/sim/smpi_common.py formats the JSON back into the
table's lines, which must equal them) with the same exit status; collshim-model constants --json
gives the online tuning policy. Prints "json outputs: N predictions, M cells" and nothing else.

  json_outputs_test.py SOURCE_DIR COLLSHIM_MODEL COLLSHIM_TUNE WORK_DIR
"""
import csv
import io
import json
import os
import subprocess
import sys

source, model, tune, work = sys.argv[1:5]
sys.path.insert(0, os.path.join(source, "bench", "sim"))
import smpi_common as sim  # noqa: E402  (the verify summary, formatted from the JSON)

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True)


# predict: JSON against CSV, every row.
platform = os.path.join(source, "config", "platforms", "fattree-contending.yaml")
predict = ["predict", "--platform", platform, "--procs", "16", "24", "--ppn", "4", "--bytes", "8", "4KiB",
           "--native", "ompi", "mvapich2"]
predictions = 0
for collective in ["allgather", "allgatherv", "alltoallv"]:
    extra = ["--collective", collective] + (["--pattern", "sparse_8"] if collective == "alltoallv" else [])
    table = {}
    for r in csv.DictReader(io.StringIO(run(model, *predict, *extra, "--csv").stdout)):
        table[(int(r["procs"]), int(r["bytes"]), r["algorithm"])] = r
    result = json.loads(run(model, *predict, *extra, "--json").stdout)
    check(result["format"] == "collshim-model-predict" and result["collective"] == collective, "predict header")
    seen = set()
    for prediction in result["predictions"]:
        for size in prediction["sizes"]:
            for row in size["rows"]:
                key = (prediction["procs"], size["bytes"], row["algorithm"])
                if row["predicted_us"] is None:
                    check(key not in table, f"{key}: not costed in JSON, a CSV row")
                    continue
                seen.add(key)
                want = table.get(key)
                if want is None:
                    failures.append(f"{key}: in JSON, not in CSV")
                    continue
                got = {"platform": result["platform"], "pattern": result["pattern"], "ppn": prediction["ppn"],
                       "mapping": prediction["mapping"], "nodes": prediction["nodes"],
                       "block_bytes": size["block_bytes"], "predicted_us": "%.3f" % row["predicted_us"],
                       "approximated": int(row["approximated"]),
                       "library_algorithm": row.get("library_algorithm", "")}
                for column, value in got.items():
                    check(str(value) == want[column], f"{collective} {key} {column}: JSON {value}, CSV {want[column]}")
    check(seen == set(table), f"{collective}: rows only in CSV: {sorted(set(table) - seen)}")
    predictions += len(seen)

# verify: the JSON formatted back is the table; the exit status is the same.
cells = 0
for rules in ["version: 1\nrules:\n  - collective: allgather\n    when: { procs: 16, block_bytes: 64-128 }\n"
              "    use: { algorithm: hierarchical, inter: bruck }\n",
              "version: 1\nrules:\n  - collective: allgather\n    when: { procs: 16 }\n    use: sparbit\n"]:
    path = os.path.join(work, "json_outputs_rules.yaml")
    with open(path, "w") as f:
        f.write(rules)
    sweep = os.path.join(source, "tests", "tools", "tune_small.csv")
    prose = run(tune, "verify", path, "--measured", sweep)
    data = run(tune, "verify", path, "--measured", sweep, "--json")
    check(prose.returncode == data.returncode, f"verify exit {prose.returncode}, with --json {data.returncode}")
    result = json.loads(data.stdout)
    lines = prose.stdout.splitlines()
    check(lines[1:1 + len(result["cells"])] == [sim.verify_cell_line(c) for c in result["cells"]],
          "verify: the cells' lines differ from the JSON's cells")
    check(lines[1 + len(result["cells"]):] == sim.verify_summary(result), "verify: the summary differs")
    check(result["summary"]["cells"] == len(result["cells"]) > 0, "verify: no cells")
    cells += len(result["cells"])

# constants: online tuning's policy, as numbers.
constants = json.loads(run(model, "constants", "--json").stdout)
check(constants["online_tuning"]["first_margin"] > 1, "constants: first_margin")
check(isinstance(constants["online_tuning"]["timed_calls"], int), "constants: timed_calls")

if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print(f"json outputs: {predictions} predictions, {cells} cells")
