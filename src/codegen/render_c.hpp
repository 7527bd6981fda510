// The C renderer: a kernel AST becomes a C function with one uniform entry point,
//   void <name>(void** bufs, const long long* vals)
// so the runtime calls every kernel the same way. Buffers arrive in slot order; variables in
// var_names order, with the core id last when the kernel is split across threads.
#pragma once

#include "lathe/program.hpp"

namespace lathe {

struct CRenderOptions {
  /// Split the outermost loop across this many threads (1: not threaded).
  int threads = 1;
};

/// Renders `ast` (SINK of STOREs, already simplified) as C.
ProgramSpec render_c(const UOpPtr& ast, const std::string& name, const CRenderOptions& options = {});

/// How many threads a kernel over `ast` should use on a machine with `max_threads` cores:
/// splitting pays only for enough work.
int choose_threads(const UOpPtr& ast, int max_threads);

}  // namespace lathe
