#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "device/cpu/c_compiler.hpp"
#include "device/add_one.hpp"
#include "device/temp_cache_dir.hpp"
#include "lathe/lathe.hpp"

namespace lathe {
namespace {

ProgramSpec add_one_kernel(const std::string& name, const std::string& salt = "") {
  std::string src = "void " + name + "(void** bufs, const long long* vals) {\n  (void)vals; " + salt +
                    "\n  float* out = (float*)bufs[0];\n  const float* in = (const float*)bufs[1];\n"
                    "  for (int i = 0; i < 4; i++) out[i] = in[i] + 1.0f;\n}\n";
  ProgramSpec p(name, src, DeviceSpec{}, UOp::index_const(0));
  p.set_buffer_metadata({0, 1}, {0}, {1});
  return p;
}

void run_add_one(const CompiledSpec& c) { testing::expect_adds_one(*load_cpu_program(c, 0, false)); }

using CompilerTest = testing::TempCacheDir;

TEST_F(CompilerTest, CompilesLoadsAndRuns) {
  CompiledSpec c = CCompiler::get().compile(add_one_kernel("k_add_one"));
  EXPECT_EQ(c.name, "k_add_one");
  EXPECT_FALSE(c.bytes.empty());
  EXPECT_FALSE(c.src.has_value());  // AOT: bytes, not source
  run_add_one(c);
}

TEST_F(CompilerTest, BrokenSourceIsACompileErrorWithTheCompilersOutput) {
  ProgramSpec p("k_broken", "void k_broken(void** bufs, const long long* vals) { this is not C }", DeviceSpec{},
                UOp::index_const(0));
  try {
    CCompiler::get().compile(p);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("k_broken"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
  }
}

TEST_F(CompilerTest, CorruptCacheEntryIsRebuiltNotTrusted) {
  ProgramSpec p = add_one_kernel("k_cached", "/* corrupt-cache test */");
  CCompiler::get().compile(p);
  ASSERT_EQ(entries().size(), 1u);
  std::ofstream(entries()[0], std::ios::binary | std::ios::trunc) << "LATHEKN2garbage-that-is-not-an-elf";
  run_add_one(CCompiler::get().compile(p));
}

TEST_F(CompilerTest, MissingEntryPointIsReported) {
  CompiledSpec c = CCompiler::get().compile(add_one_kernel("k_real_name"));
  c.name = "k_other_name";
  EXPECT_THROW(load_cpu_program(c, 0, false), CompileError);
}

#if defined(__x86_64__)
// Code built for one CPU must never be loaded on another: the identity (the memory cache's key)
// and the disk cache's key carry the feature set the target resolves to, not just its name.
TEST_F(CompilerTest, TargetsWithOtherFeaturesNeverShareACacheKey) {
  CCompiler v3("clang", "x86-64-v3"), v4("clang", "x86-64-v4"), v3_again("clang", "x86-64-v3");
  EXPECT_NE(v3.identity(), v4.identity());
  EXPECT_EQ(v3.identity(), v3_again.identity());
  EXPECT_EQ(v3.cpu(), "x86-64-v3");
  ProgramSpec p = add_one_kernel("k_per_target", "/* per-target cache test */");
  run_add_one(v3.compile(p));
  EXPECT_EQ(entries().size(), 1u);
  v4.compile(p);  // built (never loaded here: this CPU may lack AVX-512), and stored apart
  EXPECT_EQ(entries().size(), 2u);
  run_add_one(v3_again.compile(p));  // served from v3's entry
  EXPECT_EQ(entries().size(), 2u);
}

TEST(CCompiler, UnknownTargetIsACompileErrorNamingIt) {
  try {
    CCompiler("clang", "no-such-cpu");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-cpu"), std::string::npos) << e.what();
  }
}
#endif

TEST(CCompiler, TargetThatIsNotANameIsRefused) {
  EXPECT_THROW(CCompiler("clang", "native; rm -rf /"), Error);
}

TEST(CompiledSpec, ConstructorsFillTheRightFields) {
  UOpPtr ast = UOp::index_const(1);
  CompiledSpec s = CompiledSpec::from_source("f", "ir", ast, 3);
  EXPECT_EQ(s.src, std::optional<std::string>("ir"));
  EXPECT_TRUE(s.bytes.empty());
  EXPECT_EQ(s.buf_count, 3u);
  CompiledSpec b = CompiledSpec::from_bytes("g", {1, 2, 3}, ast);
  EXPECT_FALSE(b.src.has_value());
  EXPECT_EQ(b.bytes.size(), 3u);
  CompiledSpec w = CompiledSpec::from_source_with_sizes("h", "ir", ast, LaunchSize{4, 1, 1}, LaunchSize{32, 1, 1}, 2);
  EXPECT_EQ((*w.global_size)[0], 4u);
  EXPECT_EQ((*w.local_size)[0], 32u);
}

TEST(ProgramSpec, SettersFillTheRightFields) {
  ProgramSpec p("k", "src", DeviceSpec::parse("CUDA:0"), UOp::index_const(1));
  p.add_var(Variable("n", 1, 8));
  p.set_work_sizes({2, 3, 4}, {5, 6, 7});
  p.set_var_names({"n", "core_id"});
  p.set_buffer_metadata({0, 1, 2}, {0}, {1, 2});
  EXPECT_EQ(p.vars.size(), 1u);
  EXPECT_EQ(p.vars[0].name(), "n");
  EXPECT_EQ((*p.global_size)[2], 4u);
  EXPECT_EQ((*p.local_size)[0], 5u);
  EXPECT_EQ(p.var_names.back(), "core_id");
  EXPECT_EQ(p.buf_count, 3u);
  EXPECT_EQ(p.device.to_string(), "CUDA:0");
}

}  // namespace
}  // namespace lathe
