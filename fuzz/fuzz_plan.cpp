// Fuzzes the plan parser and the plan rules against a model, and the schedule built from it.
#include "core/plan.h"
#include "core/presets.h"
#include "core/schedule.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tessel::fuzz::silence_warnings();
    static const tessel::ModelSpec model = tessel::load_model("tiny-llama");
    return tessel::fuzz::guard([&] {
        auto j = tessel::parse_json_text(tessel::fuzz::as_text(data, size), "plan.json");
        auto p = tessel::parse_plan(j, "plan.json");
        tessel::validate_plan(p, model, 0, "plan.json");
        if (p.pp <= 64 && p.num_microbatches() <= 256)
            (void)tessel::pipeline_schedule(p.schedule, p.pp, p.num_microbatches(), p.virtual_stages);
    });
}
