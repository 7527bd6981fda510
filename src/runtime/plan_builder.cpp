#include "runtime/plan_builder.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <unordered_set>

#include "device/buffer_registry.hpp"
#include "ir/eval.hpp"
#include "ir/toposort.hpp"
#include "runtime/beam.hpp"
#include "runtime/compile_kernel.hpp"
#include "runtime/host_steps.hpp"
#include "runtime/memory_plan.hpp"
#include "runtime/plan_impl.hpp"
#include "runtime/progress.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

// The variables `expr` reads (bound or not) added to `vars`, each once, those in `leave_out` left out.
void add_variables(const UOpPtr& expr, std::vector<RuntimeVar>& vars, const std::vector<RuntimeVar>& leave_out = {}) {
  auto known = [](const std::string& name, const std::vector<RuntimeVar>& in) {
    return std::any_of(in.begin(), in.end(), [&](const RuntimeVar& v) { return v.name == name; });
  };
  for (const UOpPtr& u : toposort(expr))
    if (u->op() == Ops::DEFINE_VAR) {
      const auto& v = u->arg_as<VarArg>();
      if (!known(v.name, vars) && !known(v.name, leave_out)) vars.push_back({v.name, v.min, v.max});
    }
}


// Marks the kernels that read only constant buffers (a model's weights, or what such kernels
// wrote), or nothing, and no variable, and write no buffer the caller reaches (`reachable`:
// inputs, outputs and what they view; never a joined buffer, as schedule/buffer_assignment leaves
// outputs' joins alone): they run once, at prepare. A joined buffer (`part_of`: a part's view ->
// the buffer its concatenation, or its padded copy, is written into in place) is constant once
// all its parts are (a padded copy's fill, which reads nothing, runs once and leaves the border).
// Splits impl.ops into what execute() runs and the folded kernels, and notes every buffer the
// folded kernels touch (what they write is kept for the plan's lifetime: memory_plan.cpp leaves
// it out of the intermediates, so a padded copy's border outlives every execute()).
void fold_constants(ExecutionPlan::Impl& impl, const std::set<size_t>& reachable, const std::unordered_map<size_t, size_t>& part_of) {
  std::set<size_t> constant;
  std::unordered_map<size_t, size_t> parts_left;  // a joined buffer -> its parts not yet constant
  for (const auto& [part, joined] : part_of) ++parts_left[joined];
  // `b` became constant, and so does each joined buffer whose last part it was.
  auto mark_constant = [&](size_t b) {
    for (;;) {
      constant.insert(b);
      auto j = part_of.find(b);
      if (j == part_of.end() || --parts_left[j->second] != 0) return;
      b = j->second;
    }
  };
  for (size_t i = 0; i < impl.buffers.size(); ++i)
    if (impl.buffers[i].is_constant()) constant.insert(i);
  for (size_t i = 0; i < impl.ops.size(); ++i) {
    PreparedOp& op = impl.ops[i];
    auto* k = std::get_if<PreparedKernel>(&op);
    if (auto* v = std::get_if<PreparedBufferView>(&op); v && constant.count(v->base)) constant.insert(v->view);
    // A kernel that reads nothing (a full, what is made of constants alone) is a constant too.
    bool only_constants = k && k->runtime_vars.empty();
    for (size_t pos = 0; only_constants && pos < k->buffer_indices.size(); ++pos) {
      size_t b = k->buffer_indices[pos];
      bool out = std::find(k->output_indices.begin(), k->output_indices.end(), pos) != k->output_indices.end();
      only_constants = out ? !reachable.count(b) : constant.count(b) > 0;
    }
    if (!only_constants) {
      impl.executed.push_back(i);
      continue;
    }
    k->constant = true;
    impl.folded.push_back(i);
    for (size_t pos = 0; pos < k->buffer_indices.size(); ++pos) impl.feeds_folded.insert(k->buffer_indices[pos]);
    // A buffer that parts write too (a padded copy's fill) waits for them.
    for (size_t pos : k->output_indices)
      if (auto p = parts_left.find(k->buffer_indices[pos]); p == parts_left.end() || p->second == 0) mark_constant(k->buffer_indices[pos]);
  }
  // A view shares its base's memory: writing either changes what the folded kernels saw.
  for (const PreparedOp& op : impl.ops)
    if (const auto* v = std::get_if<PreparedBufferView>(&op); v && (impl.feeds_folded.count(v->base) || impl.feeds_folded.count(v->view)))
      impl.feeds_folded.insert({v->base, v->view});
}

