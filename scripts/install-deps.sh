#!/usr/bin/env bash
# Installs tessel's build and test dependencies from Debian's packages (nothing else is fetched).
# clang and libclang-rt-dev (its sanitizer and libFuzzer runtimes) serve scripts/fuzz.sh.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  nlohmann-json3-dev libcli11-dev libfmt-dev libboost-graph-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libopenblas-dev libopenmpi-dev openmpi-bin \
  clang libclang-rt-dev
