// lathe.Tensor: the C++ Tensor API from Python, with numpy's broadcasting and indexing, Python
// scalars on either side of an operator, and numpy arrays in and out. Also DType, Variable and
// SInt (symbolic sizes) and Plan (a prepared ExecutionPlan run many times, its variables rebound).
//
// Every op builds graph only; realize(), numpy(), item() and the like run it. A tensor made from
// a numpy array copies it (Tensor(a)) or borrows its memory (Tensor.from_numpy(a)); a realized
// tensor hands its memory out through the buffer protocol and DLPack without a copy.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <mutex>
#include <unordered_map>

#include "arrays.hpp"
#include "bindings.hpp"

namespace lathe::python {

namespace {

// ---- arguments ------------------------------------------------------------------------------------

// A Python bool or a numpy bool_ (which ints are not, though Python's bool is an int).
bool is_bool(py::handle h) { return PyBool_Check(h.ptr()) || std::string(py::str(py::type::of(h).attr("__name__"))) == "bool_"; }

// An int given as anything with __index__ (a Python int, a numpy integer), not a bool.
bool is_int(py::handle h) {
  if (is_bool(h) || py::isinstance<py::array>(h)) return false;
  return PyLong_Check(h.ptr()) || (!PySequence_Check(h.ptr()) && py::hasattr(h, "__index__"));
}

// h's __index__ value; `overflow` says +1 or -1 for one past int64 (the value is then meaningless).
int64_t index_value(py::handle h, int* overflow) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!i) throw py::error_already_set();
  return PyLong_AsLongLongAndOverflow(i.ptr(), overflow);
}

// An int's value; OverflowError past int64.
int64_t int_of(py::handle h) {
  int overflow = 0;
  int64_t v = index_value(h, &overflow);
  if (overflow) {
    PyErr_SetString(PyExc_OverflowError, ("the int " + std::string(py::str(h)) + " does not fit in 64 bits").c_str());
    throw py::error_already_set();
  }
  return v;
}

// A sequence's items, held by a tuple: a sequence may make a new object for every item it hands out.
py::tuple items_of(py::handle seq) {
  if (!PySequence_Check(seq.ptr()) || py::isinstance<py::str>(seq))
    throw py::type_error("expected a sequence, not " + std::string(py::str(py::type::of(seq).attr("__name__"))));
  return py::tuple(py::reinterpret_borrow<py::object>(seq));
}

SInt sint_of(py::handle h) {
  if (py::isinstance<SInt>(h)) return h.cast<SInt>();
  if (py::isinstance<Variable>(h)) return SInt(h.cast<Variable>());
  if (is_int(h)) return SInt(int_of(h));
  throw py::type_error("a size must be an int, a lathe.Variable or a lathe.SInt, not " + std::string(py::str(py::type::of(h).attr("__name__"))));
}

bool is_size(py::handle h) { return is_int(h) || py::isinstance<SInt>(h) || py::isinstance<Variable>(h); }

SymShape shape_arg(py::handle given) {
  if (is_size(given)) return {sint_of(given)};
  SymShape shape;
  for (py::handle h : items_of(given)) shape.push_back(sint_of(h));
  return shape;
}

// A shape given as separate arguments, f(2, 3), or as one sequence, f((2, 3)).
SymShape shape_args(const py::args& args) {
  if (args.size() == 1 && !is_size(args[0])) return shape_arg(args[0]);
  SymShape shape;
  for (py::handle h : args) shape.push_back(sint_of(h));
  return shape;
}

