#!/usr/bin/env bash
# Configures and builds tessel into build/ (Release). Extra arguments go to the CMake configure
# step, e.g. scripts/build.sh -DTESSEL_ENABLE_CUDA=OFF. The CUDA backend builds when a CUDA
# toolkit with NCCL is found; everything else builds and tests without one.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TESSEL_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" -j "$(nproc)"
