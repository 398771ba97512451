#include "core/plan_choices.h"

#include <algorithm>
#include <cmath>

#include "core/accounting.h"
#include "core/plan.h"

namespace tessel {

std::vector<int> divisors(int n) {
    std::vector<int> small, large;
    for (int d = 1; (long long)d * d <= n; ++d)
        if (n % d == 0) {
            small.push_back(d);
            if (d != n / d) large.push_back(n / d);
        }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

std::vector<int> microbatch_sizes(int global_batch_size, int dp) {
    std::vector<int> out;
    if (dp <= 0 || global_batch_size % dp != 0) return out;
    for (int d : divisors(global_batch_size / dp))
        if (d <= kMaxMicrobatch) out.push_back(d);
    return out;
}

std::vector<int> virtual_stage_counts(int num_layers, int pp, int lm_head_layers) {
    std::vector<int> out;
    if (lm_head_layers == 0 || pipeline_split_supported(num_layers, pp, 1, lm_head_layers)) out.push_back(1);
    if (pp < 2) return out;
    for (int v = 2; pp * v <= num_layers; ++v)
        if (pipeline_split_supported(num_layers, pp, v, lm_head_layers)) out.push_back(v);
    return out;
}

std::vector<int> lm_head_layer_choices(const ModelSpec& m) {
    const int head = int(std::lround(double(m.vocab_size) * m.hidden_size /
                                     std::max(1.0, double(layer_matmul_weights(m)))));
    if (head > 0) return {0, head};
    return {0};
}

}  // namespace tessel
