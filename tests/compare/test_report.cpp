// tessel report's page, rendered in-process from a simulation of tiny-gpt: well-formed, with
// every section, nothing fetched, one rectangle per simulated event, and every text escaped.
#include <gtest/gtest.h>

#include "compare/report_html.h"
#include "compare/svg.h"
#include "core/errors.h"
#include "core/presets.h"
#include "simulator/simulate.h"
#include "tests/compare/report_fixtures.h"
#include "tests/input_error_message.h"

using namespace tessel;
using namespace tessel::test;

namespace {

ReportInputs inputs(const json& sim, std::optional<json> measured = {}, std::optional<json> plan_result = {}) {
    ReportInputs in;
    in.files = {"sim.json", measured ? "run.json" : "", plan_result ? "plan.json" : ""};
    in.simulated = sim;
    in.measured = std::move(measured);
    in.plan_result = std::move(plan_result);
    return in;
}

// The events the simulator records for the tiny plan, counted independently of the report.
struct TraceCounts {
    std::size_t compute = 0, comm = 0, backward = 0;
};
TraceCounts tiny_trace_counts() {
    SimulateOptions o;
    o.record_trace = true;
    const auto r = simulate(load_model("tiny-gpt"), resize_cluster(load_cluster("dgx-h100"), 8), tiny_plan(), o);
    TraceCounts t;
    for (const auto& e : r.trace) {
        if (e.track.find(" / ") == std::string::npos) {
            ++t.compute;
            if (e.name[0] == 'B') ++t.backward;
        } else {
            ++t.comm;
        }
    }
    return t;
}

}  // namespace

TEST(Report, SimulationAloneIsWellFormedWithItsSections) {
    const std::string html = render_report(inputs(tiny_simulation()));
    EXPECT_EQ(check_well_formed(html), "");
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    for (const char* id : {"id=\"breakdown\"", "id=\"timeline\"", "id=\"memory\""})
        EXPECT_EQ(count(html, id), 1u) << id;
    EXPECT_EQ(count(html, "id=\"candidates\""), 0u);
    EXPECT_NE(html.find("<h1>tessel report: tiny-gpt</h1>"), std::string::npos);
    EXPECT_NE(html.find("dgx-h100"), std::string::npos);
    EXPECT_NE(html.find("<td>1f1b</td>"), std::string::npos);
    EXPECT_EQ(html.find(">measured<"), std::string::npos);  // no measured column without a run
}

TEST(Report, EverythingTogetherIsWellFormedWithEverySection) {
    const json sim = tiny_simulation();
    const std::string html = render_report(inputs(sim, tiny_measured(sim), tiny_plan_result(sim)));
    EXPECT_EQ(check_well_formed(html), "");
    for (const char* id : {"id=\"breakdown\"", "id=\"timeline\"", "id=\"memory\"", "id=\"candidates\""})
        EXPECT_EQ(count(html, id), 1u) << id;
    EXPECT_GE(count(html, "<svg "), 4u);
    // Headline: the measured column and the verdict of `tessel compare`.
    EXPECT_NE(html.find("<th>measured</th><th>error</th>"), std::string::npos);
    EXPECT_NE(html.find("class=\"verdict\""), std::string::npos);
    // Step time: simulated / (1.1 x simulated) - 1 = -9.1%.
    EXPECT_NE(html.find("-9.1%"), std::string::npos);
    // Memory: each of the 8 measured ranks, the busiest (rank 2, the first 0.12) and the capacity.
    EXPECT_EQ(count(html, ">measured, rank "), 8u);
    EXPECT_NE(html.find("measured, busiest (rank 2)"), std::string::npos);
    EXPECT_NE(html.find("capacity 80 GiB (H100-SXM)"), std::string::npos);
    // Candidates: the winner marked and labelled (and once more in the legend).
    EXPECT_EQ(count(html, "class=\"win\""), 2u);
    EXPECT_NE(html.find(">#1 tp2 pp2 dp2 zero1 mb1 rc-full: "), std::string::npos);
    EXPECT_EQ(count(html, "class=\"this\""), 2u);  // the simulated plan is the winner, ringed; legend
    EXPECT_EQ(html.find("NOT THE SAME RUN"), std::string::npos);
}

