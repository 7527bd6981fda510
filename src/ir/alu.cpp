#include "ir/alu.hpp"

#include <cmath>
#include <limits>

namespace lathe {
namespace {

std::optional<ConstValue> exec_float(Ops op, DType dt, std::span<const ConstValue> s) {
  auto a = [&] { return const_as_double(s[0]); };
  auto b = [&] { return const_as_double(s[1]); };
  double r;
  switch (op) {
    case Ops::NEG: r = -a(); break;
    case Ops::EXP2: r = std::exp2(a()); break;
    case Ops::LOG2: r = std::log2(a()); break;
    case Ops::SIN: r = std::sin(a()); break;
    case Ops::SQRT: r = std::sqrt(a()); break;
    case Ops::RECIPROCAL: r = 1.0 / a(); break;
    case Ops::TRUNC: r = std::trunc(a()); break;
    case Ops::ADD: r = a() + b(); break;
    case Ops::SUB: r = a() - b(); break;
    case Ops::MUL: r = a() * b(); break;
    case Ops::FDIV: r = a() / b(); break;
    case Ops::MAX: r = std::isnan(a()) || std::isnan(b()) ? std::nan("") : std::max(a(), b()); break;
    case Ops::POW: r = std::pow(a(), b()); break;
    case Ops::MULACC: r = a() * b() + const_as_double(s[2]); break;
    default: return std::nullopt;
  }
  return cast_const(r, dt);
}

// Two's-complement arithmetic on 64 bits, then wrapped to the dtype's width by cast_const.
std::optional<ConstValue> exec_int(Ops op, DType dt, std::span<const ConstValue> s) {
  bool is_unsigned = dt.is_unsigned();
  auto ua = [&] { return std::visit([](auto x) { return static_cast<uint64_t>(x); }, s[0]); };
  auto ub = [&] { return std::visit([](auto x) { return static_cast<uint64_t>(x); }, s[1]); };
  auto ia = [&] { return static_cast<int64_t>(ua()); };
  auto ib = [&] { return static_cast<int64_t>(ub()); };
  uint64_t r;
  switch (op) {
    case Ops::NEG: r = 0 - ua(); break;
    case Ops::TRUNC: r = ua(); break;
    case Ops::ADD: r = ua() + ub(); break;
    case Ops::SUB: r = ua() - ub(); break;
    case Ops::MUL: r = ua() * ub(); break;
    case Ops::MULACC: r = ua() * ub() + std::visit([](auto x) { return static_cast<uint64_t>(x); }, s[2]); break;
    case Ops::IDIV:
      if (ub() == 0) return std::nullopt;
      if (is_unsigned)
        r = ua() / ub();
      else if (ia() == std::numeric_limits<int64_t>::min() && ib() == -1)
        r = ua();
      else
        r = static_cast<uint64_t>(ia() / ib());
      break;
    case Ops::MOD:
      if (ub() == 0) return std::nullopt;
      if (is_unsigned)
        r = ua() % ub();
      else if (ib() == -1)
        r = 0;
      else
        r = static_cast<uint64_t>(ia() % ib());
      break;
    case Ops::MAX: r = is_unsigned ? std::max(ua(), ub()) : static_cast<uint64_t>(std::max(ia(), ib())); break;
    case Ops::AND: r = ua() & ub(); break;
    case Ops::OR: r = ua() | ub(); break;
    case Ops::XOR: r = ua() ^ ub(); break;
    case Ops::SHL:
      if (ub() >= static_cast<uint64_t>(dt.itemsize() * 8)) return std::nullopt;
      r = ua() << ub();
      break;
    case Ops::SHR:
      if (ub() >= static_cast<uint64_t>(dt.itemsize() * 8)) return std::nullopt;
      r = is_unsigned ? ua() >> ub() : static_cast<uint64_t>(ia() >> ib());
      break;
    default: return std::nullopt;
  }
  return cast_const(is_unsigned ? ConstValue{r} : ConstValue{static_cast<int64_t>(r)}, dt);
}

std::optional<ConstValue> exec_bool(Ops op, std::span<const ConstValue> s) {
  auto a = [&] { return std::get<bool>(s[0]); };
  auto b = [&] { return std::get<bool>(s[1]); };
  switch (op) {
    case Ops::AND:
    case Ops::MUL: return a() && b();
    case Ops::OR:
    case Ops::MAX:
    case Ops::ADD: return a() || b();
    case Ops::XOR: return a() != b();
    default: return std::nullopt;
  }
}

// Compares in the operands' own domain: unsigned as unsigned, floats as doubles.
std::optional<ConstValue> compare(Ops op, std::span<const ConstValue> s) {
  auto cmp = [op](auto a, auto b) -> ConstValue {
    switch (op) {
      case Ops::CMPLT: return a < b;
      case Ops::CMPNE: return a != b;
      default: return a == b;
    }
  };
  if (std::holds_alternative<double>(s[0]) || std::holds_alternative<double>(s[1]))
    return cmp(const_as_double(s[0]), const_as_double(s[1]));
  if (std::holds_alternative<uint64_t>(s[0]) && std::holds_alternative<uint64_t>(s[1]))
    return cmp(std::get<uint64_t>(s[0]), std::get<uint64_t>(s[1]));
  return cmp(const_as_int(s[0]), const_as_int(s[1]));
}

}  // namespace

std::optional<ConstValue> exec_alu(Ops op, DType dt, std::span<const ConstValue> srcs) {
  if (!is_alu(op) || static_cast<int>(srcs.size()) < op_info(op).min_src) return std::nullopt;
  if (op_has(op, kComparison)) return compare(op, srcs);
  if (op == Ops::WHERE) return cast_const(std::visit([](auto x) { return x != 0; }, srcs[0]) ? srcs[1] : srcs[2], dt);
  if (dt.is_bool()) return exec_bool(op, srcs);
  if (dt.is_float()) return exec_float(op, dt, srcs);
  if (dt.is_int()) return exec_int(op, dt, srcs);
  return std::nullopt;
}

UOpPtr reduce_identity(Ops op, DType d) {
  if (op == Ops::ADD) return UOp::const_(d, int64_t{0});
  if (op == Ops::MUL) return UOp::const_(d, int64_t{1});
  return UOp::const_(d, d.min());  // a float's min is -inf
}

bool is_zero(const UOpPtr& u) { return u->is_const() && const_as_double(u->const_value()) == 0.0; }

UOpPtr splat_of(const UOpPtr& u) {
  if (u->op() != Ops::VECTORIZE || u->src().empty()) return nullptr;
  for (const UOpPtr& s : u->src())
    if (s != u->src(0)) return nullptr;
  return u->src(0);
}

UOpPtr combine(Ops op, std::vector<UOpPtr> values) {
  while (values.size() > 1) {
    std::vector<UOpPtr> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2) next.push_back(UOp::alu(op, {values[i], values[i + 1]}));
    if (values.size() % 2) next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

}  // namespace lathe
