// tessel calibrate: measures the machine it runs on — kernels through the Backend, collectives
// through the job's Communicator — and writes a cluster JSON whose `profile` object the simulator
// uses in place of its defaults (simulator/hardware_efficiency.h), with the measured gpu keys
// (peak_tflops.fp32, memory_GiB, memory_bandwidth_GBps) and the link between the ranks.
//
// Every rank measures the kernels at the same time (they share the machine as they will while
// training) and the figures are the mean over ranks; one rank alone measures compute only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "executor/calibrate_collectives.h"
#include "executor/calibrate_fit.h"
#include "executor/calibrate_kernels.h"
#include "executor/communicator.h"
#include "kernels/backend.h"

namespace tessel {

struct CalibrateOptions {
    std::string backend = "cpu";
    bool quick = false;        // a few seconds, for tests
    std::string name = "cpu";  // the cluster's name
    double memory_GiB = 0;     // per rank; 0: the host's memory shared by the ranks (CPU backend)
    int sm_count = 0;          // parallel units of one rank; 0: the CPU backend's BLAS threads (1)
    // Rank 0, before each measurement: "[ 3/57] gemm 256x512x128 (mlp_up)".
    std::function<void(int done, int total, const std::string& what)> progress;
};

struct Calibration {
    std::string backend, device, date;
    int ranks = 1;
    bool quick = false;
    double memory_GiB = 0;
    KernelMeasurements kernels;  // the mean over ranks
    std::vector<CollectiveSample> collectives;
    FittedProfile fit;
};

// Collective over `world`: every rank gets the same result.
Calibration calibrate(const CalibrateOptions& o, Backend& backend, Communicator& world);

// The cluster JSON (DESIGN.md "Cluster" with a `profile`), as parse_cluster reads it.
json to_cluster_json(const Calibration& c, const std::string& name);
// Every measurement, for the record (reports/).
json to_raw_json(const Calibration& c);
// What was measured and fitted, as text: the kernel figures and nccl-tests-like tables.
std::string calibration_report(const Calibration& c);

}  // namespace tessel
