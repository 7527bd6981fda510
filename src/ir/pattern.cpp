#include "ir/pattern.hpp"

#include <algorithm>
#include <numeric>

#include "lathe/error.hpp"

namespace lathe {

UPat UPat::var(std::string name, std::optional<DType> dtype) {
  UPat p;
  p.name_ = std::move(name);
  if (dtype) p.dtypes_ = {*dtype};
  return p;
}

UPat UPat::cvar(std::string name, std::optional<DType> dtype) {
  UPat p = var(std::move(name), dtype);
  p.ops_ = {Ops::CONST};
  return p;
}

UPat UPat::cnst(double value) {
  UPat p(Ops::CONST);
  p.const_value_ = value;
  return p;
}

UPat UPat::alu(std::string name) {
  UPat p;
  for (int i = 0; i < kNumOps; ++i)
    if (is_alu(static_cast<Ops>(i))) p.ops_.push_back(static_cast<Ops>(i));
  p.name_ = std::move(name);
  return p;
}

UPat&& UPat::named(std::string name) && {
  name_ = std::move(name);
  return std::move(*this);
}
UPat&& UPat::dtype(DType dt) && {
  dtypes_ = {dt};
  return std::move(*this);
}
UPat&& UPat::dtypes(std::vector<DType> dts) && {
  dtypes_ = std::move(dts);
  return std::move(*this);
}
UPat&& UPat::arg(Arg a) && {
  arg_ = std::move(a);
  return std::move(*this);
}
UPat&& UPat::src(std::vector<UPat> s) && {
  mode_ = SrcMode::Ordered;
  src_ = std::move(s);
  return std::move(*this);
}
UPat&& UPat::src_any_order(std::vector<UPat> s) && {
  mode_ = SrcMode::AnyOrder;
  src_ = std::move(s);
  return std::move(*this);
}
UPat&& UPat::each_src(UPat p) && {
  mode_ = SrcMode::Each;
  src_ = {std::move(p)};
  return std::move(*this);
}
UPat&& UPat::allow_any_len() && {
  any_len_ = true;
  return std::move(*this);
}

UPat UPat::binary(Ops op, UPat a, UPat b) {
  std::vector<UPat> s{std::move(a), std::move(b)};
  if (op_has(op, kCommutative)) return UPat(op).src_any_order(std::move(s));
  return UPat(op).src(std::move(s));
}

UPat operator+(UPat a, UPat b) { return UPat::binary(Ops::ADD, std::move(a), std::move(b)); }
UPat operator*(UPat a, UPat b) { return UPat::binary(Ops::MUL, std::move(a), std::move(b)); }
UPat operator-(UPat a, UPat b) { return UPat::binary(Ops::SUB, std::move(a), std::move(b)); }
UPat operator%(UPat a, UPat b) { return UPat::binary(Ops::MOD, std::move(a), std::move(b)); }
UPat idiv(UPat a, UPat b) { return UPat::binary(Ops::IDIV, std::move(a), std::move(b)); }
UPat max(UPat a, UPat b) { return UPat::binary(Ops::MAX, std::move(a), std::move(b)); }
UPat lt(UPat a, UPat b) { return UPat::binary(Ops::CMPLT, std::move(a), std::move(b)); }

// Finds every way a pattern binds against a node. Patterns are shallow, so recursion here follows
// the pattern's depth, never the graph's.
struct Matcher {
  using Bindings = Match::Bindings;

  static bool accepts_node(const UPat& p, const UOp& u) {
    if (!p.ops_.empty() && std::find(p.ops_.begin(), p.ops_.end(), u.op()) == p.ops_.end()) return false;
    if (!p.dtypes_.empty() && std::find(p.dtypes_.begin(), p.dtypes_.end(), u.dtype()) == p.dtypes_.end()) return false;
    if (p.arg_ && !arg_equal(*p.arg_, u.arg())) return false;
    if (p.const_value_ && (u.op() != Ops::CONST || const_as_double(u.const_value()) != *p.const_value_)) return false;
    switch (p.mode_) {
      case UPat::SrcMode::Ordered:
      case UPat::SrcMode::AnyOrder:
        if (p.any_len_ ? u.src().size() < p.src_.size() : u.src().size() != p.src_.size()) return false;
        break;
      default: break;
    }
    return true;
  }

