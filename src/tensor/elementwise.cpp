// Elementwise ops, built from the ALU ops the backends implement (EXP2, LOG2, SIN, SQRT, ...).
#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

// Transcendentals of integers and bools compute in the default float type, as in tinygrad.
Tensor as_float(const Tensor& t) { return t.dtype().is_float() ? t : t.cast(dtypes::default_float); }

// c[0] t^n + c[1] t^(n-1) + ... + c[n], by Horner's rule: n multiply-adds.
Tensor horner(const Tensor& t, const std::vector<double>& c) {
  auto k = c.begin();
  Tensor acc = *k++ * t;
  for (; k + 1 != c.end(); ++k) acc = (acc + *k) * t;
  return acc + *k;
}

// 2^n as a float32 for an int32 n in [-126, 127]: n + 127 in the exponent's bits.
Tensor pow2_bits(const Tensor& n) { return ((n + 127) * 8388608).bitcast(dtypes::float32); }

// round(z) for float32 z in [-150, 128] as an int32, halves up: z + 150.5 > 0, so the conversion's
// truncation rounds it.
Tensor round_half_up(const Tensor& z) { return (z + 150.5).cast(dtypes::int32) - 150; }

// 2^f - 1 = f Q(f) for f in [-0.5, 0.5], Q of degree 5 fitted to it within 1.1e-8 relative
// (scripts/fit-expm1.py). With n = round(z) and f = z - n, 2^z - 1 is 2^n (2^f - 1) + (2^n - 1),
// with no 1 to cancel near 0. The rounding of n and the scale from exponent bits are exp2's
// (codegen/transcendental.cpp), written again over tensors because 2^f - 1 is not an exp2.
Tensor exp2m1_reduced(const Tensor& f) {
  return f * horner(f, {0.0001540349706560569, 0.0013390730916507019, 0.009618237521848528, 0.05550357443273169,
                        0.2402264979495999, 0.6931471879243397});
}

// log(1 + t) = 2 atanh(s) with s = t / (2 + t), which cancels nothing (2 + t only rounds), as the
// series 2 s (1 + s^2/3 + s^4/5 + ...) for t in [-0.5, 1], where |s| <= 1/3: 8 terms leave 1.4e-9
// relative for float32, 18 leave 2e-19 for float64.
Tensor log1p_series(const Tensor& t) {
  Tensor s = t / (t + 2.0);
  std::vector<double> c;
  for (int k = t.dtype() == dtypes::float64 ? 17 : 7; k >= 0; --k) c.push_back(1.0 / (2 * k + 1));
  return (s * 2.0) * horner(s * s, c);
}

// x computed in float32 (float64 kept): 16-bit floats would round the series' coefficients.
Tensor in_float32(const Tensor& x) { return x.dtype() == dtypes::float64 ? x : x.cast(dtypes::float32); }

void require_int_or_bool(const Tensor& t, const char* op) {
  if (!t.dtype().is_int() && !t.dtype().is_bool())
    throw DTypeError(std::string(op) + ": needs an integer or bool tensor, not " + t.dtype().name());
}

void require_int(const Tensor& t, const char* op) {
  if (!t.dtype().is_int()) throw DTypeError(std::string(op) + ": needs an integer tensor, not " + t.dtype().name());
}

}  // namespace

Tensor Tensor::neg() const {
  if (dtype().is_bool()) return logical_not();
  return unary(Ops::NEG);
}

Tensor Tensor::abs() const {
  if (dtype().is_bool() || dtype().is_unsigned()) return *this;
  return (*this < 0).where(neg(), *this);
}

