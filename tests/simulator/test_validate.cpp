// tessel validate's rules and statistics on hand-made rows.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "compare/validate.h"
#include "core/accounting.h"
#include "core/errors.h"
#include "core/presets.h"
#include "simulator/software_stack.h"

using namespace tessel;

TEST(Validate, SpearmanOfKnownRankings) {
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    // Ranks (1,2,3,4,5) and (2,1,4,3,5): d^2 sum 4, rho = 1 - 6*4/(5*24) = 0.8.
    EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
    // Ties share their mean rank.
    EXPECT_NEAR(spearman({1, 1, 2}, {1, 1, 2}), 1.0, 1e-12);
}

namespace {
json megatron_row() {
    return json{{"name", "test run"},
                {"source", "Megatron-LM README (commit abc, 2024-07-15)"},
                {"gpu_type", "H100 (SXM)"},
                {"num_gpus", 64},
                {"num_layers", 24},
                {"hidden_size", 2048},
                {"num_attention_heads", 16},
                {"num_kv_heads", nullptr},
                {"ffn_hidden_size", nullptr},
                {"vocab_size", 50257},
                {"seq_length", 2048},
                {"tensor_parallel", 2},
                {"pipeline_parallel", 1},
                {"data_parallel", nullptr},
                {"virtual_pipeline", nullptr},
                {"sequence_parallel", nullptr},
                {"zero_or_fsdp", nullptr},
                {"microbatch_size", nullptr},
                {"global_batch_size", 256},
                {"activation_recompute", nullptr},
                {"precision", nullptr},
                {"tflops_per_gpu", 400},
                {"throughput_definition", "model FLOPs; runs use --overlap-grad-reduce --tp-comm-overlap"}};
}
}  // namespace

TEST(Validate, NullFieldsTakeTheDocumentedDefaults) {
    const ValidationCase c = validation_case(megatron_row(), "test");
    EXPECT_EQ(c.model.num_kv_heads, 16);
    EXPECT_EQ(c.model.ffn_hidden_size, 4 * 2048);
    EXPECT_EQ(c.model.vocab_size, 50432);  // padded to a multiple of 128 x tp = 256
    EXPECT_EQ(c.plan.dp, 32);
    EXPECT_EQ(c.plan.microbatch_size, 1);
    EXPECT_EQ(c.plan.recompute, Recompute::none);
    EXPECT_EQ(c.plan.precision, Precision::bf16);
    EXPECT_TRUE(c.plan.sequence_parallel);  // --tp-comm-overlap requires it
    EXPECT_TRUE(c.options.tp_comm_overlap);
    EXPECT_TRUE(c.options.overlap_grad_reduce);
    EXPECT_TRUE(c.options.grad_reduce_in_fp32);  // Megatron reduces bf16 gradients in fp32
    EXPECT_TRUE(c.options.fused_attention);
    EXPECT_FALSE(c.options.overlap_p2p_comm);  // the row does not name --overlap-p2p-communication
    EXPECT_EQ(c.cluster.num_gpus(), 64);
    EXPECT_EQ(c.cluster.gpu.name, "H100-SXM");
}

TEST(Validate, GatedActivationsHaveThreeMatrices) {
    // GeGLU (Gemma) gates like SwiGLU: three MLP matrices; squared ReLU (Nemotron-4) does not.
    for (const auto& [name, gated] : {std::pair{"geglu", true}, std::pair{"SwiGLU", true}, std::pair{"silu", true},
                                      std::pair{"squared-relu", false}, std::pair{"gelu", false}}) {
        json row = megatron_row();
        row["activation"] = name;
        EXPECT_EQ(validation_case(row, "test").model.activation, gated ? Activation::swiglu : Activation::gelu) << name;
    }
}

TEST(Validate, ARowsOwnLayoutStatementsOverrideItsFamily) {
    // Nemotron-4 (arXiv 2402.16819): squared ReLU, an ungated MLP, yet rotary embeddings, no biases,
    // untied embeddings and no dropout.
    json row = megatron_row();
    row["activation"] = "squared-relu";
    const ValidationCase gpt = validation_case(row, "test");
    EXPECT_EQ(gpt.model.position_embedding, PositionEmbedding::learned);
    EXPECT_TRUE(gpt.model.linear_bias);
    EXPECT_TRUE(gpt.model.tied_embeddings);
    EXPECT_TRUE(gpt.options.model_dropout);
    row["notes"] = "Nemotron-4: rotary embeddings, no biases, untied embeddings, no dropout.";
    const ValidationCase nemotron = validation_case(row, "test");
    EXPECT_EQ(nemotron.model.activation, Activation::gelu);  // still two matrices
    EXPECT_EQ(nemotron.model.position_embedding, PositionEmbedding::rope);
    EXPECT_EQ(nemotron.model.max_position_embeddings, 0);
    EXPECT_FALSE(nemotron.model.linear_bias);
    EXPECT_FALSE(nemotron.model.tied_embeddings);
    EXPECT_FALSE(nemotron.options.model_dropout);
    row["notes"] = "rotary, no bias.";
    EXPECT_FALSE(validation_case(row, "test").model.linear_bias);
    row["notes"] = "no biased sampling";
    EXPECT_TRUE(validation_case(row, "test").model.linear_bias);
    row["notes"] = "a property of the European cluster";  // holds "rope", not the word
    EXPECT_EQ(validation_case(row, "test").model.position_embedding, PositionEmbedding::learned);
}

TEST(Validate, MegatronFusesTheLossWhereTheRowSaysSo) {
    json row = megatron_row();
    EXPECT_FALSE(validation_case(row, "test").options.fused_cross_entropy);  // Megatron-LM's default
    row["throughput_definition"] = "NeMo 2.0 sets cross_entropy_loss_fusion (--cross-entropy-loss-fusion)";
    EXPECT_TRUE(validation_case(row, "test").options.fused_cross_entropy);
}

TEST(Validate, FsdpIsZeroThreeAndOldRunsUseUnfusedAttention) {
    json row = megatron_row();
    row["zero_or_fsdp"] = "PyTorch FSDP FULL_SHARD (mixed-precision mode PURE)";
    row["source"] = "Megatron-LM paper artifact (commit x, 2021-04-08)";
    row["tensor_parallel"] = 1;
    row["throughput_definition"] = "";
    const ValidationCase c = validation_case(row, "test");
    EXPECT_EQ(c.plan.zero_stage, 3);
    EXPECT_FALSE(c.options.grad_reduce_in_fp32);
    row["zero_or_fsdp"] = "PyTorch FSDP SHARD_GRAD_OP (mixed-precision mode DEFAULT)";
    EXPECT_EQ(validation_case(row, "test").plan.zero_stage, 2);
    EXPECT_TRUE(validation_case(row, "test").options.zero2_layerwise_gather);
    row["zero_or_fsdp"] = "PyTorch FSDP NO_SHARD";
    EXPECT_EQ(validation_case(row, "test").plan.zero_stage, 0);
    EXPECT_FALSE(c.options.fused_attention);
    EXPECT_FALSE(c.plan.sequence_parallel);
}

TEST(Validate, Fp8RunsReduceGradientsLikeTheirBf16Weights) {
    json row = megatron_row();
    row["precision"] = "fp8 (Transformer Engine)";
    const ValidationCase c = validation_case(row, "test");
    EXPECT_EQ(c.plan.precision, Precision::fp8);
    EXPECT_TRUE(c.options.grad_reduce_in_fp32);  // Megatron's bf16 default: fp32 gradient buffers
    row["precision"] = "fp16";
    EXPECT_FALSE(validation_case(row, "test").options.grad_reduce_in_fp32);
    // NeMo 2.0's fp8 recipes turn Megatron-Core's fp32 gradient buffers off.
    row["precision"] = "fp8";
    row["throughput_definition"] = "the FP8 runs set grad_reduce_in_fp32 false";
    EXPECT_FALSE(validation_case(row, "test").options.grad_reduce_in_fp32);
}

TEST(Validate, PipelineSendsOverlapOnlyWhereTheRowSaysSo) {
    json row = megatron_row();
    row["throughput_definition"] = "runs use --overlap-p2p-communication";
    EXPECT_TRUE(validation_case(row, "test").options.overlap_p2p_comm);
}

TEST(Validate, GradientAccumulationIsFusedInMegatronFromFebruary2022) {
    json row = megatron_row();  // dated 2024
    EXPECT_TRUE(validation_case(row, "test").options.gradient_accumulation_fusion);
    row["source"] = "Megatron-LM paper artifact (commit x, 2022-02-12)";  // the day before the fusion landed
    EXPECT_FALSE(validation_case(row, "test").options.gradient_accumulation_fusion);
    row["source"] = "Megatron-LM README (commit y, 2022-02-13)";
    EXPECT_TRUE(validation_case(row, "test").options.gradient_accumulation_fusion);
    row["throughput_definition"] = "run with --no-gradient-accumulation-fusion";
    EXPECT_FALSE(validation_case(row, "test").options.gradient_accumulation_fusion);
    // FSDP stacks add each reduced shard; llm.c accumulates inside its GEMM.
    json foundry = megatron_row();
    foundry["source"] = "mosaicml/llm-foundry scripts/train/benchmarking/README.md (2023-06-01)";
    foundry["tensor_parallel"] = 1;
    foundry["throughput_definition"] = "";
    EXPECT_FALSE(validation_case(foundry, "test").options.gradient_accumulation_fusion);
    foundry["source"] = "karpathy/llm.c discussion (2024-05-28)";
    EXPECT_TRUE(validation_case(foundry, "test").options.gradient_accumulation_fusion);
}

