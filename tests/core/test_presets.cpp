// Every preset the design names is there and parses.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/presets.h"

using namespace tessel;

TEST(Presets, AllNamedPresetsExist) {
    for (const char* m : {"gpt2-124m", "gpt2-1.5b", "gpt3-175b", "llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b",
                          "llama3-405b", "megatron-1t", "tiny-gpt", "tiny-llama"})
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
