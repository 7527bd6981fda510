#include "ir/spec.hpp"

#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

std::string dtype_list(const UOp& u) {
  std::string s;
  for (const UOpPtr& x : u.src()) s += (s.empty() ? "" : ", ") + x->dtype().name();
  return s;
}

bool const_arg_fits(const Arg& a, DType dt) {
  switch (dt.scalar().kind()) {
    case TypeKind::Bool: return std::holds_alternative<bool>(a);
    case TypeKind::Signed:
    case TypeKind::Index: return std::holds_alternative<int64_t>(a);
    case TypeKind::Unsigned: return std::holds_alternative<uint64_t>(a);
    case TypeKind::Float: return std::holds_alternative<double>(a);
    case TypeKind::Void: return false;
  }
  return false;
}

std::string check_alu(const UOp& u) {
  const auto& s = u.src();
  DType dt = u.dtype();
  if (u.op() == Ops::WHERE) {
    if (!s[0]->dtype().is_bool() && s[0]->dtype().scalar() != dtypes::bool_)
      return "WHERE condition must be bool, got " + s[0]->dtype().name();
    if (s[1]->dtype() != dt || s[2]->dtype() != dt)
      return "WHERE branches (" + dtype_list(u) + ") must both be " + dt.name();
    return "";
  }
  for (const UOpPtr& x : s)
    if (x->dtype() != s[0]->dtype()) return "operands have different dtypes (" + dtype_list(u) + ")";
  if (op_has(u.op(), kComparison)) {
    if (dt != DType(ScalarType::Bool, s[0]->dtype().count())) return "comparison must produce bool, not " + dt.name();
    return "";
  }
  if (s[0]->dtype() != dt) return "result " + dt.name() + " differs from operands (" + dtype_list(u) + ")";
  if ((u.op() == Ops::IDIV || u.op() == Ops::MOD) && !dt.is_int())
    return std::string(op_name(u.op())) + " needs an integer dtype, not " + dt.name();
  if (u.op() == Ops::FDIV && !dt.is_float()) return "FDIV needs a float dtype, not " + dt.name();
  if ((u.op() == Ops::SHL || u.op() == Ops::SHR) && !dt.is_int())
    return "shifts need an integer dtype, not " + dt.name();
  return "";
}

}  // namespace