// Megatron-LM split its pipeline sends over the TP ranks until Megatron-Core's p2p (2023-03-23);
// DeepSpeed's pipeline engine does at any date.
TEST(Validate, PipelineSendsSplitAsTheStackOfTheRowsDateDid) {
    json row = megatron_row();
    EXPECT_FALSE(validation_case(row, "test").options.p2p_scatter_gather);  // 2024-07-15
    row["source"] = "Megatron-LM paper run (2022-05-01)";
    EXPECT_TRUE(validation_case(row, "test").options.p2p_scatter_gather);
    row["source"] = "Megatron-DeepSpeed run (commit z, 2024-01-10)";
    EXPECT_TRUE(validation_case(row, "test").options.p2p_scatter_gather);
}

// Megatron-LM's interleaved schedule ran every forward first at m = pp until commit 4295be1a6c
// (2024-11-01); torchtitan's never did.
TEST(Validate, InterleavedWarmUpIsTheStackOfTheRowsDate) {
    json row = megatron_row();
    EXPECT_TRUE(validation_case(row, "test").options.all_forwards_first_at_m_equal_pp);  // 2024-07-15
    row["source"] = "NeMo performance summary (2025-02-10)";
    EXPECT_FALSE(validation_case(row, "test").options.all_forwards_first_at_m_equal_pp);
    row["source"] = "pytorch/torchtitan docs/performance.md (2024-08-23)";
    EXPECT_FALSE(validation_case(row, "test").options.all_forwards_first_at_m_equal_pp);
}

TEST(Validate, DeepSpeedRowsTakeThePipelineEngineAndBf16Optimizer) {
    json row = megatron_row();
    row["source"] = "Megatron-DeepSpeed run (commit z, 2023-01-10)";
    row["throughput_definition"] = "";
    row["zero_or_fsdp"] = "ZeRO-1";
    const ValidationCase c = validation_case(row, "test");
    EXPECT_EQ(c.framework, "DeepSpeed");
    EXPECT_FALSE(c.options.gradient_accumulation_fusion);  // whatever the date
    EXPECT_FALSE(c.options.overlap_grad_reduce);
    EXPECT_FALSE(c.options.overlap_param_gather);
    EXPECT_TRUE(c.options.grad_reduce_in_fp32);
    EXPECT_TRUE(c.options.fused_elementwise);
}

TEST(Validate, ReportComparesThePublishedMetric) {
    json runs = json::array({megatron_row()});
    const auto rep = validate_runs(runs, "test");
    ASSERT_EQ(rep.rows.size(), 1u);
    const auto& row = rep.rows[0];
    ASSERT_TRUE(row.modelable) << row.skipped_because;
    EXPECT_EQ(row.metric, PublishedMetric::model_tflops_per_gpu);
    EXPECT_NEAR(row.error, (row.predicted - 400) / 400, 1e-12);
    EXPECT_NEAR(rep.summary.mape, std::abs(row.error), 1e-12);
    const std::string md = validation_markdown(rep, "test", "tessel validate");
    EXPECT_NE(md.find("MAPE"), std::string::npos);
    EXPECT_NE(md.find("test run"), std::string::npos);
    // A file other than the built-in set was not fitted on: its report must not call its errors in-sample.
    EXPECT_NE(md.find("not on these rows"), std::string::npos);
    EXPECT_EQ(md.find("fitted on this same set"), std::string::npos);
    const std::string own = validation_markdown(rep, "configs/validation/published_runs.json", "tessel validate");
    EXPECT_NE(own.find("fitted on this same set"), std::string::npos);
}

TEST(Validate, ReportGroupsTheErrorsByGpu) {
    // Two H100 rows and one A100 row: a line per GPU with its count and its mean absolute error.
    json h100 = megatron_row(), a100 = megatron_row();
    a100["gpu_type"] = "A100-SXM4-80GB";
    a100["name"] = "a100 run";
    json other = h100;
    other["name"] = "second h100 run";
    other["tflops_per_gpu"] = 300;
    const auto rep = validate_runs(json::array({h100, other, a100}), "test");
    const std::string md = validation_markdown(rep, "test", "tessel validate");
    ASSERT_NE(md.find("### By GPU"), std::string::npos);
    const double h100_mape = 50 * (std::abs(rep.rows[0].error) + std::abs(rep.rows[1].error));
    EXPECT_NE(md.find("| H100-SXM | 2 | "), std::string::npos) << md;
    EXPECT_NE(md.find(fmt::format("| {:.1f}% |\n", h100_mape)), std::string::npos) << md;
    EXPECT_NE(md.find("| A100-SXM4-80GB | 1 | "), std::string::npos) << md;
}

TEST(Validate, JsonRowsCarryTheStepAndItsKernelTime) {
    const auto rep = validate_runs(json::array({megatron_row()}), "test");
    const json j = to_json(rep);
    ASSERT_EQ(j["rows"].size(), 1u);
    const json& row = j["rows"][0];
    const auto& k = rep.rows[0].result.kernel_time_s;
    EXPECT_DOUBLE_EQ(row["step_time_s"].get<double>(), rep.rows[0].step_time_s);
    EXPECT_DOUBLE_EQ(row["kernel_time_s"]["gemm"].get<double>(), k.gemm);
    EXPECT_DOUBLE_EQ(row["kernel_time_s"]["attention"].get<double>(), k.attention);
    EXPECT_DOUBLE_EQ(row["kernel_time_s"]["memory_bound"].get<double>(), k.memory_bound);
    // Kernels run inside the step: their time never exceeds it.
    EXPECT_GT(k.gemm, 0.0);
    EXPECT_LE(k.gemm + k.attention + k.memory_bound, rep.rows[0].step_time_s * (1 + 1e-9));
}

namespace {
// A built-in set of published runs, validated; every row must be modelled and fit its GPUs.
ValidationReport validate_builtin_set(const json& runs, const std::string& name) {
    ValidationReport rep = validate_runs(runs, "configs/validation/" + name + ".json");
    for (const auto& row : rep.rows) {
        EXPECT_TRUE(row.modelable) << row.name << ": " << row.skipped_because;
        EXPECT_TRUE(row.fits) << row.name;
    }
    return rep;
}
}  // namespace

TEST(Validate, OutOfSampleRunsAreAllModelled) {
    // The built-in out-of-sample set (runs the fitted parameters never saw) must load and model every
    // row; what its errors are is the report's business, not a test's.
    const json runs = load_json("validation", "out_of_sample_runs");
    const auto rep = validate_builtin_set(runs, "out_of_sample_runs");
    ASSERT_EQ(rep.rows.size(), runs.size());
}

TEST(Validate, Fp8WeightGatherIsWhatTheRowSets) {
    // R5: fp8 weight gathers only where the row sets them (torchao's enable_fsdp_float8_all_gather,
    // Megatron's --fp8-param-gather); off otherwise.
    const json runs = load_json("validation", "out_of_sample_runs");
    int float8 = 0;
    for (const auto& row : runs) {
        const std::string name = row["name"];
        if (name.find("405B 128xH100") == std::string::npos) continue;
        const bool sets = name.find("Float8") != std::string::npos;
        float8 += sets;
        EXPECT_EQ(validation_case(row, "test").options.fp8_weight_gather, sets) << name;
    }
    EXPECT_EQ(float8, 2);
    json row = runs[0];
    row["throughput_definition"] = "Megatron-LM with --fp8-param-gather";
    EXPECT_TRUE(validation_case(row, "test").options.fp8_weight_gather);
    row["throughput_definition"] = "fp8_param_gather: false";
    EXPECT_FALSE(validation_case(row, "test").options.fp8_weight_gather);
}

TEST(Validate, CpuOffloadIsReadAndItsLimitsAreTheRowsError) {
    // R4: cpu_offloading_num_layers N offloads N layers' activations; with pipeline stages (which
    // Megatron-Core refuses) or N not below the layers, that row is not modelled and the others run.
    const json runs = load_json("validation", "megatron_bridge_perf_2026");
    json rows = json::array();
    for (const auto& row : runs) {
        const int pp = row["pipeline_parallel"];
        if (pp == 1 && rows.size() < 1) rows.push_back(row);  // an FSDP line that offloads
        if (pp > 1 && rows.size() == 1) {
            json bad = row;
            bad["throughput_definition"] = bad["throughput_definition"].get<std::string>() + ", cpu_offloading_num_layers 10";
            rows.push_back(bad);
        }
    }
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_GT(validation_case(rows[0], "test").options.cpu_offload_layers, 0);
    const auto rep = validate_runs(rows, "test.json");
    ASSERT_EQ(rep.rows.size(), 2u);
    EXPECT_TRUE(rep.rows[0].skipped_because.empty()) << rep.rows[0].skipped_because;
    EXPECT_NE(rep.rows[1].skipped_because.find("cpu_offloading_num_layers"), std::string::npos) << rep.rows[1].skipped_because;
}

TEST(Validate, LlmFoundryTableRunsAreAllModelled) {
    // The rest of llm-foundry's benchmark table (the fit set holds 12 of its lines).
    const json runs = load_json("validation", "llm_foundry_table");
    const auto rep = validate_builtin_set(runs, "llm_foundry_table");
    ASSERT_GT(rep.rows.size(), 200u);
}

TEST(Validate, LlmFoundryTableOf2023RunsAreAllModelled) {
    // The same table as published in July 2023: bf16 in FSDP's mode PURE, no 'Model TFLOP' column;
    // the lines the 2024 table kept unchanged are left to llm_foundry_table.
    const json runs = load_json("validation", "llm_foundry_table_2023");
    const auto rep = validate_builtin_set(runs, "llm_foundry_table_2023");
    ASSERT_GT(rep.rows.size(), 80u);
    const ValidationCase c = validation_case(runs[0], "test");
    EXPECT_FALSE(c.options.grad_reduce_in_fp32);  // mode PURE reduces in bf16 (R8)
    EXPECT_EQ(c.plan.precision, Precision::bf16);
}

