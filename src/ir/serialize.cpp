#include "ir/serialize.hpp"

#include <bit>
#include <cstring>
#include <unordered_map>

#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

constexpr int kNumScalarTypes = 0
#define LATHE_X(...) +1
    LATHE_SCALAR_TYPES(LATHE_X)
#undef LATHE_X
    ;

Ops read_op(ByteReader& r) {
  uint8_t o = r.num<uint8_t>();
  if (o >= kNumOps) throw Error("serialized graph names op " + std::to_string(o) + ", which lathe does not have");
  return static_cast<Ops>(o);
}

void write_dtype(ByteWriter& w, DType d) {
  w.num<uint8_t>(static_cast<uint8_t>(d.scalar_type()));
  w.num<int16_t>(static_cast<int16_t>(d.count()));
  w.num<uint8_t>(d.is_ptr());
  w.num<uint8_t>(static_cast<uint8_t>(d.addrspace()));
  w.num<int64_t>(d.ptr_size());
}

DType read_dtype(ByteReader& r) {
  uint8_t s = r.num<uint8_t>();
  int16_t count = r.num<int16_t>();
  bool ptr = r.num<uint8_t>() != 0;
  uint8_t space = r.num<uint8_t>();
  int64_t size = r.num<int64_t>();
  if (s >= kNumScalarTypes || count < 1 || space > static_cast<uint8_t>(AddrSpace::Reg))
    throw Error("serialized graph holds a type lathe does not have (scalar " + std::to_string(s) + ", " + std::to_string(count) + " lanes)");
  DType d(static_cast<ScalarType>(s), count);
  return ptr ? d.ptr(static_cast<AddrSpace>(space), size) : d;
}

void write_arg(ByteWriter& w, const Arg& a) {
  w.num<uint8_t>(static_cast<uint8_t>(a.index()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, bool>) {
          w.num<uint8_t>(v);
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          w.num(v);
        } else if constexpr (std::is_same_v<T, double>) {
          w.num(std::bit_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.str(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          w.ints(v);
        } else if constexpr (std::is_same_v<T, Ops>) {
          w.num<uint8_t>(static_cast<uint8_t>(v));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          w.str(v.name);
          w.num(v.min);
          w.num(v.max);
        } else {
          static_assert(std::is_same_v<T, ReduceArg>);
          w.num<uint8_t>(static_cast<uint8_t>(v.op));
          w.ints(v.axes);
        }
      },
      a);
}

Arg read_arg(ByteReader& r) {
  switch (r.num<uint8_t>()) {
    case 0: return std::monostate{};
    case 1: return r.num<uint8_t>() != 0;
    case 2: return r.num<int64_t>();
    case 3: return r.num<uint64_t>();
    case 4: return std::bit_cast<double>(r.num<uint64_t>());
    case 5: return r.str();
    case 6: return r.ints();
    case 7: return read_op(r);
    case 8: {
      VarArg v;
      v.name = r.str();
      v.min = r.num<int64_t>();
      v.max = r.num<int64_t>();
      return v;
    }
    case 9: {
      ReduceArg v;
      v.op = read_op(r);
      v.axes = r.ints();
      return v;
    }
    default: throw Error("serialized graph holds an argument of unknown kind");
  }
}
static_assert(std::variant_size_v<Arg> == 10, "read_arg reads every kind of Arg");

}  // namespace

void ByteWriter::str(std::string_view s) {
  num<uint32_t>(static_cast<uint32_t>(s.size()));
  out += s;
}

void ByteWriter::ints(const std::vector<int64_t>& v) {
  num<uint32_t>(static_cast<uint32_t>(v.size()));
  for (int64_t x : v) num(x);
}

void ByteReader::need(size_t n) const {
  if (in.size() - at < n) throw Error("serialized data is cut short at byte " + std::to_string(at));
}

std::string ByteReader::str() {
  uint32_t n = num<uint32_t>();
  need(n);
  std::string s(in.substr(at, n));
  at += n;
  return s;
}

std::vector<int64_t> ByteReader::ints() {
  uint32_t n = num<uint32_t>();
  need(static_cast<size_t>(n) * sizeof(int64_t));
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = num<int64_t>();
  return v;
}

std::string serialize_graph(const std::vector<UOpPtr>& roots) {
  std::vector<UOpPtr> order;
  std::unordered_map<const UOp*, uint32_t> index;
  for (const UOpPtr& root : roots) {
    if (!root) continue;
    for (const UOpPtr& u : toposort(root))
      if (index.emplace(u.get(), static_cast<uint32_t>(order.size())).second) order.push_back(u);
  }
  ByteWriter w;
  w.num<uint32_t>(static_cast<uint32_t>(order.size()));
  for (const UOpPtr& u : order) {
    w.num<uint8_t>(static_cast<uint8_t>(u->op()));
    write_dtype(w, u->dtype());
    write_arg(w, u->arg());
    w.num<uint32_t>(static_cast<uint32_t>(u->src().size()));
    for (const UOpPtr& s : u->src()) w.num<uint32_t>(index.at(s.get()));
  }
  w.num<uint32_t>(static_cast<uint32_t>(roots.size()));
  for (const UOpPtr& root : roots) w.num<int64_t>(root ? index.at(root.get()) : -1);
  return std::move(w.out);
}

std::vector<UOpPtr> deserialize_graph(std::string_view bytes) {
  ByteReader r{bytes};
  uint32_t n = r.num<uint32_t>();
  std::vector<UOpPtr> nodes;
  nodes.reserve(std::min<size_t>(n, bytes.size()));
  for (uint32_t i = 0; i < n; ++i) {
    Ops op = read_op(r);
    DType dtype = read_dtype(r);
    Arg arg = read_arg(r);
    uint32_t count = r.num<uint32_t>();
    r.need(static_cast<size_t>(count) * sizeof(uint32_t));
    std::vector<UOpPtr> src;
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t s = r.num<uint32_t>();
      if (s >= i) throw Error("serialized graph: node " + std::to_string(i) + " names source " + std::to_string(s) + ", which does not come before it");
      src.push_back(nodes[s]);
    }
    nodes.push_back(UOp::make(op, dtype, std::move(src), std::move(arg)));
  }
  uint32_t count = r.num<uint32_t>();
  std::vector<UOpPtr> roots;
  for (uint32_t k = 0; k < count; ++k) {
    int64_t i = r.num<int64_t>();
    if (i < -1 || i >= static_cast<int64_t>(n)) throw Error("serialized graph names root " + std::to_string(i) + " of " + std::to_string(n) + " nodes");
    roots.push_back(i < 0 ? nullptr : nodes[static_cast<size_t>(i)]);
  }
  if (!r.done()) throw Error("serialized graph has " + std::to_string(bytes.size() - r.at) + " bytes after its end");
  return roots;
}

}  // namespace lathe
