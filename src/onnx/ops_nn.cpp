// ONNX neural-network operators: matmul, convolution, pooling, normalisation, softmax.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

Tensor scalar(double v, DType dt) { return Tensor::full({}, v, dt); }

// Spatial padding of an N-D op as (begin..., end...), from `pads` or `auto_pad`. Checks the
// window attributes every caller uses: one positive kernel size, stride and dilation per spatial
// axis of the input, pads not negative.
std::vector<int64_t> spatial_pads(const OpContext& c, const Shape& in, const std::vector<int64_t>& kernel,
                                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  size_t n = kernel.size();
  if (in.size() != n + 2) c.fail("a kernel of " + std::to_string(n) + " spatial axes for an input of shape " + shape_to_string(in));
  if (strides.size() != n || dilations.size() != n)
    c.fail("kernel, strides and dilations must have one entry per spatial axis (" + std::to_string(n) + ")");
  for (size_t i = 0; i < n; ++i)
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0) c.fail("kernel sizes, strides and dilations must be positive");
  std::string mode = c.attr_s("auto_pad", "NOTSET");
  if (mode == "NOTSET") {
    std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(n) + " spatial axes");
    for (int64_t p : pads)
      if (p < 0) c.fail("pads must not be negative");
    return pads;
  }
  if (mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER") c.fail("auto_pad '" + mode + "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  std::vector<int64_t> pads(2 * n, 0);
  if (mode == "VALID") return pads;
  for (size_t i = 0; i < n; ++i) {
    int64_t size = in[2 + i], out = (size + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size);
    pads[i] = mode == "SAME_LOWER" ? (total + 1) / 2 : total / 2;
    pads[i + n] = total - pads[i];
  }
  return pads;
}

// The Window of a convolution or pool over `in` with `kernel`: its strides, dilations and pads
// (or auto_pad); a pool's ceil_mode is its own (pool_window_of).
Window window_of(const OpContext& c, const Shape& in, const std::vector<int64_t>& kernel) {
  size_t n = kernel.size();
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = spatial_pads(c, in, kernel, strides, dil);
  Window w{strides, {}, dil};
  for (size_t i = 0; i < n; ++i) w.padding.emplace_back(pads[i], pads[i + n]);
  return w;
}

Window pool_window_of(const OpContext& c, const Shape& in, const std::vector<int64_t>& kernel) {
  Window w = window_of(c, in, kernel);
  w.ceil_mode = c.attr_i("ceil_mode", 0) != 0;
  return w;
}

Tensor conv(const OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("needs (N, C, spatial..) input and (M, C/group, kernel..) weight of the same rank, got " + shape_to_string(x.shape()) + " and " +
           shape_to_string(w.shape()));
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.in(2);
  Window win = window_of(c, x.shape(), std::vector<int64_t>(w.shape().begin() + 2, w.shape().end()));
  return x.conv(w, bias, win, c.attr_i("group", 1));
}

Tensor pool(const OpContext& c, bool is_max) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  Window win = pool_window_of(c, x.shape(), kernel);
  return is_max ? x.max_pool(kernel, win) : x.avg_pool(kernel, win, c.attr_i("count_include_pad", 0) != 0);
}

