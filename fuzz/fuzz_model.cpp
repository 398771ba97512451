// Fuzzes the model parser: native JSON (and whatever looks like a Hugging Face config).
#include "core/accounting.h"
#include "core/model_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tessel::fuzz::silence_warnings();
    return tessel::fuzz::guard([&] {
        auto j = tessel::parse_json_text(tessel::fuzz::as_text(data, size), "fuzz.json");
        auto m = tessel::parse_model(j, "fuzz.json");
        (void)tessel::count_parameters(m);
        (void)tessel::flops_per_token(m, m.seq_length, tessel::Recompute::full);
    });
}
