#include "ir/bounds.hpp"

#include <algorithm>
#include <limits>

namespace lathe::detail {
namespace {

using i128 = __int128;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool integer_valued(DType dt) { return !dt.is_ptr() && (dt.is_int() || dt.is_bool()); }

// Bounds computed in 128 bits; a range the dtype cannot hold may wrap, so it becomes unknown.
Bounds fit(i128 lo, i128 hi, DType dt) {
  Bounds full = dtype_bounds(dt);
  if (lo < full.min || hi > full.max) return full;
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Bounds corners(i128 a, i128 b, i128 c, i128 d, DType dt) {
  return fit(std::min({a, b, c, d}), std::max({a, b, c, d}), dt);
}

i128 trunc_div(i128 a, i128 b) { return a / b; }  // C semantics: rounds toward zero

Bounds of(const UOpPtr& u) { return {u->vmin(), u->vmax()}; }

Bounds const_bounds(const Arg& arg, DType dt) {
  if (auto* b = std::get_if<bool>(&arg)) return {*b, *b};
  if (auto* i = std::get_if<int64_t>(&arg)) return {*i, *i};
  if (auto* u = std::get_if<uint64_t>(&arg)) {
    int64_t v = *u > static_cast<uint64_t>(kMax) ? kMax : static_cast<int64_t>(*u);
    return *u > static_cast<uint64_t>(kMax) ? Bounds{v, kMax} : Bounds{v, v};
  }
  return dtype_bounds(dt);
}

Bounds bool_result(bool always_true, bool always_false) {
  if (always_true) return {1, 1};
  if (always_false) return {0, 0};
  return {0, 1};
}

int64_t next_pow2_minus1(int64_t v) {
  uint64_t x = static_cast<uint64_t>(v);
  x |= x >> 1, x |= x >> 2, x |= x >> 4, x |= x >> 8, x |= x >> 16, x |= x >> 32;
  return static_cast<int64_t>(x);
}

}  // namespace

Bounds dtype_bounds(DType dt) {
  if (!integer_valued(dt)) return {kMin, kMax};
  if (dt.is_bool()) return {0, 1};
  if (dt.is_unsigned() && dt.scalar_type() == ScalarType::UInt64) return {0, kMax};
  DType s = dt.scalar();
  return {const_as_int(s.min()), const_as_int(s.max())};
}

Bounds compute_bounds(Ops op, DType dt, const std::vector<UOpPtr>& src, const Arg& arg) {
  if (!integer_valued(dt)) return {kMin, kMax};
  switch (op) {
    case Ops::CONST: return const_bounds(arg, dt);
    case Ops::DEFINE_VAR:
      if (auto* v = std::get_if<VarArg>(&arg)) return {v->min, v->max};
      return dtype_bounds(dt);
    case Ops::BIND: return of(src[0]);
    case Ops::RANGE:
    case Ops::SPECIAL:
      // A loop that may run zero times must not look like the constant 0 (which it is when it runs
      // once): folded, whatever it indexes would leave the loop and run although the loop does not.
      if (src[0]->vmin() < 1 && src[0]->vmax() <= 1) return {0, 1};
      return {0, src[0]->vmax() - 1};
    default: break;
  }
  if (src.empty()) return dtype_bounds(dt);
  Bounds a = of(src[0]);
  bool int_srcs = std::all_of(src.begin(), src.end(), [](const UOpPtr& s) { return integer_valued(s->dtype()); });
  if (!int_srcs && op != Ops::WHERE && op != Ops::CAST) return dtype_bounds(dt);
  switch (op) {
    case Ops::NEG: return fit(-i128{a.max}, -i128{a.min}, dt);
    case Ops::CAST:
      if (dt.is_bool())
        return integer_valued(src[0]->dtype()) ? bool_result(a.min > 0 || a.max < 0, a.min == 0 && a.max == 0)
                                               : Bounds{0, 1};
      if (!integer_valued(src[0]->dtype())) return dtype_bounds(dt);
      return fit(a.min, a.max, dt);
    default: break;
  }
  if (src.size() < 2) return dtype_bounds(dt);
  Bounds b = of(src[1]);
  switch (op) {
    case Ops::ADD: return fit(i128{a.min} + b.min, i128{a.max} + b.max, dt);
    case Ops::SUB: return fit(i128{a.min} - b.max, i128{a.max} - b.min, dt);
    case Ops::MUL:
      return corners(i128{a.min} * b.min, i128{a.min} * b.max, i128{a.max} * b.min, i128{a.max} * b.max, dt);
    case Ops::IDIV:
      if (b.min <= 0 && b.max >= 0) return dtype_bounds(dt);
      return corners(trunc_div(a.min, b.min), trunc_div(a.min, b.max), trunc_div(a.max, b.min), trunc_div(a.max, b.max),
                     dt);
    case Ops::MOD: {
      if (b.min <= 0 && b.max >= 0) return dtype_bounds(dt);
      // |a % b| < |b|, and the result takes the sign of a (C semantics).
      i128 m_abs = std::max(b.min < 0 ? -i128{b.min} : i128{b.min}, b.max < 0 ? -i128{b.max} : i128{b.max}) - 1;
      i128 lo = a.min >= 0 ? 0 : std::max(i128{a.min}, -m_abs);
      i128 hi = a.max <= 0 ? 0 : std::min(i128{a.max}, m_abs);
      return fit(lo, hi, dt);
    }
    case Ops::MAX: return fit(std::max(a.min, b.min), std::max(a.max, b.max), dt);
    case Ops::CMPLT: return bool_result(a.max < b.min, a.min >= b.max);
    case Ops::CMPNE:
      return bool_result(a.max < b.min || b.max < a.min, a.min == a.max && b.min == b.max && a.min == b.min);
    case Ops::CMPEQ:
      return bool_result(a.min == a.max && b.min == b.max && a.min == b.min, a.max < b.min || b.max < a.min);
    case Ops::AND:
      if (dt.is_bool()) return {a.min & b.min, a.max & b.max};
      if (a.min >= 0 && b.min >= 0) return {0, std::min(a.max, b.max)};
      if (a.min >= 0) return {0, a.max};
      if (b.min >= 0) return {0, b.max};
      return dtype_bounds(dt);
    case Ops::OR:
      if (dt.is_bool()) return {a.min | b.min, a.max | b.max};
      if (a.min >= 0 && b.min >= 0) return fit(std::max(a.min, b.min), next_pow2_minus1(std::max(a.max, b.max)), dt);
      return dtype_bounds(dt);
    case Ops::XOR:
      if (dt.is_bool()) return a.min == a.max && b.min == b.max ? Bounds{a.min ^ b.min, a.min ^ b.min} : Bounds{0, 1};
      if (a.min >= 0 && b.min >= 0) return fit(0, next_pow2_minus1(std::max(a.max, b.max)), dt);
      return dtype_bounds(dt);
    case Ops::SHL:
      if (b.min == b.max && b.min >= 0 && b.min < 62) return fit(i128{a.min} << b.min, i128{a.max} << b.min, dt);
      return dtype_bounds(dt);
    case Ops::SHR:
      if (b.min == b.max && b.min >= 0 && b.min < 64) return fit(a.min >> b.min, a.max >> b.min, dt);
      return dtype_bounds(dt);
    case Ops::WHERE: {
      Bounds c = b;  // the true branch
      Bounds f = of(src[2]);
      if (a.min == 1) return c;
      if (a.max == 0) return f;
      return {std::min(c.min, f.min), std::max(c.max, f.max)};
    }
    default: return dtype_bounds(dt);
  }
}

}  // namespace lathe::detail
