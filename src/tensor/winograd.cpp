#include "tensor/winograd.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
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

// A convolution over three spatial axes as Tensor::conv computes it: conv2d over its input with
// the taps along depth folded into the batch and the channels (tensor_util's folded_input).
struct Fold {
  size_t depth = 0;     // where the folded 5-D node lies among the conv2d input's views
  bool padded = false;  // that node is a PAD of zeros (its source is the input) along D, H and W alone
  int64_t taps = 1;     // KD
  DepthSteps steps;
  std::array<std::pair<int64_t, int64_t>, 3> padding{};
};

// A direct 3x3 convolution that Winograd's method computes: where its operands lie, the output
// tile, and the fold of its depth where it has one.
struct Choice {
  DirectConvolution conv;
  int64_t tile;
  std::optional<Fold> fold;
};

// The direct 3x3 convolutions of a graph (conv2d's sum, as direct_conv2d builds it), each rebuilt
// by Winograd's method where that pays for the plan's Target.
class Rule {
 public:
  Rule(const UOpPtr& sink, const Target& target) : convs_(sink), target_(target) {
    for (const UOpPtr& u : toposort(sink))
      for (const UOpPtr& s : u->src()) ++readers_[s.get()];
  }

  // How `u` is computed by Winograd's method, where it is a direct 3x3 convolution of stride 1
  // that pays.
  std::optional<Choice> pays(const UOpPtr& u) const {
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
    Tensor x = input(read, read);
    // A fold over depth transforms each frame once (D' frames of C channels) where the folded
    // input holds P positions of KD C channels.
    std::optional<Fold> fold = folded(x.uop());
    double share = 1;
    if (fold) {
      const Shape& folded_shape = convs_.shape(*views_down(x.uop())[fold->depth]);
      share = static_cast<double>(folded_shape[0] * folded_shape[2]) / static_cast<double>(x.shape()[0] * fold->taps);
    }
    int64_t tile = winograd_tile(x, convs_.tensor(w, w), {1, 1}, d->padding, {1, 1}, 1, target_, share);
    if (tile == 0) return std::nullopt;
    return Choice{*d, tile, fold};
  }

  // The convolution `u` (as rebuilt, `now`: the same views over operands that may be rebuilt) by
  // Winograd's method.
  Replacement by_winograd(const UOpPtr& u, const Choice& choice, const UOpPtr& now) const {
    const DirectConvolution& d = choice.conv;
    UOpPtr read = convs_.input(u, d), w = convs_.weight(u, d);
    Tensor x = input(read, convs_.input(now, d)), weight = convs_.tensor(w, convs_.weight(now, d));
    if (choice.fold) {
      // The input under the fold (as rebuilt), its padding and taps along depth given to the
      // method that transforms each frame once; its output back in the folded batch.
      const Fold& f = *choice.fold;
      UOpPtr was = views_down(input(read, read).uop())[f.depth], is = views_down(x.uop())[f.depth];
      Tensor under = f.padded ? convs_.tensor(was->src(0), is->src(0)) : convs_.tensor(was, is);
      int64_t n = under.shape()[0], c = under.shape()[1], k = weight.shape()[0];
      Tensor y = winograd_conv3d(under, weight.reshape({k, c, f.taps, 3, 3}), std::nullopt, f.steps, f.padding,
                                 blocks_for(target_).convolution_input(c), choice.tile,
                                 !after_reduction(f.padded ? was->src(0) : was));
      Tensor made = y.permute({0, 2, 1, 3, 4}).reshape({n * y.shape()[2], k, y.shape()[3], y.shape()[4]});
      return Replacement{made.uop(), {under.uop().get(), weight.uop().get()}};
    }
    int64_t c = convs_.shape(*read)[1];
    // Its input in the blocks a direct convolution's is stored in (which its producer may share).
    UOpPtr made = winograd_conv2d(x, weight, std::nullopt, d.padding, blocks_for(target_).convolution_input(c),
                                  choice.tile, !after_reduction(input(read, read).uop()))
                      .uop();
    return Replacement{made, {x.uop().get(), weight.uop().get()}};
  }

  // The direct sum `sum` (a node pays accepted) is rebuilt by Winograd's method: its reduction
  // is no kernel's (the output transform, elementwise, computes what reads it).
  void rebuilds(const UOp& sum) { by_winograd_.insert(sum.src(0)->src(0).get()); }