// A shape at its largest: the memory an output of a step gets.
Shape largest(const SymShape& shape) {
  Shape out;
  for (const SInt& d : shape) out.push_back(d.max());
  return out;
}

// Runs a host step on `args` (its outputs, at their largest `capacity`, then its inputs), at the
// variables' values in `vars`, and sets the sizes it decided there. A buffer the host cannot
// address is staged through memory it can.
void run_host_step(const HostStepNode& node, const std::vector<Shape>& capacity, int threads, std::vector<Buffer>& args, VarValues& vars) {
  const HostStep& step = *node.step;
  HostThreadsScope split(threads);
  size_t n_out = capacity.size();
  std::vector<std::vector<uint8_t>> staged(args.size());
  auto host_memory = [&](size_t i, bool read) -> void* {
    Buffer& b = args[i];
    if (b.host_visible()) return b.data();
    staged[i].resize(b.nbytes());
    if (read && b.nbytes()) b.copyout(staged[i].data(), staged[i].size());
    return staged[i].data();
  };
  std::vector<HostTensor> ins, outs;
  for (size_t k = 0; k < n_out; ++k) outs.push_back({host_memory(k, false), args[k].dtype(), capacity[k]});
  for (size_t j = 0; j < node.input_shapes.size(); ++j) {
    Shape at;  // the input's sizes in this run
    for (const SInt& d : node.input_shapes[j]) at.push_back(d.value_at(vars));
    ins.push_back({host_memory(n_out + j, true), args[n_out + j].dtype(), std::move(at)});
  }
  size_t own = step.outputs.size();  // then the decided sizes' vector, where it decides any
  std::vector<int64_t> sizes = step.run(ins, std::vector<HostTensor>(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(own)));
  if (sizes.size() != step.sizes.size())
    throw Error("host step '" + step.name + "' returned " + std::to_string(sizes.size()) + " sizes for its " + std::to_string(step.sizes.size()));
  for (size_t v = 0; v < sizes.size(); ++v) {  // every size checked before any is set
    const Variable& var = step.sizes[v];
    if (sizes[v] < var.min() || sizes[v] > var.max())
      throw Error("host step '" + step.name + "' decided the size " + var.name() + " = " + std::to_string(sizes[v]) + ", outside [" +
                  std::to_string(var.min()) + ", " + std::to_string(var.max()) + "]");
  }
  for (size_t v = 0; v < sizes.size(); ++v) vars[step.sizes[v].name()] = sizes[v];
  if (!sizes.empty()) std::copy(sizes.begin(), sizes.end(), outs[own].as<int64_t>());
  for (size_t k = 0; k < n_out; ++k)
    if (!staged[k].empty()) args[k].copyin(staged[k].data(), staged[k].size());
}

// The op that runs the host step `node` names: its outputs are `stored` (the CUSTOM nodes the
// schedule stores; an output nothing reads gets an intermediate buffer of its own), its inputs the
// sources of the first.
PreparedCustom prepare_host_step(const HostStepNode& node, const std::vector<UOpPtr>& stored,
                                 const std::function<size_t(const UOpPtr&)>& buffer_index, ExecutionPlan::Impl& impl,
                                 const std::map<std::string, int64_t>& bound, int threads) {
  const HostStep& step = *node.step;
  PreparedCustom op;
  op.id = stored.front()->id();
  op.name = step.name;
  std::vector<Shape> capacity;
  std::vector<HostOutput> held = held_outputs(step);
  for (size_t k = 0; k < held.size(); ++k) {
    capacity.push_back(largest(held[k].shape));
    auto it = std::find_if(stored.begin(), stored.end(), [&](const UOpPtr& u) { return host_step_of(*u).output == k; });
    if (it != stored.end()) {
      op.buffer_indices.push_back(buffer_index(*it));
      continue;
    }
    op.buffer_indices.push_back(impl.buffers.size());
    impl.buffers.emplace_back(held[k].dtype, static_cast<size_t>(shape_numel(capacity.back())), impl.device);
    impl.buffer_ast_ids.push_back(0);  // no graph node holds it
  }
  op.num_outputs = held.size();
  for (const UOpPtr& src : stored.front()->src()) op.buffer_indices.push_back(buffer_index(src));
  for (const Variable& v : step.sizes) op.sets.push_back({v.name(), v.min(), v.max()});
  // What its inputs' and outputs' sizes read, but the sizes it decides.
  for (const SymShape& shape : node.input_shapes)
    for (const SInt& d : shape) add_variables(d.uop(), op.runtime_vars, op.sets);
  for (const HostOutput& o : held)
    for (const SInt& d : o.shape) add_variables(d.uop(), op.runtime_vars, op.sets);
  for (const RuntimeVar& v : op.runtime_vars) {
    auto b = bound.find(v.name);
    impl.var_values.emplace(v.name, b != bound.end() ? b->second : v.min);
  }
  for (const RuntimeVar& v : op.sets) impl.var_values[v.name] = v.min;
  op.fn = [node, capacity, threads](std::vector<Buffer>& args, VarValues& vars) { run_host_step(node, capacity, threads, args, vars); };
  return op;
}

