// TimedBackend: a Backend that forwards every call to another and times each kernel where it runs
// inside a real training step — the executor's own sequence of kernels, operands wherever the
// previous kernels left them. With `replays`, each kernel is then run again that many times on
// the same operands, right away, and the median of those is its time alone (warm caches, the
// core to itself): the sum of the alone times against the step is the part of the isolated
// kernels' rates a step keeps, which calibrate needs and a synthetic kernel sequence only
// approximates. Replays repeat accumulating kernels (gradients grow), so a replayed step's
// numbers are for timing only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/kernel_kind_times.h"
#include "kernels/backend.h"

namespace tessel {

struct KernelTally {
    long calls = 0;
    double in_step_seconds = 0;  // each call where the step ran it
    double alone_seconds = 0;    // each call's median replay (0 without replays)
};

struct KernelTimes {
    int replays = 0;  // replays per call; 0: time in place only
    std::map<std::string, KernelTally> by_kernel;  // "matmul_forward N=256 C=128 OC=384"
    double in_step_seconds() const;
    double alone_seconds() const;
    void clear() { by_kernel.clear(); }
};

// The tally summed by kind of kernel, the simulator's split: matmul_* are GEMMs, attention_*
// attention, and every other kernel bandwidth-bound; host-device uploads and downloads (the
// batch in, the loss out) are transfers, not kernels, and are left out.
KernelKindTimes kernel_time_by_kind(const KernelTimes& times);

// `times` must outlive the returned backend; it owns `inner`.
std::unique_ptr<Backend> make_timed_backend(std::unique_ptr<Backend> inner, KernelTimes* times);

}  // namespace tessel
