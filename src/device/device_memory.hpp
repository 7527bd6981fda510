// A device's memory, as its backend supplies it: allocation (pooled), copies between the host and
// the device and within the device, filling, and waiting for the device. Addresses are the
// device's own: only the device's kernels and this interface may dereference them, unless
// host_visible() says the host can too (the CPU). Buffers (lathe/device.hpp) go through it for
// every byte they hold, so nothing outside a backend assumes a host pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace lathe {

struct DeviceSpec;

/// Launches recorded once and replayed as one submission (a CUDA Graph): each replay runs the
/// same kernels over the same addresses and values as the recording.
class Recording {
 public:
  virtual ~Recording() = default;
  /// Queues the recorded launches again (they finish by the device's synchronize()).
  virtual void replay() const = 0;
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  /// `nbytes` of device memory (at least one byte's worth; 64-byte aligned or better). Throws
  /// Error naming the device when it has none to give.
  virtual void* alloc(size_t nbytes) = 0;
  /// Gives back what alloc(nbytes) returned (to the backend's pool); null is ignored.
  virtual void free(void* ptr, size_t nbytes) = 0;
  /// Host -> device, device -> host, device -> device; complete when they return.
  virtual void copyin(void* dst, const void* host_src, size_t nbytes) = 0;
  virtual void copyout(void* host_dst, const void* src, size_t nbytes) = 0;
  virtual void copy(void* dst, const void* src, size_t nbytes) = 0;
  /// Sets `nbytes` bytes at `dst` to `byte`.
  virtual void fill(void* dst, uint8_t byte, size_t nbytes) = 0;
  /// Waits for the device's queued work (kernels, copies) to finish.
  virtual void synchronize() {}
  /// The kernel launches `launches` makes on this device, recorded rather than run; null where
  /// the device cannot record or the recording failed, a launch's error included (then nothing
  /// ran: the caller launches each kernel, which reports the error).
  virtual std::unique_ptr<Recording> record(const std::function<void()>& /*launches*/) { return nullptr; }
  /// Whether the host may read and write the device's addresses directly (Buffer::data()).
  virtual bool host_visible() const { return false; }
};

/// The host's pooled allocator (device/allocator), with the host's own copies. `visible` says
/// whether Buffer::data may hand its addresses out: the GPU emulator's memory is this memory,
/// unaddressable, so a suite run on it fails wherever lathe would read a GPU's memory as the host's.
class HostMemory : public DeviceMemory {
 public:
  explicit HostMemory(bool visible) : visible_(visible) {}
  void* alloc(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  void copyin(void* dst, const void* src, size_t nbytes) override { copy(dst, src, nbytes); }
  void copyout(void* dst, const void* src, size_t nbytes) override { copy(dst, src, nbytes); }
  void copy(void* dst, const void* src, size_t nbytes) override;
  void fill(void* dst, uint8_t byte, size_t nbytes) override;
  bool host_visible() const override { return visible_; }

 private:
  bool visible_;
};

/// The host's memory (the CPU backends', lathe's pooled allocator), host-visible.
DeviceMemory& host_memory();

/// The memory of `device`, from the first of its backends that has one (whichever compiler is
/// asked for: memory is the device's); throws Error naming the device where there is none
/// (device/backend.cpp, which holds the backends).
DeviceMemory& device_memory(const DeviceSpec& device);

}  // namespace lathe
