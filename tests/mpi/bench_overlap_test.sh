#!/usr/bin/env bash
# collshim-bench --overlap over a tiny sweep: the CSV has the overlap columns (read by header), a row
# per implementation and size, every nonblocking and persistent result equals native's blocking one,
# and every overlap is a percentage in [0, 100]. Times are never checked.
# usage: bench_overlap_test.sh NP COLLSHIM_BENCH COLLECTIVE "MORE BENCH ARGS"
set -eu
np=$1; bench=$2; collective=$3; read -r -a more <<<"$4"
here=$(cd "$(dirname "$0")" && pwd)
columns="$here/../tools/csv_columns.py"  # the CSV's columns by header name
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$here/run_mpi_test.sh" --np "$np" --timeout 100 \
  --expect-output "collshim-bench: [1-9][0-9]* results verified against native, 0 mismatches" \
  --forbid-output "MISMATCH|error" \
  -- "$bench" --overlap --csv --collective "$collective" --min-bytes 8 --max-bytes 256 --iterations 3 --warmup 1 "${more[@]}" \
  >"$out/output.csv"
cat "$out/output.csv"
python3 "$columns" "$out/output.csv" algorithm bytes blocking_us pure_us persistent_us cpu_us overlapped_us \
  overlap_pct verified test_every_us >"$out/rows.txt"
python3 - "$out/rows.txt" "$np" <<'PY'
import math, sys
rows = [line.rstrip("\n").split(",") for line in open(sys.argv[1])]
fail = []
if not rows:
    fail.append("no rows")
algorithms = {r[0] for r in rows}
if "native" not in algorithms or len(algorithms) < 2:
    fail.append(f"implementations {sorted(algorithms)}: native and at least one algorithm expected")
sizes = {r[1] for r in rows}
if len(rows) != len(sizes) * len(algorithms):
    fail.append(f"{len(rows)} rows for {len(sizes)} sizes x {len(algorithms)} implementations")
for algorithm, size, blocking, pure, persistent, cpu, overlapped, pct, verified, every in rows:
    where = f"{algorithm} at {size} B"
    if not 0.0 <= float(pct) <= 100.0:
        fail.append(f"{where}: overlap_pct {pct} not in [0, 100]")
    if verified != "ok":
        fail.append(f"{where}: verified {verified}")
    if float(cpu) != float(cpu) or float(overlapped) != float(overlapped):
        fail.append(f"{where}: cpu_us or overlapped_us not a number")
    if math.isnan(float(persistent)) != (algorithm == "native"):
        fail.append(f"{where}: persistent_us {persistent}: a number for the algorithms only")
for line in fail:
    print("bench_overlap_test: FAILED:", line)
print("bench_overlap_test:", "failed" if fail else "passed")
sys.exit(1 if fail else 0)
PY
