// The host steps behind CUSTOM nodes. A tensor graph names output k of a host step by a CUSTOM
// node whose arg is {step key, k, elements} and whose sources are the step's inputs, each stored:
// the output flat at its largest, a run's values packed at its front (Tensor::host_step views it
// at its symbolic shape). The registry keeps the step alive as long as the node made for it lives,
// and finds it from any CUSTOM node with that arg (a layout rule may rebuild the node over new
// sources).
#pragma once

#include <memory>
#include <vector>

#include "lathe/host_step.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// What a CUSTOM node stands for: output `output` of `step`, over inputs of these shapes.
struct HostStepNode {
  std::shared_ptr<const HostStep> step;
  uint64_t key = 0;  // one per step: the outputs of one step share it
  size_t output = 0;
  std::vector<SymShape> input_shapes;
};

/// A step's outputs as the plan holds them: its own, then, where it decides sizes, an int64 vector
/// of their values in the last run (what a graph reads to compute with a decided size: reading it
/// orders the computation after the step).
std::vector<HostOutput> held_outputs(const HostStep& step);

/// A key for a new step: every CUSTOM node of one step carries it.
uint64_t new_host_step_key();

/// The CUSTOM node for output `output` of `step` (of `elements` elements at its largest) over
/// `sources` (stored nodes of `input_shapes`), registering the step.
UOpPtr host_step_node(std::shared_ptr<const HostStep> step, uint64_t key, size_t output, int64_t elements, std::vector<UOpPtr> sources,
                      std::vector<SymShape> input_shapes);

/// The step a CUSTOM node names; throws InternalError if none is alive.
HostStepNode host_step_of(const UOp& node);

/// While it lives, host_parallel_for on this thread splits its work across `threads` (a plan
/// running a host step prepared for that many).
class HostThreadsScope {
 public:
  explicit HostThreadsScope(int threads);
  ~HostThreadsScope();
  HostThreadsScope(const HostThreadsScope&) = delete;
  HostThreadsScope& operator=(const HostThreadsScope&) = delete;

 private:
  int before_;
};

}  // namespace lathe
