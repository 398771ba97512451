#include "executor/peak_flops.h"

#include <algorithm>
#include <chrono>

namespace tessel {

double measure_matmul_tflops(const DeviceMemory& mem, double seconds, int n) {
    Backend& be = *mem.backend;
    DeviceArray<float> a(mem, std::size_t(n) * n, MemoryKind::buffers), b(mem, std::size_t(n) * n, MemoryKind::buffers),
        c(mem, std::size_t(n) * n, MemoryKind::buffers);
    be.fill(a.data(), 0.5f, a.size());
    be.fill(b.data(), 0.25f, b.size());
    using clock = std::chrono::steady_clock;
    const double flops = 2.0 * double(n) * n * n;
    be.matmul_forward(c.data(), a.data(), b.data(), nullptr, n, n, n);  // warm-up
    be.synchronize();
    double best = 0;
    const auto start = clock::now();
    for (int i = 0; i < 3 || std::chrono::duration<double>(clock::now() - start).count() < seconds; ++i) {
        const auto t0 = clock::now();
        be.matmul_forward(c.data(), a.data(), b.data(), nullptr, n, n, n);
        be.synchronize();
        const double dt = std::chrono::duration<double>(clock::now() - t0).count();
        best = std::max(best, flops / dt);
        if (i > 1000) break;
    }
    return best / 1e12;
}

}  // namespace tessel
