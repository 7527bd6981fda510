#include "lathe/program.hpp"

#include "ir/eval.hpp"

namespace lathe {

bool is_launch_index(const std::string& name) {
  for (const char* l : kLaunchIndices)
    if (name == l) return true;
  return false;
}

std::chrono::nanoseconds Program::execute_timed(void* const* buffers, const int64_t* vals, const LaunchSize& global,
                                               const std::optional<LaunchSize>& local) const {
  auto t0 = std::chrono::steady_clock::now();
  execute(buffers, vals, global, local);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
}

WorkCount& WorkCount::operator+=(const WorkCount& o) {
  ops += o.ops;
  index_ops += o.index_ops;
  lds += o.lds;
  mem += o.mem;
  return *this;
}

WorkCount Estimates::at(const std::unordered_map<std::string, int64_t>& vars) const {
  auto value = [&](const UOpPtr& e) { return e ? evaluate_int(e, vars) : 0; };
  return {value(ops), value(index_ops), value(lds), value(mem)};
}

ProgramSpec::ProgramSpec(std::string name_, std::string src_, DeviceSpec device_, UOpPtr ast_)
    : name(std::move(name_)), src(std::move(src_)), device(std::move(device_)), ast(std::move(ast_)) {}

void ProgramSpec::add_var(Variable var) { vars.push_back(std::move(var)); }

void ProgramSpec::set_work_sizes(LaunchSize global, LaunchSize local) {
  global_size = global;
  local_size = local;
}

void ProgramSpec::set_var_names(std::vector<std::string> names) { var_names = std::move(names); }

void ProgramSpec::set_buffer_metadata(std::vector<size_t> globals_, std::vector<size_t> outs_, std::vector<size_t> ins_) {
  globals = std::move(globals_);
  outs = std::move(outs_);
  ins = std::move(ins_);
  buf_count = globals.size();
}

CompiledSpec CompiledSpec::from_source(std::string name, std::string src, UOpPtr ast, size_t buf_count) {
  return from_source_with_sizes(std::move(name), std::move(src), std::move(ast), std::nullopt, std::nullopt, buf_count);
}

CompiledSpec CompiledSpec::from_bytes(std::string name, std::vector<uint8_t> bytes, UOpPtr ast) {
  CompiledSpec c;
  c.name = std::move(name);
  c.bytes = std::move(bytes);
  c.ast = std::move(ast);
  return c;
}

CompiledSpec CompiledSpec::from_source_with_sizes(std::string name, std::string src, UOpPtr ast,
                                                  std::optional<LaunchSize> global_size,
                                                  std::optional<LaunchSize> local_size, size_t buf_count) {
  CompiledSpec c;
  c.name = std::move(name);
  c.src = std::move(src);
  c.ast = std::move(ast);
  c.global_size = global_size;
  c.local_size = local_size;
  c.buf_count = buf_count;
  return c;
}

}  // namespace lathe
