// Upcast axes leave the loop nest: what the optimizer marked to run in registers (AxisKind::Upcast
// on an output axis, AxisKind::Unroll on a reduce axis) stops being a loop.
//
// One such axis, the first the optimizer made (the smallest axis id) of a power-of-two size up to
// `max_lanes` along which the kernel loads or stores contiguously, becomes the lanes of vector
// values: a node that depends on it is a vector,
// a contiguous load or store is one vector access, a value that does not depend on it is broadcast,
// other accesses are gathered or scattered lane by lane, and a reduction over it ends in a
// horizontal combine of its lanes. Every other upcast or unroll axis is unrolled: each store that
// depends on it is copied once per position, and a reduction over it combines its copies, so a
// tile of outputs keeps one accumulator per position. Copies share what does not depend on the
// axis (the graph is hash-consed).
//
// Operations the target cannot do on whole vectors (sqrt, pow, libm calls, 16-bit float
// conversions, loads and stores of bool and 16-bit values) are done lane by lane.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// `ast` with its upcast (register) loops unrolled into copies and the vector axis into vector
/// values of at most `max_lanes` lanes. `registers` (the Target's vector registers; 0: unknown)
/// orders a register tile's copies where the default order would keep more operands live than
/// the file holds.
UOpPtr expand_upcasts(const UOpPtr& ast, int max_lanes, int registers = 0);

/// `value` with the positions of the register loop `axis` (an Upcast RANGE of a constant size) as
/// the lanes of one vector, as expand_upcasts makes them; a value that does not vary with it stays
/// as it is. For kernels that build their vector code themselves (codegen/attention).
UOpPtr vectorize_along(const UOpPtr& value, const UOpPtr& axis);

/// The stores `store` (whose index and value may vary with `axis`; its value may be a vector of
/// the lanes already) makes with the positions of `axis` as vector lanes.
std::vector<UOpPtr> vectorize_store(const UOpPtr& store, const UOpPtr& axis);

/// A vector's lanes combined with `op` (ADD, MAX, ...) into one scalar, by halving.
UOpPtr fold_lanes(Ops op, UOpPtr vector);

}  // namespace lathe
