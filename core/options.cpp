#include "core/options.h"

namespace tessel {

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::full: return "full";
    }
    return "?";
}
const char* to_string(Schedule s) {
    switch (s) {
        case Schedule::gpipe: return "gpipe";
        case Schedule::one_f_one_b: return "1f1b";
        case Schedule::interleaved: return "interleaved";
    }
    return "?";
}
const char* to_string(Precision p) {
    switch (p) {
        case Precision::bf16: return "bf16";
        case Precision::fp16: return "fp16";
        case Precision::fp32: return "fp32";
        case Precision::fp8: return "fp8";
    }
    return "?";
}
int bytes_per_element(Precision p) { return p == Precision::fp32 ? 4 : 2; }

}  // namespace tessel
