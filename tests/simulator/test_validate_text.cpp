// How tessel validate reads a published row's free text: what the words mean, as their writer meant
// them, whatever the phrasing. Each expectation is the text's plain meaning.
#include <gtest/gtest.h>

#include <string>

#include "compare/text_match.h"
#include "compare/validate.h"
#include "core/errors.h"

using namespace tessel;

namespace {
json dense_row() {
    return json{{"name", "text run"},
                {"source", "Megatron-LM README (commit abc, 2024-07-15)"},
                {"gpu_type", "H100 (SXM)"},
                {"num_gpus", 64},
                {"num_layers", 24},
                {"hidden_size", 2048},
                {"num_attention_heads", 16},
                {"vocab_size", 50257},
                {"seq_length", 2048},
                {"tensor_parallel", 2},
                {"pipeline_parallel", 2},
                {"global_batch_size", 256},
                {"tflops_per_gpu", 400},
                {"throughput_definition", "model FLOPs"}};
}

ValidationRow evaluated(const json& row) { return validate_runs(json::array({row}), "runs.json").rows.at(0); }
}  // namespace

TEST(ValidateText, ANameTheClauseDeniesIsNoStatement) {
    EXPECT_TRUE(affirmed("ZeRO-3 with CPU offload", "offload"));
    for (const char* denied : {"ZeRO-3 (no CPU offload)", "FSDP, cpu_offload=False", "FSDP w/o offloading", "offload disabled",
                               "without optimizer offload", "offload: false", "offload off"})
        EXPECT_FALSE(affirmed(denied, "offload")) << denied;
    EXPECT_FALSE(affirmed("BF16 (FP8 not used)", "fp8"));
    EXPECT_TRUE(affirmed("BF16 (FP8 not used)", "bf16"));
    // A denial reaches along a list joined by "or", and stops at the clause's end.
    EXPECT_FALSE(affirmed("Runs do NOT use --overlap-param-gather or --tp-comm-overlap", "--tp-comm-overlap"));
    EXPECT_TRUE(affirmed("no dropout, --tp-comm-overlap", "--tp-comm-overlap"));
    EXPECT_TRUE(affirmed("full recompute, not selective", "full"));
    EXPECT_FALSE(affirmed("full recompute, not selective", "selective"));
    // An abbreviation's full stop ends no clause.
    EXPECT_FALSE(affirmed("no incl. fp8", "fp8"));
    // Flattened configuration text: the next key's value is not this one's.
    EXPECT_TRUE(affirmed("activation_checkpointing: true activation_cpu_offload: false", "checkpoint"));
    EXPECT_TRUE(affirmed("fp8: hybrid fp8_param_gather: false", "fp8"));
    EXPECT_TRUE(affirmed("--tp-comm-overlap NCCL_NVLS_ENABLE=0", "--tp-comm-overlap"));
    EXPECT_TRUE(affirmed("--tp-comm-overlap --tp-comm-bulk-wgrad false", "--tp-comm-overlap"));
    // A turn ends a denial; "not only" and "off by default" deny nothing; "non-" denies.
    EXPECT_TRUE(affirmed("no selective but full recompute", "full"));
    EXPECT_TRUE(affirmed("not selective: full recompute", "full"));
    EXPECT_TRUE(affirmed("not BF16 but FP8", "fp8"));
    EXPECT_TRUE(affirmed("not only --overlap-grad-reduce but also --overlap-param-gather", "--overlap-grad-reduce"));
    EXPECT_TRUE(affirmed("--tp-comm-overlap (off by default, turned on here)", "--tp-comm-overlap"));
    EXPECT_FALSE(affirmed("non-fp8 bf16", "fp8"));
}

TEST(ValidateText, LongClausesAreReadNotACrash) {
    // std::regex recurses per character it scans: a denial's window stays a few words long however
    // long the clause around a name is (each field up to 8192 characters, five of them read together).
    std::string words;
    for (int i = 0; i < 1600; ++i) words += "word ";
    EXPECT_TRUE(affirmed(words + "--tp-comm-overlap " + words, "--tp-comm-overlap"));
    EXPECT_FALSE(affirmed(words + "no --tp-comm-overlap " + words, "--tp-comm-overlap"));
    const std::string token(8000, 'x');
    EXPECT_TRUE(affirmed(token + " fp8 " + token, "fp8"));
    json row = dense_row();
    row["notes"] = words.substr(0, 7000) + "--tp-comm-overlap " + words.substr(0, 1000);
    row["throughput_definition"] = words.substr(0, 8000);
    row["activation_recompute"] = token;
    EXPECT_TRUE(validation_case(row, "runs.json").options.tp_comm_overlap);
}

