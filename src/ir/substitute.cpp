#include "ir/substitute.hpp"

#include "ir/label.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/toposort.hpp"

namespace lathe {

UOpPtr substitute(const UOpPtr& root, const Substitution& map) {
  if (map.empty()) return root;
  static const PatternMatcher pm({{UPat(), [](const Match& m) -> UOpPtr {
                                     const auto& mp = m.ctx<const Substitution>();
                                     auto it = mp.find(m.root().get());
                                     return it == mp.end() ? nullptr : it->second;
                                   }}});
  return graph_rewrite(root, pm, const_cast<Substitution*>(&map), Direction::TopDown);
}

const UOpPtr& Rebuilt::now(const UOpPtr& u) const {
  auto it = to_.find(u.get());
  return it == to_.end() ? u : it->second;
}

void Rebuilt::record(const UOpPtr& from, const UOpPtr& to) {
  if (to_.insert_or_assign(from.get(), to).second) from_.push_back(from);
}

void Rebuilt::then(const Rebuilt& next) {
  for (auto& [from, to] : to_) to = next.now(to);
  for (const UOpPtr& from : next.from_)
    if (to_.emplace(from.get(), next.now(from)).second) from_.push_back(from);
}

UOpPtr rebuilt_over(const UOp& u, const UOpPtr& first) {
  std::vector<UOpPtr> src{first};
  src.insert(src.end(), u.src().begin() + 1, u.src().end());
  return labelled_as(UOp::make(u.op(), u.dtype(), std::move(src), u.arg()), labels_of(u));
}

std::vector<UOpPtr> rebuild(const std::vector<UOpPtr>& outputs, const SourceSwap& swap, Rebuilt* rebuilt) {
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::unordered_map<const UOp*, UOpPtr> now;  // each node as rebuilt
  for (const UOpPtr& u : toposort(sink)) {
    std::vector<UOpPtr> src;
    bool changed = false;
    for (const UOpPtr& s : u->src()) {
      UOpPtr n = swap(*u, s, now.at(s.get()));
      changed |= n != s;
      src.push_back(std::move(n));
    }
    UOpPtr made = changed ? UOp::make(u->op(), u->dtype(), std::move(src), u->arg()) : u;
    if (changed) {
      for (const std::string& l : labels_of(*u)) add_label(made, l);
      if (rebuilt && u != sink) rebuilt->record(u, made);
    }
    now.emplace(u.get(), std::move(made));
  }
  const UOpPtr& out = now.at(sink.get());
  return std::vector<UOpPtr>(out->src().begin(), out->src().end());
}

UOpPtr relist_reductions(const UOpPtr& root, const LoopLists& with) {
  if (with.empty()) return root;
  static const PatternMatcher pm({{UPat(Ops::REDUCE), [](const Match& m) -> UOpPtr {
                                     const auto& lists = m.ctx<const LoopLists>();
                                     const UOpPtr& red = m.root();
                                     std::vector<UOpPtr> src{red->src(0)};
                                     bool changed = false;
                                     for (size_t i = 1; i < red->src().size(); ++i) {
                                       auto it = lists.find(red->src(i).get());
                                       if (it == lists.end()) {
                                         src.push_back(red->src(i));
                                         continue;
                                       }
                                       src.insert(src.end(), it->second.begin(), it->second.end());
                                       changed = true;
                                     }
                                     return changed ? UOp::make(Ops::REDUCE, red->dtype(), std::move(src), red->arg()) : nullptr;
                                   }}});
  return graph_rewrite(root, pm, const_cast<LoopLists*>(&with));
}

}  // namespace lathe
