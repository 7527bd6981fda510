#include "runtime/program_cache.hpp"

#include "device/disk_cache.hpp"
#include "ir/serialize.hpp"
#include "lathe/error.hpp"
#include "source_hash.hpp"

namespace lathe {
namespace {

constexpr const char* kFormat = "lathe program 1";

// What an entry is for, whole: read back and compared, so equal names never mean equal kernels.
std::string identity(const UOpPtr& ast, const std::string& settings) {
  return std::string(kFormat) + "\n" + LATHE_SOURCE_HASH + "\n" + settings + "\n" + serialize_graph({ast});
}

std::string entry_path(const std::string& dir, const std::string& id) { return dir + "/programs/" + cache_key(id) + ".prog"; }

void write_size(ByteWriter& w, const std::optional<LaunchSize>& s) {
  w.num<uint8_t>(s.has_value());
  if (s)
    for (size_t n : *s) w.num<uint64_t>(n);
}

std::optional<LaunchSize> read_size(ByteReader& r) {
  if (!r.num<uint8_t>()) return std::nullopt;
  LaunchSize s{};
  for (size_t& n : s) n = r.num<uint64_t>();
  return s;
}

void write_slots(ByteWriter& w, const std::vector<size_t>& v) { w.ints(std::vector<int64_t>(v.begin(), v.end())); }

std::vector<size_t> read_slots(ByteReader& r) {
  std::vector<int64_t> v = r.ints();
  return std::vector<size_t>(v.begin(), v.end());
}

}  // namespace

std::optional<ProgramSpec> read_program(const UOpPtr& ast, const std::string& settings) {
  std::string dir = cache_dir();
  if (dir.empty()) return std::nullopt;
  std::string id = identity(ast, settings);
  std::vector<uint8_t> payload;
  if (!read_cache_entry(entry_path(dir, id), payload)) return std::nullopt;
  try {
    ByteReader r{std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size())};
    if (r.str() != id) return std::nullopt;  // another kernel under the same name
    ProgramSpec spec;
    spec.name = r.str();
    spec.src = r.str();
    spec.opts = r.str();
    spec.global_size = read_size(r);
    spec.local_size = read_size(r);
    for (uint32_t n = r.num<uint32_t>(); n > 0; --n) {
      std::string name = r.str();
      int64_t lo = r.num<int64_t>(), hi = r.num<int64_t>();
      spec.add_var(Variable(name, lo, hi));
    }
    uint32_t count = r.num<uint32_t>();
    r.need(count);  // at least a byte each: a damaged count is an Error, not an allocation
    std::vector<std::string> names(count);
    for (std::string& n : names) n = r.str();
    spec.set_var_names(std::move(names));
    std::vector<size_t> globals = read_slots(r), outs = read_slots(r), ins = read_slots(r);
    spec.set_buffer_metadata(std::move(globals), std::move(outs), std::move(ins));
    spec.shared_scratch = r.num<uint8_t>() != 0;
    std::vector<UOpPtr> g = deserialize_graph(r.str());
    if (g.size() != 5 || !r.done()) return std::nullopt;
    spec.ast = g[0];
    spec.estimates = Estimates{g[1], g[2], g[3], g[4]};
    return spec;
  } catch (const Error&) {
    return std::nullopt;  // damaged in a way the checksum did not catch: made again and replaced
  }
}

void write_program(const UOpPtr& ast, const std::string& settings, const ProgramSpec& spec) {
  std::string dir = cache_dir();
  if (dir.empty()) return;
  std::string id = identity(ast, settings);
  ByteWriter w;
  w.str(id);
  w.str(spec.name);
  w.str(spec.src);
  w.str(spec.opts);
  write_size(w, spec.global_size);
  write_size(w, spec.local_size);
  w.num<uint32_t>(static_cast<uint32_t>(spec.vars.size()));
  for (const Variable& v : spec.vars) {
    w.str(v.name());
    w.num<int64_t>(v.min());
    w.num<int64_t>(v.max());
  }
  w.num<uint32_t>(static_cast<uint32_t>(spec.var_names.size()));
  for (const std::string& n : spec.var_names) w.str(n);
  write_slots(w, spec.globals);
  write_slots(w, spec.outs);
  write_slots(w, spec.ins);
  w.num<uint8_t>(spec.shared_scratch);
  const Estimates& e = spec.estimates;
  w.str(serialize_graph({spec.ast, e.ops, e.index_ops, e.lds, e.mem}));
  write_cache_entry(entry_path(dir, id), std::vector<uint8_t>(w.out.begin(), w.out.end()));
}

}  // namespace lathe