TEST(Validate, DgxcBenchmarkingRunsAreAllModelled) {
    // NVIDIA's DGX Cloud Benchmarking recipes on H100 and GB200 (NeMo 24.09-25.04): every row loads, and the
    // recipe flags its rows state reach the options (R7, R8, R12).
    const json runs = load_json("validation", "dgxc_benchmarking");
    const auto rep = validate_builtin_set(runs, "dgxc_benchmarking");
    ASSERT_EQ(rep.rows.size(), runs.size());
    for (const auto& row : runs) {
        const ValidationCase c = validation_case(row, "test");
        SCOPED_TRACE(c.name);
        EXPECT_TRUE(c.options.overlap_grad_reduce);
        EXPECT_TRUE(c.options.overlap_param_gather);
        if (c.plan.tp > 1) {
            EXPECT_TRUE(c.options.tp_comm_overlap);
        }
    }
    // The 15B recipe leaves optim.grad_sync_dtype at its fp32 default; the others reduce in bf16.
    EXPECT_TRUE(validation_case(runs[12], "test").options.grad_reduce_in_fp32);
    EXPECT_FALSE(validation_case(runs[0], "test").options.grad_reduce_in_fp32);
    // NeMo 2.0's performance scripts reduce in bf16 only in FP8 (the last two rows: 405B BF16, FP8).
    const std::size_t n = runs.size();
    EXPECT_TRUE(validation_case(runs[n - 2], "test").options.grad_reduce_in_fp32);
    EXPECT_FALSE(validation_case(runs[n - 1], "test").options.grad_reduce_in_fp32);
}

TEST(Validate, MegatronBridgePerfRunsAreAllModelled) {
    // NeMo 25.09's Megatron-Bridge table (dense Llama on H100, B200, GB200): every row loads, and the
    // recipe's flags reach the options: bf16 gradient reduction, the fused cross entropy, no dropout;
    // with TP, sequence parallelism and TP overlap; with an interleaved pipeline, overlapped sends;
    // Megatron-FSDP as ZeRO-3; FP8-CS and MXFP8 both as fp8 (R5).
    const json runs = load_json("validation", "megatron_bridge_perf");
    const auto rep = validate_builtin_set(runs, "megatron_bridge_perf");
    ASSERT_EQ(rep.rows.size(), runs.size());
    int fsdp_rows = 0;
    for (const auto& row : runs) {
        const ValidationCase c = validation_case(row, "test");
        SCOPED_TRACE(c.name);
        EXPECT_EQ(c.plan.precision, Precision::fp8);
        EXPECT_FALSE(c.options.grad_reduce_in_fp32);
        EXPECT_TRUE(c.options.fused_cross_entropy);
        EXPECT_FALSE(c.options.model_dropout);
        EXPECT_TRUE(c.options.overlap_grad_reduce);
        EXPECT_EQ(c.plan.sequence_parallel, c.plan.tp > 1);
        EXPECT_EQ(c.options.tp_comm_overlap, c.plan.tp > 1);
        if (c.plan.virtual_stages > 1) {
            EXPECT_TRUE(c.options.overlap_p2p_comm);
        }
        if (c.plan.zero_stage == 3) ++fsdp_rows;
        // The GB200 FSDP lines offload activations to the Grace CPU (40 and 95 layers).
        if (c.plan.zero_stage == 3 && c.cluster.gpu.name == "GB200") {
            EXPECT_EQ(c.options.cpu_offload_layers, c.model.num_layers == 80 ? 40 : 95);
        } else {
            EXPECT_EQ(c.options.cpu_offload_layers, 0);
        }
        // The table's gradient accumulation (GA) follows from its GBS, MBS and the data-parallel size.
        EXPECT_EQ(c.plan.world_size(), row["num_gpus"].get<int>());
    }
    EXPECT_EQ(fsdp_rows, 3);  // H100 Llama 3 8B; GB200 70B and 405B
}

TEST(Validate, MegatronBridge2026RunsAreAllModelled) {
    // NeMo 26.04.01's table: Llama 3 70B and 3.1 405B on GB300 NVL72 (Blackwell Ultra), GB200 NVL72
    // and DGX-H100. Every row loads on its own GPU's preset, GB300 and GB200 rows on 64 GPUs of each
    // rack, with the recipe's flags (no TP overlap where there is no TP).
    const json runs = load_json("validation", "megatron_bridge_perf_2026");
    const auto rep = validate_builtin_set(runs, "megatron_bridge_perf_2026");
    ASSERT_EQ(rep.rows.size(), runs.size());
    int gb300 = 0;
    for (const auto& row : runs) {
        const ValidationCase c = validation_case(row, "test");
        SCOPED_TRACE(c.name);
        EXPECT_EQ(c.plan.precision, Precision::fp8);
        EXPECT_FALSE(c.options.grad_reduce_in_fp32);
        EXPECT_EQ(c.options.tp_comm_overlap, c.plan.tp > 1);
        if (c.cluster.gpu.name == "GB300") {
            ++gb300;
            EXPECT_EQ(c.cluster.gpus_per_node, 64);
        }
        // The two FSDP lines offload 20 (GB300) and 40 (GB200) layers' activations, and accumulate
        // gradients with separate kernels (the FSDP recipes turn the fusion off).
        if (c.plan.zero_stage == 3) {
            EXPECT_EQ(c.options.cpu_offload_layers, c.cluster.gpu.name == "GB300" ? 20 : 40);
            EXPECT_FALSE(c.options.gradient_accumulation_fusion);
        } else {
            EXPECT_EQ(c.options.cpu_offload_layers, 0);
            EXPECT_TRUE(c.options.overlap_p2p_comm);  // the other lines are interleaved
        }
    }
    EXPECT_EQ(gb300, 4);
}

TEST(Validate, TorchtitanH100RunsAreAllModelled) {
    // torchtitan's H100 tables: every row loads, the interleaved 405B layout too (126 layers over
    // 8 ranks x 2 stages: 7 on the first and last stage, 8 on the 14 between).
    const json runs = load_json("validation", "torchtitan_h100_runs");
    const auto rep = validate_builtin_set(runs, "torchtitan_h100_runs");
    ASSERT_EQ(rep.rows.size(), runs.size());
}

TEST(Validate, PublishedPeakMemoryIsComparedNotUsed) {
    // R16: memory_gb is GB unless the row names GiB; it changes no prediction, and the summary's
    // memory error is the mean of predicted / published - 1 over the rows that give one.
    json gb = megatron_row(), gib = megatron_row(), none = megatron_row();
    gb["memory_gb"] = 64.0;
    gib["memory_gb"] = 64.0;
    gib["notes"] = "Memory(GiB) is the table's maximum over GPUs.";
    const auto rep = validate_runs(json::array({gb, gib, none}), "test");
    ASSERT_EQ(rep.rows.size(), 3u);
    for (const auto& r : rep.rows) ASSERT_TRUE(r.modelable) << r.skipped_because;
    EXPECT_NEAR(rep.rows[0].published_memory_GiB, 64e9 / (1024.0 * 1024 * 1024), 1e-9);
    EXPECT_DOUBLE_EQ(rep.rows[1].published_memory_GiB, 64.0);
    EXPECT_DOUBLE_EQ(rep.rows[2].published_memory_GiB, 0.0);
    EXPECT_DOUBLE_EQ(rep.rows[0].predicted, rep.rows[2].predicted);
    EXPECT_DOUBLE_EQ(rep.rows[0].memory_GiB, rep.rows[2].memory_GiB);
    const double m = rep.rows[2].memory_GiB;
    EXPECT_EQ(rep.summary.memory_rows, 2);
    const double e0 = m / rep.rows[0].published_memory_GiB - 1, e1 = m / 64.0 - 1;
    EXPECT_NEAR(rep.summary.memory_bias, (e0 + e1) / 2, 1e-12);
    EXPECT_NEAR(rep.summary.memory_mape, (std::abs(e0) + std::abs(e1)) / 2, 1e-12);

    json bad = megatron_row();
    bad["memory_gb"] = -1.0;
    const auto b = validate_runs(json::array({bad}), "test");
    EXPECT_FALSE(b.rows[0].modelable);
    EXPECT_NE(b.rows[0].skipped_because.find("memory_gb"), std::string::npos) << b.rows[0].skipped_because;

    // An H100 holds 80 GiB: 85 GB (79.2 GiB) can be a measured peak, 90 GB (83.8 GiB) cannot.
    json under = megatron_row(), over = megatron_row();
    under["memory_gb"] = 85.0;
    over["memory_gb"] = 90.0;
    const auto u = validate_runs(json::array({under, over}), "test");
    EXPECT_TRUE(u.rows[0].modelable) << u.rows[0].skipped_because;
    EXPECT_FALSE(u.rows[1].modelable);
    EXPECT_NE(u.rows[1].skipped_because.find("memory_gb"), std::string::npos) << u.rows[1].skipped_because;
    EXPECT_NE(u.rows[1].skipped_because.find("at most the 80 GiB"), std::string::npos) << u.rows[1].skipped_because;
}

