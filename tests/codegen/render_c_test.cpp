#include <gtest/gtest.h>

#include "codegen/linearize.hpp"
#include "codegen/render_c.hpp"
#include "ir/symbolic.hpp"
#include "lathe/lathe.hpp"
#include "schedule/schedule.hpp"

namespace lathe {
namespace {

UOpPtr kernel_ast(const Tensor& t) {
  Schedule s = create_schedule({t.uop()});
  EXPECT_EQ(s.items.size(), 1u);
  return simplify(s.items.at(0).ast);
}

TEST(RenderC, EntryPointAndBufferMetadata) {
  Tensor a = Tensor::rand({3, 5}, 1), b = Tensor::rand({3, 5}, 2);
  ProgramSpec p = render_c(kernel_ast(a * b + 1.0f), "E_test");
  EXPECT_EQ(p.name, "E_test");
  EXPECT_NE(p.src.find("void E_test(void** bufs, const long long* vals)"), std::string::npos) << p.src;
  EXPECT_EQ(p.globals, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(p.outs, (std::vector<size_t>{0}));
  EXPECT_EQ(p.ins, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(p.buf_count, 3u);
  EXPECT_TRUE(p.var_names.empty());
  EXPECT_FALSE(p.global_size.has_value());
  EXPECT_NE(p.src.find("float* restrict data0"), std::string::npos);
  EXPECT_NE(p.src.find("const float* restrict data1"), std::string::npos);
}

TEST(RenderC, ThreadedKernelTakesCoreIdLast) {
  Tensor a = Tensor::rand({256, 512}, 1);
  UOpPtr ast = kernel_ast(a * 2.0f);
  EXPECT_EQ(choose_threads(ast, 2), 2);
  EXPECT_EQ(choose_threads(ast, 1), 1);
  ProgramSpec p = render_c(ast, "E_threaded", CRenderOptions{2});
  ASSERT_FALSE(p.var_names.empty());
  EXPECT_EQ(p.var_names.back(), "core_id");
  ASSERT_TRUE(p.global_size.has_value());
  EXPECT_EQ((*p.global_size)[0], 2u);
  EXPECT_NE(p.src.find("core_id * chunk"), std::string::npos) << p.src;
}

TEST(RenderC, SmallKernelsAreNotThreaded) {
  Tensor a = Tensor::rand({4, 4}, 1);
  EXPECT_EQ(choose_threads(kernel_ast(a * 2.0f), 8), 1);
}

TEST(Linearize, LoopInvariantWorkIsHoisted) {
  // sum over j of x[i, j] * y[i]: y's load depends only on i, so it sits outside the j loop.
  Tensor x = Tensor::rand({4, 8}, 1), y = Tensor::rand({4, 1}, 2);
  std::vector<Instr> code = linearize(kernel_ast((x * y).sum({1})));
  int depth = 0, y_depth = -1, x_depth = -1;
  for (const Instr& in : code) {
    if (in.kind == Instr::Kind::Open) ++depth;
    if (in.kind == Instr::Kind::Close) --depth;
    if (in.kind == Instr::Kind::Node && in.u->op() == Ops::LOAD) {
      int64_t slot = in.u->src(0)->src(0)->arg_as<int64_t>();
      (slot == 2 ? y_depth : x_depth) = depth;
    }
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(y_depth, 1);
  EXPECT_EQ(x_depth, 2);
}

TEST(Linearize, ReduceAccumulatesInsideItsLoops) {
  Tensor x = Tensor::rand({4, 8}, 1);
  std::vector<Instr> code = linearize(kernel_ast(x.sum({1})));
  std::vector<Instr::Kind> kinds;
  for (const Instr& in : code)
    if (in.kind != Instr::Kind::Node) kinds.push_back(in.kind);
  using K = Instr::Kind;
  EXPECT_EQ(kinds, (std::vector<K>{K::Open, K::AccInit, K::Open, K::Accumulate, K::Close, K::Close}));
}

}  // namespace
}  // namespace lathe
