// A concatenation of computed channels joined in channel blocks, and parts summed into a
// convolution's output stored so: the layout pass's rule for joins.
//
// Tensor::cat reaches the schedule as plain math: each piece padded with zeros to the whole axis,
// the pieces added (in pairs). Where it joins the channels (axis 1) of 4-D float pieces that are
// each computed by a kernel of its own (a reduction's result under elementwise ops: a
// convolution's output with its bias and activation) and that each fill whole channel blocks of
// the Target's lanes, it is rebuilt as a join of blocks: each piece stored (N, C_i/B, H, W, B) by
// the kernel that computes it (no transpose: its channels are in vector lanes), its
// (N, C_i/B, B, H, W) view padded along the block index, the views added and viewed back as
// (N, C, H, W). A reader in channel blocks (schedule/channel_blocks) then reads the join as it
// is, and the join needs no kernel of its own: each piece's kernel writes its run of the joined
// buffer (schedule/concat_in_place). A piece computed by an elementwise kernel would only move its
// copy into that kernel, so the join is left as it is.
//
// A sum of such parts padded along the image's axes, overlapping (a convolution split by groups of
// taps, the tap-group rule's conv2d_by_tap_groups, tensor/tap_groups), is added in the epilogue of the kernel of the part
// covering the most output positions, a vector of output channels at a time: the other parts are
// stored in channel blocks for it.
#pragma once

#include <vector>

#include "ir/substitute.hpp"
#include "lathe/target.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// `outputs` with each concatenation of channels the rule accepts joined in blocks of `target`'s
/// float32 lanes, and each sum of parts' other parts read from blocks; the outputs in order (rebuilt where something under them changed, labels kept).
/// `rebuilt`, where given, records the nodes rebuilt.
std::vector<UOpPtr> join_channels_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt = nullptr);

}  // namespace lathe
