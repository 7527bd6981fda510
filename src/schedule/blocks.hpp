// The blocks values are stored in for the kernels that read them: a large convolution's input
// channels, its weight's output channels, a matmul's columns. Each follows the vector registers of
// the Target the graph is planned for (16 float32 at 64-byte vectors, 8 at 32, 4 at 16), so a
// kernel loads a block with whole vector instructions: a register, half of one, two, or (an
// activation's channels where the registers are narrower) a 64-byte cache line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lathe/target.hpp"
#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// The block widths, from `target`.
struct Blocks {
  /// The float32 lanes of one vector register: the activations' channel block (N, C/B, H, W, B).
  /// 0 where the lanes are fewer than 4 (a block that narrow saves nothing a copy costs): then no
  /// value is stored in blocks.
  int64_t lanes = 0;
  /// Whether two registers make at most a cache line (registers_pair_in_a_line): weights are then
  /// stored in blocks of two registers where their channels fill an odd count of registers.
  bool pairs = false;

  /// A weight's output-channel block for `n` channels: two registers, one or half of one (32, 16
  /// or 8 at 16 lanes), the widest that divides n; 0 when none does.
  int64_t output_channels(int64_t n) const;
  /// The channel block an activation of `n` channels that a depthwise convolution or a max pool
  /// reads is stored in: a cache line as convolution_input's where it divides n (so a pool of a
  /// convolution's input or output reads the blocks the convolution does), else one register, or
  /// half of one where a whole one does not divide n (24 channels at 16 lanes: 8); 0 when none does.
  int64_t activations(int64_t n) const;
  /// The channel block a convolution's input (and a join of channels, each piece's count) of `n`
  /// channels is stored in: a 64-byte cache line of float32 (16) where that is more than the lanes
  /// and divides n, so each pixel of a block is one whole line (at 8 lanes, ResNeXt-50's 1x1
  /// convolutions over 256-1024 channels ran 1.3-1.9x slower over half lines); else the lanes.
  int64_t convolution_input(int64_t n) const;
  /// The block `n` output channels are stored in: output_channels(n), or one register with the
  /// channels padded by zeros to a multiple of it where none divides n and the padding adds at
  /// most an eighth (1000 classes at 16 lanes: 1008). Where two registers make at most a cache
  /// line (8 lanes or fewer) and n fills an odd count of registers, two registers first, padded
  /// as far (104 channels at 8 lanes: 112 in 7 blocks of 16, not 13 of 8), so that a register
  /// tile takes two vectors a row, each broadcast feeding two multiply-adds (opt/heuristic's
  /// Planner::paired); an even count keeps its block (460 at 8 lanes: 464 in blocks of 8, which a
  /// tile of one vector reads in whole lines). A kernel padding its channel loop to the block
  /// (opt/action's PADTO) then reads its padded lanes inside the buffer.
  int64_t stored(int64_t n) const;
};
Blocks blocks_for(const Target& target);

/// `x` (of shape `s`) stored once with its axis `n` in blocks of `block`, viewed back as `s`: the
/// copy (a layout copy, schedule/reader_layout.hpp) holds x's axes in the order `order`, where `n`
/// stands for the block index, then the block's elements innermost. Where the block does not
/// divide the axis it is padded with zeros first, and the view leaves them out. The copy and its
/// views are labelled `labels`. (A matmul's columns: order (..., n, k) gives (..., N/B, K, B).)
UOpPtr stored_in_blocks(const UOpPtr& x, const Shape& s, size_t n, const std::vector<size_t>& order, int64_t block,
                        const std::vector<std::string>& labels = {});

/// A RESHAPE of `u` to `s`, its sizes `dims` (a symbolic one travels as a source, as Tensor's
/// views carry them), labelled `labels` (ir/label.hpp's labelled_as).
UOpPtr reshaped(const UOpPtr& u, const Shape& s, const SymDims& dims, const std::vector<std::string>& labels = {});
/// A PERMUTE of `u` by `order`, labelled `labels`; `u` itself where `order` moves no axis.
UOpPtr permuted(const UOpPtr& u, const std::vector<int64_t>& order, const std::vector<std::string>& labels = {});

/// `x` (of shape `s`, sizes `dims`) viewed with axis `n` split as (s[n]/B, B), B dividing s[n]:
/// where `copy`, a view of a layout copy that keeps x's axes in order with the block index in
/// place and the block's B elements innermost ((N, C/B, H, W, B) for channels), else a plain
/// reshape. The nodes made are labelled `labels` (ir/label.hpp's labelled_as).
UOpPtr split_in_blocks(const UOpPtr& x, const Shape& s, const SymDims& dims, size_t n, int64_t block, bool copy,
                       const std::vector<std::string>& labels = {});

}  // namespace lathe