std::optional<Shape> static_shape(const SymShape& shape) {
  Shape out;
  for (const SInt& d : shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

// Axes or sizes: None (none), an int, or a sequence of ints.
std::vector<int64_t> ints_arg(py::handle given) {
  if (given.is_none()) return {};
  if (is_int(given)) return {int_of(given)};
  std::vector<int64_t> out;
  for (py::handle h : items_of(given)) out.push_back(int_of(h));
  return out;
}

std::vector<int64_t> ints_args(const py::args& args) {
  if (args.size() == 1 && !is_int(args[0])) return ints_arg(args[0]);
  std::vector<int64_t> out;
  for (py::handle h : args) out.push_back(int_of(h));
  return out;
}

// An int for each of `n` axes: one int for all, or a sequence of n.
std::vector<int64_t> per_axis(py::handle given, size_t n, const char* what) {
  if (is_int(given)) return std::vector<int64_t>(n, int_of(given));
  std::vector<int64_t> v = ints_arg(given);
  if (v.size() != n) throw ShapeError(std::string(what) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(n) + " spatial axes");
  return v;
}

// (before, after) from a pair.
std::pair<py::object, py::object> pair_of(py::handle h, const char* what) {
  py::tuple pair = items_of(h);
  if (pair.size() != 2) throw ShapeError(std::string(what) + ": each axis takes a pair, not " + std::to_string(pair.size()) + " values");
  return {pair[0], pair[1]};
}

// Padding for `n` spatial axes: an int for every side, an int per axis (both sides), or a
// (before, after) pair per axis.
std::vector<std::pair<int64_t, int64_t>> padding_arg(py::handle given, size_t n) {
  if (is_int(given)) return std::vector<std::pair<int64_t, int64_t>>(n, {int_of(given), int_of(given)});
  std::vector<std::pair<int64_t, int64_t>> out;
  for (py::handle h : items_of(given)) {
    if (is_int(h)) {
      out.emplace_back(int_of(h), int_of(h));
    } else {
      auto [before, after] = pair_of(h, "padding");
      out.emplace_back(int_of(before), int_of(after));
    }
  }
  if (out.size() != n) throw ShapeError("padding has " + std::to_string(out.size()) + " entries for " + std::to_string(n) + " spatial axes");
  return out;
}

size_t spatial_axes(const Tensor& t, const char* op) {
  if (t.ndim() < 3) throw ShapeError(std::string(op) + " of a tensor of shape " + shape_to_string(t.shape()) + " (needs N, C and a spatial axis)");
  return static_cast<size_t>(t.ndim() - 2);
}

Window window_arg(size_t n, py::handle stride, py::handle padding, py::handle dilation, bool ceil_mode = false) {
  Window w;
  if (!stride.is_none()) w.stride = per_axis(stride, n, "stride");
  w.padding = padding_arg(padding, n);
  w.dilation = per_axis(dilation, n, "dilation");
  w.ceil_mode = ceil_mode;
  return w;
}

std::optional<Tensor> optional_tensor(py::handle h);

// ---- data in ----------------------------------------------------------------------------------------

// The default dtype of a Python int: int32, as tinygrad's, unless the value needs int64.
DType int_dtype(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX ? dtypes::default_int : dtypes::int64; }

// A tensor from Python data: a Tensor, a numpy array (copied), a scalar, or nested sequences.
// Without a dtype, Python floats become float32 and ints int32 (int64 where a value needs it), as
// in tinygrad; arrays keep theirs.
Tensor tensor_of(py::handle data, std::optional<DType> dtype) {
  Tensor t;
  if (py::isinstance<Tensor>(data)) {
    t = data.cast<Tensor>();
  } else if (py::isinstance<py::bool_>(data)) {
    t = Tensor::full(Shape{}, ConstValue(data.cast<bool>()), dtypes::bool_);
  } else if (py::isinstance<py::int_>(data)) {
    int64_t v = int_of(data);
    t = Tensor::full(Shape{}, ConstValue(v), dtype.value_or(int_dtype(v)));
  } else if (py::isinstance<py::float_>(data)) {
    t = Tensor::full(Shape{}, ConstValue(data.cast<double>()), dtype.value_or(dtypes::default_float));
  } else if (py::isinstance<py::array>(data)) {
    t = copy_of(py::reinterpret_borrow<py::array>(data));
  } else {
    py::array a = py::module_::import("numpy").attr("asarray")(data);
    std::string kind = py::str(a.dtype().attr("kind"));
    if (!dtype && kind == "f") a = a.attr("astype")("float32");
    if (!dtype && kind == "i" &&
        (a.size() == 0 || (int_of(a.attr("min")()) >= INT32_MIN && int_of(a.attr("max")()) <= INT32_MAX)))
      a = a.attr("astype")("int32");
    t = copy_of(a);
  }
  return dtype && t.dtype() != *dtype ? t.cast(*dtype) : t;
}

// The other operand of a binary op: Python numbers become scalars shaped to broadcast (an int
// takes `like`'s dtype, a float is float32 unless `like` is a float), anything else a tensor.
Tensor operand(const Tensor& like, py::handle x) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (py::isinstance<py::bool_>(x)) return Tensor::full(Shape{}, ConstValue(x.cast<bool>()), dtypes::bool_);
  if (py::isinstance<py::int_>(x)) return Tensor::scalar_like(like, static_cast<double>(int_of(x)), false);
  if (py::isinstance<py::float_>(x)) return Tensor::scalar_like(like, x.cast<double>(), true);
  return tensor_of(x, std::nullopt);
}

std::optional<Tensor> optional_tensor(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return tensor_of(h, std::nullopt);
}

// Tensors given as separate arguments, f(a, b), or as one sequence, f([a, b]).
std::vector<Tensor> tensors_of(const py::args& args) {
  std::vector<Tensor> out;
  py::tuple items = args;
  if (args.size() == 1 && !py::isinstance<Tensor>(args[0]) && PySequence_Check(args[0].ptr())) items = items_of(args[0]);
  for (py::handle h : items) out.push_back(tensor_of(h, std::nullopt));
  return out;
}

// ---- ops that Python spells differently ---------------------------------------------------------

// Python's //: floor division (numpy's and torch's, not C's truncation). For floats, numpy's
// divmod: (a - fmod(a, b)) / b, one less where the remainder's sign differs from b's, rounded to
// the nearest integer (floor(1.0 / 0.1) is 10, 1.0 // 0.1 is 9, as 1.0 % 0.1 is 0.0999...).
Tensor floordiv(const Tensor& a, const Tensor& b) {
  DType dt = least_upper_dtype({a.dtype(), b.dtype()});
  if (!dt.is_float()) return (a - a.remainder(b)).idiv(b);
  Tensor x = a.cast(dt), y = b.cast(dt);
  Tensor mod = x.fmod(y);
  Tensor div = (x - mod) / y;
  Tensor zero = Tensor::scalar_like(mod, 0, true);
  div = ((mod != zero).logical_and((y < zero) != (mod < zero))).where(div - Tensor::scalar_like(div, 1, true), div);
  Tensor down = div.floor();
  return (div - down > Tensor::scalar_like(div, 0.5, true)).where(down + Tensor::scalar_like(down, 1, true), down);
}

Tensor invert(const Tensor& a) {
  if (a.dtype().is_bool()) return a.logical_not();
  if (a.dtype().is_float()) throw DTypeError("~ of a " + a.dtype().name() + " tensor (bool and integers only)");
  return a.bitwise_xor(Tensor::scalar_like(a, -1, false));
}

Tensor power(const Tensor& a, py::handle exponent) {
  if (py::isinstance<py::float_>(exponent) || (py::isinstance<py::int_>(exponent) && !py::isinstance<py::bool_>(exponent) && a.dtype().is_float()))
    return a.pow(exponent.cast<double>());
  return a.pow(operand(a, exponent));
}

// numpy-style basic indexing: ints, slices, None (a new axis) and one Ellipsis.
Tensor index(const Tensor& t, py::handle key) {
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  int64_t used = 0;
  bool ellipsis = false;
  for (py::handle h : items) {
    if (h.is(py::ellipsis())) {
      if (ellipsis) throw py::index_error("an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (!h.is_none()) {
      ++used;
    }
  }
  if (used > t.ndim())
    throw py::index_error("too many indices for a tensor of shape " + shape_to_string(t.shape()) + ": " + std::to_string(used) + " for " +
                          std::to_string(t.ndim()) + " axes");
  Tensor r = t;
  int64_t axis = 0;  // the axis of r the next entry indexes
  for (py::handle h : items) {
    if (h.is(py::ellipsis())) {
      axis += t.ndim() - used;
    } else if (h.is_none()) {
      r = r.unsqueeze(axis++);
    } else if (py::isinstance<py::slice>(h)) {
      auto get = [&](const char* name) -> std::optional<int64_t> {
        py::object v = h.attr(name);
        if (v.is_none()) return std::nullopt;
        int overflow = 0;
        int64_t n = index_value(v, &overflow);
        constexpr int64_t far = int64_t{1} << 62;  // past any axis: clamped, as Python clamps slices
        return overflow > 0 ? far : overflow < 0 ? -far : std::clamp<int64_t>(n, -far, far);
      };
      std::optional<int64_t> step = get("step");
      if (step && *step == 0) throw py::value_error("slice step cannot be zero");
      r = r.slice(axis++, get("start"), get("stop"), step.value_or(1));
    } else if (is_bool(h)) {
      throw py::index_error("lathe.Tensor takes no bool index (numpy's masks): use where");
    } else if (is_int(h)) {
      int64_t i = 0;
      try {
        i = int_of(h);
      } catch (const py::error_already_set&) {
        throw py::index_error("index " + std::string(py::str(h)) + " is out of bounds for axis " + std::to_string(axis));
      }
      int64_t size = r.shape()[static_cast<size_t>(axis)];
      if (i < -size || i >= size)
        throw py::index_error("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) + " of size " + std::to_string(size));
      if (i < 0) i += size;
      r = r.slice(axis, i, i + 1).squeeze(axis);
    } else {
      throw py::index_error("lathe.Tensor is indexed by ints, slices, None and '...' (for tensor indices use gather), not " +
                            std::string(py::str(py::type::of(h).attr("__name__"))));
    }
  }
  return r;
}

// reshape(2, 3) or reshape((2, 3)): static sizes may include one -1.
Tensor reshaped(const Tensor& a, const py::args& shape) {
  SymShape s = shape_args(shape);
  std::optional<Shape> fixed = static_shape(s);
  return fixed ? a.reshape(*fixed) : a.reshape(s);
}

// The shape: an int per static size, an SInt per symbolic one.
py::tuple shape_tuple(const Tensor& t) {
  py::list dims;
  for (const SInt& d : t.symbolic_shape()) dims.append(d.is_static() ? py::int_(d.value()) : py::cast(d));
  return py::tuple(dims);
}

int64_t bound_numel(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : bound_shape(t)) n *= d;
  return n;
}

// The value of a one-element tensor as a Python scalar.
py::object item(const Tensor& t) {
  if (bound_numel(t) != 1) throw ShapeError("item() of a tensor of shape " + shape_to_string(bound_shape(t)) + " (needs one element)");
  return array_of(t).attr("item")();
}

// ---- plans --------------------------------------------------------------------------------------

// A prepared ExecutionPlan and its outputs, so a run at other variable values reads its outputs
// at their sizes there. Runs of one plan are serialised; the interpreter lock is released while it
// runs.
class Plan {
 public:
  Plan(const std::vector<Tensor>& outputs, const PrepareOptions& options) : outputs_(outputs) {
    py::gil_scoped_release unlocked;
    plan_ = Tensor::prepare(outputs, options);
  }

  py::object execute(const std::map<std::string, int64_t>& vars, bool profile) {
    std::vector<std::pair<std::string, int64_t>> binds(vars.begin(), vars.end());
    std::vector<KernelRecord> records;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      if (profile) records = records_of(plan_.execute_with_vars_profiled(binds));
      else plan_.execute_with_vars(binds);
      ran_ = true;
    }
    if (!profile) return py::none();
    return py::cast(records);
  }

  size_t outputs() const { return outputs_.size(); }

  // A copy of output `i` at the sizes of the last run. The plan's lock is taken with the
  // interpreter lock released, and let go before the array is made.
  py::array numpy(size_t i) {
    if (i >= outputs_.size()) throw py::index_error("output " + std::to_string(i) + " of a plan of " + std::to_string(outputs_.size()));
    Buffer copy;
    Shape shape;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      if (!ran_) throw Error("Plan.numpy before the plan ran: execute() it first");
      Tensor view = outputs_[i].read_from(plan_, i);
      shape = view.shape();
      copy = Buffer(view.dtype(), static_cast<size_t>(view.numel()), view.buffer().device());
      if (view.numel() > 0) copy.copy_from(view.buffer());
    }
    return array_over(copy, shape);
  }

  // Copies `values` into the plan's buffer of `input` (a realized tensor the plan reads), at its
  // front when the buffer is larger (an input of symbolic size).
  void write(const Tensor& input, const py::array& values) {
    auto a = py::array::ensure(values, py::array::c_style);
    if (!a) throw DTypeError("write: the values are not an array");
    DType dt = dtype_of_array(a);
    auto nbytes = static_cast<size_t>(a.nbytes());
    py::gil_scoped_release unlocked;
    std::lock_guard<std::mutex> lock(mu_);
    Buffer* b = input.is_realized() ? plan_.buffer_mut_by_id(input.uop_id()) : nullptr;
    if (!b) throw Error("write: the plan reads no buffer of this tensor (" + input.to_string() + "); give it a realized input of the plan");
    if (dt != b->dtype()) throw DTypeError("write: " + dt.name() + " values into a " + b->dtype().name() + " input");
    if (nbytes > b->nbytes()) throw ShapeError("write: " + std::to_string(a.size()) + " values into an input of " + std::to_string(b->size()));
    Buffer front = nbytes == b->nbytes() ? *b : Buffer::view(*b, 0, static_cast<size_t>(a.size()), b->dtype());
    if (nbytes) front.copyin(a.data(), nbytes);
  }

  py::dict variables() const {
    py::dict out;
    for (const PreparedKernel* k : plan_.prepared_kernels())
      for (const RuntimeVar& v : k->runtime_vars) out[py::str(v.name)] = py::make_tuple(v.min, v.max);
    return out;
  }

  std::vector<std::string> kernels() const {
    std::vector<std::string> names;
    for (const PreparedKernel* k : plan_.prepared_kernels()) names.push_back(k->kernel->entry_point);
    return names;
  }

  py::dict memory() const {
    const MemoryStats& s = plan_.memory_stats();
    py::dict out;
    out["arena_bytes"] = s.arena_bytes;
    out["intermediate_bytes"] = s.intermediate_bytes;
    out["peak_live_bytes"] = s.peak_live_bytes;
    out["constant_bytes"] = s.constant_bytes;
    out["io_bytes"] = s.io_bytes;
    return out;
  }

 private:
  std::vector<Tensor> outputs_;
  ExecutionPlan plan_;
  bool ran_ = false;
  std::mutex mu_;
};

