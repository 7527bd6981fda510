#include "device/device_memory.hpp"

#include <cstring>

#include "device/allocator.hpp"

namespace lathe {
namespace {

// The host's pooled allocator (device/allocator), with the host's own copies; `visible` says
// whether Buffer::data may hand its addresses out (the emulator's GPU memory is this, unaddressable).
class HostMemory final : public DeviceMemory {
 public:
  explicit HostMemory(bool visible) : visible_(visible) {}
  void* alloc(size_t nbytes) override { return detail::host_alloc(nbytes); }
  void free(void* ptr, size_t nbytes) override { detail::host_free(ptr, nbytes); }
  void copyin(void* dst, const void* src, size_t nbytes) override { copy(dst, src, nbytes); }
  void copyout(void* dst, const void* src, size_t nbytes) override { copy(dst, src, nbytes); }
  void copy(void* dst, const void* src, size_t nbytes) override {
    if (nbytes) std::memmove(dst, src, nbytes);
  }
  void fill(void* dst, uint8_t byte, size_t nbytes) override {
    if (nbytes) std::memset(dst, byte, nbytes);
  }
  bool host_visible() const override { return visible_; }

 private:
  bool visible_;
};

}  // namespace

DeviceMemory& host_memory() {
  static HostMemory* m = new HostMemory(true);  // outlives buffers released during static destruction
  return *m;
}

DeviceMemory& emulated_gpu_memory() {
  static HostMemory* m = new HostMemory(false);
  return *m;
}

}  // namespace lathe
