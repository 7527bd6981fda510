// A test whose on-disk kernel cache is a fresh folder of its own (LATHE_CACHE_DIR), removed after it.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lathe::testing {

class TempCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lathe-cache-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);  // a folder left by a crashed run under a reused pid
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
  /// Each entry of `folder` (under the cache) by name: its inode, which a rewrite changes (entries
  /// are replaced by rename), and its modification time, which a read moves forward.
  struct Seen {
    ino_t inode;
    std::filesystem::file_time_type time;
  };
  std::map<std::string, Seen> snapshot(const std::string& folder) const {
    std::map<std::string, Seen> out;
    if (!std::filesystem::exists(dir_ / folder)) return out;
    for (auto& f : std::filesystem::directory_iterator(dir_ / folder)) {
      struct stat st {};
      ::stat(f.path().c_str(), &st);
      out[f.path().filename().string()] = {st.st_ino, f.last_write_time()};
    }
    return out;
  }
  /// Expects `after` to hold the entries of `before`, none rewritten, each read again.
  static void expect_read_not_rewritten(const std::map<std::string, Seen>& before, const std::map<std::string, Seen>& after) {
    ASSERT_EQ(after.size(), before.size()) << "nothing new written";
    for (const auto& [name, seen] : before) {
      ASSERT_TRUE(after.count(name)) << name;
      EXPECT_EQ(after.at(name).inode, seen.inode) << name << " was rewritten, not read";
      EXPECT_GT(after.at(name).time, seen.time) << name << " was not read (used) again";
    }
  }
  std::filesystem::path dir_;
  std::string old_;
};

}  // namespace lathe::testing
