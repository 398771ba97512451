// Unit conversions. Key names carry units in every format (DESIGN.md): GB/s = 1e9 B/s,
// GiB = 2^30 B, TFLOP/s = 1e12 FLOP/s, us = 1e-6 s.
#pragma once

namespace tessel::units {

inline constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double GB = 1e9;
inline constexpr double TFLOP = 1e12;
inline constexpr double us = 1e-6;

}  // namespace tessel::units