TEST(ValidateText, UnknownIsNull) {
    for (const char* unknown : {"unknown", "N/A", "n/a", "Not stated", "not specified (probably ZeRO-1)", "?", "-", "TBD"})
        EXPECT_TRUE(says_unstated(unknown)) << unknown;
    for (const char* known : {"none", "ZeRO-1", "unknown-free", "no", "Not stated; the config shows --recompute-granularity selective",
                              "N/A; micro-batch size 2"})
        EXPECT_FALSE(says_unstated(known)) << known;
    // An unknown sharding or recompute is a null one: R15 may fill it.
    json row = dense_row();
    row["zero_or_fsdp"] = "unknown";
    row["activation_recompute"] = "N/A";
    const ValidationCase c = validation_case(row, "runs.json");
    EXPECT_TRUE(c.unstated.zero);
    EXPECT_TRUE(c.unstated.recompute);
}

TEST(ValidateText, ZeroStagesInMoreWords) {
    EXPECT_EQ(stated_zero_stage("stage 2"), 2);
    EXPECT_EQ(stated_zero_stage("ZeRO stage two"), 2);
    EXPECT_EQ(stated_zero_stage("DeepSpeed stage 3"), 3);
    EXPECT_EQ(stated_zero_stage("3"), 3);
    EXPECT_EQ(stated_zero_stage("pipeline stage 2 of 4"), std::nullopt);
    // FSDP's ZeRO-2 forms: gradients and optimizer states sharded, weights kept through the backward.
    EXPECT_EQ(stated_zero_stage("FSDP _HYBRID_SHARD_ZERO2"), 2);
    EXPECT_EQ(stated_zero_stage("FSDP2 fully_shard, reshard_after_forward=False"), 2);
    json row = dense_row();
    row["pipeline_parallel"] = 1;
    row["zero_or_fsdp"] = "FSDP2, reshard_after_forward: false";
    const ValidationCase c = validation_case(row, "runs.json");
    EXPECT_EQ(c.plan.zero_stage, 2);
    EXPECT_TRUE(c.options.zero2_layerwise_gather);
    // Offload the text denies is no offload: the row is modelled.
    row["zero_or_fsdp"] = "ZeRO-3 (no CPU offload)";
    EXPECT_EQ(validation_case(row, "runs.json").plan.zero_stage, 3);
    row["zero_or_fsdp"] = "ZeRO-3 with CPU offload";
    EXPECT_THROW(validation_case(row, "runs.json"), InputError);
}

TEST(ValidateText, RecomputeAndPrecisionTheTextDenies) {
    EXPECT_EQ(stated_recompute("w/o activation recomputation"), Recompute::none);
    EXPECT_EQ(stated_recompute("Full recomputation is not used"), Recompute::none);
    EXPECT_EQ(stated_recompute("sel. recompute"), Recompute::selective);
    EXPECT_EQ(stated_recompute("grad ckpt on every block"), Recompute::full);
    EXPECT_EQ(stated_recompute("full recompute, not selective"), Recompute::full);
    EXPECT_EQ(stated_precision("BF16 (FP8 not used)").format, Precision::bf16);
    EXPECT_EQ(stated_precision("16-mixed").format, Precision::fp16);  // PyTorch Lightning's fp16 AMP
    EXPECT_EQ(stated_precision("bf16-mixed").format, Precision::bf16);
}

TEST(ValidateText, BlockRecomputeInWordsAndOlderFlags) {
    EXPECT_EQ(stated_block_recompute_layers("full recompute, block method, 4 layers"), 4);
    EXPECT_EQ(stated_block_recompute_layers("block (4 layers)"), 4);
    EXPECT_EQ(stated_block_recompute_layers("--activations-checkpoint-method block --activations-checkpoint-num-layers 2"), 2);
    EXPECT_EQ(stated_block_recompute_layers("activations_checkpoint_method=uniform activations_checkpoint_num_layers=1"), 0);
}

