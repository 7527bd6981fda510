#include <atomic>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <vector>

#include "device/device_memory.hpp"
#include "device/device_scope.hpp"
#include "lathe/device.hpp"
#include "support/settings.hpp"

namespace lathe {

namespace detail {

struct BufferState {
  BufferId id;
  DType dtype;
  size_t size;
  DeviceSpec device;
  std::shared_ptr<BufferState> base;  // set for views
  size_t offset_bytes = 0;
  mutable void* ptr = nullptr;  // owned memory (non-views), the device's address
  mutable DeviceMemory* memory = nullptr;  // the device's memory, found on first allocation
  std::shared_ptr<void> lender;  // set for borrowed memory: what keeps `ptr` alive (never freed here)
  std::atomic<bool> constant{false};
  mutable std::mutex mu;

  size_t nbytes() const { return size * static_cast<size_t>(dtype.itemsize()); }
  ~BufferState() {
    if (!base && ptr && !lender) memory->free(ptr, nbytes());
  }
};

void check_element_type(DType buffer_dtype, DType requested, const char* what) {
  if (buffer_dtype == requested) return;
  bool half_as_bits = (buffer_dtype == dtypes::float16 || buffer_dtype == dtypes::bfloat16) && requested == dtypes::uint16;
  if (half_as_bits) return;
  throw DTypeError(std::string(what) + ": the buffer holds " + buffer_dtype.name() + ", not " + requested.name());
}

}  // namespace detail

namespace {
std::atomic<BufferId> g_next_buffer_id{1};
}

DeviceSpec DeviceSpec::parse(const std::string& s) {
  std::string upper;
  for (char c : s) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  DeviceSpec d;
  size_t colon = upper.find(':');
  d.type = upper.substr(0, colon);
  if (colon != std::string::npos) {
    std::string idx = upper.substr(colon + 1);
    if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos)
      throw Error("bad device '" + s + "': the index after ':' must be a number");
    d.index = std::stoi(idx);
  }
  if (d.type != "CPU" && d.type != "CUDA" && d.type != "EMU") throw Error("unknown device '" + s + "' (known: CPU, CUDA, EMU)");
  return d;
}

namespace {
thread_local std::optional<DeviceSpec> t_scoped_device;  // DefaultDeviceScope's
}

DefaultDeviceScope::DefaultDeviceScope(DeviceSpec device) : outer_(std::move(t_scoped_device)) { t_scoped_device = std::move(device); }
DefaultDeviceScope::~DefaultDeviceScope() { t_scoped_device = std::move(outer_); }

DeviceSpec DeviceSpec::default_device() {
  if (t_scoped_device) return *t_scoped_device;
  std::optional<std::string> env = settings::text("LATHE_DEVICE");
  return env ? parse(*env) : DeviceSpec{};
}

Buffer::Buffer(DType dtype, size_t size, std::optional<DeviceSpec> device) : state_(std::make_shared<detail::BufferState>()) {
  if (dtype.is_ptr() || dtype == dtypes::void_ || dtype == dtypes::index)
    throw DTypeError("a buffer cannot hold " + dtype.name());
  if (size > std::numeric_limits<size_t>::max() / static_cast<size_t>(dtype.itemsize()))
    throw Error("a buffer of " + std::to_string(size) + " x " + dtype.name() + " has more bytes than an address can count");
  state_->id = g_next_buffer_id.fetch_add(1);
  state_->dtype = dtype;
  state_->size = size;
  state_->device = device ? std::move(*device) : DeviceSpec::default_device();
}

Buffer Buffer::view(const Buffer& base, size_t offset_bytes, size_t size, DType dtype) {
  if (!base.valid()) throw Error("Buffer::view of an empty buffer handle");
  if (offset_bytes + size * dtype.itemsize() > base.nbytes())
    throw Error("Buffer::view of " + std::to_string(size) + " x " + dtype.name() + " at byte " +
                std::to_string(offset_bytes) + " overruns a buffer of " + std::to_string(base.nbytes()) + " bytes");
  Buffer v(dtype, size, base.device());
  v.state_->base = base.state_->base ? base.state_->base : base.state_;
  v.state_->offset_bytes = offset_bytes + base.state_->offset_bytes;
  return v;
}

Buffer Buffer::borrow(void* memory, DType dtype, size_t size, std::shared_ptr<void> owner, std::optional<DeviceSpec> device) {
  alignas(64) static char no_elements[64];  // the address of an empty borrowed buffer
  if (!owner) throw Error("Buffer::borrow without an owner to keep its memory alive");
  if (memory == nullptr && size != 0) throw Error("Buffer::borrow of " + std::to_string(size) + " x " + dtype.name() + " at a null address");
  auto item = static_cast<uintptr_t>(dtype.itemsize());
  if (item > 1 && reinterpret_cast<uintptr_t>(memory) % item != 0)
    throw Error("Buffer::borrow of " + dtype.name() + " at an address not aligned to its " + std::to_string(item) + " bytes");
  Buffer b(dtype, size, device.value_or(DeviceSpec{}));  // host memory unless said otherwise, whatever LATHE_DEVICE says
  b.state_->ptr = memory ? memory : no_elements;
  b.state_->lender = std::move(owner);
  return b;
}

