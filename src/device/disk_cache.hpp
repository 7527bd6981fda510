// lathe's on-disk caches (compiled kernels, BEAM's choices): where they live, entry names, writes
// that another process or thread never sees half done, entries checked when read, and a bound on
// the compiled kernels' total size kept by evicting the least recently used.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe {

/// The directory of lathe's on-disk caches (LATHE_CACHE_DIR, else $XDG_CACHE_HOME/lathe, else
/// ~/.cache/lathe); empty when none can be used or LATHE_CACHE=0 turns them off.
std::string cache_dir();

/// A cache entry's name: the XXH3-64 of `key`, as 16 hex digits.
std::string cache_key(std::string_view key);

/// Writes `bytes` to `path` whole or not at all: into a file of its own (per process and thread),
/// renamed over `path`; creates the directories on the way. Returns false when it could not.
bool write_file_atomically(const std::string& path, std::string_view bytes);

/// A compiled kernel's entry: a magic tag, an XXH3-64 checksum of the payload, the payload; written
/// atomically. After writing, entries of the same folder beyond the bound (LATHE_CACHE_MB, default
/// 1024 MiB) are removed, least recently used first. Returns false when it could not be written.
bool write_cache_entry(const std::string& path, const std::vector<uint8_t>& payload);

/// The payload of the entry at `path`, when it exists and is whole (a truncated or corrupt entry
/// reads as missing, so it is rebuilt); marks the entry used (its modification time).
bool read_cache_entry(const std::string& path, std::vector<uint8_t>& payload);

/// A compiled kernel: the entry `kernels/<cache_key(identity + source)><extension>` when it is
/// whole, else what `build` makes, stored there (with no disk cache, just built). Every compiler
/// builds through it (`.so` from the C backend, `.o` from the JIT, `.cubin` from NVRTC).
std::vector<uint8_t> cached_kernel(const std::string& identity, const std::string& source, const std::string& extension,
                                   const std::function<std::vector<uint8_t>()>& build);

/// The bound on one folder of cache entries, in bytes (LATHE_CACHE_MB).
uint64_t cache_limit_bytes();

}  // namespace lathe
