// UOp graphs as bytes: every kind of node comes back as the same interned node, and bytes that are
// not a serialized graph are an Error, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/serialize.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

// One node of every argument kind, vector and pointer types, a node shared by two users.
std::vector<UOpPtr> every_kind() {
  UOpPtr n = UOp::variable("n", 1, 4096);
  UOpPtr shared = n * 4 + 7;
  UOpPtr buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 4096), {}, int64_t{3});
  UOpPtr local = UOp::make(Ops::DEFINE_LOCAL, dtypes::float16.vec(4).ptr(AddrSpace::Local, 64), {}, int64_t{0});
  return {
      shared,
      idiv(shared, n) + max(shared, UOp::index_const(-9)),
      UOp::const_(dtypes::bool_, true),
      UOp::const_(dtypes::uint64, uint64_t{18446744073709551615u}),
      UOp::const_(dtypes::float32, -0.0),
      UOp::const_(dtypes::float64, std::numeric_limits<double>::quiet_NaN()),
      UOp::const_(dtypes::float32, -std::numeric_limits<double>::infinity()),
      UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {UOp::const_(dtypes::float32, 2.5)}, ReduceArg{Ops::MAX, {0, 2}}),
      UOp::make(Ops::SPECIAL, dtypes::index, {UOp::index_const(2)}, std::string("core_id")),
      UOp::make(Ops::ATTENTION, dtypes::float32, {UOp::const_(dtypes::float32, 1.0), UOp::const_(dtypes::float32, 2.0)},
                AttentionArg{AttentionKeys{1, -4, 1, 1}}),
      UOp::make(Ops::ATTENTION, dtypes::float32, {UOp::const_(dtypes::float32, 3.0), UOp::const_(dtypes::float32, 2.0)}, AttentionArg{}),
      UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::NOOP, dtypes::void_)}, KernelInfo{.builds_own_loops = true}),
      UOp::make(Ops::CONTIGUOUS, dtypes::float32, {UOp::const_(dtypes::float32, 1.0)}, CopyArg{.layout = true}),
      UOp::make(Ops::CONTIGUOUS, dtypes::float32, {UOp::const_(dtypes::float32, 1.0)}, CopyArg{}),
      UOp::make(Ops::INDEX, buf->dtype(), {buf, shared}),
      local,
      UOp::make(Ops::VECTORIZE, dtypes::int32.vec(3), {UOp::const_(dtypes::int32, 1), UOp::const_(dtypes::int32, -2), UOp::const_(dtypes::int32, 3)}),
      nullptr,
  };
}

TEST(Serialize, EveryKindOfNodeComesBackAsTheSameNode) {
  std::vector<UOpPtr> roots = every_kind();
  std::string bytes = serialize_graph(roots);
  EXPECT_EQ(deserialize_graph(bytes), roots);
  EXPECT_EQ(serialize_graph(roots), bytes) << "the same graph, the same bytes";
  EXPECT_EQ(deserialize_graph(serialize_graph({})), std::vector<UOpPtr>{});
}

TEST(Serialize, SharedNodesAreWrittenOnce) {
  UOpPtr n = UOp::variable("n", 0, 10), big = n;
  for (int i = 0; i < 40; ++i) big = big + big * 3;  // a DAG of 2^40 paths and 81 nodes
  std::string bytes = serialize_graph({big});
  EXPECT_LT(bytes.size(), 81u * 64) << "each node once, not once per path";
  EXPECT_EQ(deserialize_graph(bytes).at(0), big);
}

TEST(Serialize, BytesThatAreNotAGraphAreAnError) {
  std::vector<UOpPtr> roots = every_kind();
  std::string bytes = serialize_graph(roots);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(deserialize_graph(bytes.substr(0, n)), Error) << "cut at " << n;
  EXPECT_THROW(deserialize_graph(bytes + "x"), Error);
  // Any one byte changed: an Error or some graph, never a crash (the sanitizer build runs this).
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      try {
        EXPECT_EQ(deserialize_graph(bad).size(), roots.size());
      } catch (const Error&) {
      }
    }
  // A source that is the node itself; an op lathe does not have.
  ByteWriter w;
  w.var(1);
  w.num<uint8_t>(static_cast<uint8_t>(ScalarType::Index));
  w.num<int16_t>(1);
  w.num<uint8_t>(0);
  w.num<uint8_t>(0);
  w.num<int64_t>(-1);
  w.var(1);  // one node: NEG of itself
  w.num<uint8_t>(static_cast<uint8_t>(Ops::NEG));
  w.var(0);
  w.num<uint8_t>(0);
  w.var(1);
  w.var(0);
  w.var(1);
  w.var(1);
  EXPECT_THROW(deserialize_graph(w.out), Error);
  std::string unknown = w.out;
  unknown[1 + 13 + 1] = static_cast<char>(0xff);
  EXPECT_THROW(deserialize_graph(unknown), Error);
}

}  // namespace
}  // namespace lathe
