// A Schedule: what the scheduler (schedule/create_schedule) gives the runtime. An ordered list of
// kernel ASTs and buffer views, the graph node behind each buffer slot, every node's sizes, the
// values bound to variables, and where each stored value lives (schedule/buffer_assignment).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// Where a stored node's value lives when it has no buffer of its own (schedule/buffer_assignment):
/// `elements` of `base`'s memory from element `offset` on.
struct Placement {
  enum class Kind {
    view,               // a contiguous reshape or shrink of base: no kernel writes it
    padded_interior,    // written by its kernel into the interior of base, a PAD of it, laid out as base
    concatenation_run,  // written by its kernel as one run of base, a concatenation of it and others
  };
  Kind kind = Kind::view;
  UOpPtr base;
  int64_t offset = 0;
  int64_t elements = 0;
};

struct ScheduleItem {
  /// SINK(STORE(INDEX(DEFINE_GLOBAL 0, idx), value)), with DEFINE_GLOBAL k reading bufs[k].
  /// Null for a view or a host step: no kernel runs.
  UOpPtr ast;
  /// The tensor-graph nodes whose buffers fill the kernel's slots; bufs[0] is the one written.
  /// For a view: {the node} (what it views is its Schedule::placements entry). For a host step:
  /// {the CUSTOM node, its sources...}.
  std::vector<UOpPtr> bufs;
  /// A host step (runtime/host_steps): the runtime runs it on the host, no kernel.
  bool host_step = false;
  /// The labels (ir/label.hpp) of the graph nodes this kernel computes, sources first.
  std::vector<std::string> labels;

  bool is_view() const { return ast == nullptr && !host_step; }
};

struct Schedule {
  std::vector<ScheduleItem> items;  // in an order that respects every dependency
  std::vector<UOpPtr> outputs;      // the nodes holding each requested output, in order
  std::unordered_map<const UOp*, Shape> shapes;      // maximum sizes: buffers are allocated for these
  std::unordered_map<const UOp*, SymDims> sym_shapes;  // sizes as index expressions
  std::map<std::string, int64_t> var_vals;             // the value each bound variable had
  /// Every stored node whose value lives in another's memory, and where (schedule/buffer_assignment);
  /// every other stored node has a buffer of its own. The runtime allocates from this alone.
  std::unordered_map<const UOp*, Placement> placements;
  std::vector<UOpPtr> keep_alive;  // nodes made while scheduling, which `shapes` refers to
  /// The requested graph's nodes that the layout rules rebuilt (schedule/column_blocks,
  /// schedule/reader_layout) and what is in their place: `becomes.now(t.uop())` is the node that
  /// holds tensor t's value in this schedule.
  Rebuilt becomes;

  /// The placement of `u`'s value, or null when it has a buffer of its own.
  const Placement* placement(const UOp& u) const {
    auto it = placements.find(&u);
    return it == placements.end() ? nullptr : &it->second;
  }
};

}  // namespace lathe
