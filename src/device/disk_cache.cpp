#include "device/disk_cache.hpp"
#include "support/settings.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace lathe {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'L', 'A', 'T', 'H', 'E', 'K', 'N', '2'};
constexpr size_t kHeader = 16;  // magic, checksum

// Bytes written to each folder since it was last measured: the folder is listed again (and
// trimmed) only when they could have taken it past the bound.
struct FolderUse {
  bool measured = false;
  uint64_t bytes = 0;
};

std::mutex& folders_mu() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, FolderUse>& folders() {
  static std::map<std::string, FolderUse> f;
  return f;
}

// Removes the least recently used entries until the folder holds at most 90% of the bound;
// returns the bytes left. Entries another process removes meanwhile are skipped.
uint64_t trim(const fs::path& folder, uint64_t limit) {
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    std::error_code e1, e2;
    if (!e.is_regular_file(e1) || e.path().filename().string().find(".tmp") != std::string::npos) continue;
    uint64_t size = e.file_size(e1);
    fs::file_time_type t = e.last_write_time(e2);
    if (e1 || e2) continue;
    entries.push_back({t, size, e.path()});
    total += size;
  }
  if (total <= limit) return total;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  uint64_t keep = limit / 10 * 9;
  for (const Entry& e : entries) {
    if (total <= keep) break;
    if (fs::remove(e.path, ec) || !fs::exists(e.path, ec)) total -= std::min(total, e.size);
  }
  return total;
}

}  // namespace

std::string cache_dir() {
  if (settings::text("LATHE_CACHE") == "0") return "";
  if (std::optional<std::string> d = settings::text("LATHE_CACHE_DIR")) return *d;
  if (std::optional<std::string> x = settings::text("XDG_CACHE_HOME")) return *x + "/lathe";
  if (std::optional<std::string> h = settings::text("HOME")) return *h + "/.cache/lathe";
  return "";
}

std::string cache_key(std::string_view key) {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return name;
}

bool write_file_atomically(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  // Unique per process and thread: two threads may store the same entry at once.
  std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  bool written;
  {
    std::ofstream f(tmp, std::ios::binary);
    written = static_cast<bool>(f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())));
  }
  if (written) fs::rename(tmp, path, ec);
  if (!written || ec) fs::remove(tmp, ec);
  return written && !ec;
}

std::vector<uint8_t> cached_kernel(const std::string& identity, const std::string& source, const std::string& extension,
                                   const std::function<std::vector<uint8_t>()>& build) {
  std::string dir = cache_dir();
  if (dir.empty()) return build();
  std::string path = dir + "/kernels/" + cache_key(identity + "\n" + source) + extension;
  std::vector<uint8_t> bytes;
  if (read_cache_entry(path, bytes)) return bytes;
  bytes = build();
  write_cache_entry(path, bytes);
  return bytes;
}

uint64_t cache_limit_bytes() {
  int64_t v = settings::number("LATHE_CACHE_MB", -1);
  if (v < 0) v = 1024;  // not a count of MiB: the default
  return static_cast<uint64_t>(v) << 20;
}

bool write_cache_entry(const std::string& path, const std::vector<uint8_t>& payload) {
  uint64_t sum = XXH3_64bits(payload.data(), payload.size());
  std::string entry(kMagic, 8);
  entry.append(reinterpret_cast<const char*>(&sum), 8);
  entry.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (!write_file_atomically(path, entry)) return false;
  uint64_t limit = cache_limit_bytes();
  std::string folder = fs::path(path).parent_path().string();
  std::lock_guard<std::mutex> lock(folders_mu());
  FolderUse& use = folders()[folder];
  use.bytes += entry.size();
  if (!use.measured || use.bytes > limit) {
    use.bytes = trim(folder, limit);
    use.measured = true;
  }
  return true;
}

bool read_cache_entry(const std::string& path, std::vector<uint8_t>& payload) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::vector<uint8_t> raw{std::istreambuf_iterator<char>(f), {}};
  if (raw.size() < kHeader || std::memcmp(raw.data(), kMagic, 8) != 0) return false;
  uint64_t sum;
  std::memcpy(&sum, raw.data() + 8, 8);
  if (XXH3_64bits(raw.data() + kHeader, raw.size() - kHeader) != sum) return false;
  payload.assign(raw.begin() + kHeader, raw.end());
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // used now: evicted last
  return true;
}

}  // namespace lathe
