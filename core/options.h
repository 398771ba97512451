// The enumerations a plan is made of, shared by accounting, plans, the simulator and the executor.
#pragma once
#include <string>

namespace tessel {

enum class Recompute { none, selective, full };
enum class Schedule { gpipe, one_f_one_b, interleaved };
enum class Precision { bf16, fp16, fp32, fp8 };

const char* to_string(Recompute r);
const char* to_string(Schedule s);
const char* to_string(Precision p);
// Bytes of one element in the precision's compute/storage format (fp8 GEMMs keep bf16 weights).
int bytes_per_element(Precision p);

}  // namespace tessel
