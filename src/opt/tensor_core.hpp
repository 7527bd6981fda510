// Tensor cores: a contraction of 16-bit floats (a matmul, a convolution over its input channels)
// as NVIDIA's m16n8k16 warp multiply-adds (the TC action, opt/action.hpp).
//
// The kernel's one reduction must be a sum over its loop k of x * y, where x and y are float16
// (or both bfloat16) values, or such values cast to float32 (a padded reduction's
// WHERE(gate, x * y, 0) too). The row loop m is the innermost output loop x reads and y does not,
// the column loop n the innermost y reads and x does not. With M, N and K multiples of 16, 8 and
// 16 (PADTO first), TC makes:
//   - m and n loops over tiles (M / 16 and N / 8), k a loop over K / 16 steps;
//   - a loop over a warp's 32 lanes (AxisKind::Warp: no later action takes it, and the grid
//     makes it threadIdx.x in blocks of 32, codegen/launch_grid) and an upcast loop over the 4
//     accumulators each lane holds;
//   - per step, a WMMA(a, b, 0, sync) of the lane's fragments: with g = lane / 4 and q = lane % 4,
//     a[i] is x at row g + 8 ((i / 2) % 2) and k 2q + i % 2 + 8 (i / 4), b[i] is y at k 2q + i % 2
//     + 8 (i / 2) and column g, and its result's element c the product's row g + 8 (c / 2) and
//     column 2q + c % 2 (the layout of PTX's mma.m16n8k16 with row-major A and column-major B);
//   - each accumulator's sum over the steps, in float32, stored (and anything after the
//     reduction computed) at that row and column.
// Every lane of a warp runs each WMMA (padded positions read zeros or clamped operands and store
// nothing), as the hardware needs.
#pragma once

#include <optional>
#include <string>

#include "lathe/target.hpp"
#include "opt/action.hpp"

namespace lathe {

/// The m16n8k16 tile: rows of A and C, columns of B and C, positions of the reduction.
constexpr int64_t kTensorCoreM = 16, kTensorCoreN = 8, kTensorCoreK = 16;

/// The loops a tensor core takes for a reduction, and its inputs' 16-bit type.
struct TensorCoreLoops {
  Loop m, n, k;
  DType input;
};

/// Where `ast`'s reduction over loop `k_axis` has a tensor core's form, whatever the loops'
/// sizes; else nothing, and `why` (when given) says why not.
std::optional<TensorCoreLoops> tensor_core_loops(const UOpPtr& ast, int64_t k_axis, std::string* why = nullptr);

/// Whether `target` (a GPU's) has the m16n8k16 tensor core for inputs of `input`.
bool has_tensor_core(const Target& target, DType input);

/// `ast` with its reduction over loop `k_axis` as warp multiply-adds, new loops from `new_axis`;
/// throws OptError where it has no tensor core's form or a size is not a multiple of the tile.
UOpPtr tensor_core(const UOpPtr& ast, int64_t k_axis, int64_t new_axis);

}  // namespace lathe
