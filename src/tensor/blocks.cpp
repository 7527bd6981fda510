#include "tensor/blocks.hpp"

#include <algorithm>

#include "runtime/planning_target.hpp"
#include "schedule/shape.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {

int64_t Blocks::output_channels(int64_t n) const {
  if (lanes == 0) return 0;
  for (int64_t b : {2 * lanes, lanes, lanes / 2})
    if (n % b == 0) return b;
  return 0;
}

int64_t Blocks::activations(int64_t n) const { return std::min(output_channels(n), lanes); }

int64_t Blocks::stored(int64_t n) const {
  int64_t b = output_channels(n);
  if (lanes == 0 || b >= lanes || n < lanes) return b;
  return ((n + lanes - 1) / lanes * lanes - n) * 8 <= n ? lanes : b;
}

Blocks blocks_for(const Target& target) {
  int64_t lanes = target.lanes(dtypes::float32);
  return Blocks{lanes >= 4 ? lanes : 0};
}

Blocks build_blocks() { return blocks_for(default_planning_target()); }

Tensor stored_in_split_blocks(const Tensor& t, int64_t axis, int64_t block, int64_t outer_at) {
  SymShape split = t.symbolic_shape();
  split[static_cast<size_t>(axis)] = SInt(split[static_cast<size_t>(axis)].value() / block);
  split.insert(split.begin() + axis + 1, SInt(block));
  std::vector<int64_t> order;  // the other axes, the block index among them, the block's lanes last
  for (int64_t i = 0; i < static_cast<int64_t>(split.size()); ++i)
    if (i != axis && i != axis + 1) order.push_back(i);
  order.insert(order.begin() + outer_at, axis);
  order.push_back(axis + 1);
  return detail::layout_copy(t.reshape(split).permute(order)).permute(inverse_permutation(order));
}

}  // namespace lathe::detail
