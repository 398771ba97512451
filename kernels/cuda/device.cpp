// device: device_count (never throws) and device_info with a small table of datasheet peaks.
#include "kernels/cuda/device.h"

#include <cstdint>

namespace tessel::cuda {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error for later callers
    return 0;
  }
  return n;
}

std::string pci_bus_id(int ordinal) {
  char id[32] = {};
  TESSEL_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, ordinal));
  return id;
}

namespace {

bool has(const std::string& s, const char* sub) { return s.find(sub) != std::string::npos; }

// Dense (no sparsity) tensor-core bf16, plain fp32 (no TF32) and HBM bandwidth.
void set_peaks(DeviceInfo& d) {
  const double gib = static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  if (has(d.name, "H200")) {
    // NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: 989 bf16, 67 fp32, 4.8 TB/s.
    d.peak_bf16_tflops = 989, d.peak_fp32_tflops = 67, d.peak_memory_GBps = 4800;
  } else if (has(d.name, "H100") && has(d.name, "PCIe")) {
    // NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe: 756 bf16, 51 fp32, 2.0 TB/s.
    d.peak_bf16_tflops = 756, d.peak_fp32_tflops = 51, d.peak_memory_GBps = 2000;
  } else if (has(d.name, "H100") && has(d.name, "NVL")) {
    // NVIDIA H100 datasheet (2023), H100 NVL: 835 bf16, 60 fp32, 3.9 TB/s.
    d.peak_bf16_tflops = 835, d.peak_fp32_tflops = 60, d.peak_memory_GBps = 3900;
  } else if (has(d.name, "H100")) {
    // NVIDIA H100 Tensor Core GPU datasheet (2023), SXM: 989 bf16, 67 fp32, 3.35 TB/s.
    d.peak_bf16_tflops = 989, d.peak_fp32_tflops = 67, d.peak_memory_GBps = 3350;
  } else if (has(d.name, "A100")) {
    // NVIDIA A100 Tensor Core GPU datasheet (2021): 312 bf16, 19.5 fp32; HBM2e 2039 GB/s
    // (80GB SXM), 1935 GB/s (80GB PCIe), 1555 GB/s (40GB).
    d.peak_bf16_tflops = 312, d.peak_fp32_tflops = 19.5;
    d.peak_memory_GBps = gib > 60 ? (has(d.name, "PCIe") ? 1935 : 2039) : 1555;
  }
}

}  // namespace

DeviceInfo device_info() {
  DeviceInfo d;
  TESSEL_CUDA_CHECK(cudaGetDevice(&d.ordinal));
  cudaDeviceProp p{};
  TESSEL_CUDA_CHECK(cudaGetDeviceProperties(&p, d.ordinal));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.memory_bytes = p.totalGlobalMem;
  set_peaks(d);
  return d;
}

void set_pool_retention() {
  int dev = 0;
  TESSEL_CUDA_CHECK(cudaGetDevice(&dev));
  cudaMemPool_t pool;
  TESSEL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = UINT64_MAX;
  TESSEL_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

}  // namespace tessel::cuda