TEST(Validate, TorchtitansPublishedOutOfMemoryLayoutsDoNotFit) {
    // torchtitan's docs/performance.md (3faaa1a0d, 2024-08-23), beside the out-of-sample rows it
    // published: Llama 2 70B on 64 A100-80GB ran local batch 1 with selective op checkpointing
    // because local batch 2 ran out of memory, and Llama 3.1 405B on 128 H100s "OOM for 1D
    // parallelism (FSDP2)", so it ran TP 8 x FSDP 16. The memory model agrees on all four.
    const json runs = load_json("validation", "out_of_sample_runs");
    json rows = json::array();
    for (const auto& row : runs) {
        const std::string name = row["name"];
        if (name == "torchtitan Llama2-70B 64xA100 FSDP2 bs1 AC=selective op") {
            json oom = row;
            oom["name"] = "local batch 2";
            oom["microbatch_size"] = 2;
            oom["global_batch_size"] = 128;
            rows.push_back(row);
            rows.push_back(oom);
        }
        if (name == "torchtitan Llama3.1-405B 128xH100 FSDP16 TP8 bs2 AC=full") {
            json oom = row;
            oom["name"] = "FSDP alone";
            oom["tensor_parallel"] = 1;
            oom["data_parallel"] = 128;
            oom["global_batch_size"] = 256;
            rows.push_back(row);
            rows.push_back(oom);
        }
    }
    ASSERT_EQ(rows.size(), 4u);
    const auto rep = validate_runs(rows, "test");
    for (std::size_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(rep.rows[i].modelable) << rep.rows[i].skipped_because;
        EXPECT_EQ(rep.rows[i].fits, i % 2 == 0) << rep.rows[i].name << ": " << rep.rows[i].memory_GiB << " GiB";
    }
}

TEST(Validate, BadRowsAreReportedNotFatal) {
    json row = megatron_row();
    row["num_attention_heads"] = 15;  // tp 2 does not divide 15 heads
    const auto rep = validate_runs(json::array({row}), "test");
    ASSERT_EQ(rep.rows.size(), 1u);
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_FALSE(rep.rows[0].skipped_because.empty());
}

TEST(Validate, CountsThatAreNotWholeNumbersAreInputErrorsNamingTheKey) {
    for (double bad : {1e20, -8.0, 7.5}) {
        json row = megatron_row();
        row["num_gpus"] = bad;
        try {
            validation_case(row, "runs.json");
            FAIL() << bad;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(".num_gpus"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("whole number"), std::string::npos) << e.what();
        }
    }
    json row = megatron_row();
    row["gpus_per_node"] = 1e12;
    EXPECT_THROW(validation_case(row, "runs.json"), InputError);
}

TEST(Validate, MixtureOfExpertsRowsAreReportedNotPredicted) {
    json row = megatron_row();
    row["expert_parallel"] = 8;
    auto rep = validate_runs(json::array({row}), "test");
    ASSERT_EQ(rep.rows.size(), 1u);
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_NE(rep.rows[0].skipped_because.find("expert_parallel"), std::string::npos) << rep.rows[0].skipped_because;
    row["expert_parallel"] = 1;  // a dense run that names its (trivial) expert parallelism
    EXPECT_TRUE(validate_runs(json::array({row}), "test").rows[0].modelable);
}

TEST(Validate, EachFrameworkGetsItsDocumentedKernels) {
    // R12: Megatron-LM fused elementwise kernels, FlashAttention-2-class attention, fp32 loss.
    const ValidationCase mg = validation_case(megatron_row(), "test");
    EXPECT_EQ(mg.options.flash_attention_version, 2);
    EXPECT_TRUE(mg.options.fused_elementwise);
    EXPECT_FALSE(mg.options.fused_cross_entropy);
    EXPECT_EQ(mg.options.metric_cross_entropies, 0);  // logs the loss it already has
    EXPECT_TRUE(mg.model.linear_bias);  // GPT family (R1)
    json row = megatron_row();
    row["tensor_parallel"] = 1;
    row["throughput_definition"] = "";
    row["source"] = "mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit x, 2024-04-22)";
    const ValidationCase lf = validation_case(row, "test");
    EXPECT_EQ(lf.options.flash_attention_version, 1);  // attn_impl "triton"
    EXPECT_FALSE(lf.options.fused_elementwise);
    EXPECT_TRUE(lf.options.fused_cross_entropy);  // loss_fn "fused_crossentropy"
    EXPECT_EQ(lf.options.metric_cross_entropies, 2);  // Composer's LanguageCrossEntropy and LanguagePerplexity
    row["notes"] = "attn_impl: flash";            // a row that names its kernel says which
    EXPECT_EQ(validation_case(row, "test").options.flash_attention_version, 2);
    row["notes"] = nullptr;
    row["source"] = "pytorch/torchtitan docs/performance.md (commit x, 2024-08-23)";
    const ValidationCase tt = validation_case(row, "test");
    EXPECT_EQ(tt.options.flash_attention_version, 2);
    EXPECT_FALSE(tt.options.fused_elementwise);
    EXPECT_FALSE(tt.options.fused_cross_entropy);
    EXPECT_EQ(tt.options.metric_cross_entropies, 0);
    EXPECT_FALSE(tt.options.eager_rmsnorm);  // one kernel unless the row names the eager one
    row["notes"] = "norm_type rmsnorm";
    EXPECT_TRUE(validation_case(row, "test").options.eager_rmsnorm);
    row["notes"] = "norm_type rmsnorm; torch.compile";  // compiled blocks fuse it
    EXPECT_FALSE(validation_case(row, "test").options.eager_rmsnorm);
    row["notes"] = nullptr;
    row["source"] = "karpathy/llm.c scripts/run_gpt2_124M.sh";
    const ValidationCase lc = validation_case(row, "test");
    EXPECT_TRUE(lc.options.fused_elementwise);
    EXPECT_TRUE(lc.options.fused_cross_entropy);
}

namespace {
// Two small rows of different frameworks whose published figures are the simulator's own
// prediction at known parameters scaled by known factors.
json two_framework_rows() {
    json a = megatron_row();
    a["name"] = "a";
    a["num_gpus"] = 8;
    a["tensor_parallel"] = 1;
    a["global_batch_size"] = 16;
    json b = a;
    b["name"] = "b";
    b["source"] = "pytorch/torchtitan docs/performance.md (commit x, 2024-08-23)";
    b["tflops_per_gpu"] = nullptr;
    b["tokens_per_sec_per_gpu"] = 1000;
    return json::array({a, b});
}
}  // namespace

TEST(Validate, CrossValidationRefitsWithoutTheHeldOutRows) {
    const json runs = two_framework_rows();
    const CrossValidation cv = cross_validate(runs, "test", std::nullopt, 2);
    ASSERT_EQ(cv.parameters.size(), fitted_parameters().size());
    ASSERT_EQ(cv.in_sample.size(), cv.parameters.size());
    // Each fitted value lies on its grid.
    for (std::size_t k = 0; k < cv.parameters.size(); ++k) {
        const auto& grid = fitted_parameters()[k].grid;
        EXPECT_GE(cv.in_sample[k], grid.front() - 1e-12);
        EXPECT_LE(cv.in_sample[k], grid.back() + 1e-12);
    }
    // The in-sample fit minimises the MAPE over the grid, so no held-out split can beat it.
    EXPECT_LE(cv.in_sample_summary.mape, cv.by_framework_summary.mape + 1e-12);
    EXPECT_LE(cv.in_sample_summary.mape, cv.k_fold_summary.mape + 1e-12);
    ASSERT_EQ(cv.by_framework.size(), 2u);
    EXPECT_EQ(cv.by_framework_summary.modelable, 2);
    // Held out, each framework's row is predicted with the parameters fitted on the other row:
    // re-running that row alone at those parameters gives the same error.
    for (const auto& fold : cv.by_framework) {
        json prof = json::object();
        for (std::size_t k = 0; k < cv.parameters.size(); ++k) prof[cv.parameters[k]] = fold.fitted[k];
        const json row = fold.name == "Megatron-LM" ? runs[0] : runs[1];
        const auto rep = validate_runs(json::array({row}), "test", prof);
        EXPECT_NEAR(std::abs(rep.rows[0].error), fold.summary.mape, 1e-12) << fold.name;
    }
}

TEST(Validate, ConstantMfuBaselineFitsOneRowExactly) {
    // One row: the best constant MFU is the row's own published MFU, up to the grid's 0.25 points.
    json runs = json::array({two_framework_rows()[0]});
    const CrossValidation cv = cross_validate(runs, "test", std::nullopt, 2);
    const auto rep = validate_runs(runs, "test");
    EXPECT_NEAR(cv.baseline_mfu, rep.rows[0].published_mfu, 0.0025 / 2 + 1e-9);
    EXPECT_LE(cv.baseline_summary.mape, 0.0025 / rep.rows[0].published_mfu);
    // A constant predicts no ranking.
    EXPECT_DOUBLE_EQ(cv.baseline_summary.spearman, 0.0);
}

TEST(Validate, TorchtitanShardsNormsWithTensorParallelismAndGathersOnceUnderPipelining) {
    json row = megatron_row();
    row["source"] = "pytorch/torchtitan docs/performance.md (commit x, 2024-12-26)";
    row["throughput_definition"] = "";
    row["zero_or_fsdp"] = "FSDP2";
    row["num_layers"] = 8;
    // R6: its tensor-parallel plan shards the norms along the sequence.
    const ValidationCase tp = validation_case(row, "test");
    EXPECT_TRUE(tp.plan.sequence_parallel);
    EXPECT_EQ(tp.plan.zero_stage, 3);
    // R3/R7: with pipeline stages FSDP keeps the gathered weights and unsharded gradients through
    // the step and reduces after the last microbatch.
    row["pipeline_parallel"] = 2;
    const ValidationCase pp = validation_case(row, "test");
    EXPECT_EQ(pp.plan.zero_stage, 1);
    EXPECT_TRUE(pp.options.reduce_after_pipeline_flush);
    // Megatron-LM keeps its own defaults: no sequence parallelism unless stated.
    json mg = megatron_row();
    mg["throughput_definition"] = "";
    EXPECT_FALSE(validation_case(mg, "test").plan.sequence_parallel);
}

