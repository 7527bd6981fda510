#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "device/allocator.hpp"
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
  mutable void* ptr = nullptr;  // owned memory (non-views)
  std::atomic<bool> constant{false};
  mutable std::mutex mu;

  size_t nbytes() const { return size * static_cast<size_t>(dtype.itemsize()); }
  ~BufferState() {
    if (!base) host_free(ptr, nbytes());
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

DeviceSpec DeviceSpec::default_device() {
  std::optional<std::string> env = settings::text("LATHE_DEVICE");
  return env ? parse(*env) : DeviceSpec{};
}

Buffer::Buffer(DType dtype, size_t size, DeviceSpec device) : state_(std::make_shared<detail::BufferState>()) {
  if (dtype.is_ptr() || dtype == dtypes::void_ || dtype == dtypes::index)
    throw DTypeError("a buffer cannot hold " + dtype.name());
  state_->id = g_next_buffer_id.fetch_add(1);
  state_->dtype = dtype;
  state_->size = size;
  state_->device = std::move(device);
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

void Buffer::ensure_allocated() const { (void)data(); }

void* Buffer::data() const {
  detail::BufferState& owner = state_->base ? *state_->base : *state_;
  std::lock_guard<std::mutex> lock(owner.mu);
  if (!owner.ptr) owner.ptr = detail::host_alloc(owner.nbytes());
  return static_cast<char*>(owner.ptr) + state_->offset_bytes;
}

void Buffer::copyin(const void* src, size_t nbytes) {
  if (nbytes != this->nbytes())
    throw Error("copyin of " + std::to_string(nbytes) + " bytes into a buffer of " + std::to_string(this->nbytes()) +
                " bytes (" + std::to_string(size()) + " x " + dtype().name() + ")");
  if (nbytes) std::memcpy(data(), src, nbytes);
}

void Buffer::copyout(void* dst, size_t nbytes) const {
  if (nbytes != this->nbytes())
    throw Error("copyout of " + std::to_string(nbytes) + " bytes from a buffer of " + std::to_string(this->nbytes()) +
                " bytes");
  if (nbytes) std::memcpy(dst, data(), nbytes);
}

void Buffer::release() {
  detail::BufferState& owner = state_->base ? *state_->base : *state_;
  std::lock_guard<std::mutex> lock(owner.mu);
  detail::host_free(owner.ptr, owner.nbytes());
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
