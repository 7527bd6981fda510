#include "tensor/direct_convolution.hpp"

#include <algorithm>

#include "ir/label.hpp"
#include "ir/label_computed.hpp"
#include "ir/toposort.hpp"
#include "schedule/operand_view.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {
namespace {

// The largest stride tried: a window that fits once fits at every larger stride, and each is a
// graph of its own (conv2d's views name it), so one output's strides are tried up to this.
constexpr int64_t kMostStride = 64;

// The (stride, dilation) pairs of one axis that give `out` windows of `k` taps over `size`
// positions padded by `pad` on each side. A single tap is tried at dilation 1 only (its
// dilation changes nothing but the graph: such a convolution is not matched).
std::vector<std::pair<int64_t, int64_t>> steps_for(int64_t size, int64_t k, int64_t pad, int64_t out) {
  std::vector<std::pair<int64_t, int64_t>> found;
  int64_t span = size + 2 * pad;
  for (int64_t d = 1; d == 1 || (k > 1 && d * (k - 1) < span); ++d)
    for (int64_t s = 1; s <= std::max<int64_t>(1, span); ++s) {
      int64_t reach = span - d * (k - 1);
      if (reach <= 0 || (reach - 1) / s + 1 < out || s > kMostStride) break;
      if ((reach - 1) / s + 1 == out) found.emplace_back(s, d);
    }
  return found;
}

// Whether direct_conv2d of `x` and `w` by `d` is the node `u`. A reading whose windows conv2d
// cannot build (a stride past what the views allow) is not it.
bool rebuilds(const UOpPtr& u, const Tensor& x, const Tensor& w, const DirectConvolution& d) {
  try {
    return direct_conv2d(x, w, d.stride, d.padding, d.dilation, d.groups).uop() == u;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::vector<UOpPtr> direct_sums(const UOpPtr& sink) {
  std::vector<UOpPtr> sums;
  for (const UOpPtr& u : toposort(sink))
    if (direct_product(*u)) sums.push_back(u);
  return sums;
}

std::vector<UOpPtr> replace_sums(const std::vector<UOpPtr>& outputs, const std::unordered_set<const UOp*>& chosen,
                                 const std::function<Replacement(const UOpPtr& sum, const UOpPtr& now)>& make, Rebuilt* rebuilt) {
  if (chosen.empty()) return outputs;
  std::unordered_map<const UOp*, UOpPtr> made;
  return rebuild(outputs, [&](const UOp&, const UOpPtr& source, const UOpPtr& source_now) {
    if (!chosen.count(source.get())) return source_now;
    auto [m, fresh] = made.emplace(source.get(), UOpPtr{});
    if (fresh) {
      Replacement r = make(source, source_now);
      std::vector<std::string> labels;
      for (const UOp* n : {source.get(), source->src(0).get(), direct_product(*source)})
        if (labels.empty()) labels = labels_of(*n);
      if (!labels.empty()) label_computed(r.made, r.inputs, labels);
      m->second = r.made;
      if (rebuilt) rebuilt->record(source, m->second);
    }
    return m->second;
  }, rebuilt);
}

std::vector<UOpPtr> views_down(const UOpPtr& operand) {
  std::vector<UOpPtr> out{operand};
  while (op_has(out.back()->op(), kMovement) || widening_cast(*out.back())) out.push_back(out.back()->src(0));
  return out;
}

std::optional<std::vector<int64_t>> zero_padding(const UOp& pad) {
  if (pad.op() != Ops::PAD || pad.src().size() < 2 || !pad.src(1)->is_const() || const_as_double(pad.src(1)->const_value()) != 0.0)
    return std::nullopt;
  std::vector<int64_t> p = pad.arg_as<std::vector<int64_t>>();
  if (pad.src().size() > 2) {  // the fill, then (before, after) per axis as sources
    p.clear();
    for (size_t i = 2; i < pad.src().size(); ++i)
      p.push_back(pad.src(i)->is_const() ? const_as_int(pad.src(i)->const_value()) : -1);
  }
  if (p.empty() || *std::min_element(p.begin(), p.end()) < 0) return std::nullopt;
  return p;
}

std::optional<std::array<int64_t, 4>> image_padding(const UOp& pad) {
  std::optional<std::vector<int64_t>> p = zero_padding(pad);
  if (!p || p->size() != 8 || (*p)[0] || (*p)[1] || (*p)[2] || (*p)[3]) return std::nullopt;
  return std::array<int64_t, 4>{(*p)[4], (*p)[5], (*p)[6], (*p)[7]};
}

const UOp* direct_product(const UOp& u) {
  if (u.op() != Ops::RESHAPE || u.src(0)->op() != Ops::RESHAPE || u.src(0)->src(0)->op() != Ops::REDUCE_AXIS) return nullptr;
  const UOp& sum = *u.src(0)->src(0);
  const auto& r = sum.arg_as<ReduceArg>();
  bool direct = r.op == Ops::ADD && r.axes == std::vector<int64_t>{3, 6, 7} && sum.src(0)->op() == Ops::MUL;
  return direct ? sum.src(0).get() : nullptr;
}

DirectConvolutions::DirectConvolutions(const UOpPtr& sink) : shapes_(graph_shapes(sink)), dims_(graph_sym_shapes(sink, shapes_)) {}

std::optional<DirectConvolution> DirectConvolutions::match(const UOpPtr& u, const std::function<bool(const DirectConvolution&)>& accept) const {
  const UOp* product = direct_product(*u);
  if (!product) return std::nullopt;
  const Shape& ps = shapes_.at(product);  // (N, groups, O/groups, C/groups, OH, OW, KH, KW)
  if (ps.size() != 8) return std::nullopt;
  int64_t groups = ps[1], og = ps[2], cg = ps[3], oh = ps[4], ow = ps[5], kh = ps[6], kw = ps[7];
  std::vector<UOpPtr> reads = views_down(product->src(0)), ws = views_down(product->src(1));
  for (size_t depth = 0; depth < reads.size(); ++depth) {
    const UOpPtr& n = reads[depth];
    const Shape& s = shapes_.at(n.get());
    if (s.size() != 4 || s[1] != groups * cg) continue;
    std::vector<DirectConvolution> ways{{.read_depth = depth}};
    if (std::optional<std::array<int64_t, 4>> p = image_padding(*n); p && (*p)[0] == (*p)[1] && (*p)[2] == (*p)[3])
      ways.insert(ways.begin(), {.read_depth = depth, .unpadded = true, .padding = {(*p)[0], (*p)[2]}});
    for (DirectConvolution way : ways) {
      UOpPtr read = way.unpadded ? n->src(0) : n;
      const Shape& rs = shapes_.at(read.get());
      for (size_t wd = 0; wd < ws.size(); ++wd) {
        if (shapes_.at(ws[wd].get()) != Shape{groups * og, cg, kh, kw}) continue;
        for (auto [sh, dh] : steps_for(rs[2], kh, way.padding.first, oh))
          for (auto [sw, dw] : steps_for(rs[3], kw, way.padding.second, ow)) {
            DirectConvolution d = way;
            d.w_depth = wd, d.stride = {sh, sw}, d.dilation = {dh, dw}, d.groups = groups;
            if (!accept(d)) continue;
            if (rebuilds(u, tensor(read, read), tensor(ws[wd], ws[wd]), d)) return d;
          }
      }
    }
  }
  return std::nullopt;
}

UOpPtr DirectConvolutions::input(const UOpPtr& u, const DirectConvolution& d) const {
  UOpPtr n = views_down(direct_product(*u)->src(0))[d.read_depth];
  return d.unpadded ? n->src(0) : n;
}

UOpPtr DirectConvolutions::weight(const UOpPtr& u, const DirectConvolution& d) const {
  return views_down(direct_product(*u)->src(1))[d.w_depth];
}

Tensor DirectConvolutions::tensor(const UOpPtr& u, const UOpPtr& now) const {
  const SymDims& d = dims_.at(u.get());
  std::vector<UOpPtr> symbolic(d.size());
  bool any = false;
  for (size_t i = 0; i < d.size(); ++i)
    if (!d[i]->is_const()) symbolic[i] = d[i], any = true;
  return any ? Tensor(now, shapes_.at(u.get()), std::move(symbolic)) : Tensor(now, shapes_.at(u.get()));
}

}  // namespace lathe::detail
