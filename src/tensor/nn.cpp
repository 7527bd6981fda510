// Compound ops: matmul, softmax, normalisation, convolution, pooling, attention. None is a
// special kernel: each is movement, elementwise and reduce ops the scheduler fuses.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "schedule/blocks.hpp"
#include "schedule/shape.hpp"
#include "tensor/tap_groups.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {
using detail::TapGroup;
using detail::tap_groups;
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
  // (..., n, k) @ (..., k, m): multiply as (..., n, 1, k) * (..., 1, m, k) and sum over k. (The
  // schedule stores a large product's right operand in column blocks: schedule/column_blocks.)
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
  Tensor p = e / e.sum({a}, true);
  // float32 probabilities below the smallest normal number are stored as 0 (they differ from the
  // exact ones by less than 1.2e-38): a subnormal one makes every multiply that reads it take the
  // x86 cores' slow path (Swin-T's shifted windows mask scores by -100, e^-100 is subnormal: the
  // product with the values ran 90x slower than on the unmasked blocks).
  return detail::subnormals_as_zero(p);
}

Tensor detail::subnormals_as_zero(const Tensor& t) {
  if (t.dtype() != dtypes::float32) return t;
  return (t < Tensor::scalar_like(t, static_cast<double>(std::numeric_limits<float>::min()), true)).where(Tensor::scalar_like(t, 0.0, true), t);
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

// Sliding windows of an (N, C, H, W) tensor: (N, C, OH, OW, KH, KW), a view of x.
Tensor windows_of(const Tensor& x, std::pair<int64_t, int64_t> kernel, std::pair<int64_t, int64_t> stride,
               std::pair<int64_t, int64_t> dilation, const char* op) {
  return detail::sliding_windows(x, {kernel.first, kernel.second}, {stride.first, stride.second},
                                 {dilation.first, dilation.second}, op);
}

// One axis as (.., K, O): repeat the axis e times, fold it to rows of n + d (or m n + d, where a
// stride longer than the kernel's reach needs rows longer than n + d: o*s of them), keep the
// first o*s of each row and every s-th of those: row i, column j holds x[j*s + i*d].
Tensor fold_axis(const Tensor& x, int64_t axis, int64_t k, int64_t s, int64_t d, int64_t o) {
  int64_t n = x.shape()[axis];
  Tensor t = x.transpose(axis, -1);
  SymShape all = t.symbolic_shape();  // the other axes may be symbolic (a batch); this one is not
  SymShape lead(all.begin(), all.end() - 1);
  int64_t row = n * std::max<int64_t>(1, (o * s - d + n - 1) / n) + d;
  int64_t e = (k * row + n - 1) / n;
  auto with = [&](std::initializer_list<int64_t> tail) {
    SymShape sh = lead;
    sh.insert(sh.end(), tail.begin(), tail.end());
    return sh;
  };
  auto keep = [&](const SymShape& sh, int64_t last_end) {
    std::vector<std::pair<SInt, SInt>> b;
    for (const SInt& v : sh) b.emplace_back(0, v);
    b.back() = {0, last_end};
    return b;
  };
  t = t.unsqueeze(-2).expand(with({e, n})).reshape(with({e * n}));
  t = t.shrink(keep(t.symbolic_shape(), k * row)).reshape(with({k, row}));
  t = t.shrink(keep(t.symbolic_shape(), o * s)).reshape(with({k, o, s}));
  t = t.shrink(keep(t.symbolic_shape(), 1)).reshape(with({k, o}));
  // (.., K, O) with the axis' old place holding O: move O back, K last.
  int64_t nd = t.ndim();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nd - 2; ++i) perm.push_back(i);
  perm.push_back(nd - 1);
  perm.push_back(nd - 2);
  t = t.permute(perm).transpose(axis, -2);
  return t;
}

}  // namespace

std::vector<int64_t> detail::window_counts(const std::vector<int64_t>& sizes, const std::vector<int64_t>& k,
                                           const std::vector<int64_t>& s, const std::vector<int64_t>& d, const char* op,
                                           const std::string& input) {
  std::vector<int64_t> out(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0) throw ShapeError(std::string(op) + ": kernel, stride and dilation must be positive");
    int64_t span = d[i] * (k[i] - 1) + 1;
    if (sizes[i] < span) {
      std::string dims;
      for (int64_t kk : k) dims += (dims.empty() ? "" : "x") + std::to_string(kk);
      throw ShapeError(std::string(op) + ": a " + dims + " window does not fit input " + input);
    }
    out[i] = (sizes[i] - span) / s[i] + 1;
  }
  return out;
}

