#include "executor/calibrate.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {

std::string today() {
    const std::time_t now = std::time(nullptr);
    char text[16] = {0};
    std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
    return text;
}

// The host's memory (GiB) from /proc/meminfo; 0 when unreadable.
double host_memory_GiB() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    double kib = 0;
    while (in >> key >> kib) {
        if (key == "MemTotal:") return kib * 1024.0 / double(1ULL << 30);
        in.ignore(1 << 10, '\n');
    }
    return 0;
}

// Every seconds figure of k, in a fixed order, so that ranks can average them.
std::vector<double*> seconds_of(KernelMeasurements& k) {
    std::vector<double*> v{&k.peak_flops, &k.stream_Bps, &k.launch_s, &k.cpu_share};
    for (auto& g : k.gemms) v.push_back(&g.seconds);
    for (auto& s : k.streaming) v.push_back(&s.seconds);
    for (auto& a : k.attention) {
        v.push_back(&a.forward_seconds);
        v.push_back(&a.backward_seconds);
    }
    for (auto& l : k.steps) {
        v.push_back(&l.in_step_seconds);
        v.push_back(&l.alone_seconds);
    }
    return v;
}

void average_over_ranks(KernelMeasurements& k, Communicator& world) {
    if (world.size() < 2) return;
    std::vector<double*> fields = seconds_of(k);
    std::vector<double> values;
    for (double* f : fields) values.push_back(*f);
    world.all_reduce_host(values.data(), values.size(), ReduceOp::sum);
    for (std::size_t i = 0; i < fields.size(); ++i) *fields[i] = values[i] / world.size();
}

}  // namespace

Calibration calibrate(const CalibrateOptions& o, Backend& backend, Communicator& world) {
    Calibration c;
    c.backend = o.backend;
    c.device = backend.device_name();
    c.date = today();
    c.ranks = world.size();
    c.quick = o.quick;
    if (o.memory_GiB > 0) {
        c.memory_GiB = o.memory_GiB;
    } else if (backend.device_memory_bytes() > 0) {
        c.memory_GiB = static_cast<double>(backend.device_memory_bytes()) / (1024.0 * 1024.0 * 1024.0);
    } else if (o.backend == "cpu") {
        // The ranks of this machine share its memory (calibrate runs on one machine).
        c.memory_GiB = host_memory_GiB() / world.size();
    }
    if (c.memory_GiB <= 0)
        throw InputError(fmt::format("--memory-GiB: expected the memory of one {} device in GiB (the backend "
                                     "does not report it), got none",
                                     o.backend));

    const KernelSweep kernels = KernelSweep::for_backend(o.backend, o.quick);
    const CollectiveSweep collectives = o.quick ? CollectiveSweep::quick() : CollectiveSweep::standard();
    const bool cpu = o.backend == "cpu";
    const int total = kernel_measurement_count(kernels) + (cpu ? 2 : 0) +
                      (world.size() > 1 ? int(std::size(kCalibratedCollectives) * collectives.sizes_bytes.size()) : 0);
    int done = 0;
    // The ranks start each measurement together, as the ranks of a training step run at once.
    auto before_each = [&](const std::string& what) {
        world.barrier();
        if (world.rank() == 0 && o.progress) o.progress(done, total, what);
        ++done;
    };
    // The share of a core each rank holds while all compute at once, before and after the kernels
    // (the kernels' short samples see the core alone; a step sees it shared).
    double share = 0;
    if (cpu) {
        before_each("cpu share, all ranks computing at once");
        share += 0.5 * measure_cpu_share(backend, kernels.share_seconds);
    }
    c.kernels = measure_kernels(backend, kernels, before_each);
    if (cpu) {
        before_each("cpu share, all ranks computing at once");
        share += 0.5 * measure_cpu_share(backend, kernels.share_seconds);
        c.kernels.cpu_share = share;
    }
    average_over_ranks(c.kernels, world);
    c.collectives = measure_collectives(backend, world, collectives, before_each);
    const int units = o.sm_count > 0 ? o.sm_count : std::max(1, backend.device_parallel_units());
    c.fit = fit_profile(c.kernels, c.collectives, units);
    return c;
}

