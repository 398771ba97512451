// host_staged_communicator: a Communicator over device buffers built on one that moves host
// buffers (MPI without CUDA awareness). Each call copies its device operands to host memory,
// runs the host communicator, and copies the result back. It is how several ranks share one GPU
// (NCCL refuses two ranks on one device) and how a GPU job runs where NCCL is not available: the
// copies cost PCIe time, which a measured step then shows as communication.
#pragma once

#include <memory>

#include "executor/communicator.h"
#include "kernels/backend.h"

namespace tessel {

// `backend` must outlive the result (and every communicator split from it).
std::unique_ptr<Communicator> make_host_staged_communicator(std::unique_ptr<Communicator> host, Backend& backend);

}  // namespace tessel
