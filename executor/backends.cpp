#include "executor/backends.h"

#include "core/errors.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {

bool backend_available(const std::string& name) { return name == "cpu"; }

std::unique_ptr<Backend> make_backend(const std::string& name) {
    if (name == "cpu") return make_cpu_backend(1);  // one BLAS thread per rank: ranks share the cores
    if (name == "cuda")
        throw RuntimeError("--backend cuda: the CUDA kernels and the NCCL communicator are built, but the "
                           "executor does not run on them yet (host-staged MPI for ranks sharing one GPU and "
                           "the NCCL bootstrap are still to be wired and tested on a GPU); use --backend cpu");
    throw InputError("--backend: expected cpu or cuda, got \"" + name + "\"");
}

}  // namespace tessel
