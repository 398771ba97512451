// cpu_backend: the Backend (kernels/backend.h) on the CPU — host memory from a caching allocator
// and the kernels/cpu free functions (fp32, OpenBLAS). One BLAS thread per process by default:
// under MPI every rank is a process, and ranks share the cores.
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace tessel {

std::unique_ptr<Backend> make_cpu_backend(int blas_threads = 1);

}  // namespace tessel