// A plan result that searched another model or GPU is refused, as compare refuses a measured run
// of another plan: its candidates have nothing to do with the simulated run. A name alone (a
// preset against its Hugging Face config) is the same model.
TEST(Report, APlanResultForAnotherModelOrGpuIsRefused) {
    const json sim = tiny_simulation();
    json other = tiny_plan_result(sim);
    for (auto& c : other["candidates"]) c["model"]["num_layers"] = 7;  // tiny-gpt has 4 (configs/models/tiny-gpt.json)
    std::string e = message_of([&] { render_report(inputs(sim, std::nullopt, other)); });
    EXPECT_NE(e.find("plan.json and sim.json: not the same run: candidates[0] model.num_layers (searched 7, simulated 4)"),
              std::string::npos)
        << e;
    other = tiny_plan_result(sim);
    for (auto& c : other["candidates"]) c["cluster"]["gpu"]["name"] = "A100-SXM4-80GB";
    e = message_of([&] { render_report(inputs(sim, std::nullopt, other)); });
    EXPECT_NE(e.find("cluster.gpu.name (searched \"A100-SXM4-80GB\", simulated \"H100-SXM\")"), std::string::npos) << e;
    other = tiny_plan_result(sim);
    for (auto& c : other["candidates"]) c["model"]["name"] = "tiny-gpt-from-config";
    EXPECT_NO_THROW(render_report(inputs(sim, std::nullopt, other)));
}

// The legend names only what the chart draws: no ring or "does not fit" mark when no candidate is
// the simulated plan or misses memory, and a line saying the simulated plan is elsewhere.
TEST(Report, CandidateLegendListsOnlyDrawnMarks) {
    const json sim = tiny_simulation();
    json pr = tiny_plan_result(sim);
    pr["candidates"][0]["plan"]["pp"] = 1;  // the winner is no longer the simulated plan
    pr["candidates"][0]["plan"]["dp"] = 4;
    std::string html = render_report(inputs(sim, {}, pr));
    EXPECT_EQ(count(html, "class=\"this\""), 0u);
    EXPECT_NE(html.find("the simulated plan is not among these candidates"), std::string::npos);
    EXPECT_EQ(count(html, "nofit"), count(render_report(inputs(sim)), "nofit"));  // the stylesheet's rule only
    pr["candidates"][2]["fits"] = false;
    html = render_report(inputs(sim, {}, pr));
    EXPECT_EQ(count(html, "class=\"pt nofit\""), 2u);  // the point and its legend mark
}

TEST(Report, NothingIsFetched) {
    const json sim = tiny_simulation();
    const std::string html = render_report(inputs(sim, tiny_measured(sim), tiny_plan_result(sim)));
    const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
    EXPECT_EQ(count(html, "http://"), count(html, ns));
    EXPECT_EQ(count(html, "https://"), 0u);
    EXPECT_EQ(count(html, "<script"), 0u);
    EXPECT_EQ(count(html, "<link"), 0u);
    EXPECT_EQ(count(html, "url("), 0u);
    EXPECT_EQ(count(html, "@import"), 0u);
}

TEST(Report, OneTimelineRectanglePerSimulatedEvent) {
    const TraceCounts t = tiny_trace_counts();
    ASSERT_GT(t.compute, 0u);
    ASSERT_GT(t.comm, 0u);
    ASSERT_GT(t.backward, 0u);
    // 2 stages x 16 / (2 x 1) = 8 microbatches x (forward + backward), plus an optimizer step each.
    EXPECT_EQ(t.compute, 2u * (8 * 2 + 1));
    ReportSummary s;
    const std::string html = render_report(inputs(tiny_simulation()), {}, &s);
    EXPECT_EQ(count(html, "<rect class=\"c "), t.compute);
    EXPECT_EQ(count(html, "<rect class=\"m "), t.comm);
    // Full recomputation: each backward starts with its recomputation.
    EXPECT_EQ(count(html, "<rect class=\"r\""), t.backward);
    EXPECT_EQ(s.timeline_events, t.compute + t.comm);
    EXPECT_FALSE(s.timeline_merged);
    EXPECT_EQ(s.timeline_rects, t.compute + t.comm + t.backward);
}

