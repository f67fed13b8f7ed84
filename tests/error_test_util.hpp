// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the error tests share: catching exactly one kiln::Error class, and checking that a message holds a
// piece of context.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <exception>
#include <functional>
#include <string>
#include <typeinfo>
#include <utility>

#include "kiln/kernel.hpp"

/// Fails (without stopping the test) unless `needle` occurs in the string `haystack`, printing both.
#define EXPECT_CONTAINS(haystack, needle)                                                        \
  do {                                                                                           \
    const std::string h_ = (haystack);                                                           \
    EXPECT_NE(h_.find(needle), std::string::npos) << "missing: " << (needle) << "\nin:\n" << h_; \
  } while (0)

namespace kiln_tests {

/// Runs `fn`, expecting exactly the error class E (not just a base of it); returns the message.
template <class E>
std::string exact_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    EXPECT_EQ(typeid(e), typeid(E)) << "caught a subclass " << typeid(e).name() << ": " << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
  return "";
}

/// Calls kernel `k` with `args` through its type-erased core, as callers that build arguments themselves do
/// (kiln::dist): the compile-time checks of Kernel::operator() are skipped, so the run-time checks behind them
/// are reached. For calls expected to throw (the result, if any, is discarded).
template <class K, class... A>
void call_erased(const K& k, A&&... args) {
  std::array<kiln::detail::ArgValue, sizeof...(A)> av{kiln::detail::make_arg(std::forward<A>(args))...};
  kiln::ArrayDesc out{};
  k.core()->call(k.options_id(), av.data(), av.size(), &out);
}

}  // namespace kiln_tests
