#include "ir/label_computed.hpp"

#include <algorithm>

#include "ir/label.hpp"
#include "ir/toposort.hpp"

namespace lathe {

void label_computed(const UOpPtr& root, const std::unordered_set<const UOp*>& inputs, const std::vector<std::string>& labels) {
  auto own = [&](const UOp& u) { return &u == root.get() || (!inputs.count(&u) && labels_of(u).empty()); };
  std::unordered_set<const UOp*> from_inputs(inputs);
  for (const UOpPtr& u : toposort(root, own)) {
    if (!own(*u)) continue;
    bool computed = std::any_of(u->src().begin(), u->src().end(), [&](const UOpPtr& s) { return from_inputs.count(s.get()) > 0; });
    if (computed) from_inputs.insert(u.get());
    if (computed || u == root)
      for (const std::string& l : labels) add_label(u, l);
  }
}

}  // namespace lathe
