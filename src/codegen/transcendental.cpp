#include "codegen/transcendental.hpp"

#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

UOpPtr f(double v) { return UOp::const_(dtypes::float32, v); }
UOpPtr i(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOpPtr u(int64_t v) { return UOp::const_(dtypes::uint32, v); }
UOpPtr op(Ops o, const UOpPtr& a, const UOpPtr& b) { return UOp::alu(o, {a, b}); }
UOpPtr bits_of(const UOpPtr& x) { return UOp::make(Ops::BITCAST, dtypes::uint32, {x}); }
UOpPtr float_of_bits(const UOpPtr& b) { return UOp::make(Ops::BITCAST, dtypes::float32, {b}); }
UOpPtr is_nan(const UOpPtr& x) { return ne(x, x); }

// Rounds to the nearest integer (halves away from zero), as a float.
UOpPtr round_half_away(const UOpPtr& x) { return UOp::alu(Ops::TRUNC, {x + where(lt(x, f(0)), f(-0.5), f(0.5))}); }

UOpPtr horner(const UOpPtr& x, std::initializer_list<double> coeffs) {
  UOpPtr p;
  for (double c : coeffs) p = p ? p * x + f(c) : f(c);
  return p;
}

// 2^e as a float for e in [-126, 127], from its exponent bits; 0 for e = -127.
UOpPtr pow2(const UOpPtr& e) { return float_of_bits(UOp::make(Ops::BITCAST, dtypes::uint32, {op(Ops::SHL, e + i(127), i(23))})); }

// 2p for a normal p below 2^127, exactly, by its exponent bits: p + p times a scale 2^127 would be
// reassociated by the C backend (-fassociative-math) into p times 2^127 + 2^127, which is inf.
UOpPtr twice(const UOpPtr& p) { return float_of_bits(bits_of(p) + u(1 << 23)); }

// 2^xc's parts for xc in [-150, 128]: n = round(xc) as an int32 and `times` p(xc - n), p a
// polynomial on [-0.5, 0.5], so that 2^xc = p * 2^n. times is 1 or 2: the polynomial of doubled
// coefficients is exactly twice p at every step (a doubling never rounds), with no operation to
// double it.
std::pair<UOpPtr, UOpPtr> exp2_parts(const UOpPtr& xc, double times) {
  // n = round(xc), halves up: xc + 150.5 is positive (xc >= -150), so converting it to an integer
  // truncates it down, to floor(xc + 0.5) + 150. (Not x + 1.5 * 2^23 - 1.5 * 2^23: the C
  // backend's -fassociative-math cancels the two.)
  UOpPtr ni = cast(xc + f(150.5), dtypes::int32) - i(150);
  UOpPtr p = horner(xc - cast(ni, dtypes::float32),
                    {times * 1.535336188319500e-4, times * 1.339887440266574e-3, times * 9.618437357674640e-3,
                     times * 5.550332471162809e-2, times * 2.402264791363012e-1, times * 6.931472028550421e-1, times});
  return {ni, p};
}

// exp2(x) = 2^n * p(x - n) with n = round(x). The scale is built from exponent bits, and exactly
// one multiply rounds: for n in [-125, 128], 2p * 2^(n - 1) (doubling p is exact, and 2^128 has
// no exponent bits); for n in [-150, -126], where the result may be subnormal, p * 2^(n + 126)
// (exact, normal) times 2^-126. The clamp at 128 takes 128 for NaN too (one min instruction), so
// no NaN reaches the conversion to an integer (LLVM's poison); NaN is selected back at the end.
// (Not the doubled polynomial: with p2 on both sides of the select, the C backend's fast math
// factors it out and multiplies the two scales first, 2^(n - 1), which is 0 at n = -149.)
UOpPtr exp2(const UOpPtr& x) {
  // Below -150, 2^x rounds to 0: those lanes compute 2^0 and take 0 at the end, so they do not
  // go through subnormal numbers, which take a slow path in x86 cores (a softmax row whose masked
  // or distant scores land here ran 3x slower). Results in (-150, -126) are subnormal and still
  // computed as such.
  UOpPtr underflows = lt(x, f(-150));
  UOpPtr xc = where(underflows, f(0), where(lt(x, f(128)), x, f(128)));
  auto [ni, p] = exp2_parts(xc, 1);
  UOpPtr low = lt(ni, i(-125));
  UOpPtr stepped = where(low, p * pow2(where(low, ni + i(126), i(0))), twice(p));
  UOpPtr e = where(low, i(-126), ni - i(1));
  return where(underflows, f(0), where(is_nan(x), x, stepped * pow2(e)));
}

// exp2(x) where 1 is added to it (a sigmoid's, SiLU's, softplus's 1 + e^x): 1 + 2^x rounds to 1
// for every x below -24, so the lanes skip exp2's underflow and subnormal steps: x is clamped to
// [-126, 128], and at n = -126 the scale 2^(n - 1) is 0 where exp2 would give less than 2^-125.5.
// The sum is the same float as 1 + exp2(x) (+-inf and NaN too). Each clamp compares the value it
// selects and takes its bound for NaN, so that it is one min or max instruction and no NaN reaches
// the conversion to an integer, and nothing tests for the rounding's top (n = 128). 2p comes from
// the doubled polynomial, one integer addition fewer than doubling p.
UOpPtr exp2_beside_one(const UOpPtr& x) {
  UOpPtr c = where(lt(x, f(128)), x, f(128));
  UOpPtr xc = where(lt(f(-126), c), c, f(-126));
  auto [ni, p2] = exp2_parts(xc, 2);
  return where(is_nan(x), x, p2 * pow2(ni - i(1)));
}

// log2(x) = e + log2(m) for x = m * 2^e with m in [sqrt(1/2), sqrt(2)), the latter from the series
// of atanh in t = (m - 1) / (m + 1). Subnormal x is scaled by 2^23 first.
UOpPtr log2(const UOpPtr& x) {
  UOpPtr sub = lt(x, f(1.17549435e-38));
  UOpPtr xs = where(sub, x * f(8388608.0), x);
  UOpPtr b = bits_of(xs);
  UOpPtr e = cast(op(Ops::AND, op(Ops::SHR, b, u(23)), u(255)), dtypes::int32) - i(127) - where(sub, i(23), i(0));
  UOpPtr m = float_of_bits(op(Ops::OR, op(Ops::AND, b, u(0x007fffff)), u(0x3f800000)));
  UOpPtr big = lt(f(1.41421356), m);
  m = where(big, m * f(0.5), m);
  e = where(big, e + i(1), e);
  UOpPtr t = UOp::alu(Ops::FDIV, {m - f(1), m + f(1)});
  UOpPtr t2 = t * t;
  UOpPtr p = t * horner(t2, {0.111111111, 0.142857143, 0.2, 0.333333333, 1.0});
  UOpPtr r = cast(e, dtypes::float32) + f(2.88539008) * p;
  r = where(eq(x, f(0)), f(-std::numeric_limits<double>::infinity()), r);
  r = where(lt(x, f(0)), f(std::numeric_limits<double>::quiet_NaN()), r);
  r = where(eq(x, f(std::numeric_limits<double>::infinity())), x, r);
  return where(is_nan(x), x, r);
}

// sin(x): k = round(x * 2/pi), r = x - k * pi/2 in three parts (Cody-Waite), then the sine or
// cosine polynomial by the quadrant k mod 4.
UOpPtr sin(const UOpPtr& x) {
  UOpPtr k = round_half_away(x * f(0.636619772));
  UOpPtr r = ((x - k * f(1.5703125)) - k * f(4.837512969970703125e-4)) - k * f(7.54978995489188216e-8);
  UOpPtr r2 = r * r;
  UOpPtr s = r + r * r2 * horner(r2, {-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1});
  UOpPtr c = f(1) - f(0.5) * r2 + r2 * r2 * horner(r2, {2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2});
  UOpPtr q = op(Ops::AND, cast(k, dtypes::int32), i(3));
  UOpPtr v = where(ne(op(Ops::AND, q, i(1)), i(0)), c, s);
  v = where(ne(op(Ops::AND, q, i(2)), i(0)), -v, v);
  UOpPtr not_finite = eq(op(Ops::AND, bits_of(x), u(0x7f800000)), u(0x7f800000));
  return where(not_finite, f(std::numeric_limits<double>::quiet_NaN()), v);
}

}  // namespace

