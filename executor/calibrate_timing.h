// Timing one operation for calibrate: the median over repeated samples, each sample long enough
// (several calls) that the clock's resolution and a single call's jitter do not dominate. The
// median, not the best: a training step runs its kernels under whatever else shares the machine,
// and calibrate should report the rate a step sees, not a lucky one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels/backend.h"

namespace tessel {

struct TimingBudget {
    double min_seconds = 0.1;  // keep sampling until this much time has passed...
    int min_samples = 5;       // ...and at least this many samples were taken
    int max_samples = 200;
    double sample_seconds = 2e-4;  // a sample repeats the call until it lasts about this long
};

struct CallSeconds {
    double median = 0, best = 0;
};

// Seconds of one call of `fn` (queued work included: the backend is synchronized per sample): the
// median sample, and the fastest (for a peak).
inline CallSeconds call_seconds(Backend& backend, const std::function<void()>& fn, const TimingBudget& b) {
    using clock = std::chrono::steady_clock;
    auto seconds_since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
    fn();  // warm-up: first-touch page faults, BLAS buffers, caches
    backend.synchronize();
    auto t0 = clock::now();
    fn();
    backend.synchronize();
    const double first = std::max(seconds_since(t0), 1e-9);
    const int reps = std::max(1, int(std::ceil(b.sample_seconds / first)));
    std::vector<double> samples;
    const auto start = clock::now();
    while (int(samples.size()) < b.max_samples &&
           (int(samples.size()) < b.min_samples || seconds_since(start) < b.min_seconds)) {
        t0 = clock::now();
        for (int i = 0; i < reps; ++i) fn();
        backend.synchronize();
        samples.push_back(seconds_since(t0) / reps);
    }
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    return {n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]), samples.front()};
}

}  // namespace tessel