TEST(ValidateText, NumbersFlagsAndDegreesWrittenAsText) {
    json row = dense_row();
    row["microbatch_size"] = "2";
    row["sequence_parallel"] = "yes";
    row["virtual_pipeline"] = "none";
    ValidationCase c = validation_case(row, "runs.json");
    EXPECT_EQ(c.plan.microbatch_size, 2);
    EXPECT_TRUE(c.plan.sequence_parallel);
    EXPECT_EQ(c.plan.virtual_stages, 1);
    EXPECT_FALSE(c.unstated.virtual_pipeline);  // "none" states no interleaving; R15 leaves it
    row["sequence_parallel"] = "false";
    EXPECT_FALSE(validation_case(row, "runs.json").plan.sequence_parallel);
    row["sequence_parallel"] = 1;
    EXPECT_TRUE(validation_case(row, "runs.json").plan.sequence_parallel);
    row["sequence_parallel"] = "--sequence-parallel";
    EXPECT_TRUE(validation_case(row, "runs.json").plan.sequence_parallel);
    row["sequence_parallel"] = "not used";
    EXPECT_FALSE(validation_case(row, "runs.json").plan.sequence_parallel);
    row["virtual_pipeline"] = "N/A";  // unknown: null
    EXPECT_TRUE(validation_case(row, "runs.json").unstated.virtual_pipeline);
    row["microbatch_size"] = "two";
    EXPECT_THROW(validation_case(row, "runs.json"), InputError);
    row["microbatch_size"] = "1e999";  // past double's range: refused, not a crash
    EXPECT_THROW(validation_case(row, "runs.json"), InputError);
    // A microbatch only the notes give.
    row = dense_row();
    row["notes"] = "global batch 256, micro-batch size 4";
    c = validation_case(row, "runs.json");
    EXPECT_EQ(c.plan.microbatch_size, 4);
    EXPECT_FALSE(c.unstated.microbatch);
    row["notes"] = "global batch 256; micro-batch size 4096 tokens";  // a size in tokens is no count of sequences
    EXPECT_TRUE(validation_case(row, "runs.json").unstated.microbatch);
    // A parameter count written "1.3B" guides R1; a negative one is ignored, not fatal.
    row = dense_row();
    row["activation"] = "swiglu";
    row["parameters_b"] = "-13";
    EXPECT_NO_THROW(validation_case(row, "runs.json"));
}

TEST(ValidateText, MixtureOfExpertsNamedInWordsIsNotModelled) {
    json row = dense_row();
    row["name"] = "Mixtral 8x7B on 64 H100";
    EXPECT_FALSE(evaluated(row).modelable);
    row = dense_row();
    row["notes"] = "8 experts, top-2 routing; expert parallelism not used";
    const ValidationRow r = evaluated(row);
    EXPECT_FALSE(r.modelable);
    EXPECT_NE(r.skipped_because.find("mixture-of-experts"), std::string::npos) << r.skipped_because;
    row["notes"] = "a dense model, no MoE layers";
    EXPECT_TRUE(evaluated(row).modelable);
    // A dense model set beside MoE runs is dense.
    row["notes"] = "Dense model; the MoE variant in the same paper uses 8 experts with top-2 routing.";
    EXPECT_TRUE(evaluated(row).modelable);
    row = dense_row();
    row["name"] = "Llama 3 8B (non-MoE baseline)";
    EXPECT_TRUE(evaluated(row).modelable);
    row["name"] = "Mixtral 8x7B";
    EXPECT_NE(evaluated(row).skipped_because.find(".name"), std::string::npos);
}

TEST(ValidateText, TheFirstFrameworkNamedAndTheRunsOwnDate) {
    json row = dense_row();
    row["source"] = "torchtitan run, compared with Megatron-LM and DeepSpeed";
    EXPECT_EQ(validation_case(row, "runs.json").framework, "torchtitan");
    row["source"] = "Megatron-DeepSpeed fork, BigScience";
    EXPECT_EQ(validation_case(row, "runs.json").framework, "DeepSpeed");
    // A publisher's name stands for its stack only where the source names no software.
    row["source"] = "MosaicML blog (2023): Megatron-LM GPT-18B reproduction";
    EXPECT_EQ(validation_case(row, "runs.json").framework, "Megatron-LM");
    row["source"] = "MosaicML blog (2023-05-05)";
    EXPECT_EQ(validation_case(row, "runs.json").framework, "llm-foundry");
    // The day a page was read is not the run's: a 2021 paper's run had no FlashAttention (May 2022).
    for (const char* source : {"Megatron-LM paper, 2021 (accessed 2025-03-01)", "Megatron-LM paper, 2021; retrieved: 2025-03-01",
                               "Megatron-LM paper, 2021 (accessed March 1, 2025)",
                               "Megatron-LM paper, 2021. Retrieved from https://github.com/NVIDIA/Megatron-LM on 2025-03-01"}) {
        row["source"] = source;
        EXPECT_FALSE(validation_case(row, "runs.json").options.fused_attention) << source;
    }
    row["source"] = "Megatron-LM paper, 2021; README 2025-03-01";  // a later source's own date counts
    EXPECT_TRUE(validation_case(row, "runs.json").options.fused_attention);
}

TEST(ValidateText, FlagsTheTextDeniesStayOff) {
    json row = dense_row();
    row["throughput_definition"] = "model FLOPs; runs do NOT use --overlap-param-gather or --tp-comm-overlap";
    const ValidationCase c = validation_case(row, "runs.json");
    EXPECT_FALSE(c.options.tp_comm_overlap);
    EXPECT_EQ(c.plan.zero_stage, 0);  // --overlap-param-gather would have implied ZeRO-1
    EXPECT_FALSE(c.plan.sequence_parallel);
    row["throughput_definition"] = "model FLOPs; --tp-comm-overlap";
    EXPECT_TRUE(validation_case(row, "runs.json").options.tp_comm_overlap);
    // A flag at the end of the notes is not denied by the next field's first word.
    row["throughput_definition"] = "model FLOPs";
    row["notes"] = "Megatron-Core flags: --use-distributed-optimizer --overlap-grad-reduce --tp-comm-overlap";
    row["activation_recompute"] = "none";
    EXPECT_TRUE(validation_case(row, "runs.json").options.tp_comm_overlap);
}

