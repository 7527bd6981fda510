// One ALU operation on constants, with the semantics of the generated C code: integers wrap to
// their width, `/` and `%` truncate toward zero, floats round to their precision.
#pragma once

#include <optional>
#include <span>

#include "lathe/uop.hpp"

namespace lathe {

/// The value of `op` over `srcs` producing `dtype`, or nullopt where C leaves the result
/// undefined (division by zero, an out-of-range shift) or the op is not an ALU op.
std::optional<ConstValue> exec_alu(Ops op, DType dtype, std::span<const ConstValue> srcs);

/// The identity of a reduction by `op` (ADD, MUL or MAX) in `dtype`: 0, 1, or the lowest value
/// (-inf for floats).
UOpPtr reduce_identity(Ops op, DType dtype);

/// Whether `u` is the constant 0 (of any type).
bool is_zero(const UOpPtr& u);

/// The one value in every lane of a VECTORIZE (a splat), else null.
UOpPtr splat_of(const UOpPtr& u);

/// `op` folded over `values` (at least one) as a balanced tree: a reduction's copies or lanes
/// combined with the shortest dependency chain.
UOpPtr combine(Ops op, std::vector<UOpPtr> values);

}  // namespace lathe
