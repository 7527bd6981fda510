// lathe's on-disk caches (compiled kernels, BEAM's choices): where they live, entry names, and
// writes that another process or thread never sees half done.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lathe {

/// The directory of lathe's on-disk caches (LATHE_CACHE_DIR, else $XDG_CACHE_HOME/lathe, else
/// ~/.cache/lathe); empty when none can be used.
std::string cache_dir();

/// A cache entry's name: the XXH3-64 of `key`, as 16 hex digits.
std::string cache_key(std::string_view key);

/// Writes `bytes` to `path` whole or not at all: into a file of its own (per process and thread),
/// renamed over `path`; creates the directories on the way. Returns false when it could not.
bool write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace lathe
