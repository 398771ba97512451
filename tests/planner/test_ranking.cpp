// Ranking by objective, and the explanation of the winner.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/presets.h"
#include "planner/explain.h"
#include "planner/ranking.h"
#include "planner/search.h"
#include "plan_fixtures.h"

using namespace tessel;
using tessel::test::make_plan;

namespace {
SimulationResult result(double step, double peak, int tp, int dp) {
    SimulationResult r;
    r.step_time_s = step;
    r.memory_GiB.peak = peak;
    r.plan = make_plan(tp, 1, dp, 1, 1, 64, 2048);
    r.fits = true;
    return r;
}
}  // namespace

TEST(Ranking, ParsesObjectives) {
    EXPECT_EQ(parse_objective("time"), Objective::time);
    EXPECT_EQ(parse_objective("tokens-per-dollar"), Objective::tokens_per_dollar);
    EXPECT_EQ(parse_objective("memory"), Objective::memory);
    EXPECT_THROW(parse_objective("speed"), InputError);
}

TEST(Ranking, OrdersByTheObjective) {
    // a: fast on many GPUs; b: slower on fewer GPUs but cheaper per step; c: least memory.
    std::vector<SimulationResult> v = {result(2.0, 60, 8, 8), result(3.0, 70, 8, 4), result(4.0, 30, 8, 8)};
    rank(v, Objective::time);
    EXPECT_DOUBLE_EQ(v[0].step_time_s, 2.0);
    EXPECT_DOUBLE_EQ(v[2].step_time_s, 4.0);
    rank(v, Objective::tokens_per_dollar);  // GPU-seconds: 2x64 = 128, 3x32 = 96, 4x64 = 256
    EXPECT_DOUBLE_EQ(v[0].step_time_s, 3.0);
    EXPECT_DOUBLE_EQ(v[1].step_time_s, 2.0);
    rank(v, Objective::memory);
    EXPECT_DOUBLE_EQ(v[0].memory_GiB.peak, 30);
    EXPECT_DOUBLE_EQ(v[2].memory_GiB.peak, 70);
}

TEST(Ranking, TiesBreakByTimeThenMemory) {
    std::vector<SimulationResult> v = {result(2.0, 50, 8, 8), result(2.0, 40, 8, 8)};
    rank(v, Objective::time);
    EXPECT_DOUBLE_EQ(v[0].memory_GiB.peak, 40);
    std::vector<SimulationResult> w = {result(3.0, 40, 8, 8), result(2.0, 40, 8, 8)};
    rank(w, Objective::memory);
    EXPECT_DOUBLE_EQ(w[0].step_time_s, 2.0);
}

TEST(Ranking, TokensPerDollar) {
    // 64 x 2048 tokens in 2 s on 64 GPUs at $2/GPU-hour: 131072 / (2 x 64 x 2 / 3600) tokens per dollar.
    const SimulationResult r = result(2.0, 60, 8, 8);
    EXPECT_NEAR(tokens_per_dollar(r, 2.0), 131072.0 / (2.0 * 64 * 2.0 / 3600.0), 1e-6);
    EXPECT_EQ(tokens_per_dollar(r, 0.0), 0.0);
}

TEST(Ranking, SearchHonoursTheObjective) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 16);
    const PlanRequest req = complete_request(m, c, 0, 0);
    SearchOptions o;
    o.top_k = 4;
    const SearchResult by_time = search_plans(m, c, req, o);
    for (std::size_t i = 1; i < by_time.best.size(); ++i)
        EXPECT_LE(by_time.best[i - 1].step_time_s, by_time.best[i].step_time_s);
    o.objective = Objective::memory;
    const SearchResult by_memory = search_plans(m, c, req, o);
    for (std::size_t i = 1; i < by_memory.best.size(); ++i)
        EXPECT_LE(by_memory.best[i - 1].memory_GiB.peak, by_memory.best[i].memory_GiB.peak);
    EXPECT_LT(by_memory.best.front().memory_GiB.peak, by_time.best.front().memory_GiB.peak);
    o.objective = Objective::tokens_per_dollar;
    const SearchResult by_cost = search_plans(m, c, req, o);
    const auto gpu_s = [](const SimulationResult& r) { return r.step_time_s * r.plan.world_size(); };
    EXPECT_LE(gpu_s(by_cost.best.front()), gpu_s(by_time.best.front()) * (1 + 1e-12));
}

TEST(Ranking, ExplainsWhichComponentsDiffer) {
    SimulationResult a = result(10.0, 60, 8, 8), b = result(11.0, 60, 8, 8);
    a.time_s.compute = 8.0;
    a.time_s.bubble = 1.0;
    a.time_s.dp_comm_exposed = 1.0;
    b.time_s.compute = 8.0;
    b.time_s.bubble = 2.5;
    b.time_s.dp_comm_exposed = 0.5;
    b.plan.virtual_stages = 1;
    a.plan.virtual_stages = 2;
    SearchResult r;
    r.best = {a, b};
    const std::string why = explain_winner(r, Objective::time);
    EXPECT_NE(why.find("1.000 s"), std::string::npos) << why;         // the gap
    EXPECT_NE(why.find("virtual stages 2 vs 1"), std::string::npos) << why;
    EXPECT_NE(why.find("pipeline bubble -1.500 s"), std::string::npos) << why;
    EXPECT_NE(why.find("exposed DP comm +0.500 s"), std::string::npos) << why;
    EXPECT_EQ(why.find("compute"), std::string::npos) << why;  // equal components are not listed
    // A small model's gap of 0.3 ms keeps its figures (not "0.000 s").
    SearchResult small = r;
    small.best[0].step_time_s = 0.0100;
    small.best[1].step_time_s = 0.0103;
    const std::string small_why = explain_winner(small, Objective::time);
    EXPECT_NE(small_why.find("#1 is 0.0003 s (2.91%)"), std::string::npos) << small_why;
    // By memory, a few MiB apart are said in MiB (not "0.00 GiB less").
    r.best[0].memory_GiB.peak = 60.0;
    r.best[1].memory_GiB.peak = 60.0 + 5.0 / 1024;
    const std::string by_memory = explain_winner(r, Objective::memory);
    EXPECT_NE(by_memory.find("5.0 MiB less than #2"), std::string::npos) << by_memory;
}
