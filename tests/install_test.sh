#!/usr/bin/env bash
# `cmake --install` puts the library, tools and default rules in the usual places, and the installed
# collshim-run finds the installed library: run the demo through it with the report on.
# usage: install_test.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -1)
for f in "$libdir/libcollshim.so" "$prefix/bin/collshim-run" "$prefix/bin/collshim-config" "$prefix/bin/collshim-tune" \
         "$prefix/share/collshim/default.yaml"; do
  [ -e "$f" ] || { echo "install_test: missing $f"; exit 1; }
done
"$prefix/bin/collshim-config" check "$prefix/share/collshim/default.yaml"
# shellcheck disable=SC2086
out=$("$prefix/bin/collshim-run" --report stderr --force allgather=ring -- \
      "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np 2 "$prefix/bin/collshim-demo" 2>&1)
echo "$out"
grep -q "allgather .* ring .* forced" <<<"$out" || { echo "install_test: the report shows no forced ring"; exit 1; }
echo "install_test: 1 passed, 0 failed"
