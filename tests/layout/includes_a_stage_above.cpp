// Compiled by the layout.stage_sees_no_stage_above test with the code generator's include root:
// the runtime is a stage above it, so this include must not be found.
#include "runtime/plan_impl.hpp"
