// Transposed convolution (conv2d's adjoint), as convolutions.
//
// The definition: spread the input out by the stride (stride - 1 zeros between elements), pad it
// by the kernel's reach minus the padding, and convolve it with the flipped kernel whose in and out
// channels are swapped within each group. A strided one without dilation multiplies no zeros: it is
// one convolution per output phase (by_phases below), interleaved.
#include <algorithm>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

// A strided 2-D transposed convolution without dilation as one convolution per output phase, with
// no zeros multiplied: along an axis, output y = s*Y + r of the correlation of the spread input
// (left padding L = K - 1 - pad) with the flipped kernel `wt` takes only the taps k = k0 + s*m,
// k0 = (L - r) mod s, which read input Y + base + m, base = (r + k0 - L) / s: a convolution of the
// input (cut or padded to what it reads) with wt[k0::s]. The phases' outputs are interleaved
// (stacked innermost), padded to the longest phase and cut to the output.
Tensor by_phases(const Tensor& x, const Tensor& wt, const std::optional<Tensor>& bias, std::pair<int64_t, int64_t> stride,
                 std::pair<int64_t, int64_t> pad, std::pair<int64_t, int64_t> out_size, int64_t groups) {
  struct Phase {
    int64_t k0, taps, count, start, end, before, after;  // taps read; outputs; input [start, end) padded by (before, after)
  };
  int64_t s[2] = {stride.first, stride.second}, pads[2] = {pad.first, pad.second}, outs[2] = {out_size.first, out_size.second};
  auto phase = [&](int ax, int64_t r) {
    int64_t in = x.shape()[static_cast<size_t>(2 + ax)], k = wt.shape()[static_cast<size_t>(2 + ax)], st = s[ax];
    int64_t left = k - 1 - pads[ax], o = outs[ax];
    Phase p{};
    p.k0 = ((left - r) % st + st) % st;
    p.taps = p.k0 < k ? (k - p.k0 + st - 1) / st : 0;
    p.count = r < o ? (o - r + st - 1) / st : 0;
    int64_t base = (r + p.k0 - left) / st, last = p.count - 1 + base + p.taps - 1;  // input positions read: [base, last]
    p.start = std::clamp<int64_t>(base, 0, in), p.end = std::clamp<int64_t>(last + 1, p.start, in);
    p.before = p.start - base, p.after = last + 1 - p.end;
    return p;
  };
  int64_t batch = x.shape()[0], o = wt.shape()[0];
  int64_t longest_h = (outs[0] + s[0] - 1) / s[0], longest_w = (outs[1] + s[1] - 1) / s[1];
  std::vector<Tensor> rows;
  for (int64_t rh = 0; rh < s[0]; ++rh) {
    std::vector<Tensor> cols;
    for (int64_t rw = 0; rw < s[1]; ++rw) {
      Phase ph = phase(0, rh), pw = phase(1, rw);
      Tensor y;
      if (ph.taps && pw.taps && ph.count && pw.count && ph.start < ph.end && pw.start < pw.end) {
        Tensor sub = wt.slice(2, ph.k0, std::nullopt, s[0]).slice(3, pw.k0, std::nullopt, s[1]);
        Tensor xi = x.shrink({{0, batch}, {0, x.shape()[1]}, {ph.start, ph.end}, {pw.start, pw.end}});
        if (ph.before == ph.after && pw.before == pw.after) {
          y = xi.conv2d(sub, bias, {1, 1}, {ph.before, pw.before}, {1, 1}, groups);
        } else {
          y = xi.pad({{0, 0}, {0, 0}, {ph.before, ph.after}, {pw.before, pw.after}}).conv2d(sub, bias, {1, 1}, {0, 0}, {1, 1}, groups);
        }
      } else {  // no tap reaches the input: the bias alone
        y = Tensor::zeros({batch, o, ph.count, pw.count}, x.dtype());
        if (bias) y = y + bias->reshape({1, o, 1, 1});
      }
      cols.push_back(y.pad({{0, 0}, {0, 0}, {0, longest_h - ph.count}, {0, longest_w - pw.count}}));
    }
    rows.push_back(Tensor::stack(cols, -1).reshape({batch, o, longest_h, longest_w * s[1]}));
  }
  Tensor all = Tensor::stack(rows, 3).reshape({batch, o, longest_h * s[0], longest_w * s[1]});
  return all.shrink({{0, batch}, {0, o}, {0, outs[0]}, {0, outs[1]}});
}

}  // namespace

