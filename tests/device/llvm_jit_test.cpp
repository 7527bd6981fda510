// The in-process LLVM backend: IR text -> object code (cached on disk) -> a Program run from the JIT.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include "codegen/pipeline.hpp"
#include "codegen/render_llvm.hpp"
#include "device/cpu/llvm_jit.hpp"
#include "device/add_one.hpp"
#include "device/temp_cache_dir.hpp"
#include "lathe/lathe.hpp"
#include "opt/action.hpp"
#include "runtime/compile_kernel.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

namespace fs = std::filesystem;

// out[i] = in[i] + 1 for i < 4, in the entry point every CPU kernel has; `salt` makes its source unique.
ProgramSpec add_one_kernel(const std::string& name, const std::string& salt = "") {
  std::string src = "; " + salt + "\ndefine void @" + name +
                    "(ptr %bufs, ptr %vals) {\n"
                    "entry:\n  %out = load ptr, ptr %bufs\n  %pin = getelementptr ptr, ptr %bufs, i64 1\n  %in = load ptr, ptr %pin\n"
                    "  br label %loop\nloop:\n  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n"
                    "  %src = getelementptr float, ptr %in, i64 %i\n  %x = load float, ptr %src\n  %y = fadd float %x, 1.0\n"
                    "  %dst = getelementptr float, ptr %out, i64 %i\n  store float %y, ptr %dst\n  %next = add i64 %i, 1\n"
                    "  %more = icmp slt i64 %next, 4\n  br i1 %more, label %loop, label %done\ndone:\n  ret void\n}\n";
  ProgramSpec p(name, src, DeviceSpec{}, UOp::index_const(0));
  p.set_buffer_metadata({0, 1}, {0}, {1});
  return p;
}

void run_add_one(const CompiledSpec& c) { testing::expect_adds_one(*load_llvm_program(c, 0, false, false)); }

using LlvmJit = testing::TempCacheDir;

TEST_F(LlvmJit, CompilesLoadsAndRuns) {
  CompiledSpec c = LlvmCompiler::get().compile(add_one_kernel("k_add_one"));
  EXPECT_EQ(c.name, "k_add_one");
  EXPECT_FALSE(c.bytes.empty());  // the object code
  ASSERT_TRUE(c.src.has_value());  // and the IR it came from
  EXPECT_NE(c.src->find("define void @k_add_one"), std::string::npos);
  run_add_one(c);
}

// Each load links its own copy: two Programs of one kernel (same symbol) live side by side, and
// one outlives the other.
TEST_F(LlvmJit, ProgramsOfOneKernelLiveApart) {
  CompiledSpec c = LlvmCompiler::get().compile(add_one_kernel("k_twice"));
  auto first = load_llvm_program(c, 0, false, false);
  {
    auto second = load_llvm_program(c, 0, false, false);
    testing::expect_adds_one(*first);
    testing::expect_adds_one(*second);
  }
  testing::expect_adds_one(*first);  // the other copy's removal left this one linked
  first.reset();
  run_add_one(c);
}

TEST_F(LlvmJit, BrokenIrIsACompileErrorWithLlvmsDiagnostic) {
  ProgramSpec p("k_broken", "define void @k_broken(ptr %bufs, ptr %vals) {\n  this is not IR\n}\n", DeviceSpec{}, UOp::index_const(0));
  try {
    LlvmCompiler::get().compile(p);
    FAIL();
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("k_broken"), std::string::npos) << what;
    EXPECT_NE(what.find("error"), std::string::npos) << what;
  }
  EXPECT_TRUE(entries().empty());  // nothing cached
}

TEST_F(LlvmJit, IrThatDoesNotVerifyIsACompileError) {
  ProgramSpec p("k_bad", "define void @k_bad(ptr %bufs, ptr %vals) {\nentry:\n  %x = add i64 %y, 1\n  %y = add i64 %x, 1\n  ret void\n}\n",
                DeviceSpec{}, UOp::index_const(0));
  EXPECT_THROW(LlvmCompiler::get().compile(p), CompileError);
}

