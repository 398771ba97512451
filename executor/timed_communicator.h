// TimedCommunicator: a Communicator that forwards every call to another and adds the seconds the
// call took (waiting included) to a counter. The trainer wraps each process group in one, so a
// measured step splits into the time its rank spent in tensor-, context-, pipeline- and
// data-parallel communication and the rest (its compute).
//
// A communicator that only queues its work (NCCL on a GPU stream) returns before the transfer
// runs, so its host time says nothing. Given `queue`, each call synchronizes it first, so that the
// kernels queued before are billed to compute, and again after, so that the transfer is billed to
// communication: a host round trip per call, microseconds beside the transfers. Posting a
// point-to-point transfer and polling it do not synchronize; waiting for it does.
#pragma once

#include <memory>

#include "executor/communicator.h"
#include "kernels/backend.h"

namespace tessel {

// `seconds` (and `queue`, when given) must outlive the communicator; nullptr inner gives nullptr.
std::unique_ptr<Communicator> make_timed_communicator(std::unique_ptr<Communicator> inner, double* seconds,
                                                      Backend* queue = nullptr);

}  // namespace tessel
