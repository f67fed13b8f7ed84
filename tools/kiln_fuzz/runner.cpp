// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tools/kiln_fuzz/runner.hpp"

#include <exception>
#include <memory>

#include "codegen/llvm/cpu_backend.hpp"
#include "frontend/settings.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "kiln/options.hpp"
#include "passes/pipeline.hpp"
#include "runtime/parallel.hpp"
#include "tools/kiln_fuzz/buffers.hpp"

namespace kiln::fuzz {
namespace {

std::unique_ptr<Outcome> interpret(const ir::Function& f, const Args& inputs) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = test_support::pointers(out->args);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  try {
    ir::interpret(f, p.data(), result);
  } catch (const IndexError& e) {
    out->error = e.what();
    out->index_error = true;
  } catch (const std::exception& e) {
    out->error = e.what();
  }
  return out;
}

std::unique_ptr<Outcome> execute(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = test_support::pointers(out->args);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  KernelStatus status;
  if (k(p.data(), result, &status) != 0) {
    out->error = status.message;
    out->index_error = status.code == kIndexOutOfRange;
  }
  return out;
}

/// Re-runs the passes one at a time to find the first after which the interpreter's answer changes (nothing if
/// none does).
std::optional<Failure> blame_pass(const Program& p, const Args& inputs, const Outcome& ref) {
  passes::PassContext ctx;
  ir::Function f = p.function;
  for (const auto& pass : passes::pipeline()) {
    ctx.pass = pass.name;
    ctx.topic = pass.topic;
    ir::Function next = pass.run(f, ctx);
    ir::verify_or_throw(next, std::string("after pass ") + pass.name);
    Program q = p;
    q.function = next;
    auto got = interpret(next, inputs);
    std::string diff = compare(q, ref, *got);
    if (!diff.empty()) return Failure{std::string("pass ") + pass.name, diff, ir::to_string(p.function), ir::to_string(next)};
    f = std::move(next);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Failure> check(const Program& p, std::uint64_t seed, bool every_pass) {
  const ir::Function& f = p.function;
  auto fail = [&](std::string stage, std::string message, std::string at_fault = {}) {
    return Failure{std::move(stage), std::move(message), ir::to_string(f), std::move(at_fault)};
  };
  if (auto problems = ir::verify(f); !problems.empty()) return fail("generator", "the verifier rejects the program: " + problems[0]);
  const Args inputs = make_args(p, seed);
  auto ref = interpret(f, inputs);
  if (!ref->error.empty()) return fail("reference", "the interpreter fails on the generated program: " + ref->error);

  ir::Function opt;
  try {
    // KILN_BOUNDSCHECK=1 fuzzes the bounds-checked mode: its checks must never fire on these in-bounds programs.
    opt = passes::run_pipeline(f, nullptr, detail::with_pipeline_dumps(passes::PipelineOptions{kiln::default_boundscheck()}));
  } catch (const std::exception& e) {
    return fail("pipeline", std::string("the pass pipeline threw: ") + e.what());
  }
  Program optimized = p;
  optimized.function = opt;
  auto after = interpret(opt, inputs);
  const bool differs = !compare(optimized, *ref, *after).empty();
  if (differs || every_pass) {
    try {
      if (auto blamed = blame_pass(p, inputs, *ref)) return blamed;
    } catch (const std::exception& e) {
      return fail("pipeline", std::string("a pass threw when run alone: ") + e.what());
    }
    if (differs) return fail("pipeline", "the pipeline changed the answer, no single pass did", ir::to_string(opt));
  }

  codegen::CompiledKernel kernel;
  try {
    codegen::CodegenOptions options;
    options.opt_level = p.opt_level;
    kernel = codegen::cpu::compile(opt, options);
  } catch (const std::exception& e) {
    return fail("compile", std::string("the CPU backend threw: ") + e.what(), ir::to_string(opt));
  }
  // One thread, several, and several with no room for private copies: array reductions then take the variant
  // that updates the shared array with atomics.
  struct Run {
    int threads;
    bool atomics;
  };
  for (const Run run : {Run{1, false}, Run{p.threads, false}, Run{p.threads, true}}) {
    runtime::set_num_threads(run.threads);
    if (run.atomics) runtime::set_private_copy_limit(0);
    auto got = execute(kernel, opt, inputs);
    runtime::set_num_threads(0);
    runtime::set_private_copy_limit(-1);
    std::string diff = compare(optimized, *ref, *got);
    if (!diff.empty())
      return fail("jit (O" + std::to_string(p.opt_level) + ", " + std::to_string(run.threads) + " threads" +
                      (run.atomics ? ", atomics" : "") + ")",
                  diff, ir::to_string(opt));
  }
  return std::nullopt;
}

std::optional<Failure> check_out_of_bounds(const Program& p, std::uint64_t seed) {
  // One array argument loses the last element along axis 0, so that accesses sized by the others run past it.
  Program shrunk = p;
  std::vector<std::size_t> arrays;
  for (std::size_t i = 0; i < p.params.size(); ++i)
    if (p.function.params[i]->type.is_array() && !p.params[i].shape.empty() && p.params[i].shape[0] > 0) arrays.push_back(i);
  if (arrays.empty()) return std::nullopt;
  const std::size_t victim = arrays[seed % arrays.size()];
  --shrunk.params[victim].shape[0];
  const ir::Function& f = p.function;
  auto fail = [&](std::string message, const ir::Function& at_fault) {
    return Failure{"bounds", "argument " + f.params[victim]->name + " one element short along axis 0: " + std::move(message),
                   ir::to_string(f), ir::to_string(at_fault)};
  };
  if (!ir::verify(f).empty()) return std::nullopt;  // check() reports it
  const Args inputs = make_args(shrunk, seed);

  // The reference: the interpreter checks every access it makes.
  const auto ref = interpret(f, inputs);
  // Another failure of the program itself leaves nothing to compare.
  if (!ref->error.empty() && !ref->index_error) return std::nullopt;

  ir::Function checked;
  try {
    checked = passes::run_pipeline(f, nullptr, detail::with_pipeline_dumps(passes::PipelineOptions{true}));
  } catch (const std::exception& e) {
    return fail(std::string("the pass pipeline threw: ") + e.what(), f);
  }
  codegen::CompiledKernel kernel;
  try {
    codegen::CodegenOptions options;
    options.opt_level = p.opt_level;
    kernel = codegen::cpu::compile(checked, options);
  } catch (const std::exception& e) {
    return fail(std::string("the CPU backend threw: ") + e.what(), checked);
  }
  runtime::set_num_threads(p.threads);
  const auto got = execute(kernel, f, inputs);
  runtime::set_num_threads(0);
  if (ref->index_error && !got->index_error)
    return fail("the interpreter raised \"" + ref->error + "\" but the bounds-checked CPU code " +
                    (got->error.empty() ? std::string("ran to the end") : "failed with \"" + got->error + "\"") + "\n",
                checked);
  if (!ref->index_error && !got->error.empty())
    return fail("the interpreter ran to the end but the bounds-checked CPU code failed with \"" + got->error + "\"\n",
                checked);
  // Values are not compared: with one argument short, a new array may no longer be written everywhere before
  // it is read (the generator's rule), and what its unwritten elements hold differs between the targets.
  // KILN_BOUNDSCHECK=1 kiln-fuzz compares the mode's values on in-bounds arguments.
  return std::nullopt;
}

}  // namespace kiln::fuzz