namespace {
// A 21.7B-parameter GPT on 8 H100s at tensor-parallel 8: 2.7B weights per GPU (about 49 GB of
// weights, fp32 gradients and Adam state), and a microbatch of 4 x 4096 tokens whose activations
// do not fit beside them unless each layer keeps only its input. Everything but the recompute mode
// is stated.
json large_activation_row() {
    json row = megatron_row();
    row["num_gpus"] = 8;
    row["num_layers"] = 48;
    row["hidden_size"] = 6144;
    row["num_attention_heads"] = 48;
    row["seq_length"] = 4096;
    row["tensor_parallel"] = 8;
    row["global_batch_size"] = 64;
    row["microbatch_size"] = 4;
    row["sequence_parallel"] = false;
    row["zero_or_fsdp"] = "none";
    row["throughput_definition"] = "model FLOPs";
    return row;
}
std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + "; ";
    return s;
}
}  // namespace

TEST(Validate, UnstatedKnobsThatDoNotFitTakeTheFastestSettingThatFits) {
    const json row = large_activation_row();
    const ValidationCase c = validation_case(row, "test");
    ASSERT_TRUE(c.unstated.recompute);
    ASSERT_FALSE(c.unstated.microbatch || c.unstated.zero || c.unstated.sequence_parallel || c.unstated.virtual_pipeline);
    // The premise, from the memory model: only full recompute fits.
    auto fits = [&](Recompute r) {
        Plan p = c.plan;
        p.recompute = r;
        return estimate_memory(c.model, c.cluster, p, c.options).peak <= c.cluster.gpu.memory_GiB;
    };
    ASSERT_FALSE(fits(Recompute::none));
    ASSERT_FALSE(fits(Recompute::selective));
    ASSERT_TRUE(fits(Recompute::full));

    const auto rep = validate_runs(json::array({row}), "test");
    const ValidationRow& v = rep.rows[0];
    ASSERT_TRUE(v.modelable) << v.skipped_because;
    EXPECT_TRUE(v.fits);
    EXPECT_EQ(v.setup.plan.recompute, Recompute::full);
    EXPECT_EQ(v.setup.plan.microbatch_size, 4);  // stated: kept
    const std::string said = joined(v.setup.assumptions);
    EXPECT_NE(said.find("R15"), std::string::npos) << said;
    EXPECT_NE(said.find("full recompute"), std::string::npos) << said;
    EXPECT_EQ(said.find("no recompute"), std::string::npos) << said;  // the default's words are gone

    // Stated, the same mode is kept and the row is reported as not fitting.
    json stated = row;
    stated["activation_recompute"] = "none";
    const auto stated_rep = validate_runs(json::array({stated}), "test");
    const ValidationRow& s = stated_rep.rows[0];
    EXPECT_FALSE(s.fits);
    EXPECT_EQ(s.setup.plan.recompute, Recompute::none);
    EXPECT_EQ(joined(s.setup.assumptions).find("R15"), std::string::npos);
}

// Where no setting of the unstated knobs fits either, the one that needs least memory is the
// nearest to the run, which did fit: not the defaults.
TEST(Validate, UnstatedKnobsWhereNothingFitsTakeTheLeastMemory) {
    json row = large_activation_row();
    row["microbatch_size"] = 32;
    const ValidationCase c = validation_case(row, "test");
    ASSERT_TRUE(c.unstated.recompute);
    auto peak = [&](Recompute r) {
        Plan p = c.plan;
        p.recompute = r;
        return estimate_memory(c.model, c.cluster, p, c.options).peak;
    };
    ASSERT_GT(peak(Recompute::full), c.cluster.gpu.memory_GiB);  // the premise: nothing fits
    ASSERT_LT(peak(Recompute::full), peak(Recompute::selective));
    const auto rep = validate_runs(json::array({row}), "test");
    const ValidationRow& v = rep.rows[0];
    ASSERT_TRUE(v.modelable) << v.skipped_because;
    EXPECT_FALSE(v.fits);
    EXPECT_EQ(v.setup.plan.recompute, Recompute::full);
    EXPECT_NE(joined(v.setup.assumptions).find("no setting fits"), std::string::npos) << joined(v.setup.assumptions);
}

// R7: async TP in words is the overlap (torchtitan's tables: "2D + AsyncTP"); a key set false wins.
TEST(Validate, AsyncTpInWordsIsTheOverlap) {
    json row = large_activation_row();
    row["sequence_parallel"] = nullptr;
    auto overlapped = [&](const char* definition) {
        row["throughput_definition"] = definition;
        return validation_case(row, "test").options.tp_comm_overlap;
    };
    EXPECT_TRUE(overlapped("This row: 2D + AsyncTP, torch.compile"));
    EXPECT_TRUE(overlapped("asynchronous tensor parallelism"));
    EXPECT_FALSE(overlapped("no async TP"));
    EXPECT_FALSE(overlapped("async TP (enable_async_tensor_parallel = false)"));
    EXPECT_FALSE(overlapped("--no-async-tensor-model-parallel-allreduce"));  // Megatron's backward all-reduce
    EXPECT_FALSE(overlapped("asynchronous tensor parallel all-reduce overlapped with the weight-gradient GEMM"));
    EXPECT_FALSE(overlapped("Async TP isn't enabled"));
    EXPECT_FALSE(overlapped("async TP is not supported"));
}

// R10: Narayanan et al. 2021's eq. (3), written out or cited, counts the recomputed forward.
TEST(Validate, MegatronsEquationThreeWrittenOutCountsTheRecompute) {
    auto metric = [](const char* definition) {
        json row = large_activation_row();
        row["activation_recompute"] = "full";
        row["throughput_definition"] = definition;
        row["tflops_per_gpu"] = 150.0;
        return validate_runs(json::array({row}), "test").rows[0].metric;
    };
    EXPECT_EQ(metric("TFLOP/s per GPU under Megatron's eq. 3"), PublishedMetric::hardware_tflops_per_gpu);
    for (const char* model : {"model FLOPs, which exclude the extra forward pass of recomputation",
                              "model FLOPs; the extra forward pass is excluded", "Kaplan et al. eq. (3)"})
        EXPECT_EQ(metric(model), PublishedMetric::model_tflops_per_gpu) << model;
    for (const char* definition : {"F = 96*B*s*l*h^2*(1 + s/6h + V/(16*l*h)) (the formula of the Megatron paper)",
                                   "eq. (3) of Narayanan et al. 2021, which counts the extra forward pass"}) {
        json row = large_activation_row();
        row["activation_recompute"] = "full";
        row["throughput_definition"] = definition;
        row["tflops_per_gpu"] = 150.0;
        const auto rep = validate_runs(json::array({row}), "test");
        ASSERT_TRUE(rep.rows[0].modelable) << rep.rows[0].skipped_because;
        EXPECT_EQ(rep.rows[0].metric, PublishedMetric::hardware_tflops_per_gpu) << definition;
    }
}

TEST(Validate, UnstatedRecomputeTakesTheFewestBlockLayersThatFit) {
    // As the planner searches it: where no recompute does not fit, a framework with block recompute
    // (Megatron-LM's --recompute-method block) recomputes only the first N layers of each chunk, the
    // fewest that fit, which is faster than recomputing all of them. DeepSpeed has no such knob.
    const json row = large_activation_row();
    const ValidationCase c = validation_case(row, "test");
    ASSERT_TRUE(c.stack->block_recompute);
    auto plan_with = [&](int layers) {
        Plan p = c.plan;
        p.recompute = Recompute::full;
        p.recompute_layers = layers;
        return p;
    };
    auto fits = [&](int layers) {
        return estimate_memory(c.model, c.cluster, plan_with(layers), c.options).peak <= c.cluster.gpu.memory_GiB;
    };
    int fewest = 1;
    while (fewest < c.model.num_layers && !fits(fewest)) ++fewest;
    ASSERT_LT(fewest, c.model.num_layers);  // the premise: some layers may keep their activations
    const auto rep = validate_runs(json::array({row}), "test");
    const ValidationRow& v = rep.rows[0];
    ASSERT_TRUE(v.fits);
    EXPECT_EQ(v.setup.plan.recompute, Recompute::full);
    EXPECT_EQ(v.setup.plan.recompute_layers, fewest);
    EXPECT_LT(v.step_time_s, simulate(c.model, c.cluster, plan_with(0), c.options).step_time_s);
    EXPECT_NE(joined(v.setup.assumptions).find("full recompute of the first"), std::string::npos);

    json deepspeed = row;
    deepspeed["source"] = "Megatron-DeepSpeed run (2023-01-10)";
    const auto ds = validate_runs(json::array({deepspeed}), "test");
    ASSERT_TRUE(ds.rows[0].fits);
    EXPECT_EQ(ds.rows[0].setup.plan.recompute, Recompute::full);
    EXPECT_EQ(ds.rows[0].setup.plan.recompute_layers, 0);
}