Tensor Tensor::exp() const { return (as_float(*this) * (1.0 / std::numbers::ln2)).exp2(); }
Tensor Tensor::exp2() const { return as_float(*this).unary(Ops::EXP2); }
Tensor Tensor::log() const { return as_float(*this).log2() * std::numbers::ln2; }
Tensor Tensor::log2() const { return as_float(*this).unary(Ops::LOG2); }
Tensor Tensor::sqrt() const { return as_float(*this).unary(Ops::SQRT); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::reciprocal() const { return as_float(*this).unary(Ops::RECIPROCAL); }
Tensor Tensor::sin() const { return as_float(*this).unary(Ops::SIN); }
Tensor Tensor::cos() const { return (std::numbers::pi / 2 - as_float(*this)).sin(); }
Tensor Tensor::tan() const { return sin() / cos(); }

Tensor Tensor::pow(const Tensor& exponent) const {
  if (dtype().is_float() || exponent.dtype().is_float()) return binary(Ops::POW, exponent, "pow");
  // Integer powers compute in float64 (exact for every result an int64 can hold up to 2^53).
  Tensor r = cast(dtypes::float64).binary(Ops::POW, exponent.cast(dtypes::float64), "pow");
  return r.round().cast(least_upper_dtype({dtype(), exponent.dtype()}));
}

Tensor Tensor::pow(double exponent) const {
  if (exponent == 2.0) return *this * *this;
  return pow(scalar_like(*this, exponent, exponent != std::floor(exponent) || dtype().is_float()));
}

Tensor Tensor::maximum(const Tensor& other) const { return binary(Ops::MAX, other, "maximum"); }

Tensor Tensor::minimum(const Tensor& other) const {
  detail::broadcast_shapes(symbolic_shape(), other.symbolic_shape(), "minimum");  // name this op, not the compare inside
  DType dt = least_upper_dtype({dtype(), other.dtype()});
  return (cast(dt) < other.cast(dt)).where(cast(dt), other.cast(dt));
}

Tensor Tensor::relu() const { return maximum(scalar_like(*this, 0, false)); }
Tensor Tensor::sigmoid() const { return 1.0 / (1.0 + (-as_float(*this)).exp()); }

// tanh(x) = m / (m + 2) with m = e^(2x) - 1, which has no cancellation near 0 (2 sigmoid(2x) - 1
// is 1 - 1 there: tanh(1e-7) came out 1.19e-7, tanh(1e-3) 7e-5 off); m = 2^n (2^f - 1) + (2^n - 1)
// for 2x log2(e) = n + f (exp2m1_reduced). Clamped to +-30 (tanh is +-1 in float32 from 9.011 on):
// m is then -1 or 2^30-odd, and the quotient rounds to -1 or 1. Below -8.49 already, 2^n - 1 rounds to -1 and
// so does the result, where float32's tanh is up to 1.4 ulp above it: not exactly odd there,
// within the bound. As many operations as the formula through the sigmoid. float64 keeps that
// formula (its exp is libm's).
Tensor Tensor::tanh() const {
  Tensor x = as_float(*this);
  if (x.dtype() == dtypes::float64) return 2.0 * (x * 2.0).sigmoid() - 1.0;
  Tensor x32 = x.cast(dtypes::float32), z = x32 * (2.0 / std::numbers::ln2);
  z = (z < 30.0).where(z, scalar_like(z, 30.0, true));  // NaN takes 30 here, and is selected back below
  z = (z > -30.0).where(z, scalar_like(z, -30.0, true));
  Tensor n = round_half_up(z);
  Tensor scale = pow2_bits(n);
  Tensor m = scale * exp2m1_reduced(z - n.cast(dtypes::float32)) + (scale - 1.0);
  return (x32 != x32).where(x32, m / (m + 2.0)).cast(x.dtype());
}

// e^x - 1 in float32 as 2 (2^(n-1) (2^f - 1) + (2^(n-1) - 1/2)), n = round(x log2(e)): the halved
// scale has exponent bits up to n = 128, and the doubling is exact (or overflows, as e^x does from
// 88.73). f = (x - n ln 2) log2(e), with n ln 2 in two parts (Cody and Waite: n times the first is
// exact), so that x log2(e)'s rounding, up to |x| 6e-8 relative, does not reach the result (the C
// backend's fast math may fold the two parts into one, and then it does: about |x| ulp). x is
// clamped to [-21, 88.8] (NaN takes 88.8 and is selected back): below -17.4 the result rounds to
// -1, above 88.73 it is inf. float64: the Taylor series x (1 + x/2 + x^2/6 + ...) to x^17 for
// |x| < 1/2, e^x - 1 beyond (which then cancels less than a bit).
Tensor Tensor::expm1() const {
  Tensor x = as_float(*this);
  if (x.dtype() == dtypes::float64) {
    std::vector<double> c;
    double factorial = 1;
    for (int k = 2; k <= 17; ++k) factorial *= k;
    for (int k = 17; k >= 1; --k) c.push_back(1.0 / factorial), factorial /= k;
    return (x.abs() < 0.5).where(x * horner(x, c), x.exp() - 1.0);
  }
  Tensor x32 = x.cast(dtypes::float32);
  Tensor xc = (x32 < 88.8).where(x32, scalar_like(x32, 88.8, true));
  xc = (xc > -21.0).where(xc, scalar_like(xc, -21.0, true));
  Tensor n = round_half_up(xc * (1.0 / std::numbers::ln2)), nf = n.cast(dtypes::float32);
  Tensor f = ((xc - nf * 0.693359375) - nf * -2.12194440e-4) * (1.0 / std::numbers::ln2);
  Tensor half_scale = pow2_bits(n - 1);
  Tensor m = (half_scale * exp2m1_reduced(f) + (half_scale - 0.5)) * 2.0;
  return (x32 != x32).where(x32, m).cast(x.dtype());
}

// log(1 + x): the series for x in [-0.5, 1] (log1p_series), log(1 + x) elsewhere: below -1/2, 1 + x
// is exact; above 1, the log is above ln 2, and 1 + x's rounding costs it less than an ulp.
Tensor Tensor::log1p() const {
  Tensor x = as_float(*this), t = in_float32(x);
  Tensor near = (t >= -0.5).logical_and(t <= 1.0);
  return near.where(log1p_series(t), (t + 1.0).log()).cast(x.dtype());
}

Tensor Tensor::gelu() const {
  Tensor x = as_float(*this);
  return 0.5 * x * (1.0 + (std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)).tanh());
}