TEST(Report, TimelineMergesPastTheCap) {
    const TraceCounts t = tiny_trace_counts();
    ReportOptions o;
    o.max_timeline_rects = 20;
    ReportSummary s;
    const std::string html = render_report(inputs(tiny_simulation()), o, &s);
    EXPECT_TRUE(s.timeline_merged);
    const std::size_t drawn = count(html, "<rect class=\"c ") + count(html, "<rect class=\"m ") + count(html, "<rect class=\"r\"");
    EXPECT_EQ(drawn, s.timeline_rects);
    EXPECT_LE(drawn, 20u);
    EXPECT_LT(drawn, t.compute + t.comm);
    EXPECT_EQ(check_well_formed(html), "");
}

TEST(Report, LargePlanStaysSmall) {
    // GPT-3 175B on 1024 A100s (configs/plans): tens of thousands of simulated events.
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1024);
    const Plan p = load_plan("gpt3-175b-1024gpu");
    validate_plan(p, m, c.num_gpus(), "test");
    const json sim = to_json(simulate(m, c, p), m, c);
    ReportSummary s;
    const std::string html = render_report(inputs(sim), {}, &s);
    EXPECT_GT(s.timeline_events, 20000u);
    EXPECT_TRUE(s.timeline_merged);
    const std::size_t drawn = count(html, "<rect class=\"c ") + count(html, "<rect class=\"m ");
    EXPECT_EQ(drawn, s.timeline_rects);
    EXPECT_LE(drawn, 20000u);
    EXPECT_LT(html.size(), 4u << 20);
    // 22.6 GiB of an 80 GiB A100: the capacity is drawn to scale as a line.
    EXPECT_NE(html.find("<line class=\"cap\""), std::string::npos);
    EXPECT_NE(html.find("capacity 80 GiB (A100-SXM4-80GB)<"), std::string::npos);
    EXPECT_EQ(check_well_formed(html), "");
    // The same plan uncapped draws every event.
    ReportOptions all;
    all.max_timeline_rects = 1u << 30;
    ReportSummary u;
    const std::string full = render_report(inputs(sim), all, &u);
    EXPECT_FALSE(u.timeline_merged);
    EXPECT_EQ(count(full, "<rect class=\"c ") + count(full, "<rect class=\"m "), u.timeline_events);
}

