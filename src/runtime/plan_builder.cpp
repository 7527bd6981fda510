#include "runtime/plan_builder.hpp"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "codegen/half_arithmetic.hpp"
#include "codegen/render_c.hpp"
#include "device/buffer_registry.hpp"
#include "device/cpu/c_compiler.hpp"
#include "device/thread_pool.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"
#include "opt/upcast.hpp"
#include "runtime/plan_impl.hpp"

namespace lathe {
namespace {

// "r_64_32_1a2b3c": r for kernels that reduce, E for elementwise ones, then the loop sizes.
std::string kernel_name(const UOpPtr& ast) {
  bool reduces = false;
  std::vector<std::pair<int64_t, int64_t>> loops;
  for (const UOpPtr& u : toposort(ast)) {
    reduces |= u->op() == Ops::REDUCE;
    if (u->op() == Ops::RANGE) loops.emplace_back(u->arg_as<std::vector<int64_t>>()[0], u->src(0)->vmax());
  }
  std::sort(loops.begin(), loops.end());
  std::string name = reduces ? "r" : "E";
  for (auto& [axis, n] : loops) name += "_" + std::to_string(n);
  char h[8];
  std::snprintf(h, sizeof h, "%06llx", static_cast<unsigned long long>(ast->hash() & 0xffffff));
  return name + "_" + h;
}

std::vector<RuntimeVar> variables_of(const UOpPtr& ast) {
  std::vector<RuntimeVar> vars;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::DEFINE_VAR) {
      const auto& v = u->arg_as<VarArg>();
      vars.push_back({v.name, v.min, v.max});
    }
  return vars;
}

}  // namespace

std::shared_ptr<CachedKernel> compile_kernel(const UOpPtr& ast, const DeviceSpec& device) {
  if (device.type != "CPU") throw Error("device " + device.to_string() + " cannot run kernels in this build (CPU only)");
  int threads = choose_threads(ast, detail::kernel_threads());
  const CCompiler& cc = CCompiler::get();
  KernelKey key{ast->hash(), device.to_string(), cc.identity() + " threads=" + std::to_string(threads)};
  return get_or_compile_kernel(key, device.to_string(), [&] {
    ProgramSpec spec = render_c(ast, kernel_name(ast), CRenderOptions{threads});
    spec.device = device;
    if (debug_level() >= 4) std::fprintf(stderr, "lathe: source of %s\n%s\n", spec.name.c_str(), spec.src.c_str());
    CompiledSpec compiled = cc.compile(spec);
    compiled.var_names = spec.var_names;
    compiled.global_size = spec.global_size;
    compiled.buf_count = spec.buf_count;
    auto k = std::make_shared<CachedKernel>();
    k->program = load_cpu_program(compiled, spec.var_names.size(), threads > 1);
    k->device = device.to_string();
    k->code = spec.src;
    k->entry_point = spec.name;
    k->var_names = spec.var_names;
    k->globals = spec.globals;
    k->outs = spec.outs;
    k->ins = spec.ins;
    k->host_parallel_safe = true;
    k->estimates = spec.estimates;
    LaunchSize g = spec.global_size.value_or(LaunchSize{1, 1, 1});
    for (int d = 0; d < 3; ++d) k->global_size[d] = UOp::index_const(static_cast<int64_t>(g[d]));
    return k;
  });
}

