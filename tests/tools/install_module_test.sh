#!/usr/bin/env bash
# A site sets collshim up once: `cmake --install` into a temporary prefix, then, through the installed
# environment modules (the Lmod .lua and the Tcl modulefile, loaded by Debian's module tool), PATH
# gains the install's bin/, COLLSHIM_LIBRARY names the installed shim (LD_PRELOAD is left alone), and
# the tools found on that PATH resolve the platform description as a job does: no site default at
# first; `collshim-tune calibrate --install` (a fake launcher printing a shipped description) writes
# it to PREFIX/etc/collshim/platform.yaml and says so; `collshim-config explain` and
# `collshim-model predict` then use it, COLLSHIM_PLATFORM=none switches it off, and a broken one is
# refused with its file, line and column, named as the site default. No MPI is started.
# Exit 77 (ctest: skipped) only where no module tool is installed (Debian: lmod, or
# environment-modules; the two conflict).
# usage: install_module_test.sh BUILD_DIR
set -uo pipefail
build=$1
lmod_init=/usr/share/lmod/lmod/init/bash
tcl_init=/usr/share/modules/init/bash
if [ ! -r "$lmod_init" ] && [ ! -r "$tcl_init" ]; then
  echo "install_module_test: SKIPPED: no module tool ($lmod_init from Debian's lmod, or $tcl_init from" \
    "environment-modules): tools/install-deps.sh installs lmod"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$(readlink -f "$work")/prefix
timeout 120 cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "FAILED: cmake --install"; exit 1; }
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

modules="$prefix/share/modulefiles"
version=$(basename "$(ls "$modules"/collshim/*.lua)" .lua)
for f in "$modules/collshim/$version.lua" "$modules/collshim/$version"; do
  [ -f "$f" ] || fail "$f is not installed"
done
grep -q 'LD_PRELOAD' "$modules/collshim/$version" && ! grep -Eq '^(setenv|prepend-path|append-path) +LD_PRELOAD' \
  "$modules/collshim/$version" || fail "the Tcl modulefile must document LD_PRELOAD and not set it"
grep -q 'LD_PRELOAD' "$modules/collshim/$version.lua" && ! grep -Eq '(setenv|prepend_path|append_path)\("LD_PRELOAD' \
  "$modules/collshim/$version.lua" || fail "the Lua module must document LD_PRELOAD and not set it"
# The Tcl file alone, so that Lmod (which prefers the .lua beside it) reads it too.
mkdir -p "$work/tcl-only/collshim"
cp "$modules/collshim/$version" "$work/tcl-only/collshim/"

# in_module INIT MODULEPATH SCRIPT [ARG...]: SCRIPT (with ARGs as its "$@") in a clean bash after
# `module load collshim`.
in_module() {
  local init=$1 path=$2 script=$3
  shift 3
  env -u MODULEPATH -u LOADEDMODULES -u _LMFILES_ -u MODULESHOME -u LMOD_CMD -u COLLSHIM_PLATFORM \
    -u COLLSHIM_LIBRARY -u LD_PRELOAD HOME="$work" \
    timeout 60 bash --noprofile --norc -c 'source "$1" >/dev/null 2>&1; module use "$2" && module load collshim || exit 3
shift 2; eval "$0"' "$script" "$init" "$path" "$@"
}

