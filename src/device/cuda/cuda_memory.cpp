#include "device/cuda/cuda_memory.hpp"

#include <deque>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "device/cuda/cuda_driver.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

using Ptr = CudaDriver::Ptr;

Ptr address(const void* p) { return static_cast<Ptr>(reinterpret_cast<uintptr_t>(p)); }

// An instantiated CUDA Graph: the launches captured from the device's stream.
class CudaGraph final : public Recording {
 public:
  CudaGraph(const CudaDevice& device, void* exec) : device_(device), api_(cuda_driver()), exec_(exec) {}
  ~CudaGraph() override {
    try {
      device_.use();
    } catch (const Error&) {
      return;  // the context is gone (process exit): so is the graph
    }
    (void)api_.graph_exec_destroy(exec_);
  }
  void replay() const override {
    device_.use();
    api_.check(api_.graph_launch(exec_, device_.stream), "cuGraphLaunch on CUDA:" + std::to_string(device_.index));
  }

 private:
  const CudaDevice& device_;
  const CudaDriver& api_;
  void* exec_;
};

class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(const CudaDevice& device) : device_(device), api_(cuda_driver()) {}

  void* alloc(size_t nbytes) override {
    size_t size = block_size(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = pool_.find(size); it != pool_.end()) {
        Ptr p = it->second;
        pool_.erase(it);
        return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
      }
    }
    device_.use();
    Ptr p = 0;
    int rc = api_.mem_alloc(&p, size);
    if (rc != 0) {  // out of memory, perhaps only because of the pool: give it back and try once more
      drain();
      rc = api_.mem_alloc(&p, size);
    }
    api_.check(rc, "cuMemAlloc of " + std::to_string(nbytes) + " bytes on CUDA:" + std::to_string(device_.index));
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }

  void free(void* ptr, size_t nbytes) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    pool_.emplace(block_size(nbytes), address(ptr));
  }

  void copyin(void* dst, const void* src, size_t nbytes) override {
    if (!nbytes) return;
    device_.use();
    api_.check(api_.memcpy_htod(address(dst), src, nbytes), "copying " + std::to_string(nbytes) + " bytes to CUDA:" + std::to_string(device_.index));
  }
  void copyout(void* dst, const void* src, size_t nbytes) override {
    if (!nbytes) return;
    device_.use();
    api_.check(api_.memcpy_dtoh(dst, address(src), nbytes), "copying " + std::to_string(nbytes) + " bytes from CUDA:" + std::to_string(device_.index));
  }
  void copy(void* dst, const void* src, size_t nbytes) override {
    if (!nbytes) return;
    device_.use();
    api_.check(api_.memcpy_dtod(address(dst), address(src), nbytes), "copying " + std::to_string(nbytes) + " bytes within CUDA:" + std::to_string(device_.index));
  }
  void fill(void* dst, uint8_t byte, size_t nbytes) override {
    if (!nbytes) return;
    device_.use();
    api_.check(api_.memset_d8(address(dst), byte, nbytes), "filling " + std::to_string(nbytes) + " bytes on CUDA:" + std::to_string(device_.index));
  }
  void synchronize() override {
    device_.use();
    api_.check(api_.ctx_synchronize(), "waiting for CUDA:" + std::to_string(device_.index));
  }
  // The launches are captured from a stream of the recording's own, made non-blocking so its
  // capture leaves the default stream usable: other threads' plans go on launching into the
  // device's stream and copying through the default one. The graph is replayed on the device's
  // stream, in order with them.
  std::unique_ptr<Recording> record(const std::function<void()>& launches) override {
    if (!api_.graphs() || !device_.stream) return nullptr;
    device_.use();
    constexpr unsigned kNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
    constexpr int kThreadLocal = 1;       // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: only this thread's unsafe calls are refused
    void* stream = nullptr;
    if (api_.stream_create(&stream, kNonBlocking) != 0) return nullptr;
    void* graph = nullptr;
    if (api_.stream_begin_capture(stream, kThreadLocal) == 0) {
      cuda_capture_stream() = stream;
      bool launched = true;
      try {
        launches();
      } catch (const Error&) {
        launched = false;  // nothing ran: the plan launches each kernel, and says what failed then
      }
      cuda_capture_stream() = nullptr;
      if (api_.stream_end_capture(stream, &graph) != 0 || !launched) {
        if (graph) (void)api_.graph_destroy(graph);
        graph = nullptr;
      }
    }
    (void)api_.stream_destroy(stream);
    if (!graph) return nullptr;
    void* exec = nullptr;
    int rc = api_.graph_instantiate(&exec, graph, 0);
    (void)api_.graph_destroy(graph);  // the instantiated graph keeps what it needs
    if (rc != 0 || !exec) return nullptr;
    return std::make_unique<CudaGraph>(device_, exec);
  }

 private:
  // Whole 256-byte blocks (cuMemAlloc's alignment), at least one: blocks of one size are interchangeable.
  static size_t block_size(size_t nbytes) { return (nbytes + 255) / 256 * 256 + (nbytes == 0 ? 256 : 0); }

  void drain() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, p] : pool_) (void)api_.mem_free(p);
    pool_.clear();
  }

  const CudaDevice& device_;
  const CudaDriver& api_;
  std::mutex mu_;
  std::unordered_multimap<size_t, Ptr> pool_;
};

}  // namespace

DeviceMemory& cuda_memory(int index) {
  static std::mutex mu;
  static auto* memories = new std::deque<std::pair<int, CudaMemory>>;  // never freed: buffers may outlive static destruction
  std::lock_guard<std::mutex> lock(mu);
  for (auto& [i, m] : *memories)
    if (i == index) return m;
  const CudaDevice& device = cuda_device(index);  // throws naming why CUDA:index cannot be used
  memories->emplace_back(std::piecewise_construct, std::forward_as_tuple(index), std::forward_as_tuple(device));
  return memories->back().second;
}

}  // namespace lathe
