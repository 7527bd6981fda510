#include "lathe/variable.hpp"

#include "ir/eval.hpp"
#include "ir/symbolic.hpp"
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

SInt Variable::bind(int64_t value) const {
  check(value);
  return SInt(UOp::make(Ops::BIND, dtypes::index, {uop(), UOp::index_const(value)}));
}

SInt::SInt(const Variable& var) : SInt(var.uop()) {}

SInt::SInt(const UOpPtr& expr) {
  LATHE_CHECK(expr && expr->dtype() == dtypes::index, "a size must be an index expression");
  UOpPtr e = simplify(expr);
  if (e->is_const()) value_ = const_as_int(e->const_value());
  else expr_ = e;
}

int64_t SInt::value() const {
  if (expr_) throw Error("the size " + to_string() + " is symbolic, not a number");
  return value_;
}

int64_t SInt::value_at(const std::unordered_map<std::string, int64_t>& vars) const { return expr_ ? evaluate_int(expr_, vars) : value_; }

UOpPtr SInt::uop() const { return expr_ ? expr_ : UOp::index_const(value_); }

std::string SInt::to_string() const {
  if (!expr_) return std::to_string(value_);
  if (expr_->op() == Ops::DEFINE_VAR) return expr_->arg_as<VarArg>().name;
  if (expr_->op() == Ops::BIND) return expr_->src(0)->arg_as<VarArg>().name + "=" + std::to_string(const_as_int(expr_->src(1)->const_value()));
  return "<expr in [" + std::to_string(min()) + ", " + std::to_string(max()) + "]>";
}

SInt operator+(const SInt& a, const SInt& b) { return a.is_static() && b.is_static() ? SInt(a.value_ + b.value_) : SInt(a.uop() + b.uop()); }
SInt operator-(const SInt& a, const SInt& b) { return a.is_static() && b.is_static() ? SInt(a.value_ - b.value_) : SInt(a.uop() - b.uop()); }
SInt operator*(const SInt& a, const SInt& b) { return a.is_static() && b.is_static() ? SInt(a.value_ * b.value_) : SInt(a.uop() * b.uop()); }

bool operator==(const SInt& a, const SInt& b) {
  if (a.is_static() && b.is_static()) return a.value_ == b.value_;
  return simplify(a.uop()) == simplify(b.uop());
}

}  // namespace lathe
