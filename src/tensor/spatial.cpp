// Convolutions, transposed convolutions and pools over any number of spatial axes, and the windows
// they read. One spatial axis runs as two with a unit height; two go to conv2d,
// conv_transpose2d and the 2-D max pool, which choose how their operands are stored; more are
// folded into a 2-D convolution (the windows along the leading axes become batch and channels).
#include <algorithm>
#include <cmath>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

// A Window with one entry per spatial axis: empty vectors filled in (stride with
// `default_stride`), every entry checked. ShapeError naming `what` otherwise.
Window filled(const Window& w, size_t axes, const std::vector<int64_t>& default_stride, const std::string& what) {
  auto count = [&](size_t n, const char* name) {
    if (n != 0 && n != axes)
      throw ShapeError(what + ": " + name + " has " + std::to_string(n) + " entries for " + std::to_string(axes) + " spatial axes");
  };
  count(w.stride.size(), "stride");
  count(w.padding.size(), "padding");
  count(w.dilation.size(), "dilation");
  Window f = w;
  if (f.stride.empty()) f.stride = default_stride;
  if (f.padding.empty()) f.padding.assign(axes, {0, 0});
  if (f.dilation.empty()) f.dilation.assign(axes, 1);
  for (size_t i = 0; i < axes; ++i) {
    if (f.stride[i] <= 0 || f.dilation[i] <= 0) throw ShapeError(what + ": strides and dilations must be positive");
    if (f.padding[i].first < 0 || f.padding[i].second < 0) throw ShapeError(what + ": padding must not be negative");
  }
  return f;
}

// Padding for every axis of an (N, C, S1..Sk) tensor: none on N and C.
std::vector<std::pair<SInt, SInt>> on_spatial_axes(const Pads& p) {
  std::vector<std::pair<SInt, SInt>> all{{0, 0}, {0, 0}};
  for (const auto& [b, a] : p) all.emplace_back(b, a);
  return all;
}

bool any_padding(const Pads& p) {
  return std::any_of(p.begin(), p.end(), [](const auto& ba) { return ba.first != 0 || ba.second != 0; });
}

bool symmetric(const Pads& p) {
  return std::all_of(p.begin(), p.end(), [](const auto& ba) { return ba.first == ba.second; });
}

// A Window of one spatial axis as one of two, the first a unit axis.
Window with_unit_height(const Window& w) { return Window{{1, w.stride[0]}, {{0, 0}, w.padding[0]}, {1, w.dilation[0]}, w.ceil_mode}; }

// The spatial sizes of `x`, which must be static.
std::vector<int64_t> spatial_sizes(const Tensor& x, const std::string& what) {
  SymShape s = x.symbolic_shape();
  std::vector<int64_t> out;
  for (size_t i = 2; i < s.size(); ++i) {
    if (!s[i].is_static()) throw ShapeError(what + ": only the batch axis may have a symbolic size");
    out.push_back(s[i].value());
  }
  return out;
}

// With ceil_mode, each axis' end padded further so a last, partial window is kept, unless that
// window would start in the end padding (PyTorch's and ONNX Runtime's rule: a 5-wide axis padded
// by 1 on each side in windows of 2 at stride 2 has 3 windows, not 4 of which the last reads only
// padding).
Pads pool_padding(const std::vector<int64_t>& sizes, const std::vector<int64_t>& kernel, const Window& w) {
  Pads p = w.padding;
  if (!w.ceil_mode) return p;
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t size = sizes[i] + p[i].first + p[i].second, span = w.dilation[i] * (kernel[i] - 1) + 1;
    if (size < span) continue;  // no window fits: the windows' own check says so
    int64_t rem = (size - span) % w.stride[i], last_start = ((size - span) / w.stride[i] + 1) * w.stride[i];
    if (rem != 0 && last_start < sizes[i] + p[i].first) p[i].second += w.stride[i] - rem;
  }
  return p;
}

// The last `k` axes, for reducing over a window.
std::vector<int64_t> last_axes(size_t k) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < k; ++i) axes.push_back(-1 - static_cast<int64_t>(i));
  return axes;
}

// The windows of `x` over `kernel` for `op`, where `g` (filled) lies, padded with `value`.
Tensor windows_for(const Tensor& x, const std::vector<int64_t>& kernel, const Window& g, double value, const char* op) {
  std::string what = std::string(op) + " of " + shape_to_string(x.symbolic_shape());
  for (int64_t k : kernel)
    if (k <= 0) throw ShapeError(what + ": kernel sizes must be positive");
  Pads p = pool_padding(spatial_sizes(x, what), kernel, g);
  Tensor padded = any_padding(p) ? x.pad(on_spatial_axes(p), value) : x;
  return detail::sliding_windows(padded, kernel, g.stride, g.dilation, op);
}

