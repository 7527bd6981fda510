#include "schedule/reader_layout.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/substitute.hpp"
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

// The graph of some outputs: its sink, its nodes in order, who reads each node, the outputs.
struct Graph {
  explicit Graph(const std::vector<UOpPtr>& outputs) : sink(UOp::make(Ops::SINK, dtypes::void_, outputs)), order(toposort(sink)) {
    for (const UOpPtr& u : order)
      for (const UOpPtr& s : u->src()) read_by[s.get()].push_back(u.get());
    for (const UOpPtr& o : outputs) outs.insert(o.get());
  }
  size_t readers(const UOp* u) const {
    auto it = read_by.find(u);
    return it == read_by.end() ? 0 : it->second.size();
  }
  UOpPtr sink;
  std::vector<UOpPtr> order;
  std::unordered_map<const UOp*, std::vector<const UOp*>> read_by;
  std::unordered_set<const UOp*> outs;
};

// The layout copies of `g`, each with its steps down to the first node that is not a relayout
// step read by that copy only.
std::vector<std::pair<Copy, UOpPtr>> layout_copies(const Graph& g) {
  std::vector<std::pair<Copy, UOpPtr>> out;
  for (const UOpPtr& u : g.order) {
    if (!is_layout_copy(*u)) continue;
    Copy c{u, {}};
    UOpPtr x = u->src(0);
    for (; relayout_step(*x) && g.readers(x.get()) < 2; x = x->src(0)) c.steps.push_back(x);
    out.emplace_back(std::move(c), x);
  }
  return out;
}

// A layout copy of an elementwise node asks for the same copy of each operand of its shape and
// dtype that is computed and read elsewhere too (EfficientNet's squeeze-and-excitation: a
// depthwise convolution's output is pooled and scaled, and the scaled value is copied into channel
// blocks for the projection): that operand is then stored once, in the copy's layout, by the
// kernel that computes it (read_relayouts_from_copies), and the elementwise kernel reads and
// stores the layout rather than transposing.
std::vector<UOpPtr> copy_operands_of_elementwise(const std::vector<UOpPtr>& outputs, Rebuilt* rebuilt) {
  Graph g(outputs);
  std::unordered_map<const UOp*, Copy> through;  // elementwise node -> the copy its operands get
  for (auto& [c, x] : layout_copies(g))
    if (!c.steps.empty() && (is_alu(x->op()) || x->op() == Ops::CAST)) through.emplace(x.get(), c);
  if (through.empty()) return outputs;
  std::unordered_map<const UOp*, Shape> shapes = graph_shapes(g.sink);
  // Whether `s`, an operand of x, is read by a kernel other than x's: by a node outside x's
  // elementwise expression (SiLU's x * sigmoid(x) over a convolution reads it only inside), and
  // by no PAD (its producer may write into the padded copy, schedule/padded_in_place).
  auto elementwise = [](const UOp& u) { return is_alu(u.op()) || u.op() == Ops::CAST || op_has(u.op(), kMovement); };
  auto read_elsewhere = [&](const UOp& x, const UOpPtr& s) {
    std::unordered_set<const UOp*> expression;
    std::vector<const UOp*> todo{&x};
    while (!todo.empty()) {
      const UOp* e = todo.back();
      todo.pop_back();
      if (!expression.insert(e).second) continue;
      for (const UOpPtr& src : e->src())
        if (src != s && elementwise(*src)) todo.push_back(src.get());
    }
    const std::vector<const UOp*>& readers = g.read_by.at(s.get());
    return std::none_of(readers.begin(), readers.end(), [](const UOp* r) { return r->op() == Ops::PAD; }) &&
           std::any_of(readers.begin(), readers.end(), [&](const UOp* r) { return !expression.count(r); });
  };
  std::set<std::pair<const UOp*, const UOp*>> copied;  // (elementwise node, operand)
  for (const auto& [x, c] : through)
    for (const UOpPtr& s : x->src())
      if (s->dtype() == x->dtype() && is_computed(*s) && !relayout_step(*s) && !g.outs.count(s.get()) &&
          shapes.at(s.get()) == shapes.at(x) && read_elsewhere(*x, s))
        copied.emplace(x, s.get());
  if (copied.empty()) return outputs;
  return rebuild(outputs, [&](const UOp& reader, const UOpPtr& source, const UOpPtr& source_now) {
    return copied.count({&reader, source.get()}) ? view_of_copy(through.at(&reader), source_now, shapes) : source_now;
  }, rebuilt);
}

}  // namespace

std::vector<UOpPtr> read_relayouts_from_copies(const std::vector<UOpPtr>& given, Rebuilt* rebuilt) {
  Rebuilt first;
  std::vector<UOpPtr> outputs = copy_operands_of_elementwise(given, rebuilt ? &first : nullptr);
  Graph g(outputs);
  std::unordered_map<const UOp*, Copy> copies;
  for (auto& [c, x] : layout_copies(g)) {
    // x: the first node down the steps that something else reads too; under it, computed data.
    UOpPtr data = x;
    while (relayout_step(*data)) data = data->src(0);
    if (c.steps.empty() || !is_computed(*data) || g.outs.count(x.get()) || g.readers(x.get()) < 2 || copies.count(x.get())) continue;
    copies.emplace(x.get(), std::move(c));
  }
  Rebuilt second;
  if (!copies.empty()) {
    std::unordered_map<const UOp*, Shape> shapes = graph_shapes(g.sink);
    outputs = rebuild(outputs, [&](const UOp& reader, const UOpPtr& source, const UOpPtr& source_now) {
      auto c = copies.find(source.get());
      return c != copies.end() && &reader != c->second.steps.back().get() ? view_of_copy(c->second, source_now, shapes) : source_now;
    }, rebuilt ? &second : nullptr);
  }
  if (rebuilt) {
    first.then(second);
    rebuilt->then(first);
  }
  return outputs;
}

}  // namespace lathe
