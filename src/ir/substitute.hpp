// Replacing nodes in a graph: every occurrence of a key of `map` under `root` becomes its value.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

using Substitution = std::unordered_map<const UOp*, UOpPtr>;

UOpPtr substitute(const UOpPtr& root, const Substitution& map);

/// The graph of `outputs` with each node's sources replaced as `swap` says: it gets the reading
/// node, the source as it was and the source as rebuilt, and returns what the node reads now
/// (source_now to keep it). A rebuilt node keeps its labels (ir/label.hpp), as the kernels that
/// compute it are named by them. The outputs in order, rebuilt where something under them changed.
using SourceSwap = std::function<UOpPtr(const UOp& reader, const UOpPtr& source, const UOpPtr& source_now)>;

/// What rebuilds put in place of the nodes they changed (tinygrad's "becomes" map), so a caller can
/// find its own node in the graph a pass returned. The nodes it names are held: their addresses
/// stay theirs.
class Rebuilt {
 public:
  /// `u` as rebuilt: its replacement, or `u` where nothing under it changed.
  const UOpPtr& now(const UOpPtr& u) const;
  void record(const UOpPtr& from, const UOpPtr& to);
  /// These rebuilds followed by `next`'s (which rebuilt the graph these returned).
  void then(const Rebuilt& next);
  bool empty() const { return to_.empty(); }
  /// Each node rebuilt and what is in its place.
  const std::unordered_map<const UOp*, UOpPtr>& map() const { return to_; }

 private:
  std::unordered_map<const UOp*, UOpPtr> to_;
  std::vector<UOpPtr> from_;  // the keys of to_, held
};

/// `u` with its first source replaced by `first` (its other sources, its argument and its labels
/// kept): a view or an elementwise step rebuilt over a new operand.
UOpPtr rebuilt_over(const UOp& u, const UOpPtr& first);

/// `rebuilt`, where given, records each node that changed.
std::vector<UOpPtr> rebuild(const std::vector<UOpPtr>& outputs, const SourceSwap& swap, Rebuilt* rebuilt = nullptr);

/// Each reduction's loop list with every loop that is a key of `with` replaced, in its place, by
/// the loops of its value (none: the loop leaves the list). Only the lists change: where the loop
/// is read as an index, substitute() replaces it.
using LoopLists = std::unordered_map<const UOp*, std::vector<UOpPtr>>;
UOpPtr relist_reductions(const UOpPtr& root, const LoopLists& with);

}  // namespace lathe