Tensor detail::sliding_windows(const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                               const std::vector<int64_t>& d, const char* op, int64_t first) {
  std::vector<int64_t> sizes(x.shape().begin() + first, x.shape().begin() + first + static_cast<int64_t>(k.size()));
  std::vector<int64_t> out = window_counts(sizes, k, s, d, op, shape_to_string(x.shape()));
  // Each axis becomes (O_i) plus a trailing K_i (a view: no copies, no gathers).
  Tensor t = x;
  for (size_t i = 0; i < k.size(); ++i) t = fold_axis(t, first + static_cast<int64_t>(i), k[i], s[i], d[i], out[i]);
  return t;
}

namespace {

void require_nchw(const Tensor& x, const char* op) {
  if (x.ndim() != 4) throw ShapeError(std::string(op) + ": needs an (N, C, H, W) input, got " + shape_to_string(x.shape()));
}

// The taps of one axis from the first to the last that reads the image (its `groups`), and the
// padding those taps then need before and after (negative: rows no tap reads). The taps outside
// read only padding, so they add nothing (a dilated convolution on a small map, as a segmentation
// head's atrous pyramid at rate 24 on a 14x14 map, keeps only its centre tap); a tap between them
// that the stride steps over is kept (it only costs work). `first` is k where no tap reads it.
struct TapRange {
  int64_t first, last, before, after;
};
TapRange tap_range(const std::vector<TapGroup>& groups, int64_t size, int64_t k, int64_t s, int64_t d, int64_t p, int64_t o) {
  if (groups.empty()) return {k, k - 1, 0, 0};
  TapRange t{groups.front().first, groups.back().last, 0, 0};
  t.before = p - t.first * d;
  t.after = (o - 1) * s + (t.last - t.first) * d + 1 - size - t.before;
  return t;
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, std::pair<int64_t, int64_t> stride,
                      std::pair<int64_t, int64_t> padding, std::pair<int64_t, int64_t> dilation, int64_t groups) const {
  require_nchw(*this, "conv2d");
  if (weight.ndim() != 4) throw ShapeError("conv2d: needs an (O, C/groups, KH, KW) weight, got " + shape_to_string(weight.shape()));
  int64_t c = shape_[1], o = weight.shape()[0], cg = weight.shape()[1];
  if (groups <= 0 || c % groups != 0 || o % groups != 0 || cg != c / groups)
    throw ShapeError("conv2d: input " + shape_to_string(shape_) + " and weight " + shape_to_string(weight.shape()) +
                     " do not agree for " + std::to_string(groups) + " groups");
  SymShape dims = symbolic_shape();
  for (size_t i = 1; i < 4; ++i)
    if (!dims[i].is_static()) throw ShapeError("conv2d: only the batch axis may have a symbolic size, input is " + shape_to_string(dims));
  int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  if (bias && bias->shape() != Shape{o})
    throw ShapeError("conv2d: bias of shape " + shape_to_string(bias->shape()) + " for " + std::to_string(o) + " output channels");
  // Checked here, where the error can name the input and its padding: (OH, OW).
  std::vector<int64_t> out_hw = detail::window_counts(
      {shape_[2] + 2 * padding.first, shape_[3] + 2 * padding.second}, {kh, kw}, {stride.first, stride.second}, {dilation.first, dilation.second},
      "conv2d", shape_to_string(shape_) + " padded by (" + std::to_string(padding.first) + ", " + std::to_string(padding.second) + ")");
  // Where most of its multiply-adds read padding, the plan's prepare may compute it by groups of
  // taps (tensor/tap_groups.hpp); the taps that read only padding are dropped here.
  std::vector<TapGroup> row_taps = tap_groups(shape_[2], kh, stride.first, dilation.first, padding.first, out_hw[0]);
  std::vector<TapGroup> col_taps = tap_groups(shape_[3], kw, stride.second, dilation.second, padding.second, out_hw[1]);
  TapRange rows = tap_range(row_taps, shape_[2], kh, stride.first, dilation.first, padding.first, out_hw[0]);
  TapRange cols = tap_range(col_taps, shape_[3], kw, stride.second, dilation.second, padding.second, out_hw[1]);
  bool reach = rows.first < kh && cols.first < kw;  // else no tap reads the image: all are kept
  if (reach && (rows.last - rows.first + 1 < kh || cols.last - cols.first + 1 < kw)) {
    // Only the taps that read the image, over the image cut or padded to what they read.
    Tensor w = weight.shrink({{0, o}, {0, cg}, {rows.first, rows.last + 1}, {cols.first, cols.last + 1}});
    Tensor x = shrink({{0, dims[0]}, {0, c}, {std::max<int64_t>(0, -rows.before), shape_[2] + std::min<int64_t>(0, rows.after)},
                       {std::max<int64_t>(0, -cols.before), shape_[3] + std::min<int64_t>(0, cols.after)}});
    int64_t rb = std::max<int64_t>(0, rows.before), ra = std::max<int64_t>(0, rows.after);
    int64_t cb = std::max<int64_t>(0, cols.before), ca = std::max<int64_t>(0, cols.after);
    if (rb == ra && cb == ca) return x.conv2d(w, bias, stride, {rb, cb}, dilation, groups);
    return x.pad({{0, 0}, {0, 0}, {rb, ra}, {cb, ca}}).conv2d(w, bias, stride, {0, 0}, dilation, groups);
  }
  // A 1x1 filter with a stride reads every stride-th pixel: the same convolution at stride 1 over
  // a copy of those pixels, which the schedule stores (in channel blocks where it pays). The
  // pixels then run as one loop, tiled as a matrix product's rows (a 7x7 output is 49 rows, not
  // 7 runs of 7 a stride apart).
  if (kh == 1 && kw == 1 && (stride.first > 1 || stride.second > 1)) {
    Tensor x = pad({{0, 0}, {0, 0}, {padding.first, padding.first}, {padding.second, padding.second}});
    x = x.slice(2, 0, std::nullopt, stride.first).slice(3, 0, std::nullopt, stride.second).contiguous();
    return x.conv2d(weight, bias, {1, 1}, {0, 0}, {1, 1}, groups);
  }
  // Plain math. That a large convolution reads a stored input (so no fused work is repeated in
  // its innermost loop), how it is stored (padded, in channel blocks, or as it is with its padding
  // read through) and its weight (in blocks of output channels) the schedule decides for the
  // Target the plan is prepared for (schedule/channel_blocks, schedule/column_blocks); whether a
  // 3x3 one runs by Winograd's method, the plan's prepare (tensor/winograd.hpp).
  Tensor out = detail::direct_conv2d(*this, weight, stride, padding, dilation, groups);
  return bias ? out + bias->reshape({1, o, 1, 1}) : out;
}

Tensor detail::direct_conv2d(const Tensor& read, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                             std::pair<int64_t, int64_t> dilation, int64_t groups) {
  int64_t o = weight.shape()[0], cg = weight.shape()[1], kh = weight.shape()[2], kw = weight.shape()[3], og = o / groups;
  Tensor x = read.pad({{0, 0}, {0, 0}, {padding.first, padding.first}, {padding.second, padding.second}});
  Tensor win = windows_of(x, {kh, kw}, stride, dilation, "conv2d");  // (N, C, OH, OW, KH, KW)
  SInt batch = read.symbolic_shape()[0];
  int64_t oh = win.shape()[2], ow = win.shape()[3];
  Tensor xw = win.reshape({batch, groups, 1, cg, oh, ow, kh, kw});
  Tensor ww = weight.reshape({1, groups, og, cg, 1, 1, kh, kw});
  std::tie(xw, ww) = widen_for_products(xw, ww);
  return (xw * ww).sum({3, 6, 7}).reshape({batch, o, oh, ow});
}

Tensor Tensor::max_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride,
                          std::pair<int64_t, int64_t> padding) const {
  return detail::max_pool2d(*this, kernel, stride.value_or(kernel), {padding.first, padding.first}, {padding.second, padding.second});
}

