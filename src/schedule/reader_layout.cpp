#include "schedule/reader_layout.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ir/label.hpp"
#include "ir/toposort.hpp"
#include "schedule/realize.hpp"
#include "schedule/shape.hpp"

namespace lathe {
namespace {

bool relayout_step(const UOp& u) { return (u.op() == Ops::PERMUTE || u.op() == Ops::RESHAPE) && u.src().size() == 1; }

// A copy of a node in another layout: CONTIGUOUS over relayout steps, the copy's source first and
// the step that reads the node last.
struct Copy {
  UOpPtr contiguous;
  std::vector<UOpPtr> steps;
};

// The copy of `x` rebuilt over `x_now` (x as rebuilt), viewed back in x's shape.
UOpPtr view_of_copy(const Copy& copy, const UOpPtr& x_now, const std::unordered_map<const UOp*, Shape>& shapes) {
  UOpPtr v = x_now;
  for (auto it = copy.steps.rbegin(); it != copy.steps.rend(); ++it) v = UOp::make((*it)->op(), (*it)->dtype(), {v}, (*it)->arg());
  v = UOp::make(Ops::CONTIGUOUS, copy.contiguous->dtype(), {v}, copy.contiguous->arg());
  for (const UOpPtr& step : copy.steps) {
    if (step->op() == Ops::RESHAPE) {
      v = UOp::make(Ops::RESHAPE, v->dtype(), {v}, shapes.at(step->src(0).get()));
      continue;
    }
    v = UOp::make(Ops::PERMUTE, v->dtype(), {v}, inverse_permutation(step->arg_as<std::vector<int64_t>>()));
  }
  return v;
}

}  // namespace

std::vector<UOpPtr> read_relayouts_from_copies(const std::vector<UOpPtr>& outputs) {
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::vector<UOpPtr> order = toposort(sink);
  std::unordered_map<const UOp*, int> readers;
  for (const UOpPtr& u : order)
    for (const UOpPtr& s : u->src()) ++readers[s.get()];
  std::unordered_set<const UOp*> outs;
  for (const UOpPtr& o : outputs) outs.insert(o.get());
  std::unordered_map<const UOp*, Copy> copies;
  for (const UOpPtr& u : order) {
    if (u->op() != Ops::CONTIGUOUS || !std::holds_alternative<std::string>(u->arg()) || u->arg_as<std::string>() != kLayoutCopy) continue;
    // x: the first node down the steps that something else reads too; under it, computed data.
    Copy c{u, {}};
    UOpPtr x = u->src(0);
    for (; relayout_step(*x) && readers[x.get()] < 2; x = x->src(0)) c.steps.push_back(x);
    UOpPtr data = x;
    while (relayout_step(*data)) data = data->src(0);
    if (c.steps.empty() || !is_computed(*data) || outs.count(x.get()) || readers[x.get()] < 2 || copies.count(x.get())) continue;
    copies.emplace(x.get(), std::move(c));
  }
  if (copies.empty()) return outputs;

  std::unordered_map<const UOp*, Shape> shapes = graph_shapes(sink);
  std::unordered_map<const UOp*, UOpPtr> now;  // each node as rebuilt
  for (const UOpPtr& u : order) {
    std::vector<UOpPtr> src;
    bool changed = false;
    for (const UOpPtr& s : u->src()) {
      UOpPtr n = now.at(s.get());
      auto c = copies.find(s.get());
      if (c != copies.end() && u != c->second.steps.back()) n = view_of_copy(c->second, n, shapes);
      changed |= n != s;
      src.push_back(std::move(n));
    }
    UOpPtr rebuilt = changed ? UOp::make(u->op(), u->dtype(), std::move(src), u->arg()) : u;
    if (changed)
      for (const std::string& l : labels_of(*u)) add_label(rebuilt, l);
    now.emplace(u.get(), std::move(rebuilt));
  }
  return std::vector<UOpPtr>(now.at(sink.get())->src().begin(), now.at(sink.get())->src().end());
}

}  // namespace lathe
