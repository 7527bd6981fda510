// conv2d's direct sum (detail::direct_conv2d) found again in a graph, at prepare: the rules that
// rebuild a convolution for the plan's Target (Winograd's method, tap groups) read its input,
// weight, padding, stride, dilation and groups from here. A candidate is accepted only where
// direct_conv2d of it rebuilds the very node (UOps are interned), so nothing is guessed.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/uop.hpp"
#include "lathe/tensor.hpp"
#include "schedule/shape.hpp"

namespace lathe::detail {

/// The product under conv2d's direct sum `u`, RESHAPE(RESHAPE(SUM over a group's channels and the
/// taps of a product)): (N, groups, O/groups, C/groups, OH, OW, KH, KW). Null for any other node.
const UOp* direct_product(const UOp& u);

/// The direct convolutions' sums under `sink` (nodes direct_product accepts), in graph order.
std::vector<UOpPtr> direct_sums(const UOpPtr& sink);

/// What a rule builds in a convolution's place, and what it builds it from (the operands as
/// rebuilt): the nodes between are labelled as the convolution.
struct Replacement {
  UOpPtr made;
  std::unordered_set<const UOp*> inputs;
};

/// `outputs` with each sum in `chosen` replaced by `make(sum, now)` (`now`: the sum over its
/// operands as rebuilt), made once however many nodes read it, the nodes it adds labelled as the
/// sum (its labels, or its inner sum's or product's); `rebuilt`, where given, records each.
std::vector<UOpPtr> replace_sums(const std::vector<UOpPtr>& outputs, const std::unordered_set<const UOp*>& chosen,
                                 const std::function<Replacement(const UOpPtr& sum, const UOpPtr& now)>& make, Rebuilt* rebuilt);

/// `operand` and the nodes under it through its views (and the casts that widen an integer
/// convolution's operands), the operand first.
std::vector<UOpPtr> views_down(const UOpPtr& operand);
/// A PAD of zeros by static amounts: (before, after) of each axis in turn; none for any other node.
std::optional<std::vector<int64_t>> zero_padding(const UOp& pad);
/// A PAD of zeros of only an image's rows and columns (axes 2 and 3 of four) by static amounts:
/// (rows before, rows after, columns before, columns after); none for any other node.
std::optional<std::array<int64_t, 4>> image_padding(const UOp& pad);

/// Where a direct convolution's operands lie under its product, and its parameters: the input
/// `read_depth` nodes down its operand's views (under a PAD of `padding` where `unpadded`: on both
/// sides of each axis as matched; the tap-group rule also reads an uneven PAD so, `padding` then
/// what is before), the weight `w_depth` down the other's.
struct DirectConvolution {
  size_t read_depth = 0, w_depth = 0;
  bool unpadded = false;
  std::pair<int64_t, int64_t> padding{0, 0}, stride{1, 1}, dilation{1, 1};
  int64_t groups = 1;
};

/// The direct convolutions of one graph.
class DirectConvolutions {
 public:
  explicit DirectConvolutions(const UOpPtr& sink);

  /// The first reading of `u` (a node direct_product accepts) as conv2d's direct sum that
  /// `accept` takes, trying the input at each depth of its views and the weight at each of its.
  std::optional<DirectConvolution> match(const UOpPtr& u, const std::function<bool(const DirectConvolution&)>& accept) const;

  /// The input and the weight of `d` under the product of `u`.
  UOpPtr input(const UOpPtr& u, const DirectConvolution& d) const;
  UOpPtr weight(const UOpPtr& u, const DirectConvolution& d) const;
  /// `now` (what `u` became in a rebuilt graph, or `u`) as a Tensor of `u`'s shape.
  Tensor tensor(const UOpPtr& u, const UOpPtr& now) const;
  const Shape& shape(const UOp& u) const { return shapes_.at(&u); }

 private:
  std::unordered_map<const UOp*, Shape> shapes_;
  std::unordered_map<const UOp*, SymDims> dims_;
};

}  // namespace lathe::detail
