// Readable text for nodes and graphs.
#include <sstream>
#include <unordered_map>

#include "ir/toposort.hpp"
#include "lathe/uop.hpp"

namespace lathe {

std::string arg_to_string(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + v + "\"";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "(";
          for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
          return s + ")";
        } else if constexpr (std::is_same_v<T, Ops>) {
          return std::string(op_name(v));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          return "\"" + v.name + "\" [" + std::to_string(v.min) + ", " + std::to_string(v.max) + "]";
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          std::string s = std::string(op_name(v.op)) + " axes (";
          for (size_t i = 0; i < v.axes.size(); ++i) s += (i ? ", " : "") + std::to_string(v.axes[i]);
          return s + ")";
        } else if constexpr (std::is_same_v<T, AttentionArg>) {
          if (!v.keys) return "all keys";
          const AttentionKeys& k = *v.keys;
          return "keys [max(0, " + std::to_string(k.begin_step) + "i + " + std::to_string(k.begin) + "), min(n, " +
                 std::to_string(k.end_step) + "i + " + std::to_string(k.end) + "))";
        } else if constexpr (std::is_same_v<T, KernelInfo>) {
          return v.builds_own_loops ? "builds its own loops" : "";
        } else if constexpr (std::is_same_v<T, CopyArg>) {
          return v.layout ? "layout" : "";
        } else {
          return const_to_string(v);
        }
      },
      a);
}

std::string to_string(const UOp& u) {
  std::string s = std::string(op_name(u.op())) + " " + u.dtype().name();
  if (std::string a = arg_to_string(u.arg()); !a.empty()) s += " " + a;
  if (!u.src().empty()) s += " (" + std::to_string(u.src().size()) + " src)";
  return s;
}

std::string print_graph(const UOpPtr& root) {
  std::vector<UOpPtr> order = toposort(root);
  std::unordered_map<const UOp*, size_t> number;
  std::ostringstream os;
  for (const UOpPtr& u : order) {
    size_t n = number.size();
    number[u.get()] = n;
    os << "%" << n << " = " << op_name(u->op()) << " " << u->dtype().name();
    if (!u->src().empty()) {
      os << " (";
      for (size_t i = 0; i < u->src().size(); ++i) os << (i ? ", %" : "%") << number.at(u->src()[i].get());
      os << ")";
    }
    if (std::string a = arg_to_string(u->arg()); !a.empty()) os << " " << a;
    os << "\n";
  }
  return os.str();
}

}  // namespace lathe
