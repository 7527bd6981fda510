#include "tensor/winograd.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "support/settings.hpp"
#include "tensor/blocks.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {
namespace {

// F(4x4, 3x3) at the points 0, 1, -1, 2, -2 and infinity.
constexpr double kInput[6][6] = {  // Bᵀ: a 6x6 window to its 6x6 transform, along one axis
    {4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
constexpr double kWeight[6][3] = {  // G: a 3-tap kernel to its 6 points
    {1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6},  {0, 0, 1}};
constexpr double kOutput[4][6] = {  // Aᵀ: 6 points to 4 outputs
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
constexpr int64_t kTile = 4, kWindow = 6, kPoints = kWindow * kWindow;

// A transform matrix as a constant float32 tensor, made once per convolution for both of its
// passes: a plan reads it as a constant, so what is computed from it and a constant weight is
// computed once, at prepare.
template <int R, int S>
Tensor constant_matrix(const double (&m)[R][S]) {
  std::vector<float> v;
  for (const auto& row : m)
    for (double x : row) v.push_back(static_cast<float>(x));
  Tensor t = Tensor::from_vector(v, Shape{R, S});
  t.buffer().set_constant();
  return t;
}

// t with its axis `from` (S long) mapped by m, a constant (R, S) matrix, to its axis `to` (1 long,
// R after): the sum over s of t's slice s times m's column s, broadcast along `to`. An elementwise
// sum of S terms, added in pairs (a shallow tree: short dependency chains in the kernel), which
// the kernel computing it evaluates once per element, its channels in vector lanes.
Tensor transformed(const Tensor& t, int64_t from, int64_t to, const Tensor& m) {
  int64_t r = m.shape()[0], s_len = m.shape()[1];
  SymShape all = t.symbolic_shape();
  Shape column(static_cast<size_t>(t.ndim()), 1);
  column[static_cast<size_t>(to)] = r;
  std::vector<Tensor> terms;
  for (int64_t s = 0; s < s_len; ++s) {
    std::vector<std::pair<SInt, SInt>> slice;
    for (const SInt& d : all) slice.emplace_back(SInt(0), d);
    slice[static_cast<size_t>(from)] = {SInt(s), SInt(s + 1)};
    terms.push_back(t.shrink(slice) * m.shrink({{0, r}, {s, s + 1}}).reshape(column));
  }
  return sum_in_pairs(std::move(terms));
}

int64_t tiles_along(int64_t n) { return (n + kTile - 1) / kTile; }

}  // namespace

double direct_cycles(const WinogradCase& c, const WinogradPrices& p) {
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double macs = 9.0 * static_cast<double>(c.batch * c.out_h * c.out_w) * ck;
  return std::max(macs / (p.fma_units * static_cast<double>(c.lanes) * p.direct_efficiency), p.weight_value * 9.0 * ck);
}

double winograd_cycles(const WinogradCase& c, const WinogradPrices& p) {
  double tiles = static_cast<double>(c.batch * tiles_along(c.out_h) * tiles_along(c.out_w));
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double product = std::max(kPoints * tiles * ck / (p.fma_units * static_cast<double>(c.lanes) * p.product_efficiency),
                            p.weight_value * kPoints * ck);
  double transforms = p.transform_value * kPoints * tiles * static_cast<double>(c.in_channels + c.out_channels);
  return product + transforms + p.kernel;
}

bool winograd_pays(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                   std::pair<int64_t, int64_t> dilation, int64_t groups, int64_t lanes) {
  if (x.ndim() != 4 || weight.ndim() != 4 || lanes == 0 || !settings::flag("LATHE_WINOGRAD", true)) return false;
  int64_t c = x.shape()[1], k = weight.shape()[0];
  if (weight.shape()[2] != 3 || weight.shape()[3] != 3 || stride != std::pair<int64_t, int64_t>{1, 1} ||
      dilation != std::pair<int64_t, int64_t>{1, 1} || groups != 1)
    return false;
  if (x.dtype() != dtypes::float32 || weight.dtype() != dtypes::float32 || c % lanes != 0 || k % lanes != 0) return false;
  std::unordered_map<const UOp*, bool> memo;
  if (!made_of_constants(weight.uop(), memo)) return false;  // else its transform would run every time
  WinogradCase facts{x.shape()[0], c, k, x.shape()[2] + 2 * padding.first - 2, x.shape()[3] + 2 * padding.second - 2, lanes};
  return facts.out_h > 0 && facts.out_w > 0 && winograd_cycles(facts) < direct_cycles(facts);
}

Tensor winograd_conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       std::pair<int64_t, int64_t> padding, int64_t lanes) {
  SInt n = x.symbolic_shape()[0];
  int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3], k = weight.shape()[0];
  int64_t oh = h + 2 * padding.first - 2, ow = w + 2 * padding.second - 2;
  int64_t th = tiles_along(oh), tw = tiles_along(ow), tiles = th * tw;
  // The input in channel blocks (N, C/B, B, H, W), padded so the tiles cover the output whole,
  // its 6x6 windows at a stride of 4: (N, C/B, B, TH, TW, 6, 6), to (N, TH, TW, 6, 1, 6, 1, C).
  Tensor blocked = stored_in_split_blocks(x, 1, lanes, 1)
                       .pad({{0, 0}, {0, 0}, {0, 0}, {padding.first, kTile * th + 2 - h - padding.first},
                             {padding.second, kTile * tw + 2 - w - padding.second}});
  Tensor windows = sliding_windows(blocked, {kWindow, kWindow}, {kTile, kTile}, {1, 1}, "conv2d", 3)
                       .permute({0, 3, 4, 5, 6, 1, 2})
                       .reshape({n, th, tw, kWindow, 1, kWindow, 1, c});
  // V (N, tiles, 36, C): Bᵀ along the window's rows, then along its columns.
  Tensor bt = constant_matrix(kInput), g6 = constant_matrix(kWeight), at = constant_matrix(kOutput);
  Tensor v = transformed(transformed(windows, 3, 4, bt), 5, 6, bt).reshape({n, tiles, kPoints, c});
  // U (36, C, K), stored: Gᵀ along the kernel's rows, then its columns.
  Tensor g = weight.permute({2, 3, 1, 0}).reshape({3, 1, 3, 1, c, k});
  Tensor u = transformed(transformed(g, 0, 1, g6), 2, 3, g6).reshape({kPoints, c, k}).contiguous();
  // M (36, N, tiles, K): one product per point over the input channels, output channels innermost.
  Tensor m = (v.permute({2, 0, 1, 3}).unsqueeze(-1) * u.reshape({kPoints, 1, 1, c, k})).sum({3});
  // Y: Aᵀ along the points' rows, then columns: (N, TH, TW, 4, 4, K), to (N, K, 4TH, 4TW), cut to the output.
  Tensor points = m.permute({1, 2, 0, 3}).reshape({n, th, tw, kWindow, 1, kWindow, 1, k});
  Tensor y = transformed(transformed(points, 3, 4, at), 5, 6, at)
                 .reshape({n, th, tw, kTile, kTile, k})
                 .permute({0, 5, 1, 3, 2, 4})
                 .reshape({n, k, kTile * th, kTile * tw})
                 .shrink({{0, n}, {0, k}, {0, oh}, {0, ow}});
  return bias ? y + bias->reshape({1, k, 1, 1}) : y;
}

}  // namespace lathe::detail
