#include "lathe/dtype.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "ir/half.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

struct ScalarInfo {
  const char* name;
  const char* c_name;
  int itemsize;
  int priority;
  TypeKind kind;
};

constexpr std::array<ScalarInfo, 15> kScalars = {{
#define LATHE_X(id, name, cname, size, prio, kind) {name, cname, size, prio, TypeKind::kind},
    LATHE_SCALAR_TYPES(LATHE_X)
#undef LATHE_X
}};

const ScalarInfo& info(ScalarType s) { return kScalars[static_cast<size_t>(s)]; }

// Direct parents in the promotion lattice; float64 is the top.
std::vector<ScalarType> lattice_parents(ScalarType s) {
  using S = ScalarType;
  switch (s) {
    case S::Bool: return {S::Int8, S::UInt8};
    case S::Int8: return {S::Int16};
    case S::Int16: return {S::Int32};
    case S::Int32: return {S::Int64};
    case S::Int64: return {S::Float16, S::BFloat16};
    case S::UInt8: return {S::Int16, S::UInt16};
    case S::UInt16: return {S::Int32, S::UInt32};
    case S::UInt32: return {S::Int64, S::UInt64};
    case S::UInt64: return {S::Float16, S::BFloat16};
    case S::Float16: return {S::Float32};
    case S::BFloat16: return {S::Float32};
    case S::Float32: return {S::Float64};
    default: return {};
  }
}

// Bit set of `s` and everything above it in the lattice.
uint32_t ancestors(ScalarType s) {
  uint32_t set = 1u << static_cast<int>(s);
  for (ScalarType p : lattice_parents(s)) set |= ancestors(p);
  return set;
}

int64_t wrap_signed(int64_t v, int bytes) {
  if (bytes == 8) return v;
  int shift = 64 - bytes * 8;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
}

uint64_t wrap_unsigned(uint64_t v, int bytes) {
  if (bytes == 8) return v;
  return v & ((uint64_t{1} << (bytes * 8)) - 1);
}

}  // namespace

TypeKind DType::kind() const { return info(scalar_).kind; }

bool DType::is_int() const {
  if (is_ptr_) return false;
  TypeKind k = kind();
  return k == TypeKind::Signed || k == TypeKind::Unsigned || k == TypeKind::Index;
}

int64_t DType::itemsize() const { return is_ptr_ ? 8 : int64_t{info(scalar_).itemsize} * count_; }

int DType::priority() const { return info(scalar_).priority; }

const char* DType::scalar_name() const { return info(scalar_).name; }

const char* DType::c_name() const { return info(scalar_).c_name; }

std::string DType::name() const {
  std::ostringstream os;
  os << info(scalar_).name;
  if (count_ != 1) os << ".vec(" << count_ << ")";
  if (!is_ptr_) return os.str();
  static constexpr const char* kSpaces[] = {"global", "local", "reg"};
  os << "*[" << kSpaces[static_cast<int>(addrspace_)];
  if (ptr_size_ >= 0) os << "," << ptr_size_;
  os << "]";
  return os.str();
}

DType DType::vec(int n) const {
  if (is_ptr_ || count_ != 1 || n < 1 || scalar_ == ScalarType::Void)
    throw DTypeError("cannot make a vector of " + std::to_string(n) + " from " + name());
  return DType(scalar_, n);
}

DType DType::ptr(AddrSpace space, int64_t size) const {
  if (is_ptr_) throw DTypeError("cannot make a pointer to pointer type " + name());
  DType p = *this;
  p.is_ptr_ = true;
  p.addrspace_ = space;
  p.ptr_size_ = size;
  return p;
}

