// What this build of lathe is made of, as the code says it (`lathe info` prints it).
#pragma once

#include <string>
#include <vector>

namespace lathe {

/// The code generator's steps, in the order a kernel goes through them (codegen/pipeline).
std::vector<std::string> pipeline_steps();

/// An environment variable lathe reads: its name, when it is read, what it means.
struct EnvironmentVariable {
  std::string name;
  std::string when;
  std::string meaning;
};

/// Every environment variable lathe reads (PrepareOptions overrides those a plan can set).
std::vector<EnvironmentVariable> environment_variables();

/// Every backend this build has, as "DEVICE/compiler" ("CPU/llvm", "CPU/clang", ...): what
/// PrepareOptions::compiler may name.
std::vector<std::string> backend_names();

/// The default device (LATHE_DEVICE) as this process finds it: "CPU"; for a GPU its name and
/// architecture, or why it cannot be used ("CUDA:0: unavailable: NVIDIA's driver library ...").
std::string device_status();

/// The machine a prepare with default options plans for, in words: the default device's backend's
/// Target with LATHE_TARGET_SHAPE and LATHE_THREADS applied (float32 lanes, which are also the
/// convolutions' channel blocks; registers; caches; threads).
std::string planned_target();

}  // namespace lathe
