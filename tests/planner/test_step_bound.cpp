// The planner's step-time bound must never exceed what the simulator predicts, or branch-and-bound
// would prune plans that could win; and it should be tight enough to prune.
#include <gtest/gtest.h>

#include "core/presets.h"
#include "planner/feasibility.h"
#include "planner/step_bound.h"
#include "plan_fixtures.h"
#include "simulator/simulate.h"

using namespace tessel;
using tessel::test::make_plan;

namespace {
void check_bound_on(const ModelSpec& m, const ClusterSpec& c, int gbs, int seq) {
    const SimulateOptions o;
    const StepBound bound(m, c, o);
    const int world = c.num_gpus();
    int checked = 0;
    double tightest = 0;
    for (int tp : {1, 2, 4, 8, 16})
        for (int pp : {1, 2, 4, 8})
            for (int cp : {1, 2})
                for (int v : {1, 2})
                    for (int zero : {0, 1, 2, 3})
                        for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full})
                            for (const char* placement : {"tp-cp-dp-pp", "tp-pp-dp-cp"}) {
                                if (world % (tp * pp * cp) != 0) continue;
                                Plan p = make_plan(tp, pp, world / (tp * pp * cp), cp, 1, gbs, seq, v, zero, rc, tp > 1);
                                p.placement = placement;
                                if (check_rules(m, p) != Rule::ok) continue;
                                const double b = bound(p);
                                const double t = simulate(m, c, p, o).step_time_s;
                                ASSERT_LE(b, t * (1 + 1e-9)) << p.describe() << " " << placement;
                                EXPECT_GE(b, step_time_lower_bound(m, c, p) * 0.5) << p.describe();
                                tightest = std::max(tightest, b / t);
                                ++checked;
                            }
    EXPECT_GT(checked, 50);
    EXPECT_GT(tightest, 0.8);  // some bound comes close to its simulation: it prunes
}
}  // namespace

TEST(StepBound, NeverAboveTheSimulationLlama8bOn16H100) {
    check_bound_on(load_model("llama3-8b"), resize_cluster(load_cluster("dgx-h100"), 16), 64, 8192);
}

TEST(StepBound, NeverAboveTheSimulationGpt2On16A100) {
    // Learned positions, tied embeddings, LayerNorm and GeLU: the other family.
    check_bound_on(load_model("gpt2-1.5b"), resize_cluster(load_cluster("dgx-a100"), 16), 128, 1024);
}
