#!/usr/bin/env bash
# collshim-model predict --csv quotes a spec with a comma: read by the header (never by position),
# each row's columns, the spec whole in its algorithm column; then that every row has as many columns
# as the header, and that the spec is written quoted. The test's regular expression checks all three.
# Usage: model_csv_quoting_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -euo pipefail
exec 2>&1
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
platform=$2
spec='hierarchical:inter=ring,intra=shm'
rows=$("$model" predict --platform "$platform" --procs 16 --ppn 4 --bytes 8 --csv --algorithms "$spec" bruck)
printf '%s\n' "$rows" |
  "$columns" - platform collective pattern procs ppn mapping bytes algorithm approximated nodes block_bytes \
    library_algorithm
printf '%s\n' "$rows" | python3 -c '
import csv, sys
header, *rows = csv.reader(line for line in sys.stdin if not line.startswith("#"))
widths = sorted({len(row) for row in rows})
if widths == [len(header)]:
    print(f"{len(rows)} rows, each with as many columns as the header ({len(header)})")
else:
    print(f"FAIL: the header has {len(header)} columns, the rows {widths}")
'
printf '%s\n' "$rows" | grep -o -F "\"$spec\"" || echo "FAIL: the spec is not quoted"
