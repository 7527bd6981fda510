// Compound ops: matmul, softmax, normalisation, convolution, pooling, attention. None is a
// special kernel: each is movement, elementwise and reduce ops the scheduler fuses.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

// Products of small integers are summed in at least 32 bits (as sum() does); the multiply must be
// done there too, or int8 * int8 wraps before the wide accumulation sees it.
std::pair<Tensor, Tensor> widen_for_products(const Tensor& a, const Tensor& b) {
  DType dt = least_upper_dtype({a.dtype(), b.dtype()});
  if (dt.is_bool() || (dt.is_int() && dt.itemsize() < 4)) {
    DType acc = dt.is_unsigned() ? dtypes::uint32 : dtypes::int32;
    return {a.cast(acc), b.cast(acc)};
  }
  return {a, b};
}

}  // namespace

Tensor Tensor::matmul(const Tensor& other) const {
  if (ndim() == 0 || other.ndim() == 0)
    throw ShapeError("matmul: scalars cannot be multiplied as matrices: " + shape_to_string(shape_) + " @ " + shape_to_string(other.shape()));
  Tensor a = ndim() == 1 ? unsqueeze(0) : *this;
  Tensor b = other.ndim() == 1 ? other.unsqueeze(-1) : other;
  int64_t k = a.shape().back();
  if (b.shape()[b.ndim() - 2] != k)
    throw ShapeError("matmul: inner dimensions differ: " + shape_to_string(shape_) + " @ " + shape_to_string(other.shape()));
  for (int64_t i = 3; i <= std::min(a.ndim(), b.ndim()); ++i) {
    int64_t da = a.shape()[a.ndim() - i], db = b.shape()[b.ndim() - i];
    if (da != db && da != 1 && db != 1)
      throw ShapeError("matmul: batch dimensions of " + shape_to_string(shape_) + " @ " + shape_to_string(other.shape()) +
                       " cannot be broadcast together");
  }
  std::tie(a, b) = widen_for_products(a, b);
  // (..., n, k) @ (..., k, m): multiply as (..., n, 1, k) * (..., 1, m, k) and sum over k.
  Tensor prod = a.unsqueeze(-2) * b.transpose(-1, -2).unsqueeze(-3);
  Tensor r = prod.sum({-1});
  if (ndim() == 1) r = r.squeeze(-2);
  if (other.ndim() == 1) r = r.squeeze(-1);
  return r;
}

Tensor Tensor::softmax(int64_t axis) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "softmax");
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor e = (x - x.max({a}, true)).exp();
  return e / e.sum({a}, true);
}

Tensor Tensor::log_softmax(int64_t axis) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "log_softmax");
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor shifted = x - x.max({a}, true);
  return shifted - shifted.exp().sum({a}, true).log();
}

Tensor Tensor::layernorm(std::vector<int64_t> axes, double eps) const {
  for (int64_t a : axes) detail::normalize_axis(a, ndim(), "layernorm");
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor centered = x - x.mean(axes, true);
  return centered * ((centered * centered).mean(axes, true) + eps).rsqrt();
}

namespace {

// Sliding windows of an (N, C, H, W) tensor: (N, C, OH, OW, KH*KW), built from strided slices.
Tensor windows(const Tensor& x, std::pair<int64_t, int64_t> kernel, std::pair<int64_t, int64_t> stride,
               std::pair<int64_t, int64_t> dilation, const char* op) {
  auto [kh, kw] = kernel;
  auto [sh, sw] = stride;
  auto [dh, dw] = dilation;
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    throw ShapeError(std::string(op) + ": kernel, stride and dilation must be positive");
  int64_t h = x.shape()[2], w = x.shape()[3];
  int64_t oh = (h - dh * (kh - 1) - 1) / sh + 1, ow = (w - dw * (kw - 1) - 1) / sw + 1;
  if (h - dh * (kh - 1) - 1 < 0 || w - dw * (kw - 1) - 1 < 0)
    throw ShapeError(std::string(op) + ": a " + std::to_string(kh) + "x" + std::to_string(kw) + " window does not fit input " +
                     shape_to_string(x.shape()));
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < kh; ++i) {
    for (int64_t j = 0; j < kw; ++j) {
      Tensor t = x.slice(2, i * dh, i * dh + (oh - 1) * sh + 1, sh).slice(3, j * dw, j * dw + (ow - 1) * sw + 1, sw);
      taps.push_back(t);
    }
  }
  return Tensor::stack(taps, -1);
}