# Each module, through each tool there is: Lmod reads both files, Environment Modules the Tcl one.
loads=()
[ -r "$lmod_init" ] && loads+=("lmod lua $lmod_init $modules" "lmod tcl $lmod_init $work/tcl-only")
[ -r "$tcl_init" ] && loads+=("environment-modules tcl $tcl_init $modules")
for load in "${loads[@]}"; do
  read -r tool kind init path <<<"$load"
  what="$tool loading the $kind module"
  # shellcheck disable=SC2016
  text=$(in_module "$init" "$path" 'echo "PATH=$PATH"; echo "LIB=$COLLSHIM_LIBRARY";
    echo "CONFIG=$(command -v collshim-config)"; echo "PKG=$PKG_CONFIG_PATH"; echo "CMAKE=$CMAKE_PREFIX_PATH:"; echo "PRELOAD=${LD_PRELOAD:-}"')
  status=$?
  echo "$what:"
  echo "$text"
  [ "$status" -eq 0 ] || fail "$what: module load exited $status"
  grep -q "^PATH=$prefix/bin:" <<<"$text" || fail "$what: PATH does not start with $prefix/bin"
  grep -q "^CMAKE=$prefix:" <<<"$text" || fail "$what: CMAKE_PREFIX_PATH does not start with $prefix"
  grep -q "^CONFIG=$prefix/bin/collshim-config$" <<<"$text" || fail "$what: collshim-config is not the installed one"
  grep -q "^PRELOAD=$" <<<"$text" || fail "$what: the module set LD_PRELOAD"
  library=$(sed -n 's/^LIB=//p' <<<"$text")
  [ -f "$library" ] && [ "${library#"$prefix"/}" != "$library" ] && [ "$(basename "$library")" = libcollshim.so ] ||
    fail "$what: COLLSHIM_LIBRARY ($library) is not the installed libcollshim.so"
  pkg=$(sed -n 's/^PKG=//p' <<<"$text")
  [ -f "${pkg%%:*}/collshim.pc" ] || fail "$what: PKG_CONFIG_PATH does not start with the installed collshim.pc's folder"
  help=$(in_module "$init" "$path" 'module help collshim 2>&1')
  grep -q 'mpirun -x LD_PRELOAD=\$COLLSHIM_LIBRARY' <<<"$help" || fail "$what: module help does not say how to preload"
done

# The platform a job of this install uses, as the module's tools see it.
lmod_or_tcl=$lmod_init
[ -r "$lmod_init" ] || lmod_or_tcl=$tcl_init
site="$prefix/etc/collshim/platform.yaml"
call=(collshim-config explain --collective allgather --procs 16 --nodes 2 --mapping sequential --block-bytes 1KiB
  --library smpi-ompi)
# check NAME WANT_STATUS REGEX FORBIDDEN_REGEX -- COMMAND...: COMMAND under the module exits
# WANT_STATUS, prints a line matching REGEX and none matching FORBIDDEN_REGEX (unless empty).
check() {
  local name=$1 want=$2 regex=$3 forbidden=$4 text status=0
  shift 5
  text=$(in_module "$lmod_or_tcl" "$modules" '"$@"' "$@" 2>&1) || status=$?
  if [ "$status" -ne "$want" ] || ! grep -Eq -- "$regex" <<<"$text" ||
     { [ -n "$forbidden" ] && grep -Eq -- "$forbidden" <<<"$text"; }; then
    fail "$name: exit $status (expected $want), output:"
    echo "$text"
  else
    echo "ok: $name: $(grep -E -- "$regex" <<<"$text" | head -n 1)"
  fi
}

check "no site default yet" 0 "^platform: none \(COLLSHIM_PLATFORM is unset and there is no site default at $site\)$" \
  "^cost model:" -- "${call[@]}"

# calibrate --install: a prefix whose etc/ cannot be made a directory is refused (exit 2, nothing
# written); otherwise the description is written to the site default and the tool says where.
layout='# collshim-bench --calibrate: 18 ranks on 2 node(s), at most 16 on one node'
description="$prefix/share/collshim/platforms/fattree-contending.yaml"
cat >"$work/fake-launcher" <<LAUNCHER
#!/bin/sh
echo '$layout'
echo '# collshim-bench --calibrate: the description follows'
cat '$description'
echo '# collshim-bench --calibrate: end of the description'
LAUNCHER
chmod +x "$work/fake-launcher"
touch "$prefix/etc"
check "calibrate --install where the directory cannot be made" 2 \
  "^collshim-tune calibrate: error: --install $site: cannot create the directory $prefix/etc/collshim \(.*\); run this as a user who may write there, or calibrate with -o FILE and copy the file to $site$" \
  "" -- collshim-tune calibrate --install -- "$work/fake-launcher"
rm -f "$prefix/etc"
check "calibrate --install" 0 \
  "^collshim-tune calibrate: $site is this installation's site default: every job reads it where COLLSHIM_PLATFORM is unset" \
  "^export COLLSHIM_PLATFORM" -- collshim-tune calibrate --install -- "$work/fake-launcher"
cmp -s "$description" "$site" || fail "calibrate --install did not write the description to $site"

check "the site default decides" 0 "^platform: $site \(the site default: COLLSHIM_PLATFORM is unset\)$" "" -- "${call[@]}"
check "the model costs with the site default" 0 "^cost model: platform $site \(fattree-contending\)" "" -- "${call[@]}"
# The same from explain's JSON (what scripts read): the description and why, and the model's file.
json=$(in_module "$lmod_or_tcl" "$modules" '"$@"' "${call[@]}" --json)
read_json='
import json, sys
explained = json.load(sys.stdin)
site = sys.argv[1]
assert explained["platform"]["file"] == site, explained["platform"]
assert explained["platform"]["origin"] == site + " (the site default: COLLSHIM_PLATFORM is unset)", explained["platform"]
assert explained["model"]["platform_file"] == site, explained["model"]
'
python3 -c "$read_json" "$site" <<<"$json" || fail "explain --json does not name the site default as the platform"
check "collshim-model predict takes the site default" 0 "platform fattree-contending" "" -- \
  collshim-model predict --procs 16 --ppn 8 --collective allgather --bytes 1KiB
check "COLLSHIM_PLATFORM=none switches it off" 0 \
  "^platform: none \(COLLSHIM_PLATFORM=none: the cost model is off for this job; the site default $site is not read\)$" \
  "^cost model:" -- env COLLSHIM_PLATFORM=none "${call[@]}"
check "COLLSHIM_PLATFORM names another file" 0 "^platform: $description \(COLLSHIM_PLATFORM\)$" "" -- \
  env COLLSHIM_PLATFORM="$description" "${call[@]}"
printf 'name: broken\nshm: {overhead_us: [unclosed\n' >"$site"
check "a broken site default is refused as such" 1 \
  "^collshim-config: error: the site default platform description \(COLLSHIM_PLATFORM is unset; COLLSHIM_PLATFORM=none runs without it\): $site:[0-9]+:[0-9]+: " \
  "" -- "${call[@]}"
check "none runs without the broken site default" 0 "^platform: none \(COLLSHIM_PLATFORM=none" "" -- \
  env COLLSHIM_PLATFORM=none "${call[@]}"

if [ "$failures" -eq 0 ]; then
  echo "install_module_test: passed (${#loads[@]} module loads)"
else
  echo "install_module_test: $failures FAILED"
  exit 1
fi
