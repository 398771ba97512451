// Shared by the report tests: a simulation produced in-process, hand-written measured runs and
// plan results around it, a tiny well-formedness checker for the generated page, and temp folders.
#pragma once
#include <string>

#include "core/json_io.h"
#include "core/plan.h"

namespace tessel::test {

// tiny-gpt on dgx-h100 resized to 8 GPUs: tp 2, pp 2, dp 2, full recomputation, 1F1B.
Plan tiny_plan();
// The simulate --json document of tiny_plan(), with the model renamed to `model_name`.
json tiny_simulation(const std::string& model_name = "tiny-gpt");
// A measured run of the same plan: every rank's peak, the busiest rank's memory by kind.
json tiny_measured(const json& simulation);
// A plan result whose winner is `simulation` itself, then two slower candidates.
json tiny_plan_result(const json& simulation);

// "" when every opened tag is closed in order (void tags written as <x/>), else what is wrong.
std::string check_well_formed(const std::string& html);
std::size_t count(const std::string& haystack, const std::string& needle);
// A fresh, empty folder for one test, per process (ctest runs cases in parallel).
std::string temp_dir(const std::string& name);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

}  // namespace tessel::test