json to_cluster_json(const Calibration& c, const std::string& name) {
    const FittedProfile& f = c.fit;
    json profile = {{"gemm_max_efficiency", f.gemm_max_efficiency},
                    {"gemm_k_overhead", f.gemm_k_overhead},
                    {"attention_forward_efficiency", f.attention_forward_efficiency},
                    {"attention_backward_efficiency", f.attention_backward_efficiency},
                    {"memory_bandwidth_efficiency", f.memory_bandwidth_efficiency},
                    {"kernel_launch_us", f.kernel_launch_s * 1e6},
                    {"sustained_clock_fraction", f.sustained_clock_fraction},
                    {"sm_count", f.sm_count}};
    json gemm = json::array(), attention = json::array();
    for (const auto& g : f.gemm_table) gemm.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"efficiency", g.efficiency}});
    for (const auto& a : f.attention_table)
        attention.push_back({{"seq", a.seq}, {"head_dim", a.head_dim}, {"forward_efficiency", a.forward_efficiency},
                             {"backward_efficiency", a.backward_efficiency}});
    profile["gemm_table"] = gemm;
    profile["attention_table"] = attention;
    json streaming = json::array();
    for (const auto& [kernel, efficiency] : f.streaming_table) streaming.push_back({{"kernel", kernel}, {"efficiency", efficiency}});
    if (!streaming.empty()) profile["streaming_table"] = streaming;
    // nccl-tests' bus bandwidth per collective and size, at the share of a core a step's ranks get.
    if (!c.collectives.empty()) {
        json table = json::array();
        for (const auto& s : c.collectives)
            table.push_back({{"collective", to_string(s.op)}, {"bytes", s.bytes}, {"busbw_GBps", s.busbw_GBps() * f.link_share}});
        profile["collective_table"] = table;
    }
    // The CPU backend's memory is the tensors the run allocates; nothing is held beforehand.
    if (c.backend == "cpu") profile["runtime_reserved_GiB"] = 0.0;
    if (f.has_link)
        profile["collective"] = {{"intra_node_bandwidth_efficiency", 1.0},
                                 {"latency_us", f.collective_latency_s * 1e6},
                                 {"source", "bus bandwidth and latencies fitted to the measured collectives"}};
    profile["source"] = fmt::format("tessel calibrate --backend {}{}: {} rank{} measuring at once", c.backend,
                                    c.quick ? " --quick" : "", c.ranks, c.ranks > 1 ? "s" : "");
    profile["device"] = c.device;
    profile["date"] = c.date;
    profile["measured"] = {{"peak_gflops_fp32", f.peak_flops / 1e9},
                           {"stream_GBps", f.memory_bandwidth_Bps / 1e9},
                           {"fit_error",
                            {{"gemm", f.gemm_error},
                             {"streaming", f.streaming_error},
                             {"attention", f.attention_error},
                             {"collectives", f.collective_error}}}};

    json j = {{"name", name},
              {"description",
               fmt::format("{} as measured by tessel calibrate on {} ({} rank{} sharing the machine)", name, c.date,
                           c.ranks, c.ranks > 1 ? "s" : "")},
              {"num_nodes", 1},
              {"gpus_per_node", c.ranks},
              {"gpu",
               {{"name", c.device},
                {"memory_GiB", c.memory_GiB},
                {"memory_bandwidth_GBps", f.memory_bandwidth_Bps / 1e9},
                {"peak_tflops", {{"fp32", f.peak_flops / 1e12}}}}}};
    if (f.has_link) {
        const double bw = f.link_bandwidth_Bps / 1e9, latency = f.hop_latency_s * 1e6;
        j["intra_node"] = {{"kind", c.backend == "cpu" ? "shared-memory" : "nvlink"},
                           {"bandwidth_GBps", bw},
                           {"latency_us", latency}};
        // One machine: no network. Described anyway so that no path between two ranks of this
        // node looks shorter through a network card (its latency is never below the node's link).
        j["inter_node"] = {{"kind", "none"}, {"nics_per_node", 1}, {"nic_bandwidth_GBps", bw}, {"latency_us", latency}};
    }
    j["profile"] = profile;
    return j;
}