TEST_F(LlvmJit, MissingEntryPointIsReported) {
  CompiledSpec c = LlvmCompiler::get().compile(add_one_kernel("k_real_name"));
  c.name = "k_other_name";
  EXPECT_THROW(load_llvm_program(c, 0, false, false), CompileError);
}

// A cache entry cut short (a crash mid-write elsewhere) or with flipped bits is rebuilt, never run.
TEST_F(LlvmJit, TruncatedAndCorruptEntriesAreRebuilt) {
  ProgramSpec p = add_one_kernel("k_cached", "corrupt-cache test");
  LlvmCompiler::get().compile(p);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  uintmax_t whole = fs::file_size(entry);
  fs::resize_file(entry, whole / 2);
  run_add_one(LlvmCompiler::get().compile(p));
  EXPECT_EQ(fs::file_size(entry), whole) << "the rebuilt entry replaced the truncated one";
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(whole - 8));
    f.write("XXXXXXXX", 8);  // inside the object code
  }
  run_add_one(LlvmCompiler::get().compile(p));
  std::ifstream back(entry, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(back), {}};
  EXPECT_EQ(bytes.find("XXXXXXXX"), std::string::npos) << "the corrupt entry was rewritten";
}

TEST_F(LlvmJit, CacheOffWritesNothing) {
  setenv("LATHE_CACHE", "0", 1);
  run_add_one(LlvmCompiler::get().compile(add_one_kernel("k_uncached")));
  unsetenv("LATHE_CACHE");
  EXPECT_TRUE(entries().empty());
}

// prepare() from several threads at once compiles and links kernels concurrently: eight threads
// race on two sources (one cache entry each, compiled and written by whichever come first).
TEST_F(LlvmJit, CompilesAndLoadsFromManyThreadsAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> ran{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        ProgramSpec p = add_one_kernel("k_thread", "kernel " + std::to_string((t + i) % 2));
        run_add_one(LlvmCompiler::get().compile(p));
        ++ran;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ran.load(), 32);
  EXPECT_EQ(entries().size(), 2u);
}

#if defined(__x86_64__)
TEST(LlvmCompiler, TargetsWithOtherFeaturesNeverShareAnIdentity) {
  LlvmCompiler v3("x86-64-v3"), v4("x86-64-v4"), v3_again("x86-64-v3");
  EXPECT_NE(v3.identity(), v4.identity());
  EXPECT_EQ(v3.identity(), v3_again.identity());
  EXPECT_EQ(v3.target().vector_bytes, 32);
  EXPECT_EQ(v4.target().vector_bytes, 64);
}
#endif

TEST(LlvmCompiler, UnknownTargetIsACompileErrorNamingIt) {
  try {
    LlvmCompiler("no-such-cpu");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-cpu"), std::string::npos) << e.what();
  }
}

TEST(LlvmCompiler, TargetThatIsNotANameIsRefused) { EXPECT_THROW(LlvmCompiler("native; rm -rf /"), Error); }


// A value the graph rounds to float16 is computed without `contract`: on a CPU with half-precision
// FMA (AVX512-FP16) LLVM would otherwise narrow `half(a * b)` to a half multiply and fuse it with
// the next add, rounding once where the graph rounds twice. Checked on the IR, so on every CPU.
TEST(LlvmRenderer, ValuesRoundedToHalfAreNotContracted) {
  Tensor a = Tensor::rand({37}, 1).cast(dtypes::float16), b = Tensor::rand({37}, 2).cast(dtypes::float16);
  Tensor c = Tensor::rand({37}, 3).cast(dtypes::float16);
  ExecutionPlan plan = Tensor::prepare({a * b + c}, {.compiler = "llvm"});
  size_t checked = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    const std::string& ir = k->kernel->code;
    for (size_t at = ir.find("fptrunc "); at != std::string::npos; at = ir.find("fptrunc ", at + 1)) {
      size_t from = ir.find('%', at), end = ir.find_first_of(" ,\n", from);
      std::string operand = ir.substr(from, end - from);
      size_t def = ir.find("  " + operand + " = ");
      ASSERT_NE(def, std::string::npos) << operand;
      std::string line = ir.substr(def, ir.find('\n', def) - def);
      EXPECT_EQ(line.find("contract"), std::string::npos) << line;
      checked += line.find("fmul") != std::string::npos || line.find("fadd") != std::string::npos;
    }
  }
  EXPECT_GE(checked, 2u) << "the product and the sum are each rounded to half";
}

