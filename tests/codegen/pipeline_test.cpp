// The codegen pipeline: its named steps, what it tells the runtime about a kernel, threads.
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

using test::kernel_ast;

const CRenderer kC;

TEST(Pipeline, StepsAreAVisibleListEndingInLinearizeAndRender) {
  std::vector<std::string> steps = pipeline_steps();
  ASSERT_GE(steps.size(), 4u);
  EXPECT_EQ(steps.front(), "integer division defined for every divisor");
  EXPECT_NE(std::find(steps.begin(), steps.end(), "simplify"), steps.end());
  EXPECT_NE(std::find(steps.begin(), steps.end(), "optimize"), steps.end());
  EXPECT_NE(std::find(steps.begin(), steps.end(), "reductions as accumulators"), steps.end());
  EXPECT_EQ(steps[steps.size() - 2], "linearize");
  EXPECT_EQ(steps.back(), "render");
}

// The bodies of the innermost loops of rendered C: each `for` whose block holds no other `for`.
std::vector<std::string> innermost_loops(const std::string& src) {
  std::vector<std::string> out;
  for (size_t at = src.find("for ("); at != std::string::npos; at = src.find("for (", at + 1)) {
    size_t open = src.find('{', at), end = open;
    for (int depth = 0; end < src.size(); ++end) {
      depth += src[end] == '{' ? 1 : src[end] == '}' ? -1 : 0;
      if (depth == 0) break;
    }
    std::string body = src.substr(open + 1, end - open - 1);
    if (body.find("for (") == std::string::npos) out.push_back(body);
  }
  return out;
}

// A convolution reading a padded copy has no gate in its innermost loop; one reading through its
// padding (64 output channels: 576 multiply-adds per input element) has its kernel rows as loop
// bounds and tests columns only for a row's edge pixels: at most two gated loads there, none
// unoptimized (no tile: both window loops are bounded). Neither has division or modulo there.
TEST(Pipeline, PaddedConvolutionHasNoIndexMathAndAtMostItsEdgeGatesInItsInnermostLoop) {
  Tensor x = Tensor::rand({1, 32, 14, 14}, 1), b = Tensor::rand({256}, 3);
  struct Case {
    bool optimize;
    int vector_bytes, registers;
  };
  for (int64_t out_channels : {256, 64}) {
    Tensor w = Tensor::rand({out_channels, 32, 3, 3}, 2);
    Tensor y = x.conv2d(w, b.shrink({{0, out_channels}}), {1, 1}, {1, 1}).relu();
    for (Case t : {Case{false, 16, 16}, Case{true, 16, 16}, Case{true, 32, 16}, Case{true, 64, 32}}) {
      SCOPED_TRACE(std::to_string(out_channels) + " channels, " + (t.optimize ? "optimized for " : "unoptimized, ") +
                   std::to_string(t.vector_bytes) + "-byte vectors");
      ProgramSpec p = build_program(kernel_ast(y), kC, {.optimize = t.optimize, .verify = true, .target = {.vector_bytes = t.vector_bytes, .vector_registers = t.registers}});
      std::vector<std::string> loops = innermost_loops(p.src);
      ASSERT_FALSE(loops.empty()) << p.src;
      size_t edge_gates = out_channels == 256 || !t.optimize ? 0 : 2;
      for (const std::string& body : loops) {
        EXPECT_EQ(body.find('/'), std::string::npos) << body;
        EXPECT_EQ(body.find('%'), std::string::npos) << body;
        EXPECT_LE(static_cast<size_t>(std::count(body.begin(), body.end(), '?')), edge_gates) << body;  // gated loads
        if (edge_gates == 0) {
          EXPECT_EQ(body.find("_Bool"), std::string::npos) << body;
        }
      }
    }
  }
}

