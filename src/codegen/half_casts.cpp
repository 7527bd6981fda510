#include "codegen/half_casts.hpp"

#include "codegen/half_arithmetic.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"

namespace lathe {
namespace {

UOpPtr u32(int64_t v) { return UOp::const_(dtypes::uint32, static_cast<uint64_t>(v)); }
UOpPtr as(const UOpPtr& x, DType to) { return UOp::make(Ops::BITCAST, to, {x}); }
UOpPtr convert(const UOpPtr& x, DType to) { return x->dtype() == to ? x : UOp::make(Ops::CAST, to, {x}); }
UOpPtr binary(Ops op, const UOpPtr& a, const UOpPtr& b) { return UOp::alu(op, {a, b}); }

// The one conversion renderers spell: exact, both ways.
bool native(DType from, DType to) {
  return (from == dtypes::float16 && to == dtypes::float32) || (from == dtypes::float32 && to == dtypes::float16);
}

// bfloat16's bits as the top half of a float32.
UOpPtr bf16_to_f32(const UOpPtr& x) {
  UOpPtr bits = convert(as(x, dtypes::uint16), dtypes::uint32);
  return as(binary(Ops::SHL, bits, u32(16)), dtypes::float32);
}

// float32 to bfloat16, rounding the dropped 16 bits to nearest even; a NaN keeps its top bits,
// made quiet.
UOpPtr f32_to_bf16(const UOpPtr& x) {
  UOpPtr u = as(x, dtypes::uint32), high = binary(Ops::SHR, u, u32(16));
  UOpPtr nan = binary(Ops::CMPLT, u32(0x7f800000), binary(Ops::AND, u, u32(0x7fffffff)));
  UOpPtr quiet = binary(Ops::OR, high, u32(0x40));
  UOpPtr rounded = binary(Ops::SHR, u + (binary(Ops::AND, high, u32(1)) + u32(0x7fff)), u32(16));
  return as(convert(where(nan, quiet, rounded), dtypes::uint16), dtypes::bfloat16);
}

// float64 to float32 rounded to odd: an inexact result is the float32 below |d| with its lowest
// bit set, so rounding it again to fewer bits rounds as `d` itself would. A NaN passes as it is.
UOpPtr round_to_odd_f32(const UOpPtr& d) {
  UOpPtr f = convert(d, dtypes::float32), back = convert(f, dtypes::float64);
  UOpPtr inexact = logical_or(binary(Ops::CMPLT, back, d), binary(Ops::CMPLT, d, back));
  UOpPtr zero = UOp::const_(dtypes::float64, 0.0);
  UOpPtr above = where(binary(Ops::CMPLT, zero, d), binary(Ops::CMPLT, d, back), binary(Ops::CMPLT, back, d));  // |back| > |d|
  UOpPtr bits = as(f, dtypes::uint32);
  UOpPtr odd = binary(Ops::OR, where(above, bits - u32(1), bits), u32(1));
  return as(where(inexact, odd, bits), dtypes::float32);
}

// A scalar cast from `x`'s type to `to`, one of them a 16-bit float.
UOpPtr lowered(const UOpPtr& x, DType to) {
  DType from = x->dtype();
  if (from == to) return x;
  if (native(from, to)) return convert(x, to);
  if (is_16bit_float(from)) {
    UOpPtr wide = from == dtypes::float16 ? convert(x, dtypes::float32) : bf16_to_f32(x);
    return is_16bit_float(to) ? lowered(wide, to) : convert(wide, to);
  }
  UOpPtr f = from == dtypes::float32 ? x : round_to_odd_f32(convert(x, dtypes::float64));
  return to == dtypes::float16 ? convert(f, to) : f32_to_bf16(f);
}

UOpPtr lower_cast(const Match& m) {
  const UOpPtr& u = m.root();
  DType from = u->src(0)->dtype(), to = u->dtype();
  if (!is_16bit_float(from) && !is_16bit_float(to)) return nullptr;
  if (native(from.scalar(), to.scalar())) return nullptr;
  if (to.count() == 1) return lowered(u->src(0), to);
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < to.count(); ++i)
    lanes.push_back(lowered(UOp::make(Ops::GEP, from.scalar(), {u->src(0)}, int64_t{i}), to.scalar()));
  return UOp::make(Ops::VECTORIZE, to, std::move(lanes));
}

}  // namespace

UOpPtr lower_16bit_casts(const UOpPtr& ast) {
  static const PatternMatcher pm({{UPat(Ops::CAST), lower_cast}});
  return graph_rewrite(ast, pm);
}

}  // namespace lathe
