#!/usr/bin/env bash
# Every description in the folder reads, and its rows name the platform its file is named after.
# Prints the number of descriptions and nothing else.
# Usage: model_shipped_platforms_test.sh COLLSHIM_MODEL PLATFORMS_DIR
set -eu
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
dir=$2
for f in "$dir"/*.yaml; do
  n=$(basename "$f" .yaml)
  rows=$("$model" predict --platform "$f" --procs 8 --ppn 4 --bytes 8 --algorithms ring --csv) ||
    { echo "unreadable: $f"; exit 1; }
  [ "$("$columns" - platform collective <<<"$rows")" = "$n,allgather" ] || { echo "misnamed: $f"; exit 1; }
done
ls "$dir"/*.yaml | wc -l