// MaxPool's second output: where each maximum came from, as an index into the flattened input
// (row-major, or column-major within each image for storage_order 1). 2-D only.
V max_pool_with_indices(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.ndim() != 4 || x.is_symbolic()) c.fail("MaxPool's indices output needs a static (N, C, H, W) input");
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != 2) c.fail("kernel_shape must have 2 entries");
  Window window = pool_window_of(c, x.shape(), kernel);
  const std::vector<int64_t>&strides = window.stride, &dil = window.dilation;
  Tensor win = x.windows(kernel, window, const_as_double(x.dtype().min()));  // (N, C, OH, OW, KH, KW)
  int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3], oh = win.shape()[2], ow = win.shape()[3];
  win = win.reshape({n, ch, oh, ow, kernel[0] * kernel[1]});
  Tensor k = win.argmax(4).cast(dtypes::int64);  // the first maximum, as ONNX Runtime picks it
  auto i64 = [](int64_t v) { return Tensor::full({}, v, dtypes::int64); };
  Tensor row = Tensor::arange(0, static_cast<double>(oh), 1, dtypes::int64).reshape({1, 1, oh, 1}) * i64(strides[0]) -
               i64(window.padding[0].first) + k.idiv(i64(kernel[1])) * i64(dil[0]);
  Tensor col = Tensor::arange(0, static_cast<double>(ow), 1, dtypes::int64).reshape({1, 1, 1, ow}) * i64(strides[1]) -
               i64(window.padding[1].first) + k.fmod(i64(kernel[1])) * i64(dil[1]);
  Tensor image = (Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64).reshape({n, 1, 1, 1}) * i64(ch) +
                  Tensor::arange(0, static_cast<double>(ch), 1, dtypes::int64).reshape({1, ch, 1, 1})) * i64(h * w);
  Tensor within = c.attr_i("storage_order", 0) ? col * i64(h) + row : row * i64(w) + col;
  return V{win.max({4}), image + within};
}

// MaxUnpool: zeros of the unpooled size with each value put back where its index says
// (indices count over the whole flattened output, as MaxPool's indices output gives them).
V max_unpool(const OpContext& c) {
  const Tensor &x = c.in(0), &idx = c.in(1);
  if (x.ndim() != 4 || idx.shape() != x.shape()) c.fail("needs (N, C, H, W) values and indices of the same shape");
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape"), strides = c.attr_ints("strides", {1, 1}), pads = c.attr_ints("pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4) c.fail("kernel_shape, strides and pads must describe 2 spatial axes");
  int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  int64_t oh = (h - 1) * strides[0] - pads[0] - pads[2] + kernel[0], ow = (w - 1) * strides[1] - pads[1] - pads[3] + kernel[1];
  if (c.has(2)) {
    std::vector<int64_t> out = c.ints(2);
    if (out.size() != 4 || out[0] != n || out[1] != ch) c.fail("output_shape must be (N, C, H_out, W_out) of the input's N and C");
    oh = out[2], ow = out[3];
  }
  if (oh <= 0 || ow <= 0 || oh > (int64_t{1} << 16) || ow > (int64_t{1} << 16)) c.fail("the output size must be positive and below 2^16 per axis");
  int64_t hw = oh * ow;
  auto i64 = [](int64_t v) { return Tensor::full({}, v, dtypes::int64); };
  Tensor image = (Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64).reshape({n, 1, 1}) * i64(ch) +
                  Tensor::arange(0, static_cast<double>(ch), 1, dtypes::int64).reshape({1, ch, 1})) * i64(hw);
  Tensor local = (idx.cast(dtypes::int64).reshape({n, ch, h * w}) - image).unsqueeze(-1);  // (N, C, HW_in, 1)
  Tensor hit = local == Tensor::arange(0, static_cast<double>(hw), 1, dtypes::int64).reshape({1, 1, 1, hw});
  Tensor out = hit.where(x.reshape({n, ch, h * w}).unsqueeze(-1), Tensor::zeros({}, x.dtype())).sum({2});
  return V{out.cast(x.dtype()).reshape({n, ch, oh, ow})};
}

