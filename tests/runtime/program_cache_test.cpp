// Rendered kernels on disk: a stored ProgramSpec reads back whole for exactly the AST and settings
// it was made for, a damaged entry reads as missing, and a kernel built from a stored program is
// the kernel the pipeline makes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "codegen/pipeline.hpp"
#include "device/backend.hpp"
#include "device/disk_cache.hpp"
#include "device/temp_cache_dir.hpp"
#include "lathe/lathe.hpp"
#include "runtime/compile_kernel.hpp"
#include "runtime/program_cache.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

namespace fs = std::filesystem;
using test::data;
using test::f32;

class ProgramCache : public testing::TempCacheDir {
 protected:
  std::vector<fs::path> programs() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_ / "programs"))
      for (auto& f : fs::directory_iterator(dir_ / "programs")) out.push_back(f.path());
    return out;
  }
};

// A threaded reduction over a symbolic length: variables, a launch size and estimates that read n.
UOpPtr symbolic_ast() {
  Variable n("n", 1, 4096);
  Tensor x = f32(data(4096 * 64, 1), {4096, 64});
  Tensor y = (x.shrink({{0, n.bind(1000)}, {0, 64}}).exp() * 2.0f).sum({0});
  return Tensor::prepare({y}, {.threads = 2, .verify = true}).prepared_kernels().at(0)->ast;  // stores no program
}

ProgramSpec built(const UOpPtr& ast) {
  KernelOptions ko;
  ko.target.threads = 2;
  return build_program(ast, find_backend(DeviceSpec{}).renderer(), ko);
}

TEST_F(ProgramCache, AStoredProgramReadsBackWhole) {
  UOpPtr ast = symbolic_ast();
  ProgramSpec spec = built(ast);
  ASSERT_FALSE(spec.vars.empty());
  ASSERT_TRUE(spec.estimates.ops);
  spec.local_size = LaunchSize{4, 2, 1};        // every field, set or not, comes back
  spec.shared_scratch = !spec.shared_scratch;
  write_program(ast, "CPU | settings A", spec);
  std::optional<ProgramSpec> got = read_program(ast, "CPU | settings A");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->ast, spec.ast) << "the lowered graph it was rendered from";
  EXPECT_EQ(got->name, spec.name);
  EXPECT_EQ(got->src, spec.src);
  EXPECT_EQ(got->opts, spec.opts);
  EXPECT_EQ(got->global_size, spec.global_size);
  EXPECT_EQ(got->local_size, spec.local_size);
  ASSERT_EQ(got->vars.size(), spec.vars.size());
  for (size_t i = 0; i < spec.vars.size(); ++i) {
    EXPECT_EQ(got->vars[i].name(), spec.vars[i].name());
    EXPECT_EQ(got->vars[i].min(), spec.vars[i].min());
    EXPECT_EQ(got->vars[i].max(), spec.vars[i].max());
  }
  EXPECT_EQ(got->var_names, spec.var_names);
  EXPECT_EQ(got->globals, spec.globals);
  EXPECT_EQ(got->outs, spec.outs);
  EXPECT_EQ(got->ins, spec.ins);
  EXPECT_EQ(got->buf_count, spec.buf_count);
  EXPECT_EQ(got->shared_scratch, spec.shared_scratch);
  EXPECT_EQ(got->estimates.ops, spec.estimates.ops);  // interned: the same expressions
  EXPECT_EQ(got->estimates.index_ops, spec.estimates.index_ops);
  EXPECT_EQ(got->estimates.lds, spec.estimates.lds);
  EXPECT_EQ(got->estimates.mem, spec.estimates.mem);
  EXPECT_EQ(got->estimates.at({{"n", 77}}).mem, spec.estimates.at({{"n", 77}}).mem);
}

TEST_F(ProgramCache, OnlyTheSameAstAndSettingsHit) {
  UOpPtr ast = symbolic_ast();
  UOpPtr other = Tensor::prepare({f32(data(12, 3), {3, 4}) + 1.0f}, {.verify = true}).prepared_kernels().at(0)->ast;
  write_program(ast, "CPU | settings A", built(ast));
  EXPECT_FALSE(read_program(ast, "CPU | settings B"));
  EXPECT_FALSE(read_program(other, "CPU | settings A"));
  EXPECT_TRUE(read_program(ast, "CPU | settings A"));
}