UOpPtr decompose_transcendentals(const UOpPtr& ast) {
  // First the exponentials that 1 is added to and nothing else reads (one that others read too
  // keeps every step for them, and is computed once), then every transcendental left.
  std::unordered_map<const UOp*, int> readers;  // of each EXP2
  for (const UOpPtr& u : toposort(ast))
    for (const UOpPtr& s : u->src())
      if (s->op() == Ops::EXP2) ++readers[s.get()];
  static const PatternMatcher beside_one({
      {UPat(Ops::EXP2).dtypes({dtypes::float32}).named("e") + 1.0,
       [](const Match& m) -> UOpPtr {
         // (An EXP2 rebuilt over a rewritten source is not in the count: it keeps every step.)
         const auto& readers = m.ctx<const std::unordered_map<const UOp*, int>>();
         auto it = readers.find(m["e"].get());
         if (it == readers.end() || it->second != 1) return nullptr;
         return exp2_beside_one(m["e"]->src(0)) + f(1);
       }},
  });
  static const PatternMatcher pm({
      {UPat(Ops::EXP2).dtypes({dtypes::float32}).named("x"), [](const Match& m) { return exp2(m["x"]->src(0)); }},
      {UPat(Ops::LOG2).dtypes({dtypes::float32}).named("x"), [](const Match& m) { return log2(m["x"]->src(0)); }},
      {UPat(Ops::SIN).dtypes({dtypes::float32}).named("x"), [](const Match& m) { return sin(m["x"]->src(0)); }},
  });
  return graph_rewrite(readers.empty() ? ast : graph_rewrite(ast, beside_one, &readers), pm);
}

}  // namespace lathe