Tensor Tensor::silu() const { return as_float(*this) * sigmoid(); }

// max(x, 0) + log1p(e^-|x|): e^x itself overflows float32 from 89 on, and log(1 + e^x) of a very
// negative x would be log(1) = 0, not e^x. e^-|x| is in (0, 1], where log1p is its series alone.
Tensor Tensor::softplus() const {
  Tensor x = as_float(*this), t = in_float32(x);
  return (t.relu() + log1p_series((-t.abs()).exp())).cast(x.dtype());
}

Tensor Tensor::softsign() const {
  Tensor x = as_float(*this);
  return x / (x.abs() + 1.0);
}

Tensor Tensor::mish() const { return as_float(*this) * softplus().tanh(); }

Tensor Tensor::elu(double alpha) const {
  Tensor x = as_float(*this);
  return (x < 0).where(x.expm1() * alpha, x);
}

Tensor Tensor::celu(double alpha) const {
  if (alpha == 0) throw Error("celu: alpha must not be 0 (it divides x)");
  Tensor x = as_float(*this);
  return x.relu() + (x / alpha).expm1().minimum(scalar_like(x, 0, false)) * alpha;
}

Tensor Tensor::selu(double alpha, double gamma) const {
  Tensor x = as_float(*this);
  return (x <= 0).where(x.expm1() * alpha, x) * gamma;
}

Tensor Tensor::leaky_relu(double slope) const {
  Tensor x = as_float(*this);
  return (x < 0).where(x * slope, x);
}

Tensor Tensor::hardsigmoid(double alpha, double beta) const { return (as_float(*this) * alpha + beta).clip(0, 1); }
Tensor Tensor::hardswish() const { return as_float(*this) * hardsigmoid(); }

// erf(x) = x P(x^2) / Q(x^2), P and Q of degree 5, on |x| <= 3.925 (x clamped there): a rational
// fit (scripts/fit-erf.py) whose largest absolute error is 1.7e-8, about 3.3e-7 evaluated in
// float32 (the exp-based formula it replaces: 1.5e-7 and 4.9e-7). Beyond the clamp float32's erf
// is +-1 (erf(3.925) is 1 - 2.8e-8, nearer 1 than the float below it), and that is set, not left
// to the fit: in float32 the fit rounds to 1 or to the float below it depending on whether the CPU
// fuses its multiply-adds. float64 keeps the fit's value there (within 1.7e-8; 1 would be 2.8e-8).
// Twelve multiply-adds and a division, no exp: a GELU after a matmul costs a fraction of what
// it did (ConvNeXt's Linear layers).
Tensor Tensor::erf() const {
  Tensor x = as_float(*this);
  Tensor xc = x.clip(-3.925, 3.925), t = xc * xc;
  Tensor p = horner(t, {2.030597677110318e-06, 0.000287470992948691, 0.0038762960716292845, 0.05308424768291111,
                        0.19297464041205814, 1.1283790203976878});
  Tensor q = horner(t, {3.8027493617991005e-05, 0.0011897028941956734, 0.015188332645022869, 0.11516796871516123,
                        0.5043509658113667, 1.0});
  Tensor fit = (xc * p / q).clip(-1.0, 1.0);
  if (x.dtype() != dtypes::float64)  // xc is +-3.925 exactly at the clamp: two compares and two selects
    fit = (xc >= 3.925).where(scalar_like(x, 1.0, false), (xc <= -3.925).where(scalar_like(x, -1.0, false), fit));
  return (x != x).where(x, fit);  // the clamp would take NaN to a bound
}