ExecutionPlan PlanBuilder::build(const Schedule& sched, const DeviceSpec& device) {
  ExecutionPlan plan;
  ExecutionPlan::Impl& impl = *plan.impl_;
  impl.device = device;

  std::unordered_map<const UOp*, size_t> index_of;
  auto buffer_index = [&](const UOpPtr& node) -> size_t {
    if (auto it = index_of.find(node.get()); it != index_of.end()) return it->second;
    Buffer b = node->op() == Ops::BUFFER ? buffer_of(*node)
                                         : Buffer(node->dtype(), static_cast<size_t>(shape_numel(sched.shapes.at(node.get()))), device);
    size_t i = impl.buffers.size();
    impl.buffers.push_back(std::move(b));
    impl.buffer_ast_ids.push_back(node->id());
    impl.ast_to_buffer[node->id()] = i;
    index_of[node.get()] = i;
    return i;
  };

  std::set<size_t> inputs_or_outputs;

  std::unordered_map<size_t, uint64_t> writer;  // buffer index -> id of the kernel writing it
  for (const ScheduleItem& item : sched.items) {
    if (item.view_offset) {
      size_t base = buffer_index(item.bufs[1]);
      if (item.bufs[1]->op() == Ops::BUFFER) inputs_or_outputs.insert(base);
      const Buffer& b = impl.buffers[base];
      size_t n = static_cast<size_t>(shape_numel(sched.shapes.at(item.bufs[0].get())));
      Buffer view = Buffer::view(b, static_cast<size_t>(*item.view_offset) * b.dtype().itemsize(), n, b.dtype());
      size_t vi = impl.buffers.size();
      impl.buffers.push_back(view);
      impl.buffer_ast_ids.push_back(item.bufs[0]->id());
      impl.ast_to_buffer[item.bufs[0]->id()] = vi;
      index_of[item.bufs[0].get()] = vi;
      PreparedBufferView op{item.bufs[0]->id(), base, vi, {}};
      if (auto w = writer.find(base); w != writer.end()) {
        op.dependencies.push_back(w->second);
        writer[vi] = w->second;  // who reads the view waits for whoever wrote its memory
      }
      impl.ops.emplace_back(op);
      impl.launch.push_back(LaunchSize{1, 1, 1});
      continue;
    }
    static const bool noopt = std::getenv("NOOPT") && std::atoi(std::getenv("NOOPT")) != 0;
    UOpPtr ast = simplify_valid(simplify(item.ast));
    ast = round_half_arithmetic(noopt ? ast : apply_upcast(ast));
    if (debug_level() >= 3) std::fprintf(stderr, "lathe: kernel AST\n%s", print_graph(ast).c_str());
    PreparedKernel pk;
    pk.id = item.bufs[0]->id();
    pk.ast = ast;
    pk.kernel = compile_kernel(ast, device);
    pk.device = device;
    for (size_t slot : pk.kernel->globals) {
      const UOpPtr& node = item.bufs.at(slot);
      size_t bi = buffer_index(node);
      if (node->op() == Ops::BUFFER) inputs_or_outputs.insert(bi);
      pk.buffer_indices.push_back(bi);
      pk.buffer_ids.push_back(impl.buffers[bi].id());
    }
    for (size_t pos = 0; pos < pk.kernel->globals.size(); ++pos) {
      size_t slot = pk.kernel->globals[pos];
      bool written = std::find(pk.kernel->outs.begin(), pk.kernel->outs.end(), slot) != pk.kernel->outs.end();
      if (written) pk.output_indices.push_back(pos);
      if (auto w = writer.find(pk.buffer_indices[pos]); w != writer.end() && !written) pk.dependencies.push_back(w->second);
    }
    for (size_t pos : pk.output_indices) writer[pk.buffer_indices[pos]] = pk.id;
    pk.runtime_vars = variables_of(ast);
    for (const RuntimeVar& v : pk.runtime_vars) {
      auto bound = sched.var_vals.find(v.name);  // the value given with Variable::bind, else min
      impl.var_values.emplace(v.name, bound != sched.var_vals.end() ? bound->second : v.min);
    }
    pk.vals.assign(pk.kernel->var_names.size(), 0);
    pk.buffer_ptrs.assign(pk.buffer_indices.size(), 0);
    impl.ops.emplace_back(std::move(pk));
    impl.launch.push_back(LaunchSize{1, 1, 1});
  }
  for (const UOpPtr& out : sched.outputs) {
    size_t i = buffer_index(out);
    impl.outputs.push_back(i);
    inputs_or_outputs.insert(i);
  }
  // A buffer that an output (or input) views is kept with it, never released as an intermediate.
  for (const PreparedOp& op : impl.ops)
    if (const auto* v = std::get_if<PreparedBufferView>(&op); v && inputs_or_outputs.count(v->view)) inputs_or_outputs.insert(v->base);
  for (size_t i = 0; i < impl.buffers.size(); ++i)
    if (!inputs_or_outputs.count(i) && !impl.buffers[i].is_view()) impl.intermediates.push_back(i);
  impl.refresh_values();
  if (debug_level() >= 2) {
    std::fprintf(stderr, "lathe: schedule of %zu kernels, %zu views, %zu buffers\n", plan.prepared_kernels().size(),
                 impl.ops.size() - plan.prepared_kernels().size(), impl.buffers.size());
    for (const PreparedKernel* k : plan.prepared_kernels())
      std::fprintf(stderr, "  %-40s %zu buffers, %lld ops, %lld index ops, %lld bytes touched, %lld bytes loaded and stored\n",
                   k->kernel->entry_point.c_str(), k->buffer_indices.size(), static_cast<long long>(k->work.ops),
                   static_cast<long long>(k->work.index_ops), static_cast<long long>(k->work.mem), static_cast<long long>(k->work.lds));
  }
  impl.refresh_pointers();
  return plan;
}

}  // namespace lathe
