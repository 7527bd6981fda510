// BEAM search: the actions it picks give the unoptimized kernel's results, the choice is stored
// under the cache directory, and the next prepare takes it from there without searching.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

namespace fs = std::filesystem;

// LATHE_CACHE_DIR pointed at a fresh folder for the test's lifetime, restored and removed after
// (also when an assertion ends the test early).
class ScratchCache {
 public:
  ScratchCache() : dir_(fs::temp_directory_path() / ("lathe_beam_test_" + std::to_string(::getpid()))) {
    if (const char* old = std::getenv("LATHE_CACHE_DIR")) old_ = old;
    fs::remove_all(dir_);
    ::setenv("LATHE_CACHE_DIR", dir_.c_str(), 1);
  }
  ~ScratchCache() {
    if (old_) ::setenv("LATHE_CACHE_DIR", old_->c_str(), 1);
    else ::unsetenv("LATHE_CACHE_DIR");
    fs::remove_all(dir_);
  }
  std::vector<fs::path> stored() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_ / "beam"))
      for (const auto& e : fs::directory_iterator(dir_ / "beam"))
        if (e.is_regular_file()) out.push_back(e.path());
    return out;
  }

 private:
  fs::path dir_;
  std::optional<std::string> old_;
};

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Beam, ChoosesByTimingStoresTheChoiceAndAgreesWithTheUnoptimizedKernel) {
  ScratchCache cache;
  // Large enough (~30 MFLOP) to take well over BEAM's 20 us floor on any machine, so it is searched.
  Tensor a = Tensor::rand({256, 192}, 1), b = Tensor::rand({192, 320}, 2);
  Tensor c = a.matmul(b);
  ExecutionPlan plain = Tensor::prepare({c}, PrepareOptions{.optimize = false, .threads = 1});
  plain.execute();
  std::vector<float> want = plain.output_buffer()->to_vector<float>();
  ExecutionPlan heuristic = Tensor::prepare({c}, PrepareOptions{.threads = 2});
  ASSERT_EQ(heuristic.prepared_kernels().size(), 1u);
  const std::string heuristic_opts = heuristic.prepared_kernels()[0]->kernel->opts;

  size_t compiles = kernel_cache_stats().compiles;
  ExecutionPlan searched = Tensor::prepare({c}, PrepareOptions{.threads = 2, .beam = 2});
  EXPECT_GT(kernel_cache_stats().compiles, compiles + 2) << "no search ran: only the start candidates were compiled";
  searched.execute();
  EXPECT_ALLCLOSE(searched.output_buffer()->to_vector<float>(), want, 1e-4, 1e-4);

  // One choice stored per kernel, the one the plan got; the next prepare takes it as it is: here
  // a choice written by hand that differs from the heuristics', so what the plan gets can only
  // have come from the file.
  std::vector<fs::path> stored = cache.stored();
  ASSERT_EQ(stored.size(), searched.prepared_kernels().size());
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(read_line(stored[0]), searched.prepared_kernels()[0]->kernel->opts);
  ASSERT_NE(heuristic_opts, "THREAD(0, 2)");
  std::ofstream(stored[0]) << "THREAD(0, 2)\n";
  ExecutionPlan again = Tensor::prepare({c}, PrepareOptions{.threads = 2, .beam = 2});
  ASSERT_EQ(again.prepared_kernels().size(), 1u);
  EXPECT_EQ(again.prepared_kernels()[0]->kernel->opts, "THREAD(0, 2)");
  again.execute();
  EXPECT_ALLCLOSE(again.output_buffer()->to_vector<float>(), want, 1e-4, 1e-4);

  // A stored choice that no longer fits the kernel is searched again and replaced, not an error.
  std::ofstream(stored[0]) << "UPCAST(0, 7)\n";  // 256 rows are no multiple of 7
  ExecutionPlan refit = Tensor::prepare({c}, PrepareOptions{.threads = 2, .beam = 2});
  refit.execute();
  EXPECT_ALLCLOSE(refit.output_buffer()->to_vector<float>(), want, 1e-4, 1e-4);
  EXPECT_EQ(read_line(stored[0]), refit.prepared_kernels()[0]->kernel->opts);
  EXPECT_NE(read_line(stored[0]), "UPCAST(0, 7)");
}

}  // namespace
}  // namespace lathe
