// check.h: shared helpers of the kernel tests: seeded random inputs, formula inputs (the same
// formulas tools/golden/make_kernel_golden.py uses), array comparison that prints the first few
// mismatches, and a central finite-difference gradient of a double-precision scalar function.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <sstream>
#include <vector>

namespace tessel::test {

inline std::vector<float> rand_vec(std::size_t n, unsigned seed, float lo = -1.0f,
                                   float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

inline std::vector<int> rand_ints(std::size_t n, unsigned seed, int lo, int hi_exclusive) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(lo, hi_exclusive - 1);
  std::vector<int> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// x[i] = float(scale * sin(a*i + b)) or, with use_cos, cos(a*i + b): deterministic golden inputs.
inline std::vector<float> formula(std::size_t n, double a, double b, double scale = 1.0,
                                  bool use_cos = false) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = a * static_cast<double>(i) + b;
    v[i] = static_cast<float>(scale * (use_cos ? std::cos(t) : std::sin(t)));
  }
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Passes when |got[i] - ref[i]| <= atol + rtol * |ref[i]| for every i; otherwise reports the count,
// the worst error and the first 5 mismatches as (index, expected, got).
template <typename G, typename R>
::testing::AssertionResult close(const G* got, const R* ref, std::size_t n, double atol,
                                 double rtol) {
  std::size_t bad = 0;
  double worst = 0.0;
  std::size_t worst_i = 0;
  std::ostringstream first;
  first.precision(9);
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    const double err = std::fabs(g - r);
    const bool ok = err <= atol + rtol * std::fabs(r);  // false for NaN
    if (!ok) {
      if (bad < 5) first << "  [" << i << "] expected " << r << " got " << g << "\n";
      ++bad;
    }
    if (!(err <= worst)) {
      worst = err;
      worst_i = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << n << " values off (atol " << atol << ", rtol " << rtol
         << "), worst |err| " << worst << " at " << worst_i << "; first mismatches:\n"
         << first.str();
}

template <typename G, typename R>
::testing::AssertionResult close(const std::vector<G>& got, const std::vector<R>& ref, double atol,
                                 double rtol) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << ref.size();
  return close(got.data(), ref.data(), got.size(), atol, rtol);
}

// Central differences of f (evaluated in double on float inputs) with respect to every element of
// x: (f(x + h e_i) - f(x - h e_i)) / (2h), with the step h taken as actually representable.
inline std::vector<double> fd_grad(const std::function<double(const std::vector<float>&)>& f,
                                   std::vector<float> x, float h = 1e-3f) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    const float xp = x0 + h, xm = x0 - h;
    x[i] = xp;
    const double fp = f(x);
    x[i] = xm;
    const double fm = f(x);
    x[i] = x0;
    g[i] = (fp - fm) / (static_cast<double>(xp) - static_cast<double>(xm));
  }
  return g;
}

// sum(out * R) in double.
template <typename T>
double project(const std::vector<T>& out, const std::vector<float>& R) {
  double s = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) s += static_cast<double>(out[i]) * R[i];
  return s;
}

}  // namespace tessel::test
