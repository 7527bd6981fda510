#include "device/allocator.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <unordered_map>

#include "lathe/device.hpp"
#include "support/settings.hpp"

namespace lathe::detail {
namespace {

constexpr size_t kAlign = 64;

// Buffers this large are backed by 2 MiB pages where the kernel allows (transparent huge pages on
// request): touching fresh memory costs a fault per page, 512x fewer of them, and fewer TLB misses.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{4} << 20;


struct Pool {
  std::mutex mu;
  // Most recently freed at the front; the index finds a block of a size.
  std::list<std::pair<size_t, void*>> lru;
  std::unordered_multimap<size_t, std::list<std::pair<size_t, void*>>::iterator> by_size;
  size_t pooled = 0;
  size_t limit = 0;
  AllocatorStats stats;

  Pool() {
    limit = static_cast<size_t>(std::max<int64_t>(0, settings::number("LATHE_POOL_MB", 2048))) << 20;
  }
  void evict_to(size_t target) {
    while (pooled > target && !lru.empty()) {
      auto [size, ptr] = lru.back();
      auto range = by_size.equal_range(size);
      for (auto it = range.first; it != range.second; ++it) {
        if (it->second == std::prev(lru.end())) {
          by_size.erase(it);
          break;
        }
      }
      lru.pop_back();
      pooled -= size;
      std::free(ptr);
    }
  }
};

Pool& pool() {
  static Pool* p = new Pool;  // outlives static buffers released at exit
  return *p;
}

}  // namespace

size_t host_alloc_size(size_t nbytes) {
  size_t size = (nbytes + kAlign - 1) / kAlign * kAlign + (nbytes == 0 ? kAlign : 0);
  return size >= kHugeFrom ? (size + kHugePage - 1) / kHugePage * kHugePage : size;  // whole huge pages
}

void* host_alloc(size_t nbytes) {
  size_t size = host_alloc_size(nbytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (auto it = p.by_size.find(size); it != p.by_size.end()) {
      void* ptr = it->second->second;
      p.lru.erase(it->second);
      p.by_size.erase(it);
      p.pooled -= size;
      ++p.stats.reuses;
      return ptr;
    }
    ++p.stats.allocations;
  }
  bool huge = size >= kHugeFrom;
  void* ptr = std::aligned_alloc(huge ? kHugePage : kAlign, size);
  if (!ptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) ::madvise(ptr, size, MADV_HUGEPAGE);  // a hint: refused is fine
#endif
  return ptr;
}

void host_free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  size_t size = host_alloc_size(nbytes);
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  if (size > p.limit) {
    std::free(ptr);
    return;
  }
  p.lru.emplace_front(size, ptr);
  p.by_size.emplace(size, p.lru.begin());
  p.pooled += size;
  p.evict_to(p.limit);
}


}  // namespace lathe::detail

namespace lathe {
AllocatorStats allocator_stats() {
  auto& p = detail::pool();
  std::lock_guard<std::mutex> lock(p.mu);
  AllocatorStats s = p.stats;
  s.pooled_bytes = p.pooled;
  return s;
}
}  // namespace lathe