std::unique_ptr<Plan> prepare_plan(const std::vector<Tensor>& outputs, std::optional<int> threads, std::optional<std::string> backend,
                                   std::optional<bool> optimize, std::optional<int> beam) {
  return std::make_unique<Plan>(outputs, prepare_options(threads, backend, optimize, beam));
}

#define LATHE_PREPARE_ARGS \
  py::arg("threads") = py::none(), py::arg("backend") = py::none(), py::arg("optimize") = py::none(), py::arg("beam") = py::none()

void bind_symbols(py::module_& m) {
  py::class_<DType>(m, "DType", "An element type: lathe.dtypes.float32, ...")
      .def_property_readonly("name", [](const DType& d) { return d.name(); }, "Its name: float32, ...")
      .def_property_readonly("itemsize", &DType::itemsize, "Bytes per element")
      .def_property_readonly("is_float", &DType::is_float, "Whether it is a floating-point type")
      .def_property_readonly("is_int", [](const DType& d) { return d.is_int(); }, "Whether it is an integer type (signed or not)")
      .def_property_readonly("is_bool", &DType::is_bool, "Whether it is bool")
      .def_property_readonly("np", [](const DType& d) { return py::dtype((d == dtypes::bfloat16 ? dtypes::float32 : d).name()); },
                             "the numpy dtype its values convert to (bfloat16: float32)")
      .def("__eq__", [](const DType& a, py::handle b) {
        try {
          return a == dtype_arg(b);
        } catch (const Error&) {
          return false;
        }
      })
      .def("__hash__", [](const DType& d) { return py::hash(py::str(d.name())); })
      .def("__str__", [](const DType& d) { return d.name(); })
      .def("__repr__", [](const DType& d) { return "dtypes." + d.name(); });
  py::module_ dt = m.def_submodule("dtypes", "lathe's element types, as tinygrad names them");
  for (DType d : dtypes::all()) dt.attr(py::str(d.name())) = d;
  dt.attr("default_float") = dtypes::default_float;
  dt.attr("default_int") = dtypes::default_int;

  py::class_<SInt>(m, "SInt", "A size: a number or an expression of variables")
      .def(py::init([](int64_t v) { return SInt(v); }))
      .def_property_readonly("is_static", &SInt::is_static, "Whether it is a number rather than an expression of variables")
      .def_property_readonly("min", &SInt::min, "The smallest value it can take")
      .def_property_readonly("max", &SInt::max, "The largest value it can take")
      .def("value", [](const SInt& s, const std::unordered_map<std::string, int64_t>& vars) { return s.value_at(vars); },
           py::arg("vars") = std::unordered_map<std::string, int64_t>{},
           "The size at the given variable values (bound variables default to their bound values)")
      .def("__int__", [](const SInt& s) { return s.value_at({}); })
      .def("__add__", [](const SInt& a, py::handle b) { return a + sint_of(b); }, py::is_operator())
      .def("__radd__", [](const SInt& a, py::handle b) { return sint_of(b) + a; }, py::is_operator())
      .def("__sub__", [](const SInt& a, py::handle b) { return a - sint_of(b); }, py::is_operator())
      .def("__rsub__", [](const SInt& a, py::handle b) { return sint_of(b) - a; }, py::is_operator())
      .def("__mul__", [](const SInt& a, py::handle b) { return a * sint_of(b); }, py::is_operator())
      .def("__rmul__", [](const SInt& a, py::handle b) { return sint_of(b) * a; }, py::is_operator())
      .def("__eq__", [](const SInt& a, py::handle b) { return a == sint_of(b); })
      .def("__hash__", [](const SInt& s) { return py::hash(py::str(s.to_string())); })
      .def("__repr__", &SInt::to_string);

  py::class_<Variable>(m, "Variable", "A symbolic size in [min, max]: kernels that use one compile once and read it at run time")
      .def(py::init<std::string, int64_t, int64_t>(), py::arg("name"), py::arg("min"), py::arg("max"))
      .def_property_readonly("name", &Variable::name, "Its name, by which Plan.execute rebinds it")
      .def_property_readonly("min", &Variable::min, "Its smallest value")
      .def_property_readonly("max", &Variable::max, "Its largest value")
      .def("bind", &Variable::bind, py::arg("value"), "This variable at `value` now, rebindable at run time (Plan.execute)")
      .def("__add__", [](const Variable& a, py::handle b) { return SInt(a) + sint_of(b); }, py::is_operator())
      .def("__mul__", [](const Variable& a, py::handle b) { return SInt(a) * sint_of(b); }, py::is_operator())
      .def("__repr__", [](const Variable& v) {
        return "Variable('" + v.name() + "', " + std::to_string(v.min()) + ", " + std::to_string(v.max()) + ")";
      });
  py::implicitly_convertible<Variable, SInt>();
  py::implicitly_convertible<py::int_, SInt>();

  py::class_<Plan>(m, "Plan", "Tensors compiled once (Tensor.prepare): execute() runs them, rebinding variables, compiling nothing")
      .def("execute", &Plan::execute, py::arg("vars") = std::map<std::string, int64_t>{}, py::arg("profile") = false,
           "Runs the plan, variables rebound by name (checked against their bounds); with profile=True returns a KernelProfile per kernel")
      .def_property_readonly("num_outputs", &Plan::outputs, "How many outputs it computes")
      .def("numpy", &Plan::numpy, py::arg("i") = 0, "A copy of output i at the sizes of the last run")
      .def("write", &Plan::write, py::arg("input"), py::arg("values"), "Copies a numpy array into the plan's buffer of a realized input tensor")
      .def_property_readonly("variables", &Plan::variables, "The variables its kernels read: name -> (min, max)")
      .def_property_readonly("kernels", &Plan::kernels, "Its kernels' names, in the order they run")
      .def_property_readonly("memory", &Plan::memory, "Where its memory goes, in bytes");
}

