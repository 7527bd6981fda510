// Transposed convolution (conv2d's adjoint), as convolutions.
//
// The definition: spread the input out by the stride (stride - 1 zeros between elements), pad it
// by the kernel's reach minus the padding, and convolve it with the flipped kernel whose in and out
// channels are swapped within each group. A strided one without dilation is computed at prepare as
// one convolution per output phase, multiplying no zeros, where that pays on the plan's Target
// (tensor/transposed_phases).

#include "tensor/tensor_util.hpp"

namespace lathe {

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
  for (int i = 0; i < 2; ++i) {
    if (s[i] <= 0 || d[i] <= 0) fail("strides and dilations must be positive");
    if (p[i] < 0 || op[i] < 0) fail("padding and output_padding must not be negative");
    int64_t r = d[i] * (weight.shape()[static_cast<size_t>(2 + i)] - 1);
    if (r - p[i] < 0) fail("padding " + std::to_string(p[i]) + " is larger than the kernel's reach " + std::to_string(r));
    reach.emplace_back(r - p[i], r - p[i] + op[i]);
  }
  Tensor wt = detail::transposed_conv_weight(weight, groups);
  return detail::transposed_conv_input(*this, {s[0], s[1]}, reach).conv2d(wt, bias, {1, 1}, {0, 0}, dilation, groups);
}

}  // namespace lathe
