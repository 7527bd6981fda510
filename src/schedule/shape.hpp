// Shapes of tensor-graph nodes, derived from their sources and movement arguments.
//
// Tensor-graph conventions: BUFFER's arg is {buffer id, dims...}; CONST is a scalar (shape {});
// RESHAPE and EXPAND carry the new shape, PERMUTE the order, PAD {before0, after0, ...} with the
// pad value as its second source, SHRINK {start0, end0, ...}, FLIP one 0/1 flag per axis;
// REDUCE_AXIS keeps reduced axes as size 1.
#pragma once

#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

using Shape = std::vector<int64_t>;

/// The shape of `u` given its sources' shapes (in source order).
Shape node_shape(const UOp& u, const std::vector<const Shape*>& src_shapes);

/// Shapes of every node under `root`.
std::unordered_map<const UOp*, Shape> graph_shapes(const UOpPtr& root);

/// A shape as index expressions, one per axis (a CONST where the axis is static). Symbolic
/// movement ops carry their sizes as extra sources: RESHAPE and EXPAND one per axis, SHRINK
/// (start, end) per axis, PAD the pad value then (before, after) per axis; their args then hold
/// the maximum sizes only.
using SymDims = std::vector<UOpPtr>;

/// The symbolic shape of `u` given its sources' symbolic shapes and its own (maximum) shape.
SymDims node_sym_shape(const UOp& u, const std::vector<const SymDims*>& src_dims, const Shape& shape);

/// Symbolic shapes of every node under `root` (the SINK itself has none), from their `shapes`.
std::unordered_map<const UOp*, SymDims> graph_sym_shapes(const UOpPtr& root, const std::unordered_map<const UOp*, Shape>& shapes);

int64_t shape_numel(const Shape& s);

/// `s` with axis `a` split as (s[a]/b, b); `dims` (sizes n along `a`) likewise, the split sizes
/// constants.
Shape split_shape(Shape s, size_t a, int64_t b);
SymDims split_dims(SymDims dims, size_t a, int64_t n, int64_t b);

/// The order that undoes PERMUTE(order): axis order[i] goes back to place i.
std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& order);

}  // namespace lathe
