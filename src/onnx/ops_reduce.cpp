// ONNX reductions.
#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// Axes come from an attribute before opset 18 (13 for ReduceSum), from input 1 after; no axes
// means all, unless noop_with_empty_axes.
// `over_symbolic`: the reduction reads no size as a number (a sum, not a mean), so it may reduce
// an axis of symbolic size.
std::optional<std::vector<int64_t>> reduce_axes(const OpContext& c, bool over_symbolic) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axes = c.has(1) ? c.ints(1) : c.attr_ints("axes");
  if (axes.empty()) {
    if (c.attr_i("noop_with_empty_axes", 0)) return std::nullopt;
    for (int64_t i = 0; i < x.ndim(); ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) {
    a = axis_of(c, a, x.ndim());
    if (!over_symbolic && !x.symbolic_shape()[static_cast<size_t>(a)].is_static())
      c.fail("reducing axis " + std::to_string(a) + ", whose size is symbolic, is not supported");
  }
  return axes;
}

template <class F>
OpFn reduction(F f, bool over_symbolic = true) {
  return [f, over_symbolic](const OpContext& c) {
    const Tensor& x = c.in(0);
    auto axes = reduce_axes(c, over_symbolic);
    if (!axes) return V{x};
    bool keep = c.attr_i("keepdims", 1) != 0;
    return V{f(x, *axes, keep).cast(x.dtype())};
  };
}

OpFn arg_reduction(bool is_max) {
  return [is_max](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = axis_of(c, c.attr_i("axis", 0), x.ndim());
    bool keep = c.attr_i("keepdims", 1) != 0;
    Tensor src = x;
    // select_last_index: the last extreme is the first one of the flipped axis.
    bool last = c.attr_i("select_last_index", 0) != 0;
    if (last) src = src.flip({a});
    Tensor idx = (is_max ? src.argmax(a, keep) : src.argmin(a, keep)).cast(dtypes::int64);
    if (last) idx = Tensor::full({}, x.shape()[a] - 1, dtypes::int64) - idx;
    return V{idx};
  };
}

}  // namespace

void register_reduce_ops(std::map<std::string, OpFn>& t) {
  using Axes = const std::vector<int64_t>&;
  t["ReduceSum"] = reduction([](const Tensor& x, Axes a, bool k) { return x.sum(a, k); });
  t["ReduceMean"] = reduction([](const Tensor& x, Axes a, bool k) { return x.mean(a, k); }, false);
  t["ReduceMax"] = reduction([](const Tensor& x, Axes a, bool k) { return x.max(a, k); });
  t["ReduceMin"] = reduction([](const Tensor& x, Axes a, bool k) { return x.min(a, k); });
  t["ReduceProd"] = reduction([](const Tensor& x, Axes a, bool k) { return x.prod(a, k); });
  t["ReduceL1"] = reduction([](const Tensor& x, Axes a, bool k) { return x.abs().sum(a, k); });
  t["ReduceL2"] = reduction([](const Tensor& x, Axes a, bool k) { return (x * x).sum(a, k).sqrt(); });
  t["ReduceSumSquare"] = reduction([](const Tensor& x, Axes a, bool k) { return (x * x).sum(a, k); });
  t["ReduceLogSum"] = reduction([](const Tensor& x, Axes a, bool k) { return x.sum(a, k).log(); });
  t["ReduceLogSumExp"] = reduction([](const Tensor& x, Axes a, bool k) {
    Tensor m = x.max(a, true);
    Tensor r = (x - m).exp().sum(a, true).log() + m;
    return k ? r : r.reshape(x.sum(a, false).shape());
  }, false);
  t["ArgMax"] = arg_reduction(true);
  t["ArgMin"] = arg_reduction(false);
}

}  // namespace lathe::onnx::detail
