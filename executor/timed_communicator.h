// TimedCommunicator: a Communicator that forwards every call to another and adds the seconds the
// call took (waiting included) to a counter. The trainer wraps each process group in one, so a
// measured step splits into the time its rank spent in tensor-, context-, pipeline- and
// data-parallel communication and the rest (its compute).
#pragma once

#include <memory>

#include "executor/communicator.h"

namespace tessel {

// `seconds` must outlive the communicator; nullptr inner gives nullptr.
std::unique_ptr<Communicator> make_timed_communicator(std::unique_ptr<Communicator> inner, double* seconds);

}  // namespace tessel
