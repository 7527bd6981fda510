#include "device/device_memory.hpp"

#include <cstring>

#include "device/allocator.hpp"

namespace lathe {

void* HostMemory::alloc(size_t nbytes) { return detail::host_alloc(nbytes); }
void HostMemory::free(void* ptr, size_t nbytes) { detail::host_free(ptr, nbytes); }
void HostMemory::copy(void* dst, const void* src, size_t nbytes) {
  if (nbytes) std::memmove(dst, src, nbytes);
}
void HostMemory::fill(void* dst, uint8_t byte, size_t nbytes) {
  if (nbytes) std::memset(dst, byte, nbytes);
}

DeviceMemory& host_memory() {
  static HostMemory* m = new HostMemory(true);  // outlives buffers released during static destruction
  return *m;
}

}  // namespace lathe
