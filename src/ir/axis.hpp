// Loop axes. A RANGE's arg is {axis} or {axis, kind}: the axis orders the loops of a kernel
// (output loops nest by axis) and the kind says what the optimizer made of the loop.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

enum class AxisKind : int64_t {
  Loop = 0,    // an ordinary loop
  Upcast = 1,  // an output axis held in registers: vector lanes or unrolled copies, one
               // accumulator per position (codegen/expand.hpp)
  Unroll = 2,  // a reduce axis held in registers: its positions combined in the loop body
  Thread = 3,  // the outermost output loop, split across threads (arg {axis, 3, threads})
  Group = 4,   // a reduction's loop split across threads, each reducing its part into a partial
               // result that the last to finish combines (arg {axis, 4, threads})
  Local = 5,   // an output loop a GPU launches with blocks of a chosen thread count along one of
               // its grid's dimensions (arg {axis, 5, threads}, codegen/launch_grid)
  Warp = 6,    // a warp's 32 lanes (opt/tensor_core): always a GPU's threadIdx.x in blocks of a
               // whole number of warps; no action takes it
};

/// The lanes of a GPU warp: a Warp loop's size, and the threads that share a tensor core's tile.
inline constexpr int64_t kWarpLanes = 32;

/// The most positions of an output loop that a kernel without a reduction upcasts whole where
/// some of its work does not depend on the loop, so its copies share that work (opt/heuristic's
/// shared_work_loop); the scheduler prices fusion by the same rule (schedule/realize.cpp): a
/// Winograd transform's first pass, read six times by its second, is computed in its kernel once
/// per six outputs.
inline constexpr int64_t kSharedWorkLoop = 8;

inline int64_t axis_of(const UOp& range) { return range.arg_as<std::vector<int64_t>>().at(0); }

inline AxisKind axis_kind(const UOp& range) {
  const auto& a = range.arg_as<std::vector<int64_t>>();
  return a.size() > 1 ? static_cast<AxisKind>(a[1]) : AxisKind::Loop;
}

/// Whether a loop over `r` is held in registers rather than iterated (Upcast or Unroll).
inline bool is_register_range(const UOp& r) {
  return r.op() == Ops::RANGE && (axis_kind(r) == AxisKind::Upcast || axis_kind(r) == AxisKind::Unroll);
}

/// A RANGE over [0, end) on `axis`, of `kind` (a Thread, Group or Local loop also names its thread count).
inline UOpPtr make_range(const UOpPtr& end, int64_t axis, AxisKind kind = AxisKind::Loop, int64_t threads = 0) {
  std::vector<int64_t> arg{axis};
  if (kind != AxisKind::Loop) arg.push_back(static_cast<int64_t>(kind));
  if (kind == AxisKind::Thread || kind == AxisKind::Group || kind == AxisKind::Local) arg.push_back(threads);
  return UOp::make(Ops::RANGE, dtypes::index, {end}, std::move(arg));
}

/// Where a GPU block's threads meet (the launch value "sync", lathe/program.hpp): the second source
/// of a block's BARRIER and the last of a warp's WMMA. CUDA C spells neither through it; the CPU
/// spelling of a GPU kernel (the emulator's) calls it, a device/cuda/block_threads hook.
inline UOpPtr block_sync() { return UOp::make(Ops::SPECIAL, dtypes::int64, {UOp::index_const(1)}, std::string("sync")); }

/// How many threads a Thread or Group loop is split across (a Local loop: threads a block).
inline int64_t thread_count(const UOp& range) { return range.arg_as<std::vector<int64_t>>().at(2); }

}  // namespace lathe
