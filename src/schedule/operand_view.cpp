#include "schedule/operand_view.hpp"

#include <algorithm>

namespace lathe {
namespace {

// The sizes of `s` other than 1, in order.
Shape without_ones(const Shape& s) {
  Shape out;
  for (int64_t d : s)
    if (d != 1) out.push_back(d);
  return out;
}

}  // namespace

const UOp* product_summed(const UOp& sum) {
  if (sum.op() != Ops::REDUCE_AXIS || sum.arg_as<ReduceArg>().op != Ops::ADD) return nullptr;
  const UOp* p = sum.src(0).get();
  if (p->op() == Ops::CAST) p = p->src(0).get();
  return p->op() == Ops::MUL ? p : nullptr;
}

OperandView view_of(const UOpPtr& operand, const std::unordered_map<const UOp*, Shape>& shapes) {
  OperandView v;
  std::vector<int64_t> axes(shapes.at(operand.get()).size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  UOpPtr cur = operand;
  for (;;) {
    const Shape& out = shapes.at(cur.get());
    if (cur->op() == Ops::CAST) {
      // The same axes; a narrowing cast is the base (its narrower values are the ones copied).
      if (cur->src(0)->dtype().itemsize() > cur->dtype().itemsize()) break;
    } else if (cur->op() == Ops::EXPAND) {
      const Shape& in = shapes.at(cur->src(0).get());
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] == 1 && out[i] != 1) axes[i] = -1;
    } else if (cur->op() == Ops::PERMUTE) {
      const auto& order = cur->arg_as<std::vector<int64_t>>();
      std::vector<int64_t> below(axes.size());
      for (size_t i = 0; i < order.size(); ++i) below[static_cast<size_t>(order[i])] = axes[i];
      axes = std::move(below);
    } else if (cur->op() == Ops::RESHAPE && cur->src().size() == 1) {
      const Shape& in = shapes.at(cur->src(0).get());
      if (without_ones(in) != without_ones(out)) break;
      std::vector<int64_t> below;
      size_t j = 0;
      for (int64_t d : in) {
        if (d == 1) {
          below.push_back(-1);
          continue;
        }
        while (out[j] == 1) ++j;
        below.push_back(axes[j++]);
      }
      axes = std::move(below);
    } else {
      break;
    }
    v.steps.push_back(cur);
    cur = cur->src(0);
  }
  // An axis of size 1 is read along nothing, whether a view added it or the base has it.
  const Shape& base = shapes.at(cur.get());
  for (size_t i = 0; i < base.size(); ++i)
    if (base[i] == 1) axes[i] = -1;
  v.base = cur;
  v.axis_in_product = std::move(axes);
  return v;
}

bool reads(const OperandView& v, int64_t axis) {
  return std::find(v.axis_in_product.begin(), v.axis_in_product.end(), axis) != v.axis_in_product.end();
}

std::optional<int64_t> filter_columns(const OperandView& w, const OperandView& x, const std::vector<int64_t>& summed, int64_t rank) {
  std::optional<int64_t> column;
  bool sums = false;
  for (int64_t a = 0; a < rank; ++a) {
    bool is_summed = std::find(summed.begin(), summed.end(), a) != summed.end();
    if (is_summed) sums = sums || reads(w, a);
    else if (reads(w, a) && !reads(x, a)) {
      if (column) return std::nullopt;
      column = a;
    }
  }
  if (!sums) return std::nullopt;
  return column;
}

}  // namespace lathe
