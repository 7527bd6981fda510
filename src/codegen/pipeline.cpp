#include "codegen/pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "codegen/accumulators.hpp"
#include "codegen/attention.hpp"
#include "codegen/estimates.hpp"
#include "codegen/expand.hpp"
#include "codegen/gate_bounds.hpp"
#include "codegen/half_arithmetic.hpp"
#include "codegen/half_casts.hpp"
#include "codegen/integer_division.hpp"
#include "codegen/launch_grid.hpp"
#include "codegen/linearize.hpp"
#include "ir/merge_loops.hpp"
#include "ir/split_loops.hpp"
#include "codegen/parallelize.hpp"
#include "codegen/transcendental.hpp"
#include "ir/axis.hpp"
#include "ir/spec.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"
#include "opt/action.hpp"
#include "opt/heuristic.hpp"
#include "opt/tensor_core.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

struct Step {
  const char* name;
  std::function<UOpPtr(const UOpPtr&)> run;
};

// The actions the optimize step applies to `ast` (from optimizer_input) under `o`; a kernel that
// builds its own loops (KernelInfo) takes none.
std::vector<Opt> chosen_opts(const UOpPtr& ast, const KernelOptions& o) {
  if (!o.optimize || kernel_info(*ast).builds_own_loops) return {};
  if (o.opts) return *o.opts;
  return hand_coded_opts(ast, o.target);
}

constexpr const char* kOptimize = "optimize";

// Whether a TC over loop `k_axis` of `ast` fits the kernel but `target` has no tensor core for
// its inputs (one that does not fit the kernel is refused by the action itself, saying why).
bool lacks_tensor_core(const UOpPtr& ast, int64_t k_axis, const Target& target) {
  std::optional<TensorCoreLoops> fit = tensor_core_loops(ast, k_axis);
  return fit && !has_tensor_core(target, fit->input);
}

// The steps that put a kernel in the form the optimizer sees (optimizer_input runs these alone).
std::vector<Step> shaping_steps() {
  return {
      {"integer division defined for every divisor", define_integer_division},
      {"simplify", simplify},
      {"simplify gates", simplify_valid},
      // A kernel that builds its own loops (attention) keeps those it was lowered with.
      {"split divided loops", [](const UOpPtr& a) { return kernel_info(*a).builds_own_loops ? a : split_divided_loops(a); }},
      {"merge adjacent loops", [](const UOpPtr& a) { return kernel_info(*a).builds_own_loops ? a : merge_adjacent_loops(a); }},
  };
}

// The steps for one kernel; `threads` receives the thread count of the split, `grid` the launch
// on a GPU's grid, `applied` the optimizer's actions.
std::vector<Step> steps(const KernelOptions& o, int& threads, GridLaunch& grid, std::vector<Opt>& applied) {
  std::vector<Step> all = shaping_steps();
  all.insert(all.end(), {
      {kOptimize,
       [&o, &applied](const UOpPtr& a) {
         applied = chosen_opts(a, o);
         for (const Opt& op : applied) {
           if (op.op == OptOp::TC && lacks_tensor_core(a, op.axis, o.target))
             throw OptError(to_string(op) + " does not fit: the Target has no tensor cores for its inputs");
           if (op.op == OptOp::LOCAL && !o.target.has_local) throw OptError(to_string(op) + " does not fit: the Target launches no blocks of threads");
         }
         return apply_opts(a, applied);
       }},
      {"16-bit floats as float arithmetic", round_half_arithmetic},
      {"attention as one kernel", [&o](const UOpPtr& a) { return attention_as_one_kernel(a, o.target); }},
      {"transcendentals as polynomials",
       [&o](const UOpPtr& a) { return o.target.native_transcendentals ? a : decompose_transcendentals(a); }},
      {"upcast axes as vectors",
       [&o](const UOpPtr& a) {
         return expand_upcasts(a, o.target.widest_vector, o.target.has_local ? 0 : o.target.vector_registers);
       }},
      {"gates as loop bounds", gates_as_loop_bounds},
      {"output loops as a GPU's grid and blocks",
       [&o, &grid](const UOpPtr& a) {
         grid = launch_on_grid(a, o.target);
         return grid.ast;
       }},
      {"split across threads",
       [&threads](const UOpPtr& a) {
         threads = threads_of(a);
         return split_group(split_for_threads(a));
       }},
      {"reductions as accumulators", lower_reductions},
      {"tensor-core accumulators as the multiply-add's C", fold_accumulators_into_wmma},
      {"16-bit float conversions as integer and float operations", lower_16bit_casts},
  });
  return all;
}

