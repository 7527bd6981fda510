// The blocks the Tensor front end stores values in for the kernels that read them: a large
// convolution's input channels, its weight's output channels, a matmul's columns, attention's
// keys. Each is one vector register of the Target the graph is planned for (16 float32 on
// AVX-512, 8 on AVX2, 4 on SSE and NEON), so a kernel loads a block with one instruction.
#pragma once

#include <cstdint>

#include "lathe/plan.hpp"
#include "lathe/target.hpp"
#include "lathe/tensor.hpp"

namespace lathe::detail {

/// The block widths, from `target`.
struct Blocks {
  /// The float32 lanes of one vector register: the activations' channel block (N, C/B, H, W, B)
  /// and attention's key block. 0 where the lanes are fewer than 4 (a block that narrow saves
  /// nothing a copy costs): then no value is stored in channel blocks.
  int64_t lanes = 0;

  /// A weight's output-channel block for `n` channels: two registers, one or half of one (32, 16
  /// or 8 at 16 lanes), the widest that divides n; 0 when none does.
  int64_t output_channels(int64_t n) const;
  /// The channel block an activation of `n` channels that a depthwise convolution or a max pool
  /// reads is stored in: one register, or half of one where a whole one does not divide n (24
  /// channels at 16 lanes: 8); 0 when neither does.
  int64_t activations(int64_t n) const;
  /// The block `n` output channels are stored in: output_channels(n), or one register with the
  /// channels padded by zeros to a multiple of it where none divides n and the padding adds at
  /// most an eighth (1000 classes at 16 lanes: 1008). A kernel padding its channel loop to the
  /// lanes (opt/action's PADTO) then reads its padded lanes inside the buffer.
  int64_t stored(int64_t n) const;
};
Blocks blocks_for(const Target& target);

/// The blocks of the Target a graph built now is planned for: the default device's under a
/// prepare's default options (runtime's default_planning_target, with LATHE_TARGET_SHAPE). The
/// layouts Tensor ops pick read them when they are called; a plan prepared for another shape runs
/// them unchanged (correct, perhaps slower).
Blocks build_blocks();

/// `t` stored with its axis `axis` split into (n/B, B): the B elements of a block innermost in
/// memory, the block index at position `outer_at` among the other axes; viewed in t's shape with
/// that axis split (n/B, B), so a kernel indexes blocks and lanes without dividing a merged index
/// back into them. A vector kernel then loads a block of B along `axis` from one run of memory.
/// For a constant `t` (a model's weight) the copy is made once, at prepare.
Tensor stored_in_split_blocks(const Tensor& t, int64_t axis, int64_t block, int64_t outer_at);

}  // namespace lathe::detail
