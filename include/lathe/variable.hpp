// A symbolic integer: a name and the range [min, max] its values may take. Kernels that use one
// are compiled once and read its value at run time.
#pragma once

#include <cstdint>
#include <string>

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

  friend bool operator==(const Variable&, const Variable&) = default;

 private:
  std::string name_;
  int64_t min_;
  int64_t max_;
};

}  // namespace lathe