// A pool's window checked and filled for `op` (pools' stride defaults to the kernel), the padding
// ceil_mode adds made explicit.
Window pool_window(const Tensor& x, const std::vector<int64_t>& kernel, const Window& window, const char* op) {
  std::string what = std::string(op) + " of " + shape_to_string(x.symbolic_shape());
  if (x.ndim() < 3 || kernel.size() + 2 != static_cast<size_t>(x.ndim()))
    throw ShapeError(what + ": needs an (N, C, S1..Sk) input and one kernel size per spatial axis, got " + std::to_string(kernel.size()));
  for (int64_t k : kernel)
    if (k <= 0) throw ShapeError(what + ": kernel sizes must be positive");
  Window g = filled(window, kernel.size(), kernel, what);
  g.padding = pool_padding(spatial_sizes(x, what), kernel, g);
  g.ceil_mode = false;
  return g;
}

std::string of(const char* op, const Tensor& x, const Tensor& w) {
  return std::string(op) + " of " + shape_to_string(x.symbolic_shape()) + " with weight " + shape_to_string(w.shape());
}

// A convolution over k >= 3 spatial axes of an input padded already, (N, C, S1..Sk-2, H, W), as a
// 2-D one over detail::folded_input, convolved with the weight (O, C/groups * K1..Kk-2, KH, KW):
// its batch split back into (N, P1..) and moved behind the output channels. A group's channels
// stay together (a channel's taps follow it).
Tensor folded_conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, const Window& g, int64_t groups) {
  int64_t n = x.shape()[0], o = w.shape()[0], cg = w.shape()[1];
  auto lead = static_cast<size_t>(x.ndim() - 4);  // spatial axes folded away: all but the last two
  auto nd = static_cast<int64_t>(lead);
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().begin() + 2 + nd),
      sizes(x.shape().begin() + 2, x.shape().begin() + 2 + nd);
  std::vector<int64_t> sk(g.stride.begin(), g.stride.begin() + nd), dk(g.dilation.begin(), g.dilation.begin() + nd);
  Tensor flat = detail::folded_input(x, k, sk, dk);
  int64_t taps = 1, kh = w.shape()[2 + nd], kw = w.shape()[3 + nd];
  for (int64_t t : k) taps *= t;
  Tensor out = flat.conv2d(w.reshape({o, cg * taps, kh, kw}), bias, {g.stride[lead], g.stride[lead + 1]}, {0, 0},
                           {g.dilation[lead], g.dilation[lead + 1]}, groups);
  Shape split{n};
  for (int64_t p : detail::window_counts(sizes, k, sk, dk, "conv", shape_to_string(x.shape()))) split.push_back(p);
  split.insert(split.end(), {o, out.shape()[2], out.shape()[3]});
  std::vector<int64_t> back{0, 1 + nd};  // (N, O, P1..Pk-2, PH, PW)
  for (int64_t i = 0; i < nd; ++i) back.push_back(1 + i);
  back.insert(back.end(), {2 + nd, 3 + nd});
  return out.reshape(split).permute(back);
}

}  // namespace

Tensor detail::folded_input(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                            const std::vector<int64_t>& dilation) {
  int64_t n = x.shape()[0], ch = x.shape()[1];
  auto nd = static_cast<int64_t>(kernel.size());
  Tensor win = detail::sliding_windows(x, kernel, stride, dilation, "conv");  // (N, C, P1..Pk-2, H, W, K1..Kk-2)
  std::vector<int64_t> perm{0};                                               // (N, P1..Pk-2, C, K1..Kk-2, H, W)
  for (int64_t i = 0; i < nd; ++i) perm.push_back(2 + i);
  perm.push_back(1);
  for (int64_t i = 0; i < nd; ++i) perm.push_back(4 + nd + i);
  perm.insert(perm.end(), {2 + nd, 3 + nd});
  int64_t positions = 1, taps = 1;
  for (int64_t i = 0; i < nd; ++i)
    positions *= win.shape()[static_cast<size_t>(2 + i)], taps *= kernel[static_cast<size_t>(i)];
  return win.permute(perm).reshape(
      {n * positions, ch * taps, x.shape()[static_cast<size_t>(2 + nd)], x.shape()[static_cast<size_t>(3 + nd)]});
}