// Cephes' atanf: |x| reduced to [0, tan(pi/8)] by atan(x) = pi/2 - atan(1/x) above tan(3pi/8) and
// pi/4 + atan((x-1)/(x+1)) above tan(pi/8), then an odd polynomial of degree 9: within 1e-7 of
// the true value (in float64 too: it is a fit).
Tensor Tensor::atan() const {
  Tensor x = as_float(*this), ax = x.abs();
  Tensor big = ax > 2.414213562373095, mid = (ax > 0.4142135623730950).logical_and(big.logical_not());
  Tensor t = big.where(-1.0 / ax, mid.where((ax - 1.0) / (ax + 1.0), ax));
  Tensor base = big.where(scalar_like(x, std::numbers::pi / 2, false), mid.where(scalar_like(x, std::numbers::pi / 4, false), scalar_like(x, 0, false)));
  Tensor z = t * t;
  Tensor y = base + horner(z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1}) * z * t + t;
  return (x < 0).where(-y, y);
}

Tensor Tensor::asin() const {
  Tensor x = as_float(*this);
  return (x / (1.0 - x * x).sqrt()).atan();  // +-1: x / 0 is +-inf, whose atan is +-pi/2
}

Tensor Tensor::acos() const { return std::numbers::pi / 2 - asin(); }

// The hyperbolic functions and their inverses compute 16-bit floats in float32 (in_float32), where
// their intermediate values (e^x - 1, x^2) do not overflow before the result does.
namespace {
// From |x| = 88 on, sinh and cosh are e^|x| / 2, taken as e^(|x| - 88) (e^88 / 2): finite up to
// 89.4, where e^|x| overflows from 88.73 (|x| - 88 is exact). One expm1 serves both sides of their
// select: of |x| below 88, of |x| - 88 from there. (Not (h / 2) h for h = e^(|x| / 2): fast math
// reorders it to h h / 2, which overflows.)
constexpr double kLarge = 88;
Tensor expm1_of_reduced(const Tensor& ax, const Tensor& large) { return large.where(ax - kLarge, ax).expm1(); }
Tensor half_exp_from_reduced(const Tensor& e) { return (e + 1.0) * (std::exp(kLarge) / 2); }

// Where asinh(x) and acosh(x) are log(2x) within float32's (float64's) precision: the next term is
// 1 / (4 x^2), 1.5e-8 at 4096 (2.5e-17 at 1e8) against a log above 9 (19).
double log_of_twice_from(const Tensor& t) { return t.dtype() == dtypes::float64 ? 1e8 : 4096; }
}  // namespace

// (e^x - e^-x) / 2 = (E + E / (E + 1)) / 2 for E = e^|x| - 1, odd: no cancellation near 0.
Tensor Tensor::sinh() const {
  Tensor x = as_float(*this), t = in_float32(x), ax = t.abs(), large = ax > kLarge, e = expm1_of_reduced(ax, large);
  Tensor y = large.where(half_exp_from_reduced(e), (e + e / (e + 1.0)) * 0.5);
  return (t < 0).where(-y, y).cast(x.dtype());
}

Tensor Tensor::cosh() const {
  Tensor x = as_float(*this), ax = in_float32(x).abs(), large = ax > kLarge, e = expm1_of_reduced(ax, large);
  return large.where(half_exp_from_reduced(e), ((e + 1.0) + 1.0 / (e + 1.0)) * 0.5).cast(x.dtype());
}

