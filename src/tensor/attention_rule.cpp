#include "tensor/attention_rule.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "schedule/shape.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLog2e = 1.4426950408889634;
// Attention's scores (batch x heads x queries x keys) are held for a block of queries at a time
// once all of them would take more than half the cache every core shares: a block's scores,
// written by one kernel and read by the next, stay there beside the queries, keys and values.
int64_t score_budget(const Target& target) { return target.l3_bytes / 2; }
// A block's queries are a multiple of this where they can be: a row loop the register tile divides.
constexpr int64_t kQueryRowMultiple = 32;
// The most nodes between the scores and their product of queries and keys that a block of queries
// recomputes (a scale, a mask, casts: PyTorch's exports have two or three).
constexpr int kMostStepsToProduct = 6;

bool reduces_last(const UOp& u, Ops op, size_t rank) {
  if (u.op() != Ops::REDUCE_AXIS || rank == 0) return false;
  const auto& r = u.arg_as<ReduceArg>();
  return r.op == op && r.axes == std::vector<int64_t>{static_cast<int64_t>(rank - 1)};
}

// A constant's value seen through the views that broadcast it (RESHAPE / EXPAND of a CONST).
std::optional<double> constant_value(const UOpPtr& u) {
  UOpPtr cur = u;
  while (cur->op() == Ops::RESHAPE || cur->op() == Ops::EXPAND) cur = cur->src(0);
  if (!cur->is_const()) return std::nullopt;
  return const_as_double(cur->const_value());
}

class Rule {
 public:
  Rule(const std::vector<UOpPtr>& outputs, int64_t score_bytes)
      : sink_(UOp::make(Ops::SINK, dtypes::void_, outputs)), shapes_(graph_shapes(sink_)), score_bytes_(score_bytes) {}

  std::vector<UOpPtr> run(const std::vector<UOpPtr>& outputs) {
    Substitution found;
    for (const UOpPtr& u : toposort(sink_))
      if (std::optional<UOpPtr> one = as_attention(u)) found.emplace(u.get(), *one);
    if (found.empty()) return outputs;
    std::vector<UOpPtr> out;
    for (const UOpPtr& o : outputs) out.push_back(substitute(o, found));
    return out;
  }

 private:
  const Shape& shape(const UOpPtr& u) const { return shapes_.at(u.get()); }
  Tensor tensor(const UOpPtr& u) const { return Tensor(u, shape(u)); }

  // Whether every node between `low` and `high` (each that reads `low`, directly or not, and that
  // `high` reads) is read by nodes between them or by `high` alone. The readers are counted once,
  // for the whole graph, on the first question.
  bool read_only_inside(const UOpPtr& low, const UOpPtr& high) {
    if (readers_.empty())
      for (const UOpPtr& u : toposort(sink_))
        for (const UOpPtr& s : u->src()) readers_[s.get()].push_back(u.get());
    std::unordered_set<const UOp*> between{low.get()};
    for (const UOpPtr& u : toposort(high))
      if (std::any_of(u->src().begin(), u->src().end(), [&](const UOpPtr& s) { return between.count(s.get()) > 0; })) between.insert(u.get());
    for (const UOp* u : between)
      if (u != high.get())
        for (const UOp* reader : readers_[u])
          if (!between.count(reader)) return false;
    return true;
  }

  // Whether `u` is made of constants alone (the same on every run of the plan).
  bool known(const UOpPtr& u) { return detail::made_of_constants(u, known_); }