// A convolution reading its padding through gates sums a block's 16 channels innermost, inside the
// taps whose padding each gate tests: the select between a gated load's address and the zeros
// takes the address without the channel term, which is added after it (from the zeros too), so
// the select does not depend on the innermost loop and LLVM hoists it out. Values against the
// same convolution of stored data, through both backends' tests elsewhere; here on the IR.
TEST(LlvmRenderer, AGatedLoadSelectsItsAddressOutsideTheLoopsInsideItsGate) {
  Tensor x = (Tensor::rand({1, 32, 9, 9}, 1) * 2.0f).relu(), w = Tensor::rand({32, 32, 3, 3}, 2).realize();
  Tensor y = x.conv2d(w, std::nullopt, {1, 1}, {1, 1});
  ExecutionPlan plan = Tensor::prepare({y}, {.compiler = "llvm"});
  size_t selects = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    const std::string& ir = k->kernel->code;
    size_t last_phi = ir.rfind(" = phi i64 ");
    if (last_phi == std::string::npos || ir.find("ptr @zeros") == std::string::npos) continue;
    std::string inner = ir.substr(ir.rfind('%', last_phi), ir.find(' ', ir.rfind('%', last_phi)) - ir.rfind('%', last_phi));
    // Whether the value named `v` is computed from the innermost loop's counter.
    std::function<bool(const std::string&, int)> from_inner = [&](const std::string& v, int depth) {
      if (v == inner) return true;
      size_t def = ir.find("  " + v + " = ");
      if (def == std::string::npos || depth > 64) return false;
      std::string line = ir.substr(def, ir.find('\n', def) - def);
      for (size_t at = line.find('%', 3); at != std::string::npos; at = line.find('%', at + 1)) {
        size_t end = line.find_first_of(" ,)\n", at);
        if (from_inner(line.substr(at, end - at), depth + 1)) return true;
      }
      return false;
    };
    for (size_t at = ir.find(", ptr @zeros"); at != std::string::npos; at = ir.find(", ptr @zeros", at + 1)) {
      size_t start = ir.rfind('\n', at) + 1;
      std::string line = ir.substr(start, at - start);
      size_t ptr = line.find("ptr %");
      ASSERT_NE(ptr, std::string::npos) << line;
      std::string address = line.substr(ptr + 4, line.find_first_of(" ,", ptr + 4) - ptr - 4);
      EXPECT_FALSE(from_inner(address, 0)) << line << " reads the innermost loop's " << inner;
      ++selects;
    }
  }
  EXPECT_GE(selects, 1u) << "the convolution reads its padding through gates";
  plan.execute();
  Tensor x_stored = Tensor::from_vector(x.to_vector<float>(), x.shape());
  std::vector<float> want = x_stored.conv2d(w, std::nullopt, {1, 1}, {1, 1}).to_vector<float>();
  std::vector<float> got = Tensor::from_buffer(*plan.output_buffer(), y.shape()).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-5 * std::abs(want[i])) << i;
}

