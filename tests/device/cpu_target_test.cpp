// Code built for a CPU this machine cannot run is refused before it is loaded, with the features
// it lacks named, whether the code was just built or read from the disk cache.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "device/cpu/c_compiler.hpp"
#include "device/cpu/cpu_target.hpp"
#include "device/temp_cache_dir.hpp"
#include "lathe/plan.hpp"
#ifdef LATHE_HAS_LLVM
#include "device/cpu/llvm_jit.hpp"
#endif

namespace lathe {
namespace {

TEST(CpuTarget, MacrosMissingAreTheTargetsFeatureMacrosTheHostLacks) {
  std::string target = "#define __AVX2__ 1\n#define __AVX512F__ 1\n#define __SSE4A__ 1\n#define __znver3__ 1\n#define __tune_znver3__ 1\n"
                       "#define __SIZEOF_INT__ 4\n#define __ARM_FEATURE_SVE 1\n";
  std::string host = "#define __AVX2__ 1\n#define __sapphirerapids__ 1\n#define __SIZEOF_INT__ 4\n";
  // Macros whose values have spaces do not throw the reading off (gcc defines many).
  target = "#define __INT64_C(c) c ## L\n#define __DBL_HAS_INFINITY__ 1\n" + target;
  host = "#define __INT64_C(c) c ## L\n#define __DBL_HAS_INFINITY__ 1\n" + host;
  EXPECT_EQ(macros_missing(target, host), (std::vector<std::string>{"avx512f", "sse4a", "sve"}));
  EXPECT_TRUE(macros_missing(host, host).empty());
}

TEST(CpuTarget, TheRefusalNamesTheTargetAndEveryMissingFeature) {
  EXPECT_EQ(cannot_run_message("x86-64-v3", {}), "");
  std::string m = cannot_run_message("x86-64-v4", {"avx512f", "avx512bw"});
  EXPECT_NE(m.find("LATHE_CPU_TARGET 'x86-64-v4'"), std::string::npos) << m;
  EXPECT_NE(m.find("avx512bw, avx512f"), std::string::npos) << m;
}

// LATHE_TARGET_SHAPE's lane counts name what the optimizer plans for on each class of CPU, so the
// suite's runs at 4, 8 and 16 lanes check what an SSE, an AVX2 and an AVX-512 machine get.
TEST(CpuTarget, LaneCountShapesAreTheShapesOfEachClassOfCpu) {
  auto shape_of = [](const Target& t) {
    return TargetShape{t.vector_bytes, t.vector_registers, t.l1_bytes,
                       t.l2_bytes,     t.l3_bytes,         t.memory_bytes_per_cycle};
  };
  EXPECT_EQ(TargetShape::parse("16"), shape_of(cpu_target_of(true, true, false)));
  EXPECT_EQ(TargetShape::parse("8"), shape_of(cpu_target_of(false, true, false)));
  EXPECT_EQ(TargetShape::parse("4"), shape_of(cpu_target_of(false, false, false)));
}

#if defined(__x86_64__)
// Two CPUs no machine has both of: an AMD one (SSE4A, CLZERO) and an Intel one (AMX).
const char* const kEitherSide[] = {"znver3", "sapphirerapids"};

// The target among kEitherSide whose code `check` refuses here (every x86-64 CPU lacks one).
template <class Check>
std::string refused_target(Check check) {
  for (const char* cpu : kEitherSide) {
    try {
      check(cpu);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("LATHE_CPU_TARGET '") + cpu + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("lacks"), std::string::npos) << e.what();
      return cpu;
    }
  }
  return "";
}

TEST(CpuTarget, TheCCompilerRefusesCodeForACpuThisMachineLacks) {
  EXPECT_NO_THROW(CCompiler("clang", "native").check_runs_here());
  EXPECT_NO_THROW(CCompiler("clang", "x86-64").check_runs_here());  // the baseline every x86-64 CPU runs
  EXPECT_NE(refused_target([](const char* cpu) { CCompiler("clang", cpu).check_runs_here(); }), "");
}

#ifdef LATHE_HAS_LLVM
TEST(CpuTarget, TheLlvmCompilerRefusesCodeForACpuThisMachineLacks) {
  EXPECT_NO_THROW(LlvmCompiler("native").check_runs_here());
  EXPECT_NO_THROW(LlvmCompiler("x86-64").check_runs_here());
  EXPECT_NE(refused_target([](const char* cpu) { LlvmCompiler(cpu).check_runs_here(); }), "");
}
#endif

#ifdef LATHE_CLI
using CpuTargetCli = testing::TempCacheDir;

// The command line with such a target fails with the refusal, twice: once after compiling, once
// with every kernel's object read from the disk cache the first run filled.
TEST_F(CpuTargetCli, RefusesATargetThisMachineCannotRunFromTheDiskCacheToo) {
  const char* backend = std::getenv("LATHE_CPU_COMPILER");
  std::string target = refused_target([](const char* cpu) { CCompiler("clang", cpu).check_runs_here(); });
  ASSERT_NE(target, "");
  std::string cmd = "LATHE_CPU_TARGET=" + target + " LATHE_CPU_COMPILER=" + (backend ? backend : "") + " LATHE_CACHE_DIR=" +
                    dir_.string() + " " + LATHE_CLI + " run --iters 1 2>&1";
  for (int round = 0; round < 2; ++round) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int status = ::pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << out;
    EXPECT_NE(out.find("LATHE_CPU_TARGET '" + target + "'"), std::string::npos) << out;
    EXPECT_EQ(out.find("output probs"), std::string::npos) << out;
    if (round == 0) {
      EXPECT_FALSE(entries().empty()) << "the first run stores the objects it built";
    }
  }
}
#endif
#endif

}  // namespace
}  // namespace lathe
