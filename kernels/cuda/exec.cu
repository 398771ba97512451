// exec: the non-template members of DeviceExec (SM count, memset, cub radix sort of pairs).
#include "kernels/cuda/exec.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace tessel::cuda {

int DeviceExec::num_sms() const {
  int dev = 0, n = 0;
  TESSEL_CUDA_CHECK(cudaGetDevice(&dev));
  TESSEL_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

void DeviceExec::zero(void* p, std::size_t bytes) const {
  if (bytes > 0) TESSEL_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));
}

void DeviceExec::sort_pairs(const int* keys_in, int* keys_out, const int* vals_in, int* vals_out,
                            int n, int end_bit) const {
  if (n <= 0) return;
  std::size_t temp_bytes = 0;
  TESSEL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out,
                                                    vals_in, vals_out, n, 0, end_bit, stream));
  DeviceScratch<unsigned char> temp(temp_bytes, stream);
  TESSEL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys_in, keys_out,
                                                    vals_in, vals_out, n, 0, end_bit, stream));
}

}  // namespace tessel::cuda
