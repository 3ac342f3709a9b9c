#!/usr/bin/env bash
# bench/sim/describe_platform.py refuses other shapes of platform file with what it expected (exit 1):
# a torus of multi-core hosts, and a single cluster of single-core hosts.
# Usage: model_describe_platform_refuses_test.sh DESCRIBE_PLATFORM WORK_DIR
set -eu
describe=$1
work=$2
# expect_refusal FILE MESSAGE: describe_platform FILE exits 1 and says MESSAGE.
expect_refusal() {
  local status=0 out
  out=$("$describe" "$1" 2>&1) || status=$?
  echo "$out"
  [ $status -eq 1 ] || { echo "FAIL: exit status $status, expected 1" >&2; exit 1; }
  grep -q "$2" <<<"$out" || { echo "FAIL: no '$2'" >&2; exit 1; }
}
printf '%s\n' '<platform version="4.1"><zone id="z" routing="Full">' \
  '<cluster id="t" prefix="t-" suffix="" radical="0-7" speed="1Gf" core="4" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="2,2,2" loopback_bw="5GBps" loopback_lat="1us"/>' \
  '</zone></platform>' >"$work/torus.xml"
expect_refusal "$work/torus.xml" 'torus.xml: cluster t has topology TORUS; expected FLAT or FAT_TREE'
sed 's/ core="4"//; s/ topology="TORUS" topo_parameters="2,2,2"//' "$work/torus.xml" >"$work/single.xml"
expect_refusal "$work/single.xml" 'single.xml: 1 <cluster>; expected a contending platform'