Tensor detail::transposed_conv_input(const Tensor& x, const std::vector<int64_t>& stride, const std::vector<std::pair<int64_t, int64_t>>& reach) {
  int64_t batch = x.shape()[0], ch = x.shape()[1];
  Shape split{batch, ch}, folded{batch, ch};
  std::vector<std::pair<SInt, SInt>> spread{{0, 0}, {0, 0}}, trim{{0, batch}, {0, ch}}, pads{{0, 0}, {0, 0}};
  for (size_t i = 0; i < stride.size(); ++i) {
    int64_t in = x.shape()[2 + i];
    split.insert(split.end(), {in, 1});
    spread.insert(spread.end(), {{0, 0}, {0, stride[i] - 1}});
    folded.push_back(in * stride[i]);
    trim.emplace_back(0, (in - 1) * stride[i] + 1);
    pads.emplace_back(reach[i].first, reach[i].second);
  }
  return x.reshape(split).pad(spread).reshape(folded).shrink(trim).pad(pads);
}

Tensor detail::transposed_conv_weight(const Tensor& w, int64_t groups) {
  int64_t cin = w.shape()[0], og = w.shape()[1], cg = cin / groups;
  Shape wg{groups, cg, og}, wt_shape{groups * og, cg};
  std::vector<int64_t> flip_axes;
  for (int64_t i = 2; i < w.ndim(); ++i) wg.push_back(w.shape()[i]), wt_shape.push_back(w.shape()[i]), flip_axes.push_back(i);
  return w.reshape(wg).transpose(1, 2).reshape(wt_shape).flip(flip_axes);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias, std::pair<int64_t, int64_t> stride,
                                std::pair<int64_t, int64_t> padding, std::pair<int64_t, int64_t> output_padding, int64_t groups,
                                std::pair<int64_t, int64_t> dilation) const {
  auto fail = [&](const std::string& why) {
    throw ShapeError("conv_transpose2d of " + shape_to_string(shape_) + " with weight " + shape_to_string(weight.shape()) + ": " + why);
  };
  if (ndim() != 4 || weight.ndim() != 4) fail("needs an (N, C, H, W) input and a (C, out/groups, kh, kw) weight");
  if (groups <= 0) fail("groups must be positive");
  int64_t cin = shape_[1], og = weight.shape()[1], out_ch = og * groups;
  if (weight.shape()[0] != cin || cin % groups != 0) fail("the weight's first axis must be the input's channels, a multiple of groups");
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != out_ch))
    fail("the bias must have one value per output channel (" + std::to_string(out_ch) + "), not " + shape_to_string(bias->shape()));
  int64_t s[2] = {stride.first, stride.second}, p[2] = {padding.first, padding.second};
  int64_t op[2] = {output_padding.first, output_padding.second}, d[2] = {dilation.first, dilation.second};
  std::vector<std::pair<int64_t, int64_t>> reach;
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    if (s[i] <= 0 || d[i] <= 0) fail("strides and dilations must be positive");
    if (p[i] < 0 || op[i] < 0) fail("padding and output_padding must not be negative");
    int64_t r = d[i] * (weight.shape()[static_cast<size_t>(2 + i)] - 1);
    if (r - p[i] < 0) fail("padding " + std::to_string(p[i]) + " is larger than the kernel's reach " + std::to_string(r));
    reach.emplace_back(r - p[i], r - p[i] + op[i]);
    out[i] = (shape_[static_cast<size_t>(2 + i)] - 1) * s[i] + op[i] + r + 1 - 2 * p[i];
  }
  Tensor wt = detail::transposed_conv_weight(weight, groups);
  if (d[0] == 1 && d[1] == 1 && (s[0] > 1 || s[1] > 1) && !is_symbolic()) return by_phases(*this, wt, bias, stride, padding, {out[0], out[1]}, groups);
  return detail::transposed_conv_input(*this, {s[0], s[1]}, reach).conv2d(wt, bias, {1, 1}, {0, 0}, dilation, groups);
}

}  // namespace lathe
