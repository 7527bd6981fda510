#include "runtime/compile_kernel.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/program_cache.hpp"
#include "device/backend.hpp"
#include "device/thread_pool.hpp"
#include "ir/eval.hpp"
#include "runtime/plan_impl.hpp"
#include "runtime/planning_target.hpp"
#include "support/settings.hpp"

namespace lathe {

KernelOptions kernel_options(const PrepareOptions& o, const Target& device) {
  KernelOptions k;
  k.target = planning_target(device, o);
  k.optimize = o.optimize.value_or(!settings::flag("NOOPT"));
#ifdef NDEBUG
  k.verify = o.verify.value_or(settings::flag("LATHE_VERIFY"));
#else
  k.verify = o.verify.value_or(settings::flag("LATHE_VERIFY", true));  // a debug build verifies unless told not to
#endif
  return k;
}

std::shared_ptr<CachedKernel> compile_kernel(const UOpPtr& ast, const DeviceSpec& device, const PrepareOptions& options,
                                             const std::optional<std::vector<Opt>>& opts) {
  const Backend& backend = find_backend(device, options.compiler);
  const Compiler& compiler = backend.compile();
  KernelOptions ko = kernel_options(options, compiler.target());
  if (opts) ko.opts = opts;
  KernelKey key{ast->hash(), device.to_string(), backend.compiler + " | " + compiler.identity() + " | " + ko.key()};
  return get_or_compile_kernel(key, device.to_string(), [&] {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    Clock::time_point start = Clock::now();
    // A rendered program another process stored for this AST and these settings skips the
    // pipeline, unless the pipeline is to be checked (verify) or watched (DEBUG=3 and up).
    std::string settings = device.to_string() + " | " + key.compiler;
    bool stores = !ko.verify && settings::debug_level() < 3;
    std::optional<ProgramSpec> stored = stores ? read_program(ast, settings) : std::nullopt;
    ProgramSpec spec = stored ? std::move(*stored) : build_program(ast, backend.renderer(), ko);
    // The guard on compile time: code far larger than any usual kernel's (the optimizer's unrolls
    // and upcasts multiply it) is built again as scheduled, without them.
    if (ko.optimize && !ko.opts && !spec.opts.empty() &&
        spec.src.size() > static_cast<size_t>(settings::number("LATHE_MOST_KERNEL_BYTES", int64_t{4} << 20))) {
      if (settings::debug_level() >= 1)
        std::fprintf(stderr, "lathe: kernel %s has %zu bytes of code with its actions (%s): built without them\n", spec.name.c_str(), spec.src.size(),
                     spec.opts.c_str());
      KernelOptions plain = ko;
      plain.optimize = false;
      spec = build_program(ast, backend.renderer(), plain);
    }
    if (stores && !stored) write_program(ast, settings, spec);
    spec.device = device;
    if (settings::debug_level() >= 4) std::fprintf(stderr, "lathe: source of %s\n%s\n", spec.name.c_str(), spec.src.c_str());
    Clock::time_point rendered = Clock::now();
    CompiledSpec compiled = compiler.compile(spec);
    compiled.var_names = spec.var_names;
    compiled.global_size = spec.global_size;
    compiled.local_size = spec.local_size;
    compiled.buf_count = spec.buf_count;
    auto k = std::make_shared<CachedKernel>();
    k->program = backend.load(compiled, spec);
    k->codegen_ms = ms(start, rendered);
    k->compile_ms = ms(rendered, Clock::now());
    // Printed after the times are taken: making the text is a second compile.
    if (settings::debug_level() >= 6)
      if (std::string text = compiler.assembly(spec); !text.empty()) std::fprintf(stderr, "lathe: machine code of %s\n%s\n", spec.name.c_str(), text.c_str());
    k->device = device.to_string();
    k->code = spec.src;
    k->entry_point = spec.name;
    k->var_names = spec.var_names;
    k->globals = spec.globals;
    k->outs = spec.outs;
    k->ins = spec.ins;
    k->host_parallel_safe = !spec.shared_scratch;
    k->estimates = spec.estimates;
    k->opts = spec.opts;
    LaunchSize g = spec.global_size.value_or(LaunchSize{1, 1, 1});
    for (int d = 0; d < 3; ++d) k->global_size[d] = UOp::index_const(static_cast<int64_t>(g[d]));
    if (spec.local_size) {
      k->local_size.emplace();
      for (int d = 0; d < 3; ++d) (*k->local_size)[d] = UOp::index_const(static_cast<int64_t>((*spec.local_size)[d]));
    }
    return k;
  });
}

std::vector<std::shared_ptr<CachedKernel>> compile_kernels(const std::vector<KernelRequest>& requests, const DeviceSpec& device,
                                                           const PrepareOptions& options, const std::function<void(size_t)>& done,
                                                           std::vector<std::exception_ptr>* errors) {
  std::vector<std::shared_ptr<CachedKernel>> kernels(requests.size());
  std::vector<std::exception_ptr> failed(requests.size());
  std::mutex mu;
  size_t finished = 0;
  detail::parallel_for(requests.size(), [&](size_t i) {
    try {
      kernels[i] = compile_kernel(requests[i].ast, device, options, requests[i].opts);
    } catch (...) {
      failed[i] = std::current_exception();  // nothing may leave a pool task
    }
    std::lock_guard<std::mutex> lock(mu);
    ++finished;
    if (done) done(finished);
  });
  if (errors) {
    *errors = std::move(failed);
    return kernels;
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  return kernels;
}

BoundLaunch bind_launch(const CachedKernel& kernel, const PreparedKernel& bound) {
  std::unordered_map<std::string, int64_t> values = bound.fixedvars;
  for (size_t i = 0; i < bound.kernel->var_names.size(); ++i) values.emplace(bound.kernel->var_names[i], bound.vals[i]);
  BoundLaunch b;
  b.kernel = &kernel;
  for (const std::string& name : kernel.var_names) b.vals.push_back(is_launch_index(name) ? 0 : values.at(name));
  for (int d = 0; d < 3; ++d) b.global[d] = static_cast<size_t>(evaluate_int(kernel.global_size[d], values));
  for (uintptr_t p : bound.buffer_ptrs) b.buffers.push_back(reinterpret_cast<void*>(p));
  return b;
}

void launch_on(const CachedKernel& kernel, const PreparedKernel& bound) { bind_launch(kernel, bound)(); }

}  // namespace lathe
