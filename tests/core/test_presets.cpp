// Every preset the design names is there and parses.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "core/errors.h"
#include "core/presets.h"

using namespace tessel;

TEST(Presets, AllNamedPresetsExist) {
    for (const char* m : {"gpt2-124m", "gpt2-1.5b", "gpt3-175b", "llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b",
                          "llama3-405b", "megatron-1t", "tiny-gpt", "tiny-llama", "tiny-qwen3"})
        EXPECT_NO_THROW(load_model(m)) << m;
    for (const char* c : {"dgx-a100", "dgx-a100-40gb", "dgx-h100", "dgx-h200", "pcie-a100", "pcie-h100", "dgx2-v100", "dgx-b200", "gb200-nvl72", "dgx-b300", "gb300-nvl72"})
        EXPECT_NO_THROW(load_cluster(c)) << c;
}

TEST(Presets, UnknownPresetListsTheKnownOnes) {
    try {
        load_model("lama3-8b");
        FAIL();
    } catch (const InputError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("did you mean 'llama3-8b'"), std::string::npos) << m;
        EXPECT_NE(m.find("gpt3-175b"), std::string::npos) << m;
    }
    EXPECT_THROW(load_model("missing/dir/model.json"), InputError);
}

// The Blackwell presets without a kernel measurement of their own take the B200's (Bekman's maximum
// achievable matmul: 1745 TFLOP/s BF16 and 3432.5 FP8 on a 148-SM B200 at 1000 W). A GPU running
// its GEMMs at its power limit burns power ~ SMs x clock^3, so its clock goes as (P/SMs)^(1/3) and
// its throughput as SMs^(2/3) P^(1/3): every compute ceiling is the B200's times that ratio,
// whatever peak the sibling's datasheet quotes.
TEST(Presets, BlackwellSiblingsScaleTheB200CeilingsByPowerAndSms) {
    const ClusterSpec b200 = load_cluster("dgx-b200");
    ASSERT_EQ(b200.gpu.sm_count, 148);
    ASSERT_DOUBLE_EQ(b200.gpu.tdp_W, 1000);
    for (const char* name : {"dgx-b200", "gb200-nvl72", "dgx-b300", "gb300-nvl72"}) {
        SCOPED_TRACE(name);
        const GpuSpec g = load_cluster(name).gpu;
        const double ratio = std::cbrt(std::pow(g.sm_count / 148.0, 2.0) * g.tdp_W / 1000.0);
        const double bf16 = g.peak(Precision::bf16), fp8 = g.peak(Precision::fp8);
        const double b_bf16 = b200.gpu.peak(Precision::bf16);
        EXPECT_NEAR(bf16 * g.matmul_efficiency, 1745.0 * ratio, 0.002 * 1745.0 * ratio);
        EXPECT_NEAR(fp8 * g.fp8_matmul_efficiency, 3432.5 * ratio, 0.002 * 3432.5 * ratio);
        for (const auto& [own, b200s] : {std::pair{g.flash_forward_efficiency, b200.gpu.flash_forward_efficiency},
                                         std::pair{g.flash_backward_efficiency, b200.gpu.flash_backward_efficiency},
                                         std::pair{g.flash1_efficiency, b200.gpu.flash1_efficiency},
                                         std::pair{g.cudnn_forward_efficiency, b200.gpu.cudnn_forward_efficiency},
                                         std::pair{g.cudnn_backward_efficiency, b200.gpu.cudnn_backward_efficiency}})
            EXPECT_NEAR(bf16 * own, b_bf16 * b200s * ratio, 0.002 * b_bf16 * b200s * ratio);
    }
}
