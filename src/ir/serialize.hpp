// UOp graphs as bytes and back: each node once, its sources before it. For lathe's on-disk caches
// (a rendered kernel's work estimates, the kernel AST an entry was made for); the same graph always
// gives the same bytes, in every process.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// Fields appended as bytes: numbers little-endian at their width, strings and lists with a count.
struct ByteWriter {
  std::string out;
  template <class T>
  void num(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  void var(uint64_t v);  // 7 bits a byte, small numbers short
  void str(std::string_view s);
  void ints(const std::vector<int64_t>& v);
};

/// Reads what a ByteWriter wrote; throws Error when the bytes end early.
struct ByteReader {
  std::string_view in;
  size_t at = 0;
  void need(size_t n) const;
  template <class T>
  T num() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  uint64_t var();
  std::string str();
  std::vector<int64_t> ints();
  bool done() const { return at == in.size(); }
};

/// The graphs under `roots` (a null root stays null).
std::string serialize_graph(const std::vector<UOpPtr>& roots);

/// The roots `bytes` holds, interned again. Throws Error naming what is wrong when the bytes are not
/// a serialized graph (short, an unknown op or type, a source that comes later).
std::vector<UOpPtr> deserialize_graph(std::string_view bytes);

}  // namespace lathe