 private:
  // The input the transform reads: `read` (as `now`), or what it copies where it is a plain copy
  // (the transform stores its own).
  Tensor input(const UOpPtr& read, const UOpPtr& now) const {
    return plain_copy(*read) ? convs_.tensor(read->src(0), now->src(0)) : convs_.tensor(read, now);
  }

  // Whether the kernel computing `x` (a convolution's input, in the source graph) is a
  // reduction's: x follows one through elementwise ops, reshapes and permutes, each read by x's
  // computation alone (a node other kernels read too, a residual, is stored by its own), and it is
  // not a convolution this rule rebuilds. That kernel runs its pixels as one loop where it stores
  // them densely, and as rows of a padded width where it writes a padded buffer's interior:
  // DenseNet-121's 1x1 convolutions took 7-11% longer so than the transform's gates cost
  // (docs/decisions/winograd-input-read-from-a-padded-copy.md).
  bool after_reduction(const UOpPtr& x) const {
    std::vector<UOpPtr> todo{x};
    std::unordered_set<const UOp*> seen;
    while (!todo.empty()) {
      UOpPtr u = todo.back();
      todo.pop_back();
      if (!seen.insert(u.get()).second || (u != x && readers_.at(u.get()) > 1) || by_winograd_.count(u.get())) continue;
      if (u->op() == Ops::REDUCE_AXIS) return true;
      if (is_alu(u->op()) || u->op() == Ops::CAST || u->op() == Ops::RESHAPE || u->op() == Ops::PERMUTE)
        for (const UOpPtr& s : u->src()) todo.push_back(s);
    }
    return false;
  }

  // The fold of `flat`, a 3x3 convolution's input (N P, C KD, H, W), where it is a 5-D node's
  // (N, C, D', H, W) windows along D' as Tensor::conv folds them (so its stride and dilation along
  // D': the ones that build `flat` again), that node of whole channel blocks; none otherwise.
  std::optional<Fold> folded(const UOpPtr& flat) const {
    const Shape& fs = convs_.shape(*flat);
    int64_t lanes = blocks_for(target_).lanes;
    std::vector<UOpPtr> views = views_down(flat);
    for (size_t i = 1; i < views.size(); ++i) {
      const Shape& s = convs_.shape(*views[i]);
      if (s.size() != 5 || s[0] <= 0 || s[1] <= 0 || s[3] != fs[2] || s[4] != fs[3] || fs[0] % s[0] || fs[1] % s[1] ||
          lanes == 0 || s[1] % lanes)
        continue;
      int64_t kd = fs[1] / s[1], p = fs[0] / s[0], frames = s[2];
      Tensor x = convs_.tensor(views[i], views[i]);
      for (int64_t stride = 1; stride <= frames; ++stride)
        for (int64_t dilation = 1; dilation * (kd - 1) + 1 <= frames && (dilation == 1 || kd > 1); ++dilation) {
          if ((frames - dilation * (kd - 1) - 1) / stride + 1 != p || folded_input(x, {kd}, {stride}, {dilation}).uop() != flat)
            continue;
          Fold f{.depth = i, .taps = kd, .steps = {stride, dilation}};
          std::optional<std::vector<int64_t>> z = zero_padding(*views[i]);
          if (z && z->size() == 10 && (*z)[0] == 0 && (*z)[1] == 0 && (*z)[2] == 0 && (*z)[3] == 0)
            f.padded = true, f.padding = {{{(*z)[4], (*z)[5]}, {(*z)[6], (*z)[7]}, {(*z)[8], (*z)[9]}}};
          return f;
        }
    }
    return std::nullopt;
  }

