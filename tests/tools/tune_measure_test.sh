#!/usr/bin/env bash
# collshim-tune measure under the test launcher: every tuning candidate of two collectives at 3 ranks,
# rows appended; a second run resumes and finds nothing left; the file feeds `rules`.
# Usage: tune_measure_test.sh COLLSHIM_TUNE WORK_DIR. Times are never checked.
set -euo pipefail
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
candidates=$(grep -c '^allgather,,3,64,' "$out")
rows=$(grep -c '^allgather,' "$out")
[ "$rows" -eq $((7 * candidates)) ] || { echo "allgather: $rows rows for $candidates candidates"; exit 1; }
[ "$candidates" -ge 20 ] || { echo "only $candidates allgather candidates"; exit 1; }
[ "$(grep -c '^alltoallv,shift,3,' "$out")" -ge 7 ]
"$tune" rules "$out" -o "$2/measure.yaml"
echo "tune_measure_test: passed"