// Lanes picked from one or two vectors (a tile transpose's steps, a splat of one lane) are one
// shufflevector each, with no per-lane extracts left behind, and pick the right lanes.
TEST(LlvmRenderer, LanesOfOtherVectorsAreShuffles) {
  DType v16 = dtypes::float32.vec(16);
  UOpPtr out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 32), {}, int64_t{0});
  UOpPtr in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 32), {}, int64_t{1});
  auto at = [](const UOpPtr& buf, int64_t i) { return UOp::make(Ops::INDEX, buf->dtype(), {buf, UOp::index_const(i)}); };
  UOpPtr a = UOp::make(Ops::LOAD, v16, {at(in, 0)}), b = UOp::make(Ops::LOAD, v16, {at(in, 16)});
  std::vector<UOpPtr> program{a, b}, zipped, splat;
  auto lane = [&](const UOpPtr& v, int64_t i) {
    program.push_back(UOp::make(Ops::GEP, dtypes::float32, {v}, i));
    return program.back();
  };
  for (int64_t i = 0; i < 8; ++i) {  // a0 b0 a1 b1 ... a7 b7
    zipped.push_back(lane(a, i));
    zipped.push_back(lane(b, i));
  }
  UOpPtr three = lane(a, 3);
  splat.assign(16, three);
  UOpPtr z = UOp::make(Ops::VECTORIZE, v16, std::move(zipped)), s = UOp::make(Ops::VECTORIZE, v16, std::move(splat));
  program.insert(program.end(), {z, s, UOp::make(Ops::STORE, dtypes::void_, {at(out, 0), z}), UOp::make(Ops::STORE, dtypes::void_, {at(out, 16), s})});
  KernelSignature sig{{{0, dtypes::float32, true}, {1, dtypes::float32, false}}, {}};
  std::string ir = LlvmRenderer().render("k_shuffles", program, sig);
  EXPECT_EQ(ir.find("extractelement"), std::string::npos) << ir;
  size_t shuffles = 0;
  for (size_t at = ir.find("shufflevector"); at != std::string::npos; at = ir.find("shufflevector", at + 1)) ++shuffles;
  EXPECT_EQ(shuffles, 2u) << ir;
  ProgramSpec p("k_shuffles", ir, DeviceSpec{}, UOp::index_const(0));
  p.set_buffer_metadata({0, 1}, {0}, {1});
  auto prog = load_llvm_program(LlvmCompiler::get().compile(p), 0, false, false);
  float src[32], dst[32] = {};
  for (int i = 0; i < 32; ++i) src[i] = static_cast<float>(i);
  void* bufs[2] = {dst, src};
  prog->execute(bufs, nullptr, {1, 1, 1}, std::nullopt);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(dst[i], i % 2 ? 16.0f + i / 2 : i / 2) << i;
  for (int i = 16; i < 32; ++i) EXPECT_EQ(dst[i], 3.0f) << i;
}

