#!/usr/bin/env bash
# mpi4py's own collective tests under every algorithm of the shim, one cell per (process count,
# collective, algorithm): the client whose nonblocking vector tests first showed the shim reading
# count arrays the program had released. Not part of tools/test.sh: it needs Debian's
# python3-mpi4py (Open MPI) and the test folder of mpi4py's matching source release, which this
# repository does not ship (mpi4py 3.1.4's `test/`, e.g. from its source tarball or git tag 3.1.4).
#
#   tests/mpi4py/collectives_table.sh MPI4PY_TEST_DIR [BUILD_DIR] > table.csv
#
# Each cell runs test_cco_buf, test_cco_vec, test_cco_obj, test_cco_nb_buf and test_cco_nb_vec with
# one collective forced (COLLSHIM_<COLLECTIVE>=<algorithm>, default parameters), at 3 and 4 ranks,
# under a timeout. CSV: procs,collective,algorithm,result (pass, fail, crash or hang),tests,seconds.
set -uo pipefail
tests=${1:?usage: collectives_table.sh MPI4PY_TEST_DIR [BUILD_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build}
tests=$(cd "$tests" && pwd)
shim="$build/libcollshim.so"
python=/usr/bin/python3  # Debian's, which has python3-mpi4py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
modules=(-i '^test_cco_buf$' -i '^test_cco_vec$' -i '^test_cco_obj$' -i '^test_cco_nb_buf$' -i '^test_cco_nb_vec$')
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# "collective algorithm" lines, from the shim's own list (every algorithm but native).
algorithms=$("$build/collshim-config" list | awk '
  /^[a-z]+ \(MPI_/ { collective = $1; next }
  /^  [a-z_]+ / && collective != "" && $1 != "native" { print collective, $1 }')

echo "procs,collective,algorithm,result,tests,seconds"
for procs in 3 4; do
  while read -r collective algorithm; do
    variable="COLLSHIM_${collective^^}"
    start=$SECONDS
    (cd "$tests" && timeout 300 mpirun --oversubscribe -np "$procs" -x LD_PRELOAD="$shim" -x "$variable=$algorithm" \
      "$python" runtests.py -q --no-builddir "${modules[@]}" < /dev/null) > "$log" 2>&1
    rc=$?
    ran=$(grep -Eo '^Ran [0-9]+ tests' "$log" | head -1 | grep -Eo '[0-9]+' || echo 0)
    if [ $rc = 124 ]; then result=hang
    elif grep -q 'Segmentation fault\|signal 11\|signal 6' "$log"; then result=crash
    elif [ $rc = 0 ] && grep -q '^OK' "$log"; then result=pass
    else result=fail
    fi
    echo "$procs,$collective,$algorithm,$result,$ran,$((SECONDS - start))"
  done <<< "$algorithms"
done