// For each host step, the kernels after it that read a size it sets: they take the new value when
// it runs. A kernel before the step that reads one would read the last run's value: an error
// (what uses a decided size depends on its step through the step's vector of sizes).
void note_refreshes(ExecutionPlan::Impl& impl) {
  std::unordered_map<std::string, size_t> set_at;  // a decided size -> the op of the step that sets it
  for (size_t i = 0; i < impl.ops.size(); ++i)
    if (const auto* f = std::get_if<PreparedCustom>(&impl.ops[i]))
      for (const RuntimeVar& v : f->sets) set_at.emplace(v.name, i);
  for (size_t j = 0; j < impl.ops.size(); ++j)
    if (const auto* k = std::get_if<PreparedKernel>(&impl.ops[j]))
      for (const RuntimeVar& v : k->runtime_vars)
        if (auto s = set_at.find(v.name); s != set_at.end() && s->second > j)
          throw Error("kernel " + k->kernel->entry_point + " reads the size " + v.name + " before the host step '" +
                      std::get<PreparedCustom>(impl.ops[s->second]).name +
                      "' that decides it: compute with the size from the vector Tensor::host_step returns, so what reads it depends on the step");
  for (size_t i = 0; i < impl.ops.size(); ++i) {
    const auto* f = std::get_if<PreparedCustom>(&impl.ops[i]);
    if (!f || f->sets.empty()) continue;
    std::vector<size_t>& after = impl.refresh_after[i];
    for (size_t j = i + 1; j < impl.ops.size(); ++j) {
      const auto* k = std::get_if<PreparedKernel>(&impl.ops[j]);
      if (!k) continue;
      bool reads = std::any_of(k->runtime_vars.begin(), k->runtime_vars.end(), [&](const RuntimeVar& v) {
        return std::any_of(f->sets.begin(), f->sets.end(), [&](const RuntimeVar& s) { return s.name == v.name; });
      });
      if (reads) after.push_back(j);
    }
  }
}

}  // namespace

