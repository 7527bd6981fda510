// The on-disk kernel cache: entries checked when read, written whole by concurrent processes,
// bounded by LATHE_CACHE_MB with the least recently used evicted, shared between processes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <fstream>

#include "device/disk_cache.hpp"
#include "device/temp_cache_dir.hpp"

namespace lathe {
namespace {

namespace fs = std::filesystem;

class DiskCache : public testing::TempCacheDir {
 protected:
  void TearDown() override {
    TempCacheDir::TearDown();
    unsetenv("LATHE_CACHE_MB");
  }
};

std::vector<uint8_t> payload(size_t n, uint8_t fill) { return std::vector<uint8_t>(n, fill); }

TEST_F(DiskCache, EntriesReadBackWhole) {
  std::string path = (dir_ / "kernels" / "a.o").string();
  ASSERT_TRUE(write_cache_entry(path, payload(1000, 7)));
  std::vector<uint8_t> back;
  ASSERT_TRUE(read_cache_entry(path, back));
  EXPECT_EQ(back, payload(1000, 7));
  EXPECT_TRUE(write_cache_entry((dir_ / "kernels" / "empty.o").string(), {}));
  EXPECT_TRUE(read_cache_entry((dir_ / "kernels" / "empty.o").string(), back));
  EXPECT_TRUE(back.empty());
}

TEST_F(DiskCache, MissingTruncatedAndCorruptEntriesReadAsMissing) {
  std::string path = (dir_ / "kernels" / "a.o").string();
  std::vector<uint8_t> back;
  EXPECT_FALSE(read_cache_entry(path, back));
  ASSERT_TRUE(write_cache_entry(path, payload(1000, 7)));
  fs::resize_file(path, 500);
  EXPECT_FALSE(read_cache_entry(path, back));
  ASSERT_TRUE(write_cache_entry(path, payload(1000, 7)));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(600);
    f.put(8);
  }
  EXPECT_FALSE(read_cache_entry(path, back));
  std::ofstream(path, std::ios::trunc) << "LATHE";  // shorter than the header
  EXPECT_FALSE(read_cache_entry(path, back));
}

// With a 1 MiB bound and 300 KiB entries, each write past the bound removes the least recently
// used (written or read) until the folder is back under it.
TEST_F(DiskCache, EvictionKeepsTheBoundAndTheRecentlyUsed) {
  setenv("LATHE_CACHE_MB", "1", 1);
  auto entry = [&](const char* name) { return (dir_ / "kernels" / name).string(); };
  auto total = [&] {
    uintmax_t sum = 0;
    for (auto& f : fs::directory_iterator(dir_ / "kernels")) sum += f.file_size();
    return sum;
  };
  std::vector<uint8_t> back;
  // Written a minute, 50 s and 40 s ago (file times are coarse: entries written in one go may
  // carry one timestamp, and this test is about their order).
  int age = 60;
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(write_cache_entry(entry(name), payload(300 << 10, 1)));
    fs::last_write_time(entry(name), fs::file_time_type::clock::now() - std::chrono::seconds(age));
    age -= 10;
  }
  ASSERT_TRUE(read_cache_entry(entry("a"), back));  // a is now the most recently used
  ASSERT_TRUE(write_cache_entry(entry("d"), payload(300 << 10, 2)));
  EXPECT_LE(total(), uintmax_t{1} << 20);
  EXPECT_TRUE(fs::exists(entry("a")));
  EXPECT_FALSE(fs::exists(entry("b"))) << "the least recently used goes first";
  EXPECT_TRUE(fs::exists(entry("d")));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(write_cache_entry(entry(("e" + std::to_string(i)).c_str()), payload(100 << 10, 3)));
    EXPECT_LE(total(), uintmax_t{1} << 20) << "after entry " << i;
  }
  EXPECT_TRUE(fs::exists(entry("e19")));
}

TEST_F(DiskCache, BoundAndSwitchFromTheEnvironment) {
  setenv("LATHE_CACHE_MB", "64", 1);
  EXPECT_EQ(cache_limit_bytes(), uint64_t{64} << 20);
  setenv("LATHE_CACHE_MB", "lots", 1);
  EXPECT_EQ(cache_limit_bytes(), uint64_t{1024} << 20) << "not a number: the default";
  std::string old = std::getenv("LATHE_CACHE_DIR") ? std::getenv("LATHE_CACHE_DIR") : "";
  setenv("LATHE_CACHE_DIR", dir_.c_str(), 1);
  EXPECT_EQ(cache_dir(), dir_.string());
  setenv("LATHE_CACHE", "0", 1);
  EXPECT_EQ(cache_dir(), "");
  unsetenv("LATHE_CACHE");
  if (old.empty()) unsetenv("LATHE_CACHE_DIR");
  else setenv("LATHE_CACHE_DIR", old.c_str(), 1);
}

// Two processes writing one entry over and over while one of them reads it: every read finds
// either nothing or a whole entry.
TEST_F(DiskCache, TwoProcessesWritingOneEntryAtOnce) {
  std::string path = (dir_ / "kernels" / "shared.o").string();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = true;
    for (int i = 0; i < 300; ++i) ok &= write_cache_entry(path, payload(64 << 10, 5));
    ::_exit(ok ? 0 : 1);
  }
  int whole = 0;
  for (int i = 0; i < 300; ++i) {
    EXPECT_TRUE(write_cache_entry(path, payload(64 << 10, 5)));
    std::vector<uint8_t> back;
    if (read_cache_entry(path, back)) {
      EXPECT_EQ(back, payload(64 << 10, 5));
      ++whole;
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(whole, 300) << "an entry, once written, is always there whole";
  for (auto& f : fs::directory_iterator(dir_ / "kernels")) EXPECT_EQ(f.path().filename(), "shared.o") << "no temporary file left";
}

#ifdef LATHE_CLI
// The command line run twice: the second process renders and compiles nothing (every kernel's
// program and object code are cache hits, each entry read again), and gives the same output.
TEST_F(DiskCache, HitsAcrossProcesses) {
  std::string run = "LATHE_VERIFY=0 LATHE_CACHE_DIR=" + dir_.string() + " " + LATHE_CLI + " run --iters 1 2>&1";
  auto capture = [](const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
    return out;
  };
  std::string first = capture(run);
  auto kernels = snapshot("kernels"), programs = snapshot("programs");
  ASSERT_FALSE(kernels.empty()) << first;
  ASSERT_FALSE(programs.empty()) << first;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // file times are coarse
  std::string second = capture(run);
  SCOPED_TRACE(second);
  expect_read_not_rewritten(kernels, snapshot("kernels"));
  expect_read_not_rewritten(programs, snapshot("programs"));
  auto probs = [](const std::string& out) { return out.substr(out.find("output probs")); };
  EXPECT_EQ(probs(first).substr(0, probs(first).find('\n')), probs(second).substr(0, probs(second).find('\n')));
}
#endif

}  // namespace
}  // namespace lathe
