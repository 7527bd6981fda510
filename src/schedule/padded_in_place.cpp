#include "schedule/padded_in_place.hpp"

#include <algorithm>

#include "schedule/reader_layout.hpp"
#include "schedule/realize.hpp"

namespace lathe {
namespace {

bool is_static(const SymDims& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const UOpPtr& d) { return d->is_const(); });
}

}  // namespace

std::unordered_map<const UOp*, UOpPtr> padded_in_place(const std::vector<UOpPtr>& order,
                                                       const std::vector<UOpPtr>& outputs,
                                                       const std::unordered_map<const UOp*, SymDims>& sym_shapes,
                                                       const std::unordered_map<const UOp*, bool>& realized) {
  std::unordered_map<const UOp*, UOpPtr> into;
  for (const UOpPtr& pad : order) {
    // A PAD with symbolic amounts carries them as sources after the pad value.
    if (pad->op() != Ops::PAD || pad->src().size() != 2 || !is_stored(*pad, nullptr, realized) || pad->src(1)->op() != Ops::CONST)
      continue;
    UOpPtr x = pad->src(0);
    // A layout copy of a value the schedule stores in that layout (the kernel computing it writes
    // it so: schedule/reader_layout) is that value's store: that kernel writes the interior.
    bool relaid = is_layout_copy(*x) && x->src(0)->op() != Ops::BUFFER && is_stored(*x->src(0), nullptr, realized);
    if (relaid) x = x->src(0);
    if (!(is_computed(*x) || relaid) || !is_stored(*x, nullptr, realized) || into.count(x.get())) continue;
    if (std::find(outputs.begin(), outputs.end(), pad) != outputs.end() ||
        std::find(outputs.begin(), outputs.end(), x) != outputs.end())
      continue;
    if (!is_static(sym_shapes.at(x.get())) || !is_static(sym_shapes.at(pad.get()))) continue;
    into.emplace(x.get(), pad);
  }
  return into;
}

}  // namespace lathe
