#include "tensor/winograd.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/error.hpp"
#include "schedule/blocks.hpp"
#include "schedule/reader_layout.hpp"
#include "schedule/shape.hpp"
#include "support/settings.hpp"
#include "tensor/direct_convolution.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {
namespace {

// A Winograd method F(m x m, 3x3): m x m outputs from (m + 2) x (m + 2) windows, through
// (m + 2)^2 products per input channel (its points).
struct Method {
  int64_t tile, window;
  std::vector<double> input;   // Bᵀ (window x window): a window to its transform, along one axis
  std::vector<double> weight;  // G (window x 3): a 3-tap kernel to the points
  std::vector<double> output;  // Aᵀ (tile x window): the points to the outputs
  int64_t points() const { return window * window; }
  int64_t tiles_along(int64_t n) const { return (n + tile - 1) / tile; }
};

// F(4x4, 3x3) at the points 0, 1, -1, 2, -2 and infinity.
const Method& f4() {
  static const Method m{4, 6,
                        {4, 0, -5, 0, 1, 0,  //
                         0, -4, -4, 1, 1, 0,  //
                         0, 4, -4, -1, 1, 0,  //
                         0, -2, -1, 2, 1, 0,  //
                         0, 2, -1, -2, 1, 0,  //
                         0, 4, 0, -5, 0, 1},
                        {1.0 / 4, 0, 0,  //
                         -1.0 / 6, -1.0 / 6, -1.0 / 6,  //
                         -1.0 / 6, 1.0 / 6, -1.0 / 6,  //
                         1.0 / 24, 1.0 / 12, 1.0 / 6,  //
                         1.0 / 24, -1.0 / 12, 1.0 / 6,  //
                         0, 0, 1},
                        {1, 1, 1, 1, 1, 0,  //
                         0, 1, -1, 2, -2, 0,  //
                         0, 1, 1, 4, 4, 0,  //
                         0, 1, -1, 8, -8, 1}};
  return m;
}
// F(2x2, 3x3) at the points 0, 1, -1 and infinity.
const Method& f2() {
  static const Method m{2, 4,
                        {1, 0, -1, 0,  //
                         0, 1, 1, 0,  //
                         0, -1, 1, 0,  //
                         0, 1, 0, -1},
                        {1, 0, 0,  //
                         0.5, 0.5, 0.5,  //
                         0.5, -0.5, 0.5,  //
                         0, 0, 1},
                        {1, 1, 1, 0,  //
                         0, 1, -1, -1}};
  return m;
}
const Method& method_for(int64_t tile) {
  if (tile != 2 && tile != 4) throw Error("winograd_conv2d: tile " + std::to_string(tile) + " (F(4x4, 3x3) or F(2x2, 3x3): 4 or 2)");
  return tile == 2 ? f2() : f4();
}

// A transform matrix (rows x columns, row-major) as a constant float32 tensor, made once per
// convolution for both of its passes: a plan reads it as a constant, so what is computed from it
// and a constant weight is computed once, at prepare.
Tensor constant_matrix(const std::vector<double>& m, int64_t rows) {
  std::vector<float> v(m.begin(), m.end());
  Tensor t = Tensor::from_vector(v, Shape{rows, static_cast<int64_t>(m.size()) / rows});
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

// The direct 3x3 convolutions of a graph (conv2d's sum, as direct_conv2d builds it), each rebuilt
// by Winograd's method where that pays for the plan's Target.
class Rule {
 public:
  Rule(const UOpPtr& sink, const Target& target) : convs_(sink), target_(target) {}

  // Where `u`'s operands lie and its output tile, where it is a direct 3x3 convolution of stride 1
  // that pays.
  std::optional<std::pair<DirectConvolution, int64_t>> pays(const UOpPtr& u) const {
    const Shape& ps = convs_.shape(*direct_product(*u));  // (N, groups, O, C, OH, OW, KH, KW)
    if (ps.size() != 8 || ps[1] != 1 || ps[6] != 3 || ps[7] != 3) return std::nullopt;
    std::optional<DirectConvolution> d = convs_.match(u, [&](const DirectConvolution& d) {
      UOpPtr read = convs_.input(u, d), w = convs_.weight(u, d);
      const Shape& rs = convs_.shape(*read);
      return d.stride == std::pair<int64_t, int64_t>{1, 1} && d.dilation == std::pair<int64_t, int64_t>{1, 1} &&
             read->dtype() == dtypes::float32 && w->dtype() == dtypes::float32 && rs[2] + 2 * d.padding.first >= 3 &&
             rs[3] + 2 * d.padding.second >= 3;
    });
    if (!d) return std::nullopt;
    UOpPtr read = convs_.input(u, *d), w = convs_.weight(u, *d);
    int64_t tile = winograd_tile(input(read, read), convs_.tensor(w, w), {1, 1}, d->padding, {1, 1}, 1, target_);
    if (tile == 0) return std::nullopt;
    return std::pair{*d, tile};
  }

  // The convolution `u` (as rebuilt, `now`: the same views over operands that may be rebuilt) by
  // Winograd's method F(tile x tile).
  Replacement by_winograd(const UOpPtr& u, const DirectConvolution& d, int64_t tile, const UOpPtr& now) const {
    UOpPtr read = convs_.input(u, d), w = convs_.weight(u, d);
    Tensor x = input(read, convs_.input(now, d)), weight = convs_.tensor(w, convs_.weight(now, d));
    int64_t c = convs_.shape(*read)[1];
    // Its input in the blocks a direct convolution's is stored in (which its producer may share).
    UOpPtr made = winograd_conv2d(x, weight, std::nullopt, d.padding, blocks_for(target_).convolution_input(c), tile).uop();
    return Replacement{made, {x.uop().get(), weight.uop().get()}};
  }

 private:
  // The input the transform reads: `read` (as `now`), or what it copies where it is a plain copy
  // (the transform stores its own).
  Tensor input(const UOpPtr& read, const UOpPtr& now) const {
    return plain_copy(*read) ? convs_.tensor(read->src(0), now->src(0)) : convs_.tensor(read, now);
  }

  DirectConvolutions convs_;
  Target target_;
};

}  // namespace

int64_t winograd_setting() {
  std::string v = settings::text("LATHE_WINOGRAD").value_or("1");
  if (v == "0" || v == "1" || v == "2" || v == "4") return std::stoll(v);
  throw Error("LATHE_WINOGRAD '" + v +
              "' is not 0 (the direct method), 1 (by cost, the default), 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3))");
}

double direct_tile_share(int64_t width, int64_t budget) {
  if (width >= budget || width <= 0) return 1;
  int64_t two_vectors = 1;  // rows of a two-vector tile: the widest divisor of the width in half the budget
  for (int64_t r = std::min(width, budget / 2); r >= 1; --r)
    if (width % r == 0) {
      two_vectors = r;
      break;
    }
  return static_cast<double>(std::max(width, 2 * two_vectors)) / static_cast<double>(budget);
}

double direct_cycles(const WinogradCase& c, const WinogradPrices& p) {
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double macs = 9.0 * static_cast<double>(c.batch * c.out_h * c.out_w) * ck;
  double share = (c.lanes >= 16 ? p.direct_efficiency_wide : p.direct_efficiency) * direct_tile_share(c.out_w, c.accumulators);
  return std::max(macs / (p.fma_units * static_cast<double>(c.lanes) * share), p.weight_value * 9.0 * ck);
}

double winograd_cycles(const WinogradCase& c, int64_t tile, const WinogradPrices& p) {
  const Method& f = method_for(tile);
  double points = static_cast<double>(f.points());
  double tiles = static_cast<double>(c.batch * f.tiles_along(c.out_h) * f.tiles_along(c.out_w));
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double product = std::max(points * tiles * ck / (p.fma_units * static_cast<double>(c.lanes) * p.product_efficiency),
                            p.weight_value * points * ck);
  double streamed = points * tiles * static_cast<double>(c.in_channels) * 4 / static_cast<double>(std::max<int64_t>(c.cache_bytes, 1));
  double value = p.transform_value * (1 + p.streamed_growth * std::log2(std::max(1.0, streamed)));
  double transforms = value * points * tiles * static_cast<double>(c.in_channels + c.out_channels);
  return product + transforms + p.kernel;
}

int64_t winograd_tile(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                      std::pair<int64_t, int64_t> dilation, int64_t groups, const Target& target) {
  int64_t lanes = blocks_for(target).lanes, setting = winograd_setting();
  if (x.ndim() != 4 || weight.ndim() != 4 || lanes == 0 || setting == 0) return 0;
  int64_t c = x.shape()[1], k = weight.shape()[0];
  if (weight.shape()[2] != 3 || weight.shape()[3] != 3 || stride != std::pair<int64_t, int64_t>{1, 1} ||
      dilation != std::pair<int64_t, int64_t>{1, 1} || groups != 1)
    return 0;
  if (x.dtype() != dtypes::float32 || weight.dtype() != dtypes::float32 || c % lanes != 0 || k % lanes != 0) return 0;
  std::unordered_map<const UOp*, bool> memo;
  if (!made_of_constants(weight.uop(), memo)) return 0;  // else its transform would run every time
  WinogradCase facts{x.shape()[0], c, k, x.shape()[2] + 2 * padding.first - 2, x.shape()[3] + 2 * padding.second - 2, lanes,
                     target.l2_bytes * std::max(target.threads, 1), target.accumulators()};
  if (facts.out_h <= 0 || facts.out_w <= 0) return 0;
  if (setting > 1) return setting;  // forced: F(2x2) or F(4x4) whatever it costs
  int64_t best = 0;
  double least = direct_cycles(facts);
  for (int64_t tile : {int64_t{4}, int64_t{2}})
    if (double cycles = winograd_cycles(facts, tile); cycles < least) best = tile, least = cycles;
  return best;
}

bool winograd_pays(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                   std::pair<int64_t, int64_t> dilation, int64_t groups, const Target& target) {
  return winograd_tile(x, weight, stride, padding, dilation, groups, target) != 0;
}

std::vector<UOpPtr> winograd_where_it_pays(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt) {
  if (outputs.empty() || blocks_for(target).lanes == 0 || winograd_setting() == 0) return outputs;
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::vector<UOpPtr> sums = direct_sums(sink);
  if (sums.empty()) return outputs;
  Rule rule(sink, target);
  std::unordered_map<const UOp*, std::pair<DirectConvolution, int64_t>> found;
  std::unordered_set<const UOp*> chosen;
  for (const UOpPtr& u : sums)
    if (auto d = rule.pays(u)) found.emplace(u.get(), *d), chosen.insert(u.get());
  return replace_sums(outputs, chosen, [&](const UOpPtr& source, const UOpPtr& now) {
    const auto& [d, tile] = found.at(source.get());
    return rule.by_winograd(source, d, tile, now);
  }, rebuilt);
}

Tensor winograd_conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       std::pair<int64_t, int64_t> padding, int64_t block, int64_t tile) {
  const Method& f = method_for(tile);
  int64_t t = f.tile, win = f.window, pts = f.points();
  SInt n = x.symbolic_shape()[0];
  int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3], k = weight.shape()[0];
  int64_t oh = h + 2 * padding.first - 2, ow = w + 2 * padding.second - 2;
  int64_t th = f.tiles_along(oh), tw = f.tiles_along(ow), tiles = th * tw;
  // The input in channel blocks (N, C/B, B, H, W), padded so the tiles cover the output whole,
  // its windows at a stride of a tile: (N, C/B, B, TH, TW, win, win), to (N, TH, TW, win, 1, win, 1, C).
  SymDims dims;
  for (const SInt& d : x.symbolic_shape()) dims.push_back(d.uop());
  std::vector<UOpPtr> symbolic = sym_entries(x.symbolic_shape());
  if (!symbolic.empty()) symbolic.insert(symbolic.begin() + 2, nullptr);
  Shape split{x.shape()[0], c / block, block, h, w};
  Tensor blocked = Tensor(split_in_blocks(x.uop(), x.shape(), dims, 1, block, true), split, std::move(symbolic))
                       .pad({{0, 0}, {0, 0}, {0, 0}, {padding.first, t * th + 2 - h - padding.first},
                             {padding.second, t * tw + 2 - w - padding.second}});
  Tensor windows = sliding_windows(blocked, {win, win}, {t, t}, {1, 1}, "conv2d", 3)
                       .permute({0, 3, 4, 5, 6, 1, 2})
                       .reshape({n, th, tw, win, 1, win, 1, c});
  // V (N, tiles, points, C): Bᵀ along the window's rows, then along its columns.
  Tensor bt = constant_matrix(f.input, win), at = constant_matrix(f.output, t);
  Tensor v = transformed(transformed(windows, 3, 4, bt), 5, 6, bt).reshape({n, tiles, pts, c});
  // U (points, C, K): G along the kernel's rows and its columns at once (the Kronecker product G x G
  // over the 9 taps), a sum of 9 terms per point that the kernel storing U computes: it runs once,
  // at prepare, and a first pass along the rows would be an intermediate of 3 x window x C x K
  // the plan's arena holds (F(2x2) over 512 x 512 channels: 12 MB). U is stored (points, K/B, C, B),
  // so the product's register tile, a block of output channels, reads its column of U over every
  // input channel as one run rather than a line in each of C rows (ResNet-18's 256-channel product
  // ran 2x faster so on AVX2).
  std::vector<double> both;  // (points, 9): row a * window + b, column i * 3 + j holds G[a][i] G[b][j]
  for (int64_t a = 0; a < win; ++a)
    for (int64_t b = 0; b < win; ++b)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 3; ++j) both.push_back(f.weight[static_cast<size_t>(a * 3 + i)] * f.weight[static_cast<size_t>(b * 3 + j)]);
  Tensor g = weight.permute({2, 3, 1, 0}).reshape({9, 1, c, k});
  Tensor u = transformed(g, 0, 1, constant_matrix(both, pts)).reshape({pts, c, k});
  u = Tensor(stored_in_blocks(u.uop(), u.shape(), 2, {0, 2, 1}, block), u.shape());
  // M (N, tiles, points, K): one product per point over the input channels, output channels innermost,
  // stored in the order the output transform reads it: a tile's points together, so the kernel that
  // applies both passes of Aᵀ reads each tile's window as one run (stored (points, N, tiles, K), its
  // 36 points were planes a tile apart, which 8-lane kernels read 4K-aliased at half the speed).
  Tensor m = (v.unsqueeze(-1) * u.reshape({1, 1, pts, c, k})).sum({3});
  // Y: Aᵀ along the points' rows, then columns: (N, TH, TW, t, t, K), to (N, K, t TH, t TW), cut to the output.
  Tensor points = m.reshape({n, th, tw, win, 1, win, 1, k});
  Tensor y = transformed(transformed(points, 3, 4, at), 5, 6, at)
                 .reshape({n, th, tw, t, t, k})
                 .permute({0, 5, 1, 3, 2, 4})
                 .reshape({n, k, t * th, t * tw})
                 .shrink({{0, n}, {0, k}, {0, oh}, {0, ow}});
  return bias ? y + bias->reshape({1, k, 1, 1}) : y;
}

}  // namespace lathe::detail
