// The buffer protocol for realized tensors: memoryview(t) and numpy.asarray(t) view the tensor's
// buffer without a copy. Each view holds the buffer itself (not only the tensor), so it outlives
// both. A tensor that cannot be viewed (bfloat16, a symbolic shape, memory the host cannot
// address) raises BufferError, and numpy falls back to __array__, a copy.
//
// pybind11's own slot lets a C++ exception reach its C caller (and abort the interpreter), so the
// type's getbuffer and releasebuffer slots are these two functions.
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"

namespace lathe::python {

namespace {

const char* buffer_format(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::Bool: return "?";
    case ScalarType::Int8: return "b";
    case ScalarType::UInt8: return "B";
    case ScalarType::Int16: return "h";
    case ScalarType::UInt16: return "H";
    case ScalarType::Int32: return "i";
    case ScalarType::UInt32: return "I";
    case ScalarType::Int64: return "q";
    case ScalarType::UInt64: return "Q";
    case ScalarType::Float16: return "e";
    case ScalarType::Float32: return "f";
    case ScalarType::Float64: return "d";
    default: throw DTypeError("a " + dt.name() + " tensor has no buffer format (numpy() converts it)");
  }
}

// What one view holds: the buffer and the shape and strides the view points at.
struct View {
  Buffer buffer;
  std::vector<Py_ssize_t> shape, strides;
};

int get_buffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    Tensor& t = py::handle(self).cast<Tensor&>();
    Buffer b = realized_buffer(t, "memoryview");
    if (!b.host_visible()) throw Error("a tensor on " + b.device().to_string() + " has no host memory to view (numpy() copies it)");
    const char* format = buffer_format(t.dtype());
    if (b.is_constant() && (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) throw Error("a constant tensor's buffer is read-only");
    auto* held = new View{b, std::vector<Py_ssize_t>(t.shape().begin(), t.shape().end()), {}};
    held->strides.resize(held->shape.size());
    Py_ssize_t stride = t.dtype().itemsize();
    for (size_t i = held->shape.size(); i-- > 0;) held->strides[i] = stride, stride *= std::max<Py_ssize_t>(held->shape[i], 1);
    view->buf = b.data();
    view->len = static_cast<Py_ssize_t>(b.nbytes());
    view->itemsize = t.dtype().itemsize();
    view->readonly = b.is_constant() ? 1 : 0;
    view->ndim = static_cast<int>(held->shape.size());
    view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
    view->shape = held->shape.data();
    view->strides = held->strides.data();
    view->suboffsets = nullptr;
    view->internal = held;
    Py_INCREF(self);
    view->obj = self;
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  return -1;
}

void release_buffer(PyObject*, Py_buffer* view) { delete static_cast<View*>(view->internal); }

}  // namespace

void bind_buffer_protocol(py::class_<Tensor>& tensor) {
  auto* type = reinterpret_cast<PyTypeObject*>(tensor.ptr());
  type->tp_as_buffer->bf_getbuffer = get_buffer;
  type->tp_as_buffer->bf_releasebuffer = release_buffer;
  PyType_Modified(type);
}

}  // namespace lathe::python
