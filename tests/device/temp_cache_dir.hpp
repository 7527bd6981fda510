// A test whose on-disk kernel cache is a fresh folder of its own (LATHE_CACHE_DIR), removed after it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace lathe::testing {

class TempCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lathe-cache-test-" + std::to_string(::getpid()));
    old_ = std::getenv("LATHE_CACHE_DIR") ? std::getenv("LATHE_CACHE_DIR") : "";
    setenv("LATHE_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (old_.empty()) unsetenv("LATHE_CACHE_DIR");
    else setenv("LATHE_CACHE_DIR", old_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }
  /// The compiled kernels stored so far.
  std::vector<std::filesystem::path> entries() const {
    std::vector<std::filesystem::path> out;
    if (std::filesystem::exists(dir_ / "kernels"))
      for (auto& f : std::filesystem::directory_iterator(dir_ / "kernels")) out.push_back(f.path());
    return out;
  }
  std::filesystem::path dir_;
  std::string old_;
};

}  // namespace lathe::testing