  DirectConvolutions convs_;
  Target target_;
  std::unordered_map<const UOp*, int64_t> readers_;  // each node's readers in the graph
  std::unordered_set<const UOp*> by_winograd_;       // the reductions of the sums rebuilt
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

namespace {

// Cycles to read `floats` of weight: from the caches at WinogradPrices::weight_value a float,
// from memory where they outgrow the shared cache and memory is slower.
double weight_cycles(double floats, const WinogradCase& c, const WinogradPrices& p) {
  bool from_memory = floats * 4 > static_cast<double>(c.shared_cache_bytes);
  return floats * (from_memory ? std::max(p.weight_value, c.memory_value) : p.weight_value);
}

}  // namespace

double direct_cycles(const WinogradCase& c, const WinogradPrices& p) {
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double macs = 9.0 * static_cast<double>(c.batch * c.out_h * c.out_w) * ck;
  double share = (c.lanes >= 16 ? p.direct_efficiency_wide : p.direct_efficiency) * direct_tile_share(c.out_w, c.accumulators);
  return std::max(macs / (p.fma_units * static_cast<double>(c.lanes) * share), weight_cycles(9.0 * ck, c, p));
}

double winograd_cycles(const WinogradCase& c, int64_t tile, const WinogradPrices& p) {
  const Method& f = method_for(tile);
  double points = static_cast<double>(f.points());
  double tiles = static_cast<double>(c.batch * f.tiles_along(c.out_h) * f.tiles_along(c.out_w));
  double ck = static_cast<double>(c.in_channels * c.out_channels);
  double product = std::max(points * tiles * ck / (p.fma_units * static_cast<double>(c.lanes) * p.product_efficiency),
                            weight_cycles(points * ck, c, p));
  double in = static_cast<double>(c.in_channels) * c.input_share;
  double streamed = points * tiles * in * 4 / static_cast<double>(std::max<int64_t>(c.cache_bytes, 1));
  double value = p.transform_value * (1 + p.streamed_growth * std::log2(std::max(1.0, streamed)));
  double transforms = value * points * tiles * (in + static_cast<double>(c.out_channels));
  return product + transforms + p.kernel;
}

int64_t winograd_tile(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride,
                      std::pair<int64_t, int64_t> padding, std::pair<int64_t, int64_t> dilation, int64_t groups,
                      const Target& target, double input_share) {
  int64_t lanes = blocks_for(target).lanes, setting = winograd_setting();
  if (x.ndim() != 4 || weight.ndim() != 4 || lanes == 0 || setting == 0) return 0;
  int64_t c = x.shape()[1], k = weight.shape()[0];
  if (weight.shape()[2] != 3 || weight.shape()[3] != 3 || stride != std::pair<int64_t, int64_t>{1, 1} ||
      dilation != std::pair<int64_t, int64_t>{1, 1} || groups != 1)
    return 0;
  if (x.dtype() != dtypes::float32 || weight.dtype() != dtypes::float32 || c % lanes != 0 || k % lanes != 0) return 0;
  std::unordered_map<const UOp*, bool> memo;
  if (!made_of_constants(weight.uop(), memo)) return 0;  // else its transform would run every time
  WinogradCase facts{x.shape()[0],
                     c,
                     k,
                     x.shape()[2] + 2 * padding.first - 2,
                     x.shape()[3] + 2 * padding.second - 2,
                     lanes,
                     target.l2_bytes * std::max(target.threads, 1),
                     target.accumulators(),
                     input_share,
                     target.l3_bytes,
                     4.0 / std::max(target.memory_bytes_per_cycle, 1)};
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
  std::unordered_map<const UOp*, Choice> found;
  std::unordered_set<const UOp*> chosen;
  for (const UOpPtr& u : sums)
    if (auto d = rule.pays(u)) found.emplace(u.get(), *d), chosen.insert(u.get()), rule.rebuilds(*u);
  return replace_sums(
      outputs, chosen,
      [&](const UOpPtr& source, const UOpPtr& now) { return rule.by_winograd(source, found.at(source.get()), now); },
      rebuilt);
}

namespace {

// x (N, C, S1.., static or with a symbolic batch) in channel blocks of `block`, viewed as (N, C/B,
// B, S1'..): the layout copy split_in_blocks makes (N, C/B, S1.., B), which the kernel computing x
// stores directly (schedule/reader_layout), padded along S1.. by `pads` (before, after). Where
// `stored_padding` and every size is static, that padding is stored in the copy's layout too, a
// padded copy its producer writes in place (schedule/padded_in_place), so the transform reads it
// without gates; else it is read through them.
Tensor padded_blocks(const Tensor& x, int64_t block, const std::vector<std::pair<int64_t, int64_t>>& pads,
                     bool stored_padding) {
  SymDims dims;
  for (const SInt& d : x.symbolic_shape()) dims.push_back(d.uop());
  UOpPtr view = split_in_blocks(x.uop(), x.shape(), dims, 1, block, true);
  std::vector<std::pair<SInt, SInt>> around{{0, 0}, {0, 0}};
  for (const auto& [b, a] : pads) around.emplace_back(b, a);
  Shape split = x.shape();
  split[1] /= block;
  if (x.is_symbolic() || !stored_padding) {
    std::vector<UOpPtr> symbolic = sym_entries(x.symbolic_shape());
    if (!symbolic.empty()) symbolic.insert(symbolic.begin() + 2, nullptr);
    split.insert(split.begin() + 2, block);
    around.insert(around.begin() + 2, {0, 0});
    return Tensor(view, split, std::move(symbolic)).pad(around);
  }
  split.push_back(block);  // the copy's own layout
  around.emplace_back(0, 0);
  std::vector<int64_t> back{0, 1, static_cast<int64_t>(split.size()) - 1};  // (N, C/B, B, S1'..)
  for (int64_t i = 2; i + 1 < static_cast<int64_t>(split.size()); ++i) back.push_back(i);
  return Tensor(view->src(0), split).pad(around).contiguous().permute(back);
}

// A window's points: Bᵀ along its rows (axis `rows`, a 1-long axis after it), then along its
// columns (axis rows + 2, the same), of windows (..., win, 1, win, 1, C).
Tensor input_points(const Method& f, const Tensor& windows, int64_t rows) {
  Tensor bt = constant_matrix(f.input, f.window);
  return transformed(transformed(windows, rows, rows + 1, bt), rows + 2, rows + 3, bt);
}

// U (points, C, K) from g (9, 1, C, K), a 3x3 kernel's taps: G along the kernel's rows and its
// columns at once (the Kronecker product G x G over the 9 taps), a sum of 9 terms per point that the
// kernel storing U computes: it runs once, at prepare, and a first pass along the rows would be
// an intermediate of 3 x window x C x K the plan's arena holds (F(2x2) over 512 x 512 channels:
// 12 MB). U is stored (points, K/B, C, B), so the product's register tile, a block of output
// channels, reads its column of U over every input channel as one run rather than a line in each
// of C rows (ResNet-18's 256-channel product ran 2x faster so on AVX2).
Tensor weight_points(const Method& f, const Tensor& g, int64_t block) {
  int64_t win = f.window, c = g.shape()[2], k = g.shape()[3];
  std::vector<double> both;  // (points, 9): row a * window + b, column i * 3 + j holds G[a][i] G[b][j]
  for (int64_t a = 0; a < win; ++a)
    for (int64_t b = 0; b < win; ++b)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 3; ++j)
          both.push_back(f.weight[static_cast<size_t>(a * 3 + i)] * f.weight[static_cast<size_t>(b * 3 + j)]);
  Tensor u = transformed(g, 0, 1, constant_matrix(both, f.points())).reshape({f.points(), c, k});
  return Tensor(stored_in_blocks(u.uop(), u.shape(), 2, {0, 2, 1}, block), u.shape());
}

// Y (N, K, OH, OW) from M (N, tiles, points, K): Aᵀ along the points' rows, then columns, (N, TH,
// TW, t, t, K), to (N, K, t TH, t TW), cut to the output.
Tensor output_of(const Method& f, const Tensor& m, int64_t th, int64_t tw, int64_t oh, int64_t ow) {
  int64_t t = f.tile, win = f.window, k = m.shape()[3];
  SInt n = m.symbolic_shape()[0];
  Tensor at = constant_matrix(f.output, t);
  Tensor points = m.reshape({n, th, tw, win, 1, win, 1, k});
  return transformed(transformed(points, 3, 4, at), 5, 6, at)
      .reshape({n, th, tw, t, t, k})
      .permute({0, 5, 1, 3, 2, 4})
      .reshape({n, k, t * th, t * tw})
      .shrink({{0, n}, {0, k}, {0, oh}, {0, ow}});
}

}  // namespace

