#include "ir/eval.hpp"

#include <unordered_map>

#include "ir/alu.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {

ConstValue evaluate(const UOpPtr& root, const VarValues& vars) {
  if (root->op() == Ops::CONST) return root->const_value();  // most sizes and counts: no walk, no map
  // A node without a value is only an error once something needs it: the variable under a BIND
  // takes the bound value and needs none of its own.
  std::unordered_map<const UOp*, ConstValue> value;
  auto get = [&](const UOpPtr& u) -> const ConstValue& {
    if (auto it = value.find(u.get()); it != value.end()) return it->second;
    if (u->op() == Ops::DEFINE_VAR) throw Error("no value given for variable '" + u->arg_as<VarArg>().name + "'");
    throw Error("cannot evaluate " + to_string(*u));
  };
  std::vector<ConstValue> args;
  for (const UOpPtr& u : toposort(root)) {
    std::optional<ConstValue> v;
    switch (u->op()) {
      case Ops::CONST: v = u->const_value(); break;
      case Ops::DEFINE_VAR:
        if (auto it = vars.find(u->arg_as<VarArg>().name); it != vars.end()) v = cast_const(it->second, u->dtype());
        break;
      case Ops::BIND:
        if (auto it = vars.find(u->src(0)->arg_as<VarArg>().name); it != vars.end())
          v = cast_const(it->second, u->dtype());
        else
          v = get(u->src(1));
        break;
      case Ops::CAST: v = cast_const(get(u->src(0)), u->dtype()); break;
      default:
        if (!is_alu(u->op())) break;
        args.clear();
        for (const UOpPtr& s : u->src()) args.push_back(get(s));
        v = exec_alu(u->op(), u->dtype(), args);
        if (!v) throw Error("cannot evaluate " + to_string(*u) + ": the operation is undefined for its operands");
    }
    if (v) value.emplace(u.get(), *v);
  }
  return get(root);
}

int64_t evaluate_int(const UOpPtr& root, const VarValues& vars) {
  return const_as_int(evaluate(root, vars));
}

std::vector<VarArg> free_variables(const UOpPtr& root) {
  std::vector<VarArg> vars;
  for (const UOpPtr& u : toposort(root, [](const UOp& n) { return n.op() != Ops::BIND; }))
    if (u->op() == Ops::DEFINE_VAR) vars.push_back(u->arg_as<VarArg>());  // toposort lists each node once
  return vars;
}

}  // namespace lathe