TEST(Validate, FilledKnobsStayWithinWhatTheFrameworkExpresses) {
    // With the microbatch, ZeRO stage and recompute free, every setting is open: the one chosen
    // must fit, beat every other fitting one that the framework allows, and stay in its limits.
    json row = large_activation_row();
    row["microbatch_size"] = nullptr;
    row["zero_or_fsdp"] = nullptr;
    row["pipeline_parallel"] = 2;
    row["num_gpus"] = 32;  // dp 2
    row["seq_length"] = 16384;
    for (const char* source : {"Megatron-LM README (2024-07-15)", "Megatron-DeepSpeed run (2023-01-10)"}) {
        row["source"] = source;
        const ValidationCase c = validation_case(row, "test");
        ASSERT_GT(estimate_memory(c.model, c.cluster, c.plan, c.options).peak, c.cluster.gpu.memory_GiB);
        const auto rep = validate_runs(json::array({row}), "test");
        const ValidationRow& v = rep.rows[0];
        ASSERT_TRUE(v.modelable) << v.skipped_because;
        ASSERT_TRUE(v.fits) << source;
        EXPECT_NE(joined(v.setup.assumptions).find("R15"), std::string::npos);
        EXPECT_LE(v.setup.plan.zero_stage, 1) << source;  // both shard to ZeRO-1 at most here
        if (c.framework == "DeepSpeed") {
            EXPECT_EQ(v.setup.plan.virtual_stages, 1);  // its pipeline engine does not interleave
            EXPECT_FALSE(c.unstated.virtual_pipeline);
        }
        // Against every fitting alternative, enumerated here.
        for (int mb : {1, 2, 4, 8})
            for (int zero : {0, 1})
                for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
                    Plan p = c.plan;
                    p.microbatch_size = mb;
                    p.zero_stage = zero;
                    p.recompute = r;
                    if (estimate_memory(c.model, c.cluster, p, c.options).peak > c.cluster.gpu.memory_GiB) continue;
                    EXPECT_LE(v.step_time_s, simulate(c.model, c.cluster, p, c.options).step_time_s * (1 + 1e-12))
                        << source << " mb" << mb << " zero" << zero << " " << to_string(r);
                }
    }
}

TEST(Validate, RowsThatFitKeepTheirDefaults) {
    const auto rep = validate_runs(json::array({megatron_row()}), "test");
    const ValidationRow& v = rep.rows[0];
    ASSERT_TRUE(v.fits);
    EXPECT_EQ(v.setup.plan.microbatch_size, 1);
    EXPECT_EQ(v.setup.plan.recompute, Recompute::none);
    EXPECT_EQ(v.setup.plan.zero_stage, 0);
    EXPECT_EQ(joined(v.setup.assumptions).find("R15"), std::string::npos);
}

TEST(Validate, NullPrecisionIsTheGpusOwnSixteenBitFormat) {
    json row = megatron_row();
    EXPECT_EQ(validation_case(row, "test").plan.precision, Precision::bf16);  // H100
    row["gpu_type"] = "V100-SXM3-32GB";  // no bf16: its runs trained in fp16
    const ValidationCase v100 = validation_case(row, "test");
    EXPECT_EQ(v100.plan.precision, Precision::fp16);
    EXPECT_NE(joined(v100.assumptions).find("fp16"), std::string::npos);
    row["precision"] = "amp_bf16";  // stated wins: a V100 has no bf16, so the row is not modelled
    EXPECT_THROW(validation_case(row, "test"), InputError);
    const auto rep = validate_runs(json::array({row, megatron_row()}), "test");
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_NE(rep.rows[0].skipped_because.find("bf16"), std::string::npos) << rep.rows[0].skipped_because;
    EXPECT_TRUE(rep.rows[1].modelable);
}

TEST(Validate, UtilizationFiguresAndBadFiguresAreReadPerRow) {
    // R10: HFU where it is the only figure (MFU x hardware / model FLOPs, here with full recompute:
    // 4/3 of the layers' forward-backward), a percent of at most 1 as a fraction, and a figure that
    // is not positive or not a number as that row's error while the others run.
    json mfu_row = megatron_row();
    mfu_row["tflops_per_gpu"] = nullptr;
    mfu_row["mfu_percent"] = 40.0;
    mfu_row["activation_recompute"] = "full";
    json hfu_row = mfu_row;
    hfu_row["name"] = "hfu";
    hfu_row["mfu_percent"] = nullptr;
    hfu_row["hfu_percent"] = 0.5;  // a fraction
    json zero = megatron_row();
    zero["name"] = "zero";
    zero["tflops_per_gpu"] = 0;
    json text = megatron_row();
    text["name"] = "text";
    text["tflops_per_gpu"] = "400 TFLOP/s";
    const auto rep = validate_runs(json::array({mfu_row, hfu_row, zero, text}), "runs.json");
    ASSERT_EQ(rep.rows.size(), 4u);
    ASSERT_TRUE(rep.rows[0].modelable);
    ASSERT_TRUE(rep.rows[1].modelable) << rep.rows[1].skipped_because;
    EXPECT_EQ(rep.rows[1].metric, PublishedMetric::hfu);
    EXPECT_DOUBLE_EQ(rep.rows[1].published, 0.5);
    const ValidationCase c = validation_case(mfu_row, "test");
    const auto f = flops_per_token(c.model, c.plan.seq_length, Recompute::full);
    // Same plan, same step: the predicted HFU is the predicted MFU scaled by the FLOP ratio.
    EXPECT_NEAR(rep.rows[1].predicted, rep.rows[0].predicted * f.hardware / f.model, 1e-12);
    EXPECT_FALSE(rep.rows[2].modelable);
    EXPECT_NE(rep.rows[2].skipped_because.find("tflops_per_gpu"), std::string::npos) << rep.rows[2].skipped_because;
    EXPECT_FALSE(rep.rows[3].modelable);
    EXPECT_NE(rep.rows[3].skipped_because.find("a number"), std::string::npos) << rep.rows[3].skipped_because;
    EXPECT_TRUE(std::isfinite(rep.summary.mape));
}

