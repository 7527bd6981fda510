// A symbolic integer: a name and the range [min, max] its values may take. Kernels that use one
// are compiled once and read its value at run time.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

class Variable {
 public:
  /// Throws Error when min > max or the name is empty.
  Variable(std::string name, int64_t min, int64_t max);

  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  /// The DEFINE_VAR node standing for this variable.
  UOpPtr uop() const;
  /// Checks `value` against [min, max] (throws Error naming the variable and its bounds).
  void check(int64_t value) const;
  /// This variable bound to `value` (checked): a size that is `value` now and may be rebound
  /// later with ExecutionPlan::execute_with_vars without recompiling.
  class SInt bind(int64_t value) const;

  friend bool operator==(const Variable&, const Variable&) = default;

 private:
  std::string name_;
  int64_t min_;
  int64_t max_;
};

/// A size: a number, or an expression of variables (bound or not). Everything that takes a shape
/// takes SInts; an int converts implicitly.
class SInt {
 public:
  SInt(int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  SInt(int value) : value_(value) {}      // NOLINT(google-explicit-constructor)
  SInt(const Variable& var);              // NOLINT(google-explicit-constructor): an unbound variable
  /// An index expression; one that simplifies to a constant is static.
  explicit SInt(const UOpPtr& expr);

  bool is_static() const { return expr_ == nullptr; }
  /// The value of a static size; throws Error for a symbolic one.
  int64_t value() const;
  /// The largest and smallest values the size can take.
  int64_t max() const { return expr_ ? expr_->vmax() : value_; }
  int64_t min() const { return expr_ ? expr_->vmin() : value_; }
  /// The size with its variables at `vars` (by name; a bound variable absent there takes its
  /// bound value); throws Error naming a variable that has no value.
  int64_t value_at(const std::unordered_map<std::string, int64_t>& vars) const;
  /// The size as an index node (a CONST for a static size).
  UOpPtr uop() const;
  std::string to_string() const;

  friend SInt operator+(const SInt& a, const SInt& b);
  friend SInt operator-(const SInt& a, const SInt& b);
  friend SInt operator*(const SInt& a, const SInt& b);
  /// Same size: equal values, or expressions that simplify to the same node.
  friend bool operator==(const SInt& a, const SInt& b);

 private:
  int64_t value_ = 0;
  UOpPtr expr_;
};

/// A shape whose dimensions may be symbolic.
using SymShape = std::vector<SInt>;

}  // namespace lathe