Tensor Tensor::windows(const std::vector<int64_t>& kernel, const Window& window, double value) const {
  std::string what = "windows of " + shape_to_string(symbolic_shape());
  if (ndim() < 3 || kernel.size() + 2 != static_cast<size_t>(ndim()))
    throw ShapeError(what + ": needs an (N, C, S1..Sk) input and one kernel size per spatial axis, got " + std::to_string(kernel.size()));
  return windows_for(*this, kernel, filled(window, kernel.size(), std::vector<int64_t>(kernel.size(), 1), what), value, "windows");
}

Tensor Tensor::max_pool(const std::vector<int64_t>& kernel, const Window& window) const {
  Window g = pool_window(*this, kernel, window, "max_pool");
  bool dilated = std::any_of(g.dilation.begin(), g.dilation.end(), [](int64_t d) { return d != 1; });
  if (kernel.size() == 1 && !dilated) return unsqueeze(2).max_pool({1, kernel[0]}, with_unit_height(g)).squeeze(2);
  if (kernel.size() == 2 && !dilated)  // the 2-D pool reads its input in channel blocks where it can
    return detail::max_pool2d(*this, {kernel[0], kernel[1]}, {g.stride[0], g.stride[1]}, g.padding[0], g.padding[1]);
  return windows_for(*this, kernel, g, const_as_double(dtype().min()), "max_pool").max(last_axes(kernel.size()));
}

Tensor Tensor::avg_pool(const std::vector<int64_t>& kernel, const Window& window, bool count_include_pad) const {
  return detail::avg_pool(*this, kernel, window, count_include_pad, "avg_pool");
}

Tensor detail::avg_pool(const Tensor& x, const std::vector<int64_t>& kernel, const Window& window, bool count_include_pad, const char* op) {
  Window g = pool_window(x, kernel, window, op);
  Window as_stated = window;  // the padding asked for, without what ceil_mode adds
  as_stated.ceil_mode = false;
  Pads stated = pool_window(x, kernel, as_stated, op).padding;
  std::vector<int64_t> axes = last_axes(kernel.size());
  Tensor sum = windows_for(x, kernel, g, 0, op).sum(axes);
  DType dtype = x.dtype();
  DType out = dtype.is_float() ? dtype : dtypes::default_float;
  // Every tap counts where the padding does and ceil_mode added none, or where there is no
  // padding at all (each window then lies inside).
  if ((count_include_pad && g.padding == stated) || !any_padding(g.padding)) {
    int64_t taps = 1;
    for (int64_t k : kernel) taps *= k;
    return (sum.cast(out) / static_cast<double>(taps)).cast(dtype);
  }
  // Divided by the taps of each window inside what counts: the input, with count_include_pad its
  // stated padding too, never what ceil_mode adds (PyTorch's and ONNX Runtime's divisors). The
  // same for every batch entry (and the batch may be symbolic) and every channel.
  Shape counted = x.shape();
  counted[0] = 1, counted[1] = 1;
  Window rest = g;
  for (size_t i = 0; i < kernel.size() && count_include_pad; ++i) {
    counted[2 + i] += stated[i].first + stated[i].second;
    rest.padding[i] = {g.padding[i].first - stated[i].first, g.padding[i].second - stated[i].second};
  }
  Tensor inside = windows_for(Tensor::ones(counted, out), kernel, rest, 0, op).sum(axes);
  return (sum.cast(out) / inside).cast(dtype);
}

Tensor Tensor::conv(const Tensor& weight, const std::optional<Tensor>& bias, const Window& window, int64_t groups) const {
  std::string what = of("conv", *this, weight);
  if (ndim() < 3 || weight.ndim() != ndim())
    throw ShapeError(what + ": needs an (N, C, S1..Sk) input and an (O, C/groups, K1..Kk) weight of the same rank");
  int64_t ch = shape_[1], o = weight.shape()[0], cg = weight.shape()[1];
  if (groups <= 0 || ch % groups != 0 || o % groups != 0 || cg != ch / groups)
    throw ShapeError(what + ": the channels do not agree for " + std::to_string(groups) + " groups");
  if (window.ceil_mode) throw ShapeError(what + ": ceil_mode is for pools");
  size_t axes = static_cast<size_t>(ndim() - 2);
  Window g = filled(window, axes, std::vector<int64_t>(axes, 1), what);
  if (axes == 1) return unsqueeze(2).conv(weight.unsqueeze(2), bias, with_unit_height(g), groups).squeeze(2);
  if (axes == 2) {
    // Padding the same at both ends goes to conv2d, which decides how its input is stored; other
    // padding is a view of the input.
    bool same = symmetric(g.padding);
    Tensor x = same ? *this : pad(on_spatial_axes(g.padding));
    std::pair<int64_t, int64_t> p = same ? std::pair<int64_t, int64_t>{g.padding[0].first, g.padding[1].first} : std::pair<int64_t, int64_t>{0, 0};
    return x.conv2d(weight, bias, {g.stride[0], g.stride[1]}, p, {g.dilation[0], g.dilation[1]}, groups);
  }
  spatial_sizes(*this, what);
  if (is_symbolic()) throw ShapeError(what + ": three or more spatial axes need static sizes");
  return folded_conv(any_padding(g.padding) ? pad(on_spatial_axes(g.padding)) : *this, weight, bias, g, groups);
}

