// Host memory for buffers: 64-byte aligned, and pooled. Touching fresh pages costs far more than
// a kernel's work on these machines, so freed blocks are kept by size and handed out again,
// least recently freed evicted first once the pool passes its limit (LATHE_POOL_MB, default 2048).
#pragma once

#include <cstddef>

namespace lathe::detail {

void* host_alloc(size_t nbytes);
void host_free(void* ptr, size_t nbytes);
/// The bytes host_alloc(nbytes) takes: whole 64-byte lines, at least one; from 4 MiB, whole 2 MiB pages.
size_t host_alloc_size(size_t nbytes);

}  // namespace lathe::detail
