#!/usr/bin/env bash
# Runs one MPI test program under mpirun with a hard timeout and checks its exit status and output.
#
# usage: run_mpi_test.sh --np N [--preload LIB] [--env NAME=VALUE]... [--timeout SECONDS]
#                        [--expect-output REGEX]... [--forbid-output REGEX]... [--expect-lines N REGEX]...
#                        [--expect-failure]
#                        -- PROGRAM [ARGS...]
# Environment (set by ctest): COLLSHIM_MPIEXEC, COLLSHIM_MPIEXEC_PREFLAGS, COLLSHIM_MPIEXEC_ENVFLAG.
# Variables are exported to mpirun's own environment, as a user would set them, and also passed with
# the launcher's environment flag so the ranks see them whatever the launcher does.
set -u
np=1; timeout_s=120; expect_failure=0; preload=""
envs=(); expects=(); forbids=(); line_counts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --expect-output) expects+=("$2"); shift 2 ;;
    --forbid-output) forbids+=("$2"); shift 2 ;;
    --expect-lines) line_counts+=("$2" "$3"); shift 3 ;;
    --expect-failure) expect_failure=1; shift ;;
    --) shift; break ;;
    *) echo "run_mpi_test.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "run_mpi_test.sh: no program given" >&2; exit 2; }

launcher=("${COLLSHIM_MPIEXEC:?COLLSHIM_MPIEXEC not set}" -np "$np")
# shellcheck disable=SC2206
launcher+=(${COLLSHIM_MPIEXEC_PREFLAGS:-})
envflag=${COLLSHIM_MPIEXEC_ENVFLAG:--x}
# Sanitizer build (COLLSHIM_SANITIZER_PRELOAD from ctest): the ASan/UBSan runtimes come first in
# every rank's LD_PRELOAD, also for programs that link the shim. mpirun itself is not instrumented and
# does not get them, nor the sanitized shim, which cannot load without them.
launcher_only=()
if [ -n "${COLLSHIM_SANITIZER_PRELOAD:-}" ]; then
  launcher_only+=("LD_PRELOAD=$COLLSHIM_SANITIZER_PRELOAD${preload:+:$preload}")
  for name in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
    [ -n "${!name:-}" ] && envs+=("$name=${!name}")
  done
elif [ -n "$preload" ]; then
  envs+=("LD_PRELOAD=$preload")
fi
for assignment in "${launcher_only[@]}"; do
  if [ "$envflag" = "-x" ]; then
    launcher+=(-x "$assignment")
  else
    launcher+=("$envflag" "${assignment%%=*}" "${assignment#*=}")
  fi
done
for assignment in "${envs[@]}"; do
  export "${assignment?}"
  if [ "$envflag" = "-x" ]; then
    launcher+=(-x "$assignment")
  else
    launcher+=("$envflag" "${assignment%%=*}" "${assignment#*=}")
  fi
done

output=$(mktemp)
trap 'rm -f "$output"' EXIT
timeout --kill-after=10 "$timeout_s" "${launcher[@]}" "$@" >"$output" 2>&1
status=$?
cat "$output"
if [ $status -eq 124 ] || [ $status -eq 137 ]; then
  echo "run_mpi_test.sh: TIMEOUT after ${timeout_s}s (a hang)"; exit 1
fi
if [ $expect_failure -eq 1 ]; then
  [ $status -ne 0 ] || { echo "run_mpi_test.sh: expected a non-zero exit, got 0"; exit 1; }
else
  [ $status -eq 0 ] || { echo "run_mpi_test.sh: exit status $status"; exit 1; }
fi
for pattern in "${expects[@]}"; do
  grep -Eq -- "$pattern" "$output" || { echo "run_mpi_test.sh: output lacks /$pattern/"; exit 1; }
done
for pattern in "${forbids[@]}"; do
  if grep -Eq -- "$pattern" "$output"; then echo "run_mpi_test.sh: output has forbidden /$pattern/"; exit 1; fi
done
for ((i = 0; i < ${#line_counts[@]}; i += 2)); do
  want=${line_counts[i]}; pattern=${line_counts[i+1]}
  got=$(grep -Ec -- "$pattern" "$output")
  [ "$got" -eq "$want" ] || { echo "run_mpi_test.sh: /$pattern/ on $got lines, expected $want"; exit 1; }
done
exit 0