ExecutionPlan PlanBuilder::build(const Schedule& sched, const DeviceSpec& device, const PrepareOptions& options) {
  ExecutionPlan plan;
  ExecutionPlan::Impl& impl = *plan.impl_;
  impl.device = device;
  if (DeviceMemory& memory = device_memory(device); !memory.host_visible()) impl.wait_on = &memory;

  std::set<size_t> inputs_or_outputs;
  // buffer index -> the kernels that wrote it: the last one, or for a joined buffer its parts'
  std::unordered_map<size_t, std::vector<uint64_t>> writers;
  // A buffer a kernel writes in place -> the buffer whose memory it is (a join, a padded copy).
  std::unordered_map<size_t, size_t> written_in_place;
  std::unordered_map<const UOp*, size_t> index_of;
  // Each stored node's buffer, made when first needed: its own, or a view of its base's memory
  // where the schedule placed it there (schedule/buffer_assignment).
  std::function<size_t(const UOpPtr&)> buffer_index = [&](const UOpPtr& node) -> size_t {
    if (auto it = index_of.find(node.get()); it != index_of.end()) return it->second;
    const Placement* p = sched.placement(*node);
    size_t base = p ? buffer_index(p->base) : 0;
    size_t i = impl.buffers.size();
    if (p) {
      const Buffer& b = impl.buffers[base];
      size_t offset_bytes = static_cast<size_t>(p->offset) * b.dtype().itemsize();
      impl.buffers.push_back(Buffer::view(b, offset_bytes, static_cast<size_t>(p->elements), b.dtype()));
      PreparedBufferView op{node->id(), base, i, offset_bytes, {}};
      if (p->kind != Placement::Kind::view) {
        written_in_place[i] = base;
      } else if (auto w = writers.find(base); w != writers.end()) {
        op.dependencies = w->second;
        writers[i] = w->second;  // who reads the view waits for whoever wrote its memory
      }
      impl.ops.emplace_back(op);
      impl.launch.push_back(LaunchSize{1, 1, 1});
    } else {
      bool input = node->op() == Ops::BUFFER;
      impl.buffers.push_back(input ? buffer_of(*node)
                                   : Buffer(node->dtype(), static_cast<size_t>(shape_numel(sched.shapes.at(node.get()))), device));
      if (input && impl.buffers.back().device() != device)  // its kernels would be given another device's address
        throw Error("a plan on " + device.to_string() + " reads a buffer on " + impl.buffers.back().device().to_string() + " (" +
                    std::to_string(impl.buffers.back().size()) + " x " + impl.buffers.back().dtype().name() + "): move it with Tensor::to");
      if (input) inputs_or_outputs.insert(i);
    }
    impl.buffer_ast_ids.push_back(node->id());
    impl.ast_to_buffer[node->id()] = i;
    index_of[node.get()] = i;
    return i;
  };

  // Every kernel first, all at once: compiling is most of a cold prepare.
  std::vector<KernelRequest> requests;
  for (const ScheduleItem& item : sched.items)
    if (item.ast) requests.push_back({item.ast, std::nullopt});
  ProgressLine progress(std::chrono::seconds(1));
  std::vector<std::shared_ptr<CachedKernel>> kernels = compile_kernels(requests, device, options, [&](size_t done) {
    progress.show("compiled kernel " + std::to_string(done) + "/" + std::to_string(requests.size()));
  });
  progress.done();
  // Each host step's outputs the schedule stores, by step: one op runs the step for all of them.
  std::unordered_map<uint64_t, std::vector<UOpPtr>> step_outputs;
  for (const ScheduleItem& item : sched.items)
    if (item.host_step) step_outputs[host_step_of(*item.bufs[0]).key].push_back(item.bufs[0]);
  size_t next_kernel = 0;
  const int host_threads = kernel_options(options).target.threads;  // a host step's pieces split as the kernels are
  for (const ScheduleItem& item : sched.items) {
    if (item.is_view()) {
      buffer_index(item.bufs[0]);
      continue;
    }
    if (item.host_step) {
      HostStepNode node = host_step_of(*item.bufs[0]);
      auto outs = step_outputs.find(node.key);
      if (outs == step_outputs.end()) continue;  // the step's op is made already
      PreparedCustom op = prepare_host_step(node, outs->second, buffer_index, impl, sched.var_vals, host_threads);
      step_outputs.erase(outs);
      for (size_t pos = op.num_outputs; pos < op.buffer_indices.size(); ++pos)
        if (auto w = writers.find(op.buffer_indices[pos]); w != writers.end())
          op.dependencies.insert(op.dependencies.end(), w->second.begin(), w->second.end());
      for (size_t pos = 0; pos < op.num_outputs; ++pos) writers[op.buffer_indices[pos]] = {op.id};
      impl.ops.emplace_back(std::move(op));
      impl.launch.push_back(LaunchSize{1, 1, 1});
      continue;
    }
    PreparedKernel pk;
    pk.id = item.bufs[0]->id();
    pk.ast = item.ast;
    pk.labels = item.labels;
    pk.kernel = kernels[next_kernel++];
    pk.device = device;
    for (size_t slot : pk.kernel->globals) {
      const UOpPtr& node = item.bufs.at(slot);
      size_t bi = buffer_index(node);
      pk.buffer_indices.push_back(bi);
      pk.buffer_ids.push_back(impl.buffers[bi].id());
    }
    for (size_t pos = 0; pos < pk.kernel->globals.size(); ++pos) {
      size_t slot = pk.kernel->globals[pos];
      bool written = std::find(pk.kernel->outs.begin(), pk.kernel->outs.end(), slot) != pk.kernel->outs.end();
      if (written) pk.output_indices.push_back(pos);
      if (auto w = writers.find(pk.buffer_indices[pos]); w != writers.end() && !written)
        pk.dependencies.insert(pk.dependencies.end(), w->second.begin(), w->second.end());
    }
    for (size_t pos : pk.output_indices) {
      writers[pk.buffer_indices[pos]] = {pk.id};
      for (auto b = written_in_place.find(pk.buffer_indices[pos]); b != written_in_place.end(); b = written_in_place.find(b->second))
        writers[b->second].push_back(pk.id);
    }
    add_variables(item.ast, pk.runtime_vars);
    for (const RuntimeVar& v : pk.runtime_vars) {
      auto bound = sched.var_vals.find(v.name);  // the value given with Variable::bind, else min
      impl.var_values.emplace(v.name, bound != sched.var_vals.end() ? bound->second : v.min);
    }
    pk.vals.assign(pk.kernel->var_names.size(), 0);
    pk.buffer_ptrs.assign(pk.buffer_indices.size(), 0);
    impl.ops.emplace_back(std::move(pk));
    impl.launch.push_back(LaunchSize{1, 1, 1});
  }
  for (size_t k = 0; k < sched.outputs.size(); ++k) {
    size_t i = buffer_index(sched.outputs[k]);
    impl.outputs.push_back(i);
    inputs_or_outputs.insert(i);
  }
  // A node of the caller's graph that the schedule rebuilt (its layout rules) answers to the
  // buffer of the node in its place: an output's, or an intermediate's.
  for (const auto& [from, to] : sched.becomes.map())
    if (auto it = impl.ast_to_buffer.find(to->id()); it != impl.ast_to_buffer.end()) impl.ast_to_buffer.emplace(from->id(), it->second);
  // A buffer that an output (or input) views is kept with it, never released as an intermediate;
  // latest first, so a view of a view reaches the memory under both.
  for (auto op = impl.ops.rbegin(); op != impl.ops.rend(); ++op)
    if (const auto* v = std::get_if<PreparedBufferView>(&*op); v && inputs_or_outputs.count(v->view)) inputs_or_outputs.insert(v->base);
  fold_constants(impl, inputs_or_outputs, written_in_place);
  note_refreshes(impl);
  for (size_t i = 0; i < impl.buffers.size(); ++i)
    if (!inputs_or_outputs.count(i) && !impl.buffers[i].is_view()) impl.intermediates.push_back(i);
  plan_memory(impl, arena_enabled(options), poison_enabled(options));
  impl.refresh_values();
  if (settings::debug_level() >= 2) {
    std::fprintf(stderr, "lathe: schedule of %zu kernels (%zu on constants, run at prepare), %zu views, %zu buffers\n",
                 plan.prepared_kernels().size(), impl.folded.size(), impl.ops.size() - plan.prepared_kernels().size(), impl.buffers.size());
    for (const PreparedKernel* k : plan.prepared_kernels())
      std::fprintf(stderr, "  %-40s %zu buffers, %lld ops, %lld index ops, %lld bytes touched, %lld bytes loaded and stored; [%s]\n",
                   k->kernel->entry_point.c_str(), k->buffer_indices.size(), static_cast<long long>(k->work.ops),
                   static_cast<long long>(k->work.index_ops), static_cast<long long>(k->work.mem), static_cast<long long>(k->work.lds),
                   k->kernel->opts.c_str());
  }
  impl.refresh_pointers();
  impl.run_ops(impl.folded, nullptr);  // what depends only on constants, once
  // BEAM times the kernels execute() runs, on their real inputs (the folded ones computed).
  if (int width = beam_width(options); width > 0 && kernel_options(options).optimize) {
    size_t n = 0, searched = 0;
    for (size_t i : impl.executed) n += std::holds_alternative<PreparedKernel>(impl.ops[i]);
    for (size_t i : impl.executed)
      if (auto* k = std::get_if<PreparedKernel>(&impl.ops[i]))
        k->kernel = beam_search(*k, device, options, width, "kernel " + std::to_string(++searched) + "/" + std::to_string(n));
    impl.refresh_values();
  }
  return plan;
}

}  // namespace lathe