Tensor Tensor::conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias, const Window& window,
                              const std::vector<int64_t>& output_padding, int64_t groups) const {
  std::string what = of("conv_transpose", *this, weight);
  if (ndim() < 3 || weight.ndim() != ndim())
    throw ShapeError(what + ": needs an (N, C, S1..Sk) input and a (C, O/groups, K1..Kk) weight of the same rank");
  int64_t cin = shape_[1];
  if (groups <= 0 || cin % groups != 0 || weight.shape()[0] != cin)
    throw ShapeError(what + ": the weight's first axis must be the input's channels, a multiple of " + std::to_string(groups) + " groups");
  if (window.ceil_mode) throw ShapeError(what + ": ceil_mode is for pools");
  size_t axes = static_cast<size_t>(ndim() - 2);
  Window g = filled(window, axes, std::vector<int64_t>(axes, 1), what);
  std::vector<int64_t> op = output_padding.empty() ? std::vector<int64_t>(axes, 0) : output_padding;
  if (op.size() != axes) throw ShapeError(what + ": output_padding has " + std::to_string(op.size()) + " entries for " + std::to_string(axes) + " spatial axes");
  for (int64_t v : op)
    if (v < 0) throw ShapeError(what + ": output_padding must not be negative");
  if (axes == 1) {
    Window g2 = with_unit_height(g);
    return unsqueeze(2).conv_transpose(weight.unsqueeze(2), bias, g2, {0, op[0]}, groups).squeeze(2);
  }
  if (axes == 2) {
    // Padding (b, e) and output padding op cut [b, full + op - e) of the full output: padding b and
    // output padding op + b - e, or none and the rest cut from the end.
    int64_t extra[2], cut[2];
    for (size_t i = 0; i < 2; ++i) {
      int64_t more = op[i] + g.padding[i].first - g.padding[i].second;
      extra[i] = std::max<int64_t>(0, more), cut[i] = extra[i] - more;
    }
    Tensor out = conv_transpose2d(weight, bias, {g.stride[0], g.stride[1]}, {g.padding[0].first, g.padding[1].first}, {extra[0], extra[1]},
                                  groups, {g.dilation[0], g.dilation[1]});
    if (cut[0] == 0 && cut[1] == 0) return out;
    SymShape s = out.symbolic_shape();
    return out.shrink({{0, s[0]}, {0, s[1]}, {0, s[2].value() - cut[0]}, {0, s[3].value() - cut[1]}});
  }
  // The definition: the input spread out by the stride and padded by the kernel's reach less the
  // padding, convolved with the flipped kernel.
  if (is_symbolic()) throw ShapeError(what + ": three or more spatial axes need static sizes");
  Pads reach;
  for (size_t i = 0; i < axes; ++i) {
    int64_t r = g.dilation[i] * (weight.shape()[2 + i] - 1);
    if (r < g.padding[i].first || r + op[i] < g.padding[i].second)
      throw ShapeError(what + ": padding larger than the kernel's reach (" + std::to_string(r) + ") on spatial axis " + std::to_string(i));
    reach.emplace_back(r - g.padding[i].first, r - g.padding[i].second + op[i]);
  }
  int64_t out_ch = weight.shape()[1] * groups;
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != out_ch))
    throw ShapeError(what + ": the bias must have one value per output channel (" + std::to_string(out_ch) + "), not " + shape_to_string(bias->shape()));
  Tensor spread = detail::transposed_conv_input(*this, g.stride, reach);
  Tensor out = folded_conv(spread, detail::transposed_conv_weight(weight, groups), bias, Window{.stride = std::vector<int64_t>(axes, 1), .dilation = g.dilation}, groups);
  return out;
}

}  // namespace lathe
