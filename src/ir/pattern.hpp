// Patterns over UOps and the rule lists that rewrite with them.
//
// A UPat matches a node by op (one or a set), dtype, arg, constant value and sources, and binds
// names to the nodes it matched; a name used twice must bind the same node. Sources match in
// order, in any order (the default for commutative ops built with operators), or all against one
// pattern. A rule reads like the rewrite it performs:
//
//   {UPat::var("x") + 0, [](const Match& m) { return m["x"]; }}     // x + 0 -> x
//
// A PatternMatcher is a list of rules indexed by root op, composed by concatenation; its rewrite
// returns the first rule's replacement, or null when no rule applies.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

class UPat {
 public:
  enum class SrcMode : uint8_t { None, Ordered, AnyOrder, Each };

  /// Matches any node of one of `ops` (empty: any op).
  UPat() = default;
  explicit UPat(Ops op) : ops_{op} {}
  UPat(std::initializer_list<Ops> ops) : ops_(ops) {}

  /// Any node, bound to `name`.
  static UPat var(std::string name = "", std::optional<DType> dtype = {});
  /// Any CONST, bound to `name`.
  static UPat cvar(std::string name = "", std::optional<DType> dtype = {});
  /// A CONST whose value equals `value` numerically, in any dtype.
  static UPat cnst(double value);
  /// Any ALU node (unary, binary or ternary).
  static UPat alu(std::string name = "");

  UPat&& named(std::string name) &&;
  UPat&& dtype(DType dt) &&;
  UPat&& dtypes(std::vector<DType> dts) &&;
  UPat&& arg(Arg a) &&;
  /// Sources match these patterns in order.
  UPat&& src(std::vector<UPat> s) &&;
  /// Sources match these patterns in some order (every permutation is tried).
  UPat&& src_any_order(std::vector<UPat> s) &&;
  /// Every source matches `p`, however many there are.
  UPat&& each_src(UPat p) &&;
  /// With src(): match only the leading sources, ignore extra ones.
  UPat&& allow_any_len() &&;

  const std::vector<Ops>& ops() const { return ops_; }
  const std::string& name() const { return name_; }

  // Pattern operators build ALU patterns; commutative ops match their sources in any order.
  friend UPat operator+(UPat a, UPat b);
  friend UPat operator*(UPat a, UPat b);
  friend UPat operator-(UPat a, UPat b);
  friend UPat operator%(UPat a, UPat b);
  friend UPat operator+(UPat a, double c) { return std::move(a) + cnst(c); }
  friend UPat operator*(UPat a, double c) { return std::move(a) * cnst(c); }
  friend UPat operator%(UPat a, double c) { return std::move(a) % cnst(c); }

  /// Binary op pattern: any order for commutative ops, in order otherwise.
  static UPat binary(Ops op, UPat a, UPat b);

 private:
  friend class PatternMatcher;
  friend struct Matcher;

  std::vector<Ops> ops_;
  std::vector<DType> dtypes_;
  std::optional<Arg> arg_;
  std::optional<double> const_value_;
  std::string name_;
  SrcMode mode_ = SrcMode::None;
  std::vector<UPat> src_;
  bool any_len_ = false;
};

UPat idiv(UPat a, UPat b);
UPat max(UPat a, UPat b);
UPat lt(UPat a, UPat b);

/// What a rule's callback sees: the matched root, the bound names and the rewrite's context.
class Match {
 public:
  using Bindings = std::vector<std::pair<std::string_view, const UOp*>>;
  Match(const UOp& root, const Bindings& b, void* ctx) : root_(root), bindings_(b), ctx_(ctx) {}

  /// The node bound to `name`; throws InternalError if the pattern has no such name.
  UOpPtr operator[](std::string_view name) const;
  /// The constant value bound to `name` as a double or int64.
  double d(std::string_view name) const;
  int64_t i(std::string_view name) const;
  UOpPtr root() const { return root_.ptr(); }
  template <class T>
  T& ctx() const {
    return *static_cast<T*>(ctx_);
  }

 private:
  const UOp& root_;
  const Bindings& bindings_;
  void* ctx_;
};

using RewriteFn = std::function<UOpPtr(const Match&)>;

struct Rule {
  UPat pattern;
  RewriteFn fn;
};

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<Rule> rules);  // NOLINT(google-explicit-constructor): rule tables read best inline

  /// The first applicable rule's replacement for `u`, or null. A rule applies when its pattern
  /// matches and its callback returns non-null (the callback may decline).
  UOpPtr rewrite(const UOpPtr& u, void* ctx = nullptr) const;

  /// This matcher's rules followed by `other`'s.
  PatternMatcher operator+(const PatternMatcher& other) const;
  size_t size() const { return rules_.size(); }

 private:
  void build_index();
  std::vector<Rule> rules_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_;
};

}  // namespace lathe