// Odd, from |x|: log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))), which is log(|x| + sqrt(x^2 + 1)) without
// its 1 near 0; for large |x|, log(2 |x|) as log1p(|x| - 1) + ln 2 (x^2 would overflow float32 from
// 1.8e19, 2 |x| from 1.7e38), so that one log1p serves both.
Tensor Tensor::asinh() const {
  Tensor x = as_float(*this), t = in_float32(x), ax = t.abs(), x2 = ax * ax, large = ax > log_of_twice_from(t);
  Tensor y = large.where(ax - 1.0, ax + x2 / ((x2 + 1.0).sqrt() + 1.0)).log1p() +
             large.where(scalar_like(t, std::numbers::ln2, true), scalar_like(t, 0, true));
  return (t < 0).where(-y, y).cast(x.dtype());
}

// log1p(d + sqrt(d) sqrt(x + 1)) with d = x - 1, exact: log(x + sqrt(x^2 - 1)) without x^2 - 1's
// cancellation near 1; for large x, log(2x) as log1p(d) + ln 2. NaN below 1: sqrt(d)'s (one root
// of the product would take x < -1 to a number).
Tensor Tensor::acosh() const {
  Tensor x = as_float(*this), t = in_float32(x), d = t - 1.0, large = t > log_of_twice_from(t);
  Tensor y = large.where(d, d + d.sqrt() * (t + 1.0).sqrt()).log1p() +
             large.where(scalar_like(t, std::numbers::ln2, true), scalar_like(t, 0, true));
  return y.cast(x.dtype());
}

// log((1 + x) / (1 - x)) / 2 as log1p(2|x| / (1 - |x|)) / 2, odd: no cancellation near 0, and
// 1 - |x| is exact near 1.
Tensor Tensor::atanh() const {
  Tensor x = as_float(*this), t = in_float32(x), ax = t.abs();
  Tensor y = (ax * 2.0 / (1.0 - ax)).log1p() * 0.5;
  return (t < 0).where(-y, y).cast(x.dtype());
}

Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  return unary(Ops::TRUNC);
}

Tensor Tensor::floor() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return (t > *this).where(t - 1.0, t);
}

Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return (t < *this).where(t + 1.0, t);
}

Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  // Half to even, from the truncation t and the fraction d = x - t (both exact in floating point;
  // x + 0.5 is not, once x needs every bit of the significand): move t one step away from zero
  // when |d| > 0.5, or when |d| == 0.5 and t is odd.
  Tensor t = trunc();
  Tensor d = *this - t;
  Tensor ad = d.abs();
  Tensor odd = (t * 0.5).trunc() * 2.0 != t;
  Tensor away = (ad > 0.5).logical_or((ad == 0.5).logical_and(odd));
  return away.where(t + d.sign(), t);
}

Tensor Tensor::sign() const {
  if (dtype().is_bool()) return *this;
  Tensor one = scalar_like(*this, 1, false), zero = scalar_like(*this, 0, false);
  if (dtype().is_unsigned()) return (*this > zero).where(one, zero);
  return (*this > zero).where(one, (*this < zero).where(-one, zero));
}

Tensor Tensor::clip(double lo, double hi) const {
  if (lo > hi) throw Error("clip: lower bound " + std::to_string(lo) + " is above upper bound " + std::to_string(hi));
  bool f = dtype().is_float();
  return maximum(scalar_like(*this, lo, f)).minimum(scalar_like(*this, hi, f));
}

Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  DType dt = least_upper_dtype({x.dtype(), y.dtype()});
  Tensor cond = dtype().is_bool() ? *this : *this != scalar_like(*this, 0, false);
  return detail::broadcast_alu(Ops::WHERE, {cond, x.cast(dt), y.cast(dt)}, "where");
}

Tensor Tensor::where(double x, double y) const {
  bool f = x != std::floor(x) || y != std::floor(y);
  Tensor tx(UOp::const_(f ? dtypes::default_float : dtypes::default_int, x), {});
  Tensor ty(UOp::const_(f ? dtypes::default_float : dtypes::default_int, y), {});
  return where(tx, ty);
}

Tensor Tensor::logical_not() const {
  if (dtype().is_bool()) return detail::make_alu(Ops::CMPNE, {*this, detail::constant_like(true, dtypes::bool_, *this)});
  return *this == scalar_like(*this, 0, false);
}