json to_raw_json(const Calibration& c) {
    const KernelMeasurements& k = c.kernels;
    json gemms = json::array(), streaming = json::array(), attention = json::array(), collectives = json::array(),
         steps = json::array();
    for (const auto& g : k.gemms)
        gemms.push_back({{"role", g.role}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"seconds", g.seconds},
                         {"gflops", g.flops() / g.seconds / 1e9}});
    for (const auto& s : k.streaming)
        streaming.push_back({{"kernel", s.name}, {"shape", s.shape}, {"bytes", s.bytes}, {"seconds", s.seconds},
                             {"GBps", s.bytes / s.seconds / 1e9}});
    for (const auto& a : k.attention)
        attention.push_back({{"batch_heads", a.batch_heads}, {"seq", a.seq}, {"head_dim", a.head_dim},
                             {"forward_seconds", a.forward_seconds}, {"backward_seconds", a.backward_seconds},
                             {"forward_flops", simulator_attention_forward_flops(a.batch_heads, a.seq, a.head_dim)}});
    for (const auto& s : k.steps)
        steps.push_back({{"layout", s.layout}, {"tokens", s.tokens}, {"hidden", s.hidden}, {"heads", s.heads},
                         {"in_step_seconds", s.in_step_seconds}, {"alone_seconds", s.alone_seconds}});
    for (const auto& s : c.collectives)
        collectives.push_back({{"collective", to_string(s.op)}, {"ranks", s.ranks}, {"bytes", s.bytes},
                               {"count", s.count}, {"seconds", s.seconds}, {"algbw_GBps", s.algbw_GBps()},
                               {"busbw_GBps", s.busbw_GBps()}});
    return {{"backend", c.backend}, {"device", c.device},     {"date", c.date},         {"ranks", c.ranks},
            {"quick", c.quick},     {"peak_flops", k.peak_flops}, {"peak_size", k.peak_size},
            {"fitted_peak_flops", c.fit.peak_flops}, {"fitted_peak_source", c.fit.peak_source},
            {"stream_Bps", k.stream_Bps}, {"launch_s", k.launch_s}, {"gemms", gemms}, {"streaming", streaming},
            {"attention", attention}, {"steps", steps}, {"cpu_share", k.cpu_share}, {"collectives", collectives}};
}

