// The code generator as one visible list of named steps (pipeline.cpp's steps(); `lathe info`
// prints them): a kernel AST from the scheduler becomes a ProgramSpec through
//
//   shaping (integer division, simplify, gates, loop splits and merges) -> optimize
//   -> 16-bit floats as float arithmetic -> attention as one kernel -> transcendentals
//   -> upcast axes as vectors -> gates as loop bounds -> output loops as a GPU's grid and blocks
//   -> split across threads
//   -> reductions as accumulators -> tensor-core accumulators as the multiply-add's C
//   -> 16-bit float conversions -> linearize -> render
//
// Each step is a graph rewrite over UOps (ir/, opt/, codegen/); after the steps the kernel is in
// device-level form (vectors as VECTORIZE/GEP and vector dtypes, launch indices as SPECIAL,
// accumulators as DEFINE_REG, 16-bit floats only loaded, stored and cast), which linearize orders and a Renderer spells. DEBUG=5 prints the
// kernel after every step; `verify` checks it between steps.
#pragma once

#include <string>
#include <vector>

#include <optional>

#include "codegen/renderer.hpp"
#include "lathe/info.hpp"
#include "lathe/program.hpp"
#include "lathe/target.hpp"
#include "opt/action.hpp"

namespace lathe {

/// Settings of one kernel's code generation (a plan passes its own; see PrepareOptions).
struct KernelOptions {
  bool optimize = true;   // the optimizer's actions (off: the kernel as scheduled)
  bool verify = false;    // check the graph between steps (tests, debug builds)
  Target target{};        // the machine it is planned and generated for (its backend's, or a plan's shape)
  std::optional<std::vector<Opt>> opts{};  // these actions instead of the heuristics' (BEAM, tests)
  /// What distinguishes kernels built with these options, for cache keys.
  std::string key() const;
};

// pipeline_steps(): the steps' names, in order (lathe/info.hpp).

/// `ast` in the form the optimizer sees it (after the simplify, split and merge steps).
UOpPtr optimizer_input(const UOpPtr& ast);

/// `ast` (a SINK of STOREs from the scheduler) through every step, rendered by `renderer`. The
/// kernel is named for its loops once optimized: "r_64_32_1a2b3c" (r: it reduces, E: elementwise;
/// the loop sizes by axis; a hash); ProgramSpec::opts lists the actions applied. Throws SpecError
/// when `verify` finds a malformed graph and OptError when an explicit action does not fit.
ProgramSpec build_program(const UOpPtr& ast, const Renderer& renderer, const KernelOptions& options);

}  // namespace lathe