// The one-operand elementwise ops, each with its docstring: bound from this table.
struct UnaryOp {
  const char* name;
  Tensor (Tensor::*fn)() const;
  const char* doc;
};
constexpr UnaryOp kUnaryOps[] = {
    {"neg", &Tensor::neg, "-x"},
    {"abs", &Tensor::abs, "|x|"},
    {"exp", &Tensor::exp, "e to the x"},
    {"exp2", &Tensor::exp2, "2 to the x"},
    {"expm1", &Tensor::expm1, "e^x - 1, without cancellation near 0"},
    {"log", &Tensor::log, "The natural logarithm"},
    {"log1p", &Tensor::log1p, "log(1 + x), without cancellation near 0"},
    {"log2", &Tensor::log2, "The base-2 logarithm"},
    {"sqrt", &Tensor::sqrt, "The square root"},
    {"rsqrt", &Tensor::rsqrt, "1 / sqrt(x)"},
    {"reciprocal", &Tensor::reciprocal, "1 / x"},
    {"sin", &Tensor::sin, "The sine (radians)"},
    {"cos", &Tensor::cos, "The cosine (radians)"},
    {"tan", &Tensor::tan, "The tangent (radians)"},
    {"asin", &Tensor::asin, "The arcsine"},
    {"acos", &Tensor::acos, "The arccosine"},
    {"atan", &Tensor::atan, "The arctangent"},
    {"sinh", &Tensor::sinh, "The hyperbolic sine"},
    {"cosh", &Tensor::cosh, "The hyperbolic cosine"},
    {"asinh", &Tensor::asinh, "The inverse hyperbolic sine"},
    {"acosh", &Tensor::acosh, "The inverse hyperbolic cosine"},
    {"atanh", &Tensor::atanh, "The inverse hyperbolic tangent"},
    {"relu", &Tensor::relu, "max(x, 0)"},
    {"sigmoid", &Tensor::sigmoid, "1 / (1 + e^-x)"},
    {"tanh", &Tensor::tanh, "The hyperbolic tangent"},
    {"gelu", &Tensor::gelu, "GELU, the tanh approximation (tinygrad's, torch's approximate='tanh')"},
    {"silu", &Tensor::silu, "x * sigmoid(x)"},
    {"softplus", &Tensor::softplus, "log(1 + e^x), without overflow for large x"},
    {"softsign", &Tensor::softsign, "x / (1 + |x|)"},
    {"mish", &Tensor::mish, "x * tanh(softplus(x))"},
    {"erf", &Tensor::erf, "The error function"},
    {"floor", &Tensor::floor, "Rounded down"},
    {"ceil", &Tensor::ceil, "Rounded up"},
    {"round", &Tensor::round, "Rounded to the nearest integer, half to even (numpy's, tinygrad's)"},
    {"trunc", &Tensor::trunc, "Rounded toward zero"},
    {"sign", &Tensor::sign, "-1, 0 or 1"},
    {"hardswish", &Tensor::hardswish, "x * relu6(x + 3) / 6"},
    {"logical_not", &Tensor::logical_not, "not x, as bool"},
};

}  // namespace

