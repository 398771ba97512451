#include "executor/backends.h"

#include <unistd.h>

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

#if defined(TESSEL_HAVE_CUDA)
namespace {
// Ranks of a node take its GPUs round robin (several ranks share one when there are more).
int chosen_device(int devices) { return node_local_rank().rank % devices; }
}  // namespace
#endif

std::string gpu_identity() {
#if defined(TESSEL_HAVE_CUDA)
    const int devices = gpu_count();
    if (devices == 0) return "";
    char host[256] = {};
    (void)gethostname(host, sizeof host - 1);
    return fmt::format("{}/{}", host, cuda::pci_bus_id(chosen_device(devices)));
#else
    return "";
#endif
}

bool backend_available(const std::string& name) { return name == "cpu" || (name == "cuda" && gpu_count() > 0); }

std::unique_ptr<Backend> make_backend(const std::string& name) {
    if (name == "cpu") return make_cpu_backend(1);  // one BLAS thread per rank: ranks share the cores
    if (name == "cuda") {
#if defined(TESSEL_HAVE_CUDA)
        const int devices = gpu_count();
        if (devices == 0) throw RuntimeError("--backend cuda: no usable CUDA device on this machine");
        CudaBackendOptions options;
        options.device = chosen_device(devices);
        return make_cuda_backend(options);
#else
        throw RuntimeError("--backend cuda: this tessel was built without the CUDA toolkit (rebuild with it "
                           "installed, or use --backend cpu)");
#endif
    }
    throw InputError("--backend: expected cpu or cuda, got \"" + name + "\"");
}

}  // namespace tessel
