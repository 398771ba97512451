// Fuzzes the Hugging Face config.json reader: the first byte picks the family, so every family's
// key handling is reached; the rest is the JSON text.
#include "core/accounting.h"
#include "core/model_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    tessel::fuzz::silence_warnings();
    static const char* families[] = {"llama", "mistral",    "qwen2",           "qwen3", "phi3",    "olmo2",
                                     "gpt2",  "gpt_neox",   "falcon",          "RefinedWeb", "RefinedWebModel",
                                     "mamba", "mixtral",    "gemma",           "gemma2", "gemma3_text"};
    const char* family = families[data[0] % (sizeof(families) / sizeof(families[0]))];
    return tessel::fuzz::guard([&] {
        auto j = tessel::parse_json_text(tessel::fuzz::as_text(data + 1, size - 1), "config.json");
        if (!j.is_object()) j = tessel::json::object();
        j["model_type"] = family;
        auto m = tessel::parse_model(j, "config.json");
        (void)tessel::count_parameters(m);
    });
}
