#include "arrays.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace lathe::python {

namespace {

DType dtype_named(const std::string& name, const std::string& said) {
  try {
    DType dt = dtypes::from_name(name);
    if (dt != dtypes::index && dt != dtypes::void_) return dt;
  } catch (const Error&) {
  }
  throw DTypeError("lathe has no dtype " + said);
}

}  // namespace

DType dtype_of_array(const py::array& a) {
  std::string name = py::str(a.dtype().attr("name"));
  return dtype_named(name, "for numpy's " + name);
}

DType dtype_arg(py::handle given) {
  if (py::isinstance<DType>(given)) return given.cast<DType>();
  std::string said = py::str(py::repr(given));
  if (py::isinstance<py::str>(given) && given.cast<std::string>() == "bfloat16") return dtypes::bfloat16;  // a name numpy lacks
  std::string name;
  try {  // a name, a numpy dtype or type: numpy's name for it
    name = py::str(py::dtype::from_args(py::reinterpret_borrow<py::object>(given)).attr("name"));
  } catch (const py::error_already_set&) {
    throw DTypeError("lathe has no dtype " + said + " (a dtype is a lathe.DType, a name or a numpy dtype)");
  }
  return dtype_named(name, said);
}

std::shared_ptr<void> hold(py::object lender) {
  auto* held = new py::object(std::move(lender));
  return std::shared_ptr<void>(held, [](void* p) {
    auto* object = static_cast<py::object*>(p);
    if (!Py_IsInitialized()) {  // the interpreter is gone: nothing left to release
      object->release();
      delete object;
      return;
    }
    py::gil_scoped_acquire locked;
    delete object;
  });
}

namespace {

void check_native_order(const py::array& a) {
  if (!py::bool_(a.dtype().attr("isnative")))
    throw DTypeError("an array of " + std::string(py::str(a.dtype().attr("str"))) + " is not in this machine's byte order: astype('=') it first");
}

Shape shape_of(const py::array& a) { return Shape(a.shape(), a.shape() + a.ndim()); }

}  // namespace

Tensor copy_of(const py::array& given) {
  DType dt = dtype_of_array(given);
  check_native_order(given);
  py::array a = py::array::ensure(given, py::array::c_style);
  if (!a) throw py::error_already_set();
  return detail::tensor_from_bytes(a.data(), static_cast<size_t>(a.nbytes()), dt, shape_of(a));
}

Tensor borrow_or_copy(const py::array& a) {
  DType dt = dtype_of_array(a);
  check_native_order(a);
  bool contiguous = (a.flags() & py::array::c_style) != 0;
  bool aligned = reinterpret_cast<uintptr_t>(a.data()) % static_cast<uintptr_t>(dt.itemsize()) == 0;
  if (!contiguous || !aligned || !a.writeable()) return copy_of(a);
  Buffer memory = Buffer::borrow(const_cast<void*>(a.data()), dt, static_cast<size_t>(a.size()), hold(a));
  return Tensor::from_buffer(memory, shape_of(a));
}

py::array array_over(const Buffer& buffer, const Shape& shape) {
  size_t elements = 1;
  for (int64_t d : shape) elements *= static_cast<size_t>(d);
  Buffer front = elements == buffer.size() ? buffer : Buffer::view(buffer, 0, elements, buffer.dtype());
  if (buffer.dtype() == dtypes::bfloat16 || !buffer.host_visible()) return array_of(Tensor::from_buffer(front, shape));
  auto* kept = new Buffer(front);
  py::capsule owner(kept, [](void* p) { delete static_cast<Buffer*>(p); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array(py::dtype(front.dtype().name()), dims, front.data(), owner);
}

void realize_unlocked(Tensor& t) {
  if (t.is_realized()) return;
  Tensor copy = t;
  {
    py::gil_scoped_release unlocked;
    copy.realize();
  }
  if (!t.is_realized()) t = copy;  // another thread's realization, when first, stays: views of its buffer may exist
}

Buffer realized_buffer(Tensor& t, const char* what) {
  realize_unlocked(t);
  if (!t.is_realized())
    throw ShapeError(std::string(what) + ": a tensor of symbolic shape " + shape_to_string(t.symbolic_shape()) +
                     " has no buffer of its shape (numpy() copies it)");
  return t.buffer();
}

py::array array_of(const Tensor& given) {
  Tensor t = given.dtype() == dtypes::bfloat16 ? given.cast(dtypes::float32) : given;
  realize_unlocked(t);
  Shape shape = bound_shape(t);
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array out(py::dtype(t.dtype().name()), dims);
  if (out.nbytes() == 0) return out;
  if (t.is_realized()) {  // straight into the array
    t.buffer().copyout(out.mutable_data(), static_cast<size_t>(out.nbytes()));
  } else {  // symbolic: its values packed at the front of a larger buffer
    std::vector<uint8_t> bytes = detail::tensor_bytes(t, t.dtype(), "numpy()");
    std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  }
  return out;
}

Shape bound_shape(const Tensor& t) {
  if (!t.is_symbolic()) return t.shape();
  Shape shape;
  for (const SInt& d : t.symbolic_shape()) shape.push_back(d.value_at({}));
  return shape;
}

}  // namespace lathe::python