ConstValue DType::min() const {
  switch (scalar_) {
    case ScalarType::Bool: return false;
    case ScalarType::Int8: return int64_t{-128};
    case ScalarType::Int16: return int64_t{-32768};
    case ScalarType::Int32: return int64_t{std::numeric_limits<int32_t>::min()};
    case ScalarType::Int64:
    case ScalarType::Index: return std::numeric_limits<int64_t>::min();
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64: return uint64_t{0};
    case ScalarType::Float16:
    case ScalarType::BFloat16:
    case ScalarType::Float32:
    case ScalarType::Float64: return -std::numeric_limits<double>::infinity();
    case ScalarType::Void: break;
  }
  throw DTypeError("void has no minimum");
}

ConstValue DType::max() const {
  switch (scalar_) {
    case ScalarType::Bool: return true;
    case ScalarType::Int8: return int64_t{127};
    case ScalarType::Int16: return int64_t{32767};
    case ScalarType::Int32: return int64_t{std::numeric_limits<int32_t>::max()};
    case ScalarType::Int64:
    case ScalarType::Index: return std::numeric_limits<int64_t>::max();
    case ScalarType::UInt8: return uint64_t{255};
    case ScalarType::UInt16: return uint64_t{65535};
    case ScalarType::UInt32: return uint64_t{std::numeric_limits<uint32_t>::max()};
    case ScalarType::UInt64: return std::numeric_limits<uint64_t>::max();
    case ScalarType::Float16:
    case ScalarType::BFloat16:
    case ScalarType::Float32:
    case ScalarType::Float64: return std::numeric_limits<double>::infinity();
    case ScalarType::Void: break;
  }
  throw DTypeError("void has no maximum");
}

std::ostream& operator<<(std::ostream& os, const DType& dt) { return os << dt.name(); }

namespace dtypes {

std::span<const DType> all() {
  static constexpr DType kAll[] = {bool_, int8,   uint8,   int16,    uint16,  int32,  uint32,
                                   int64, uint64, float16, bfloat16, float32, float64};
  return kAll;
}

DType from_name(const std::string& name) {
  for (size_t i = 0; i < kScalars.size(); ++i)
    if (name == kScalars[i].name) return DType(static_cast<ScalarType>(i));
  throw DTypeError("unknown dtype name '" + name + "'");
}

}  // namespace dtypes

DType least_upper_dtype(std::span<const DType> types) {
  if (types.empty()) throw DTypeError("least_upper_dtype needs at least one dtype");
  uint32_t common = ~0u;
  for (const DType& t : types) {
    if (t.is_ptr() || t.count() != 1 || t.priority() < 0)
      throw DTypeError("dtype " + t.name() + " takes no part in type promotion");
    common &= ancestors(t.scalar_type());
  }
  // The lattice always meets at float64, so `common` is never empty; take the lowest priority.
  int best = -1;
  for (size_t i = 0; i < kScalars.size(); ++i) {
    if (!(common & (1u << i))) continue;
    if (best < 0 || kScalars[i].priority < kScalars[best].priority) best = static_cast<int>(i);
  }
  return DType(static_cast<ScalarType>(best));
}

double const_as_double(ConstValue v) {
  return std::visit([](auto x) { return static_cast<double>(x); }, v);
}

