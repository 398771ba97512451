// tessel validate's rules and statistics on hand-made rows.
#include <gtest/gtest.h>

#include "compare/validate.h"

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
    EXPECT_EQ(c.cluster.num_gpus(), 64);
    EXPECT_EQ(c.cluster.gpu.name, "H100-SXM");
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
    EXPECT_FALSE(c.options.fused_attention);
    EXPECT_FALSE(c.plan.sequence_parallel);
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
}

TEST(Validate, BadRowsAreReportedNotFatal) {
    json row = megatron_row();
    row["num_attention_heads"] = 15;  // tp 2 does not divide 15 heads
    const auto rep = validate_runs(json::array({row}), "test");
    ASSERT_EQ(rep.rows.size(), 1u);
    EXPECT_FALSE(rep.rows[0].modelable);
    EXPECT_FALSE(rep.rows[0].skipped_because.empty());
}