TEST(ValidateText, TflopsCountRecomputationOnlyWhereTheDefinitionSaysSo) {
    json row = dense_row();
    row["activation_recompute"] = "full";
    auto metric = [&](const char* definition) {
        row["throughput_definition"] = definition;
        return evaluated(row).metric;
    };
    for (const char* hardware : {"teraFLOP/s with the paper's Eq.3 count, which INCLUDES the extra forward pass of full activation "
                                 "recomputation (HFU-like, not MFU)",
                                 "HFU-style TFLOP/s", "hardware FLOPs per second", "achieved TFLOP/s incl. recomputation",
                                 "TFLOP/s counting the recomputed forward", "achieved TFLOP/s (Megatron eq. 3)"})
        EXPECT_EQ(metric(hardware), PublishedMetric::hardware_tflops_per_gpu) << hardware;
    for (const char* model : {"model TFLOP/s; the time includes data loading and the optimizer", "model FLOPs",
                              "TFLOP/s excluding recomputation", "Model TFLOP/s per GPU (6N + attention); hardware FLOPs not reported",
                              "TFLOP/s of model FLOPs; HFU would include recomputation", "Megatron eq. 3 without the recompute term",
                              "end-to-end, includes checkpoint saving"})
        EXPECT_EQ(metric(model), PublishedMetric::model_tflops_per_gpu) << model;
}

TEST(ValidateText, UtilizationAgainstThePeakTheDefinitionNames) {
    json row = dense_row();
    row.erase("tflops_per_gpu");
    row["precision"] = "fp8";
    row["mfu_percent"] = 30;
    row["throughput_definition"] = "MFU against the FP8 peak";
    const ValidationRow fp8_peak = evaluated(row);
    row["throughput_definition"] = "MFU = model FLOPs / (time x dense BF16 peak)";
    const ValidationRow bf16_peak = evaluated(row);
    ASSERT_TRUE(fp8_peak.modelable && bf16_peak.modelable);
    // The same prediction; 30% of the BF16 peak is half the work of 30% of the FP8 peak (H100 SXM
    // datasheet: 989 and 1979 dense TFLOP/s), so the published step it implies is twice as long.
    EXPECT_NEAR(bf16_peak.published_mfu / fp8_peak.published_mfu, 989.0 / 1979.0, 1e-9);
    EXPECT_NEAR(bf16_peak.predicted / fp8_peak.predicted, 1979.0 / 989.0, 1e-9);
    // A utilization above 100% is a slip in the row, named.
    row["mfu_percent"] = 150;
    const ValidationRow slip = evaluated(row);
    EXPECT_FALSE(slip.modelable);
    EXPECT_NE(slip.skipped_because.find("mfu_percent"), std::string::npos) << slip.skipped_because;
}

TEST(ValidateText, R15KeepsTheStatedBlockOfRecomputedLayers) {
    // GPT-3 175B on TP 8 x PP 8 x DP 2 A100s, recomputing the first 4 layers of each stage: its
    // unstated sharding does not fit at ZeRO-0, so R15 fills that one knob, and the stated block
    // stays as stated (it was dropped to all layers before).
    json row = dense_row();
    row["source"] = "Megatron-LM README (commit 2e90a342f5, 2022-05-19)";  // before FlashAttention: R11's unfused attention
    row["gpu_type"] = "A100-SXM4-80GB";
    row["num_gpus"] = 128;
    row["num_layers"] = 96;
    row["hidden_size"] = 12288;
    row["num_attention_heads"] = 96;
    row["tensor_parallel"] = 8;
    row["pipeline_parallel"] = 8;
    row["virtual_pipeline"] = 1;
    row["sequence_parallel"] = false;
    row["microbatch_size"] = 1;
    row["global_batch_size"] = 128;
    row["activation_recompute"] = "--recompute-granularity full --recompute-method block --recompute-num-layers 4";
    row.erase("tflops_per_gpu");
    row["iteration_time_s"] = 18.0;
    const ValidationRow r = evaluated(row);
    ASSERT_TRUE(r.modelable) << r.skipped_because;
    EXPECT_EQ(r.setup.plan.recompute, Recompute::full);
    EXPECT_EQ(r.setup.plan.recompute_layers, 4);
    EXPECT_EQ(r.setup.plan.zero_stage, 1);
    EXPECT_TRUE(r.fits);
}
