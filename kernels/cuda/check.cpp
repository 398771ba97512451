// check: builds the messages of the TESSEL_*_CHECK macros and throws tessel::RuntimeError.
// Format: "<call> failed at <file>:<line> on <host> (device <n>): <error name>: <description>".
#include "kernels/cuda/check.h"

#include <unistd.h>

#include <string>

#include "core/errors.h"

namespace tessel::cuda::detail {
namespace {

std::string where(const char* call, const char* file, int line) {
  char host[256] = "?";
  if (gethostname(host, sizeof host) != 0) host[0] = '?', host[1] = '\0';
  host[sizeof host - 1] = '\0';
  int dev = -1;
  // Not checked: this runs while reporting another error, and -1 says "unknown" well enough.
  (void)cudaGetDevice(&dev);
  return std::string(call) + " failed at " + file + ":" + std::to_string(line) + " on " + host +
         " (device " + std::to_string(dev) + ")";
}

}  // namespace

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(where(call, file, line) + ": " + cudaGetErrorName(err) + ": " +
                     cudaGetErrorString(err));
}

void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  std::string hint;
  if (st == CUBLAS_STATUS_NOT_SUPPORTED)
    hint = " (HINT: no cuBLASLt algorithm for this shape/type/alignment/epilogue)";
  throw RuntimeError(where(call, file, line) + ": " + cublasLtGetStatusName(st) + ": " +
                     cublasLtGetStatusString(st) + hint);
}

void throw_nccl_error(ncclResult_t res, const char* call, const char* file, int line) {
  const char* last = ncclGetLastError(nullptr);
  throw RuntimeError(where(call, file, line) + ": " + ncclGetErrorString(res) +
                     (last != nullptr && *last != '\0' ? std::string(": ") + last : std::string()));
}

}  // namespace tessel::cuda::detail
