#include "tests/compare/report_fixtures.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <unistd.h>

#include "core/presets.h"
#include "simulator/simulate.h"
#include "tests/temporary_folder.h"

namespace tessel::test {

Plan tiny_plan() {
    Plan p;
    p.tp = 2;
    p.pp = 2;
    p.dp = 2;
    p.microbatch_size = 1;
    p.global_batch_size = 16;
    p.seq_length = 128;
    p.recompute = Recompute::full;
    p.schedule = Schedule::one_f_one_b;
    p.zero_stage = 1;
    return p;
}

json tiny_simulation(const std::string& model_name) {
    ModelSpec m = load_model("tiny-gpt");
    m.name = model_name;
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    const Plan p = tiny_plan();
    validate_plan(p, m, c.num_gpus(), "test");
    return to_json(simulate(m, c, p), m, c);
}

json tiny_measured(const json& sim) {
    // Numbers of the shape `tessel run --out` writes (executor/run_result.cpp); their values only
    // need to be plausible here.
    const double step = sim["step_time_s"].get<double>() * 1.1;
    json m = {{"fits", true},
              {"step_time_s", step},
              {"mfu", sim["mfu"].get<double>() / 1.1},
              {"hfu", sim["hfu"].get<double>() / 1.1},
              {"tokens_per_s", sim["tokens_per_s"].get<double>() / 1.1},
              {"memory_GiB",
               {{"weights", 0.01}, {"gradients", 0.01}, {"optimizer", 0.02}, {"activations", 0.05}, {"buffers", 0.01},
                {"peak", 0.12}}},
              {"time_s",
               {{"compute", 0.6 * step}, {"tp_comm_exposed", 0.1 * step}, {"cp_comm_exposed", 0.0},
                {"bubble_and_pp_comm", 0.15 * step}, {"dp_comm_exposed", 0.05 * step}, {"optimizer", 0.05 * step},
                {"sync_wait", 0.05 * step}, {"total", step}}},
              {"critical_rank", 3},
              {"plan", sim["plan"]},
              {"model", sim["model"]},
              // Run with --cluster on the simulated cluster's GPUs: compare refuses other hardware.
              {"cluster", sim["cluster"]},
              {"backend", "cuda"},
              {"device", "NVIDIA H100 80GB HBM3"},
              {"world_size", 8},
              {"steps", 3},
              {"warmup_steps", 1},
              {"step_times_s", {step * 1.5, step, step}},
              {"losses", {10.0, 9.9, 9.8}},
              {"peak_memory_GiB", {0.10, 0.11, 0.12, 0.12, 0.09, 0.09, 0.10, 0.10}},
              {"peak_tflops_used", 989.0},
              {"peak_tflops_source", "test"}};
    return m;
}

json tiny_plan_result(const json& sim) {
    json second = sim, third = sim;
    second["step_time_s"] = sim["step_time_s"].get<double>() * 1.3;
    second["memory_GiB"]["peak"] = sim["memory_GiB"]["peak"].get<double>() * 0.7;
    second["plan"]["tp"] = 4;
    second["plan"]["dp"] = 1;
    third["step_time_s"] = sim["step_time_s"].get<double>() * 1.6;
    third["memory_GiB"]["peak"] = sim["memory_GiB"]["peak"].get<double>() * 1.2;
    third["plan"]["pp"] = 1;
    third["plan"]["dp"] = 4;
    return {{"considered", 40}, {"pruned", 10}, {"simulated", 30}, {"search_s", 0.01},
            {"objective", "time"}, {"candidates", {sim, second, third}}};
}

std::string check_well_formed(const std::string& html) {
    std::vector<std::string> open;
    std::size_t i = 0;
    while ((i = html.find('<', i)) != std::string::npos) {
        const std::size_t end = html.find('>', i);
        if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
        const std::string tag = html.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.empty()) return "empty tag";
        if (tag[0] == '!') continue;  // <!DOCTYPE html>
        if (tag[0] == '/') {
            const std::string name = tag.substr(1);
            if (open.empty()) return "</" + name + "> closes nothing";
            if (open.back() != name) return "</" + name + "> closes <" + open.back() + ">";
            open.pop_back();
            continue;
        }
        if (tag.back() == '/') continue;  // <meta .../>, <rect .../>
        const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
        open.push_back(name);
        // A stylesheet is text, not markup.
        if (name == "style") {
            const std::size_t close = html.find("</style>", i);
            if (close == std::string::npos) return "<style> never closed";
            if (html.substr(i, close - i).find('<') != std::string::npos) return "'<' inside <style>";
            i = close;
        }
    }
    if (!open.empty()) return "<" + open.back() + "> never closed";
    return "";
}

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t i = haystack.find(needle); i != std::string::npos; i = haystack.find(needle, i + needle.size())) ++n;
    return n;
}

std::string temp_dir(const std::string& name) { return tessel::test::fresh_temporary_folder("tessel_compare_", name); }

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

}  // namespace tessel::test
