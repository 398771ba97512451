// The compute backend by name: "cpu" always; "cuda" only in a build with the CUDA backend.
#pragma once

#include <memory>
#include <string>

#include "kernels/backend.h"

namespace tessel {

// RuntimeError for "cuda" when this build has no CUDA backend; InputError for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string& name);
// Whether make_backend(name) can succeed in this build.
bool backend_available(const std::string& name);

}  // namespace tessel

namespace tessel {
// CUDA devices this process can use (0 without the CUDA backend or without a GPU).
int gpu_count();
// Which GPU make_backend("cuda") takes: this host and the PCI bus id of its device (ranks of a
// node take the visible GPUs round robin by node-local rank); "" without a GPU.
std::string gpu_identity();
}  // namespace tessel
