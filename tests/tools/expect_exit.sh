#!/usr/bin/env bash
# A command that must fail with a given exit status and say why: runs COMMAND (its standard error
# into its standard output), prints what it said, and passes when it exited STATUS and its output
# matches every PATTERN (grep's basic regular expressions; -E: extended ones).
# Usage: expect_exit.sh [-E] STATUS PATTERN... -- COMMAND [ARGUMENT...]
set -eu
usage="usage: expect_exit.sh [-E] STATUS PATTERN... -- COMMAND [ARGUMENT...]"
grep_mode=-q
if [ "${1:-}" = -E ]; then
  grep_mode=-qE
  shift
fi
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
want=$1
shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  patterns+=("$1")
  shift
done
[ $# -ge 2 ] && [ ${#patterns[@]} -ge 1 ] || { echo "$usage" >&2; exit 2; }
shift  # --

status=0
out=$("$@" 2>&1) || status=$?
echo "$out"
if [ "$status" -ne "$want" ]; then
  echo "FAIL: exit status $status, expected $want: $*" >&2
  exit 1
fi
for pattern in "${patterns[@]}"; do
  if ! grep "$grep_mode" -- "$pattern" <<<"$out"; then
    echo "FAIL: no line matches '$pattern'" >&2
    exit 1
  fi
done
