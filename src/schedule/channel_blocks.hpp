// How a large convolution's or a max pool's input is stored for it: in channel blocks of the
// Target's lanes, padded, or as it is. The layout pass's rule for activations.
//
// A convolution reaches the schedule as plain math, whichever front end built it: REDUCE_AXIS(ADD)
// over input channels and taps of MUL(x, w), where w is a filter (schedule/operand_view.hpp's
// filter_columns: the operand read along the output channels) and x the sliding windows of a stored
// input X: views (a PAD, then the windows' folds) of a buffer, or of a CONTIGUOUS that
// store_convolution_inputs puts over a computed X, so that no fused work is repeated in the
// innermost loop. Where the convolution is large (its
// multiply-adds per output pixel of a group, as the filter rule counts them), X is stored one of
// three ways:
// - padded, with no gate: a copy of PAD(X), where each input element feeds many multiply-adds
//   (the copy is small beside them), a group has few input channels (too few to pay for the
//   per-pixel gates a tile keeps), or the filter's output channels have no block of their own (a
//   kernel's vectors then run along the pixels, and its gates would be masks of lanes);
// - in channel blocks (N, C/B, H, W, B), B the Target's float32 lanes, where a group's input
//   channels fill whole blocks and the filter's output channels have a block of their own
//   (Blocks::stored): the kernel that computes X stores each pixel's block as one vector (NCHW
//   would need a transpose in registers), and the convolution loads a block of channels from one
//   run of memory (oneDNN's and ONNX Runtime's NCHWc). x's views are replayed over the split view
//   (N, C/B, B, H, W), so no index is divided back into channels, and the sum runs over (block,
//   taps, channel in the block), in that order: the innermost loop runs B times with every padding
//   gate and tap offset fixed (ResNet-18's 56x56 layers 7-9% faster than with the channel in the
//   block outside the taps). A stored input (a graph's input, not computed by a kernel that could
//   write it in blocks) is copied into blocks only where each element feeds enough multiply-adds;
// - as it is, its padding read through gates (codegen/gate_bounds turns row gates into loop bounds).
// The filter rule (schedule/column_blocks) then stores w in the product's order, output channels
// innermost.
//
// A max pool (REDUCE_AXIS(MAX) over the taps of windows of a computed input) reads its input in
// channel blocks too, of the lanes or half of them (Blocks::activations), the block's lanes kept
// beside the block index: a block of channels is one vector load per tap. So does a depthwise
// convolution (one input and one output channel a group: a sum over the taps only, its filter read
// along the channels), its filter copied to (C/B, 1, KH, KW, B): each tap is one vector load of B
// channels times one vector of weights, whatever the stride, with one padding gate for every lane.
//
// The value stored in blocks is the lowest node under the reader's views whose channels those
// views keep whole in blocks: the computed value itself (read through a copy the front end asked
// for), or a view of it where the views mix its blocks (a channel shuffle), as a copy of that view.
// A copy the front end asked for of fewer elements than the value under it (conv2d's copy of a
// strided 1x1's pixels) is not read through: the view it copies is stored in blocks.
#pragma once

#include <vector>

#include "ir/substitute.hpp"
#include "lathe/target.hpp"
#include "lathe/uop.hpp"
#include "schedule/column_blocks.hpp"

namespace lathe {

/// The prices of storing a convolution's input for it.
struct ChannelBlockPrices {
  // A convolution's multiply-adds per output pixel of a group (output channels x what the filter
  // sums) from which its input is stored for it: the filter rule's figure.
  int64_t filter_work = ColumnBlockPrices{}.filter_work;
  // Multiply-adds per input element (output channels per group x taps / stride area) from which a
  // padded input is copied with its padding rather than read through gates (ResNet-18 on AVX-512:
  // the 56x56 and 28x28 layers gain 5-10% with the copy's time, the 7x7x512 layers lose).
  int64_t padded_copy_macs = 2048;
  // Input channels per group below which the padding is copied whatever the work: the gates a tile
  // keeps per pixel cost more than a few channels' multiply-adds (a 3-channel stem).
  int64_t gated_channels = 8;
  // Multiply-adds per input element from which a stored input (a buffer) is copied into channel
  // blocks, given its output channels fill a vector (a 64-channel 56x56 batch of 8 at 16 lanes:
  // 2.7 ms read in place, 4.2 ms copied into blocks).
  int64_t stored_copy_macs = 64;
};

/// `outputs` with the input of each large convolution (its multiply-adds per output pixel of a
/// group at least `prices.filter_work`) stored where it is computed (or made of a constant): a
/// CONTIGUOUS between it and the convolution's views, so no fused work is repeated in the
/// convolution's innermost loop and the rule below finds a stored input. Run first, whichever
/// front end built the convolution.
std::vector<UOpPtr> store_convolution_inputs(const std::vector<UOpPtr>& outputs, const ChannelBlockPrices& prices = {},
                                             Rebuilt* rebuilt = nullptr);

/// `outputs` with the input of each large or depthwise convolution and each max pool stored as the
/// prices say for `target`; the outputs in order (rebuilt where something under them changed,
/// labels kept). A reader whose views the rule cannot replay in blocks (a symbolic size inside the
/// channels' axis) reads its input as it is. `rebuilt`, where given, records the nodes rebuilt.
std::vector<UOpPtr> store_channels_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target,
                                             const ChannelBlockPrices& prices = {}, Rebuilt* rebuilt = nullptr);

}  // namespace lathe
