#include "tensor/tap_groups.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tensor/direct_convolution.hpp"
#include "tensor/tensor_util.hpp"
#include "tensor/winograd.hpp"

namespace lathe::detail {
namespace {

int64_t group_work(const std::vector<TapGroup>& groups) {
  int64_t n = 0;
  for (const TapGroup& g : groups) n += g.work();
  return n;
}

// Whether the parts pay: most of the work multiplies padding, and what the parts save pays for
// their kernels (`part_macs` each).
bool split_by_taps(const std::vector<TapGroup>& rows, const std::vector<TapGroup>& cols, int64_t oh, int64_t ow, int64_t kh,
                   int64_t kw, int64_t macs_per_tap, int64_t part_macs) {
  int64_t parts = static_cast<int64_t>(rows.size() * cols.size());
  int64_t full = oh * kh * ow * kw, kept = group_work(rows) * group_work(cols);
  return parts > 1 && 2 * kept <= full && (full - kept) * macs_per_tap >= parts * part_macs;
}

// The convolution as a sum over groups of rows' taps by groups of columns' taps: each part a
// convolution without padding of the part of the image its taps read, through those taps only,
// padded with zeros to the whole output. Each tap's weight is read once. The part with the most
// work (the centre taps over the whole map), added last, is the kernel the others are added to
// (the schedule stores those in channel blocks for its epilogue: schedule/concat_blocks).
Tensor conv2d_by_tap_groups(const Tensor& x, const Tensor& weight, const std::vector<TapGroup>& rows, const std::vector<TapGroup>& cols,
                            std::pair<int64_t, int64_t> out_hw, const DirectConvolution& c) {
  auto image = [](const TapGroup& g, int64_t s, int64_t d, int64_t p) {  // the image rows the group reads
    return std::pair<SInt, SInt>(g.begin * s + g.first * d - p, (g.end - 1) * s + g.last * d - p + 1);
  };
  SInt n = x.symbolic_shape()[0];
  int64_t ch = x.shape()[1], o = weight.shape()[0], cg = weight.shape()[1];
  std::vector<std::pair<TapGroup, TapGroup>> parts;
  for (const TapGroup& r : rows)
    for (const TapGroup& q : cols) parts.emplace_back(r, q);
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
    return a.first.work() * a.second.work() < b.first.work() * b.second.work();
  });
  std::optional<Tensor> out;
  for (const auto& [r, q] : parts) {
    Tensor part = x.shrink({{0, n}, {0, ch}, image(r, c.stride.first, c.dilation.first, c.padding.first),
                            image(q, c.stride.second, c.dilation.second, c.padding.second)});
    Tensor w = weight.shrink({{0, o}, {0, cg}, {r.first, r.last + 1}, {q.first, q.last + 1}});
    Tensor y = part.conv2d(w, std::nullopt, c.stride, {0, 0}, c.dilation, c.groups);
    y = y.pad({{0, 0}, {0, 0}, {r.begin, out_hw.first - r.end}, {q.begin, out_hw.second - q.end}});
    out = out ? *out + y : y;
  }
  return *out;
}

// A convolution worth splitting: where its operands lie and its tap groups.
struct Split {
  DirectConvolution conv;
  std::vector<TapGroup> rows, cols;
};

}  // namespace

std::vector<TapGroup> tap_groups(int64_t size, int64_t k, int64_t s, int64_t d, int64_t p, int64_t o) {
  std::vector<TapGroup> groups;
  for (int64_t t = 0; t < k; ++t) {
    int64_t at = t * d - p;  // the row the tap reads for output position 0
    int64_t begin = at >= 0 ? 0 : (-at + s - 1) / s;
    int64_t end = at > size - 1 ? 0 : std::min(o, (size - 1 - at) / s + 1);
    if (begin >= end) continue;
    TapGroup* last = groups.empty() ? nullptr : &groups.back();
    if (last && last->last == t - 1 && last->begin == begin && last->end == end) last->last = t;
    else groups.push_back({t, t, begin, end});
  }
  return groups;
}

int64_t tap_part_macs(const Target& target, DType dtype) {
  const auto kKernelCycles = static_cast<int64_t>(WinogradPrices{}.kernel);  // the price the Winograd rule puts on a kernel
  DType computed = dtype.is_float() && dtype.itemsize() < 4 ? dtypes::float32 : dtype;
  return kKernelCycles * 2 * target.lanes(computed) * std::max(target.threads, 1);
}

std::vector<UOpPtr> tap_groups_where_they_pay(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt) {
  if (outputs.empty()) return outputs;
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::vector<UOpPtr> sums = direct_sums(sink);
  if (sums.empty()) return outputs;
  DirectConvolutions convs(sink);
  std::unordered_map<const UOp*, Split> found;
  std::unordered_set<const UOp*> chosen;
  for (const UOpPtr& u : sums) {
    // Padded alike on both sides (conv2d's padding), or by a PAD of zeros of its own (what is left
    // where conv2d dropped the taps that read only padding on one side).
    std::optional<DirectConvolution> c = convs.match(u, [&](const DirectConvolution& d) { return d.unpadded || image_padding(*convs.input(u, d)); });
    if (!c) continue;
    if (!c->unpadded) {  // the taps read the rows and columns before as padding; the output's size says what is after
      std::array<int64_t, 4> p = *image_padding(*convs.input(u, *c));
      c->unpadded = true, c->padding = {p[0], p[2]};
    }
    const Shape& xs = convs.shape(*convs.input(u, *c));
    const Shape& ws = convs.shape(*convs.weight(u, *c));
    const Shape& ys = convs.shape(*u);  // (N, O, OH, OW)
    Split s{*c, tap_groups(xs[2], ws[2], c->stride.first, c->dilation.first, c->padding.first, ys[2]),
            tap_groups(xs[3], ws[3], c->stride.second, c->dilation.second, c->padding.second, ys[3])};
    if (split_by_taps(s.rows, s.cols, ys[2], ys[3], ws[2], ws[3], ws[0] * ws[1], tap_part_macs(target, u->dtype())))
      found.emplace(u.get(), std::move(s)), chosen.insert(u.get());
  }
  return replace_sums(outputs, chosen, [&](const UOpPtr& source, const UOpPtr& now) {
    const Split& s = found.at(source.get());
    Tensor x = convs.tensor(convs.input(source, s.conv), convs.input(now, s.conv));
    Tensor w = convs.tensor(convs.weight(source, s.conv), convs.weight(now, s.conv));
    const Shape& ys = convs.shape(*source);
    return Replacement{conv2d_by_tap_groups(x, w, s.rows, s.cols, {ys[2], ys[3]}, s.conv).uop(), {x.uop().get(), w.uop().get()}};
  }, rebuilt);
}

}  // namespace lathe::detail
