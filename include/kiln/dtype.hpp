// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element types shared by the public API and the IR.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace kiln {

/// The scalar element types kiln can trace, store and compile.
enum class DType : std::uint8_t { Bool, I32, I64, F32, F64 };

constexpr int kMaxRank = 4;  ///< arrays have rank 1..kMaxRank

constexpr bool is_float(DType t) { return t == DType::F32 || t == DType::F64; }
constexpr bool is_int(DType t) { return t == DType::I32 || t == DType::I64; }

constexpr int size_of(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::I32: return 4;
    case DType::F32: return 4;
    case DType::I64: return 8;
    case DType::F64: return 8;
  }
  return 0;
}

constexpr std::string_view name_of(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  return "?";
}

/// The DType of a C++ element type; only the five supported types are accepted.
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<U, std::int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<U, float>) return DType::F32;
  else if constexpr (std::is_same_v<U, double>) return DType::F64;
  else static_assert(sizeof(U) == 0, "kiln supports bool, int32_t, int64_t, float and double elements");
}

template <class T>
concept Element = std::is_same_v<std::remove_cv_t<T>, bool> || std::is_same_v<std::remove_cv_t<T>, std::int32_t> ||
                  std::is_same_v<std::remove_cv_t<T>, std::int64_t> || std::is_same_v<std::remove_cv_t<T>, float> ||
                  std::is_same_v<std::remove_cv_t<T>, double>;

}  // namespace kiln
