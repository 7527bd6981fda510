// Which nodes are stored: fusion by cost.
//
// Fusing a node into the kernel that reads it is free when the kernel evaluates it once per
// element; it multiplies work when the kernel evaluates it many times (a value broadcast into a
// reduction, read through a convolution's window, a branch of a concatenation evaluated over the
// whole result, a node two kernels compute). One rule decides, for every computed node u (an ALU
// op, cast, reduction or gather; movement ops are only index arithmetic and are never stored):
//
//   store u  iff  c * (E - n) > n * S + E * L + min(K, c * n / 2)
//
// n is u's element count; E how many times the kernels reading u would evaluate it (from the loop
// nests they would have: a node runs once per trip of every loop down to the innermost one its
// index depends on, as the linearizer places it; in a kernel without a reduction, once for all
// positions of the innermost short output loop it does not depend on, which the optimizer
// upcasts so its copies share it: ir/axis.hpp's kSharedWorkLoop; there a loop a reshape splits
// counts as its parts, as the lowering splits it);
// c the cost of one evaluation of u's fused subgraph (ALU ops, transcendentals, loads, padding
// gates, reshape divisions); S the cost of storing an element, L of loading one, K of a kernel of
// its own (which excuses recomputation only up to half of u's own work, so no node's work is ever
// more than 1.5x over). A contraction (matmul,
// convolution) costs less per op in a kernel the optimizer can tile: one that holds it alone and
// not inside another reduction's loop; fused elsewhere it costs full price, so a convolution is
// not buried in a global pool or beside a second convolution unless it is small. Nodes are
// decided consumers first, so the highest node worth storing is stored and what it reads fuses
// into its kernel.
#pragma once

#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// The cost model's prices, in ALU operations.
struct FusionPrices {
  double alu = 1;             // an arithmetic op, comparison, cast
  double transcendental = 35;  // exp2, log2, sin, pow: polynomials of about 35 ops (codegen/transcendental)
  double load = 1;            // L
  double store = 3;           // S: written, then read back by its readers
  double kernel = 4000;       // K: a kernel launch (a threaded one wakes the pool) and its loops
  double pad_gate = 4;        // per padded axis: two compares, an and, a select
  double div_mod = 2;         // per axis a reshape must split with / and %
  double optimized = 0.2;     // a contraction's cost in a kernel the optimizer tiles, per op
  double optimized_min = 65536;  // multiply-adds below which tiling gains nothing
};

/// Whether `u` computes data (an ALU op, a cast, a reduction, a gather): what fusion decides to store
/// or recompute; movement ops are index arithmetic, leaves are buffers and constants.
bool is_computed(const UOp& u);

/// Whether the kernel that stores `root` reads `u` from memory: a BUFFER, or a node another kernel
/// stores (marked in `realized`). The one rule the lowering, views and labels share.
bool is_stored(const UOp& u, const UOp* root, const std::unordered_map<const UOp*, bool>& realized);

/// Marks in `realized` the nodes of `order` (a topological order of the whole graph) worth
/// storing; nodes already marked (outputs, CONTIGUOUS, split reductions) stay stored.
void choose_realized(const std::vector<UOpPtr>& order, const std::unordered_map<const UOp*, Shape>& shapes,
                     std::unordered_map<const UOp*, bool>& realized, const FusionPrices& prices = {});

}  // namespace lathe