Tensor Tensor::logical_and(const Tensor& other) const {
  return cast(dtypes::bool_).binary(Ops::AND, other.cast(dtypes::bool_), "logical_and");
}

Tensor Tensor::logical_or(const Tensor& other) const {
  return cast(dtypes::bool_).binary(Ops::OR, other.cast(dtypes::bool_), "logical_or");
}

Tensor Tensor::bitwise_and(const Tensor& other) const {
  require_int_or_bool(*this, "bitwise_and");
  require_int_or_bool(other, "bitwise_and");
  return binary(Ops::AND, other, "bitwise_and");
}

Tensor Tensor::bitwise_or(const Tensor& other) const {
  require_int_or_bool(*this, "bitwise_or");
  require_int_or_bool(other, "bitwise_or");
  return binary(Ops::OR, other, "bitwise_or");
}

Tensor Tensor::bitwise_xor(const Tensor& other) const {
  require_int_or_bool(*this, "bitwise_xor");
  require_int_or_bool(other, "bitwise_xor");
  return binary(Ops::XOR, other, "bitwise_xor");
}

Tensor Tensor::lshift(int64_t bits) const {
  if (!dtype().is_int()) throw DTypeError("lshift: needs an integer tensor, not " + dtype().name());
  if (bits < 0 || bits >= dtype().itemsize() * 8) throw Error("lshift: shift of " + std::to_string(bits) + " bits for " + dtype().name());
  return detail::make_alu(Ops::SHL, {*this, detail::constant_like(bits, dtype(), *this)});
}

Tensor Tensor::rshift(int64_t bits) const {
  if (!dtype().is_int()) throw DTypeError("rshift: needs an integer tensor, not " + dtype().name());
  if (bits < 0 || bits >= dtype().itemsize() * 8) throw Error("rshift: shift of " + std::to_string(bits) + " bits for " + dtype().name());
  return detail::make_alu(Ops::SHR, {*this, detail::constant_like(bits, dtype(), *this)});
}

Tensor Tensor::lshift(const Tensor& bits) const {
  require_int(*this, "lshift");
  require_int(bits, "lshift");
  return detail::broadcast_alu(Ops::SHL, {*this, bits.cast(dtype())}, "lshift");
}

Tensor Tensor::rshift(const Tensor& bits) const {
  require_int(*this, "rshift");
  require_int(bits, "rshift");
  return detail::broadcast_alu(Ops::SHR, {*this, bits.cast(dtype())}, "rshift");
}

Tensor Tensor::idiv(const Tensor& other) const {
  require_int(*this, "idiv");
  require_int(other, "idiv");
  return binary(Ops::IDIV, other, "idiv");
}

Tensor Tensor::fmod(const Tensor& other) const {
  if (dtype().is_float() || other.dtype().is_float()) {
    detail::broadcast_shapes(symbolic_shape(), other.symbolic_shape(), "fmod");  // name this op, not the ones inside
    DType dt = least_upper_dtype({dtype(), other.dtype()});
    // In float64 for narrower floats: their quotient's truncation is then the true one (1 / 0.1f
    // is 9.99999985, not the 10 float32 rounds it to) and b * trunc(a / b) is exact, so the result
    // is C's fmod whether or not the compiler fuses the multiply and subtract (it would on one CPU
    // and not on another). float64 operands are computed as they are.
    DType work = dt.itemsize() < 8 ? dtypes::float64 : dt;
    Tensor a = cast(work), b = other.cast(work);
    return (a - b * (a / b).trunc()).cast(dt);
  }
  require_int(*this, "fmod");
  require_int(other, "fmod");
  return binary(Ops::MOD, other, "fmod");
}

Tensor Tensor::remainder(const Tensor& other) const {
  if (!dtype().is_float() && !other.dtype().is_float()) {
    require_int(*this, "remainder");
    require_int(other, "remainder");
  }
  Tensor r = fmod(other);
  if (r.dtype().is_unsigned()) return r;
  Tensor b = other.cast(r.dtype()), zero = scalar_like(r, 0, false);
  // A remainder of the dividend's sign, moved to the divisor's where they differ.
  return ((r != zero).logical_and((r < zero) != (b < zero))).where(r + b, r);
}

}  // namespace lathe
