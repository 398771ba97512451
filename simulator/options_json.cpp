// The simulator options a result was priced with, as the simulation-result JSON records them and
// `report` reads them back to redraw the same step.
#include <utility>

#include "simulator/simulate.h"

namespace tessel {

namespace {
// Every switch under its own name; the numbers follow.
constexpr std::pair<const char*, bool SimulateOptions::*> kSwitches[] = {
    {"overlap_grad_reduce", &SimulateOptions::overlap_grad_reduce},
    {"reduce_after_pipeline_flush", &SimulateOptions::reduce_after_pipeline_flush},
    {"overlap_param_gather", &SimulateOptions::overlap_param_gather},
    {"tp_comm_overlap", &SimulateOptions::tp_comm_overlap},
    {"tp_backward_overlap", &SimulateOptions::tp_backward_overlap},
    {"tp_overlap_symmetric_memory", &SimulateOptions::tp_overlap_symmetric_memory},
    {"grad_reduce_in_fp32", &SimulateOptions::grad_reduce_in_fp32},
    {"overlap_p2p_comm", &SimulateOptions::overlap_p2p_comm},
    {"p2p_scatter_gather", &SimulateOptions::p2p_scatter_gather},
    {"gradient_accumulation_fusion", &SimulateOptions::gradient_accumulation_fusion},
    {"zero_gradient_buffer", &SimulateOptions::zero_gradient_buffer},
    {"zero2_layerwise_gather", &SimulateOptions::zero2_layerwise_gather},
    {"backward_prefetch", &SimulateOptions::backward_prefetch},
    {"fsdp2_buffer_copies", &SimulateOptions::fsdp2_buffer_copies},
    {"fused_attention", &SimulateOptions::fused_attention},
    {"cudnn_attention", &SimulateOptions::cudnn_attention},
    {"model_dropout", &SimulateOptions::model_dropout},
    {"fused_elementwise", &SimulateOptions::fused_elementwise},
    {"eager_rmsnorm", &SimulateOptions::eager_rmsnorm},
    {"fused_cross_entropy", &SimulateOptions::fused_cross_entropy},
    {"torch_cross_entropy", &SimulateOptions::torch_cross_entropy},
    {"fp8_saves_gemm_inputs", &SimulateOptions::fp8_saves_gemm_inputs},
    {"fp8_caches_weights", &SimulateOptions::fp8_caches_weights},
    {"fp8_weight_gather", &SimulateOptions::fp8_weight_gather},
    {"all_forwards_first_at_m_equal_pp", &SimulateOptions::all_forwards_first_at_m_equal_pp},
    {"torch_context_parallel", &SimulateOptions::torch_context_parallel},
    {"all_gather_context_parallel", &SimulateOptions::all_gather_context_parallel},
    {"grad_buckets_grow_with_dp", &SimulateOptions::grad_buckets_grow_with_dp},
};
}  // namespace

json to_json(const SimulateOptions& o) {
    json j = {{"memory_headroom", o.memory_headroom},
              {"grad_bucket_parameters", o.grad_bucket_parameters},
              {"flash_attention_version", o.flash_attention_version},
              {"metric_cross_entropies", o.metric_cross_entropies},
              {"vocab_padding_multiple", o.vocab_padding_multiple},
              {"cpu_offload_layers", o.cpu_offload_layers}};
    for (const auto& [name, field] : kSwitches) j[name] = o.*field;
    return j;
}

SimulateOptions parse_simulate_options(const json& j, const std::string& file) {
    ObjectReader r(j, file, "options");
    SimulateOptions o;
    o.memory_headroom = r.number("memory_headroom", o.memory_headroom, 0.0, 0.9, false);
    o.grad_bucket_parameters = r.number("grad_bucket_parameters", o.grad_bucket_parameters);
    o.flash_attention_version = int(r.integer("flash_attention_version", o.flash_attention_version, 1, 2));
    o.metric_cross_entropies = int(r.integer("metric_cross_entropies", o.metric_cross_entropies, 0, 16));
    o.vocab_padding_multiple = int(r.integer("vocab_padding_multiple", o.vocab_padding_multiple, 1, 1 << 20));
    o.cpu_offload_layers = int(r.integer("cpu_offload_layers", o.cpu_offload_layers, 0, 1 << 20));
    for (const auto& [name, field] : kSwitches) o.*field = r.boolean(name, o.*field);
    r.finish();
    return o;
}

}  // namespace tessel
