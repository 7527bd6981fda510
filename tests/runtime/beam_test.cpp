// BEAM search: the actions it picks give the unoptimized kernel's results, the choice is stored
// under the cache directory, and the next prepare takes it from there without searching.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

TEST(Beam, ChoosesByTimingStoresTheChoiceAndAgreesWithTheUnoptimizedKernel) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("lathe_beam_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const char* old = std::getenv("LATHE_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("LATHE_CACHE_DIR", dir.c_str(), 1);

  Tensor a = Tensor::rand({160, 96}, 1), b = Tensor::rand({96, 176}, 2);
  Tensor c = a.matmul(b);
  ExecutionPlan plain = Tensor::prepare({c}, PrepareOptions{.optimize = false, .threads = 1});
  plain.execute();
  std::vector<float> want = plain.output_buffer()->to_vector<float>();

  ExecutionPlan searched = Tensor::prepare({c}, PrepareOptions{.threads = 2, .beam = 2});
  searched.execute();
  std::vector<float> got = searched.output_buffer()->to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << i;

  size_t stored = 0;
  if (fs::exists(dir / "beam"))
    for (const auto& e : fs::directory_iterator(dir / "beam")) stored += e.is_regular_file();
  EXPECT_GE(stored, 1u);

  // Again: the stored choice, the same actions.
  ExecutionPlan again = Tensor::prepare({c}, PrepareOptions{.threads = 2, .beam = 2});
  ASSERT_EQ(again.prepared_kernels().size(), searched.prepared_kernels().size());
  for (size_t i = 0; i < again.prepared_kernels().size(); ++i)
    EXPECT_EQ(again.prepared_kernels()[i]->kernel->opts, searched.prepared_kernels()[i]->kernel->opts);

  if (old) ::setenv("LATHE_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("LATHE_CACHE_DIR");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lathe
