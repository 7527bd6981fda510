#include "tensor/transposed_phases.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tensor/direct_convolution.hpp"
#include "tensor/tap_groups.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {
namespace {

// The largest stride tried along an axis of one position, which cannot show it.
constexpr int64_t kMostUnseenStride = 16;

// A convolution of a spread input found: where its input lies under the convolution's input
// (`depth` nodes down its views), the stride, and the transposed convolution's padding.
struct Spread {
  DirectConvolution conv;
  size_t depth = 0;
  std::pair<int64_t, int64_t> stride{1, 1}, pad{0, 0};
};

// The stride candidates of an axis: `in` positions spread to `spread` ((in - 1) * s + 1); every
// stride up to `most` where one position leaves nothing to tell.
std::vector<int64_t> strides_for(int64_t in, int64_t spread, int64_t most) {
  std::vector<int64_t> all;
  if (in == 1)
    for (int64_t s = 1; s <= most; ++s) all.push_back(s);
  else if (in > 1 && spread > 1 && (spread - 1) % (in - 1) == 0)
    all.push_back((spread - 1) / (in - 1));
  return all;
}

// The spread input under the direct convolution `u` (stride 1, no padding of its own, no
// dilation), where there is one: conv_transpose2d's transposed_conv_input, its reach the amounts
// of the PAD on top (none where both are 0), rebuilt from the candidate to be sure.
std::optional<Spread> spread_under(const DirectConvolutions& convs, const UOpPtr& u) {
  std::optional<DirectConvolution> c = convs.match(u, [](const DirectConvolution& d) {
    return !d.unpadded && d.stride == std::pair<int64_t, int64_t>{1, 1} && d.dilation == std::pair<int64_t, int64_t>{1, 1};
  });
  if (!c) return std::nullopt;
  UOpPtr read = convs.input(u, *c);
  const Shape& ws = convs.shape(*convs.weight(u, *c));
  std::array<int64_t, 4> reach{0, 0, 0, 0};
  UOpPtr below = read;
  if (read->op() == Ops::PAD) {
    std::optional<std::array<int64_t, 4>> p = image_padding(*read);
    if (!p) return std::nullopt;
    reach = *p, below = read->src(0);
  }
  if (reach[0] > ws[2] - 1 || reach[2] > ws[3] - 1 || reach[1] < reach[0] || reach[3] < reach[2]) return std::nullopt;
  const Shape& bs = convs.shape(*below);
  std::vector<UOpPtr> down = views_down(read);
  for (size_t depth = 1; depth < down.size(); ++depth) {
    const Shape& xs = convs.shape(*down[depth]);
    if (xs.size() != 4 || xs[0] != bs[0] || xs[1] != bs[1]) continue;
    Tensor x = convs.tensor(down[depth], down[depth]);
    if (x.is_symbolic()) continue;
    for (int64_t sh : strides_for(xs[2], bs[2], kMostUnseenStride))
      for (int64_t sw : strides_for(xs[3], bs[3], kMostUnseenStride))
        if ((sh > 1 || sw > 1) && transposed_conv_input(x, {sh, sw}, {{reach[0], reach[1]}, {reach[2], reach[3]}}).uop() == read)
          return Spread{*c, depth, {sh, sw}, {ws[2] - 1 - reach[0], ws[3] - 1 - reach[2]}};
  }
  return std::nullopt;
}

}  // namespace

Tensor conv_transpose_by_phases(const Tensor& x, const Tensor& wt, std::pair<int64_t, int64_t> stride,
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
          y = xi.conv2d(sub, std::nullopt, {1, 1}, {ph.before, pw.before}, {1, 1}, groups);
        } else {
          y = xi.pad({{0, 0}, {0, 0}, {ph.before, ph.after}, {pw.before, pw.after}}).conv2d(sub, std::nullopt, {1, 1}, {0, 0}, {1, 1}, groups);
        }
      } else {  // no tap reaches the input: zeros
        y = Tensor::zeros({batch, o, ph.count, pw.count}, x.dtype());
      }
      cols.push_back(y.pad({{0, 0}, {0, 0}, {0, longest_h - ph.count}, {0, longest_w - pw.count}}));
    }
    rows.push_back(Tensor::stack(cols, -1).reshape({batch, o, longest_h, longest_w * s[1]}));
  }
  Tensor all = Tensor::stack(rows, 3).reshape({batch, o, longest_h * s[0], longest_w * s[1]});
  return all.shrink({{0, batch}, {0, o}, {0, outs[0]}, {0, outs[1]}});
}

std::vector<UOpPtr> transposed_phases_where_they_pay(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt) {
  if (outputs.empty()) return outputs;
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::vector<UOpPtr> sums = direct_sums(sink);
  if (sums.empty()) return outputs;
  DirectConvolutions convs(sink);
  std::unordered_map<const UOp*, Spread> found;
  std::unordered_set<const UOp*> chosen;
  for (const UOpPtr& u : sums) {
    std::optional<Spread> s = spread_under(convs, u);
    if (!s) continue;
    // The spread convolution's multiply-adds, of which the phases keep about 1 / (sh * sw).
    int64_t macs = 1, phases = s->stride.first * s->stride.second;
    for (int64_t d : convs.shape(*direct_product(*u))) macs *= d;
    if (macs - macs / phases >= phases * tap_part_macs(target, u->dtype())) found.emplace(u.get(), *s), chosen.insert(u.get());
  }
  return replace_sums(outputs, chosen, [&](const UOpPtr& source, const UOpPtr& now) {
    const Spread& s = found.at(source.get());
    Tensor x = convs.tensor(views_down(convs.input(source, s.conv))[s.depth], views_down(convs.input(now, s.conv))[s.depth]);
    Tensor wt = convs.tensor(convs.weight(source, s.conv), convs.weight(now, s.conv));
    const Shape& ys = convs.shape(*source);
    Tensor y = conv_transpose_by_phases(x, wt, s.stride, s.pad, {ys[2], ys[3]}, s.conv.groups);
    return Replacement{y.uop(), {x.uop().get(), wt.uop().get()}};
  }, rebuilt);
}

}  // namespace lathe::detail