// A gated load reads zeros where its gate is false, whatever its address (here far outside the
// buffer), and costs no branch: its address is a select between the element and the kernel's
// zeros. Scalars, whole vectors and bools; both gates taken by the same program at run time.
TEST(LlvmRenderer, GatedLoadsReadZerosWithoutABranch) {
  DType v16 = dtypes::float32.vec(16);
  UOpPtr out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 64), {}, int64_t{0});
  UOpPtr in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 32), {}, int64_t{1});
  UOpPtr flags = UOp::make(Ops::DEFINE_GLOBAL, dtypes::bool_.ptr(AddrSpace::Global, 2), {}, int64_t{2});
  UOpPtr n = UOp::variable("n", 0, 10);
  UOpPtr yes = lt(n, 5), no = lt(UOp::index_const(5), n);  // true and false for n = 0
  auto at = [](const UOpPtr& buf, int64_t i, const UOpPtr& gate) {
    return UOp::make(Ops::INDEX, buf->dtype(), {buf, UOp::index_const(i), gate});
  };
  auto plain = [](const UOpPtr& buf, int64_t i) { return UOp::make(Ops::INDEX, buf->dtype(), {buf, UOp::index_const(i)}); };
  int64_t far = int64_t{1} << 40;
  UOpPtr s_in = UOp::make(Ops::LOAD, dtypes::float32, {at(in, 3, yes)}), s_out = UOp::make(Ops::LOAD, dtypes::float32, {at(in, far, no)});
  UOpPtr v_in = UOp::make(Ops::LOAD, v16, {at(in, 16, yes)}), v_out = UOp::make(Ops::LOAD, v16, {at(in, far, no)});
  UOpPtr b_in = UOp::make(Ops::LOAD, dtypes::bool_, {at(flags, 1, yes)}), b_out = UOp::make(Ops::LOAD, dtypes::bool_, {at(flags, far, no)});
  auto as_float = [](const UOpPtr& b) { return where(b, UOp::const_(dtypes::float32, 1.0), UOp::const_(dtypes::float32, 0.0)); };
  UOpPtr f_in = as_float(b_in), f_out = as_float(b_out);
  std::vector<UOpPtr> program{yes, no, s_in, s_out, v_in, v_out, b_in, b_out, f_in, f_out};
  std::vector<std::pair<int64_t, UOpPtr>> stores{{0, s_in}, {1, s_out}, {2, f_in}, {3, f_out}, {16, v_in}, {32, v_out}};
  for (auto& [i, v] : stores) program.push_back(UOp::make(Ops::STORE, dtypes::void_, {plain(out, i), v}));
  KernelSignature sig{{{0, dtypes::float32, true}, {1, dtypes::float32, false}, {2, dtypes::bool_, false}}, {"n"}};
  std::string ir = LlvmRenderer().render("k_gated", program, sig);
  EXPECT_EQ(ir.find("br i1"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@zeros"), std::string::npos) << ir;
  ProgramSpec p("k_gated", ir, DeviceSpec{}, UOp::index_const(0));
  p.set_buffer_metadata({0, 1, 2}, {0}, {1, 2});
  auto prog = load_llvm_program(LlvmCompiler::get().compile(p), 1, false, false);
  float src[32], dst[64];
  bool flag[2] = {false, true};
  for (int i = 0; i < 32; ++i) src[i] = static_cast<float>(i + 1);
  std::fill(std::begin(dst), std::end(dst), -1.0f);
  void* bufs[3] = {dst, src, flag};
  int64_t vals[1] = {0};
  prog->execute(bufs, vals, {1, 1, 1}, std::nullopt);
  EXPECT_EQ(dst[0], 4.0f);
  EXPECT_EQ(dst[1], 0.0f);
  EXPECT_EQ(dst[2], 1.0f);
  EXPECT_EQ(dst[3], 0.0f);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(dst[16 + i], 17.0f + i) << i;
    EXPECT_EQ(dst[32 + i], 0.0f) << i;
  }
}

// A load with a gate per lane is one masked load: it reads only the lanes whose gate holds (zero
// in the others) and its address, which here points 4 elements before the buffer, is a plain
// `getelementptr` (an `inbounds` one pointing outside the buffer would be poison).
TEST(LlvmRenderer, AMaskedLoadReadsOnlyItsLanesFromAnAddressThatMayPointOutside) {
  DType v16 = dtypes::float32.vec(16);
  UOpPtr out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 16), {}, int64_t{0});
  UOpPtr in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 12), {}, int64_t{1});
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < 16; ++i) lanes.push_back(UOp::const_(dtypes::bool_, i >= 4));
  UOpPtr gate = UOp::make(Ops::VECTORIZE, dtypes::bool_.vec(16), std::move(lanes));
  UOpPtr v = UOp::make(Ops::LOAD, v16, {UOp::make(Ops::INDEX, in->dtype(), {in, UOp::index_const(-4), gate})});
  std::vector<UOpPtr> program{gate, v, UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, out->dtype(), {out, UOp::index_const(0)}), v})};
  KernelSignature sig{{{0, dtypes::float32, true}, {1, dtypes::float32, false}}, {}};
  std::string ir = LlvmRenderer().render("k_masked", program, sig);
  size_t call = ir.find("call <16 x float> @llvm.masked.load");
  ASSERT_NE(call, std::string::npos) << ir;
  size_t from = ir.find("ptr %", call) + 4, end = ir.find(',', from);
  std::string ptr = ir.substr(from, end - from);
  size_t def = ir.find("  " + ptr + " = ");
  ASSERT_NE(def, std::string::npos) << ptr << "\n" << ir;
  std::string line = ir.substr(def, ir.find('\n', def) - def);
  EXPECT_NE(line.find("getelementptr float"), std::string::npos) << line;
  EXPECT_EQ(line.find("inbounds"), std::string::npos) << line;
  ProgramSpec p("k_masked", ir, DeviceSpec{}, UOp::index_const(0));
  p.set_buffer_metadata({0, 1}, {0}, {1});
  auto prog = load_llvm_program(LlvmCompiler::get().compile(p), 0, false, false);
  std::vector<float> src(12), dst(16, -1.0f);
  for (int i = 0; i < 12; ++i) src[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  void* bufs[2] = {dst.data(), src.data()};
  prog->execute(bufs, nullptr, {1, 1, 1}, std::nullopt);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(dst[static_cast<size_t>(i)], i < 4 ? 0.0f : static_cast<float>(i - 3)) << i;
}

