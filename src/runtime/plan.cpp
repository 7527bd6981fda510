#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device/trace.hpp"
#include "ir/eval.hpp"
#include "runtime/plan_impl.hpp"
#include "support/settings.hpp"

namespace lathe {

void ExecutionPlan::Impl::refresh_pointers() {
  for (PreparedOp& op : ops) {
    auto* k = std::get_if<PreparedKernel>(&op);
    if (!k) continue;
    for (size_t i = 0; i < k->buffer_indices.size(); ++i)
      k->buffer_ptrs[i] = reinterpret_cast<uintptr_t>(buffers[k->buffer_indices[i]].device_ptr());
  }
  needs_pointers.store(false);
}

void ExecutionPlan::Impl::refresh_values() {
  for (size_t i = 0; i < ops.size(); ++i) refresh_kernel(i);
}

void ExecutionPlan::Impl::refresh_kernel(size_t i) {
  auto* k = std::get_if<PreparedKernel>(&ops[i]);
  if (!k) return;
  const std::vector<std::string>& names = k->kernel->var_names;
  for (size_t v = 0; v < names.size(); ++v) {
    if (is_launch_index(names[v])) continue;
    auto fixed = k->fixedvars.find(names[v]);
    k->vals[v] = fixed != k->fixedvars.end() ? fixed->second : var_values.at(names[v]);
  }
  // Sizes and counts that are constants need no variable values (and no map built for them).
  const auto& gs = k->kernel->global_size;
  const Estimates& est = k->kernel->estimates;
  // Read from the plan's values, or where the schedule fixed some, from a copy with those (a plan
  // with many variables, as a detector's host steps give it, copies nothing per kernel).
  VarValues merged;
  const VarValues* vv = &merged;
  auto is_static = [](const UOpPtr& e) { return !e || e->is_const(); };
  if (!is_static(gs[0]) || !is_static(gs[1]) || !is_static(gs[2]) || !is_static(est.ops) || !is_static(est.index_ops) ||
      !is_static(est.lds) || !is_static(est.mem)) {
    if (k->fixedvars.empty()) {
      vv = &var_values;
    } else {
      merged = var_values;
      for (auto& [name, value] : k->fixedvars) merged[name] = value;
    }
  }
  k->work = est.at(*vv);
  for (int d = 0; d < 3; ++d) launch[i][d] = static_cast<size_t>(evaluate_int(gs[d], *vv));
}

void ExecutionPlan::Impl::run(std::vector<KernelProfile>* profile) const {
  if (needs_pointers.load()) const_cast<Impl*>(this)->refresh_pointers();
  if (constants_stale.load(std::memory_order_relaxed) && constants_stale.exchange(false)) run_ops(folded, profile);
  replayed_last = !profile && replayed();
  if (!replayed_last) run_ops(executed, profile);
  if (wait_on) wait_on->synchronize();  // a GPU's launches return early: done means done
}

bool ExecutionPlan::Impl::replayed() const {
  if (!wait_on) return false;
  if (!recordable) {
    bool ok = settings::flag("LATHE_CUDA_GRAPH", true) && poison_after.empty();
    size_t kernels = 0;
    for (size_t i : executed) {
      const auto* k = std::get_if<PreparedKernel>(&ops[i]);
      if (!k) {
        ok = ok && std::holds_alternative<PreparedBufferView>(ops[i]);  // a copy or host step runs between launches
        continue;
      }
      ++kernels;
      ok = ok && k->device == device;  // a launch on another device would run at once, not be recorded
    }
    recordable = ok && kernels > 0;
  }
  if (!*recordable || settings::debug_level() >= 1 || tracing()) return false;
  std::vector<uintptr_t>& args = launched_args;
  args.clear();
  for (size_t i : executed)
    if (const auto* k = std::get_if<PreparedKernel>(&ops[i])) {  // a variable's value is the run's too (and so the grid it sizes)
      args.insert(args.end(), k->buffer_ptrs.begin(), k->buffer_ptrs.end());
      for (int64_t v : k->vals) args.push_back(static_cast<uintptr_t>(v));
    }
  auto seen = std::find_if(recordings.begin(), recordings.end(), [&](const Recorded& r) { return r.args == args; });
  if (seen == recordings.end()) {  // the first run with these: launched as they are, kept in the oldest entry's place
    if (recordings.size() < kKeptRecordings) recordings.emplace_back();
    Recorded& oldest = recordings.back();
    oldest.args.assign(args.begin(), args.end());  // into the vector it had: no allocation once its size is reached
    oldest.recording.reset();
    std::rotate(recordings.begin(), recordings.end() - 1, recordings.end());
    return false;
  }
  std::rotate(recordings.begin(), seen, seen + 1);
  Recorded& r = recordings.front();
  if (!r.recording) r.recording = wait_on->record([this] { run_ops(executed, nullptr); });
  if (!r.recording) {  // the device records nothing (or refused this plan): launched from now on
    recordable = false;
    recordings.clear();
    return false;
  }
  r.recording->replay();
  return true;
}

void ExecutionPlan::Impl::handed_out(size_t buffer) {
  if (feeds_folded.count(buffer)) constants_stale.store(true);
}

void ExecutionPlan::Impl::all_handed_out() {
  if (!folded.empty()) constants_stale.store(true);
}

namespace {

// A launch recorded in the trace, with what the kernel computes and its actions.
std::chrono::nanoseconds traced_launch(const PreparedKernel& k, const LaunchSize& launch) {
  const std::string& name = k.kernel->entry_point;
  detail::current_kernel() = name.c_str();
  int64_t start = detail::trace_now();
  auto took = k.kernel->program->execute_timed(reinterpret_cast<void* const*>(k.buffer_ptrs.data()), k.vals.data(), launch, std::nullopt);
  int64_t end = start + took.count();  // the device's time (a GPU's launch returns before the kernel ends)
  detail::current_kernel() = nullptr;
  detail::trace_kernel(name, start, end, {k.work.ops, k.work.mem, k.labels, k.kernel->opts});
  return took;
}

}  // namespace

void ExecutionPlan::Impl::run_ops(const std::vector<size_t>& which, std::vector<KernelProfile>* profile) const {
  bool debug = settings::debug_level() >= 1, timed = profile || debug;
  for (size_t i : which) {
    const PreparedOp& op = ops[i];
    if (const auto* k = std::get_if<PreparedKernel>(&op)) {
      std::chrono::nanoseconds elapsed{0};
      if (tracing()) {
        elapsed = traced_launch(*k, launch[i]);
      } else if (timed) {
        elapsed = k->kernel->program->execute_timed(reinterpret_cast<void* const*>(k->buffer_ptrs.data()), k->vals.data(), launch[i], std::nullopt);
      } else {
        k->kernel->program->execute(reinterpret_cast<void* const*>(k->buffer_ptrs.data()), k->vals.data(), launch[i], std::nullopt);
      }
      if (profile) profile->push_back({k->kernel, k->device.to_string(), k->buffer_indices.size(), elapsed, k->work, k});
      if (debug) {
        double ns = static_cast<double>(elapsed.count());
        std::fprintf(stderr, "lathe: %-40s %10.3f us %8.2f GFLOP/s %8.2f GB/s\n", k->kernel->entry_point.c_str(), ns / 1e3,
                     ns > 0 ? static_cast<double>(k->work.ops) / ns : 0.0, ns > 0 ? static_cast<double>(k->work.mem) / ns : 0.0);
      }
    } else if (const auto* c = std::get_if<PreparedCopy>(&op)) {
      buffers[c->dst].copy_from(buffers[c->src]);  // through the buffers' devices
    } else if (const auto* f = std::get_if<PreparedCustom>(&op)) {
      // A host step sets the sizes it decides; the kernels that read them take the new values.
      auto* self = const_cast<Impl*>(this);
      std::vector<Buffer> args;
      for (size_t b : f->buffer_indices) args.push_back(buffers[b]);
      auto t0 = debug ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      f->fn(args, self->var_values);
      if (auto r = refresh_after.find(i); r != refresh_after.end())
        for (size_t k : r->second) self->refresh_kernel(k);
      if (debug) {
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        std::string sizes;
        for (const RuntimeVar& v : f->sets) sizes += " " + v.name + "=" + std::to_string(self->var_values.at(v.name));
        std::fprintf(stderr, "lathe: host step %-30s %10.3f us%s\n", f->name.c_str(), us, sizes.c_str());
      }
    }
    // A PreparedBufferView shares its base's memory: nothing to run.
    if (!poison_after.empty())
      for (size_t b : poison_after[i]) buffers[b].fill_bytes(0xFF);
  }
}

ExecutionPlan::ExecutionPlan() : impl_(std::make_unique<Impl>()) {}
ExecutionPlan::~ExecutionPlan() = default;
ExecutionPlan::ExecutionPlan(ExecutionPlan&&) noexcept = default;
ExecutionPlan& ExecutionPlan::operator=(ExecutionPlan&&) noexcept = default;

const Buffer* ExecutionPlan::output_buffer() const { return output_buffer_at(0); }

const Buffer* ExecutionPlan::output_buffer_at(size_t position) const {
  if (position >= impl_->outputs.size()) return nullptr;
  return &impl_->buffers[impl_->outputs[position]];
}

std::vector<const Buffer*> ExecutionPlan::output_buffers() const {
  std::vector<const Buffer*> out;
  for (size_t i : impl_->outputs) out.push_back(&impl_->buffers[i]);
  return out;
}

size_t ExecutionPlan::num_outputs() const { return impl_->outputs.size(); }

const Buffer* ExecutionPlan::buffer(uint64_t ast_id) const {
  auto it = impl_->ast_to_buffer.find(ast_id);
  return it == impl_->ast_to_buffer.end() ? nullptr : &impl_->buffers[it->second];
}

Buffer* ExecutionPlan::buffer_mut_by_id(uint64_t ast_id) {
  auto it = impl_->ast_to_buffer.find(ast_id);
  if (it == impl_->ast_to_buffer.end()) return nullptr;
  impl_->handed_out(it->second);
  return &impl_->buffers[it->second];
}

const DeviceSpec& ExecutionPlan::device() const { return impl_->device; }
bool ExecutionPlan::replayed_last_run() const { return impl_->replayed_last; }
const std::vector<Buffer>& ExecutionPlan::buffers() const { return impl_->buffers; }
std::vector<Buffer>& ExecutionPlan::buffers_mut() {
  impl_->all_handed_out();
  return impl_->buffers;
}

Buffer* ExecutionPlan::buffer_at_mut(size_t index) {
  if (index >= impl_->buffers.size()) return nullptr;
  impl_->handed_out(index);
  return &impl_->buffers[index];
}

std::vector<const PreparedKernel*> ExecutionPlan::prepared_kernels() const {
  std::vector<const PreparedKernel*> out;
  for (const PreparedOp& op : impl_->ops)
    if (const auto* k = std::get_if<PreparedKernel>(&op)) out.push_back(k);
  return out;
}

const std::vector<PreparedOp>& ExecutionPlan::prepared_ops() const { return impl_->ops; }

std::vector<std::reference_wrapper<const CachedKernel>> ExecutionPlan::kernels() const {
  std::vector<std::reference_wrapper<const CachedKernel>> out;
  for (const PreparedKernel* k : prepared_kernels()) out.emplace_back(*k->kernel);
  return out;
}

void ExecutionPlan::execute() const { impl_->run(nullptr); }

WorkCount ExecutionPlan::estimated_work() const {
  WorkCount total;
  for (size_t i : impl_->executed)  // what execute() runs
    if (const auto* k = std::get_if<PreparedKernel>(&impl_->ops[i])) total += k->work;
  return total;
}

const MemoryStats& ExecutionPlan::memory_stats() const { return impl_->memory; }

const std::unordered_map<std::string, int64_t>& ExecutionPlan::variable_values() const { return impl_->var_values; }

std::vector<KernelProfile> ExecutionPlan::execute_profiled() const {
  std::vector<KernelProfile> profile;
  impl_->run(&profile);
  return profile;
}

namespace {

// Checks every value before applying any, so a bad one leaves the plan as it was.
void bind_vars(ExecutionPlan::Impl& impl, const std::vector<std::pair<std::string, int64_t>>& var_vals) {
  for (const auto& [name, value] : var_vals) {
    const RuntimeVar* var = nullptr;
    for (const PreparedOp& op : impl.ops) {
      if (const auto* k = std::get_if<PreparedKernel>(&op))
        for (const RuntimeVar& v : k->runtime_vars)
          if (v.name == name) var = &v;
      if (const auto* f = std::get_if<PreparedCustom>(&op)) {
        for (const RuntimeVar& v : f->sets)
          if (v.name == name)
            throw Error("execute_with_vars: variable '" + name + "' is a size the host step '" + f->name + "' decides as the plan runs; it cannot be bound");
        for (const RuntimeVar& v : f->runtime_vars)
          if (v.name == name) var = &v;
      }
    }
    if (!var) throw Error("execute_with_vars: this plan has no variable named '" + name + "'");
    Variable(var->name, var->min, var->max).check(value);
  }
  for (const auto& [name, value] : var_vals) impl.var_values[name] = value;
  impl.refresh_values();
}

}  // namespace

void ExecutionPlan::execute_with_vars(const std::vector<std::pair<std::string, int64_t>>& var_vals) {
  bind_vars(*impl_, var_vals);
  execute();
}

std::vector<KernelProfile> ExecutionPlan::execute_with_vars_profiled(
    const std::vector<std::pair<std::string, int64_t>>& var_vals) {
  bind_vars(*impl_, var_vals);
  return execute_profiled();
}

size_t ExecutionPlan::output_buffer_idx() const { return impl_->outputs.empty() ? 0 : impl_->outputs[0]; }

const std::unordered_map<uint64_t, size_t>& ExecutionPlan::ast_to_buffer_map() const { return impl_->ast_to_buffer; }

void ExecutionPlan::Impl::build_swap_table() {
  SwapTable& t = swaps.emplace();
  t.movable.assign(buffers.size(), true);
  t.written.assign(buffers.size(), false);
  t.uses.assign(buffers.size(), {});
  for (size_t i : intermediates) t.movable[i] = false;  // the arena's
  for (size_t i : feeds_folded) t.movable[i] = false;   // what was folded at prepare reads or wrote it
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!buffers[i].valid() || buffers[i].is_view() || buffers[i].is_constant()) t.movable[i] = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const auto* v = std::get_if<PreparedBufferView>(&ops[i])) t.movable[v->base] = t.movable[v->view] = false;
    if (const auto* k = std::get_if<PreparedKernel>(&ops[i]))
      for (size_t arg = 0; arg < k->buffer_indices.size(); ++arg) t.uses[k->buffer_indices[arg]].emplace_back(i, arg);
  }
  for (size_t i : executed) {  // what each run writes: a kernel's outputs, a copy's target, a host step's outputs
    if (const auto* k = std::get_if<PreparedKernel>(&ops[i]))
      for (size_t o : k->output_indices) t.written[k->buffer_indices[o]] = true;
    if (const auto* c = std::get_if<PreparedCopy>(&ops[i])) t.written[c->dst] = true;
    if (const auto* f = std::get_if<PreparedCustom>(&ops[i]))
      for (size_t o = 0; o < f->num_outputs; ++o) t.written[f->buffer_indices[o]] = true;
  }
}

