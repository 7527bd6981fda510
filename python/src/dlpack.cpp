// DLPack both ways (Debian's libdlpack-dev, DLPack 0.6): a realized tensor exported without a
// copy (__dlpack__, __dlpack_device__), and Tensor.from_dlpack borrowing another library's memory
// where it is compact and aligned (copying strided CPU memory otherwise). Either way the memory
// lives as long as its last user: an export holds lathe's buffer until the consumer calls the
// deleter; an import holds the producer's tensor until lathe's last buffer handle lets go.
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include "arrays.hpp"
#include "bindings.hpp"

namespace lathe::python {

namespace {

constexpr uint8_t kBoolCode = 6;  // kDLBool, from DLPack 0.8 on (0.6 has no bool)

DLDataType dl_type(DType dt) {
  DLDataType t{};
  t.bits = static_cast<uint8_t>(dt.itemsize() * 8);
  t.lanes = 1;
  if (dt.is_bool()) t.code = kBoolCode;
  else if (dt == dtypes::bfloat16) t.code = kDLBfloat;
  else if (dt.is_float()) t.code = kDLFloat;
  else if (dt.is_unsigned()) t.code = kDLUInt;
  else t.code = kDLInt;
  return t;
}

DType lathe_type(const DLDataType& t) {
  if (t.lanes == 1) {
    for (DType dt : dtypes::all()) {
      DLDataType d = dl_type(dt);
      if (d.code == t.code && d.bits == t.bits) return dt;
    }
  }
  throw DTypeError("lathe has no dtype for DLPack's type code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
                   std::to_string(t.lanes) + " lanes");
}

// What an exported DLManagedTensor owns: the buffer (so the memory outlives the tensor) and its shape.
struct Exported {
  DLManagedTensor managed{};
  Buffer buffer;
  std::vector<int64_t> shape;
};

void delete_exported(DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); }

// A capsule no consumer took still owns its tensor.
void unused_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // consumed: renamed "used_dltensor"
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m && m->deleter) m->deleter(m);
}

DLDevice dl_device(const Buffer& b) {
  const DeviceSpec& d = b.device();
  if (d.type == "CUDA") return DLDevice{kDLCUDA, d.index};
  if (b.host_visible()) return DLDevice{kDLCPU, 0};
  throw Error("a tensor on " + d.to_string() + " has no DLPack device");
}

py::capsule to_dlpack(Tensor& t) {
  Buffer b = realized_buffer(t, "__dlpack__");
  DLDevice device = dl_device(b);  // (throws before anything is allocated)
  auto* e = new Exported{{}, b, t.shape()};
  DLTensor& d = e->managed.dl_tensor;
  d.data = b.device_ptr();
  d.device = device;
  d.ndim = static_cast<int>(e->shape.size());
  d.dtype = dl_type(b.dtype());
  d.shape = e->shape.data();
  d.strides = nullptr;  // compact, row-major
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&e->managed, "dltensor", unused_capsule);
  if (!capsule) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

Tensor from_dlpack(py::object source) {
  py::object capsule = py::hasattr(source, "__dlpack__") ? source.attr("__dlpack__")() : source;
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw Error("from_dlpack takes an object with __dlpack__ (a torch or numpy array) or an unused 'dltensor' capsule");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ours now: its deleter runs when lathe lets go
  std::shared_ptr<void> owner(m, [](void* p) {
    auto* managed = static_cast<DLManagedTensor*>(p);
    if (!managed->deleter) return;
    if (!Py_IsInitialized()) return;  // the interpreter is gone with the producer
    py::gil_scoped_acquire locked;  // a producer's deleter may release Python objects
    managed->deleter(managed);
  });
  const DLTensor& d = m->dl_tensor;
  DType dt = lathe_type(d.dtype);
  std::optional<DeviceSpec> device;
  if (d.device.device_type == kDLCUDA) device = DeviceSpec{"CUDA", d.device.device_id};
  else if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost)
    throw Error("from_dlpack: lathe reads DLPack memory on the CPU or a CUDA device, not device type " + std::to_string(d.device.device_type));
  if (d.ndim < 0) throw ShapeError("from_dlpack: a tensor of " + std::to_string(d.ndim) + " axes");
  Shape shape(d.shape, d.shape + d.ndim);
  size_t elements = 1;
  for (int64_t s : shape) {
    if (s < 0) throw ShapeError("from_dlpack: negative size in shape " + shape_to_string(shape));
    elements *= static_cast<size_t>(s);
  }
  char* data = static_cast<char*>(d.data) + d.byte_offset;
  bool compact = true;
  int64_t expected = 1;
  for (int i = d.ndim; i-- > 0;) {
    if (d.strides && shape[static_cast<size_t>(i)] != 1 && d.strides[i] != expected) compact = false;
    expected *= shape[static_cast<size_t>(i)];
  }
  bool aligned = reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dt.itemsize()) == 0;
  if ((compact && aligned) || elements == 0) return Tensor::from_buffer(Buffer::borrow(elements ? data : nullptr, dt, elements, owner, device), shape);
  if (device || dt == dtypes::bfloat16)
    throw Error("from_dlpack: strided or misaligned " + dt.name() + " memory on " + (device ? device->to_string() : std::string("CPU")) +
                " (make it contiguous first)");
  // Strided host memory: read through a numpy view that holds the producer, copied compact.
  std::vector<py::ssize_t> dims(shape.begin(), shape.end()), strides;
  for (int i = 0; i < d.ndim; ++i) strides.push_back(static_cast<py::ssize_t>(d.strides[i] * dt.itemsize()));
  auto* kept = new std::shared_ptr<void>(owner);
  py::capsule base(kept, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return copy_of(py::array(py::dtype(dt.name()), dims, strides, data, base));
}

}  // namespace

void bind_dlpack(py::class_<Tensor>& tensor) {
  tensor
      .def("__dlpack__", [](Tensor& t, py::handle) { return to_dlpack(t); }, py::kw_only(), py::arg("stream") = py::none(),
           "Realizes it and exports its buffer without a copy (a DLPack capsule that holds the buffer until its consumer lets go)")
      .def("__dlpack_device__", [](Tensor& t) {
        DLDevice d = dl_device(realized_buffer(t, "__dlpack_device__"));
        return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
      })
      .def_static("from_dlpack", &from_dlpack, py::arg("source"),
                  "A tensor over another library's memory (torch, numpy, ...), which it keeps alive; strided CPU memory is copied");
}

}  // namespace lathe::python
