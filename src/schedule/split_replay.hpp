// A chain of views replayed with one axis of the node under it split in blocks: the layout rules'
// way of reading a value stored in blocks (schedule/channel_blocks).
//
// A reader reaches a stored value through views (a PAD, a window's folds, a grouping reshape). To
// read the value from a copy in blocks of b along axis a, (.., n/b, b, ..), without dividing any
// index back into that axis, each view is rebuilt over the split node with the axis split too: a
// PAD or SHRINK gets a whole-range pair for the block's axis, an EXPAND or RESHAPE the split sizes
// (symbolic sizes travel as extra sources, as Tensor's views make them), a PERMUTE moves the block
// beside its index, a FLIP of the split axis reverses both its parts. A RESHAPE keeps the split where some output axis holds exactly the elements
// inside the split one (its inner axes' product) and b divides it; a copy a front end asked for
// (a plain CONTIGUOUS) is dropped, the split copy standing in for it. A step that cuts, pads or
// broadcasts the split axis, or mixes its blocks, cannot be replayed.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// Where a split lands: the axis of a step's output whose b innermost elements are the split's
/// (its block index the axis before it), and the step rebuilt (null when only asked where).
struct Replayed {
  size_t axis;
  UOpPtr node;
};

class SplitReplay {
 public:
  /// Over a graph's nodes' `shapes` and sizes as index expressions (`dims`).
  SplitReplay(const std::unordered_map<const UOp*, Shape>& shapes, const std::unordered_map<const UOp*, SymDims>& dims)
      : shapes_(shapes), dims_(dims) {}

  /// The view `u` replayed with its source's axis `a` split in blocks of `b`, rebuilt over `src`
  /// (that split source) where given; nothing where the step cannot keep the split whole.
  std::optional<Replayed> step(const UOpPtr& u, size_t a, int64_t b, const UOpPtr& src) const;

  /// `steps` (the operand first, each a view of the next) replayed over their base split at axis
  /// `a`: the operand's axis the split lands on, and the operand rebuilt over `split_base` where
  /// given.
  std::optional<Replayed> chain(const std::vector<UOpPtr>& steps, size_t a, int64_t b, const UOpPtr& split_base) const;

 private:
  const std::unordered_map<const UOp*, Shape>& shapes_;
  const std::unordered_map<const UOp*, SymDims>& dims_;
};

}  // namespace lathe