int64_t const_as_int(ConstValue v) {
  return std::visit(
      [](auto x) -> int64_t {
        if constexpr (std::is_same_v<decltype(x), double>) {
          if (std::isnan(x)) return 0;
          if (x >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
          if (x <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
          return static_cast<int64_t>(x);
        } else {
          return static_cast<int64_t>(x);
        }
      },
      v);
}

ConstValue cast_const(ConstValue v, DType dt) {
  DType s = dt.scalar();
  int bytes = static_cast<int>(s.itemsize());
  switch (s.kind()) {
    case TypeKind::Bool: return std::visit([](auto x) { return x != 0; }, v);
    case TypeKind::Signed:
    case TypeKind::Index:
      if (auto* u = std::get_if<uint64_t>(&v)) return wrap_signed(static_cast<int64_t>(*u), bytes);
      return wrap_signed(const_as_int(v), bytes);
    case TypeKind::Unsigned:
      if (auto* d = std::get_if<double>(&v)) {
        // C leaves out-of-range float-to-unsigned conversion undefined; go through int64 so
        // negative values wrap the way integer casts do.
        if (*d >= 0 && *d < 18446744073709551616.0) return wrap_unsigned(static_cast<uint64_t>(*d), bytes);
        return wrap_unsigned(static_cast<uint64_t>(const_as_int(v)), bytes);
      }
      return wrap_unsigned(std::visit([](auto x) { return static_cast<uint64_t>(x); }, v), bytes);
    case TypeKind::Float: {
      double d = const_as_double(v);
      switch (s.scalar_type()) {
        case ScalarType::Float16:
          return static_cast<double>(detail::half_to_float(detail::float_to_half(detail::round_to_odd_float(d))));
        case ScalarType::BFloat16:
          return static_cast<double>(detail::bf16_to_float(detail::float_to_bf16(detail::round_to_odd_float(d))));
        case ScalarType::Float32: return static_cast<double>(static_cast<float>(d));
        default: return d;
      }
    }
    case TypeKind::Void: break;
  }
  throw DTypeError("cannot make a constant of type " + dt.name());
}

void write_const(ConstValue v, DType dt, void* dst) {
  DType s = dt.scalar();
  ConstValue c = cast_const(v, s);
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof(x)); };
  switch (s.scalar_type()) {
    case ScalarType::Bool: return put(static_cast<uint8_t>(std::get<bool>(c)));
    case ScalarType::Float16: return put(detail::float_to_half(static_cast<float>(std::get<double>(c))));
    case ScalarType::BFloat16: return put(detail::float_to_bf16(static_cast<float>(std::get<double>(c))));
    case ScalarType::Float32: return put(static_cast<float>(std::get<double>(c)));
    case ScalarType::Float64: return put(std::get<double>(c));
    default: break;
  }
  uint64_t bits = std::visit([](auto x) { return static_cast<uint64_t>(x); }, c);  // two's complement
  std::memcpy(dst, &bits, static_cast<size_t>(s.itemsize()));  // little-endian: the low bytes
}

ConstValue read_const(const void* src, DType dt) {
  DType s = dt.scalar();
  auto get = [&](auto x) {
    std::memcpy(&x, src, sizeof(x));
    return x;
  };
  switch (s.scalar_type()) {
    case ScalarType::Bool: return get(uint8_t{}) != 0;
    case ScalarType::Float16: return static_cast<double>(detail::half_to_float(get(uint16_t{})));
    case ScalarType::BFloat16: return static_cast<double>(detail::bf16_to_float(get(uint16_t{})));
    case ScalarType::Float32: return static_cast<double>(get(float{}));
    case ScalarType::Float64: return get(double{});
    case ScalarType::Int8: return static_cast<int64_t>(get(int8_t{}));
    case ScalarType::Int16: return static_cast<int64_t>(get(int16_t{}));
    case ScalarType::Int32: return static_cast<int64_t>(get(int32_t{}));
    case ScalarType::Int64:
    case ScalarType::Index: return get(int64_t{});
    case ScalarType::UInt8: return static_cast<uint64_t>(get(uint8_t{}));
    case ScalarType::UInt16: return static_cast<uint64_t>(get(uint16_t{}));
    case ScalarType::UInt32: return static_cast<uint64_t>(get(uint32_t{}));
    case ScalarType::UInt64: return get(uint64_t{});
    default: break;
  }
  throw DTypeError("cannot read a constant of type " + dt.name());
}

std::string const_to_string(ConstValue v) {
  return std::visit(
      [](auto x) -> std::string {
        using T = decltype(x);
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(x)) return "nan";
          if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
          std::ostringstream os;
          os.precision(17);
          os << x;
          std::string s = os.str();
          if (s.find_first_of(".e") == std::string::npos) s += ".0";
          return s;
        } else {
          return std::to_string(x);
        }
      },
      v);
}

}  // namespace lathe