Tensor detail::max_pool2d(const Tensor& input, std::pair<int64_t, int64_t> kernel, std::pair<int64_t, int64_t> stride,
                          std::pair<int64_t, int64_t> rows_padding, std::pair<int64_t, int64_t> columns_padding) {
  require_nchw(input, "max_pool2d");
  DType dt = input.dtype();
  double lowest = const_as_double(dt.min());  // -inf for floats
  std::vector<std::pair<SInt, SInt>> pads{{0, 0}, {0, 0}, {rows_padding.first, rows_padding.second}, {columns_padding.first, columns_padding.second}};
  // The schedule stores a computed input in channel blocks for it (schedule/channel_blocks).
  return windows_of(input.pad(pads, lowest), kernel, stride, {1, 1}, "max_pool2d").max({-2, -1});
}

Tensor Tensor::avg_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride,
                          std::pair<int64_t, int64_t> padding) const {
  require_nchw(*this, "avg_pool2d");
  std::pair<int64_t, int64_t> s = stride.value_or(kernel);
  Window w{.stride = {s.first, s.second}, .padding = {{padding.first, padding.first}, {padding.second, padding.second}}};
  return detail::avg_pool(*this, {kernel.first, kernel.second}, w, true, "avg_pool2d");
}

std::optional<Tensor> detail::attention(const Tensor& scores, const Tensor& values, std::optional<AttentionKeys> seen) {
  if (scores.ndim() < 2 || values.ndim() < 2 || scores.is_symbolic() || values.is_symbolic() || scores.dtype() != dtypes::float32 ||
      values.dtype() != dtypes::float32 || scores.numel() == 0 || values.numel() == 0 || scores.shape().back() != values.shape()[values.ndim() - 2])
    return std::nullopt;
  Shape lead = max_shape(broadcast_shapes(to_sym(Shape(scores.shape().begin(), scores.shape().end() - 2)),
                                          to_sym(Shape(values.shape().begin(), values.shape().end() - 2)), "attention"));
  auto with_lead = [&](const Tensor& t) {
    Shape ones(lead.size() + 2 - static_cast<size_t>(t.ndim()), 1), full = lead;
    ones.insert(ones.end(), t.shape().begin(), t.shape().end());
    full.insert(full.end(), t.shape().end() - 2, t.shape().end());
    return t.reshape(ones).expand(full);
  };
  Tensor s = with_lead(scores), v = with_lead(values);
  Shape out = s.shape();
  out.back() = v.shape().back();
  return Tensor(UOp::make(Ops::ATTENTION, dtypes::float32, {s.uop(), v.uop()}, AttentionArg{seen}), out);
}