TEST(Validate, RowsMayComeWrappedInAnObject) {
    // {"runs": [...]} beside other keys reads as its array; anything else is bad input, named.
    const json wrapped = {{"schema", "published runs"}, {"runs", json::array({megatron_row()})}};
    const auto rep = validate_runs(wrapped, "runs.json");
    ASSERT_EQ(rep.rows.size(), 1u);
    EXPECT_TRUE(rep.rows[0].modelable);
    try {
        validate_runs(json{{"rows", json::array()}}, "runs.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("runs.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(top level)"), std::string::npos) << e.what();
    }
}

TEST(Validate, NullActivationFollowsTheParameterCount) {
    // R1: Llama 3 8B's shapes (32 layers, 4096 wide, 8 KV heads, MLP 14336, vocab 128256) count 8.0B
    // with a gated MLP and untied embeddings, 5.6B with a two-matrix one: a row stating 8.0B is gated.
    json row = megatron_row();
    row["num_layers"] = 32, row["hidden_size"] = 4096, row["num_attention_heads"] = 32, row["num_kv_heads"] = 8;
    row["ffn_hidden_size"] = 14336, row["vocab_size"] = 128256, row["activation"] = nullptr;
    row["tensor_parallel"] = 1, row["pipeline_parallel"] = 1, row["data_parallel"] = nullptr;
    row["parameters_b"] = 8.0;
    EXPECT_EQ(validation_case(row, "test").model.activation, Activation::swiglu);
    row["parameters_b"] = 5.6;
    EXPECT_EQ(validation_case(row, "test").model.activation, Activation::gelu);
    row["parameters_b"] = nullptr;  // nothing to tell them apart: the GPT default
    EXPECT_EQ(validation_case(row, "test").model.activation, Activation::gelu);
    row["activation"] = "swish";  // HF's name for SiLU, the gate of SwiGLU
    EXPECT_EQ(validation_case(row, "test").model.activation, Activation::swiglu);
}

TEST(Validate, OffloadedOptimizerStatesAreNotModelled) {
    // R3: ZeRO-Offload and ZeRO-Infinity move the optimizer to the CPU or NVMe; the row is reported.
    json row = megatron_row();
    row["zero_or_fsdp"] = "ZeRO-Offload (stage 2, optimizer on the CPU)";
    const auto rep = validate_runs(json::array({row, megatron_row()}), "runs.json");
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_NE(rep.rows[0].skipped_because.find("zero_or_fsdp"), std::string::npos) << rep.rows[0].skipped_because;
    EXPECT_TRUE(rep.rows[1].modelable);
}

TEST(Validate, NullBatchComesFromItsTokens) {
    json row = megatron_row();
    row["global_batch_size"] = nullptr;
    row["global_batch_tokens"] = 1048576;  // 512 sequences of 2048 tokens
    EXPECT_EQ(validation_case(row, "test").plan.global_batch_size, 512);
    row["global_batch_tokens"] = nullptr;
    EXPECT_THROW(validation_case(row, "test"), InputError);  // neither: the row says which key
}

TEST(Validate, ZeroStageIsReadInTheWordsFrameworksUse) {
    // R3: each framework's own spelling of its sharding.
    EXPECT_EQ(stated_zero_stage("ZeRO-1 (-z 1)"), 1);
    EXPECT_EQ(stated_zero_stage("DeepSpeed ZeRO stage 3 with offload off"), 3);
    EXPECT_EQ(stated_zero_stage("zero_stage: 2"), 2);
    EXPECT_EQ(stated_zero_stage("ZeRO 1"), 1);
    EXPECT_EQ(stated_zero_stage("ZeRO3"), 3);
    EXPECT_EQ(stated_zero_stage("PyTorch FSDP FULL_SHARD (mixed-precision mode DEFAULT)"), 3);
    EXPECT_EQ(stated_zero_stage("HSDP, sharded within a node"), 3);
    EXPECT_EQ(stated_zero_stage("fully sharded data parallel"), 3);
    EXPECT_EQ(stated_zero_stage("DeepSpeed ZeRO++ (stage 3, hpZ)"), 3);
    EXPECT_EQ(stated_zero_stage("fairscale optimizer state sharding (OSS)"), 1);
    EXPECT_EQ(stated_zero_stage("pipeline stage 2 of 4"), std::nullopt);  // a stage without ZeRO is no ZeRO stage
    EXPECT_EQ(stated_zero_stage("FSDP2, 64 ranks"), 3);
    EXPECT_EQ(stated_zero_stage("FSDP SHARD_GRAD_OP"), 2);
    EXPECT_EQ(stated_zero_stage("FSDP NO_SHARD"), 0);
    EXPECT_EQ(stated_zero_stage("HYBRID_SHARD"), 3);
    EXPECT_EQ(stated_zero_stage("Megatron distributed optimizer"), 1);
    EXPECT_EQ(stated_zero_stage("--use-distributed-optimizer"), 1);
    EXPECT_EQ(stated_zero_stage("NeMo optim distributed_fused_adam"), 1);
    // The first stage named wins: DeepSpeed's bf16 optimizer is ZeRO-1 under a config stage 0.
    EXPECT_EQ(stated_zero_stage("ZeRO-1 (BF16_Optimizer; zero_optimization.stage 0)"), 1);
    EXPECT_EQ(stated_zero_stage("none (Megatron DDP impl 'local')"), std::nullopt);
    EXPECT_EQ(stated_zero_stage("zero-shot"), std::nullopt);
    EXPECT_EQ(stated_zero_stage("ZeRO++"), std::nullopt);
    // NVIDIA's performance tables print FSDP as a 0/1 column: 0, or a denial, is no FSDP.
    for (const char* off : {"FSDP=0 (DDP)", "FSDP: 0", "FSDP 0", "FSDP = 0", "no FSDP", "FSDP off", "FSDP disabled",
                            "not FSDP", "use_megatron_fsdp=False", "FSDP column 0 (no FSDP)"})
        EXPECT_EQ(stated_zero_stage(off), std::nullopt) << off;
    EXPECT_EQ(stated_zero_stage("distributed optimizer, FSDP off"), 1);
    EXPECT_EQ(stated_zero_stage("Megatron dist-opt"), 1);
    EXPECT_EQ(stated_zero_stage("no dist-opt"), std::nullopt);
    EXPECT_EQ(stated_zero_stage("FSDP no CPU offload"), 3);
    EXPECT_EQ(stated_zero_stage("DistOpt"), 1);
    EXPECT_EQ(stated_zero_stage("Colossal-AI Gemini plugin, shard_param_frac=1.0"), 3);
    for (const char* on : {"FSDP=1 (Megatron-FSDP)", "Megatron-FSDP, sharding group 64", "use_megatron_fsdp=True"})
        EXPECT_EQ(stated_zero_stage(on), 3) << on;
}

TEST(Validate, RecomputeIsReadInTheWordsFrameworksUse) {
    // R4: granularity where named; checkpointing without one re-runs whole layers.
    EXPECT_EQ(stated_recompute("full (--activations-checkpoint-method uniform, 1 layer/chunk)"), Recompute::full);
    EXPECT_EQ(stated_recompute("selective (attention core only)"), Recompute::selective);
    EXPECT_EQ(stated_recompute("--checkpoint-activations"), Recompute::full);
    EXPECT_EQ(stated_recompute("activation checkpointing"), Recompute::full);
    EXPECT_EQ(stated_recompute("--recompute-method block"), Recompute::full);
    EXPECT_EQ(stated_recompute("true"), Recompute::full);
    EXPECT_EQ(stated_recompute("AC every layer"), Recompute::full);  // torchtitan's "AC": activation checkpointing
    EXPECT_EQ(stated_recompute("enabled"), Recompute::full);
    EXPECT_EQ(stated_recompute("no AC"), Recompute::none);
    // A configuration key set to nothing is none (NeMo's and Megatron's keys).
    for (const char* unset : {"activations_checkpoint_method: null", "activations_checkpoint_granularity=null",
                              "recompute_granularity null", "recompute_layers 0", "recompute layers = 0"})
        EXPECT_EQ(stated_recompute(unset), Recompute::none) << unset;
    // Other keys that only configure the checkpointing do not turn it off.
    EXPECT_EQ(stated_recompute("activation_checkpointing: true, activation_checkpointing_reentrant: false"), Recompute::full);
    EXPECT_EQ(stated_recompute("uniform, recompute_num_layers 1; recompute_modules: none"), Recompute::full);
    EXPECT_EQ(stated_recompute("--checkpoint-activations (number_checkpoints: null)"), Recompute::full);
    EXPECT_EQ(stated_recompute("per op SAC"), Recompute::selective);  // torchtitan's selective AC
    EXPECT_EQ(stated_recompute("remat"), Recompute::full);
    EXPECT_EQ(stated_recompute("none (-r 0)"), Recompute::none);
    EXPECT_EQ(stated_recompute("no activation checkpointing"), Recompute::none);
    EXPECT_EQ(stated_recompute("false"), Recompute::none);
    EXPECT_EQ(stated_recompute("trained without recomputation"), Recompute::none);
    EXPECT_EQ(stated_recompute(""), std::nullopt);
}

TEST(Validate, PrecisionIsReadInTheWordsFrameworksUse) {
    // R5: PyTorch's dtype names as well as the short ones.
    json row = megatron_row();
    auto precision = [&](const char* text) {
        row["precision"] = text;
        return validation_case(row, "test").plan.precision;
    };
    EXPECT_EQ(precision("bfloat16"), Precision::bf16);
    EXPECT_EQ(precision("bf16-mixed"), Precision::bf16);
    EXPECT_EQ(precision("torch.float16 (apex O2)"), Precision::fp16);
    EXPECT_EQ(precision("half precision"), Precision::fp16);
    EXPECT_EQ(precision("fp8 (Transformer Engine, hybrid)"), Precision::fp8);
    // The GEMMs' format is the narrowest one named; NeMo's table names its FP8 recipes.
    EXPECT_EQ(precision("MXFP8"), Precision::fp8);
    EXPECT_EQ(precision("FP8-CS"), Precision::fp8);
    EXPECT_EQ(precision("bf16 with fp8 GEMMs"), Precision::fp8);
    EXPECT_EQ(precision("fp32 master weights, bf16 compute"), Precision::bf16);
    // fp32 training is fp32 (it used to fall to the GPU's 16-bit default).
    EXPECT_EQ(precision("fp32"), Precision::fp32);
    EXPECT_EQ(precision("torch.float32"), Precision::fp32);
}

TEST(Validate, BlockRecomputeCountsAreRead) {
    // R4: Megatron's block method with its layer count, or NeMo's recompute_layers; the uniform
    // method recomputes every layer whatever its count.
    EXPECT_EQ(stated_block_recompute_layers("--recompute-granularity full --recompute-method block --recompute-num-layers 5"), 5);
    EXPECT_EQ(stated_block_recompute_layers("recompute_granularity full, recompute_method block, recompute_num_layers: 16"), 16);
    EXPECT_EQ(stated_block_recompute_layers("--recompute-method uniform --recompute-num-layers 1"), 0);
    EXPECT_EQ(stated_block_recompute_layers("NeMo recompute_layers 8"), 8);
    EXPECT_EQ(stated_block_recompute_layers("full"), 0);
    json row = megatron_row();
    row["activation_recompute"] = "full (--recompute-method block --recompute-num-layers 3)";
    const ValidationCase c = validation_case(row, "test");
    EXPECT_EQ(c.plan.recompute, Recompute::full);
    EXPECT_EQ(c.plan.recompute_layers, 3);
    row["activation_recompute"] = "selective";  // a count belongs to full recompute only
    row["notes"] = "--recompute-method block --recompute-num-layers 3";
    EXPECT_EQ(validation_case(row, "test").plan.recompute_layers, 0);
}

TEST(Validate, FormatsWithoutCostsAreNotModelled) {
    // R5: 4-bit, integer and TF32 training have no cost model; a stand-in format would predict
    // another run, so the row is listed with the reason, and the file's other rows still run.
    EXPECT_EQ(stated_precision("NVFP4").unmodelled, "fp4");
    EXPECT_EQ(stated_precision("MXFP4 (bf16 elsewhere)").unmodelled, "fp4");
    EXPECT_EQ(stated_precision("int8").unmodelled, "int8");
    EXPECT_EQ(stated_precision("tf32").unmodelled, "tf32");
    EXPECT_TRUE(stated_precision("bf16 (TF32 for the fp32 ops)").unmodelled.empty());
    EXPECT_EQ(stated_precision("mixed").format, std::nullopt);
    EXPECT_TRUE(stated_precision("").unmodelled.empty());

    json row = megatron_row();
    row["precision"] = "NVFP4";
    const auto rep = validate_runs(json::array({row, megatron_row()}), "runs.json");
    ASSERT_EQ(rep.rows.size(), 2u);
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_NE(rep.rows[0].skipped_because.find("precision"), std::string::npos) << rep.rows[0].skipped_because;
    EXPECT_NE(rep.rows[0].skipped_because.find("fp4"), std::string::npos) << rep.rows[0].skipped_because;
    EXPECT_TRUE(rep.rows[1].modelable);
}

TEST(Validate, SettingsAreReadAsFlagsOrConfigurationKeys) {
    // R7, R8, R12, R13: a flag, or a configuration key with its value; a key set false stays off.
    json row = megatron_row();
    row["tensor_parallel"] = 2;
    row["throughput_definition"] = "model FLOPs";  // the helper's row names two flags there
    auto options = [&](const char* text) {
        row["notes"] = text;
        return validation_case(row, "test").options;
    };
    EXPECT_TRUE(options("--tp-comm-overlap").tp_comm_overlap);
    EXPECT_TRUE(options("model.ub_tp_comm_overlap=True").tp_comm_overlap);
    EXPECT_FALSE(options("MegatronCommOverlapCallback tp_comm_overlap=False").tp_comm_overlap);
    EXPECT_TRUE(options("ddp: overlap_grad_reduce: true").overlap_grad_reduce);
    EXPECT_TRUE(options("optim.overlap_param_sync true").overlap_param_gather);
    EXPECT_TRUE(options("overlap_p2p_comm: True").overlap_p2p_comm);
    EXPECT_FALSE(options("grad_reduce_in_fp32: false").grad_reduce_in_fp32);
    EXPECT_TRUE(options("cross_entropy_loss_fusion=true").fused_cross_entropy);
    EXPECT_FALSE(options("gradient_accumulation_fusion: False").gradient_accumulation_fusion);
    // A key named without a value says nothing.
    EXPECT_FALSE(options("see overlap_p2p_comm in the recipe").overlap_p2p_comm);
}

TEST(Validate, ARunThatFillsNoWholeNodesSaysWhatShareItTook) {
    // R9: 128 GB200s of 72-GPU racks, no node size stated: 64 of each of two racks, said so.
    json row = megatron_row();
    row["gpu_type"] = "GB200";
    row["num_gpus"] = 128;
    const ValidationCase c = validation_case(row, "test");
    EXPECT_EQ(c.cluster.gpus_per_node, 64);
    EXPECT_EQ(c.plan.dp, 64);
    bool said = false;
    for (const auto& a : c.assumptions) said = said || a.find("64 GPUs per node") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(Validate, ABatchTheLayoutNearlyDividesIsRounded) {
    // R2: GPT-NeoX-20B's paper gives 1538 sequences per step for 12 replicas of microbatch 4
    // (its configuration: 1536); within 2% the batch is rounded, further off the row is refused.
    json row = megatron_row();
    row["num_gpus"] = 96;
    row["tensor_parallel"] = 2;
    row["pipeline_parallel"] = 4;
    row["microbatch_size"] = 4;
    row["global_batch_size"] = 1538;
    EXPECT_EQ(validation_case(row, "test").plan.global_batch_size, 1536);
    row["global_batch_size"] = 70;  // 48 or 96: far from both
    EXPECT_THROW(validation_case(row, "test"), InputError);
}

TEST(Validate, LongTextsAreRefusedOrFoldedNotACrash) {
    // std::regex recurses per character of a run: a text of 300000 characters overflowed the stack
    // (a segmentation fault). Texts over 8192 characters are refused, naming the key; whitespace
    // runs fold to one space, so a setting split by them still reads.
    json row = megatron_row();
    row["throughput_definition"] = "model FLOPs";
    row["notes"] = "tp_comm_overlap" + std::string(5000, ' ') + "true";
    EXPECT_TRUE(validation_case(row, "test").options.tp_comm_overlap);
    row["interconnect"] = "8 x" + std::string(300000, ' ') + "200 Gb/s";
    try {
        validation_case(row, "runs.json");
        FAIL() << "a 300000-character text is refused";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("interconnect"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at most 8192"), std::string::npos) << e.what();
    }
    // Nor does the whole file crash: the row is reported as not modelled.
    const auto rep = validate_runs(json::array({row}), "runs.json");
    ASSERT_EQ(rep.rows.size(), 1u);
    EXPECT_FALSE(rep.rows[0].modelable);
}

TEST(Validate, ZeroSizesAndDegreesAreRefusedNotADivisionByZero) {
    // A zero tensor-parallel degree, microbatch, KV-head count or virtual stage count stopped the
    // program with SIGFPE; a zero global batch aborted the whole file. Each is now the row's error.
    for (const char* key : {"tensor_parallel", "microbatch_size", "num_kv_heads", "virtual_pipeline", "global_batch_size"}) {
        json row = megatron_row();
        row[key] = 0;
        try {
            validation_case(row, "runs.json");
            FAIL() << key;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("at least 1"), std::string::npos) << e.what();
        }
        const auto rep = validate_runs(json::array({row, megatron_row()}), "runs.json");
        ASSERT_EQ(rep.rows.size(), 2u);
        EXPECT_FALSE(rep.rows[0].modelable) << key;
        EXPECT_TRUE(rep.rows[1].modelable) << key;
    }
}

TEST(Validate, ModelSizesHaveAModelFilesBounds) {
    // A billion layers took 48 s and 16 GiB to simulate; a row is held to a model file's bounds.
    json row = megatron_row();
    row["num_layers"] = 1000000000;
    try {
        validation_case(row, "runs.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("num_layers"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at most 100000"), std::string::npos) << e.what();
    }
}

TEST(Validate, SourceDatesMayBeMonthsArxivIdentifiersOrYears) {
    // R11 (FlashAttention: arXiv 2205.14135, May 2022): which attention kernel the date implies.
    json row = megatron_row();
    auto fused = [&](const char* source) {
        row["source"] = source;
        return validation_case(row, "test").options.fused_attention;
    };
    EXPECT_FALSE(fused("Megatron-LM paper (Shoeybi et al., arXiv 1909.08053)"));
    EXPECT_FALSE(fused("Megatron-LM blog post (2020-03)"));
    EXPECT_FALSE(fused("Megatron-LM paper, 2021"));
    EXPECT_TRUE(fused("Megatron-LM README, 2024"));
    EXPECT_TRUE(fused("Megatron-LM README (commit abc, 2024-07-15)"));
    // Sizes and counts are not years: no date, so the kernel is the fused one.
    EXPECT_TRUE(fused("Megatron-LM run on 2048 GPUs, 2016 nodes of 1600 Gbps"));
    // The latest date wins: a 2022-05-19 figure whose paper is arXiv 2205.05198 predates FlashAttention.
    EXPECT_FALSE(fused("Korthikanti et al., arXiv 2205.05198; README commit 2e90a342f5, 2022-05-19"));
    // A row's statement of its kernel outranks the date: a 2022-06 log of a run whose stack kept
    // Megatron's softmax, and a 2021 source naming FlashAttention (which R12 then picks).
    row["notes"] = "unfused attention: batched GEMMs around Megatron's fused masked softmax";
    EXPECT_FALSE(fused("training log, 2022-06-20"));
    row["notes"] = "FlashAttention-2";
    EXPECT_TRUE(fused("Megatron-LM paper, 2021"));
    // FlashAttention named only to be denied is the unfused kernel, whatever the date.
    for (const char* denied : {"FlashAttention was not used (ALiBi)", "no FlashAttention", "attention: unfused",
                               "baseline column 'Without FlashAttention'", "standard PyTorch attention"}) {
        row["notes"] = denied;
        EXPECT_FALSE(fused("Megatron-LM README, 2024")) << denied;
    }
    // A named fused kernel outranks a denied FlashAttention; "standard attention" is no kernel.
    for (const char* named : {"NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=1 (cuDNN fused attention)",
                              "Llama 2 architecture, standard attention with GQA",
                              "not standard PyTorch attention but FlashAttention-2"}) {
        row["notes"] = named;
        EXPECT_TRUE(fused("Megatron-LM README, 2024")) << named;
    }
}

TEST(Validate, FrameworksAreKnownByTheirTrainersNamesToo) {
    json row = megatron_row();
    auto framework = [&](const char* source) {
        row["source"] = source;
        return validation_case(row, "test").framework;
    };
    EXPECT_EQ(framework("NVIDIA NeMo performance summary (2024-07-01)"), "Megatron-LM");
    EXPECT_EQ(framework("GPT-NeoX-20B paper (2022-04-14)"), "DeepSpeed");
    EXPECT_EQ(framework("Megatron-DeepSpeed run (2022-01-10)"), "DeepSpeed");
    EXPECT_EQ(framework("MosaicML blog (2023-05-05)"), "llm-foundry");
    EXPECT_EQ(framework("an in-house trainer (2024-01-01)"), "unknown");
}

TEST(Validate, AGatedMlpOfUnstatedWidthTakesTheWidthOfTheStatedParameterCount) {
    // Llama 2 7B (Touvron et al. 2023; its config.json: intermediate_size 11008), stated without
    // its MLP width or KV heads: 6.74B parameters, 32 layers of 4096, vocabulary 32000.
    json row = megatron_row();
    row["activation"] = "swiglu";
    row["num_layers"] = 32;
    row["hidden_size"] = 4096;
    row["num_attention_heads"] = 32;
    row["vocab_size"] = 32000;
    row["parameters_b"] = 6.74;
    EXPECT_EQ(validation_case(row, "test").model.ffn_hidden_size, 11008);
    // Llama 2 70B (config.json: 8 KV heads, intermediate_size 28672), 68.98B parameters.
    row["num_layers"] = 80;
    row["hidden_size"] = 8192;
    row["num_attention_heads"] = 64;
    row["num_kv_heads"] = 8;
    row["parameters_b"] = 68.98;
    EXPECT_EQ(validation_case(row, "test").model.ffn_hidden_size, 28672);
    // Without a count: 2/3 of 4h rounded up to 256 (8192: 21846 -> 22016, Llama 1 65B's width).
    row["parameters_b"] = nullptr;
    EXPECT_EQ(validation_case(row, "test").model.ffn_hidden_size, 22016);
    // A count the shape cannot hold (a mixture's total, a typo) falls back to the same.
    row["parameters_b"] = 1000;
    EXPECT_EQ(validation_case(row, "test").model.ffn_hidden_size, 22016);
    // An ungated MLP keeps 4h whatever the count.
    row["activation"] = "gelu";
    row["parameters_b"] = 68.98;
    EXPECT_EQ(validation_case(row, "test").model.ffn_hidden_size, 4 * 8192);
}