  // softmax(x, last axis) as Tensor::softmax builds it: exp2((x - max(x)) * log2 e) / its sum (its
  // float32 values below the smallest normal taken as 0 after); x.
  std::optional<UOpPtr> softmax_input(const UOpPtr& p) const {
    // That flush exactly, where(p < the smallest normal float, 0, p): a program's own threshold on
    // the probabilities is another graph, which this kernel would not compute.
    if (p->op() == Ops::WHERE && p->src(0)->op() == Ops::CMPLT && p->src(0)->src(0) == p->src(2) &&
        constant_value(p->src(0)->src(1)) == static_cast<double>(std::numeric_limits<float>::min()) && constant_value(p->src(1)) == 0.0)
      return softmax_input(p->src(2));
    size_t rank = shape(p).size();
    if (p->op() != Ops::FDIV || p->src(1)->op() != Ops::EXPAND) return std::nullopt;
    const UOpPtr &e = p->src(0), &sum = p->src(1)->src(0);
    if (!reduces_last(*sum, Ops::ADD, rank) || sum->src(0) != e || e->op() != Ops::EXP2) return std::nullopt;
    const UOpPtr& scaled = e->src(0);
    if (scaled->op() != Ops::MUL) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const UOpPtr &shifted = scaled->src(i), &factor = scaled->src(1 - i);
      std::optional<double> c = constant_value(factor);
      if (!c || std::abs(*c - kLog2e) > 1e-6 || shifted->op() != Ops::SUB || shifted->src(1)->op() != Ops::EXPAND) continue;
      const UOpPtr &x = shifted->src(0), &max = shifted->src(1)->src(0);
      if (reduces_last(*max, Ops::MAX, rank) && max->src(0) == x) return x;
    }
    return std::nullopt;
  }

  // For `r`, a sum over the last axis of a product (..., Q, D, K) as Tensor::matmul builds it,
  // softmax(scores) @ values as one ATTENTION node (shaped as `r`, the summed axis kept), when the
  // scores' mask restricts the keys.
  std::optional<UOpPtr> as_attention(const UOpPtr& r) {
    const Shape& rs = shape(r);
    size_t n = rs.size();
    if (n < 3 || !r->dtype().is_float() || !reduces_last(*r, Ops::ADD, n) || r->src(0)->op() != Ops::MUL) return std::nullopt;
    const UOpPtr& product = r->src(0);
    for (int i = 0; i < 2; ++i) {
      const UOpPtr &weights = product->src(i), &columns = product->src(1 - i);
      if (weights->op() != Ops::EXPAND || columns->op() != Ops::EXPAND) continue;
      const UOpPtr &row = weights->src(0), &cols = columns->src(0);  // (..., Q, 1, K) and (..., 1, D, K)
      if (row->op() != Ops::RESHAPE || shape(row)[n - 2] != 1 || shape(cols)[n - 3] != 1) continue;
      std::optional<UOpPtr> scores = softmax_input(row->src(0));
      if (!scores || shape(*scores).size() != n - 1) continue;
      Tensor values = tensor(cols).squeeze(static_cast<int64_t>(n - 3)).transpose(-1, -2);  // (..., K, D)
      // The mask's flags (a plan of their own where the mask is made of constants) are computed
      // once, and only where read: for the attention kernel (float32), or for the keys the blocks
      // of queries skip once those blocks are found.
      std::optional<std::optional<SeenKeys>> seen;
      auto seen_keys = [&]() -> const std::optional<SeenKeys>& {
        if (!seen) seen = seen_keys_of(*scores);
        return *seen;
      };
      // Rewritten only where nothing else reads a value between the product and `r` (the scores,
      // the softmax): another reader would need them whole, computed a second time.
      bool alone = read_only_inside(mask_nodes(*scores).product, r);
      std::optional<AttentionKeys> keys =
          alone && r->dtype() == dtypes::float32 && seen_keys() ? key_range(*seen_keys(), shape(*scores).back()) : std::nullopt;
      // Over every key the matmuls are faster than the attention kernel.
      if (std::optional<Tensor> one = keys ? attention(Tensor(keys_innermost(*scores), shape(*scores)), values, keys) : std::nullopt)
        return one->reshape(rs).uop();
      if (std::optional<Tensor> blocks = in_query_blocks(r, *scores, values, seen_keys)) return blocks->reshape(rs).uop();
      return std::nullopt;
    }
    return std::nullopt;
  }

  // softmax(scores) @ values (`r`) a block of queries at a time where the scores (..., Q, K) would take
  // more than the budget (score_budget), so no plan holds a long sequence's whole score matrix: each block's
  // scores computed again from its rows of the queries and of every operand of the nodes between
  // their product with the keys and the scores (a scale, a mask given as an input), joined along
  // the queries; where a mask known at build time shuts keys out (`seen`), a block reads only the
  // keys some query of it sees. Nothing where they fit, no such product is found, or a value
  // between the product and `r` is read elsewhere too.
  std::optional<Tensor> in_query_blocks(const UOpPtr& r, const UOpPtr& scores, const Tensor& values,
                                        const std::function<const std::optional<SeenKeys>&()>& seen_keys) {
    const Shape& s = shape(scores);
    int64_t queries = s[s.size() - 2];
    if (queries == 0) return std::nullopt;
    int64_t per_query = shape_numel(s) / queries * scores->dtype().itemsize();
    if (per_query * queries <= score_bytes_) return std::nullopt;
    std::optional<Chain> chain = chain_to_product(scores);
    if (!chain || !read_only_inside(chain->product, r)) return std::nullopt;
    int64_t rows = std::max<int64_t>(1, score_bytes_ / std::max<int64_t>(per_query, 1));
    if (rows >= kQueryRowMultiple) rows -= rows % kQueryRowMultiple;
    int64_t keys = s.back();
    const std::optional<SeenKeys>& seen = seen_keys();
    std::vector<Tensor> parts;
    for (int64_t first = 0; first < queries; first += rows) {
      int64_t count = std::min(rows, queries - first);
      auto [begin, end] = seen ? keys_seen(*seen, keys, first, count) : std::pair<int64_t, int64_t>{0, keys};
      if (begin >= end) begin = 0, end = keys;  // no key seen: the softmax is NaN either way
      parts.push_back(normalized_after(scores_of_rows(*chain, first, count, begin, end), values.slice(-2, begin, end)));
    }
    return Tensor::cat(parts, -2);
  }

  // softmax(scores) @ values with the division by each row's sum moved after the product: the
  // exponentials feed the product and the sum, and the block's probabilities are never stored (a
  // pass over the block's scores fewer: encoder_long's blocks spent a tenth of the model
  // normalising them). float32 exponentials below the smallest normal number are taken as 0, as
  // Tensor::softmax takes such probabilities (a subnormal operand slows every multiply). A 16-bit
  // float keeps the softmax: its sum of a row's values times up to one per key could overflow.
  static Tensor normalized_after(const Tensor& scores, const Tensor& values) {
    if (scores.dtype() != dtypes::float32 && scores.dtype() != dtypes::float64) return scores.softmax(-1).matmul(values);
    Tensor e = subnormals_as_zero((scores - scores.max({-1}, true)).exp());
    return e.matmul(values) / e.sum({-1}, true);
  }

  // A node between some scores and their product of queries and keys.
  struct MaskStep {
    UOpPtr node;
    size_t at;  // which source carries the scores
  };

  // The nodes from some scores down to their product of queries and keys (each with the source the
  // scores come through), and that product's operands: q (..., Q, D), kt (..., D, K).
  struct Chain {
    std::vector<MaskStep> steps;
    UOpPtr product;
    Tensor q, kt;
  };
  static bool step_op(Ops op) {
    return op == Ops::ADD || op == Ops::SUB || op == Ops::MUL || op == Ops::FDIV || op == Ops::WHERE || op == Ops::CAST;
  }
  bool reaches_product(const UOpPtr& u, int depth) {
    if (product_operands(u)) return true;
    if (depth == 0 || !step_op(u->op())) return false;
    return std::any_of(u->src().begin(), u->src().end(), [&](const UOpPtr& s) { return reaches_product(s, depth - 1); });
  }
  std::optional<Chain> chain_to_product(const UOpPtr& scores) {
    Chain c;
    UOpPtr cur = scores;
    for (int depth = kMostStepsToProduct; depth >= 0; --depth) {
      if (std::optional<std::pair<Tensor, Tensor>> ops = product_operands(cur)) {
        c.product = cur, c.q = ops->first, c.kt = ops->second;
        return c;
      }
      if (depth == 0 || !step_op(cur->op())) return std::nullopt;
      std::optional<size_t> at;
      for (size_t i = 0; i < cur->src().size(); ++i) {
        if (!reaches_product(cur->src(i), depth - 1)) continue;
        if (at) return std::nullopt;  // the product on two paths
        at = i;
      }
      if (!at) return std::nullopt;
      c.steps.push_back({cur, *at});
      cur = cur->src(*at);
    }
    return std::nullopt;
  }
  // The chain's scores for queries [first, first + count) and keys [begin, end): the product of
  // those rows of the queries with those keys, under each step with its other operands' part.
  Tensor scores_of_rows(const Chain& c, int64_t first, int64_t count, int64_t begin, int64_t end) {
    Tensor cur = c.q.slice(-2, first, first + count).matmul(c.kt.slice(-1, begin, end));
    for (auto it = c.steps.rbegin(); it != c.steps.rend(); ++it) {
      const UOp& u = *it->node;
      std::vector<UOpPtr> src;
      for (size_t i = 0; i < u.src().size(); ++i)
        src.push_back(i == it->at ? cur.uop() : tensor(u.src(i)).slice(-2, first, first + count).slice(-1, begin, end).uop());
      Shape sh = shape(it->node);
      sh[sh.size() - 2] = count, sh.back() = end - begin;
      cur = Tensor(UOp::make(u.op(), u.dtype(), src, u.arg()), sh);
    }
    return cur;
  }

  // The operands of `cur`, a product of queries and keys in Tensor::matmul's form, (..., Q, K):
  // RESHAPE(sum over the last axis of (..., Q, 1, D) x (..., 1, K, D) expanded), as q (..., Q, D)
  // and kt (..., D, K).
  std::optional<std::pair<Tensor, Tensor>> product_operands(const UOpPtr& cur) const {
    if (cur->op() != Ops::RESHAPE) return std::nullopt;
    const UOpPtr& sum = cur->src(0);
    size_t n = shape(sum).size();
    if (n < 3 || !reduces_last(*sum, Ops::ADD, n) || sum->src(0)->op() != Ops::MUL) return std::nullopt;
    const UOpPtr& product = sum->src(0);
    for (int i = 0; i < 2; ++i) {
      const UOpPtr &qs = product->src(i), &ks = product->src(1 - i);
      if (qs->op() != Ops::EXPAND || ks->op() != Ops::EXPAND || shape(qs->src(0))[n - 2] != 1 || shape(ks->src(0))[n - 3] != 1) continue;
      Tensor q = tensor(qs->src(0)).squeeze(static_cast<int64_t>(n - 2));
      Tensor kt = tensor(ks->src(0)).squeeze(static_cast<int64_t>(n - 3)).transpose(-1, -2);
      return std::make_pair(q, kt);
    }
    return std::nullopt;
  }

  // `scores` with the product of queries and keys it is computed from (Tensor::matmul's form,
  // under the mask's nodes) read as attention_scores reads it: the keys stored innermost in blocks.
  UOpPtr keys_innermost(const UOpPtr& scores) {
    UOpPtr cur = mask_nodes(scores).product;
    std::optional<std::pair<Tensor, Tensor>> ops = cur->dtype() == dtypes::float32 ? product_operands(cur) : std::nullopt;
    if (!ops) return scores;
    Tensor blocked = attention_scores(ops->first, ops->second);
    if (blocked.shape() != shape(cur)) return scores;
    return substitute(scores, Substitution{{cur.get(), blocked.uop()}});
  }

  // The mask's nodes over the scores' product, from `scores` down: each an Add, Sub, Mul, Div,
  // Where (not through its condition) or float cast whose other operands are made of constants;
  // and the product, the first node below them that is none of those.
  struct MaskNodes {
    std::vector<MaskStep> steps;
    UOpPtr product;
  };
  MaskNodes mask_nodes(const UOpPtr& scores) {
    MaskNodes out;
    for (UOpPtr cur = scores;; cur = cur->src(out.steps.back().at)) {
      out.product = cur;
      bool follows = cur->op() == Ops::ADD || cur->op() == Ops::SUB || cur->op() == Ops::MUL || cur->op() == Ops::FDIV ||
                     cur->op() == Ops::WHERE || (cur->op() == Ops::CAST && cur->dtype().is_float());
      if (!follows) return out;
      std::vector<size_t> unknown;
      for (size_t i = 0; i < cur->src().size(); ++i)
        if (!known(cur->src(i))) unknown.push_back(i);
      if (unknown.size() != 1 || (cur->op() == Ops::WHERE && unknown[0] == 0)) return out;
      out.steps.push_back({cur, unknown[0]});
    }
  }

  // The keys each query of `scores` (..., Q, K) sees, from the mask nodes above its product: the
  // Where / Add / Sub of constants that put -inf at some keys, and the scales by positive constants
  // and float casts after them.
 public:
  std::optional<SeenKeys> seen_keys_of(const UOpPtr& scores) {
    std::vector<MaskStep> steps = mask_nodes(scores).steps;
    std::optional<Tensor> shut;  // where the value is -inf whatever the inputs
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      const UOp& u = *it->node;
      auto other = [&](size_t i) { return tensor(u.src(i)); };
      switch (u.op()) {
        case Ops::WHERE: {
          Tensor passes = it->at == 1 ? other(0) : other(0).logical_not();  // where the scores go on
          Tensor branch = other(it->at == 1 ? 2 : 1);
          Tensor here = passes.logical_not().logical_and(branch == -kInf);
          shut = shut ? passes.logical_and(*shut).logical_or(here) : here;
          break;
        }
        case Ops::ADD:
          shut = shut ? shut->logical_and(other(1 - it->at) < kInf).logical_or(other(1 - it->at) == -kInf) : other(1 - it->at) == -kInf;
          break;
        case Ops::SUB:
          if (it->at == 1) {  // m - x: the scores' -inf becomes +inf
            if (shut) return std::nullopt;
            shut = other(0) == -kInf;
          } else {
            shut = shut ? shut->logical_and(other(1) > -kInf).logical_or(other(1) == kInf) : other(1) == kInf;
          }
          break;
        case Ops::MUL:
        case Ops::FDIV:
          if (!shut) break;  // a scale before the mask
          if (u.op() == Ops::FDIV && it->at != 0) return std::nullopt;
          shut = shut->logical_and(u.op() == Ops::MUL ? other(1 - it->at) > 0.0 : (other(1) > 0.0).logical_and(other(1) < kInf));
          break;
        default: break;  // a float cast keeps -inf
      }
    }
    if (!shut) return std::nullopt;
    const Shape& s = shape(scores);
    int64_t queries = s[s.size() - 2], keys = s.back();
    std::vector<int64_t> lead;
    for (size_t a = 0; a + 2 < s.size(); ++a) lead.push_back(static_cast<int64_t>(a));
    Tensor flags = lead.empty() ? *shut : shut->all(lead);
    return lathe::seen_keys_of(flags.reshape({queries, keys}).cast(dtypes::uint8).to_vector<uint8_t>(), queries, keys, queries, keys);
  }

 private:
  UOpPtr sink_;
  std::unordered_map<const UOp*, Shape> shapes_;
  int64_t score_bytes_;  // the most bytes of scores held at once
  std::unordered_map<const UOp*, bool> known_;
  std::unordered_map<const UOp*, std::vector<const UOp*>> readers_;  // each node's readers in the graph
};

}  // namespace

std::vector<UOpPtr> attention_as_one_node(const std::vector<UOpPtr>& outputs, const Target& target) {
  // The one-kernel attention is a CPU scheme (a core's tile of queries in vector registers); a GPU
  // Target runs attention as its matmuls and softmax.
  if (outputs.empty() || target.has_local) return outputs;
  // Most graphs hold no softmax (an EXP2): look before computing every node's shape.
  bool exponent = false;
  for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, outputs))) {
    if (u->op() == Ops::DEFINE_VAR || u->op() == Ops::BIND) return outputs;  // symbolic sizes: the kernel needs static ones
    exponent = exponent || u->op() == Ops::EXP2;
  }
  return exponent ? Rule(outputs, score_budget(target)).run(outputs) : outputs;
}

std::optional<SeenKeys> seen_keys(const Tensor& scores) {
  if (scores.is_symbolic() || scores.ndim() < 2 || !scores.dtype().is_float()) return std::nullopt;
  return Rule({scores.uop()}, /*score_bytes=*/0).seen_keys_of(scores.uop());  // the mask analysis alone: no blocks
}

}  // namespace lathe::detail
