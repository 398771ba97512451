#include "executor/backends.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "executor/device_communicator.h"
#include "kernels/cpu/cpu_backend.h"

#if defined(TESSEL_HAVE_CUDA)
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device.h"
#endif

namespace tessel {

int gpu_count() {
#if defined(TESSEL_HAVE_CUDA)
    return cuda::device_count();
#else
    return 0;
#endif
}

bool backend_available(const std::string& name) { return name == "cpu" || (name == "cuda" && gpu_count() > 0); }

std::unique_ptr<Backend> make_backend(const std::string& name) {
    if (name == "cpu") return make_cpu_backend(1);  // one BLAS thread per rank: ranks share the cores
    if (name == "cuda") {
#if defined(TESSEL_HAVE_CUDA)
        const int devices = gpu_count();
        if (devices == 0) throw RuntimeError("--backend cuda: no usable CUDA device on this machine");
        // Ranks of a node take its GPUs round robin (several ranks share one when there are more).
        CudaBackendOptions options;
        options.device = local_rank_from_environment().rank % devices;
        return make_cuda_backend(options);
#else
        throw RuntimeError("--backend cuda: this tessel was built without the CUDA toolkit (rebuild with it "
                           "installed, or use --backend cpu)");
#endif
    }
    throw InputError("--backend: expected cpu or cuda, got \"" + name + "\"");
}

}  // namespace tessel
