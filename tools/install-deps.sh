#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing collshim needs. Run as root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  build-essential cmake pkg-config ca-certificates python3 clang-format \
  libopenmpi-dev openmpi-bin libmpich-dev mpich \
  libhwloc-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libgtest-dev libcli11-dev \
  libsimgrid-dev simgrid python3-matplotlib \
  gfortran \
  valgrind
