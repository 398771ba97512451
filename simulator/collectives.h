// Bus bandwidth as nccl-tests defines it (NVIDIA/nccl-tests doc/PERFORMANCE.md): algbw = S / t,
// busbw = algbw x factor, where S is the bytes of the whole buffer (count x type size, times the
// rank count n for the gathering and scattering collectives). The factor is what each rank's link
// must carry per byte of S, so busbw is comparable with the link's bandwidth. Header only: the
// executor's collective benchmarks use the same definitions.
#pragma once

namespace tessel {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };

inline constexpr const char* to_string(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::all_gather: return "all_gather";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_to_all: return "all_to_all";
        case Collective::send_recv: return "send_recv";
    }
    return "?";
}

// busbw / algbw for n ranks: AllReduce 2(n-1)/n; AllGather, ReduceScatter, AlltoAll (n-1)/n;
// SendRecv 1.
inline constexpr double bus_bandwidth_factor(Collective c, int n) {
    if (n <= 1) return c == Collective::send_recv ? 1.0 : 0.0;
    switch (c) {
        case Collective::all_reduce: return 2.0 * (n - 1) / n;
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return double(n - 1) / n;
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

// S, the bytes algbw divides by: count elements of type_size bytes per rank's buffer; AllGather
// and ReduceScatter count the whole gathered buffer (count x size x n), AlltoAll likewise.
inline constexpr double algbw_bytes(Collective c, double count, double type_size, int n) {
    switch (c) {
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return count * type_size * n;
        default: return count * type_size;
    }
}

inline constexpr double bus_bandwidth(Collective c, int n, double bytes, double seconds) {
    return bytes / seconds * bus_bandwidth_factor(c, n);
}

}  // namespace tessel
