// device: the host's view of the GPUs — how many there are (0 on any error, so tests can skip),
// the current device's properties with datasheet peaks (for benchmarks' % of peak), and
// DeviceArray<T>, an owning device buffer with synchronous upload/download (tests, benches).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "kernels/cuda/check.h"

namespace tessel::cuda {

// Number of usable CUDA devices; 0 when there is no driver, no device, or any error. Never throws.
int device_count() noexcept;

struct DeviceInfo {
  std::string name;
  int ordinal = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  // Dense peaks from the vendor datasheet for the recognised parts, 0 when unknown.
  double peak_bf16_tflops = 0.0;
  double peak_fp32_tflops = 0.0;
  double peak_memory_GBps = 0.0;
};

// Properties of the current device. Throws RuntimeError when there is none.
DeviceInfo device_info();

// The PCI bus id of CUDA device `ordinal` ("0000:1b:00.0"): the same GPU reads the same in every
// process of its host, whatever CUDA_VISIBLE_DEVICES renumbered. Throws RuntimeError on error.
std::string pci_bus_id(int ordinal);

// Lets the current device's default memory pool keep freed blocks instead of returning them to
// the driver at every synchronization (its default release threshold is 0 bytes), so that
// stream-ordered allocations (cudaMallocAsync) are served from the pool after warm-up.
void set_pool_retention();

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n) {
    if (n > 0) TESSEL_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() {
    if (p_ != nullptr) (void)cudaFree(p_);  // a destructor must not throw
  }
  DeviceArray(DeviceArray&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return p_; }
  std::size_t size() const { return n_; }

  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw RuntimeError("DeviceArray::upload: size mismatch");
    if (n_ > 0)
      TESSEL_CUDA_CHECK(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_ > 0)
      TESSEL_CUDA_CHECK(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace tessel::cuda
