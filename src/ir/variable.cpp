#include "lathe/variable.hpp"

#include "lathe/error.hpp"

namespace lathe {

Variable::Variable(std::string name, int64_t min, int64_t max) : name_(std::move(name)), min_(min), max_(max) {
  if (name_.empty()) throw Error("a variable needs a name");
  if (min > max)
    throw Error("variable '" + name_ + "' has min " + std::to_string(min) + " > max " + std::to_string(max));
}

UOpPtr Variable::uop() const { return UOp::variable(name_, min_, max_); }

void Variable::check(int64_t value) const {
  if (value < min_ || value > max_)
    throw Error("variable '" + name_ + "' = " + std::to_string(value) + " is outside its bounds [" +
                std::to_string(min_) + ", " + std::to_string(max_) + "]");
}

}  // namespace lathe
