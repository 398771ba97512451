// check: one checking macro per GPU API — TESSEL_CUDA_CHECK (runtime), TESSEL_CUBLAS_CHECK
// (cuBLAS/cuBLASLt), TESSEL_NCCL_CHECK — each names the failed call, the file, the line, the host
// and the device, and throws tessel::RuntimeError. Library code never exits; the CLI maps the
// exception to exit code 1. TESSEL_CUDA_CHECK_LAUNCH() checks the kernel launch just made.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

namespace tessel::cuda::detail {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* call, const char* file,
                                     int line);
[[noreturn]] void throw_nccl_error(ncclResult_t res, const char* call, const char* file, int line);

}  // namespace tessel::cuda::detail

#define TESSEL_CUDA_CHECK(call)                                                              \
  do {                                                                                       \
    const cudaError_t tessel_err_ = (call);                                                  \
    if (tessel_err_ != cudaSuccess)                                                          \
      ::tessel::cuda::detail::throw_cuda_error(tessel_err_, #call, __FILE__, __LINE__);      \
  } while (0)

#define TESSEL_CUBLAS_CHECK(call)                                                            \
  do {                                                                                       \
    const cublasStatus_t tessel_st_ = (call);                                                \
    if (tessel_st_ != CUBLAS_STATUS_SUCCESS)                                                 \
      ::tessel::cuda::detail::throw_cublas_error(tessel_st_, #call, __FILE__, __LINE__);     \
  } while (0)

#define TESSEL_NCCL_CHECK(call)                                                              \
  do {                                                                                       \
    const ncclResult_t tessel_res_ = (call);                                                 \
    if (tessel_res_ != ncclSuccess)                                                          \
      ::tessel::cuda::detail::throw_nccl_error(tessel_res_, #call, __FILE__, __LINE__);      \
  } while (0)

// After a <<<...>>> launch: configuration errors surface here, execution errors at the next sync.
#define TESSEL_CUDA_CHECK_LAUNCH() TESSEL_CUDA_CHECK(cudaGetLastError())
