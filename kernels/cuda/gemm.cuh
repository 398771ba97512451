// gemm: the bias gradient of matmul_backward, dbias(OC) += column sums of dout(N, OC), through the
// deterministic column reduction (the GEMMs themselves are cuBLASLt calls in gemm.cu).
#pragma once

#include <cstddef>

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

template <typename S>
struct BiasGrad {
  static constexpr int K = 1;
  const S* dout;
  int OC;
  TESSEL_HD void operator()(int r, int c, float* acc) const {
    acc[0] += to_f32(dout[static_cast<std::size_t>(r) * OC + c]);
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename S>
void bias_backward(Exec& ex, S* dbias, const S* dout, int N, int OC) {
  S* const outs[1] = {dbias};
  column_reduce(ex, ops::BiasGrad<S>{dout, OC}, outs, N, OC);
}

}  // namespace impl
}  // namespace tessel::cuda