Tensor detail::attention_scores(const Tensor& q, const Tensor& kt) {
  // (..., keys / 16, D, 16): the keys' axis in blocks, its block index before D.
  size_t rank = static_cast<size_t>(kt.ndim());
  std::vector<size_t> order;
  for (size_t a = 0; a + 2 < rank; ++a) order.push_back(a);
  order.insert(order.end(), {rank - 1, rank - 2});
  Tensor blocked(stored_in_blocks(kt.uop(), kt.shape(), rank - 1, order, kAttentionKeyBlock), kt.shape());
  return (q.unsqueeze(-1) * blocked.unsqueeze(-3)).sum({-2});
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value, bool is_causal) const {
  if (ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    throw ShapeError("scaled_dot_product_attention: query, key and value need at least 2 dimensions");
  // The plain graph: the attention rule (attention_rule.hpp) makes a causal one over float32 one
  // kernel that skips the keys past each query, and runs long ones a block of queries at a time.
  // With is_causal, query i sees keys 0..i: the keys past the last query are never read (static
  // sizes; a symbolic size reads as its maximum).
  Tensor k = key, v = value;
  int64_t queries = shape_[shape_.size() - 2], keys = key.shape()[key.ndim() - 2];
  if (is_causal && queries < keys && !key.is_symbolic() && !value.is_symbolic()) {
    keys = queries;
    k = key.slice(-2, 0, keys), v = value.slice(-2, 0, keys);
  }
  Tensor scores = matmul(k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(shape_.back())));
  if (is_causal) {
    Tensor mask = Tensor::arange(keys).reshape({1, keys}) <= Tensor::arange(queries).reshape({queries, 1});
    scores = mask.where(scores, Tensor::full({}, -std::numeric_limits<double>::infinity(), scores.dtype()));
  }
  return scores.softmax(-1).matmul(v);
}

}  // namespace lathe