// The same kernels through both CPU backends give the same answers.
TEST(CpuBackends, LlvmAndClangAgree) {
  Tensor a = Tensor::rand({37, 53}, 1), b = Tensor::rand({53, 29}, 2);
  Tensor y = (a.matmul(b) + 1.0f).relu().exp().sum({1});
  auto run = [&](const std::string& compiler) {
    ExecutionPlan plan = Tensor::prepare({y}, {.compiler = compiler});
    plan.execute();
    return plan.output_buffer()->to_vector<float>();
  };
  std::vector<float> l = run("llvm"), c = run("clang");
  ASSERT_EQ(l.size(), c.size());
  for (size_t i = 0; i < l.size(); ++i) EXPECT_NEAR(l[i], c[i], 1e-5f * std::abs(c[i])) << i;
}

// DEBUG=6 and bench/spills.py read the machine code through assembly(): the same pipeline as the
// object code, printed with LLVM's comments (where loops are, what spills).
TEST_F(LlvmJit, AssemblyIsTheKernelsMachineCode) {
  std::string text = LlvmCompiler::get().assembly(add_one_kernel("k_asm"));
  EXPECT_NE(text.find("k_asm:"), std::string::npos) << text;
  EXPECT_EQ(text.find("k_asm:"), text.rfind("k_asm:")) << "one entry point:\n" << text;
}

#if defined(__x86_64__)
// The vector registers of `assembly` (x86) stored to the stack or read back from it.
size_t vector_spills(const std::string& assembly) {
  size_t n = 0;
  std::istringstream lines(assembly);
  for (std::string line; std::getline(lines, line);)
    n += (line.find("Spill") != std::string::npos || line.find("Reload") != std::string::npos) && line.find("mm") != std::string::npos;
  return n;
}

