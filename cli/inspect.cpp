// tessel inspect --model M [--json]: parameters, FLOPs per token and layer shapes.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/accounting.h"
#include "core/errors.h"
#include "core/presets.h"

namespace tessel::cli {

namespace {
struct InspectArgs {
    std::string model;
    std::optional<int> seq;
    bool json = false;
};

void run_inspect(const InspectArgs& a) {
    ModelSpec m = load_model(a.model);
    const int s = a.seq.value_or(m.seq_length);
    if (s < 1) throw InputError(fmt::format("--seq: expected a positive sequence length, got {}", s));
    // As simulate and run refuse it: the position table has no row past its last.
    if (m.position_embedding == PositionEmbedding::learned && s > m.max_position_embeddings)
        throw InputError(fmt::format("--seq: expected at most the model's {} learned positions, got {}",
                                     m.max_position_embeddings, s));
    auto c = count_parameters(m);
    auto f = flops_per_token(m, s);
    auto shapes = layer_shapes(m);
    if (a.json) {
        json layers = json::array();
        for (auto& l : shapes) layers.push_back({{"name", l.name}, {"shape", l.shape}, {"parameters", l.count()}});
        json out = {{"model", to_json(m)},
                    {"parameters", c.total},
                    {"embedding_parameters", c.embedding},
                    {"non_embedding_parameters", c.non_embedding},
                    {"parameters_per_layer", c.per_layer},
                    {"seq_length", s},
                    {"flops_per_token", f.model},
                    {"forward_flops_per_token", f.model / 3},
                    {"layer_shapes", layers}};
        std::cout << out.dump(2) << "\n";
        return;
    }
    fmt::print("{} ({})\n", m.name, m.source);
    fmt::print("  layers {}, hidden {}, heads {} (kv {}, head dim {}), ffn {} ({}), vocab {}\n", m.num_layers,
               m.hidden_size, m.num_attention_heads, m.num_kv_heads, m.head_dim, m.ffn_hidden_size,
               to_string(m.activation), m.vocab_size);
    std::string attention;
    if (m.qk_norm != QkNorm::none) attention += fmt::format(", QK norm {}", to_string(m.qk_norm));
    if (m.sliding_window > 0) attention += fmt::format(", sliding window {}", m.sliding_window);
    if (m.sliding_window > 0 && m.full_attention_layers >= 0)
        attention += fmt::format(" ({} of {} layers global)", m.full_attention_layers, m.num_layers);
    else if (m.sliding_window > 0 && m.sliding_window_pattern > 1)
        attention += fmt::format(" (1 layer in {} global)", m.sliding_window_pattern);
    if (m.sandwich_norms) attention += ", post-norms";
    if (m.logit_softcap) attention += ", logit soft-cap";
    if (m.position_embedding == PositionEmbedding::rope && m.rotary_percent < 1.0)
        attention += fmt::format(", RoPE on {:g}% of each head", 100 * m.rotary_percent);
    if (m.parallel_residual) attention += m.shared_norm ? ", parallel attention and MLP (one norm)" : ", parallel attention and MLP";
    fmt::print("  {} norm, {} positions, embeddings {}{}\n", to_string(m.norm), to_string(m.position_embedding),
               m.tied_embeddings ? "tied" : "untied", attention);
    fmt::print("parameters       {:>16L}  ({})\n", c.total, human_count(double(c.total)));
    fmt::print("  embedding      {:>16L}  ({})\n", c.embedding, human_count(double(c.embedding)));
    fmt::print("  non-embedding  {:>16L}  ({})\n", c.non_embedding, human_count(double(c.non_embedding)));
    fmt::print("  per layer      {:>16L}  ({})\n", c.per_layer, human_count(double(c.per_layer)));
    fmt::print("FLOPs per token at sequence {}: {} (forward + backward, model FLOPs; 6N = {})\n", s,
               human_count(f.model), human_count(6.0 * double(c.non_embedding)));
    fmt::print("layer shapes (one of {} layers):\n", m.num_layers);
    for (auto& l : shapes) {
        std::string dims;
        for (auto d : l.shape) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
        fmt::print("  {:<24} {:<18} {:>14L}\n", l.name, dims, l.count());
    }
}
}  // namespace

void add_inspect(CLI::App& app) {
    auto args = std::make_shared<InspectArgs>();
    auto* cmd = app.add_subcommand("inspect", "Parameters, FLOPs per token and layer shapes of a model");
    cmd->footer("Example: tessel inspect --model llama3-8b --json");
    cmd->add_option("--model", args->model, "preset name or path (native JSON, a Hugging Face config.json or the model folder holding it)")->required();
    cmd->add_option("--seq", args->seq, "sequence length for attention FLOPs (default: the model's)");
    cmd->add_flag("--json", args->json, "print JSON");
    cmd->callback([args] { run_inspect(*args); });
}

}  // namespace tessel::cli