Tensor winograd_conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       std::pair<int64_t, int64_t> padding, int64_t block, int64_t tile, bool stored_padding) {
  const Method& f = method_for(tile);
  int64_t t = f.tile, win = f.window, pts = f.points();
  SInt n = x.symbolic_shape()[0];
  int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3], k = weight.shape()[0];
  int64_t oh = h + 2 * padding.first - 2, ow = w + 2 * padding.second - 2;
  int64_t th = f.tiles_along(oh), tw = f.tiles_along(ow), tiles = th * tw;
  // The input in channel blocks (N, C/B, B, H, W), padded so the tiles cover the output whole,
  // its windows at a stride of a tile: (N, C/B, B, TH, TW, win, win), to (N, TH, TW, win, 1, win, 1, C).
  Tensor blocked = padded_blocks(
      x, block, {{padding.first, t * th + 2 - h - padding.first}, {padding.second, t * tw + 2 - w - padding.second}},
      stored_padding);
  Tensor windows = sliding_windows(blocked, {win, win}, {t, t}, {1, 1}, "conv2d", 3)
                       .permute({0, 3, 4, 5, 6, 1, 2})
                       .reshape({n, th, tw, win, 1, win, 1, c});
  // V (N, tiles, points, C).
  Tensor v = input_points(f, windows, 3).reshape({n, tiles, pts, c});
  Tensor u = weight_points(f, weight.permute({2, 3, 1, 0}).reshape({9, 1, c, k}), block);
  // M (N, tiles, points, K): one product per point over the input channels, output channels innermost,
  // stored in the order the output transform reads it: a tile's points together, so the kernel that
  // applies both passes of Aᵀ reads each tile's window as one run (stored (points, N, tiles, K), its
  // 36 points were planes a tile apart, which 8-lane kernels read 4K-aliased at half the speed).
  Tensor m = (v.unsqueeze(-1) * u.reshape({1, 1, pts, c, k})).sum({3});
  Tensor y = output_of(f, m, th, tw, oh, ow);
  return bias ? y + bias->reshape({1, k, 1, 1}) : y;
}

