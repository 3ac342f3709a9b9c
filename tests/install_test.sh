#!/usr/bin/env bash
# `cmake --install` puts the library, tools and default rules in the usual places, and the installed
# collshim-run finds the installed library: run the demo through it with the report on. The installed
# shim reads the site default platform description under its prefix, and refuses a broken one.
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

# The installed shim finds the site default platform description of the prefix it is installed in
# (COLLSHIM_PLATFORM unset), and a broken one stops the job naming it as the site default.
site="$(readlink -f "$prefix")/etc/collshim/platform.yaml"
mkdir -p "$(dirname "$site")"
cp "$prefix/share/collshim/platforms/fattree-contending.yaml" "$site"
# shellcheck disable=SC2086
out=$(env -u COLLSHIM_PLATFORM "$prefix/bin/collshim-run" --log info -- \
      "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np 2 "$prefix/bin/collshim-demo" 2>&1)
grep -q "cost model decides where no rule does .*: platform $site (fattree-contending)" <<<"$out" ||
  { echo "$out"; echo "install_test: the installed shim did not read the site default $site"; exit 1; }
printf 'name: broken\nshm: {overhead_us: [unclosed\n' >"$site"
# shellcheck disable=SC2086
out=$(env -u COLLSHIM_PLATFORM "$prefix/bin/collshim-run" -- \
      "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np 2 "$prefix/bin/collshim-demo" 2>&1) &&
  { echo "$out"; echo "install_test: a broken site default did not stop the job"; exit 1; }
grep -q "collshim: error: the site default platform description (COLLSHIM_PLATFORM is unset; COLLSHIM_PLATFORM=none runs without it): $site:[0-9]*:[0-9]*: " <<<"$out" ||
  { echo "$out"; echo "install_test: a broken site default was not named"; exit 1; }
rm "$site"

# Link-time users, both ways: pkg-config and find_package(collshim). The programs are not preloaded;
# the shim must run their MPI_Allgather (its debug log names the forced algorithm).
here=$(cd "$(dirname "$0")" && pwd)
work="$prefix/link"
mkdir -p "$work/cmake-project"
# Plain cc: collshim.pc requires the MPI library's own pkg-config module, which gives MPI's flags.
# shellcheck disable=SC2046
cc -o "$work/by_pkg_config" "$here/install_link_program.c" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs collshim)
cat > "$work/cmake-project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(link_test C)
find_package(collshim REQUIRED)
add_executable(by_find_package "$here/install_link_program.c")
target_link_libraries(by_find_package PRIVATE collshim::collshim)
CMAKE
cmake -S "$work/cmake-project" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
passed=1
for program in "$work/by_pkg_config" "$work/cmake-build/by_find_package"; do
  loaded=$(ldd "$program" | awk '/libcollshim.so/ {print $3}')
  [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/libcollshim.so")" ] \
    || { echo "install_test: $program does not load the installed shim ($loaded)"; exit 1; }
  # shellcheck disable=SC2086
  # Local ranks inherit the launcher's environment (Open MPI and MPICH alike).
  out=$(COLLSHIM_ALLGATHER=ring COLLSHIM_LOG=debug "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np 2 "$program" 2>&1)
  echo "$out"
  grep -q "install_link_program: allgather correct" <<<"$out" || { echo "install_test: $program: wrong result"; exit 1; }
  grep -q "MPI_Allgather: p=2 .*algorithm=ring" <<<"$out" || { echo "install_test: $program: the shim did not run"; exit 1; }
  passed=$((passed + 1))
done
echo "install_test: $passed passed, 0 failed"
