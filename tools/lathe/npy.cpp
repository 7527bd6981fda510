#include "tools/lathe/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

namespace lathe::cli {
namespace {

struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", dtypes::float32}, {"<f8", dtypes::float64}, {"<f2", dtypes::float16},
                             {"|i1", dtypes::int8},    {"<i2", dtypes::int16},   {"<i4", dtypes::int32},
                             {"<i8", dtypes::int64},   {"|u1", dtypes::uint8},   {"<u2", dtypes::uint16},
                             {"<u4", dtypes::uint32},  {"<u8", dtypes::uint64},  {"|b1", dtypes::bool_}};

std::string field(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path + ": .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  if (header[start] == '\'') return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
  return header.substr(start, header.find_first_of(",}", start) - start);
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "'");
  std::string data((std::istreambuf_iterator<char>(f)), {});
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) throw Error(path + ": not a .npy file");
  int major = static_cast<unsigned char>(data[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | (static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8);
    offset = 10;
  } else {
    if (data.size() < 12) throw Error(path + ": truncated .npy header");
    uint32_t len;
    std::memcpy(&len, data.data() + 8, 4);
    header_len = len;
    offset = 12;
  }
  if (offset + header_len > data.size()) throw Error(path + ": truncated .npy header");
  std::string header = data.substr(offset, header_len);
  std::string descr = field(header, "descr", path);
  if (field(header, "fortran_order", path) != "False") throw Error(path + ": Fortran-ordered arrays are not supported");
  const Descr* d = nullptr;
  for (const Descr& x : kDescrs)
    if (descr == x.code || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(x.code).substr(1))) d = &x;
  if (!d) throw Error(path + ": dtype '" + descr + "' is not supported");
  Shape shape;
  std::string dims = field(header, "shape", path);
  std::istringstream ds(dims.substr(1, dims.size() - 2));
  for (std::string tok; std::getline(ds, tok, ',');)
    if (tok.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(tok));
  size_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0) throw Error(path + ": negative dimension in the shape");
    n *= static_cast<size_t>(dim);
  }
  size_t nbytes = n * static_cast<size_t>(d->dtype.itemsize());
  if (data.size() - offset - header_len != nbytes)
    throw Error(path + ": " + std::to_string(data.size() - offset - header_len) + " data bytes for shape " + shape_to_string(shape) +
                " of " + d->dtype.name());
  return lathe::detail::tensor_from_bytes(data.data() + offset + header_len, nbytes, d->dtype, shape);
}

void write_npy(const std::string& path, const Tensor& t) {
  const char* code = nullptr;
  for (const Descr& x : kDescrs)
    if (x.dtype == t.dtype()) code = x.code;
  DType as = t.dtype();
  if (!code) as = dtypes::float32, code = "<f4";  // bfloat16: numpy has none
  Tensor out = t.cast(as);
  std::vector<uint8_t> bytes = lathe::detail::tensor_bytes(out, as, "write_npy");
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + (t.ndim() == 1 ? "," : ", ");
  if (t.ndim() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = "{'descr': '" + std::string(code) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write '" + path + "'");
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f << header;
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace lathe::cli
