// A fixed pool of worker threads for splitting CPU kernels across cores (LATHE_THREADS, default
// the number of hardware threads). The calling thread takes part in the work.
#pragma once

#include <cstddef>
#include <functional>

namespace lathe::detail {

/// Threads available to kernels, the caller included.
int kernel_threads();

/// Calls fn(i) for every i in [0, n) across the pool and returns when all are done. Runs inline
/// when n is 1 or the pool is busy with another caller's work.
void parallel_for(size_t n, const std::function<void(size_t)>& fn);

}  // namespace lathe::detail