void require_nchw(const Tensor& x, const char* op) {
  if (x.ndim() != 4) throw ShapeError(std::string(op) + ": needs an (N, C, H, W) input, got " + shape_to_string(x.shape()));
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, std::pair<int64_t, int64_t> stride,
                      std::pair<int64_t, int64_t> padding, std::pair<int64_t, int64_t> dilation, int64_t groups) const {
  require_nchw(*this, "conv2d");
  if (weight.ndim() != 4) throw ShapeError("conv2d: needs an (O, C/groups, KH, KW) weight, got " + shape_to_string(weight.shape()));
  int64_t n = shape_[0], c = shape_[1], o = weight.shape()[0], cg = weight.shape()[1];
  if (groups <= 0 || c % groups != 0 || o % groups != 0 || cg != c / groups)
    throw ShapeError("conv2d: input " + shape_to_string(shape_) + " and weight " + shape_to_string(weight.shape()) +
                     " do not agree for " + std::to_string(groups) + " groups");
  Tensor x = pad({{0, 0}, {0, 0}, {padding.first, padding.first}, {padding.second, padding.second}});
  Tensor win = windows(x, {weight.shape()[2], weight.shape()[3]}, stride, dilation, "conv2d");  // (N, C, OH, OW, K)
  int64_t oh = win.shape()[2], ow = win.shape()[3], k = win.shape()[4], og = o / groups;
  Tensor xw = win.reshape({n, groups, 1, cg, oh, ow, k});
  Tensor ww = weight.reshape({1, groups, og, cg, 1, 1, k});
  std::tie(xw, ww) = widen_for_products(xw, ww);
  Tensor out = (xw * ww).sum({3, 6}).reshape({n, o, oh, ow});
  if (bias) {
    if (bias->shape() != Shape{o}) throw ShapeError("conv2d: bias of shape " + shape_to_string(bias->shape()) + " for " + std::to_string(o) + " output channels");
    out = out + bias->reshape({1, o, 1, 1});
  }
  return out;
}

Tensor Tensor::max_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride,
                          std::pair<int64_t, int64_t> padding) const {
  require_nchw(*this, "max_pool2d");
  double lowest = dtype().is_float() ? -std::numeric_limits<double>::infinity() : const_as_double(dtype().min());
  Tensor x = pad({{0, 0}, {0, 0}, {padding.first, padding.first}, {padding.second, padding.second}}, lowest);
  return windows(x, kernel, stride.value_or(kernel), {1, 1}, "max_pool2d").max({-1});
}

Tensor Tensor::avg_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride,
                          std::pair<int64_t, int64_t> padding) const {
  require_nchw(*this, "avg_pool2d");
  Tensor x = pad({{0, 0}, {0, 0}, {padding.first, padding.first}, {padding.second, padding.second}});
  return windows(x, kernel, stride.value_or(kernel), {1, 1}, "avg_pool2d").mean({-1});
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value, bool is_causal) const {
  if (ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    throw ShapeError("scaled_dot_product_attention: query, key and value need at least 2 dimensions");
  double scale = 1.0 / std::sqrt(static_cast<double>(shape_.back()));
  Tensor scores = matmul(key.transpose(-1, -2)) * scale;
  if (is_causal) {
    int64_t l = scores.shape()[scores.ndim() - 2], s = scores.shape().back();
    Tensor mask = Tensor::arange(s).reshape({1, s}) <= Tensor::arange(l).reshape({l, 1});
    scores = mask.where(scores, Tensor::full({}, -std::numeric_limits<double>::infinity(), scores.dtype()));
  }
  return scores.softmax(-1).matmul(value);
}

}  // namespace lathe
