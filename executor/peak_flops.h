// The FLOP rate MFU is measured against when no cluster profile gives one: the best of a few
// timed square GEMMs (1024^3, 2·1024^3 FLOPs each) through the backend's matmul, as the BLAS
// reaches it with this process's threads.
#pragma once

#include "executor/device_buffer.h"

namespace tessel {

// TFLOP/s; runs for about `seconds`.
double measure_matmul_tflops(const DeviceMemory& mem, double seconds = 0.5, int size = 1024);

}  // namespace tessel
