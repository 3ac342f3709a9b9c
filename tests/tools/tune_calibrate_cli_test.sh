#!/usr/bin/env bash
# collshim-tune calibrate without MPI: bad arguments exit 2, a launcher that fails or reports too few
# nodes exits 1, each with its one-line message, and nothing is written; fake launchers that print
# what collshim-bench --calibrate - prints (here with srun --label's "0: " before every line) give the
# description back byte for byte. Usage: tune_calibrate_cli_test.sh COLLSHIM_TUNE DESCRIPTION WORK_DIR.
set -uo pipefail
tune=$1
description=$2
work="$3/tune-calibrate-cli"
rm -rf "$work"
mkdir -p "$work"
out="$work/out.yaml"
failures=0

# expect STATUS REGEX ARGS...: collshim-tune ARGS exits STATUS, its last line matches REGEX and no
# output file is left.
expect() {
  local want=$1 pattern=$2 status=0 text
  shift 2
  text=$("$tune" "$@" 2>&1) || status=$?
  if [ "$status" -ne "$want" ] || ! tail -n 1 <<<"$text" | grep -Eq -- "$pattern" || [ -e "$out" ] || [ -e "$out.partial" ]; then
    echo "FAILED: collshim-tune $* -> exit $status (expected $want), output:"
    echo "$text"
    failures=$((failures + 1))
  else
    echo "ok: collshim-tune $* -> $want: $(tail -n 1 <<<"$text")"
  fi
}

# Bad arguments: 2.
expect 2 '^collshim-tune calibrate: error: no launcher: give it after --, e.g. -- mpirun -np 18' calibrate -o "$out"
expect 2 '^collshim-tune calibrate: error: no launcher' calibrate -o "$out" --
expect 2 '^collshim-tune calibrate: error: The following argument was not expected: --bogus' calibrate -o "$out" --bogus -- true
expect 2 '^collshim-tune calibrate: error: --max-bytes: size 12XB: expected a number of bytes' calibrate -o "$out" --max-bytes 12XB -- true
expect 2 '^collshim-tune calibrate: error: --min-bytes 4KiB exceeds --max-bytes 1KiB' calibrate -o "$out" --min-bytes 4KiB --max-bytes 1KiB -- true
expect 2 '^collshim-tune calibrate: error: --output is required' calibrate -- true
expect 2 "^collshim-tune calibrate: error: -o $work/missing/out.yaml: cannot create a file there \(No such file or directory\); give a path in a directory you can write" \
  calibrate -o "$work/missing/out.yaml" -- true
expect 2 "^collshim-tune calibrate: error: -o $work is a directory; give the description's file name, e.g. $work/platform.yaml" \
  calibrate -o "$work" -- true

# Launchers that do not give a description: 1.
expect 1 '^collshim-tune calibrate: error: cannot start the launcher `/nonexistent/mpirun` \(No such file or directory\)\. Command: /nonexistent/mpirun -np 4 .*collshim-bench --calibrate - --platform out' \
  calibrate -o "$out" -- /nonexistent/mpirun -np 4
expect 1 '^collshim-tune calibrate: error: the launcher exited with status 1 before collshim-bench started \(its messages are above\): false .*collshim-bench --calibrate -' \
  calibrate -o "$out" -- false
expect 1 '^collshim-tune calibrate: error: the launcher exited with status 0 but collshim-bench reported nothing: does `true` start MPI programs' \
  calibrate -o "$out" -- true
layout() { printf '# collshim-bench --calibrate: %s ranks on %s node(s), at most %s on one node\n' "$@"; }
printf '#!/bin/sh\n%s\necho "collshim-bench: error: ..." >&2\nexit 2\n' "echo '$(layout 4 1 4)'" >"$work/one-node"
printf '#!/bin/sh\n%s\nexit 2\n' "echo '$(layout 2 2 1)'" >"$work/one-per-node"
printf '#!/bin/sh\nfor i in 1 2 3; do echo '"'%s'"'; done\nexit 2\n' "$(layout 1 1 1)" >"$work/singletons"
chmod +x "$work"/one-node "$work"/one-per-node "$work"/singletons
expect 1 '^collshim-tune calibrate: error: the launcher started 4 ranks on 1 node; calibration needs two nodes, one of them with at least two ranks: e\.g\. mpirun -np 18 --map-by ppr:16:node on two nodes, srun -N 2 -n 18, or a host file naming two hosts \(COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential fakes two nodes for a test or a simulator\)$' \
  calibrate -o "$out" -- "$work/one-node"
expect 1 '^collshim-tune calibrate: error: the launcher started 2 ranks on 2 nodes, one on each; calibration needs two nodes, one of them with at least two ranks' \
  calibrate -o "$out" -- "$work/one-per-node"
expect 1 '^collshim-tune calibrate: error: the launcher started 3 separate one-rank jobs, not one job: collshim-bench \(.*\) is built for another MPI than the launcher' \
  calibrate -o "$out" -- "$work/singletons"

# What collshim-bench --calibrate - prints, each line labelled as srun --label does: the file is the
# description itself. Cut short, failed, or unreadable, nothing is written.
labelled() {  # DESCRIPTION_FILE END_MARKER STATUS
  {
    layout 18 2 16
    echo '# collshim-bench --calibrate: the description follows'
    cat "$1"
    [ -z "$2" ] || echo '# collshim-bench --calibrate: end of the description'
  } | sed 's/^/0: /'
  echo 'a line of the launcher itself'
  return "$3"
}
fake() {  # NAME DESCRIPTION_FILE END_MARKER STATUS
  { declare -f layout labelled; echo "labelled '$2' '$3' $4"; } | sed '1i #!/bin/bash' >"$work/$1"
  chmod +x "$work/$1"
}
fake cut-short "$description" "" 0
fake failed "$description" yes 3
printf 'name: broken\nshm: {overhead_us: -1}\n' >"$work/broken.yaml"
fake unreadable "$work/broken.yaml" yes 0
fake good "$description" yes 0
expect 1 '^collshim-tune calibrate: error: collshim-bench ended without printing the whole description; nothing written' calibrate -o "$out" -- "$work/cut-short"
expect 1 '^collshim-tune calibrate: error: collshim-bench stopped with status 3 during the calibration \(its messages are above\); nothing written' calibrate -o "$out" -- "$work/failed"
expect 1 "^collshim-tune calibrate: error: the description collshim-bench printed does not read back, nothing written: $out:" calibrate -o "$out" -- "$work/unreadable"

status=0
text=$("$tune" calibrate -o "$out" --max-bytes 4KiB -- "$work/good" 2>&1) || status=$?
echo "$text"
if [ "$status" -ne 0 ] || ! cmp "$description" "$out" ||
   ! grep -q "^collshim-tune calibrate: platform description 'out' (measured on 18 ranks on 2 nodes, at most 16 on one) written to $out$" <<<"$text" ||
   ! grep -q "^export COLLSHIM_PLATFORM=$out   # the jobs' environment; or collshim-run --platform $out -- LAUNCHER...$" <<<"$text" ||
   ! grep -q '^a line of the launcher itself$' <<<"$text" || [ -e "$out.partial" ]; then
  echo "FAILED: the good fake launcher (exit $status)"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] && echo "tune_calibrate_cli_test: passed"