std::string kernel_name(const UOpPtr& ast) {
  bool reduces = false;
  std::vector<std::pair<int64_t, int64_t>> loops;
  for (const UOpPtr& u : toposort(ast)) {
    reduces |= u->op() == Ops::REDUCE;
    if (u->op() == Ops::RANGE) loops.emplace_back(axis_of(*u), u->src(0)->vmax());
  }
  std::sort(loops.begin(), loops.end());
  std::string name = reduces ? "r" : "E";
  for (auto& [axis, n] : loops) name += "_" + std::to_string(n);
  char h[8];
  std::snprintf(h, sizeof h, "%06llx", static_cast<unsigned long long>(ast->hash() & 0xffffff));
  return name + "_" + h;
}

KernelSignature signature_of(const UOpPtr& ast) {
  std::map<int64_t, KernelSignature::Buffer> bufs;
  std::set<std::string> vars, launches;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() == Ops::DEFINE_GLOBAL) bufs.emplace(u->arg_as<int64_t>(), KernelSignature::Buffer{static_cast<size_t>(u->arg_as<int64_t>()), u->dtype().base(), false});
    if (u->op() == Ops::DEFINE_VAR) vars.insert(u->arg_as<VarArg>().name);
    if (u->op() == Ops::SPECIAL) launches.insert(u->arg_as<std::string>());
  }
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::STORE && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) bufs.at(u->src(0)->src(0)->arg_as<int64_t>()).written = true;
  KernelSignature sig;
  for (auto& [slot, b] : bufs) sig.buffers.push_back(b);
  sig.vars.assign(vars.begin(), vars.end());
  for (const char* name : kLaunchIndices)
    if (launches.count(name)) sig.vars.emplace_back(name);
  return sig;
}

}  // namespace

std::string KernelOptions::key() const {
  std::string k = "opt=" + std::to_string(optimize) + " " + target.key();
  if (opts) k += " opts=" + to_string(*opts);
  return k;
}

UOpPtr optimizer_input(const UOpPtr& ast) {
  UOpPtr cur = ast;
  for (const Step& s : shaping_steps()) cur = s.run(cur);
  return cur;
}


std::vector<std::string> pipeline_steps() {
  int threads = 1;
  GridLaunch grid;
  std::vector<Opt> applied;
  KernelOptions o;
  std::vector<std::string> names;
  for (const Step& s : steps(o, threads, grid, applied)) names.emplace_back(s.name);  // names only: none runs
  names.emplace_back("linearize");
  names.emplace_back("render");
  return names;
}

std::string render_lowered(const std::string& name, const UOpPtr& lowered, const Renderer& renderer, int64_t threads_per_block) {
  KernelSignature sig = signature_of(lowered);
  sig.threads_per_block = threads_per_block;
  return renderer.render(name, linearize(lowered), sig);
}

ProgramSpec build_program(const UOpPtr& ast, const Renderer& renderer, const KernelOptions& options) {
  SimplifyMemo memo;
  int threads = 1, debug = settings::debug_level();
  GridLaunch grid;
  std::vector<Opt> applied;
  UOpPtr cur = ast;
  std::string name = kernel_name(ast);
  if (options.verify) verify(cur);
  for (const Step& step : steps(options, threads, grid, applied)) {
    cur = step.run(cur);
    if (std::string(step.name) == kOptimize) {
      name = kernel_name(cur);
      if (debug >= 3)
        std::fprintf(stderr, "lathe: kernel %s [%s]\n%s", name.c_str(), to_string(applied).c_str(), print_graph(cur).c_str());
    }
    if (debug >= 5) std::fprintf(stderr, "lathe: %s after %s\n%s", name.c_str(), step.name, print_graph(cur).c_str());
    if (options.verify) verify(cur);
  }
  std::vector<UOpPtr> program = linearize(cur);
  if (debug >= 5) {
    std::string listing;
    for (const UOpPtr& u : program) listing += "  " + to_string(*u) + "\n";
    std::fprintf(stderr, "lathe: %s linearized\n%s", name.c_str(), listing.c_str());
  }
  KernelSignature sig = signature_of(cur);
  if (options.target.has_local) sig.threads_per_block = static_cast<int64_t>(grid.local[0] * grid.local[1] * grid.local[2]);
  ProgramSpec spec(name, renderer.render(name, program, sig), DeviceSpec{}, cur);
  spec.shared_scratch = has_shared_scratch(cur);
  spec.set_var_names(sig.vars);
  spec.opts = to_string(applied);
  std::vector<size_t> globals, outs, ins;
  for (const KernelSignature::Buffer& b : sig.buffers) {
    globals.push_back(b.slot);
    (b.written ? outs : ins).push_back(b.slot);
  }
  spec.set_buffer_metadata(globals, outs, ins);
  for (const UOpPtr& u : toposort(cur))
    if (u->op() == Ops::DEFINE_VAR) {
      const auto& v = u->arg_as<VarArg>();
      spec.add_var(Variable(v.name, v.min, v.max));
    }
  if (threads > 1) spec.global_size = LaunchSize{static_cast<size_t>(threads), 1, 1};
  if (options.target.has_local) spec.set_work_sizes(grid.global, grid.local);
  spec.estimates = count_work(program);
  return spec;
}

}  // namespace lathe
