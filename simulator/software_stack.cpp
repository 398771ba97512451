#include "simulator/software_stack.h"

namespace tessel {

// Megatron-LM (arguments.py): bf16 forces accumulate_allreduce_grads_in_fp32; overlap_grad_reduce
// and overlap_param_gather are off unless --overlap-grad-reduce / --overlap-param-gather are
// given. Kernels: fused bias-GeLU / bias-dropout-add / rotary kernels, attention through
// Transformer Engine, vocab_parallel_cross_entropy on fp32 logits (--cross-entropy-loss-fusion is
// off by default). Transformer Engine's DotProductAttention runs cuDNN's FusedAttention where it
// and FlashAttention both apply on compute capability 9.0 and newer ("Disabling FlashAttention to
// give FusedAttention preference on Hopper+ for performance reasons",
// transformer_engine/pytorch/attention.py, get_attention_backend; sm90 has preferred it since
// Transformer Engine 1.2, December 2023, commit 32db39288) and FlashAttention-2 before
// Hopper; the A100 presets give no cuDNN figures, so there it runs as FlashAttention-2. Commit
// 83b1e42f30 (2022-02-13) added --gradient-accumulation-fusion, on unless
// --no-gradient-accumulation-fusion is given. train_step zeroes every model chunk's gradient
// buffer (zero_grad_buffer) before the step's first microbatch. Its sharding is
// --use-distributed-optimizer, which shards the optimizer state only: ZeRO-1. --recompute-method
// block with --recompute-num-layers N recomputes the first N layers of each model chunk and keeps
// the others' activations (transformer_block.py, _checkpointed_forward). Without sequence
// parallelism its pipeline sends were split over the TP ranks until the pipeline code moved into
// Megatron-Core (2023-03-23), which sends the whole tensor from every rank. Its interleaved
// schedule ran every forward first when the microbatches equal the pipeline ranks until commit
// 4295be1a6c (2024-11-01), which keeps the usual warm-up there too. Its column-parallel
// linears reduce their input gradient beside the weight-gradient GEMM unless
// --no-async-tensor-model-parallel-allreduce is given (merge b462d2545d, 2021-09-07; with
// sequence parallelism the input's re-gather and the gradient's reduce-scatter the same way).
const SoftwareStack kMegatronLM{.name = "Megatron-LM",
                                .bf16_grads_reduced_in_fp32 = true,
                                .overlaps_grad_reduce = false,
                                .overlaps_param_gather = false,
                                .p2p_scatter_gather_until = 20230323,
                                .all_forwards_first_until = 20241101,
                                .cudnn_attention = true,
                                .tp_backward_overlap_date = 20210907,
                                .grad_accumulation_fusion_date = 20220213,
                                .grad_buckets_grow_with_dp_date = 20240411,
                                .max_zero_stage = 1,
                                .block_recompute = true};

// DeepSpeed (deepspeed/runtime/pipe/engine.py, bf16_optimizer.py, zero/config.py): overlap_comm
// is off by default, and with pipeline stages the pipeline engine reduces the gradients after the
// last microbatch (ReduceGrads follows the schedule's backward passes); the bf16 optimizer adds
// each microbatch's 16-bit gradient to an fp32 copy (_update_hp_grad) and reduces in fp32; ZeRO-1/2
// gather the updated weights after the step, and the bf16 optimizer's step ends by zeroing its fp32
// gradients (clear_hp_grads). Its large published runs (Megatron-DeepSpeed) use Megatron's fused
// kernels. Its pipeline engine runs non-interleaved 1F1B (TrainSchedule) and accepts only ZeRO-0/1
// with pipeline stages; it has no Megatron-style sequence parallelism. Its pipeline engine
// partitions the activations (and gradients) it sends over the TP ranks (is_pipe_partitioned).
const SoftwareStack kDeepSpeed{.name = "DeepSpeed",
                               .bf16_grads_reduced_in_fp32 = true,
                               .overlaps_grad_reduce = false,
                               .reduces_after_pipeline_flush = true,
                               .overlaps_param_gather = false,
                               .p2p_scatter_gather = true,
                               .overlaps_tp_backward = false,
                               .fuses_grad_accumulation = false,
                               .grad_buckets_grow_with_dp = false,
                               .fp8_caches_weights = false,
                               .max_zero_stage_with_pipeline = 1,
                               .interleaves = false,
                               .megatron_sequence_parallel = false};

// llm-foundry (Composer + PyTorch FSDP): its MPT benchmark configurations run attn_impl "triton"
// (the default of scripts/train/benchmarking/submit_benchmarks.py and of the v0.3 pretrain yamls:
// the Triton FlashAttention, a FlashAttention-1-class kernel), eager PyTorch elementwise ops, and
// its default loss_fn "fused_crossentropy" (flash-attn's xentropy kernel, modeling_mpt.py).
// Its MPT vocabularies are padded in the model config itself (50368 for the GPT-NeoX tokenizer's
// 50277), and the model holds that size as given.
// Its MPT configurations set attn_pdrop, resid_pdrop and emb_pdrop to 0 (MPTConfig's defaults).
// Composer's trainer (composer/trainer/trainer.py, _train_microbatch) updates the model's train
// metrics after each microbatch's backward under no_grad; ComposerMPTCausalLM's are
// LanguageCrossEntropy and LanguagePerplexity (a subclass that repeats the same update), each a
// torch CrossEntropyLoss over the training forward's logits (composer/metrics/nlp.py). FSDP
// reduce-scatters each microbatch's gradient and adds the shard to the accumulated one in a
// separate kernel; its mixed-precision mode (DEFAULT: fp32 reduction, PURE: bf16) is stated per run.
// DEFAULT has reduced in fp32 since Composer 0.16.4 (commit d745fcb1b, 2023-10-10, "patch default"),
// which llm-foundry required from its October 2023 benchmark table on (setup.py mosaicml>=0.16.4);
// Composer 0.14 to 0.16.3 left reduce_dtype unset, which PyTorch FSDP takes as the bf16 param_dtype.
// Composer frees the gradients (zero_grad(set_to_none=True)) rather than zeroing a buffer.
const SoftwareStack kLlmFoundry{.name = "llm-foundry",
                                .flash_version = 1,
                                .applies_dropout = false,
                                .fused_elementwise = false,
                                .fused_cross_entropy = true,
                                .metric_cross_entropies = 2,
                                .vocab_padding_multiple = 1,
                                .fuses_grad_accumulation = false,
                                .grad_buckets_grow_with_dp = false,
                                .zeroes_grad_buffer = false,
                                .fp8_caches_weights = false};

// torchtitan (Llama models: no dropout): training.mixed_precision_reduce = "float32"; activation_checkpoint.selective_ac_option
// "op" / "2" re-runs about half a forward; SDPA's FlashAttention-2 backend (PyTorch made SDPA's
// cuDNN backend opt-in in October 2024, pytorch/pytorch#138522, so on an H100 SDPA picks
// FlashAttention-2; PyTorch 2.10+ with cuDNN 9.15+ prefers cuDNN again), eager ops
// (training.compile = false in its configs), F.cross_entropy on .float() logits; FSDP2 adds each
// reduced gradient shard in a separate kernel. Its tensor-parallel plan (parallelize_llama) shards
// the norms' inputs along the sequence (SequenceParallel): sequence parallelism whenever TP > 1.
// With pipeline stages it builds FSDP with reshard_after_forward=False, and PyTorch's pipeline
// schedules turn off reshard-after-backward and gradient sync for all but the last microbatch
// (torch.distributed.pipelining, backward_maybe_with_nosync): one gather per step, unsharded
// gradients, one reduce-scatter after the last backward. Its optimizer frees the gradients
// (zero_grad's set_to_none default). Its float8 training (torchao's Float8Linear,
// matmul_with_hp_or_float8_args) keeps each GEMM's bf16 input for the backward and casts it again.
// Its pipeline schedules are torch.distributed.pipelining's: ScheduleInterleaved1F1B warms up
// (v - 1) pp + 2 (pp - rank - 1) forwards even when the microbatches equal the ranks, as
// Megatron-Core has since November 2024. Its context parallelism is PyTorch's context_parallel
// (torch.distributed.tensor.experimental._attention: _SDPAMerger with convert_to_f32, fp32
// gradient accumulators, the K/V all-gathered at the first step by its default rotate method,
// which torchtitan's --experimental.context_parallel_rotate_method keeps, "allgather"; the dK/dV
// packed by torch.cat and passed round the ring), over the K/V its Llama attention has already
// repeated to the query heads (repeat_kv before SDPA). Its embedding and output layer hold the
// tokenizer's vocabulary as it is (TransformerModelArgs.vocab_size), unpadded.
const SoftwareStack kTorchtitan{.name = "torchtitan",
                                .bf16_grads_reduced_in_fp32 = true,
                                .reduces_after_pipeline_flush = true,
                                .half_forward_selective = true,
                                .sequence_parallel_with_tp = true,
                                .pipeline_gathers_once = true,
                                .applies_dropout = false,
                                .fused_elementwise = false,
                                .torch_cross_entropy = true,
                                .vocab_padding_multiple = 1,
                                .overlaps_tp_backward = false,
                                .fuses_grad_accumulation = false,
                                .grad_buckets_grow_with_dp = false,
                                .zeroes_grad_buffer = false,
                                .fp8_saves_gemm_inputs = false,
                                .fp8_caches_weights = false,
                                .torch_context_parallel = true,
                                .fsdp2_buffer_copies = true,
                                .tp_overlap_symmetric_memory = true};

// llm.c: its vocabulary padded to a multiple of 128 (GPT-2's 50257 to 50304, padded_vocab_size),
// no dropout (its GPT-2 has none), bf16 everywhere, per-layer reduce-scatter during the backward, cuDNN attention
// (USE_CUDNN=1 in its run scripts), hand-fused kernels, a fused classifier, and a matmul backward
// that accumulates into the gradient buffer in the GEMM itself; the buffer is zeroed (a memset)
// before each step's first microbatch. It shards the optimizer state at most (its -z 1: ZeRO-1).
const SoftwareStack kLlmC{.name = "llm.c",
                          .cudnn_attention = true,
                          .applies_dropout = false,
                          .fused_cross_entropy = true,
                          .grad_buckets_grow_with_dp = false,
                          .fp8_caches_weights = false,
                          .max_zero_stage = 1};

SimulateOptions stack_defaults(const SoftwareStack& s, Precision precision) {
    SimulateOptions o;
    o.overlap_grad_reduce = s.overlaps_grad_reduce;
    o.reduce_after_pipeline_flush = s.reduces_after_pipeline_flush;
    o.overlap_param_gather = s.overlaps_param_gather;
    o.p2p_scatter_gather = s.p2p_scatter_gather;
    o.grad_reduce_in_fp32 = (precision == Precision::bf16 || precision == Precision::fp8) && s.bf16_grads_reduced_in_fp32;
    o.flash_attention_version = s.flash_version;
    o.cudnn_attention = s.cudnn_attention;
    o.model_dropout = s.applies_dropout;
    o.fused_elementwise = s.fused_elementwise;
    o.fused_cross_entropy = s.fused_cross_entropy;
    o.torch_cross_entropy = s.torch_cross_entropy;
    o.metric_cross_entropies = s.metric_cross_entropies;
    o.vocab_padding_multiple = s.vocab_padding_multiple;
    o.tp_backward_overlap = s.overlaps_tp_backward;
    o.tp_overlap_symmetric_memory = s.tp_overlap_symmetric_memory;
    o.gradient_accumulation_fusion = s.fuses_grad_accumulation;
    o.grad_buckets_grow_with_dp = s.grad_buckets_grow_with_dp;
    o.zero_gradient_buffer = s.zeroes_grad_buffer;
    o.fp8_saves_gemm_inputs = s.fp8_saves_gemm_inputs;
    o.fp8_caches_weights = s.fp8_caches_weights;
    o.torch_context_parallel = s.torch_context_parallel;
    o.fsdp2_buffer_copies = s.fsdp2_buffer_copies;
    return o;
}

}  // namespace tessel