TEST(Pipeline, EntryPointAndBufferMetadata) {
  Tensor a = Tensor::rand({3, 5}, 1), b = Tensor::rand({3, 5}, 2);
  ProgramSpec p = build_program(kernel_ast(a * b + 1.0f), kC, {.verify = true});
  EXPECT_EQ(p.name.substr(0, 5), "E_15_");  // its two loops merged (ir/merge_loops)
  EXPECT_NE(p.src.find("void " + p.name + "(void** bufs, const long long* vals)"), std::string::npos) << p.src;
  EXPECT_EQ(p.globals, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(p.outs, (std::vector<size_t>{0}));
  EXPECT_EQ(p.ins, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(p.buf_count, 3u);
  EXPECT_TRUE(p.var_names.empty());
  EXPECT_FALSE(p.global_size.has_value());
  EXPECT_NE(p.src.find("float* restrict data0"), std::string::npos);
  EXPECT_NE(p.src.find("const float* restrict data1"), std::string::npos);
}

TEST(Pipeline, ThreadedKernelTakesCoreIdLastAsALaunchIndex) {
  Tensor a = Tensor::rand({256, 512}, 1);
  UOpPtr ast = kernel_ast(a * 2.0f);
  EXPECT_EQ(build_program(ast, kC, {.verify = true, .target = {.threads = 1}}).global_size, std::nullopt);
  ProgramSpec p = build_program(ast, kC, {.verify = true, .target = {.threads = 2}});
  EXPECT_NE(p.opts.find("THREAD(0, 2)"), std::string::npos) << p.opts;
  ASSERT_FALSE(p.var_names.empty());
  EXPECT_EQ(p.var_names.back(), "core_id");
  ASSERT_TRUE(p.global_size.has_value());
  EXPECT_EQ((*p.global_size)[0], 2u);
  bool special = false;
  for (const UOpPtr& u : toposort(p.ast)) special |= u->op() == Ops::SPECIAL && u->arg_as<std::string>() == "core_id";
  EXPECT_TRUE(special);  // the launch index is a UOp every renderer sees, not C text
}

TEST(Pipeline, SmallKernelsAreNotThreaded) {
  Tensor a = Tensor::rand({4, 4}, 1);
  EXPECT_EQ(build_program(kernel_ast(a * 2.0f), kC, {.verify = true, .target = {.threads = 8}}).global_size, std::nullopt);
}

TEST(Pipeline, ExplicitActionsReplaceTheHeuristicsAndAreRecorded) {
  Tensor a = Tensor::rand({256, 512}, 1);
  UOpPtr ast = kernel_ast(a * 2.0f);
  ProgramSpec p = build_program(ast, kC, {.target = {.threads = 2}, .opts = std::vector<Opt>{{OptOp::UPCAST, 0, 4}}});
  EXPECT_EQ(p.opts, "UPCAST(0, 4)");
  EXPECT_EQ(p.global_size, std::nullopt);
  EXPECT_EQ(build_program(ast, kC, {.optimize = false, .target = {.threads = 2}}).opts, "");
  EXPECT_THROW(build_program(ast, kC, {.opts = std::vector<Opt>{{OptOp::UPCAST, 0, 3}}}), OptError);
}

TEST(Pipeline, DeviceLevelFormHasNoReduceNoSixteenBitArithmeticNoFloatTranscendentals) {
  Tensor x = Tensor::rand({8, 32}, 1).cast(dtypes::float16);
  UOpPtr ast = kernel_ast((x * x).exp().sum({1}));
  ProgramSpec p = build_program(ast, kC, {.verify = true});
  for (const UOpPtr& u : toposort(p.ast)) {
    EXPECT_NE(u->op(), Ops::REDUCE);
    EXPECT_NE(u->op(), Ops::EXP2);
    if (is_alu(u->op())) {
      EXPECT_NE(u->dtype().scalar(), dtypes::float16) << to_string(*u);
    }
  }
}

TEST(Pipeline, VerifyRejectsAMalformedKernel) {
  UOpPtr buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 4), {}, int64_t{0});
  UOpPtr bad = UOp::make(Ops::ADD, dtypes::float32, {UOp::const_(dtypes::float32, 1.0), UOp::const_(dtypes::int32, int64_t{1})});
  UOpPtr store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, buf->dtype(), {buf, UOp::index_const(0)}), bad});
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, {store});
  EXPECT_THROW(build_program(sink, kC, {.verify = true}), SpecError);
}

}  // namespace
}  // namespace lathe
