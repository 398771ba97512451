// cuda_backend: the Backend of kernels/backend.h on one NVIDIA GPU. The interface is fp32, so
// storage is fp32 on the device and every op runs the float instantiation of the kernels in this
// folder (GEMMs through cuBLASLt in exact fp32, or TF32 tensor cores when allow_tf32). All work is
// queued on one stream the backend owns, in call order; device memory comes from the
// stream-ordered pool (cudaMallocAsync) on that stream, so allocation is cheap after warm-up.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/backend.h"

namespace tessel {

struct CudaBackendOptions {
  int device = -1;          // CUDA ordinal; -1 keeps the current device
  bool allow_tf32 = false;  // fp32 GEMMs on TF32 tensor cores (faster, ~1e-3 relative error)
};

// RuntimeError when there is no usable GPU.
std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options = {});

// The stream a CUDA backend queues its work on (for a communicator that must order its
// collectives with the kernels, e.g. NCCL); nullptr when `backend` is not the CUDA backend.
cudaStream_t cuda_backend_stream(Backend& backend);

}  // namespace tessel
