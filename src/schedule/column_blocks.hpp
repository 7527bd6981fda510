// A matrix product's right operand stored in column blocks of the Target's lanes.
//
// A product of matrices reaches the schedule as plain math, whichever front end built it
// (Tensor::matmul, einsum, an ONNX Gemm or a user's (a.unsqueeze(-2) * b.unsqueeze(-3)).sum(-1)):
// REDUCE_AXIS(ADD over the last axis) of MUL(x, w), where each operand is a view of a node, the
// base, through EXPAND, PERMUTE, RESHAPEs that only add or drop axes of size 1, and widening
// casts. The operand w whose base is read with one axis summed (K) and one as the output's last
// axis (N), along which the other operand x is broadcast, is the one whose columns a vector kernel
// runs along. Unblocked, each step of K jumps a whole row of it (12 KB at 3072 columns, which maps
// every step's lines to the same few cache sets); a transposed base (Kᵀ in attention) is read
// across its rows and the product becomes one dot product per output.
//
// So the base is stored once as (its other axes, N/B, K, B), B from the Target's float32 lanes
// (Blocks::stored: two registers, one or half of one, or one with N padded by zeros where that
// padding is small), and the product reads that copy through the inverse view: a layout copy
// (schedule/reader_layout.hpp) whose block of B columns is one run of memory along K. Its price:
// the copy reads and writes every element of w once per run, so it is made where the product is
// large and has many rows (a constant w, a model's weight, is copied once at prepare, and pays
// from fewer rows).
#pragma once

#include <vector>

#include "lathe/target.hpp"
#include "lathe/uop.hpp"
#include "schedule/constants.hpp"

namespace lathe {

/// The prices of a copy into column blocks. A product is blocked when all hold.
struct ColumnBlockPrices {
  int64_t most_work = int64_t{1} << 24;  // multiply-adds of the whole product (every matrix of a batch) from which
  int64_t rows = 64;                     // rows of x that meet one of w's matrices, for a w computed each run
  int64_t constant_rows = 16;            // the same for a w made of constants, copied once at prepare
  int64_t reduction = 16;                // K: a shorter sum keeps its operand's rows in cache anyway
  int64_t columns = 64;                  // N: fewer columns fit a few vectors, read in place
};

/// `outputs` with the right operand of each product the prices accept read from its copy in
/// column blocks of `target`'s float32 lanes; the outputs in order (rebuilt where something under
/// them changed, labels kept). An operand that is already a view of a layout copy, or has a
/// variable under it (a symbolic size, a bound value), is left as it is.
std::vector<UOpPtr> store_columns_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target,
                                            const IsConstantBuffer& constant, const ColumnBlockPrices& prices = {});

}  // namespace lathe
