#include "device/cpu/cpu_program.hpp"

#include <cstring>
#include <mutex>

#include "device/thread_pool.hpp"
#include "device/trace.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

class CpuProgram : public Program {
 public:
  CpuProgram(CpuKernelFn fn, std::function<void()> release, size_t num_vals, bool threaded, bool one_launch_at_a_time)
      : fn_(fn), release_(std::move(release)), num_vals_(num_vals), threaded_(threaded), serial_(one_launch_at_a_time) {}
  ~CpuProgram() override {
    if (release_) release_();
  }

  void execute(void* const* buffers, const int64_t* vals, const LaunchSize& global,
               const std::optional<LaunchSize>&) const override {
    void** bufs = const_cast<void**>(buffers);
    const auto* v = reinterpret_cast<const long long*>(vals);
    std::unique_lock<std::mutex> alone(launch_mu_, std::defer_lock);
    if (serial_) alone.lock();  // the kernel's scratch serves one launch at a time
    if (!threaded_) return fn_(bufs, v);
    // Each core gets its own copy of the values with its id last (on the stack: no allocation).
    // While a trace is recorded, each core's share is a slice on its thread's lane.
    const char* traced = tracing() ? detail::current_kernel() : nullptr;
    auto run_core = [&](size_t core) {
      long long local[64];
      std::memcpy(local, v, (num_vals_ - 1) * sizeof(long long));
      local[num_vals_ - 1] = static_cast<long long>(core);
      int64_t start = traced ? detail::trace_now() : 0;
      fn_(bufs, local);
      if (traced) detail::trace_core(traced, start, detail::trace_now());
    };
    if (global[0] <= 1) return run_core(0);
    detail::parallel_for(global[0], run_core);
  }

 private:
  CpuKernelFn fn_;
  std::function<void()> release_;
  size_t num_vals_;
  bool threaded_;
  bool serial_;
  mutable std::mutex launch_mu_;
};

}  // namespace

std::unique_ptr<Program> make_cpu_program(CpuKernelFn fn, std::function<void()> release, size_t num_vals, bool threaded,
                                          bool one_launch_at_a_time) {
  if (threaded && (num_vals == 0 || num_vals > 64)) {
    if (release) release();
    throw InternalError("a threaded CPU kernel with " + std::to_string(num_vals) + " values (1 to 64 are supported)");
  }
  return std::make_unique<CpuProgram>(fn, std::move(release), num_vals, threaded, one_launch_at_a_time);
}

}  // namespace lathe
