#include "opt/tensor_core.hpp"

#include <algorithm>

#include "ir/alu.hpp"
#include "ir/axis.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

// `x` as a tensor core's operand: its float32 value and 16-bit type (a 16-bit float, or one cast
// to float32).
struct Operand {
  UOpPtr value;
  DType input;
};
std::optional<Operand> operand(const UOpPtr& x) {
  if (is_16bit_float(x->dtype())) return Operand{cast(x, dtypes::float32), x->dtype()};
  if (x->op() == Ops::CAST && x->dtype() == dtypes::float32 && is_16bit_float(x->src(0)->dtype())) return Operand{x, x->src(0)->dtype()};
  return std::nullopt;
}

// The kernel's reduction over `k` in a tensor core's form: x and y its operands' float32 values
// (a padded reduction's gate folded into x).
struct Contraction {
  TensorCoreLoops loops;
  UOpPtr red, x, y;
};

std::optional<Contraction> contraction(const UOpPtr& ast, int64_t k_axis, std::string& why) {
  std::vector<Loop> loops = kernel_loops(ast);
  std::optional<Loop> k = find_loop(ast, k_axis);
  if (!k || !k->reduce) return why = "loop " + std::to_string(k_axis) + " is no reduction's", std::nullopt;
  UOpPtr red;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::REDUCE) {
      if (red) return why = "the kernel has more than one reduction", std::nullopt;
      red = u;
    }
  if (red->arg_as<Ops>() != Ops::ADD || red->dtype().count() != 1) return why = "its reduction is not a sum of scalars", std::nullopt;
  for (const Loop& l : loops)
    if (l.kind != AxisKind::Loop || l.symbolic) return why = "loop " + std::to_string(l.axis) + " is already transformed or of a symbolic size", std::nullopt;
  UOpPtr body = red->src(0), gate;
  if (body->op() == Ops::WHERE && is_zero(body->src(2)))
    gate = body->src(0), body = body->src(1);  // a padded reduction: positions past its end add 0
  if (body->op() != Ops::MUL) return why = "the reduction does not sum a product", std::nullopt;
  std::optional<Operand> a = operand(body->src(0)), b = operand(body->src(1));
  if (!a || !b || a->input != b->input) return why = "the product is not of two float16 or two bfloat16 values", std::nullopt;
  // The row loop reads the first operand alone, the column loop the second; the innermost of each.
  auto only = [&](const UOpPtr& in, const UOpPtr& out) -> std::optional<Loop> {
    std::optional<Loop> best;
    for (const Loop& l : loops)
      if (!l.reduce && varies_with(in, l.range.get()) && !varies_with(out, l.range.get())) best = l;
    return best;
  };
  UOpPtr x = a->value, y = b->value;
  std::optional<Loop> m = only(x, y), n = only(y, x);
  if (!m || !n) {  // the product may name its operands either way round
    std::swap(x, y);
    m = only(x, y), n = only(y, x);
  }
  if (!m || !n) return why = "no output loop reads one operand and not the other", std::nullopt;
  if (gate) {
    if (varies_with(gate, n->range.get())) return why = "its padding's gate varies with the column loop", std::nullopt;
    x = where(gate, x, UOp::const_(dtypes::float32, 0.0));
  }
  return Contraction{{*m, *n, *k, a->input}, red, x, y};
}

}  // namespace

std::optional<TensorCoreLoops> tensor_core_loops(const UOpPtr& ast, int64_t k_axis, std::string* why) {
  std::string reason;
  std::optional<Contraction> c = contraction(ast, k_axis, reason);
  if (why) *why = reason;
  if (!c) return std::nullopt;
  return c->loops;
}

bool has_tensor_core(const Target& target, DType input) {
  if (!target.has_local) return false;
  for (const TensorCore& tc : target.tensor_cores)
    if (tc.m == kTensorCoreM && tc.n == kTensorCoreN && tc.k == kTensorCoreK && tc.in == input) return true;
  return false;
}

UOpPtr tensor_core(const UOpPtr& ast, int64_t k_axis, int64_t new_axis) {
  std::string why;
  std::optional<Contraction> c = contraction(ast, k_axis, why);
  std::string name = "TC(" + std::to_string(k_axis) + ", 0)";
  if (!c) throw OptError(name + " does not fit: " + why);
  const Loop &m = c->loops.m, &n = c->loops.n, &k = c->loops.k;
  if (m.size % kTensorCoreM || n.size % kTensorCoreN || k.size % kTensorCoreK)
    throw OptError(name + " does not fit: rows " + std::to_string(m.size) + ", columns " + std::to_string(n.size) + " and reduction " +
                   std::to_string(k.size) + " are not multiples of 16, 8 and 16");
  UOpPtr mo = make_range(UOp::index_const(m.size / kTensorCoreM), m.axis), no = make_range(UOp::index_const(n.size / kTensorCoreN), n.axis);
  UOpPtr ko = make_range(UOp::index_const(k.size / kTensorCoreK), k.axis);
  UOpPtr lane = make_range(UOp::index_const(kWarpLanes), new_axis, AxisKind::Warp), acc = make_range(UOp::index_const(4), new_axis + 1, AxisKind::Upcast);
  UOpPtr g = idiv(lane, 4), q = lane % 4;
  std::vector<UOpPtr> a, b;
  for (int64_t i = 0; i < 8; ++i)
    a.push_back(substitute(c->x, {{m.range.get(), mo * kTensorCoreM + g + 8 * ((i >> 1) & 1)}, {k.range.get(), ko * kTensorCoreK + q * 2 + ((i & 1) + 8 * (i >> 2))}}));
  for (int64_t i = 0; i < 4; ++i)
    b.push_back(substitute(c->y, {{k.range.get(), ko * kTensorCoreK + q * 2 + ((i & 1) + 8 * (i >> 1))}, {n.range.get(), no * kTensorCoreN + g}}));
  UOpPtr zero = UOp::const_(dtypes::float32, 0.0);
  UOpPtr w = UOp::make(Ops::WMMA, dtypes::float32.vec(4),
                       {UOp::make(Ops::VECTORIZE, dtypes::float32.vec(8), a), UOp::make(Ops::VECTORIZE, dtypes::float32.vec(4), b),
                        UOp::make(Ops::VECTORIZE, dtypes::float32.vec(4), {zero, zero, zero, zero}), block_sync()},
                       int64_t{c->loops.input == dtypes::float16 ? 1 : 2});
  // This lane's accumulator `acc` (an upcast loop: a constant in each of its copies) of the result.
  UOpPtr mine = UOp::make(Ops::GEP, dtypes::float32, {w}, int64_t{3});
  for (int64_t i = 2; i >= 0; --i) mine = where(eq(acc, UOp::index_const(i)), UOp::make(Ops::GEP, dtypes::float32, {w}, i), mine);
  std::vector<UOpPtr> src{mine};
  for (size_t i = 1; i < c->red->src().size(); ++i) src.push_back(c->red->src(i) == k.range ? ko : c->red->src(i));
  UOpPtr sum = UOp::make(Ops::REDUCE, dtypes::float32, std::move(src), Ops::ADD);
  UOpPtr out = substitute(ast, {{c->red.get(), c->red->dtype() == dtypes::float32 ? sum : cast(sum, c->red->dtype())}});
  out = substitute(out, {{m.range.get(), mo * kTensorCoreM + g + 8 * idiv(acc, 2)}, {n.range.get(), no * kTensorCoreN + q * 2 + acc % 2}});
  return simplify(out);
}

}  // namespace lathe
