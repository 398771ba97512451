// calibrate's collective benchmarks over the job's ranks, through the Communicator interface (MPI
// on the CPU backend; NCCL where the CUDA backend provides one): all-reduce, all-gather,
// reduce-scatter and send/recv across message sizes, timed like nccl-tests and reported with
// nccl-tests' algbw and busbw (simulator/collectives.h holds their definitions).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "executor/calibrate_timing.h"
#include "executor/communicator.h"
#include "kernels/backend.h"
#include "simulator/collectives.h"

namespace tessel {

struct CollectiveSweep {
    std::vector<std::size_t> sizes_bytes;  // S, nccl-tests' "size" column
    double min_seconds = 0.05;             // per size: time bursts of calls until this long...
    int min_iterations = 5;                // ...and at least this many bursts
    static CollectiveSweep standard();
    static CollectiveSweep quick();
};

// One line of the table. `bytes` is S (the whole buffer: the gathered output of all-gather, the
// input of reduce-scatter, one message of send/recv); `count` its fp32 elements.
struct CollectiveSample {
    Collective op = Collective::all_reduce;
    int ranks = 1;
    double bytes = 0;
    std::size_t count = 0;
    double seconds = 0;  // one call: the median over calls of the slowest rank's time
    double algbw_GBps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
    double busbw_GBps() const { return seconds > 0 ? bus_bandwidth(op, ranks, bytes, seconds) / 1e9 : 0; }
};

// The collectives measure_collectives runs, in order.
inline constexpr Collective kCalibratedCollectives[] = {Collective::all_reduce, Collective::all_gather,
                                                        Collective::reduce_scatter, Collective::send_recv};

// Collective over `comm` (every rank calls it); empty for a group of one.
std::vector<CollectiveSample> measure_collectives(Backend& backend, Communicator& comm, const CollectiveSweep& sweep,
                                                  const std::function<void(const std::string&)>& progress);

// The nccl-tests-like table of one collective's samples (size, count, type, redop, time, algbw, busbw).
std::string collective_table(const std::vector<CollectiveSample>& samples, Collective op);

}  // namespace tessel