// ConvTranspose: Tensor::conv_transpose, its pads from auto_pad or output_shape where given.
Tensor conv_transpose(const OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.ndim() < 3) c.fail("needs an (N, C, spatial..) input, got " + shape_to_string(x.shape()));
  if (w.ndim() != x.ndim()) c.fail("the weight " + shape_to_string(w.shape()) + " and the input " + shape_to_string(x.shape()) + " differ in rank");
  size_t n = static_cast<size_t>(x.ndim() - 2);  // spatial axes
  std::vector<int64_t> s = c.attr_ints("strides", std::vector<int64_t>(n, 1)), d = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> op = c.attr_ints("output_padding", std::vector<int64_t>(n, 0)), pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (s.size() != n || d.size() != n || op.size() != n || pads.size() != 2 * n)
    c.fail("strides, dilations, output_padding and pads must describe " + std::to_string(n) + " spatial axes");
  std::string autopad = c.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = c.attr_ints("output_shape");
  if (!out_shape.empty() || autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    if (out_shape.empty())
      for (size_t i = 0; i < n; ++i) out_shape.push_back(x.shape()[2 + i] * s[i]);
    if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);  // given with N and C
    if (out_shape.size() != n) c.fail("output_shape must have one entry per spatial axis");
    for (size_t i = 0; i < n; ++i) {
      int64_t total = s[i] * (x.shape()[2 + i] - 1) + op[i] + ((w.shape()[2 + i] - 1) * d[i] + 1) - out_shape[i];
      if (total < 0) op[i] -= total, total = 0;  // a larger output than the kernel reaches: extra end padding
      pads[i] = autopad == "SAME_LOWER" ? (total + 1) / 2 : total / 2;
      pads[i + n] = total - pads[i];
    }
  }
  Window win{s, {}, d};
  for (size_t i = 0; i < n; ++i) win.padding.emplace_back(pads[i], pads[i + n]);
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.in(2);
  return x.conv_transpose(w, bias, win, op, c.attr_i("group", 1));
}

// Negative log-likelihood of `logp` (N, C, d...) at integer `target` (N, d...), with optional
// class weights and an ignored label; reduced by "none", "sum" or "mean" (weighted).
Tensor nll_loss(const OpContext& c, const Tensor& logp, const Tensor& target, const std::optional<Tensor>& weight) {
  int64_t classes = logp.shape()[1];
  if (target.ndim() != logp.ndim() - 1) c.fail("target " + shape_to_string(target.shape()) + " does not fit input " + shape_to_string(logp.shape()));
  Shape cls(static_cast<size_t>(logp.ndim()), 1);
  cls[1] = classes;
  Tensor t = target.cast(dtypes::int64).unsqueeze(1);
  Tensor hot = t == Tensor::arange(0, static_cast<double>(classes), 1, dtypes::int64).reshape(cls);
  Tensor zero = Tensor::zeros({}, logp.dtype());
  Tensor picked = hot.where(logp, zero).sum({1});
  Tensor w = weight ? hot.where(weight->reshape(cls), zero).sum({1}) : Tensor::ones(target.shape(), logp.dtype());
  if (c.has_attr("ignore_index")) {
    Tensor keep = target.cast(dtypes::int64) != Tensor::full({}, c.attr_i("ignore_index", -1), dtypes::int64);
    w = keep.where(w, zero);
  }
  Tensor loss = -(picked * w);
  std::string reduction = c.attr_s("reduction", "mean");
  if (reduction == "none") return loss.cast(logp.dtype());
  if (reduction == "sum") return loss.sum().cast(logp.dtype());
  if (reduction != "mean") c.fail("reduction '" + reduction + "' is not one of none, sum, mean");
  return (loss.sum() / w.sum()).cast(logp.dtype());
}

// Resize and Upsample: Tensor::resize with the node's sizes, or resize_by_scales with its scales;
// Upsample and Resize before opset 11 sample asymmetrically and pick the nearest pixel by flooring.
Tensor resize(const OpContext& c) {
  Tensor x = c.in(0);
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (c.opset() < 11) {
    scales = c.doubles(1);
  } else {
    if (c.has(3) && c.in(3).numel() > 0) sizes = c.ints(3);
    else if (c.has(2) && c.in(2).numel() > 0) scales = c.doubles(2);
  }
  ResizeOptions o;
  o.mode = c.attr_s("mode", "nearest");
  o.coordinate_transformation = c.attr_s("coordinate_transformation_mode", c.opset() < 11 ? "asymmetric" : "half_pixel");
  o.nearest_mode = c.op() == "Upsample" || c.opset() < 11 ? "floor" : c.attr_s("nearest_mode", "round_prefer_floor");
  o.cubic_coeff_a = c.attr_f("cubic_coeff_a", -0.75);
  o.exclude_outside = c.attr_i("exclude_outside", 0) != 0;
  if (o.coordinate_transformation == "tf_crop_and_resize" && c.has(1)) o.roi = c.doubles(1);
  o.extrapolation_value = c.attr_f("extrapolation_value", 0.0);
  return sizes.empty() ? x.resize_by_scales(scales, o) : x.resize(sizes, o);
}

