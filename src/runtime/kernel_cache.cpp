#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "lathe/kernel.hpp"

namespace lathe {
namespace {

struct KeyHash {
  size_t operator()(const KernelKey& k) const {
    return std::hash<uint64_t>()(k.ast_hash) ^ (std::hash<std::string>()(k.device) * 31) ^
           (std::hash<std::string>()(k.compiler) * 131);
  }
};

// An entry is either being compiled (kernel null, compiling true) or done.
struct Entry {
  std::shared_ptr<CachedKernel> kernel;
  bool compiling = false;
};

struct Cache {
  std::mutex mu;
  std::condition_variable cv;
  std::unordered_map<KernelKey, Entry, KeyHash> entries;
  KernelCacheStats stats;
};

Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

std::shared_ptr<CachedKernel> get_or_compile_kernel(const KernelKey& key, const std::string&,
                                                    const std::function<std::shared_ptr<CachedKernel>()>& compile_fn) {
  Cache& c = cache();
  std::unique_lock<std::mutex> lock(c.mu);
  while (true) {
    auto it = c.entries.find(key);
    if (it == c.entries.end()) break;
    if (it->second.kernel) {
      ++c.stats.hits;
      return it->second.kernel;
    }
    c.cv.wait(lock);  // another thread is compiling this key; it either fills or erases the entry
  }
  c.entries[key].compiling = true;
  lock.unlock();
  std::shared_ptr<CachedKernel> k;
  try {
    k = compile_fn();
  } catch (...) {
    lock.lock();
    c.entries.erase(key);
    c.cv.notify_all();
    throw;
  }
  lock.lock();
  c.entries[key] = Entry{k, false};
  ++c.stats.compiles;
  c.cv.notify_all();
  return k;
}

KernelCacheStats kernel_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  KernelCacheStats s = c.stats;
  s.entries = 0;
  for (auto& [k, e] : c.entries) s.entries += e.kernel != nullptr;
  return s;
}

void clear_kernel_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto it = c.entries.begin(); it != c.entries.end();) {
    if (it->second.kernel) it = c.entries.erase(it);
    else ++it;
  }
}

}  // namespace lathe
