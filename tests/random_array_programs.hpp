// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Random array programs for differential tests: a seed picks a sequence of array operations (elementwise,
// broadcasting, whole and axis reductions, views, in-place updates, overlapping slice assignments) over
// the parameters a (m, n), b (n), c ((m, n), or (m, 1) to broadcast) and a scalar s; values pass through
// the 16-bit floats and the small integer types too.
#pragma once

#include <random>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::testing {

/// How a value broadcasts against (m, n).
enum class Kind { Full, Row, Col, Top };  // (m, n), (n), (m, 1), (1, n)

inline Kind combined(Kind x, Kind y) {
  if (x == y) return x;
  if (x == Kind::Full || y == Kind::Full) return Kind::Full;
  if ((x == Kind::Row && y == Kind::Top) || (x == Kind::Top && y == Kind::Row)) return Kind::Top;
  return Kind::Full;  // a row and a column make a matrix
}

struct RandomProgram {
  unsigned seed;
  bool c_is_column;  ///< c is passed with shape (m, 1)

  Array<double> operator()(Array<double, 2> a, Array<double, 1> b, Array<double, 2> c, Double s) const {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    std::vector<std::pair<Array<double>, Kind>> pool = {
        {a, Kind::Full}, {b, Kind::Row}, {c, c_is_column ? Kind::Col : Kind::Full}};
    Double acc = s;
    auto any = [&]() -> std::pair<Array<double>, Kind>& { return pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))]; };
    for (int step = 0; step < 10; ++step) {
      auto& [x, kx] = any();
      auto& [y, ky] = any();
      switch (pick(14)) {
        case 0: pool.emplace_back(kiln::tanh(x) + kiln::exp(y * 0.25), combined(kx, ky)); break;
        case 1: pool.emplace_back(kiln::where(x > y, x - y, kiln::minimum(x, y) * s), combined(kx, ky)); break;
        case 2: pool.emplace_back(kiln::sqrt(kiln::abs(x)) / (y * y + 1.0) + acc, combined(kx, ky)); break;
        case 3: acc = acc + kiln::sum(x) * 0.01 + kiln::max(y); break;
        case 4: acc = acc * 0.5 + kiln::mean(x) - kiln::std(y) + to_double(kiln::argmin(x)); break;
        case 5:  // axis reductions of matrices
          if (kx == Kind::Full) {
            const int which = pick(3);
            if (which == 0) pool.emplace_back(kiln::sum(x, 0), Kind::Row);
            else if (which == 1) pool.emplace_back(kiln::max(x, 1, keepdims), Kind::Col);
            else pool.emplace_back(kiln::var(x, 0, keepdims) + to_double(kiln::argmax(x, 0, keepdims)), Kind::Top);
          }
          break;
        case 6:  // reversed views
          if (kx == Kind::Row) pool.emplace_back(x[slice(none, none, -1)] * 1.0, Kind::Row);
          else if (kx == Kind::Full || kx == Kind::Col) pool.emplace_back(x(slice(none, none, -1), all) + 0.0, kx);
          break;
        case 7:  // in-place update of a matrix by anything
          if (kx == Kind::Full) x += y * 0.5;
          break;
        case 8:  // a shifted slice assignment: overlapping, so evaluated through a temporary
          if (kx == Kind::Full) x(kiln::range(1, none), all) = x(kiln::range(0, -1), all) * 0.5 + 1.0;
          break;
        case 9:  // a slice of rows from a row-like value
          if (kx == Kind::Full && (ky == Kind::Row || ky == Kind::Top)) x(kiln::range(0, -1, 2), all) = y;
          break;
        case 10: pool.emplace_back(kiln::cast<double>(kiln::cast<float>(x)) - kiln::floor(y), combined(kx, ky)); break;
        case 11:  // through the 16-bit floats: rounded to nearest-even, computed in f32
          pool.emplace_back(kiln::cast<double>(kiln::cast<kiln::half>(x) * kiln::cast<kiln::bfloat16>(y)), combined(kx, ky));
          break;
        case 12:  // through small integers: saturating conversions, wrapping arithmetic, 64-bit sums
          // (acc first: emplace_back may move the pool, and x and y with it)
          acc = acc + to_double(kiln::sum(kiln::cast<std::int8_t>(y * 10.0))) * 0.001;
          pool.emplace_back(kiln::cast<double>(kiln::cast<std::uint8_t>(x * 20.0) + kiln::cast<std::uint8_t>(y)) -
                                kiln::cast<double>(kiln::cast<std::int16_t>(x * 1000.0) >> 3),
                            combined(kx, ky));
          break;
        default: pool.emplace_back(kiln::maximum(x, acc) + kiln::pow(kiln::abs(y), 0.5), combined(kx, ky)); break;
      }
    }
    Array<double> out = pool[0].first + acc;
    for (size_t k = 1; k < pool.size(); ++k) out = out + pool[k].first;
    return out;
  }
};

}  // namespace kiln::testing