Tensor softmax_like(const OpContext& c, bool log) {
  const Tensor& x = c.in(0);
  int64_t a = axis_of(c, c.attr_i("axis", c.opset() < 13 ? 1 : -1), x.ndim());
  // Before opset 13 the input is viewed as 2-D, [d0 * .. * d(a-1), da * .. * dn]: over the last
  // axis that is the last axis itself.
  if (c.opset() >= 13 || (x.ndim() > 0 && a == x.ndim() - 1)) return log ? x.log_softmax(a) : x.softmax(a);
  if (x.is_symbolic()) c.fail("softmax before opset 13 (over a flattened view) needs static sizes");
  Tensor flat = x.flatten(0, a == 0 ? 0 : a - 1);
  if (a == 0) flat = x.reshape({1, x.numel()});
  else flat = x.reshape({flat.shape()[0], -1});
  Tensor r = log ? flat.log_softmax(1) : flat.softmax(1);
  return r.reshape(x.shape());
}

}  // namespace

void register_nn_ops(std::map<std::string, OpFn>& t) {
  t["MatMul"] = [](const OpContext& c) { return V{c.in(0).matmul(c.in(1))}; };
  t["Gemm"] = [](const OpContext& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (c.attr_i("transA", 0)) a = a.transpose(0, 1);
    if (c.attr_i("transB", 0)) b = b.transpose(0, 1);
    Tensor y = a.matmul(b) * scalar(c.attr_f("alpha", 1.0), a.dtype());
    if (c.has(2)) y = y + c.in(2) * scalar(c.attr_f("beta", 1.0), a.dtype());
    return V{y.cast(a.dtype())};
  };
  t["Conv"] = [](const OpContext& c) { return V{conv(c)}; };
  t["NegativeLogLikelihoodLoss"] = [](const OpContext& c) {
    std::optional<Tensor> w;
    if (c.has(2)) w = c.in(2);
    return V{nll_loss(c, c.in(0), c.in(1), w)};
  };
  t["SoftmaxCrossEntropyLoss"] = [](const OpContext& c) {
    std::optional<Tensor> w;
    if (c.has(2)) w = c.in(2);
    Tensor logp = c.in(0).log_softmax(1);
    return V{nll_loss(c, logp, c.in(1), w), logp};
  };
  t["LRN"] = [](const OpContext& c) {
    // y = x / (bias + alpha/size * sum of x^2 over the `size` channels around c)^beta
    const Tensor& x = c.in(0);
    int64_t size = c.attr_i("size", 1), ch = x.shape()[1];
    double alpha = c.attr_f("alpha", 1e-4), beta = c.attr_f("beta", 0.75), bias = c.attr_f("bias", 1.0);
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    std::vector<std::pair<SInt, SInt>> p(static_cast<size_t>(x.ndim()), {0, 0});
    p[1] = {before, after};
    Tensor sq = (x * x).pad(p);
    Tensor acc = sq.slice(1, 0, ch);
    for (int64_t k = 1; k < size; ++k) acc = acc + sq.slice(1, k, k + ch);
    return V{(x / (acc * (alpha / static_cast<double>(size)) + bias).pow(beta)).cast(x.dtype())};
  };
  t["Resize"] = [](const OpContext& c) { return V{resize(c)}; };
  t["Upsample"] = [](const OpContext& c) { return V{resize(c)}; };
  t["Einsum"] = [](const OpContext& c) {
    std::vector<Tensor> operands;
    for (size_t i = 0; i < c.num_inputs(); ++i) operands.push_back(c.in(i));
    return V{Tensor::einsum(c.attr_s("equation", ""), operands)};
  };
  t["ConvTranspose"] = [](const OpContext& c) { return V{conv_transpose(c)}; };
  t["Hardmax"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = axis_of(c, c.attr_i("axis", c.opset() < 13 ? 1 : -1), x.ndim());
    if (c.opset() < 13) c.fail("Hardmax before opset 13 (2-D coercion) is not supported");
    Shape pos(static_cast<size_t>(x.ndim()), 1);
    pos[a] = x.shape()[a];
    Tensor idx = x.argmax(a, true);
    return V{(idx == Tensor::arange(x.shape()[a]).reshape(pos)).cast(x.dtype())};
  };
  t["DepthToSpace"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t b = c.attr_i("blocksize", 1), n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    if (b <= 0 || ch % (b * b) != 0) c.fail("channels are not divisible by blocksize^2");
    int64_t oc = ch / (b * b);
    Tensor r = c.attr_s("mode", "DCR") == "DCR" ? x.reshape({n, b, b, oc, h, w}).permute({0, 3, 4, 1, 5, 2})
                                                : x.reshape({n, oc, b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
    return V{r.reshape({n, oc, h * b, w * b})};
  };
  t["SpaceToDepth"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t b = c.attr_i("blocksize", 1), n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    if (b <= 0 || h % b != 0 || w % b != 0) c.fail("height and width are not divisible by blocksize");
    return V{x.reshape({n, ch, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, ch * b * b, h / b, w / b})};
  };
  t["MaxUnpool"] = max_unpool;
  t["MaxPool"] = [](const OpContext& c) {
    if (c.num_outputs() > 1 && !c.output_name(1).empty()) return max_pool_with_indices(c);
    return V{pool(c, true)};
  };
  t["AveragePool"] = [](const OpContext& c) { return V{pool(c, false)}; };
  t["GlobalAveragePool"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
    return V{x.mean(axes, true)};
  };
  t["GlobalMaxPool"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
    return V{x.max(axes, true)};
  };
  t["Softmax"] = [](const OpContext& c) { return V{softmax_like(c, false)}; };
  t["LogSoftmax"] = [](const OpContext& c) { return V{softmax_like(c, true)}; };
  t["BatchNormalization"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    Shape bc(static_cast<size_t>(x.ndim()), 1);
    bc[1] = x.shape()[1];
    Tensor scale = c.in(1).reshape(bc), bias = c.in(2).reshape(bc), mean = c.in(3).reshape(bc), var = c.in(4).reshape(bc);
    double eps = c.attr_f("epsilon", 1e-5);
    if (c.attr_i("training_mode", 0) == 0) return V{((x - mean) * (var + eps).rsqrt() * scale + bias).cast(x.dtype())};
    // Training: normalize with this batch's statistics and blend them into the running ones.
    std::vector<int64_t> axes{0};
    for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
    Tensor batch_mean = x.mean(axes, true), batch_var = x.var(axes, true, 0);
    double m = c.attr_f("momentum", 0.9);
    Tensor y = ((x - batch_mean) * (batch_var + eps).rsqrt() * scale + bias).cast(x.dtype());
    Shape c_shape{x.shape()[1]};
    return V{y, (mean * m + batch_mean * (1 - m)).reshape(c_shape), (var * m + batch_var * (1 - m)).reshape(c_shape)};
  };
  t["InstanceNormalization"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
    Shape bc(static_cast<size_t>(x.ndim()), 1);
    bc[1] = x.shape()[1];
    Tensor normed = x.layernorm(axes, c.attr_f("epsilon", 1e-5));
    return V{(normed * c.in(1).reshape(bc) + c.in(2).reshape(bc)).cast(x.dtype())};
  };
  t["MeanVarianceNormalization"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
    for (int64_t& a : axes) a = axis_of(c, a, x.ndim());
    Tensor centered = x - x.mean(axes, true);
    return V{centered / ((centered * centered).mean(axes, true).sqrt() + 1e-9)};
  };
  t["LayerNormalization"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = axis_of(c, c.attr_i("axis", -1), x.ndim());
    std::vector<int64_t> axes;
    for (int64_t i = a; i < x.ndim(); ++i) axes.push_back(i);
    double eps = c.attr_f("epsilon", 1e-5);
    Tensor mean = x.mean(axes, true);
    Tensor inv = (((x - mean) * (x - mean)).mean(axes, true) + eps).rsqrt();
    Tensor y = (x - mean) * inv * c.in(1);
    if (c.has(2)) y = y + c.in(2);
    return V{y.cast(x.dtype()), mean, inv};
  };
}

}  // namespace lathe::onnx::detail