TEST_F(ProgramCache, DamagedEntriesReadAsMissing) {
  UOpPtr ast = symbolic_ast();
  write_program(ast, "s", built(ast));
  ASSERT_EQ(programs().size(), 1u);
  fs::path entry = programs()[0];
  std::vector<uint8_t> whole;
  ASSERT_TRUE(read_cache_entry(entry.string(), whole));
  // Whole entries (their checksums right) whose payload is cut short or altered after its key.
  for (size_t cut : {size_t{0}, size_t{4}, whole.size() / 2, whole.size() - 1}) {
    ASSERT_TRUE(write_cache_entry(entry.string(), std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<ptrdiff_t>(cut))));
    EXPECT_FALSE(read_program(ast, "s")) << "cut at " << cut;
  }
  std::vector<uint8_t> altered = whole;
  altered[whole.size() - 30] ^= 0xff;  // inside the estimates
  ASSERT_TRUE(write_cache_entry(entry.string(), altered));
  std::optional<ProgramSpec> got;
  EXPECT_NO_THROW(got = read_program(ast, "s"));
  // A file cut short on disk (its checksum wrong).
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << "LATHEKN2";
  EXPECT_FALSE(read_program(ast, "s"));
  write_program(ast, "s", built(ast));
  EXPECT_TRUE(read_program(ast, "s")) << "rebuilt and replaced";
}

TEST_F(ProgramCache, OffWritesNothing) {
  setenv("LATHE_CACHE", "0", 1);
  UOpPtr ast = symbolic_ast();
  write_program(ast, "s", built(ast));
  EXPECT_FALSE(read_program(ast, "s"));
  unsetenv("LATHE_CACHE");
  EXPECT_TRUE(programs().empty());
}

// What a second process sees: the kernel cache empty, the program on disk. Its kernel is the one
// the pipeline made (same source, actions, launch and estimates) and computes the same values; a
// verifying compile neither reads nor writes stored programs.
TEST_F(ProgramCache, AKernelFromAStoredProgramIsThePipelinesKernel) {
  Tensor a = f32(data(37 * 29, 4), {37, 29}), b = f32(data(29 * 31, 5), {29, 31});
  Tensor y = (a.matmul(b) + 1.0f).relu().sum({1});
  auto run = [&](bool verify) {
    ExecutionPlan plan = Tensor::prepare({y}, {.verify = verify});
    plan.execute();
    std::vector<std::shared_ptr<CachedKernel>> kernels;
    for (const PreparedKernel* k : plan.prepared_kernels()) kernels.push_back(k->kernel);
    return std::make_pair(kernels, plan.output_buffer()->to_vector<float>());
  };
  clear_kernel_cache();
  run(true);
  EXPECT_TRUE(programs().empty()) << "a verifying compile stores nothing";
  clear_kernel_cache();
  auto [made, want] = run(false);
  EXPECT_EQ(programs().size(), made.size());
  auto stored = snapshot("programs");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // file times are coarse
  clear_kernel_cache();
  auto [read, got] = run(false);
  expect_read_not_rewritten(stored, snapshot("programs"));
  EXPECT_EQ(got, want);
  ASSERT_EQ(read.size(), made.size());
  for (size_t i = 0; i < made.size(); ++i) {
    const CachedKernel& m = *made[i];
    const CachedKernel& r = *read[i];
    EXPECT_NE(&m, &r) << "built again, not shared through the kernel cache";
    EXPECT_EQ(r.code, m.code);
    EXPECT_EQ(r.entry_point, m.entry_point);
    EXPECT_EQ(r.opts, m.opts);
    EXPECT_EQ(r.var_names, m.var_names);
    EXPECT_EQ(r.outs, m.outs);
    EXPECT_EQ(r.ins, m.ins);
    EXPECT_EQ(r.host_parallel_safe, m.host_parallel_safe);
    EXPECT_EQ(r.estimates.at().ops, m.estimates.at().ops);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(r.global_size[d], m.global_size[d]);
  }
}

}  // namespace
}  // namespace lathe
