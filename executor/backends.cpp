#include "executor/backends.h"

#include "core/errors.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {

bool backend_available(const std::string& name) { return name == "cpu"; }

std::unique_ptr<Backend> make_backend(const std::string& name) {
    if (name == "cpu") return make_cpu_backend(1);  // one BLAS thread per rank: ranks share the cores
    if (name == "cuda")
        throw RuntimeError("--backend cuda: this tessel was built without the CUDA executor backend "
                           "(it is not implemented yet); use --backend cpu");
    throw InputError("--backend: expected cpu or cuda, got \"" + name + "\"");
}

}  // namespace tessel
