// How numpy arrays and lathe tensors cross the binding: dtypes by name (lathe's names are numpy's,
// but bfloat16, which numpy lacks), arrays borrowed in place
// where lathe can read them (else copied), buffers handed to numpy without a copy, and owners of
// borrowed memory that take the interpreter lock before they let go of a Python object.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "lathe/lathe.hpp"

namespace lathe::python {

namespace py = pybind11;

/// The lathe dtype of a numpy array's elements; DTypeError for one lathe lacks (object, str, ...).
DType dtype_of_array(const py::array& a);
/// A dtype given as a lathe.DType, a name ("float32") or anything numpy.dtype() takes.
DType dtype_arg(py::handle given);

/// Keeps a Python object alive for as long as lathe holds memory it lends: the last holder lets go
/// under the interpreter lock (from whatever thread drops it).
std::shared_ptr<void> hold(py::object lender);

/// A lathe tensor with `a`'s values: a copy, always.
Tensor copy_of(const py::array& a);
/// A lathe tensor over `a`'s memory when lathe can read it in place (C-contiguous, aligned to its
/// element, in this machine's byte order, writeable), holding `a` alive; a copy otherwise.
Tensor borrow_or_copy(const py::array& a);
/// A numpy array over `buffer`'s memory (no copy; the array holds the buffer) when it is on the
/// host, else a copy; `shape`'s elements at the buffer's front. bfloat16 is widened to float32.
py::array array_over(const Buffer& buffer, const Shape& shape);
/// A new numpy array with a tensor's values (realized first), at its bound sizes.
py::array array_of(const Tensor& t);

/// Realizes `t` with the interpreter lock released: a copy is realized and assigned back under the
/// lock, so two Python threads may realize one tensor at once.
void realize_unlocked(Tensor& t);

/// A tensor's buffer, realized as realize_unlocked does; ShapeError naming `what` for a tensor of
/// symbolic shape (its buffer is sized for the maximum).
Buffer realized_buffer(Tensor& t, const char* what);

/// The sizes of a tensor at the values its variables are bound to.
Shape bound_shape(const Tensor& t);

}  // namespace lathe::python
