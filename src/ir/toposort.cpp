#include "ir/toposort.hpp"

#include <unordered_set>

namespace lathe {

std::vector<UOpPtr> toposort(const UOpPtr& root, const std::function<bool(const UOp&)>& enter) {
  std::vector<UOpPtr> order;
  std::unordered_set<const UOp*> seen{root.get()};
  struct Frame {
    const UOp* node;
    size_t next_src;
  };
  std::vector<Frame> stack{{root.get(), 0}};
  if (enter && !enter(*root)) stack.back().next_src = root->src().size();
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next_src < f.node->src().size()) {
      const UOpPtr& s = f.node->src()[f.next_src++];
      if (!seen.insert(s.get()).second) continue;
      size_t start = enter && !enter(*s) ? s->src().size() : 0;
      stack.push_back({s.get(), start});
      continue;
    }
    order.push_back(f.node->ptr());
    stack.pop_back();
  }
  return order;
}

}  // namespace lathe
