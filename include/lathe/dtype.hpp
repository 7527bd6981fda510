// Data types: scalars, vectors of scalars, pointers with an address space, and `index`, the
// type of symbolic integer arithmetic. Type promotion follows tinygrad's lattice.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <variant>

namespace lathe {

enum class TypeKind : uint8_t { Void, Bool, Signed, Unsigned, Float, Index };

// name, printed name, C spelling, item size in bytes, promotion priority, kind.
// Priorities order the lattice: the least upper bound of a set is the lowest-priority common parent.
#define LATHE_SCALAR_TYPES(X)                               \
  X(Void, "void", "void", 0, -1, Void)                      \
  X(Bool, "bool", "_Bool", 1, 0, Bool)                      \
  X(Int8, "int8", "signed char", 1, 1, Signed)              \
  X(UInt8, "uint8", "unsigned char", 1, 2, Unsigned)        \
  X(Int16, "int16", "short", 2, 3, Signed)                  \
  X(UInt16, "uint16", "unsigned short", 2, 4, Unsigned)     \
  X(Int32, "int32", "int", 4, 5, Signed)                    \
  X(UInt32, "uint32", "unsigned int", 4, 6, Unsigned)       \
  X(Int64, "int64", "long long", 8, 7, Signed)              \
  X(UInt64, "uint64", "unsigned long long", 8, 8, Unsigned) \
  X(Float16, "float16", "_Float16", 2, 9, Float)            \
  X(BFloat16, "bfloat16", "__bf16", 2, 10, Float)           \
  X(Float32, "float32", "float", 4, 11, Float)              \
  X(Float64, "float64", "double", 8, 12, Float)             \
  X(Index, "index", "long long", 8, -1, Index)

enum class ScalarType : uint8_t {
#define LATHE_X(name, ...) name,
  LATHE_SCALAR_TYPES(LATHE_X)
#undef LATHE_X
};

/// Where a pointer points: global device memory, workgroup-local memory, or registers.
enum class AddrSpace : uint8_t { Global, Local, Reg };

/// A constant's value. Signed integers and `index` hold int64_t, unsigned hold uint64_t,
/// floats hold double, bool holds bool.
using ConstValue = std::variant<bool, int64_t, uint64_t, double>;

/// A value type: a scalar, a vector of `count` scalars, or a pointer to such an element.
class DType {
 public:
  constexpr DType() = default;
  constexpr explicit DType(ScalarType s, int count = 1) : scalar_(s), count_(static_cast<int16_t>(count)) {}

  ScalarType scalar_type() const { return scalar_; }
  int count() const { return count_; }
  bool is_ptr() const { return is_ptr_; }
  AddrSpace addrspace() const { return addrspace_; }
  /// Number of elements behind a pointer, or -1 when unknown.
  int64_t ptr_size() const { return ptr_size_; }

  TypeKind kind() const;
  bool is_float() const { return !is_ptr_ && kind() == TypeKind::Float; }
  bool is_int() const;  // signed, unsigned or index
  bool is_unsigned() const { return !is_ptr_ && kind() == TypeKind::Unsigned; }
  bool is_bool() const { return !is_ptr_ && kind() == TypeKind::Bool; }
  bool is_index() const { return !is_ptr_ && kind() == TypeKind::Index; }

  /// Size in bytes of one value (8 for pointers).
  int64_t itemsize() const;
  /// "float32", "float32.vec(4)", "float32*[global]".
  std::string name() const;
  /// The scalar's name alone: "float32" for float32.vec(4).
  const char* scalar_name() const;
  /// How the C renderer spells the scalar type.
  const char* c_name() const;
  int priority() const;

  /// The scalar this type is made of (drops vector width and pointer-ness).
  DType scalar() const { return DType(scalar_); }
  /// The element a pointer points to (a scalar or vector).
  DType base() const { return DType(scalar_, count_); }
  DType vec(int n) const;
  DType ptr(AddrSpace space = AddrSpace::Global, int64_t size = -1) const;

  /// Smallest and largest representable value (finite extremes are ±inf for floats).
  ConstValue min() const;
  ConstValue max() const;

  friend bool operator==(const DType&, const DType&) = default;

 private:
  ScalarType scalar_ = ScalarType::Void;
  int16_t count_ = 1;
  bool is_ptr_ = false;
  AddrSpace addrspace_ = AddrSpace::Global;
  int64_t ptr_size_ = -1;
};

std::ostream& operator<<(std::ostream& os, const DType& dt);

namespace dtypes {
inline constexpr DType void_{ScalarType::Void};
inline constexpr DType bool_{ScalarType::Bool};
inline constexpr DType int8{ScalarType::Int8};
inline constexpr DType uint8{ScalarType::UInt8};
inline constexpr DType int16{ScalarType::Int16};
inline constexpr DType uint16{ScalarType::UInt16};
inline constexpr DType int32{ScalarType::Int32};
inline constexpr DType uint32{ScalarType::UInt32};
inline constexpr DType int64{ScalarType::Int64};
inline constexpr DType uint64{ScalarType::UInt64};
inline constexpr DType float16{ScalarType::Float16};
inline constexpr DType bfloat16{ScalarType::BFloat16};
inline constexpr DType float32{ScalarType::Float32};
inline constexpr DType float64{ScalarType::Float64};
inline constexpr DType index{ScalarType::Index};
inline constexpr DType default_float = float32;
inline constexpr DType default_int = int32;

/// Every scalar type a tensor can hold (all but void and index).
std::span<const DType> all();
/// Parses "float32", "int8", ...; throws DTypeError on an unknown name.
DType from_name(const std::string& name);
}  // namespace dtypes

/// Whether `d`'s lanes are float16 or bfloat16 (on a CPU stored, never computed on; on a GPU a
/// tensor core's inputs).
inline bool is_16bit_float(DType d) { return d.scalar() == dtypes::float16 || d.scalar() == dtypes::bfloat16; }

/// The least upper bound of `types` in the promotion lattice (tinygrad's rules): the smallest
/// type every one of them can be promoted to. Throws DTypeError for void, pointers or `index`
/// mixed with tensor types.
DType least_upper_dtype(std::span<const DType> types);
inline DType least_upper_dtype(std::initializer_list<DType> types) {
  return least_upper_dtype(std::span<const DType>(types.begin(), types.size()));
}

/// Converts `v` to the representation `dt` holds (int64 for signed, double for floats, ...),
/// wrapping integers to the type's width and rounding floats to its precision as C would.
ConstValue cast_const(ConstValue v, DType dt);
double const_as_double(ConstValue v);
int64_t const_as_int(ConstValue v);
std::string const_to_string(ConstValue v);
/// Writes `v`, cast to `dt` (cast_const), at `dst` as `dt`'s bytes: little-endian integers, IEEE
/// floats, float16 and bfloat16 as their 16 bits, bool as one byte.
void write_const(ConstValue v, DType dt, void* dst);
/// The element of `dt` at `src`: bool, int64 (signed), uint64 (unsigned) or double (floats).
ConstValue read_const(const void* src, DType dt);

}  // namespace lathe
