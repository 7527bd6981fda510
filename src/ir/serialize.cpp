#include "ir/serialize.hpp"

#include <algorithm>
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
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));  // small of either sign: short
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          w.var(v);
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
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          w.num<uint8_t>(static_cast<uint8_t>(v.op));
          w.ints(v.axes);
        } else if constexpr (std::is_same_v<T, AttentionArg>) {
          w.num<uint8_t>(v.keys.has_value());
          if (v.keys) w.ints({v.keys->begin_step, v.keys->begin, v.keys->end_step, v.keys->end});
        } else if constexpr (std::is_same_v<T, KernelInfo>) {
          w.num<uint8_t>(v.builds_own_loops);
        } else {
          static_assert(std::is_same_v<T, CopyArg>);
          w.num<uint8_t>(v.layout);
        }
      },
      a);
}

Arg read_arg(ByteReader& r) {
  switch (r.num<uint8_t>()) {
    case 0: return std::monostate{};
    case 1: return r.num<uint8_t>() != 0;
    case 2: {
      uint64_t z = r.var();
      return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    }
    case 3: return r.var();
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
    case 10: {
      AttentionArg v;
      if (r.num<uint8_t>() != 0) {
        std::vector<int64_t> k = r.ints();
        if (k.size() != 4) throw Error("serialized graph holds an attention key range of " + std::to_string(k.size()) + " numbers, not 4");
        v.keys = AttentionKeys{k[0], k[1], k[2], k[3]};
      }
      return v;
    }
    case 11: {
      KernelInfo v;
      v.builds_own_loops = r.num<uint8_t>() != 0;
      return v;
    }
    case 12: return CopyArg{.layout = r.num<uint8_t>() != 0};
    default: throw Error("serialized graph holds an argument of unknown kind");
  }
}
static_assert(std::variant_size_v<Arg> == 13, "read_arg reads every kind of Arg");

}  // namespace

void ByteWriter::var(uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    num<uint8_t>(static_cast<uint8_t>(b | (v ? 0x80 : 0)));
  } while (v);
}

uint64_t ByteReader::var() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = num<uint8_t>();
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw Error("serialized data holds a number longer than 64 bits at byte " + std::to_string(at));
}

void ByteWriter::str(std::string_view s) {
  var(s.size());
  out += s;
}

void ByteWriter::ints(const std::vector<int64_t>& v) {
  var(v.size());
  for (int64_t x : v) num(x);
}

void ByteReader::need(size_t n) const {
  if (in.size() - at < n) throw Error("serialized data is cut short at byte " + std::to_string(at));
}

std::string ByteReader::str() {
  uint64_t n = var();
  need(n);
  std::string s(in.substr(at, n));
  at += n;
  return s;
}

std::vector<int64_t> ByteReader::ints() {
  uint64_t n = var();
  need(n);
  need(n * sizeof(int64_t));
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = num<int64_t>();
  return v;
}

// Layout: the distinct types; then each node (op, type's number, argument, source count, each
// source as how many nodes back it is); then the roots (1 + node number, 0 for none).
std::string serialize_graph(const std::vector<UOpPtr>& roots) {
  std::vector<UOpPtr> order;
  std::unordered_map<const UOp*, uint64_t> index;
  std::vector<DType> types;
  std::vector<uint64_t> type_of;
  for (const UOpPtr& root : roots) {
    if (!root) continue;
    for (const UOpPtr& u : toposort(root)) {
      if (!index.emplace(u.get(), order.size()).second) continue;
      order.push_back(u);
      auto t = std::find(types.begin(), types.end(), u->dtype());
      type_of.push_back(static_cast<uint64_t>(t - types.begin()));
      if (t == types.end()) types.push_back(u->dtype());
    }
  }
  ByteWriter w;
  w.var(types.size());
  for (DType t : types) write_dtype(w, t);
  w.var(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const UOpPtr& u = order[i];
    w.num<uint8_t>(static_cast<uint8_t>(u->op()));
    w.var(type_of[i]);
    write_arg(w, u->arg());
    w.var(u->src().size());
    for (const UOpPtr& s : u->src()) w.var(i - index.at(s.get()));
  }
  w.var(roots.size());
  for (const UOpPtr& root : roots) w.var(root ? index.at(root.get()) + 1 : 0);
  return std::move(w.out);
}

std::vector<UOpPtr> deserialize_graph(std::string_view bytes) {
  ByteReader r{bytes};
  uint64_t num_types = r.var();
  if (num_types > bytes.size()) throw Error("serialized graph lists more types than it has bytes");
  std::vector<DType> types(num_types);
  for (DType& t : types) t = read_dtype(r);
  uint64_t n = r.var();
  if (n > bytes.size()) throw Error("serialized graph lists more nodes than it has bytes");
  std::vector<UOpPtr> nodes;
  nodes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    Ops op = read_op(r);
    uint64_t t = r.var();
    if (t >= types.size()) throw Error("serialized graph: node " + std::to_string(i) + " names type " + std::to_string(t) + " of " + std::to_string(types.size()));
    Arg arg = read_arg(r);
    uint64_t count = r.var();
    r.need(count);  // at least a byte each
    std::vector<UOpPtr> src;
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t back = r.var();
      if (back == 0 || back > i) throw Error("serialized graph: node " + std::to_string(i) + " names a source that does not come before it");
      src.push_back(nodes[i - back]);
    }
    nodes.push_back(UOp::make(op, types[t], std::move(src), std::move(arg)));
  }
  uint64_t count = r.var();
  r.need(count);
  std::vector<UOpPtr> roots;
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t i = r.var();
    if (i > n) throw Error("serialized graph names root " + std::to_string(i) + " of " + std::to_string(n) + " nodes");
    roots.push_back(i == 0 ? nullptr : nodes[i - 1]);
  }
  if (!r.done()) throw Error("serialized graph has " + std::to_string(bytes.size() - r.at) + " bytes after its end");
  return roots;
}

}  // namespace lathe
