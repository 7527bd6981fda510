// A fixed pool of worker threads for splitting CPU kernels across cores (LATHE_THREADS, default
// the number of hardware threads). The calling thread takes part in the work.
#pragma once

#include <cstddef>

namespace lathe::detail {

/// Threads available to kernels, the caller included.
int kernel_threads();

/// A non-owning reference to a callable taking an index: passing one allocates nothing, which
/// keeps ExecutionPlan::execute free of heap traffic (a std::function of a capturing lambda
/// would allocate on every kernel launch).
class IndexFn {
 public:
  template <class F>
  IndexFn(const F& f)  // NOLINT(google-explicit-constructor): passed as a lambda at every call
      : obj_(&f), call_([](const void* o, size_t i) { (*static_cast<const F*>(o))(i); }) {}
  void operator()(size_t i) const { call_(obj_, i); }

 private:
  const void* obj_;
  void (*call_)(const void*, size_t);
};

/// Calls fn(i) for every i in [0, n) across the pool and returns when all are done. Runs inline
/// when n is 1 or the pool is busy with another caller's work. `fn` must outlive the call.
void parallel_for(size_t n, IndexFn fn);

}  // namespace lathe::detail