TEST(Report, TextIsEscaped) {
    const json sim = tiny_simulation("tiny <b>&");
    const std::string html = render_report(inputs(sim, tiny_measured(sim), tiny_plan_result(sim)));
    EXPECT_EQ(html.find("<b>"), std::string::npos);
    EXPECT_EQ(html.find("tiny <b>&"), std::string::npos);
    EXPECT_NE(html.find("tiny &lt;b&gt;&amp;"), std::string::npos);
    EXPECT_EQ(check_well_formed(html), "");
    EXPECT_EQ(escape_xml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST(Report, FilesOfTheWrongKindNameTheFileAndKey) {
    const std::string dir = temp_dir("kinds");
    const json sim = tiny_simulation();
    write_text(dir + "/sim.json", sim.dump());
    write_text(dir + "/run.json", tiny_measured(sim).dump());
    write_text(dir + "/plan.json", tiny_plan_result(sim).dump());
    write_text(dir + "/broken.json", "{\"step_time_s\": ");
    auto load = [&](const std::string& s, const std::string& m, const std::string& p) {
        return message_of([&] { load_report_inputs({dir + "/" + s, m.empty() ? "" : dir + "/" + m, p.empty() ? "" : dir + "/" + p}); });
    };
    EXPECT_EQ(load("sim.json", "run.json", "plan.json"), "(no InputError)");
    std::string e = load("plan.json", "", "");
    EXPECT_NE(e.find("plan.json"), std::string::npos) << e;
    EXPECT_NE(e.find("candidates"), std::string::npos) << e;
    EXPECT_NE(e.find("--plan-result"), std::string::npos) << e;
    e = load("run.json", "", "");
    EXPECT_NE(e.find("run.json"), std::string::npos) << e;
    EXPECT_NE(e.find("step_times_s"), std::string::npos) << e;
    e = load("sim.json", "sim.json", "");
    EXPECT_NE(e.find("step_times_s"), std::string::npos) << e;
    e = load("sim.json", "", "sim.json");
    EXPECT_NE(e.find("candidates"), std::string::npos) << e;
    EXPECT_NE(e.find("--simulated"), std::string::npos) << e;
    e = load("missing.json", "", "");
    EXPECT_NE(e.find("missing.json"), std::string::npos) << e;
    e = load("broken.json", "", "");
    EXPECT_NE(e.find("broken.json"), std::string::npos) << e;
}

TEST(Report, MissingKeysNameTheFileAndKey) {
    json sim = tiny_simulation();
    sim.erase("plan");
    std::string e = message_of([&] { render_report(inputs(sim)); });
    EXPECT_NE(e.find("sim.json"), std::string::npos) << e;
    EXPECT_NE(e.find("'plan'"), std::string::npos) << e;
    sim = tiny_simulation();
    sim["plan"]["tp"] = "two";
    e = message_of([&] { render_report(inputs(sim)); });
    EXPECT_NE(e.find("sim.json: plan"), std::string::npos) << e;
    EXPECT_NE(e.find("tp"), std::string::npos) << e;
    sim = tiny_simulation();
    json pr = tiny_plan_result(sim);
    pr["candidates"][1].erase("step_time_s");
    e = message_of([&] { render_report(inputs(sim, {}, pr)); });
    EXPECT_NE(e.find("plan.json"), std::string::npos) << e;
    EXPECT_NE(e.find("candidates[1].step_time_s"), std::string::npos) << e;
    json m = tiny_measured(sim);
    m["peak_memory_GiB"][3] = "full";
    e = message_of([&] { render_report(inputs(sim, m)); });
    EXPECT_NE(e.find("run.json"), std::string::npos) << e;
    EXPECT_NE(e.find("peak_memory_GiB[3]"), std::string::npos) << e;
}

TEST(Report, ResimulationMatchesTheFile) {
    ReportSummary s;
    const json sim = tiny_simulation();
    const std::string html = render_report(inputs(sim), {}, &s);
    EXPECT_NEAR(s.resimulated_step_s, sim["step_time_s"].get<double>(), 1e-9 * s.resimulated_step_s);
    EXPECT_EQ(html.find("re-simulated from the plan"), std::string::npos);
    // A file simulated with other kernel options says so rather than silently disagreeing.
    json other = sim;
    other["step_time_s"] = sim["step_time_s"].get<double>() * 1.2;
    EXPECT_NE(render_report(inputs(other)).find("re-simulated from the plan"), std::string::npos);
}

// simulate --json records the stack it priced: the report redraws that step, not the default one.
TEST(Report, ResimulationUsesTheOptionsTheFileRecords) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    const json plain = tiny_simulation();
    const Plan p = parse_plan(plain["plan"], "test");
    SimulateOptions eager;
    eager.fused_elementwise = false;
    eager.fused_attention = false;
    json sim = to_json(simulate(m, c, p, eager), m, c);
    ASSERT_GT(sim["step_time_s"].get<double>(), 1.01 * plain["step_time_s"].get<double>());  // else this shows nothing
    sim["options"] = to_json(eager);
    ReportSummary s;
    const std::string html = render_report(inputs(sim), {}, &s);
    EXPECT_NEAR(s.resimulated_step_s, sim["step_time_s"].get<double>(), 1e-9 * s.resimulated_step_s);
    EXPECT_EQ(html.find("re-simulated from the plan"), std::string::npos);
    // The same file without its options is redrawn with the defaults, and says so.
    sim.erase("options");
    const std::string without = render_report(inputs(sim));
    EXPECT_NE(without.find("with the default kernel options"), std::string::npos);
    // A bad recorded option is named.
    sim["options"] = {{"fused_elementwise", "no"}};
    const std::string e = message_of([&] { render_report(inputs(sim)); });
    EXPECT_NE(e.find("options.fused_elementwise"), std::string::npos) << e;
}
