#include "executor/calibrate_collectives.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "executor/device_buffer.h"

namespace tessel {

namespace {

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// Times `call` in bursts, as a step calls its collectives: the ranks meet (a barrier, as the
// step's previous collective leaves them), then `burst` calls run back to back (each on its own
// buffer, see below). One call's seconds: the median over bursts of the slowest rank's burst time
// over `burst`. The median, not the mean: a rank the operating system descheduled for a few
// milliseconds would otherwise dominate a microsecond collective's figure.
double time_collective(Backend& be, Communicator& comm, const CollectiveSweep& sweep, int burst,
                       const std::function<void()>& call) {
    comm.barrier();
    for (int i = 0; i < burst; ++i) call();  // warm-up: connections, registration, first-touch
    be.synchronize();
    comm.barrier();
    auto t0 = clock_type::now();
    for (int i = 0; i < burst; ++i) call();
    be.synchronize();
    double first = since(t0);
    comm.all_reduce_host(&first, 1, ReduceOp::max);  // every rank agrees on the number of bursts
    const int bursts = std::clamp(int(std::ceil(sweep.min_seconds / std::max(first, 1e-9))), sweep.min_iterations, 1000);
    std::vector<double> each(std::size_t(bursts), 0.0);
    for (double& t : each) {
        comm.barrier();
        t0 = clock_type::now();
        for (int i = 0; i < burst; ++i) call();
        be.synchronize();
        t = since(t0) / burst;
    }
    comm.all_reduce_host(each.data(), each.size(), ReduceOp::max);
    std::sort(each.begin(), each.end());
    const std::size_t n = each.size();
    return n % 2 ? each[n / 2] : 0.5 * (each[n / 2 - 1] + each[n / 2]);
}

}  // namespace

CollectiveSweep CollectiveSweep::standard() {
    CollectiveSweep s;
    for (std::size_t b = 1024; b <= (std::size_t(16) << 20); b *= 4) s.sizes_bytes.push_back(b);
    s.min_seconds = 0.1;
    s.min_iterations = 5;
    return s;
}

CollectiveSweep CollectiveSweep::quick() {
    CollectiveSweep s;
    s.sizes_bytes = {4096, 65536, 1 << 20};
    s.min_seconds = 0.005;
    s.min_iterations = 3;
    return s;
}

std::vector<CollectiveSample> measure_collectives(Backend& be, Communicator& comm, const CollectiveSweep& sweep,
                                                  const std::function<void(const std::string&)>& progress) {
    std::vector<CollectiveSample> out;
    const int n = comm.size();
    if (n < 2) return out;
    const int me = comm.rank(), next = (me + 1) % n, prev = (me + n - 1) % n;
    const DeviceMemory mem{&be, nullptr};
    comm.prepare_neighbour_transfers();  // the sendrecv below goes to the next rank, from the previous
    for (Collective op : kCalibratedCollectives) {
        for (std::size_t size : sweep.sizes_bytes) {
            // Whole elements, and for the gathering collectives a whole number per rank.
            std::size_t count = std::max<std::size_t>(size / sizeof(float), 1);
            const bool sharded = op == Collective::all_gather || op == Collective::reduce_scatter;
            if (sharded) count = std::max<std::size_t>(count / n, 1) * n;
            const std::size_t shard = count / n;
            if (progress) progress(fmt::format("{} {} bytes", to_string(op), count * sizeof(float)));
            // A step calls each collective on a different buffer (every layer's gradients, every
            // microbatch's activations), and MPI's cost per call may depend on it (caches keyed
            // by address): the calls of a burst rotate over several buffers, as many as fit in
            // 256 MiB, up to 8.
            const std::size_t copies = std::clamp<std::size_t>((std::size_t(256) << 20) / (2 * count * sizeof(float)), 1, 8);
            std::vector<DeviceArray<float>> as, bs;
            for (std::size_t i = 0; i < copies; ++i) {
                as.emplace_back(mem, count, MemoryKind::buffers);
                bs.emplace_back(mem, count, MemoryKind::buffers);
                be.fill(as.back().data(), 1.0f, count);
                be.fill(bs.back().data(), 0.0f, count);
            }
            std::size_t turn = 0;
            std::function<void()> call = [&] {
                float* a = as[turn % copies].data();
                float* b = bs[turn % copies].data();
                ++turn;
                switch (op) {
                    case Collective::all_reduce: comm.all_reduce(a, count, ReduceOp::sum); break;
                    case Collective::all_gather: comm.all_gather(a + std::size_t(me) * shard, b, shard); break;
                    case Collective::reduce_scatter: comm.reduce_scatter(a, b, shard); break;
                    case Collective::send_recv:
                    case Collective::all_to_all: {
                        // nccl-tests' sendrecv: each rank sends to the next and receives from the previous.
                        P2PRequest r = comm.irecv(b, count, prev, 0);
                        P2PRequest s = comm.isend(a, count, next, 0);
                        comm.wait(s);
                        comm.wait(r);
                        break;
                    }
                }
            };
            CollectiveSample s;
            s.op = op;
            s.ranks = n;
            s.count = count;
            s.bytes = double(count) * sizeof(float);
            s.seconds = time_collective(be, comm, sweep, int(copies), call);
            out.push_back(s);
        }
    }
    return out;
}

std::string collective_table(const std::vector<CollectiveSample>& samples, Collective op) {
    int ranks = 0;
    for (const auto& s : samples)
        if (s.op == op) ranks = s.ranks;
    std::string t = fmt::format("# {} over {} ranks (busbw = algbw x {:.3f}, nccl-tests)\n", to_string(op), ranks,
                                bus_bandwidth_factor(op, std::max(ranks, 1)));
    t += fmt::format("# {:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8}\n", "size", "count", "type", "redop", "time",
                     "algbw", "busbw");
    t += fmt::format("# {:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
                     "(GB/s)");
    const bool reduces = op == Collective::all_reduce || op == Collective::reduce_scatter;
    for (const auto& s : samples) {
        if (s.op != op) continue;
        t += fmt::format("  {:>12.0f} {:>12} {:>6} {:>6} {:>10.2f} {:>8.3f} {:>8.3f}\n", s.bytes, s.count, "float",
                         reduces ? "sum" : "none", s.seconds * 1e6, s.algbw_GBps(), s.busbw_GBps());
    }
    return t;
}

}  // namespace tessel
