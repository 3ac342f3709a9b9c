#!/usr/bin/env bash
# bench/sim/describe_platform.py describes each bench/sim platform as config/platforms has it: the
# same predictions (every CSV column but the time the model took) for ring and Bruck at p = 32, 8 per node. Only
# oversub-contending's description names oversubscribed uplinks. Prints "same" and nothing else.
# Usage: model_described_platforms_test.sh COLLSHIM_MODEL DESCRIBE_PLATFORM SOURCE_DIR WORK_DIR
set -eu
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
describe=$2
source=$3
work=$4
predict() {
  "$model" predict --platform "$1" --procs 32 --ppn 8 --bytes 8 4KiB --csv --algorithms ring bruck |
    "$columns" - platform collective pattern procs ppn mapping bytes algorithm predicted_us approximated nodes \
      block_bytes library_algorithm
}
for p in fattree-contending cervino-contending yahoo-contending oversub-contending fattree cervino yahoo; do
  described="$work/described-$p.yaml"
  "$describe" "$source/bench/sim/platforms/$p.xml" -o "$described" || exit 1
  if [ $p = oversub-contending ]; then
    grep -q '^# Oversubscribed 4:1, not in the model: uplinkA, uplinkB, uplinkC, uplinkD carry 25 GB/s each way' \
      "$described" || { echo "$p: no oversubscription named"; exit 1; }
  elif grep -q Oversubscribed "$described"; then
    echo "$p: oversubscribed?"
    exit 1
  fi
  a=$(predict "$described")
  b=$(predict "$source/config/platforms/$p.yaml")
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "$p differs"; echo "$a"; echo "$b"; exit 1; }
done
echo same
