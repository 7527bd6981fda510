#include "tensor/blocks.hpp"

#include "runtime/planning_target.hpp"
#include "schedule/shape.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {

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
