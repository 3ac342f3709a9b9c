#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing collshim needs. Run as root.
# lmod: the module tool the installed environment modules are tested with (it reads the Lua and
# the Tcl modulefile; Debian's environment-modules, which conflicts with it, would do for the Tcl one).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  build-essential cmake pkg-config ca-certificates python3 clang-format \
  libopenmpi-dev openmpi-bin libmpich-dev mpich \
  libhwloc-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libgtest-dev libcli11-dev \
  libsimgrid-dev simgrid python3-matplotlib \
  gfortran \
  valgrind \
  lmod