  static bool bind(const UPat& p, const UOp& u, Bindings& b) {
    if (p.name_.empty()) return true;
    for (auto& [name, node] : b)
      if (name == p.name_) return node == &u;
    b.emplace_back(p.name_, &u);
    return true;
  }

  // Matches `pats[i]` against `srcs[i]` for each i, threading every partial binding through.
  static void match_sequence(const std::vector<const UPat*>& pats, const std::vector<UOpPtr>& srcs,
                             std::vector<Bindings> states, std::vector<Bindings>& out) {
    for (size_t i = 0; i < pats.size() && !states.empty(); ++i) {
      std::vector<Bindings> next;
      for (Bindings& s : states) match(*pats[i], *srcs[i], std::move(s), next);
      states = std::move(next);
    }
    for (Bindings& s : states) out.push_back(std::move(s));
  }

  static void match(const UPat& p, const UOp& u, Bindings b, std::vector<Bindings>& out) {
    if (!accepts_node(p, u) || !bind(p, u, b)) return;
    switch (p.mode_) {
      case UPat::SrcMode::None: out.push_back(std::move(b)); return;
      case UPat::SrcMode::Each: {
        std::vector<const UPat*> pats(u.src().size(), &p.src_[0]);
        match_sequence(pats, u.src(), {std::move(b)}, out);
        return;
      }
      case UPat::SrcMode::Ordered: {
        std::vector<const UPat*> pats;
        for (const UPat& s : p.src_) pats.push_back(&s);
        match_sequence(pats, u.src(), {std::move(b)}, out);
        return;
      }
      case UPat::SrcMode::AnyOrder: {
        std::vector<size_t> perm(p.src_.size());
        std::iota(perm.begin(), perm.end(), 0);
        do {
          std::vector<const UPat*> pats;
          for (size_t k : perm) pats.push_back(&p.src_[k]);
          match_sequence(pats, u.src(), {b}, out);
        } while (std::next_permutation(perm.begin(), perm.end()));
        return;
      }
    }
  }
};

UOpPtr Match::operator[](std::string_view name) const {
  for (auto& [n, node] : bindings_)
    if (n == name) return node->ptr();
  throw InternalError("pattern binds no name '" + std::string(name) + "'");
}

double Match::d(std::string_view name) const { return const_as_double((*this)[name]->const_value()); }
int64_t Match::i(std::string_view name) const { return const_as_int((*this)[name]->const_value()); }

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { build_index(); }

void PatternMatcher::build_index() {
  for (auto& list : by_op_) list.clear();
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const std::vector<Ops>& ops = rules_[i].pattern.ops();
    if (ops.empty()) {
      for (auto& list : by_op_) list.push_back(i);
      continue;
    }
    for (Ops op : ops) {
      auto& list = by_op_[static_cast<int>(op)];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
}

UOpPtr PatternMatcher::rewrite(const UOpPtr& u, void* ctx) const {
  for (uint32_t i : by_op_[static_cast<int>(u->op())]) {
    const Rule& rule = rules_[i];
    std::vector<Match::Bindings> found;
    Matcher::match(rule.pattern, *u, {}, found);
    for (const Match::Bindings& b : found)
      if (UOpPtr r = rule.fn(Match(*u, b, ctx))) return r;
  }
  return nullptr;
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& other) const {
  std::vector<Rule> all = rules_;
  all.insert(all.end(), other.rules_.begin(), other.rules_.end());
  return PatternMatcher(std::move(all));
}

}  // namespace lathe
