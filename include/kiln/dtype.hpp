// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element types shared by the public API and the IR.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/half.hpp"

namespace kiln {

/// The scalar element types kiln can trace, store and compile. New types are appended, so that the
/// serialized numbers of the older ones stay what they were.
enum class DType : std::uint8_t { Bool, I32, I64, F32, F64, U8, U16, U32, U64, I8, I16, F16, BF16 };

constexpr int kMaxRank = 4;  ///< arrays have rank 1..kMaxRank

/// f16 and bf16 are storage types: arithmetic on them is done in f32 (ir/semantics.hpp).
constexpr bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }
constexpr bool is_float(DType t) { return t == DType::F32 || t == DType::F64 || is_half(t); }
constexpr bool is_unsigned(DType t) { return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64; }
constexpr bool is_signed_int(DType t) { return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64; }
constexpr bool is_int(DType t) { return is_signed_int(t) || is_unsigned(t); }

constexpr int size_of(DType t) {
  switch (t) {
    case DType::Bool: case DType::U8: case DType::I8: return 1;
    case DType::U16: case DType::I16: case DType::F16: case DType::BF16: return 2;
    case DType::I32: case DType::U32: case DType::F32: return 4;
    case DType::I64: case DType::U64: case DType::F64: return 8;
  }
  return 0;
}

/// The width of a type's values in bits (1 for bool).
constexpr int bits_of(DType t) { return t == DType::Bool ? 1 : size_of(t) * 8; }

constexpr std::string_view name_of(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::U8: return "u8";
    case DType::U16: return "u16";
    case DType::U32: return "u32";
    case DType::U64: return "u64";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
  }
  return "?";
}

/// The C++ types kiln accepts as elements: bool, the fixed-width integers of 8 to 64 bits, float, double,
/// kiln::half and kiln::bfloat16.
template <class T>
inline constexpr bool is_element_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint8_t> ||
    std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// kiln's float element types: float, double and the two 16-bit storage types.
template <class T>
inline constexpr bool is_float_element_v =
    std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// The DType of a C++ element type; only the supported types are accepted.
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<U, std::int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<U, float>) return DType::F32;
  else if constexpr (std::is_same_v<U, double>) return DType::F64;
  else if constexpr (std::is_same_v<U, std::uint8_t>) return DType::U8;
  else if constexpr (std::is_same_v<U, std::uint16_t>) return DType::U16;
  else if constexpr (std::is_same_v<U, std::uint32_t>) return DType::U32;
  else if constexpr (std::is_same_v<U, std::uint64_t>) return DType::U64;
  else if constexpr (std::is_same_v<U, std::int8_t>) return DType::I8;
  else if constexpr (std::is_same_v<U, std::int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<U, half>) return DType::F16;
  else if constexpr (std::is_same_v<U, bfloat16>) return DType::BF16;
  else
    static_assert(sizeof(U) == 0,
                  "kiln supports bool, int8_t ... int64_t, uint8_t ... uint64_t, float, double, kiln::half and "
                  "kiln::bfloat16 elements");
}

template <class T>
concept Element = is_element_v<std::remove_cv_t<T>>;

}  // namespace kiln
