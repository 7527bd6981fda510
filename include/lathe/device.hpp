// Devices and buffers. A Buffer is a handle to device memory of `size` elements of one dtype:
// copies of the handle share the memory, which is allocated on first use (64-byte aligned, from the
// device's pool of freed allocations) and can be viewed without copying. The host reads and writes
// a buffer through copyin/copyout/to_vector on every device; data() is the host's address, only
// for a device the host can address (the CPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lathe/dtype.hpp"
#include "lathe/error.hpp"

namespace lathe {

/// Where a buffer lives and a kernel runs: "CPU", "CUDA:0", ...
struct DeviceSpec {
  std::string type = "CPU";
  int index = 0;

  /// Parses "CPU", "cpu", "CUDA", "CUDA:1", "EMU"; throws Error for anything else.
  static DeviceSpec parse(const std::string& s);
  /// The device named by LATHE_DEVICE, or CPU.
  static DeviceSpec default_device();
  std::string to_string() const { return index == 0 && type == "CPU" ? type : type + ":" + std::to_string(index); }
  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

using BufferId = uint64_t;

namespace detail {
struct BufferState;
}

class Buffer {
 public:
  Buffer() = default;
  /// A buffer of `size` elements on `device` (the default device, LATHE_DEVICE, when not given);
  /// its memory is allocated when first needed.
  Buffer(DType dtype, size_t size, std::optional<DeviceSpec> device = std::nullopt);
  /// A view of `size` elements of `dtype` starting `offset_bytes` into `base`, sharing its memory.
  static Buffer view(const Buffer& base, size_t offset_bytes, size_t size, DType dtype);
  /// A buffer over memory lathe does not own (a numpy array's, a DLPack tensor's): `memory` is its
  /// address on `device` (the CPU when not given), and `owner` keeps it alive; the buffer and every
  /// copy of its handle hold `owner` and drop it when the last goes. The memory must hold `size`
  /// elements aligned to the dtype's size and stay valid while `owner` lives. release() leaves
  /// such memory alone.
  static Buffer borrow(void* memory, DType dtype, size_t size, std::shared_ptr<void> owner, std::optional<DeviceSpec> device = std::nullopt);

  bool valid() const { return state_ != nullptr; }
  /// Stable for the buffer's lifetime and unique in the process.
  BufferId id() const;
  DType dtype() const;
  size_t size() const;
  size_t nbytes() const;
  const DeviceSpec& device() const;
  bool is_view() const;
  bool is_allocated() const;
  /// Marks the contents as fixed once written (a model's weights). A plan computes what depends
  /// only on constant buffers once, when it is prepared, and again only after the plan hands one
  /// of its buffers out for writing (buffer_mut_by_id, buffers_mut, buffer_at_mut).
  void set_constant(bool constant = true);
  bool is_constant() const;

  /// Allocates the memory if it is not yet allocated (for a view: its base's).
  void ensure_allocated() const;
  /// The memory's address on its device, what kernels are given; allocates it on first use.
  void* device_ptr() const;
  /// The memory's host address; allocates it on first use. Throws Error on a device the host
  /// cannot address (a GPU's memory): read and write those with copyin/copyout.
  void* data() const;
  /// Whether data() can be used: the device's memory is the host's.
  bool host_visible() const;

  /// Copies `nbytes` from host memory `src` in; throws Error unless `nbytes` equals this buffer's size.
  void copyin(const void* src, size_t nbytes) const;
  void copyout(void* dst, size_t nbytes) const;
  /// Copies `src`'s contents in, from any device (through the host between two devices); throws
  /// Error unless the sizes in bytes agree.
  void copy_from(const Buffer& src) const;
  /// Sets every byte to `byte`. (Both write the memory, not the handle, as data() hands it out.)
  void fill_bytes(uint8_t byte) const;
  /// Waits until what is queued on this buffer's device (a GPU's copies and kernels) is done; on
  /// the CPU there is nothing to wait for. copyout waits by itself; a device-to-device copy_from
  /// may return before its bytes have moved, ordered before every later use by lathe.
  void synchronize() const;
  /// The contents as a vector; throws DTypeError unless T matches the buffer's dtype.
  template <class T>
  std::vector<T> to_vector() const;
  /// Gives the memory back to the pool; the next use allocates again.
  void release();

  friend bool operator==(const Buffer& a, const Buffer& b) { return a.state_ == b.state_; }

 private:
  std::shared_ptr<detail::BufferState> state_;
};

/// The dtype whose elements are stored as C++ type T (float -> float32, ...).
template <class T>
DType dtype_of();

namespace detail {
void check_element_type(DType buffer_dtype, DType requested, const char* what);
}

template <class T>
std::vector<T> Buffer::to_vector() const {
  detail::check_element_type(dtype(), dtype_of<T>(), "to_vector");
  std::vector<T> out(size());
  if (!out.empty()) copyout(out.data(), out.size() * sizeof(T));
  return out;
}

/// Statistics of the host allocator's pool of freed memory (the CPU's and the emulator's buffers).
struct AllocatorStats {
  size_t allocations = 0;  // fresh allocations from the system
  size_t reuses = 0;       // allocations served from the pool
  size_t pooled_bytes = 0; // bytes held in the pool now
};
AllocatorStats allocator_stats();

}  // namespace lathe
