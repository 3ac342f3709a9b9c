#!/usr/bin/env bash
# Checks that every tracked C/C++ file is formatted as .clang-format says (clang-format --dry-run
# --Werror: nothing is changed). Lists the files that are not, with the command that fixes them.
# CMake templates (*.in) are not checked: clang-format splits their @VARIABLE@ placeholders.
# Takes a few seconds; tools/test.sh runs it before building.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" > /dev/null; then
  echo "check-format: $clang_format not found (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.c' '*.cu')
# One clang-format per batch of files, two batches at a time; a file whose formatting differs is
# named in clang-format's "FILE:LINE:COL: error: code should be clang-formatted" lines.
rc=0
output=$(printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P 2 "$clang_format" --dry-run --Werror 2>&1) || rc=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<< "$output" | sort -u)
if [ "$rc" -ne 0 ] && [ "${#bad[@]}" -eq 0 ]; then
  # Failed for another reason (a bad .clang-format, a file it cannot read): show what it said.
  echo "check-format: $clang_format failed (exit status $rc):" >&2
  echo "$output" >&2
  exit 1
fi
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says ($("$clang_format" --version)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "Fix each with: clang-format -i FILE; all of them with:" >&2
  echo "  clang-format -i ${bad[*]}" >&2
  echo "(the whole tree: git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' | xargs clang-format -i)" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
