// Rendered kernels on disk: the ProgramSpec the codegen pipeline made for a kernel AST, kept in
// LATHE_CACHE_DIR/programs so that a later process skips the pipeline (a warm prepare then costs
// cache reads and loads, not codegen). An entry holds the whole AST and settings it was made for
// and is used only when both match exactly; it is keyed by lathe's own sources too, so a build that
// would render differently never reads it.
#pragma once

#include <optional>
#include <string>

#include "lathe/program.hpp"

namespace lathe {

/// The program stored for `ast` under `settings` (device, backend, compiler identity, codegen
/// options), with `ast` as its AST; none when there is none, it is damaged, or the cache is off.
std::optional<ProgramSpec> read_program(const UOpPtr& ast, const std::string& settings);

/// Stores `spec`, made from `ast` under `settings` (best effort: a failed write is not an error).
void write_program(const UOpPtr& ast, const std::string& settings, const ProgramSpec& spec);

}  // namespace lathe
