// Loop axes. A RANGE's arg is {axis} or {axis, kind}: the axis orders the loops of a kernel
// (output loops nest by axis) and the kind says what the optimizer made of the loop.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

enum class AxisKind : int64_t {
  Loop = 0,    // an ordinary loop
  Upcast = 1,  // a short loop run innermost wherever its work is needed; a reduction over it
               // keeps one accumulator per position
};

inline int64_t axis_of(const UOp& range) { return range.arg_as<std::vector<int64_t>>().at(0); }

inline AxisKind axis_kind(const UOp& range) {
  const auto& a = range.arg_as<std::vector<int64_t>>();
  return a.size() > 1 ? static_cast<AxisKind>(a[1]) : AxisKind::Loop;
}

inline bool is_upcast_range(const UOp& r) { return r.op() == Ops::RANGE && axis_kind(r) == AxisKind::Upcast; }

/// A RANGE over [0, end) on `axis`, of `kind`.
inline UOpPtr make_range(const UOpPtr& end, int64_t axis, AxisKind kind = AxisKind::Loop) {
  std::vector<int64_t> arg{axis};
  if (kind != AxisKind::Loop) arg.push_back(static_cast<int64_t>(kind));
  return UOp::make(Ops::RANGE, dtypes::index, {end}, std::move(arg));
}

}  // namespace lathe
