#include "codegen/estimates.hpp"

#include <map>
#include <unordered_set>

#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {

Estimates count_work(const std::vector<Instr>& instrs) {
  std::unordered_set<const UOp*> addressing;
  for (const Instr& in : instrs) {
    if (in.kind != Instr::Kind::Node || (in.u->op() != Ops::LOAD && in.u->op() != Ops::STORE)) continue;
    const UOpPtr& idx = in.u->src(0);
    for (size_t i = 1; i < idx->src().size(); ++i)
      for (const UOpPtr& n : toposort(idx->src(i))) addressing.insert(n.get());
  }
  UOpPtr zero = UOp::index_const(0);
  UOpPtr ops = zero, index_ops = zero;
  std::map<int64_t, std::pair<UOpPtr, UOpPtr>> per_buffer;  // slot -> (bytes moved, buffer size)
  std::vector<UOpPtr> trips{UOp::index_const(1)};
  for (const Instr& in : instrs) {
    const UOpPtr& n = trips.back();
    switch (in.kind) {
      case Instr::Kind::Open: trips.push_back(simplify(n * in.u->src(0))); break;
      case Instr::Kind::Close: trips.pop_back(); break;
      case Instr::Kind::AccInit: break;
      case Instr::Kind::Accumulate: ops = ops + n; break;
      case Instr::Kind::Node: {
        const UOp& u = *in.u;
        if (u.op() == Ops::LOAD || u.op() == Ops::STORE) {
          const UOpPtr& buf = u.src(0)->src(0);
          DType elem = buf->dtype().base();
          auto [it, fresh] = per_buffer.try_emplace(buf->arg_as<int64_t>(), zero, nullptr);
          it->second.first = it->second.first + n * elem.itemsize();
          if (buf->dtype().ptr_size() >= 0) it->second.second = UOp::index_const(buf->dtype().ptr_size() * elem.itemsize());
        } else if (is_alu(u.op())) {
          UOpPtr count = u.op() == Ops::MULACC ? n * 2 : n;
          if (u.dtype().count() > 1) count = count * u.dtype().count();
          if (addressing.count(&u)) index_ops = index_ops + count;
          else ops = ops + count;
        }
        break;
      }
    }
  }
  UOpPtr lds = zero, mem = zero;
  for (auto& [slot, b] : per_buffer) {
    lds = lds + b.first;
    mem = mem + (b.second ? min(b.first, b.second) : b.first);
  }
  return {simplify(ops), simplify(index_ops), simplify(lds), simplify(mem)};
}

}  // namespace lathe