void bind_tensor(py::module_& m) {
  bind_symbols(m);
  using T = const Tensor&;
  using H = py::handle;
  py::class_<Tensor> t(m, "Tensor", py::buffer_protocol(), "A lazy tensor: ops build a graph; realize(), numpy() and item() run it");
  t.def(py::init([](H data, H dtype) { return tensor_of(data, dtype.is_none() ? std::nullopt : std::optional<DType>(dtype_arg(dtype))); }),
        py::arg("data"), py::arg("dtype") = py::none(),
        "From a numpy array (copied), a Python scalar or nested lists (floats as float32, ints as int32), or another Tensor")
      // creation
      .def_static("from_numpy", &borrow_or_copy, py::arg("array"),
                  "Over the array's memory, which it keeps alive, where lathe can read it in place (C-contiguous, aligned, native "
                  "byte order, writeable); a copy otherwise. Later writes to the array are seen by what is computed from it")
      .def_static("zeros", [](py::args shape, H dtype) { return Tensor::zeros(shape_args(shape), dtype.is_none() ? dtypes::float32 : dtype_arg(dtype)); },
                  py::kw_only(), py::arg("dtype") = py::none(), "Zeros of the shape (float32 unless dtype says)")
      .def_static("ones", [](py::args shape, H dtype) { return Tensor::ones(shape_args(shape), dtype.is_none() ? dtypes::float32 : dtype_arg(dtype)); },
                  py::kw_only(), py::arg("dtype") = py::none(), "Ones of the shape (float32 unless dtype says)")
      .def_static("empty", [](py::args shape, H dtype) { return Tensor::empty(shape_args(shape), dtype.is_none() ? dtypes::float32 : dtype_arg(dtype)); },
                  py::kw_only(), py::arg("dtype") = py::none(), "Uninitialised memory of the shape (a symbolic size allocates for its maximum)")
      .def_static(
          "full",
          [](H shape, H value, H dtype) {
            std::optional<DType> dt = dtype.is_none() ? std::nullopt : std::optional<DType>(dtype_arg(dtype));
            if (py::isinstance<py::bool_>(value)) return Tensor::full(shape_arg(shape), ConstValue(value.cast<bool>()), dt.value_or(dtypes::bool_));
            if (py::isinstance<py::int_>(value)) {
              int64_t v = int_of(value);
              return Tensor::full(shape_arg(shape), ConstValue(v), dt.value_or(int_dtype(v)));
            }
            return Tensor::full(shape_arg(shape), ConstValue(value.cast<double>()), dt.value_or(dtypes::default_float));
          },
          py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(), "fill_value everywhere (its dtype from the value: bool, int32 or float32, unless dtype says)")
      .def_static(
          "arange",
          [](H start, H stop, H step, H dtype) {
            bool any_float = py::isinstance<py::float_>(start) || py::isinstance<py::float_>(stop) || py::isinstance<py::float_>(step);
            DType dt = dtype.is_none() ? (any_float ? dtypes::default_float : dtypes::default_int) : dtype_arg(dtype);
            double a = stop.is_none() ? 0.0 : start.cast<double>(), b = stop.is_none() ? start.cast<double>() : stop.cast<double>();
            return Tensor::arange(a, b, step.cast<double>(), dt);
          },
          py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::arg("dtype") = py::none(),
          "[start, start+step, ...) below stop; arange(n) is [0, n). int32 unless an argument is a float")
      .def_static("eye", [](int64_t n, H dtype) { return Tensor::eye(n, dtype.is_none() ? dtypes::float32 : dtype_arg(dtype)); }, py::arg("n"),
                  py::arg("dtype") = py::none(), "The n x n identity")
      .def_static("rand", [](py::args shape, uint64_t seed, H dtype) {
        std::optional<Shape> s = static_shape(shape_args(shape));
        if (!s) throw ShapeError("rand needs a static shape");
        return Tensor::rand(*s, seed, dtype.is_none() ? dtypes::float32 : dtype_arg(dtype));
      }, py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none(), "Uniform in [0, 1), the same on every machine for a seed")
      .def_static("randn", [](py::args shape, uint64_t seed, H dtype) {
        std::optional<Shape> s = static_shape(shape_args(shape));
        if (!s) throw ShapeError("randn needs a static shape");
        return Tensor::randn(*s, seed, dtype.is_none() ? dtypes::float32 : dtype_arg(dtype));
      }, py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none(), "Standard normal, the same on every machine for a seed")
      // properties
      .def_property_readonly("shape", &shape_tuple, "A tuple: ints, and SInts for symbolic sizes")
      .def_property_readonly("dtype", &Tensor::dtype, "Its element type")
      .def_property_readonly("ndim", &Tensor::ndim, "The number of axes")
      .def("numel", &Tensor::numel, "The number of elements (a symbolic size at its maximum)")
      .def_property_readonly("device", [](T x) { return x.device().to_string(); }, "The device it is computed on (\"CPU\", \"EMU\", \"CUDA:0\")")
      .def_property_readonly("is_realized", &Tensor::is_realized, "Whether it reads its own buffer (realize() makes it so)")
      .def("label", [](T x, const std::string& name) { return x.label(name); }, py::arg("name"), "Names its computation in profiles and traces")
      .def("__len__", [](T x) {
        if (x.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
        return bound_shape(x)[0];
      })
      .def("__repr__", &Tensor::to_string)
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      // running and data out
      .def("realize", [](py::object self) {
        realize_unlocked(self.cast<Tensor&>());
        return self;
      }, "Runs its graph now; afterwards it reads its own buffer. Returns itself")
      .def("prepare", [](T x, std::optional<int> threads, std::optional<std::string> backend, std::optional<bool> optimize, std::optional<int> beam) {
        return prepare_plan({x}, threads, backend, optimize, beam);
      }, py::kw_only(), LATHE_PREPARE_ARGS, "Compiles and allocates everything it needs into a Plan; runs nothing")
      .def("numpy", &array_of, "A new numpy array with its values")
      .def("tolist", [](T x) { return array_of(x).attr("tolist")(); }, "Its values as nested Python lists")
      .def("item", &item, "The value of a one-element tensor, as a Python number")
      .def("__array__", [](T x, H dtype, H) {
        py::array a = array_of(x);
        return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__bool__", [](T x) {
        if (bound_numel(x) != 1) throw py::value_error("the truth value of a tensor of shape " + shape_to_string(bound_shape(x)) + " is ambiguous");
        return py::bool_(item(x));
      })
      .def("__float__", [](T x) { return py::float_(item(x)); })
      .def("__int__", [](T x) { return py::int_(item(x)); })
      .def("to", [](T x, const std::string& device) { return x.to(device); }, py::arg("device"), "On another device (\"CPU\", \"EMU\", \"CUDA:0\")")
      // elementwise with arguments (one-operand ops: kUnaryOps, below)
      .def("elu", &Tensor::elu, py::arg("alpha") = 1.0, "x, or alpha * (e^x - 1) below 0")
      .def("celu", &Tensor::celu, py::arg("alpha") = 1.0, "max(0, x) + min(0, alpha * (e^(x / alpha) - 1))")
      .def("selu", &Tensor::selu, py::arg("alpha") = 1.6732632423543772, py::arg("gamma") = 1.0507009873554805, "gamma * elu(x, alpha)")
      .def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01, "x, or neg_slope * x below 0")
      .def("hardsigmoid", &Tensor::hardsigmoid, py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5, "clip(alpha * x + beta, 0, 1)")
      .def("clip", &Tensor::clip, py::arg("min"), py::arg("max"), "Each value held within [min, max]")
      .def("clamp", &Tensor::clip, py::arg("min"), py::arg("max"), "clip's other name (torch's)")
      .def("pow", &power, py::arg("exponent"), "x to the power of a tensor or a number")
      .def("maximum", [](T a, H b) { return a.maximum(operand(a, b)); }, py::arg("other"), "The larger of the two, broadcast")
      .def("minimum", [](T a, H b) { return a.minimum(operand(a, b)); }, py::arg("other"), "The smaller of the two, broadcast")
      .def("where", [](T c, H x, H y) {
        if ((py::isinstance<py::int_>(x) || py::isinstance<py::float_>(x)) && (py::isinstance<py::int_>(y) || py::isinstance<py::float_>(y)) &&
            !py::isinstance<py::bool_>(x) && !py::isinstance<py::bool_>(y))
          return c.where(x.cast<double>(), y.cast<double>());
        Tensor tx = py::isinstance<Tensor>(x) || !py::isinstance<Tensor>(y) ? tensor_of(x, std::nullopt) : operand(y.cast<Tensor>(), x);
        return c.where(tx, operand(tx, y));
      }, py::arg("x"), py::arg("y"), "x where this bool tensor is true, else y")
      .def("logical_and", [](T a, H b) { return a.logical_and(operand(a, b)); }, py::arg("other"), "x and other, as bool, broadcast")
      .def("logical_or", [](T a, H b) { return a.logical_or(operand(a, b)); }, py::arg("other"), "x or other, as bool, broadcast")
      .def("bitwise_and", [](T a, H b) { return a.bitwise_and(operand(a, b)); }, py::arg("other"), "x & other, broadcast")
      .def("bitwise_or", [](T a, H b) { return a.bitwise_or(operand(a, b)); }, py::arg("other"), "x | other, broadcast")
      .def("bitwise_xor", [](T a, H b) { return a.bitwise_xor(operand(a, b)); }, py::arg("other"), "x ^ other, broadcast")
      .def("idiv", [](T a, H b) { return a.idiv(operand(a, b)); }, py::arg("other"), "Integer division rounding toward zero (C's /)")
      .def("fmod", [](T a, H b) { return a.fmod(operand(a, b)); }, py::arg("other"), "The remainder with the dividend's sign (C's fmod)")
      .def("remainder", [](T a, H b) { return a.remainder(operand(a, b)); }, py::arg("other"), "The remainder with the divisor's sign (Python's %)")
      .def("cast", [](T a, H dtype) { return a.cast(dtype_arg(dtype)); }, py::arg("dtype"), "Converted to another dtype (floats to integers truncate)")
      .def("bitcast", [](T a, H dtype) { return a.bitcast(dtype_arg(dtype)); }, py::arg("dtype"), "The same bits read as another dtype of the same size")
      // operators
      .def("__add__", [](T a, H b) { return a + operand(a, b); }, py::is_operator())
      .def("__radd__", [](T a, H b) { return operand(a, b) + a; }, py::is_operator())
      .def("__sub__", [](T a, H b) { return a - operand(a, b); }, py::is_operator())
      .def("__rsub__", [](T a, H b) { return operand(a, b) - a; }, py::is_operator())
      .def("__mul__", [](T a, H b) { return a * operand(a, b); }, py::is_operator())
      .def("__rmul__", [](T a, H b) { return operand(a, b) * a; }, py::is_operator())
      .def("__truediv__", [](T a, H b) { return a / operand(a, b); }, py::is_operator())
      .def("__rtruediv__", [](T a, H b) { return operand(a, b) / a; }, py::is_operator())
      .def("__floordiv__", [](T a, H b) { return floordiv(a, operand(a, b)); }, py::is_operator())
      .def("__rfloordiv__", [](T a, H b) { return floordiv(operand(a, b), a); }, py::is_operator())
      .def("__mod__", [](T a, H b) { return a.remainder(operand(a, b)); }, py::is_operator())
      .def("__rmod__", [](T a, H b) { return operand(a, b).remainder(a); }, py::is_operator())
      .def("__pow__", [](T a, H b) { return power(a, b); }, py::is_operator())
      .def("__rpow__", [](T a, H b) { return operand(a, b).pow(a); }, py::is_operator())
      .def("__matmul__", [](T a, H b) { return a.matmul(operand(a, b)); }, py::is_operator())
      .def("__rmatmul__", [](T a, H b) { return operand(a, b).matmul(a); }, py::is_operator())
      .def("__and__", [](T a, H b) { return a.bitwise_and(operand(a, b)); }, py::is_operator())
      .def("__rand__", [](T a, H b) { return operand(a, b).bitwise_and(a); }, py::is_operator())
      .def("__or__", [](T a, H b) { return a.bitwise_or(operand(a, b)); }, py::is_operator())
      .def("__ror__", [](T a, H b) { return operand(a, b).bitwise_or(a); }, py::is_operator())
      .def("__xor__", [](T a, H b) { return a.bitwise_xor(operand(a, b)); }, py::is_operator())
      .def("__rxor__", [](T a, H b) { return operand(a, b).bitwise_xor(a); }, py::is_operator())
      .def("__lshift__", [](T a, H b) { return a.lshift(operand(a, b)); }, py::is_operator())
      .def("__rshift__", [](T a, H b) { return a.rshift(operand(a, b)); }, py::is_operator())
      .def("__rlshift__", [](T a, H b) { return operand(a, b).lshift(a); }, py::is_operator())
      .def("__rrshift__", [](T a, H b) { return operand(a, b).rshift(a); }, py::is_operator())
      .def("__lt__", [](T a, H b) { return a < operand(a, b); }, py::is_operator())
      .def("__le__", [](T a, H b) { return a <= operand(a, b); }, py::is_operator())
      .def("__gt__", [](T a, H b) { return a > operand(a, b); }, py::is_operator())
      .def("__ge__", [](T a, H b) { return a >= operand(a, b); }, py::is_operator())
      .def("__eq__", [](T a, H b) { return a == operand(a, b); }, py::is_operator())
      .def("__ne__", [](T a, H b) { return a != operand(a, b); }, py::is_operator())
      .def("__neg__", &Tensor::neg)
      .def("__pos__", [](T a) { return a; })
      .def("__abs__", &Tensor::abs)
      .def("__invert__", &invert)
      .def("__getitem__", &index)
      // reductions: axis None (all), an int or a sequence
      .def("sum", [](T a, H axis, bool keepdim) { return a.sum(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The sum over axis (None: all, an int or a sequence)")
      .def("prod", [](T a, H axis, bool keepdim) { return a.prod(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The product over axis")
      .def("max", [](T a, H axis, bool keepdim) { return a.max(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The largest value over axis")
      .def("min", [](T a, H axis, bool keepdim) { return a.min(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The smallest value over axis")
      .def("mean", [](T a, H axis, bool keepdim) { return a.mean(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The mean over axis")
      .def("var", [](T a, H axis, bool keepdim, int64_t correction) { return a.var(ints_arg(axis), keepdim, correction); },
           py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1, "The variance over axis, with `correction` (1: the sample's)")
      .def("std", [](T a, H axis, bool keepdim, int64_t correction) { return a.std(ints_arg(axis), keepdim, correction); },
           py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1, "The standard deviation over axis, with `correction` (1: the sample's)")
      .def("any", [](T a, H axis, bool keepdim) { return a.any(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "Whether any value over axis is true")
      .def("all", [](T a, H axis, bool keepdim) { return a.all(ints_arg(axis), keepdim); }, py::arg("axis") = py::none(), py::arg("keepdim") = false, "Whether every value over axis is true")
      .def("argmax", &Tensor::argmax, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The index of the first largest value along axis (of all, flattened, for None), int32")
      .def("argmin", &Tensor::argmin, py::arg("axis") = py::none(), py::arg("keepdim") = false, "The index of the first smallest value along axis, int32")
      .def("cumsum", &Tensor::cumsum, py::arg("axis") = 0, "The running sum along axis")
      // movement
      .def("reshape", &reshaped, "One size may be -1 (inferred)")
      .def("view", &reshaped, "reshape's other name (torch's)")
      .def("permute", [](T a, py::args order) { return a.permute(ints_args(order)); }, "The axes in a new order")
      .def("expand", [](T a, py::args shape) {
        SymShape s = shape_args(shape);
        std::optional<Shape> fixed = static_shape(s);
        return fixed ? a.expand(*fixed) : a.expand(s);
      }, "Size-1 axes grow; -1 keeps an axis")
      .def("pad", [](T a, H padding, double value, const std::string& mode) {
        std::vector<std::pair<SInt, SInt>> p;
        for (H h : items_of(padding)) {
          if (h.is_none()) {
            p.emplace_back(0, 0);
            continue;
          }
          auto [before, after] = pair_of(h, "pad");
          p.emplace_back(sint_of(before), sint_of(after));
        }
        static const std::map<std::string, PadMode> modes = {
            {"constant", PadMode::constant}, {"edge", PadMode::edge}, {"reflect", PadMode::reflect}, {"wrap", PadMode::wrap}};
        auto m = modes.find(mode);
        if (m == modes.end()) throw Error("pad: unknown mode '" + mode + "' (constant, edge, reflect, wrap)");
        return a.pad(p, m->second, value);
      }, py::arg("padding"), py::arg("value") = 0.0, py::arg("mode") = "constant", "(before, after) per axis, or None to leave one")
      .def("shrink", [](T a, H bounds) {
        std::vector<std::pair<SInt, SInt>> b;
        size_t axis = 0;
        for (H h : items_of(bounds)) {
          if (h.is_none()) {
            if (axis >= a.shape().size()) throw ShapeError("shrink: more bounds than axes in " + shape_to_string(a.shape()));
            b.emplace_back(0, a.symbolic_shape()[axis]);
          } else {
            auto [start, end] = pair_of(h, "shrink");
            b.emplace_back(sint_of(start), sint_of(end));
          }
          ++axis;
        }
        return a.shrink(b);
      }, py::arg("bounds"), "(start, end) per axis, or None to keep one")
      .def("flip", [](T a, H axis) { return a.flip(ints_arg(axis)); }, py::arg("axis"), "Reversed along each axis given")
      .def("transpose", &Tensor::transpose, py::arg("dim0") = -2, py::arg("dim1") = -1, "Two axes swapped")
      .def_property_readonly("T", [](T a) {
        std::vector<int64_t> order;
        for (int64_t i = a.ndim(); i-- > 0;) order.push_back(i);
        return a.permute(order);
      }, "All axes reversed (a matrix transposed)")
      .def("squeeze", &Tensor::squeeze, py::arg("dim") = py::none(), "Without the size-1 axis dim (every size-1 axis, for None)")
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"), "With a new size-1 axis at dim")
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1, "The axes from start_dim to end_dim as one")
      .def("cat", [](T a, py::args others, int64_t dim) {
        std::vector<Tensor> all{a};
        for (const Tensor& o : tensors_of(others)) all.push_back(o);
        return Tensor::cat(all, dim);
      }, py::kw_only(), py::arg("dim") = 0, "This tensor and others joined along dim")
      .def_static("stack", [](py::args tensors, int64_t dim) { return Tensor::stack(tensors_of(tensors), dim); }, py::kw_only(), py::arg("dim") = 0, "Tensors of one shape stacked along a new axis dim")
      .def("split", [](T a, H sizes, int64_t dim) {
        return is_int(sizes) ? a.split(int_of(sizes), dim) : a.split(ints_arg(sizes), dim);
      }, py::arg("sizes"), py::arg("dim") = 0, "Pieces along dim: of `sizes` each (an int) or of the sizes listed")
      .def("chunk", &Tensor::chunk, py::arg("chunks"), py::arg("dim") = 0, "Split into `chunks` pieces of equal size (the last may be smaller)")
      .def("repeat", [](T a, py::args repeats) { return a.repeat(ints_args(repeats)); }, "Tiled: each axis repeated as many times as given (torch.Tensor.repeat)")
      .def("gather", [](T a, int64_t dim, T index) { return a.gather(dim, index); }, py::arg("dim"), py::arg("index"), "out[i][j] = x[index[i][j]][j] along dim, as torch.gather")
      .def("contiguous", &Tensor::contiguous, "A copy in a fresh buffer when realized (a realize point inside a graph)")
      // compound
      .def("matmul", [](T a, H b) { return a.matmul(operand(a, b)); }, py::arg("other"), "The matrix product (x @ other): vectors, matrices and batches broadcast as numpy.matmul")
      .def("dot", [](T a, H b) { return a.matmul(operand(a, b)); }, py::arg("other"), "matmul's other name")
      .def_static("einsum", [](const std::string& eq, py::args operands) { return Tensor::einsum(eq, tensors_of(operands)); }, py::arg("equation"), "Einstein summation as numpy.einsum (ij,jk->ik, repeated labels, ...); the first operand's dtype")
      .def("softmax", &Tensor::softmax, py::arg("axis") = -1, "e^x normalized to sum to 1 along axis")
      .def("log_softmax", &Tensor::log_softmax, py::arg("axis") = -1, "log(softmax(x)), computed without overflow")
      .def("layernorm", [](T a, H axis, double eps) { return a.layernorm(ints_arg(axis), eps); }, py::arg("axis") = -1, py::arg("eps") = 1e-5, "Normalized to mean 0 and variance 1 over axis (no scale or shift)")
      .def("conv2d", [](T x, H weight, H bias, int64_t groups, H stride, H dilation, H padding) {
        size_t n = spatial_axes(x, "conv2d");
        return x.conv(tensor_of(weight, std::nullopt), optional_tensor(bias), window_arg(n, stride, padding, dilation), groups);
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0, "Convolution over every axis after N and C (1-d, 2-d, 3-d ...): weight (O, C/groups, K...)")
      .def("conv_transpose2d", [](T x, H weight, H bias, int64_t groups, H stride, H dilation, H padding, H output_padding) {
        size_t n = spatial_axes(x, "conv_transpose2d");
        return x.conv_transpose(tensor_of(weight, std::nullopt), optional_tensor(bias), window_arg(n, stride, padding, dilation),
                                per_axis(output_padding, n, "output_padding"), groups);
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("output_padding") = 0, "Its adjoint: weight (C, O/groups, K...)")
      .def("max_pool2d", [](T x, H kernel_size, H stride, H dilation, H padding, bool ceil_mode) {
        size_t n = spatial_axes(x, "max_pool2d");
        return x.max_pool(per_axis(kernel_size, n, "kernel_size"), window_arg(n, stride, padding, dilation, ceil_mode));
      }, py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false, "The maximum of each window over the spatial axes (any number of them); padding counts as -inf")
      .def("avg_pool2d", [](T x, H kernel_size, H stride, H dilation, H padding, bool ceil_mode, bool count_include_pad) {
        size_t n = spatial_axes(x, "avg_pool2d");
        return x.avg_pool(per_axis(kernel_size, n, "kernel_size"), window_arg(n, stride, padding, dilation, ceil_mode), count_include_pad);
      }, py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false,
         py::arg("count_include_pad") = true, "The mean of each window over the spatial axes (any number of them); count_include_pad counts padding as zeros, in the divisor too")
      .def("scaled_dot_product_attention", [](T q, T k, T v, bool is_causal) { return q.scaled_dot_product_attention(k, v, is_causal); },
           py::arg("key"), py::arg("value"), py::arg("is_causal") = false, "softmax(q k^T / sqrt(d) [+ a causal mask]) v over the last two axes");
  for (const UnaryOp& op : kUnaryOps) t.def(op.name, op.fn, op.doc);
  bind_buffer_protocol(t);
  bind_dlpack(t);

  m.def("prepare", [](py::args tensors, std::optional<int> threads, std::optional<std::string> backend, std::optional<bool> optimize,
                      std::optional<int> beam) { return prepare_plan(tensors_of(tensors), threads, backend, optimize, beam); },
        py::kw_only(), LATHE_PREPARE_ARGS, "Several tensors compiled into one Plan, outputs in order");
}

}  // namespace lathe::python
