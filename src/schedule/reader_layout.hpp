// A node stored once, in the layout a reader copies it to.
//
// A kernel that reads a computed node x in another layout asks for a copy of it:
// CONTIGUOUS(PERMUTE/RESHAPE ... (x)) whose CopyArg says layout (schedule/blocks.hpp's
// split_in_blocks and stored_in_blocks, tensor/tensor_util.hpp's layout_copy; a user's contiguous()
// is left alone), as a convolution's input in channel blocks is (schedule/channel_blocks:
// (N, C/L, H, W, L)). The kernel that computes x then stores it in that layout
// directly. But when x has other readers (a residual block's output feeds the next block's
// convolution and its residual sum), x is stored as it is for them, and copied again into blocks.
// Instead, the other readers read the copy through the inverse view (the same PERMUTE and RESHAPE
// undone): x is stored once, in the copy's layout, by the kernel that computes it.
//
// An elementwise node copied so (d * scale, copied into blocks for a projection) passes the copy on
// to its operands of its shape that another kernel reads too (d, which a pool reads): they are
// stored in the copy's layout as well, and the elementwise kernel reads and stores it.
//
// Only pure relayouts count (every step a PERMUTE or a static RESHAPE) of computed data (an ALU
// op, a cast, a reduction, or a relayout of one): x is the first node down the steps that is read
// elsewhere too (a max pool's output reshaped back to NCHW), not an output itself; the first such
// copy of a node wins. Values do not change: the inverse view reads each element where the copy put it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// Whether `u` is a layout copy (tensor's detail::layout_copy: a CONTIGUOUS whose CopyArg says
/// layout): the copied node may be stored in the copy's layout only. A user's contiguous() is not.
inline bool is_layout_copy(const UOp& u) {
  const auto* copy = std::get_if<CopyArg>(&u.arg());
  return u.op() == Ops::CONTIGUOUS && copy && copy->layout;
}

/// Whether `u` is a copy a front end asked for (a CONTIGUOUS that is not a layout copy: a user's
/// contiguous(), or the stored input store_convolution_inputs puts under a convolution): it stores
/// its source's value.
inline bool plain_copy(const UOp& u) { return u.op() == Ops::CONTIGUOUS && !is_layout_copy(u); }

/// The graph of `outputs` with the other readers of each relaid-out node reading its copy; the
/// outputs in the same order (rebuilt where something under them changed, labels kept, and
/// recorded in `rebuilt` where given).
std::vector<UOpPtr> read_relayouts_from_copies(const std::vector<UOpPtr>& outputs, Rebuilt* rebuilt = nullptr);

}  // namespace lathe
