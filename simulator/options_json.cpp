// The simulator options a result was priced with, as the simulation-result JSON records them.
#include "simulator/simulate.h"

namespace tessel {

json to_json(const SimulateOptions& o) {
    return json{{"memory_headroom", o.memory_headroom},
                {"overlap_grad_reduce", o.overlap_grad_reduce},
                {"reduce_after_pipeline_flush", o.reduce_after_pipeline_flush},
                {"overlap_param_gather", o.overlap_param_gather},
                {"tp_comm_overlap", o.tp_comm_overlap},
                {"grad_reduce_in_fp32", o.grad_reduce_in_fp32},
                {"grad_bucket_parameters", o.grad_bucket_parameters},
                {"overlap_p2p_comm", o.overlap_p2p_comm},
                {"p2p_scatter_gather", o.p2p_scatter_gather},
                {"gradient_accumulation_fusion", o.gradient_accumulation_fusion},
                {"zero_gradient_buffer", o.zero_gradient_buffer},
                {"zero2_layerwise_gather", o.zero2_layerwise_gather},
                {"backward_prefetch", o.backward_prefetch},
                {"fsdp2_buffer_copies", o.fsdp2_buffer_copies},
                {"fused_attention", o.fused_attention},
                {"flash_attention_version", o.flash_attention_version},
                {"cudnn_attention", o.cudnn_attention},
                {"model_dropout", o.model_dropout},
                {"fused_elementwise", o.fused_elementwise},
                {"eager_rmsnorm", o.eager_rmsnorm},
                {"fused_cross_entropy", o.fused_cross_entropy},
                {"torch_cross_entropy", o.torch_cross_entropy},
                {"metric_cross_entropies", o.metric_cross_entropies},
                {"fp8_saves_gemm_inputs", o.fp8_saves_gemm_inputs},
                {"fp8_weight_gather", o.fp8_weight_gather},
                {"cpu_offload_layers", o.cpu_offload_layers},
                {"all_forwards_first_at_m_equal_pp", o.all_forwards_first_at_m_equal_pp},
                {"torch_context_parallel", o.torch_context_parallel}};
}

}  // namespace tessel