bool ExecutionPlan::swap_buffers(size_t a, size_t b) {
  Impl& m = *impl_;
  if (a == b) return true;
  if (a >= m.buffers.size() || b >= m.buffers.size()) return false;
  if (!m.swaps) m.build_swap_table();  // once: what may move does not change as buffers swap
  const Impl::SwapTable& t = *m.swaps;
  const Buffer &x = m.buffers[a], &y = m.buffers[b];
  // Neither a constant, a view, a view's base or the arena's; of one dtype and size; and one of
  // them filled by each run (else nothing fills what moves).
  if (!t.movable[a] || !t.movable[b] || x.dtype() != y.dtype() || x.nbytes() != y.nbytes() || !(t.written[a] || t.written[b])) return false;
  std::swap(m.buffers[a], m.buffers[b]);
  for (size_t i : {a, b})  // the kernels that hold them: their addresses and ids now
    for (auto [op, arg] : t.uses[i]) {
      auto& k = std::get<PreparedKernel>(m.ops[op]);
      if (arg < k.buffer_ids.size()) k.buffer_ids[arg] = m.buffers[i].id();
      if (!m.needs_pointers.load()) k.buffer_ptrs[arg] = reinterpret_cast<uintptr_t>(m.buffers[i].device_ptr());
    }
  return true;
}

void ExecutionPlan::release_intermediate_buffers(const std::function<void(uint64_t)>& remove_fn) const {
  for (size_t i : impl_->intermediates) {
    if (remove_fn) remove_fn(impl_->buffer_ast_ids[i]);
    impl_->buffers[i].release();
  }
  impl_->needs_pointers.store(true);
}

void ExecutionPlan::release_all_buffers(const std::function<void(uint64_t)>& remove_fn) const {
  for (size_t i = 0; i < impl_->buffers.size(); ++i) {
    if (remove_fn) remove_fn(impl_->buffer_ast_ids[i]);
    impl_->buffers[i].release();
  }
  impl_->needs_pointers.store(true);
  impl_->all_handed_out();  // the folded results were released too
}

}  // namespace lathe