Tensor winograd_conv3d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, DepthSteps depth,
                       const std::array<std::pair<int64_t, int64_t>, 3>& padding, int64_t block, int64_t tile,
                       bool stored_padding) {
  const Method& f = method_for(tile);
  int64_t t = f.tile, win = f.window, pts = f.points();
  if (x.ndim() != 5 || weight.ndim() != 5 || weight.shape()[1] != x.shape()[1] || weight.shape()[3] != 3 ||
      weight.shape()[4] != 3)
    throw ShapeError("winograd_conv3d of " + shape_to_string(x.shape()) + " with weight " +
                     shape_to_string(weight.shape()) +
                     ": needs an (N, C, D, H, W) input and a (K, C, KD, 3, 3) weight");
  int64_t n = x.shape()[0], c = x.shape()[1], d = x.shape()[2], h = x.shape()[3], w = x.shape()[4];
  int64_t k = weight.shape()[0], kd = weight.shape()[2];
  int64_t frames = d + padding[0].first + padding[0].second;
  int64_t p =
      window_counts({frames}, {kd}, {depth.stride}, {depth.dilation}, "winograd_conv3d", shape_to_string(x.shape()))[0];
  int64_t oh = h + padding[1].first + padding[1].second - 2, ow = w + padding[2].first + padding[2].second - 2;
  int64_t th = f.tiles_along(oh), tw = f.tiles_along(ow), tiles = th * tw;
  // The input in channel blocks (N, C/B, B, D, H, W), padded along D, and so the tiles cover the
  // output whole; each frame's windows at a stride of a tile, (N, C/B, B, D', TH, TW, win, win), to
  // (N, D', TH, TW, win, 1, win, 1, C).
  Tensor blocked = padded_blocks(x, block,
                                 {padding[0],
                                  {padding[1].first, t * th + 2 - h - padding[1].first},
                                  {padding[2].first, t * tw + 2 - w - padding[2].first}},
                                 stored_padding);
  Tensor windows = sliding_windows(blocked, {win, win}, {t, t}, {1, 1}, "winograd_conv3d", 4)
                       .permute({0, 3, 4, 5, 6, 7, 1, 2})
                       .reshape({n, frames, th, tw, win, 1, win, 1, c});
  // V (N, D', tiles, points, C): each frame transformed once. The product reads its KD frames
  // for each output position as windows along D': (N, P, tiles, points, KD, C).
  Tensor v = input_points(f, windows, 4).reshape({n, frames, tiles, pts, c});
  Tensor taps =
      sliding_windows(v.permute({0, 2, 3, 4, 1}), {kd}, {depth.stride}, {depth.dilation}, "winograd_conv3d", 4)
          .permute({0, 4, 1, 2, 5, 3});
  // U (points, KD C, K): the taps along D outside the channels, as the windows of V read them.
  Tensor u = weight_points(f, weight.permute({3, 4, 2, 1, 0}).reshape({9, 1, kd * c, k}), block);
  // M (N P, tiles, points, K): a product per point over the taps along D and the channels.
  Tensor m = (taps.unsqueeze(-1) * u.reshape({1, 1, 1, pts, kd, c, k})).sum({4, 5}).reshape({n * p, tiles, pts, k});
  Tensor y = output_of(f, m, th, tw, oh, ow).reshape({n, p, k, oh, ow}).permute({0, 2, 1, 3, 4});
  return bias ? y + bias->reshape({1, k, 1, 1, 1}) : y;
}

}  // namespace lathe::detail
