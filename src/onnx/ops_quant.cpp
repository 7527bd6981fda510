// Quantization operators: linear (de)quantization to 8-bit integers and integer matmul/conv.
#include <limits>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// A per-axis parameter (1-D, along `axis`) shaped to broadcast against `x`; a scalar as is.
Tensor along(const OpContext& c, const Tensor& p, const Tensor& x) {
  if (p.ndim() == 0 || p.numel() == 1) return p.reshape(Shape{});
  int64_t a = axis_of(c, c.attr_i("axis", 1), x.ndim());
  Shape s(static_cast<size_t>(x.ndim()), 1);
  s[a] = p.numel();
  return p.reshape(s);
}

Tensor saturate_round(const Tensor& v, DType to) {
  double lo = const_as_double(to.min()), hi = const_as_double(to.max());
  return v.round().clip(lo, hi).cast(to);
}

Tensor quantize(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor scale = along(c, c.in(1), x);
  DType to = c.has(2) ? c.in(2).dtype() : dtypes::uint8;
  Tensor zp = c.has(2) ? along(c, c.in(2), x).cast(dtypes::float32) : Tensor::zeros({}, dtypes::float32);
  return saturate_round((x.cast(dtypes::float32) / scale.cast(dtypes::float32)).round() + zp, to);
}

Tensor dequantize(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor scale = along(c, c.in(1), x);
  Tensor zp = c.has(2) ? along(c, c.in(2), x).cast(dtypes::float32) : Tensor::zeros({}, dtypes::float32);
  return ((x.cast(dtypes::float32) - zp) * scale.cast(dtypes::float32)).cast(scale.dtype());
}

// x - zero_point in int32, the zero point per row/column when it is a vector.
Tensor minus_zero_point(const Tensor& x, const std::optional<Tensor>& zp, int64_t axis) {
  Tensor v = x.cast(dtypes::int32);
  if (!zp) return v;
  Tensor z = zp->cast(dtypes::int32);
  if (z.numel() > 1) {
    Shape s(static_cast<size_t>(x.ndim()), 1);
    s[axis < 0 ? axis + x.ndim() : axis] = z.numel();
    z = z.reshape(s);
  } else {
    z = z.reshape(Shape{});
  }
  return v - z;
}

// An integer convolution of input `xi` (zero point `xzi`, 0 when absent) with weight `wi`.
Tensor integer_conv(const OpContext& c, size_t xi, size_t xzi, size_t wi, size_t wzi) {
  const Tensor &x = c.in(xi), &w = c.in(wi);
  if (x.ndim() != 4 || w.ndim() != 4) c.fail("only 2-D integer convolutions are supported");
  std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") c.fail("auto_pad '" + auto_pad + "' is not supported here (give pads)");
  std::optional<Tensor> xz, wz;
  if (xzi) xz = c.in(xzi);
  if (wzi) wz = c.in(wzi);
  std::vector<int64_t> s = c.attr_ints("strides", {1, 1}), d = c.attr_ints("dilations", {1, 1}), p = c.attr_ints("pads", {0, 0, 0, 0});
  if (s.size() != 2 || d.size() != 2 || p.size() != 4) c.fail("strides, dilations and pads must describe 2 spatial axes");
  if (s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0) c.fail("strides and dilations must be positive");
  Tensor xv = minus_zero_point(x, xz, 1).pad({{0, 0}, {0, 0}, {p[0], p[2]}, {p[1], p[3]}});
  return xv.conv2d(minus_zero_point(w, wz, 0), std::nullopt, {s[0], s[1]}, {0, 0}, {d[0], d[1]}, c.attr_i("group", 1));
}

// An int32 accumulator scaled back to the output's 8-bit type.
Tensor requantize(const Tensor& acc, const Tensor& scale, const Tensor& y_scale, const Tensor& y_zp) {
  Tensor v = acc.cast(dtypes::float32) * (scale.cast(dtypes::float32) / y_scale.reshape(Shape{}).cast(dtypes::float32));
  return saturate_round(v.round() + y_zp.reshape(Shape{}).cast(dtypes::float32), y_zp.dtype());
}

}  // namespace

void register_quant_ops(std::map<std::string, OpFn>& t) {
  t["QuantizeLinear"] = [](const OpContext& c) { return V{quantize(c)}; };
  t["DequantizeLinear"] = [](const OpContext& c) { return V{dequantize(c)}; };
  t["DynamicQuantizeLinear"] = [](const OpContext& c) {
    Tensor x = c.in(0).cast(dtypes::float32);
    Tensor zero = Tensor::zeros({}, dtypes::float32);
    Tensor lo = x.min().minimum(zero), hi = x.max().maximum(zero);
    Tensor scale = (hi - lo) / 255.0f;
    Tensor zp = saturate_round(zero - lo / scale, dtypes::uint8);
    Tensor y = saturate_round((x / scale).round() + zp.cast(dtypes::float32), dtypes::uint8);
    return V{y, scale, zp};
  };
  t["MatMulInteger"] = [](const OpContext& c) {
    std::optional<Tensor> az, bz;
    if (c.has(2)) az = c.in(2);
    if (c.has(3)) bz = c.in(3);
    return V{minus_zero_point(c.in(0), az, -2).matmul(minus_zero_point(c.in(1), bz, -1))};
  };
  t["ConvInteger"] = [](const OpContext& c) { return V{integer_conv(c, 0, c.has(2) ? 2 : 0, 1, c.has(3) ? 3 : 0)}; };
  // y = saturate(round(integer_op(x - x_zp, w - w_zp) * x_scale * w_scale / y_scale) + y_zp).
  t["QLinearMatMul"] = [](const OpContext& c) {
    Tensor acc = minus_zero_point(c.in(0), c.in(2), -2).matmul(minus_zero_point(c.in(3), c.in(5), -1));
    // a's scale per row (a column vector), b's per column (a row vector); scalars broadcast as they are.
    Tensor a_scale = c.in(1).flatten().unsqueeze(-1), b_scale = c.in(4).flatten();
    return V{requantize(acc, a_scale * b_scale, c.in(6), c.in(7))};
  };
  t["QLinearConv"] = [](const OpContext& c) {
    Tensor acc = integer_conv(c, 0, 2, 3, 5);
    if (c.has(8)) acc = acc + c.in(8).cast(dtypes::int32).reshape(Shape{c.in(8).numel(), 1, 1});
    Tensor w_scale = c.in(4).numel() > 1 ? c.in(4).reshape(Shape{c.in(4).numel(), 1, 1}) : c.in(4).reshape(Shape{});
    return V{requantize(acc, c.in(1).reshape(Shape{}) * w_scale, c.in(6), c.in(7))};
  };
}

}  // namespace lathe::onnx::detail
