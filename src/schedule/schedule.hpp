// The scheduler: turns a tensor graph into an ordered list of kernels and buffer views.
//
// It decides which nodes are stored to buffers (realize points: the outputs, BUFFERs,
// CONTIGUOUS, reductions whose result is read again across the axis they reduced or from more
// than one place, and large reductions into few outputs, which split into threaded partials and
// a final reduce), then lowers each stored node to a kernel AST: a SINK of one STORE whose value
// reads its inputs through index arithmetic over loop RANGEs. Movement ops become that index
// arithmetic; elementwise chains and the reductions they feed fuse into one kernel. A stored node
// that is only a contiguous reshape or shrink of another buffer becomes a view of it instead.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

struct ScheduleItem {
  /// SINK(STORE(INDEX(DEFINE_GLOBAL 0, idx), value)), with DEFINE_GLOBAL k reading bufs[k].
  /// Null for a view.
  UOpPtr ast;
  /// The tensor-graph nodes whose buffers fill the kernel's slots; bufs[0] is the one written.
  /// For a view: {the node, the node whose buffer it views}.
  std::vector<UOpPtr> bufs;
  /// Set when bufs[0] needs no kernel: it is bufs[1]'s memory from this element on.
  std::optional<int64_t> view_offset;
  /// The labels (ir/label.hpp) of the graph nodes this kernel computes, sources first.
  std::vector<std::string> labels;
};

struct Schedule {
  std::vector<ScheduleItem> items;  // in an order that respects every dependency
  std::vector<UOpPtr> outputs;      // the nodes holding each requested output, in order
  std::vector<UOpPtr> requested;    // the requested nodes, in order: an output's node may be rebuilt
                                    // (schedule/reader_layout), and its buffer answers to both ids
  std::unordered_map<const UOp*, Shape> shapes;      // maximum sizes: buffers are allocated for these
  std::unordered_map<const UOp*, SymDims> sym_shapes;  // sizes as index expressions
  std::map<std::string, int64_t> var_vals;             // the value each bound variable had
  /// Stored nodes whose value is written into the interior of a PAD's buffer and read there
  /// (schedule/padded_in_place): their memory is the PAD's, laid out padded, and the PAD's item,
  /// before theirs, only fills it with the pad value.
  std::unordered_map<const UOp*, UOpPtr> written_into;
  std::vector<UOpPtr> keep_alive;  // nodes made while scheduling, which `shapes` refers to
};

/// Schedules the computation of `outputs` (tensor-graph nodes).
Schedule create_schedule(const std::vector<UOpPtr>& outputs);

/// The kernel AST that stores `root`'s value, reading each node of `realized` (other than root)
/// from a buffer (a node of sched.written_into from the PAD's). `bufs` receives the slot order.
/// Exposed for tests of the lowering.
struct Schedule;
UOpPtr lower_kernel(const UOpPtr& root, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                    std::vector<UOpPtr>& bufs);

}  // namespace lathe
