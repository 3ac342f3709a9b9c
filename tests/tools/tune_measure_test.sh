#!/usr/bin/env bash
# collshim-tune measure under the test launcher: every tuning candidate of two collectives at 3 ranks,
# rows appended; a second run resumes and finds nothing left; the file feeds `rules`.
# Usage: tune_measure_test.sh COLLSHIM_TUNE WORK_DIR. Times are never checked.
set -euo pipefail
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
tune=$1
out="$2/measure.csv"
rm -f "$out"
measure() {
  timeout "$1" "$tune" measure -o "$out" --collective allgather --collective alltoallv --variant shift \
    --max-bytes 64 --iterations 2 --warmup 0 -- "$COLLSHIM_MPIEXEC" -np 3 ${COLLSHIM_MPIEXEC_PREFLAGS:-}
}
measure 300
again=$(measure 60)
echo "$again"
grep -q 'allgather: already measured up to 64 bytes' <<<"$again"
grep -q 'alltoallv (shift): already measured up to 64 bytes' <<<"$again"
# Every size of every candidate: 7 sizes, native plus each candidate, one row each.
candidates=$("$columns" "$out" --where collective=allgather --where distribution= --where ranks=3 --where bytes=64 --count)
rows=$("$columns" "$out" --where collective=allgather --count)
[ "$rows" -eq $((7 * candidates)) ] || { echo "allgather: $rows rows for $candidates candidates"; exit 1; }
[ "$candidates" -ge 20 ] || { echo "only $candidates allgather candidates"; exit 1; }
[ "$("$columns" "$out" --where collective=alltoallv --where distribution=shift --where ranks=3 --count)" -ge 7 ]
"$tune" rules "$out" -o "$2/measure.yaml"

# A launcher whose output mixes a cut-off row with its own text (as SimGrid's does when it aborts
# mid-line): the row is left out with a warning, the good one kept, and the file still feeds `rules`.
header=$(head -n 1 "$out")
good=$(grep -m 1 '^allgather,,3,1,' "$out")
printf '%s\n%s\n%s/usr/bin/smpirun --cfg=x\n' "$header" "$good" "${good:0:40}" >"$2/launcher_output.txt"
fake="$2/fake_launcher.sh"
printf '#!/bin/sh\ncat "%s"\n' "$2/launcher_output.txt" >"$fake"
chmod +x "$fake"
mixed="$2/mixed.csv"
rm -f "$mixed"
warnings=$("$tune" measure -o "$mixed" --collective allgather --max-bytes 1 -- "$fake" 2>&1 >/dev/null)
echo "$warnings"
grep -q 'warning: not a result row (.* fields, the header names .*), left out: allgather' <<<"$warnings"
[ "$("$columns" "$mixed" --where collective=allgather --count)" -eq 1 ]
"$tune" rules "$mixed" -o "$2/mixed.yaml"
echo "tune_measure_test: passed"
