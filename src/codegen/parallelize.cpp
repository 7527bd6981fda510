#include "codegen/parallelize.hpp"

#include "ir/axis.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

UOpPtr thread_loop(const UOpPtr& ast) {
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::RANGE && axis_kind(*u) == AxisKind::Thread) return u;
  return nullptr;
}

}  // namespace

int threads_of(const UOpPtr& ast) {
  UOpPtr r = thread_loop(ast);
  return r ? static_cast<int>(thread_count(*r)) : 1;
}

UOpPtr split_for_threads(const UOpPtr& ast) {
  UOpPtr outer = thread_loop(ast);
  if (!outer) return ast;
  int64_t threads = thread_count(*outer);
  UOpPtr n = outer->src(0);
  UOpPtr core = UOp::make(Ops::SPECIAL, dtypes::index, {UOp::index_const(threads)}, std::string("core_id"));
  UOpPtr chunk = simplify(idiv(n + (threads - 1), UOp::index_const(threads)));
  UOpPtr start = simplify(core * chunk);
  UOpPtr mine = simplify(min(chunk, n - start));  // the last cores may get less, or nothing
  UOpPtr inner = make_range(mine, axis_of(*outer));
  PatternMatcher swap({{UPat(Ops::RANGE).named("r"), [&](const Match& m) -> UOpPtr {
                          return m["r"] == outer ? start + inner : nullptr;
                        }}});
  return simplify(graph_rewrite(ast, swap, nullptr, Direction::TopDown));
}

}  // namespace lathe