std::string check_node(const UOp& u) {
  const OpInfo& info = op_info(u.op());
  int n = static_cast<int>(u.src().size());
  if (n < info.min_src || (info.max_src >= 0 && n > info.max_src))
    return "wrong number of sources: " + std::to_string(n);
  if (is_alu(u.op())) return check_alu(u);
  DType dt = u.dtype();
  switch (u.op()) {
    case Ops::CONST:
      if (!const_arg_fits(u.arg(), dt))
        return "constant argument " + arg_to_string(u.arg()) + " does not fit dtype " + dt.name();
      return "";
    case Ops::DEFINE_VAR: {
      const auto* v = std::get_if<VarArg>(&u.arg());
      if (!v) return "DEFINE_VAR needs a (name, min, max) argument";
      if (v->min > v->max) return "variable '" + v->name + "' has min > max";
      if (!dt.is_int()) return "DEFINE_VAR must be an integer, not " + dt.name();
      return "";
    }
    case Ops::BIND: {
      if (u.src(0)->op() != Ops::DEFINE_VAR || !u.src(1)->is_const()) return "BIND needs (DEFINE_VAR, CONST)";
      const auto& v = u.src(0)->arg_as<VarArg>();
      int64_t val = const_as_int(u.src(1)->const_value());
      if (val < v.min || val > v.max)
        return "value " + std::to_string(val) + " is outside [" + std::to_string(v.min) + ", " + std::to_string(v.max) +
               "] of '" + v.name + "'";
      return "";
    }
    case Ops::RANGE:
    case Ops::SPECIAL:
      if (!u.src(0)->dtype().is_int() || !dt.is_int()) return "loop bounds must be integers";
      if (u.op() == Ops::SPECIAL && !std::holds_alternative<std::string>(u.arg())) return "SPECIAL needs its launch index's name";
      return "";
    case Ops::DEFINE_REG:
      if (!dt.is_ptr() || dt.addrspace() != AddrSpace::Reg || dt.ptr_size() < 1)
        return "DEFINE_REG must be a register pointer of known size, not " + dt.name();
      if (n > 0 && u.src(0)->dtype() != dt.base()) return "DEFINE_REG's initial value must be " + dt.base().name();
      for (int i = 1; i < n; ++i)
        if (u.src(i)->op() != Ops::RANGE) return "DEFINE_REG's sources after its initial value must be the loops around it";
      return "";
    case Ops::DEFINE_LOCAL:
      if (!dt.is_ptr() || dt.addrspace() != AddrSpace::Local || dt.ptr_size() < 1)
        return "DEFINE_LOCAL must be a local pointer of known size, not " + dt.name();
      if (!std::holds_alternative<int64_t>(u.arg())) return "DEFINE_LOCAL needs its number";
      return "";
    case Ops::BARRIER:
      if (dt == dtypes::bool_ && !std::holds_alternative<int64_t>(u.arg())) return "a BARRIER's arrival needs its thread count";
      return "";
    case Ops::END: {
      bool ranges = false;
      for (int i = 0; i < n; ++i) {
        bool r = u.src(i)->op() == Ops::RANGE;
        if (!r && i > 0) return "END closes loops: its sources are a body, then RANGEs";
        ranges |= r;
      }
      return ranges ? "" : "END closes no loop";
    }
    case Ops::REDUCE:
      if (u.src(0)->dtype() != dt) return "REDUCE of " + u.src(0)->dtype().name() + " must be " + dt.name();
      for (int i = 1; i < n; ++i)
        if (u.src(i)->op() != Ops::RANGE) return "REDUCE's sources after its value must be RANGEs";
      return "";
    case Ops::INDEX:
      if (!u.src(0)->dtype().is_ptr()) return "INDEX of a non-pointer " + u.src(0)->dtype().name();
      if (!u.src(1)->dtype().is_int()) return "INDEX offset must be an integer, not " + u.src(1)->dtype().name();
      if (n == 3 && !u.src(2)->dtype().is_bool()) return "INDEX gate must be bool";
      return "";
    case Ops::LOAD:
    case Ops::STORE:
      if (!u.src(0)->dtype().is_ptr())
        return std::string(op_name(u.op())) + " address must be a pointer, not " + u.src(0)->dtype().name();
      if (u.op() == Ops::STORE && dt != dtypes::void_) return "STORE produces no value, so its dtype is void";
      return "";
    case Ops::BITCAST:
      if (u.src(0)->dtype().itemsize() != dt.itemsize())
        return "BITCAST between types of different sizes (" + u.src(0)->dtype().name() + " -> " + dt.name() + ")";
      return "";
    case Ops::SINK:
      if (dt != dtypes::void_) return "SINK has dtype void";
      if (!std::holds_alternative<std::monostate>(u.arg()) && !std::holds_alternative<KernelInfo>(u.arg()))
        return "SINK's argument is nothing or a KernelInfo";
      return "";
    case Ops::REDUCE_AXIS: {
      const auto* r = std::get_if<ReduceArg>(&u.arg());
      if (!r || (r->op != Ops::ADD && r->op != Ops::MUL && r->op != Ops::MAX))
        return "REDUCE_AXIS needs (ADD|MUL|MAX, axes)";
      return "";
    }
    case Ops::ATTENTION:
      if (!dt.is_float() || dt.count() != 1) return "ATTENTION computes float scalars, not " + dt.name();
      if (n != 2 && n != 5) return "ATTENTION takes (scores, values) or (score, value, key loop, query loop, value loop)";
      if (!std::holds_alternative<AttentionArg>(u.arg())) return "ATTENTION's argument is an AttentionArg (the keys each query sees)";
      if (n == 5 && u.src(2)->op() != Ops::RANGE) return "ATTENTION's key loop must be a RANGE";
      for (int i = 3; i < n; ++i)
        if (u.src(i)->op() != Ops::RANGE && !u.src(i)->is_const()) return "ATTENTION's query and value loops must be RANGEs or 0";
      return "";
    case Ops::WMMA:
      if (dt != dtypes::float32.vec(4) || u.src(0)->dtype() != dtypes::float32.vec(8) || u.src(1)->dtype() != dtypes::float32.vec(4) ||
          u.src(2)->dtype() != dtypes::float32.vec(4))
        return "WMMA takes 8, 4 and 4 floats and makes 4";
      if (u.src(3)->op() != Ops::SPECIAL) return "WMMA's last source is where the block's threads meet";
      if (!std::holds_alternative<int64_t>(u.arg()) || (u.arg_as<int64_t>() != 1 && u.arg_as<int64_t>() != 2))
        return "WMMA's argument is its inputs' type: 1 (float16) or 2 (bfloat16)";
      return "";
    case Ops::VECTORIZE:
      if (dt.count() != n)
        return "VECTORIZE of " + std::to_string(n) + " sources must have " + std::to_string(n) + " lanes, not " +
               dt.name();
      for (const UOpPtr& x : u.src())
        if (x->dtype() != dt.scalar()) return "VECTORIZE lanes must be " + dt.scalar().name();
      return "";
    default: return "";
  }
}

void verify(const UOpPtr& root) {
  std::vector<UOpPtr> order = toposort(root);
  for (size_t i = 0; i < order.size(); ++i) {
    std::string why = check_node(*order[i]);
    if (why.empty()) continue;
    throw SpecError("malformed UOp " + to_string(*order[i]) + ": " + why + "\nthe node and its sources:\n" +
                    print_graph(order[i]));
  }
}

}  // namespace lathe