std::string calibration_report(const Calibration& c) {
    const KernelMeasurements& k = c.kernels;
    const FittedProfile& f = c.fit;
    std::ostringstream o;
    o << fmt::format("tessel calibrate: backend {} ({}), {} rank{} measuring at once{}\n", c.backend, c.device, c.ranks,
                     c.ranks > 1 ? "s" : "", c.quick ? " (--quick: a smoke test, not a calibration)" : "");
    o << fmt::format("\npeak fp32 GEMM        {:.2f} GFLOP/s per rank ({})\n", f.peak_flops / 1e9, f.peak_source);
    o << fmt::format("GEMM fit              max efficiency {:.3f}, K overhead {:.1f} elements (error {:.1f}%)\n",
                     f.gemm_max_efficiency, f.gemm_k_overhead, 100 * f.gemm_error);
    o << fmt::format("  {:>8} {:>6} {:>6} {:>6} {:>10} {:>9}\n", "role", "m", "n", "k", "GFLOP/s", "of peak");
    for (const auto& g : k.gemms)
        o << fmt::format("  {:>8} {:>6} {:>6} {:>6} {:>10.2f} {:>8.1f}%\n", g.role, g.m, g.n, g.k,
                         g.flops() / g.seconds / 1e9, 100 * g.flops() / g.seconds / f.peak_flops);
    o << fmt::format("\nmemory bandwidth      {:.2f} GB/s per rank (streaming copy/add, best of the two)\n",
                     f.memory_bandwidth_Bps / 1e9);
    o << fmt::format("streaming kernels     {:.3f} of it in sum, in the simulator's bytes; each kernel's own below "
                     "(error {:.1f}%)\n",
                     f.memory_bandwidth_efficiency, 100 * f.streaming_error);
    for (const auto& [kernel, efficiency] : f.streaming_table)
        o << fmt::format("  {:<24} {:.3f}\n", kernel, efficiency);
    o << fmt::format("  {:<24} {:<14} {:>12} {:>10} {:>8}\n", "kernel", "shape", "bytes", "time (us)", "GB/s");
    for (const auto& s : k.streaming)
        o << fmt::format("  {:<24} {:<14} {:>12.0f} {:>10.2f} {:>8.2f}\n", s.name, s.shape, s.bytes, s.seconds * 1e6,
                         s.bytes / s.seconds / 1e9);
    o << fmt::format("\nattention             forward {:.3f}, backward {:.3f} of peak as long-sequence limits "
                     "(error {:.1f}%)\n",
                     f.attention_forward_efficiency, f.attention_backward_efficiency, 100 * f.attention_error);
    // A fit above peak is capped, and the error then measures the cap, not the kernel: say which.
    if (f.attention_forward_fit > 1 || f.attention_backward_fit > 1)
        o << fmt::format("                      capped at 1.000 of peak: the fit is forward {:.3f}, backward {:.3f} "
                         "(faster than peak x the ramp), which the error above includes\n",
                         f.attention_forward_fit, f.attention_backward_fit);
    if (!f.attention_table.empty())
        o << "                      the simulator uses the profile's attention_table (each shape below, capped at 1), not these two\n";
    o << fmt::format("  {:>11} {:>6} {:>8} {:>12} {:>12} {:>10} {:>10}\n", "batch*heads", "seq", "head_dim", "fwd (us)",
                     "bwd (us)", "fwd GF/s", "bwd GF/s");
    for (const auto& a : k.attention) {
        const double flops = simulator_attention_forward_flops(a.batch_heads, a.seq, a.head_dim);
        o << fmt::format("  {:>11} {:>6} {:>8} {:>12.1f} {:>12.1f} {:>10.2f} {:>10.2f}\n", a.batch_heads, a.seq,
                         a.head_dim, a.forward_seconds * 1e6, a.backward_seconds * 1e6, flops / a.forward_seconds / 1e9,
                         2.5 * flops / a.backward_seconds / 1e9);
    }
    o << fmt::format("\nkernel launch         {:.3f} us (a 16-element add)\n", k.launch_s * 1e6);
    o << "\nsteps of a 2-layer model  (each kernel where a real step runs it, then replayed alone)\n";
    o << fmt::format("  {:>6} {:>6} {:>6} {:>6} {:>14} {:>14} {:>8}\n", "layout", "T", "h", "heads", "in step (us)",
                     "alone (us)", "kept");
    for (const auto& l : k.steps)
        o << fmt::format("  {:>6} {:>6} {:>6} {:>6} {:>14.1f} {:>14.1f} {:>7.1f}%\n", l.layout, l.tokens, l.hidden,
                         l.heads, l.in_step_seconds * 1e6, l.alone_seconds * 1e6, 100 * l.kept());
    o << fmt::format("cpu share             {:.3f} of a core per rank with all {} computing at once\n", k.cpu_share,
                     c.ranks);
    o << fmt::format("sustained fraction    {:.3f} = cpu share x the geometric mean kept in a step (the samples above\n"
                     "                      see a core alone and warm caches; the profile's rates are scaled by it)\n",
                     f.sustained_clock_fraction);
    if (c.collectives.empty()) {
        o << "\ncollectives           not measured: one rank alone measures compute only (run it under mpirun -np 2 "
             "or more)\n";
    } else {
        o << "\n";
        for (Collective op : kCalibratedCollectives) o << collective_table(c.collectives, op) << "\n";
        o << fmt::format("link fit              bus bandwidth {:.3f} GB/s, hop latency {:.2f} us, call latency {:.2f} us "
                         "(error {:.1f}%)\n",
                         f.link_bandwidth_Bps / 1e9, f.hop_latency_s * 1e6, f.collective_latency_s * 1e6,
                         100 * f.collective_error);
    }
    return o.str();
}

}  // namespace tessel
