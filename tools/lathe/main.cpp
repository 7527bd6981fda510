// The `lathe` command line.
#include <CLI/CLI.hpp>

#include <iostream>

#include "lathe/lathe.hpp"

namespace {

int run_info() {
  std::cout << "lathe " << lathe::kVersion << "\n";
  std::cout << "ops: " << lathe::kNumOps << "\n";
  std::cout << "dtypes:";
  for (lathe::DType d : lathe::dtypes::all()) std::cout << " " << d.name();
  std::cout << "\n";
  std::cout << "live UOps: " << lathe::live_uop_count() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lathe: a C++20 ML compiler in the tinygrad tradition"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Print the version and what this build supports");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return run_info();
  } catch (const lathe::Error& e) {
    std::cerr << "lathe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
