#!/usr/bin/env bash
# The main job: installs dependencies, builds, then runs an unmodified MPI program (collshim-demo)
# natively and under the shim (via collshim-run), checks that the results are identical, and prints
# the shim's end-of-run report: with the shipped rules, with forced algorithms, with the cost model
# deciding on a description calibrated here, under a table tuned here, and with online tuning. COLLSHIM_SKIP_DEPS=1 skips the apt-get step; NP sets the ranks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLSHIM_BUILD_DIR:-$root/build}
[ "${COLLSHIM_SKIP_DEPS:-0}" = 1 ] || bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh" -DCOLLSHIM_BUILD_TESTS=OFF >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=${NP:-6}
launch=(mpirun --oversubscribe -np "$np" "$build/collshim-demo")

echo "== native MPI, no shim: mpirun -np $np collshim-demo"
native=$("${launch[@]}" | tee /dev/stderr | grep -o 'checksum [0-9a-f]*')

run_shim() {
  echo
  echo "== collshim-run $* -- mpirun -np $np collshim-demo"
  local out
  out=$("$build/collshim-run" --report stderr "$@" -- "${launch[@]}")
  echo "$out"
  local shimmed
  shimmed=$(echo "$out" | grep -o 'checksum [0-9a-f]*')
  if [ "$shimmed" = "$native" ]; then echo "result identical to native MPI ($native)"; else
    echo "RESULT DIFFERS: native $native, shim $shimmed"; exit 1; fi
}
# The shipped rules: they hold under SimGrid SMPI's selectors only (the library each beat), so under
# this Open MPI every call passes through; the report says so.
run_shim
# Forced algorithms: Sparbit for Allgather, Bruck radix 4 for Allgatherv, pairwise Alltoallv.
run_shim --force allgather=sparbit --force allgatherv=bruck:radix=4 --force alltoallv=pairwise

tuned="$build/demo-tuned"
mkdir -p "$tuned"
# A machine nobody tuned: describe it once (collshim-tune calibrate, here on two faked nodes of this
# machine), then let the cost model decide where no rule does: per size, one rank costs every
# candidate and the MPI library's own choice, all ranks agree, and a few timed calls of native and the
# model's three best keep the fastest (the next three too where their times disagree with the predictions). The
# report's rule column says "model, confirmed", "model, kept native" or "model, widened"; the
# info log shows the library and description the model uses.
echo
echo "== collshim-tune calibrate -o $tuned/platform.yaml -- mpirun -np $np (two faked nodes)"
COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential "$build/collshim-tune" calibrate -o "$tuned/platform.yaml" \
  --max-bytes 64KiB --iterations 10 --warmup 2 -- mpirun --oversubscribe -np "$np"
run_shim --platform "$tuned/platform.yaml" --topology nodes=2,mapping=sequential --config none --log info

# Tuning on this machine: measure every candidate for Allgather at np ranks (small sizes, few calls:
# a demonstration, not a tuning run), write the rule table the measurements support, check it, and
# run the demo again under it. On a busy 2-core machine the winners are noisy; the table says what
# it saw, with its evidence in comments.
rm -f "$tuned/results.csv"
echo
echo "== collshim-tune measure --collective allgather --max-bytes 4KiB -- mpirun -np $np"
"$build/collshim-tune" measure -o "$tuned/results.csv" --platform "$(hostname)" --collective allgather \
  --max-bytes 4KiB --iterations 20 --warmup 3 -- mpirun --oversubscribe -np "$np"
echo "== collshim-tune rules -> $tuned/tuned.yaml"
"$build/collshim-tune" rules "$tuned/results.csv" -o "$tuned/tuned.yaml"
cat "$tuned/tuned.yaml"
"$build/collshim-config" check "$tuned/tuned.yaml"
run_shim --config "default:$tuned/tuned.yaml"

# Online tuning: the same program, 150 iterations, learns its algorithms during the run (every rank
# agrees on each trial's slowest time) and writes them to learned.yaml; the second run starts from
# that file and makes no trial call. The report marks trial and tuned rows.
launch=(mpirun --oversubscribe -np "$np" "$build/collshim-demo" 150)
echo
echo "== native MPI, 150 iterations"
native=$("${launch[@]}" | tee /dev/stderr | grep -o 'checksum [0-9a-f]*')
rm -f "$tuned/learned.yaml"
run_shim --tune "$tuned/learned.yaml"
echo "== the rule file online tuning wrote: $tuned/learned.yaml"
cat "$tuned/learned.yaml"
run_shim --tune "$tuned/learned.yaml"
