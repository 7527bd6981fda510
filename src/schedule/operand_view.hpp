// A product's operand seen down to its base: the layout rules (schedule/column_blocks,
// schedule/channel_blocks) ask which of the product's axes each operand reads, to find a filter's
// output channels (its columns) and the input channels both operands sum over.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// The product a sum reduces: REDUCE_AXIS(ADD) of MUL, through the cast to the sum's wider type
/// (float16's sum in float32); null for any other node.
const UOp* product_summed(const UOp& sum);

/// A CAST to a wider type of the same values (int8 to the int32 conv2d multiplies them in): the
/// walks below a product's operand go through it to the value it widens.
inline bool widening_cast(const UOp& u) { return u.op() == Ops::CAST && u.src(0)->dtype().itemsize() < u.dtype().itemsize(); }

/// An operand of a product seen down to its base: the nodes walked (the operand first) and, for
/// each axis of the base, the product's axis it is read along (-1: an axis of size 1, or one the
/// views drop or broadcast).
struct OperandView {
  std::vector<UOpPtr> steps;  // the operand, of the product's shape, first
  UOpPtr base;
  std::vector<int64_t> axis_in_product;
};

/// `operand` walked down through EXPAND, PERMUTE, widening casts and RESHAPEs that only add or drop
/// axes of size 1; its base is the first node that is none of those.
OperandView view_of(const UOpPtr& operand, const std::unordered_map<const UOp*, Shape>& shapes);

/// Whether operand `v` is read along the product's axis `axis`.
bool reads(const OperandView& v, int64_t axis);

/// A filter's columns (a convolution's output channels): the one kept axis of a product of `rank`
/// axes that `w` reads and `x` does not, given `w` reads one of the `summed` axes.
std::optional<int64_t> filter_columns(const OperandView& w, const OperandView& x, const std::vector<int64_t>& summed, int64_t rank);

}  // namespace lathe