// The optimizer's register tile for a matmul (rows x vectors, accumulators and operands within
// the register file) spills nothing, in the code for each x86 width it plans for: 4 lanes and 8
// with 16 registers (SSE, AVX2), 16 with 32 (AVX-512). Compiled for that CPU, whatever this one is,
// on one thread, so every machine plans the same kernel.
TEST(LlvmCompiler, AMatmulsRegisterTileSpillsNothingAtEveryX86Width) {
  for (auto [lanes, cpu] : {std::pair{"4", "x86-64-v2"}, std::pair{"8", "x86-64-v3"}, std::pair{"16", "x86-64-v4"}}) {
    SCOPED_TRACE(std::string(lanes) + " lanes, " + cpu);
    test::ScopedTargetShape shape(lanes);
    PrepareOptions one_thread{.threads = 1, .compiler = "llvm"};
    Tensor a = Tensor::rand({192, 256}, 1), b = Tensor::rand({256, 320}, 2).realize();
    ExecutionPlan plan = Tensor::prepare({a.matmul(b)}, one_thread);
    const PreparedKernel* product = nullptr;
    for (const PreparedKernel* k : plan.prepared_kernels())
      if (k->kernel->entry_point.rfind("r_", 0) == 0) product = k;
    ASSERT_NE(product, nullptr);
    EXPECT_NE(product->kernel->opts.find("UPCAST"), std::string::npos) << "a register tile: " << product->kernel->opts;
    LlvmCompiler compiler(cpu);
    std::string text = compiler.assembly(ProgramSpec(product->kernel->entry_point, product->kernel->code, DeviceSpec{}, product->ast));
    EXPECT_TRUE(text.find("fmadd") != std::string::npos || text.find("mulps") != std::string::npos) << text;  // SSE has no FMA
    EXPECT_NE(text.find("Inner Loop Header"), std::string::npos) << text;
    EXPECT_EQ(vector_spills(text), 0u) << text;
    // At 16 registers that tile is 6 rows x 2 vectors (12 accumulators; opt/heuristic), its copies
    // listed row by row (codegen/expand): listed vector by vector, the six rows' broadcasts stay
    // live across both vectors (19 vectors) and the same tile spills.
    std::vector<Opt> chosen = parse_opts(product->kernel->opts);
    if (std::string(lanes) != "16") {
      int64_t rows_axis = -1;
      for (const Loop& l : kernel_loops(optimizer_input(product->ast)))
        if (!l.reduce && l.size == 192) rows_axis = l.axis;
      EXPECT_NE(std::find(chosen.begin(), chosen.end(), Opt{OptOp::UPCAST, rows_axis, 6}), chosen.end())
          << product->kernel->opts;
      KernelOptions listed = kernel_options(one_thread, compiler.target());
      listed.opts = chosen;
      listed.target.vector_registers = 0;  // copies in their first order
      EXPECT_GT(vector_spills(compiler.assembly(build_program(product->ast, LlvmRenderer(), listed))), 0u);
    }
    // The count sees spills where there must be some: 16 rows x 2 vectors, 32 accumulators in
    // 16 registers (or 32 with their operands).
    int64_t rows = -1, columns = -1;
    for (const Loop& l : kernel_loops(optimizer_input(product->ast))) {
      if (!l.reduce && l.size == 192) rows = l.axis;
      if (!l.reduce && l.size == 320) columns = l.axis;
    }
    ASSERT_TRUE(rows >= 0 && columns >= 0);
    int vector = std::stoi(lanes);
    KernelOptions crowded = kernel_options(one_thread, compiler.target());
    crowded.opts = std::vector<Opt>{{OptOp::UPCAST, columns, vector}, {OptOp::UPCAST, columns, 2}, {OptOp::UPCAST, rows, 16}};
    EXPECT_GT(vector_spills(compiler.assembly(build_program(product->ast, LlvmRenderer(), crowded))), 0u);
  }
}

// A matmul whose store adds a residual (a 1x1 convolution ending in a ResNet block's add): the
// residual varies with the rows and the vectors, but only the loads inside the reduction decide the
// copies' order, so its 6 x 2 tile at 8 lanes spills nothing either (counted with the epilogue, it
// kept the vector-by-vector order and ran 1.4-1.6x slower).
TEST(LlvmCompiler, AResidualAfterTheTileKeepsItsCopiesRowByRow) {
  test::ScopedTargetShape shape("8");
  PrepareOptions one_thread{.threads = 1, .compiler = "llvm"};
  Tensor a = Tensor::rand({192, 256}, 1), b = Tensor::rand({256, 320}, 2).realize(),
         r = Tensor::rand({192, 320}, 3).realize();
  ExecutionPlan plan = Tensor::prepare({a.matmul(b) + r}, one_thread);
  const PreparedKernel* product = nullptr;
  for (const PreparedKernel* k : plan.prepared_kernels())
    if (k->kernel->entry_point.rfind("r_", 0) == 0) product = k;
  ASSERT_NE(product, nullptr);
  EXPECT_NE(product->kernel->opts.find("UPCAST"), std::string::npos) << product->kernel->opts;
  LlvmCompiler compiler("x86-64-v3");
  std::string text =
      compiler.assembly(ProgramSpec(product->kernel->entry_point, product->kernel->code, DeviceSpec{}, product->ast));
  EXPECT_NE(text.find("Inner Loop Header"), std::string::npos) << text;
  EXPECT_EQ(vector_spills(text), 0u) << product->kernel->opts << "\n" << text;
}
#else
TEST(LlvmCompiler, AMatmulsRegisterTileSpillsNothingAtEveryX86Width) { GTEST_SKIP() << "the spill count reads x86 assembly"; }
TEST(LlvmCompiler, AResidualAfterTheTileKeepsItsCopiesRowByRow) {
  GTEST_SKIP() << "the spill count reads x86 assembly";
}
#endif

}  // namespace
}  // namespace lathe
