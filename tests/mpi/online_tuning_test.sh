#!/usr/bin/env bash
# Online tuning end to end, through collshim-run --tune FILE, with faked nodes and the delay injector
# (delay_injector.cpp: native is 20-60 ms slower, by a different random amount on every rank):
#   run 1: every rank locks the same choice per key, never native, and every result is correct;
#          after 10 calls (COLLSHIM_TUNE_RECHECK) each pick gets its second look against native and
#          stays; FILE gets one rule per tuned key;
#   run 2: with FILE, the same choices run from the first call, with no trial call at all.
# usage: online_tuning_test.sh NP COLLSHIM_RUN PROGRAM DELAY_LIBRARY
set -eu
np=$1; run=$2; program=$3; delay=$4
query=$(dirname "$0")/report_query.py  # the JSON report's rows, read as data
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
launch() {  # launch LOGFILE [collshim-run options]: the program under the shim, the delay behind it
  local log=$1; shift
  # shellcheck disable=SC2086
  LD_PRELOAD="$delay" timeout --kill-after=10 240 "$run" --tune "$out/learned.yaml" --log info \
    --topology nodes=2,mapping=sequential "$@" \
    -- "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np "$np" "$program" > "$log" 2>&1 ||
    { cat "$log"; echo "FAIL: the run failed"; exit 1; }
  grep -q "online_tuning: [0-9]* checks passed, 0 failed" "$log" || { cat "$log"; echo "FAIL: wrong results"; exit 1; }
}
fail() { echo "FAIL: $*"; exit 1; }

COLLSHIM_TUNE_RECHECK=10 launch "$out/run1.log" --report "$out/report1.json"
# "tuned online: MPI_Allgather on MPI_COMM_WORLD p=4 mapping=sequential nodes=2 block 8B-16B: ring after ..."
# per rank and communicator; the key is everything before the chosen algorithm. The two communicators
# tune on their own (they may choose differently); within one, every rank must choose the same.
grep -o "tuned online: .*" "$out/run1.log" | sed 's/ after .*//' | sort > "$out/choices1"
keys=$(sed 's/: [^ ]*$//; s/ on [^ ]* / /' "$out/choices1" | sort -u | wc -l)
[ "$keys" -eq 4 ] || { cat "$out/run1.log"; fail "expected 4 tuned keys (2 collectives x 2 sizes), got $keys"; }
# Every rank of both communicators: np lines per key and communicator, all naming one choice.
[ "$(wc -l < "$out/choices1")" -eq $((keys * np * 2)) ] || fail "not every rank tuned every key: $(cat "$out/choices1")"
[ "$(sort -u "$out/choices1" | wc -l)" -eq $((keys * 2)) ] || fail "ranks locked different choices: $(sort -u "$out/choices1")"
grep -q ": native$" "$out/choices1" && fail "the delayed native was chosen: $(sort -u "$out/choices1")"
# The second look: every rank of every key, native still delayed, so every pick stays.
grep -o "tuned online, second look once warm: .*" "$out/run1.log" | sed 's/, second look once warm//; s/ after .*//' |
  sort > "$out/second1"
cmp -s "$out/choices1" "$out/second1" ||
  fail "the second looks differ from the first picks: $(diff "$out/choices1" "$out/second1" | head -5)"
[ "$(python3 "$query" "$out/report1.json" trial_calls)" -gt 0 ] || fail "the report does not count the trials"
python3 "$query" "$out/report1.json" rows | cut -f3 | grep -qx "tuned online" ||
  fail "the report has no row marked 'tuned online'"
rules=$(grep -c "^  - collective:" "$out/learned.yaml" || true)
[ "$rules" -eq "$keys" ] || { cat "$out/learned.yaml"; fail "expected $keys rules in the written file, got $rules"; }
echo "run 1: $(sort -u "$out/choices1" | tr '\n' ';')"

launch "$out/run2.log" --report "$out/report2.json"
grep -q "tuned online:" "$out/run2.log" && fail "run 2 tuned again: $(grep "tuned online:" "$out/run2.log")"
[ "$(python3 "$query" "$out/report2.json" trial_calls)" -eq 0 ] || { cat "$out/report2.json"; fail "run 2 made trial calls"; }
python3 "$query" "$out/report2.json" rows | cut -f3 | grep -qx "tuning trial\|tuned online" &&
  { cat "$out/report2.json"; fail "run 2 has tuning rows"; }
# Each rule of the file (per key, the choice of run 1's communicators) runs in run 2, decided by it.
while read -r algorithm; do
  python3 "$query" "$out/report2.json" rows | awk -F'\t' -v a="$algorithm" '$2 == a && $3 ~ /learned.yaml:/' | grep -q . ||
    { cat "$out/report2.json"; fail "run 2 does not run $algorithm from the learned file"; }
done < <(sed -n 's/^    use: "\(.*\)"$/\1/p' "$out/learned.yaml")
rules2=$(grep -c "^  - collective:" "$out/learned.yaml" || true)
[ "$rules2" -eq "$keys" ] || { cat "$out/learned.yaml"; fail "run 2 changed the learned file: $rules2 rules"; }
# Each rule names the library it was learned under; under another one it never applies: run 3, as
# SMPI's default selector (COLLSHIM_MPI_LIBRARY), tunes every key again.
[ "$(grep -c '^    when: { library: "[a-z]* [0-9.]*", procs: ' "$out/learned.yaml")" -eq "$keys" ] ||
  { cat "$out/learned.yaml"; fail "the learned rules do not name the library"; }
COLLSHIM_MPI_LIBRARY=smpi-default launch "$out/run3.log" --report "$out/report3.json"
[ "$(grep -o "tuned online: .*" "$out/run3.log" | sed 's/ after .*//; s/: [^ ]*$//; s/ on [^ ]* / /' | sort -u | wc -l)" \
  -eq "$keys" ] || { cat "$out/run3.log"; fail "run 3, under another library, did not tune every key again"; }
echo "online_tuning_test: passed"