BufferId Buffer::id() const { return state_->id; }
DType Buffer::dtype() const { return state_->dtype; }
size_t Buffer::size() const { return state_->size; }
size_t Buffer::nbytes() const { return state_->nbytes(); }
const DeviceSpec& Buffer::device() const { return state_->device; }
bool Buffer::is_view() const { return state_->base != nullptr; }

void Buffer::set_constant(bool constant) { state_->constant.store(constant); }
bool Buffer::is_constant() const { return state_ && (state_->constant.load() || (state_->base && state_->base->constant.load())); }

bool Buffer::is_allocated() const {
  const detail::BufferState& owner = state_->base ? *state_->base : *state_;
  std::lock_guard<std::mutex> lock(owner.mu);
  return owner.ptr != nullptr;
}

void Buffer::ensure_allocated() const { (void)device_ptr(); }

void* Buffer::device_ptr() const {
  detail::BufferState& owner = state_->base ? *state_->base : *state_;
  std::lock_guard<std::mutex> lock(owner.mu);
  if (!owner.ptr) {
    if (!owner.memory) owner.memory = &device_memory(owner.device);
    owner.ptr = owner.memory->alloc(owner.nbytes());
  }
  return static_cast<char*>(owner.ptr) + state_->offset_bytes;
}

namespace {
DeviceMemory& memory_of(const detail::BufferState& s) {
  const detail::BufferState& owner = s.base ? *s.base : s;
  std::lock_guard<std::mutex> lock(owner.mu);
  if (!owner.memory) owner.memory = &device_memory(owner.device);
  return *owner.memory;
}
}  // namespace

bool Buffer::host_visible() const { return memory_of(*state_).host_visible(); }

void* Buffer::data() const {
  if (!host_visible())
    throw Error("a buffer of " + std::to_string(size()) + " x " + dtype().name() + " on " + device().to_string() +
                " has no host address: read and write it with copyin/copyout (or Tensor::to_vector)");
  return device_ptr();
}

void Buffer::copyin(const void* src, size_t nbytes) const {
  if (nbytes != this->nbytes())
    throw Error("copyin of " + std::to_string(nbytes) + " bytes into a buffer of " + std::to_string(this->nbytes()) +
                " bytes (" + std::to_string(size()) + " x " + dtype().name() + ")");
  if (nbytes) memory_of(*state_).copyin(device_ptr(), src, nbytes);
}

void Buffer::copyout(void* dst, size_t nbytes) const {
  if (nbytes != this->nbytes())
    throw Error("copyout of " + std::to_string(nbytes) + " bytes from a buffer of " + std::to_string(this->nbytes()) +
                " bytes");
  if (nbytes) memory_of(*state_).copyout(dst, device_ptr(), nbytes);
}

void Buffer::copy_from(const Buffer& src) const {
  if (!src.valid()) throw Error("copy_from an empty buffer handle");
  if (src.nbytes() != nbytes())
    throw Error("copy of a buffer of " + std::to_string(src.nbytes()) + " bytes into one of " + std::to_string(nbytes()) + " bytes");
  if (nbytes() == 0) return;
  if (src.device() == device()) {
    memory_of(*state_).copy(device_ptr(), src.device_ptr(), nbytes());
    return;
  }
  std::vector<uint8_t> staged(nbytes());  // between two devices: through the host
  src.copyout(staged.data(), staged.size());
  copyin(staged.data(), staged.size());
}

void Buffer::synchronize() const {
  if (valid()) memory_of(*state_).synchronize();
}

void Buffer::fill_bytes(uint8_t byte) const {
  if (nbytes()) memory_of(*state_).fill(device_ptr(), byte, nbytes());
}

void Buffer::release() {
  detail::BufferState& owner = state_->base ? *state_->base : *state_;
  std::lock_guard<std::mutex> lock(owner.mu);
  if (owner.lender) return;  // borrowed: not lathe's to give back
  if (owner.ptr) owner.memory->free(owner.ptr, owner.nbytes());
  owner.ptr = nullptr;
}

template <>
DType dtype_of<bool>() { return dtypes::bool_; }
template <>
DType dtype_of<int8_t>() { return dtypes::int8; }
template <>
DType dtype_of<uint8_t>() { return dtypes::uint8; }
template <>
DType dtype_of<int16_t>() { return dtypes::int16; }
template <>
DType dtype_of<uint16_t>() { return dtypes::uint16; }
template <>
DType dtype_of<int32_t>() { return dtypes::int32; }
template <>
DType dtype_of<uint32_t>() { return dtypes::uint32; }
template <>
DType dtype_of<int64_t>() { return dtypes::int64; }
template <>
DType dtype_of<uint64_t>() { return dtypes::uint64; }
template <>
DType dtype_of<float>() { return dtypes::float32; }
template <>
DType dtype_of<double>() { return dtypes::float64; }

}  // namespace lathe
