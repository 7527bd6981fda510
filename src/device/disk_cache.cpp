#include "device/disk_cache.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

namespace lathe {

std::string cache_dir() {
  if (const char* d = std::getenv("LATHE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/lathe";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/lathe";
  return "";
}

std::string cache_key(std::string_view key) {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return name;
}

bool write_file_atomically(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Unique per process and thread: two threads may store the same entry at once.
  std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  bool written;
  {
    std::ofstream f(tmp, std::ios::binary);
    written = static_cast<bool>(f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())));
  }
  if (written) std::filesystem::rename(tmp, path, ec);
  if (!written || ec) std::filesystem::remove(tmp, ec);
  return written && !ec;
}

}  // namespace lathe
