#include "codegen/half_arithmetic.hpp"

#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"

namespace lathe {
namespace {

const PatternMatcher& rules() {
  static const PatternMatcher pm({
      {UPat({Ops::ADD, Ops::SUB, Ops::MUL, Ops::FDIV, Ops::RECIPROCAL, Ops::SQRT, Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::POW,
             Ops::MULACC})
           .dtypes({dtypes::float16, dtypes::bfloat16})
           .named("op"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& op = m["op"];
         std::vector<UOpPtr> wide;
         for (const UOpPtr& s : op->src()) wide.push_back(cast(s, dtypes::float32));
         return cast(UOp::make(op->op(), dtypes::float32, std::move(wide), op->arg()), op->dtype());
       }},
  });
  return pm;
}

}  // namespace

UOpPtr round_half_arithmetic(const UOpPtr& ast) { return graph_rewrite(ast, rules()); }

}  // namespace lathe
