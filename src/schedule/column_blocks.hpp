// A product's operand stored in column blocks of the Target's lanes: the layout pass's first rule.
//
// A product reaches the schedule as plain math, whichever front end built it: REDUCE_AXIS(ADD) of
// MUL(x, w), where each operand is a view of a node, the base, through EXPAND, PERMUTE, RESHAPEs
// that only add or drop axes of size 1, and widening casts. The operand w whose base is read along
// a kept axis that x is broadcast along, its columns, is the one a vector kernel runs along. Two
// forms are stored:
// - a matrix product (Tensor::matmul, einsum, an ONNX Gemm, a user's
//   (a.unsqueeze(-2) * b.unsqueeze(-3)).sum(-1)) sums over the last axis, K, and its columns are
//   the axis before it, N. Unblocked, each step of K jumps a whole row of w (12 KB at 3072
//   columns, which maps every step's lines to the same few cache sets); a transposed base (Kᵀ in
//   attention) is read across its rows and the product becomes one dot product per output.
// - a filter (Tensor::conv2d, in whichever layout its input is read) sums over several axes
//   (input channels and taps), and its columns are its output channels: stored in blocks, a block
//   of output channels is one vector load for every tap and input channel, and the block's whole
//   filter is one run of memory.
//
// So the base is stored once with its axes in the product's order, the block index before the
// first summed axis and the block's B columns innermost: (other axes, N/B, K, B) for a matrix,
// (groups, OG/B, input channels, taps, B) for a filter; B from the Target's float32 lanes
// (Blocks::stored: two registers, one or half of one, or one with N padded by zeros where that
// padding is small; a filter with too few output channels for that takes them all). The product
// reads that copy through the inverse view: a layout copy (schedule/reader_layout.hpp). Its price:
// the copy reads and writes every element of w once per run, so a matrix's is made where the
// product is large and has many rows (a constant w, a model's weight, is copied once at prepare,
// and pays from fewer rows); a filter's wherever the convolution is large or its filter is a
// stored value (a model's weight, copied once at prepare).
#pragma once

#include <vector>

#include "lathe/target.hpp"
#include "lathe/uop.hpp"
#include "ir/substitute.hpp"
#include "schedule/constants.hpp"

namespace lathe {

/// The prices of a copy into column blocks: a matrix product's are the first five, a filter's the
/// last two.
struct ColumnBlockPrices {
  int64_t most_work = int64_t{1} << 24;  // multiply-adds of the whole product (every matrix of a batch) from which
  int64_t rows = 64;                     // rows of x that meet one of w's matrices, for a w computed each run
  int64_t constant_rows = 16;            // the same for a w made of constants, copied once at prepare
  int64_t reduction = 16;                // K: a shorter sum keeps its operand's rows in cache anyway
  int64_t columns = 64;                  // N: fewer columns fit a few vectors, read in place
  int64_t filter_work = 512;             // a filter's multiply-adds per output pixel of a group (columns x what w sums), given 2+ columns
  int64_t stored_filter_columns = 4;     // the columns from which a stored filter (a buffer) is blocked whatever its work
};

/// `outputs` with the operand w of each product the prices accept read from its copy in
/// column blocks of `target`'s float32 lanes; the outputs in order (rebuilt where something under
/// them changed, labels kept). An operand that is already a view of a layout copy, or has a
/// variable under it (a symbolic size, a bound value), is left as it is. `rebuilt`, where given,
/// records the nodes rebuilt.
std::vector<UOpPtr> store_columns_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target,
                                            const IsConstantBuffer& constant, const ColumnBlockPrices& prices = {},
                                            Rebuilt* rebuilt = nullptr);

}  // namespace lathe
