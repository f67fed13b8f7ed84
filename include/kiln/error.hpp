// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln's error hierarchy. Every failure a user can cause surfaces as one of these, with context.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

/// Base of every error kiln throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// Misuse while tracing a kernel: unsupported construct, a traced value used out of scope, a racy write.
class TraceError : public Error {
 public:
  using Error::Error;
};

/// Wrong argument count, element type or rank at a call, or a host/device type mismatch.
class TypeError : public Error {
 public:
  using Error::Error;
};

/// Array shapes that do not fit together (broadcasting, stencil neighbourhoods, runtime shape checks).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// A value outside the domain of an operation (e.g. min of an empty array).
class ValueError : public Error {
 public:
  using Error::Error;
};

/// An array index outside the array (reported by the interpreter and by bounds-checked code).
class IndexError : public Error {
 public:
  using Error::Error;
};

/// Array arguments that share memory in a way the kernel cannot be given a correct meaning for: two written
/// arguments overlap, or a GPU array overlaps a written one. (An overlapping read-only host argument is
/// copied instead; see docs/aliasing.md.)
class AliasError : public Error {
 public:
  using Error::Error;
};

/// Code generation or compilation failed. Carries the offending IR or source and the compiler's log.
class CompileError : public Error {
 public:
  CompileError(const std::string& what, std::string code, std::string log = {})
      : Error(what), code_(std::move(code)), log_(std::move(log)) {}
  const std::string& code() const { return code_; }  ///< the kiln IR, LLVM IR or CUDA source involved
  const std::string& log() const { return log_; }    ///< the compiler's own messages, if any

 private:
  std::string code_, log_;
};

/// GPU driver, context, memory or launch failure; also "no CUDA driver/GPU".
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// A problem with the on-disk kernel cache. Reported as a warning and recovered from, never fatal.
class CacheError : public Error {
 public:
  using Error::Error;
};

}  // namespace kiln
