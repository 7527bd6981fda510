#include "schedule/split_reduction.hpp"

#include <algorithm>
#include <vector>

namespace lathe {
namespace {

constexpr int64_t kSplitMinElements = 1 << 16;
constexpr int64_t kSplitMaxOutputs = 32;

int64_t split_factor(int64_t reduced) {
  for (int64_t p = 1024; p >= 16; --p)
    if (reduced % p == 0) return p;
  return 1;
}

UOpPtr with_shape(Ops op, const UOpPtr& src, std::vector<int64_t> arg, std::unordered_map<const UOp*, Shape>& shapes) {
  UOpPtr n = UOp::make(op, src->dtype(), {src}, std::move(arg));
  shapes[n.get()] = node_shape(*n, {&shapes.at(src.get())});
  return n;
}

}  // namespace

bool wants_split(const UOpPtr& u, const std::unordered_map<const UOp*, Shape>& shapes,
                 const std::unordered_map<const UOp*, SymDims>& sym_shapes) {
  if (u->op() != Ops::REDUCE_AXIS) return false;
  for (const UOpPtr& d : sym_shapes.at(u->src(0).get()))
    if (!d->is_const()) return false;  // sizes known only at run time: one kernel
  const Shape& in = shapes.at(u->src(0).get());
  int64_t reduced = 1;
  for (int64_t a : u->arg_as<ReduceArg>().axes) reduced *= in[a];
  return reduced >= kSplitMinElements && shape_numel(shapes.at(u.get())) <= kSplitMaxOutputs;
}

std::optional<std::pair<UOpPtr, UOpPtr>> split_reduction(const UOpPtr& u, std::unordered_map<const UOp*, Shape>& shapes) {
  const ReduceArg& ra = u->arg_as<ReduceArg>();
  const Shape& in = shapes.at(u->src(0).get());
  std::vector<int64_t> order, keep_shape;
  int64_t reduced = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
    if (std::find(ra.axes.begin(), ra.axes.end(), i) == ra.axes.end()) order.push_back(i), keep_shape.push_back(in[i]);
  for (int64_t a : ra.axes) order.push_back(a), reduced *= in[a];
  int64_t p = split_factor(reduced);
  if (p == 1) return std::nullopt;
  UOpPtr x = u->src(0);
  if (!std::is_sorted(order.begin(), order.end())) x = with_shape(Ops::PERMUTE, x, order, shapes);
  std::vector<int64_t> folded = keep_shape;
  folded.insert(folded.end(), {p, reduced / p});
  x = with_shape(Ops::RESHAPE, x, folded, shapes);
  int64_t k = static_cast<int64_t>(keep_shape.size());
  UOpPtr partials = UOp::make(Ops::REDUCE_AXIS, u->dtype(), {x}, ReduceArg{ra.op, {k + 1}});
  shapes[partials.get()] = node_shape(*partials, {&shapes.at(x.get())});
  UOpPtr total = UOp::make(Ops::REDUCE_AXIS, u->dtype(), {partials}, ReduceArg{ra.op, {k}});
  shapes[total.get()] = node_shape(*total, {&shapes.at(partials.get())});
  return std::make_pair(partials, with_shape(Ops::RESHAPE, total, shapes.at(u.get()), shapes));
}

}  // namespace lathe
