"""lathe.Tensor against PyTorch over a table of ops, in the style of tinygrad's op tests: every op
at shapes that include empty axes, ones and primes, with broadcasting, in the dtypes it claims,
with Python scalars on either side; then creation, indexing, dtypes and errors."""

import numpy as np
import pytest
import torch

import lathe
from lathe import Tensor

RNG = np.random.default_rng(7)
SHAPES = [(), (1,), (0,), (7,), (3, 5), (2, 3, 13), (2, 0, 3)]
FLOAT_TOL = dict(rtol=1e-5, atol=1e-6)


def data(shape, dtype=np.float32, low=-3.0, high=3.0):
    if np.dtype(dtype).kind == "b":
        return np.asarray(RNG.random(shape) < 0.5)
    if np.dtype(dtype).kind in "iu":
        return np.asarray(RNG.integers(int(low), int(high) + 1, size=shape).astype(dtype))
    return np.asarray(RNG.uniform(low, high, size=shape).astype(dtype))


def same(got, want, rtol=1e-5, atol=1e-6):
    """`got` (a lathe Tensor) has torch tensor `want`'s shape, dtype and values."""
    g = got.numpy()
    w = want.detach().numpy()
    assert g.shape == w.shape, f"shape {g.shape} != torch's {w.shape}"
    assert g.dtype == w.dtype, f"dtype {g.dtype} != torch's {w.dtype}"
    if g.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


# ---- elementwise, one operand -----------------------------------------------------------------------

# name: (lathe, torch, low, high, tolerance)
UNARY = {
    "neg": (lambda x: -x, lambda x: -x, -3, 3, FLOAT_TOL),
    "abs": (abs, torch.abs, -3, 3, FLOAT_TOL),
    "exp": (Tensor.exp, torch.exp, -3, 3, FLOAT_TOL),
    "exp2": (Tensor.exp2, torch.exp2, -3, 3, FLOAT_TOL),
    "expm1": (Tensor.expm1, torch.expm1, -1e-3, 1e-3, dict(rtol=1e-6, atol=0)),
    "log": (Tensor.log, torch.log, 0.1, 5, FLOAT_TOL),
    "log1p": (Tensor.log1p, torch.log1p, -1e-3, 1e-3, dict(rtol=1e-6, atol=0)),
    "log2": (Tensor.log2, torch.log2, 0.1, 5, FLOAT_TOL),
    "sqrt": (Tensor.sqrt, torch.sqrt, 0, 5, FLOAT_TOL),
    "rsqrt": (Tensor.rsqrt, torch.rsqrt, 0.1, 5, dict(rtol=1e-5, atol=1e-5)),
    "reciprocal": (Tensor.reciprocal, torch.reciprocal, 0.5, 5, FLOAT_TOL),
    "sin": (Tensor.sin, torch.sin, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "cos": (Tensor.cos, torch.cos, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "tan": (Tensor.tan, torch.tan, -1.2, 1.2, dict(rtol=1e-4, atol=1e-5)),
    "asin": (Tensor.asin, torch.asin, -0.99, 0.99, dict(rtol=1e-5, atol=1e-5)),
    "acos": (Tensor.acos, torch.acos, -0.99, 0.99, dict(rtol=1e-5, atol=1e-5)),
    "atan": (Tensor.atan, torch.atan, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "sinh": (Tensor.sinh, torch.sinh, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "cosh": (Tensor.cosh, torch.cosh, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "asinh": (Tensor.asinh, torch.asinh, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "acosh": (Tensor.acosh, torch.acosh, 1.01, 4, dict(rtol=1e-5, atol=1e-5)),
    "atanh": (Tensor.atanh, torch.atanh, -0.95, 0.95, dict(rtol=1e-5, atol=1e-5)),
    "relu": (Tensor.relu, torch.relu, -3, 3, FLOAT_TOL),
    "sigmoid": (Tensor.sigmoid, torch.sigmoid, -6, 6, FLOAT_TOL),
    "tanh": (Tensor.tanh, torch.tanh, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "gelu": (Tensor.gelu, lambda x: torch.nn.functional.gelu(x, approximate="tanh"), -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "silu": (Tensor.silu, torch.nn.functional.silu, -3, 3, FLOAT_TOL),
    "softplus": (Tensor.softplus, torch.nn.functional.softplus, -30, 30, dict(rtol=1e-5, atol=1e-5)),
    "softsign": (Tensor.softsign, torch.nn.functional.softsign, -3, 3, FLOAT_TOL),
    "mish": (Tensor.mish, torch.nn.functional.mish, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "elu": (lambda x: x.elu(0.7), lambda x: torch.nn.functional.elu(x, 0.7), -3, 3, FLOAT_TOL),
    "celu": (lambda x: x.celu(1.3), lambda x: torch.nn.functional.celu(x, 1.3), -3, 3, FLOAT_TOL),
    "selu": (Tensor.selu, torch.nn.functional.selu, -3, 3, FLOAT_TOL),
    "leaky_relu": (lambda x: x.leaky_relu(0.2), lambda x: torch.nn.functional.leaky_relu(x, 0.2), -3, 3, FLOAT_TOL),
    "hardsigmoid": (Tensor.hardsigmoid, torch.nn.functional.hardsigmoid, -4, 4, FLOAT_TOL),
    "hardswish": (Tensor.hardswish, torch.nn.functional.hardswish, -4, 4, FLOAT_TOL),
    "erf": (Tensor.erf, torch.erf, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "floor": (Tensor.floor, torch.floor, -3, 3, FLOAT_TOL),
    "ceil": (Tensor.ceil, torch.ceil, -3, 3, FLOAT_TOL),
    "round": (Tensor.round, torch.round, -3, 3, FLOAT_TOL),
    "trunc": (Tensor.trunc, torch.trunc, -3, 3, FLOAT_TOL),
    "sign": (Tensor.sign, torch.sign, -3, 3, FLOAT_TOL),
    "clip": (lambda x: x.clip(-1, 0.5), lambda x: torch.clamp(x, -1, 0.5), -3, 3, FLOAT_TOL),
    "square": (lambda x: x * x, lambda x: x * x, -3, 3, FLOAT_TOL),
    "pow_scalar": (lambda x: x**3, lambda x: x**3, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "scalar_pow": (lambda x: 2.0**x, lambda x: 2.0**x, -3, 3, dict(rtol=1e-5, atol=1e-5)),
    "sqrt_of_mul": (lambda x: (x * 2.5 + 4).sqrt(), lambda x: (x * 2.5 + 4).sqrt(), -1.5, 3, FLOAT_TOL),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op, shape):
    ours, theirs, low, high, tol = UNARY[op]
    x = data(shape, low=low, high=high)
    same(ours(Tensor(x)), theirs(torch.from_numpy(x)), **tol)


OTHER_DTYPES = [(op, dt) for dt in (np.float16, np.float64) for op in ("neg", "abs", "relu", "square", "exp", "sqrt_of_mul", "sigmoid")] + [
    (op, dt) for dt in (np.int32, np.int8, np.int64) for op in ("neg", "abs", "relu", "square")] + [("abs", np.uint8), ("square", np.uint8)]


@pytest.mark.parametrize("op,dtype", OTHER_DTYPES, ids=str)
def test_unary_in_other_dtypes(op, dtype):
    ours, theirs, low, high, _ = UNARY[op]
    x = data((3, 17), dtype, low=0 if np.dtype(dtype).kind == "u" else low, high=high)
    if dtype == np.float16:  # torch 1.13 lacks many half ops on the CPU: its float32 result, rounded
        same(ours(Tensor(x)), theirs(torch.from_numpy(x).float()).half(), rtol=2e-3, atol=2e-3)
    else:
        same(ours(Tensor(x)), theirs(torch.from_numpy(x)), rtol=1e-6, atol=1e-6)


# ---- elementwise, two operands, broadcast ---------------------------------------------------------

BROADCAST = [((3, 5), (5,)), ((3, 1), (1, 4)), ((1,), (7,)), ((2, 0, 3), (3,)), ((13,), (13,)), ((), (2, 3)), ((2, 1, 3), (4, 1))]

BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "maximum": (Tensor.maximum, torch.maximum),
    "minimum": (Tensor.minimum, torch.minimum),
    "lt": (lambda a, b: a < b, lambda a, b: a < b),
    "le": (lambda a, b: a <= b, lambda a, b: a <= b),
    "gt": (lambda a, b: a > b, lambda a, b: a > b),
    "ge": (lambda a, b: a >= b, lambda a, b: a >= b),
    "eq": (lambda a, b: a == b, lambda a, b: a == b),
    "ne": (lambda a, b: a != b, lambda a, b: a != b),
    "floordiv": (lambda a, b: a // b, lambda a, b: a // b),
    "mod": (lambda a, b: a % b, lambda a, b: a % b),
    "pow": (lambda a, b: a**b, lambda a, b: a**b),
}


def operands(op, sa, sb, dtype):
    a = data(sa, dtype)
    b = data(sb, dtype)
    if op in ("div", "floordiv", "mod"):
        b = np.where(b == 0, 2, b).astype(dtype)  # no division by zero
        if op != "div":
            b = np.where(np.abs(b) < 0.5, 1.5, b).astype(dtype)
    if op == "pow":
        a = np.abs(a).astype(dtype) + (1 if np.dtype(dtype).kind == "f" else 0)
        b = np.clip(b, 0, 3).astype(dtype)
    if op in ("eq", "ne") and np.dtype(dtype).kind == "f":
        a, b = np.round(a), np.round(b)  # floats that are sometimes equal
    return np.asarray(a, dtype), np.asarray(b, dtype)


@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_float32(op, shapes):
    ours, theirs = BINARY[op]
    a, b = operands(op, *shapes, np.float32)
    same(ours(Tensor(a), Tensor(b)), theirs(torch.from_numpy(a), torch.from_numpy(b)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes", BROADCAST[:4], ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum", "lt", "eq", "floordiv", "mod", "pow"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16])
def test_binary_integers(op, shapes, dtype):
    ours, theirs = BINARY[op]
    a, b = operands(op, *shapes, dtype)
    same(ours(Tensor(a), Tensor(b)), theirs(torch.from_numpy(a), torch.from_numpy(b)))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "lt", "eq", "floordiv", "mod", "pow"])
@pytest.mark.parametrize("scalar", [2, 2.5, -3])
def test_python_scalars_on_either_side(op, scalar):
    ours, theirs = BINARY[op]
    x = data((4, 5), np.float32, low=0.5, high=3)
    same(ours(Tensor(x), scalar), theirs(torch.from_numpy(x), scalar), rtol=1e-5, atol=1e-5)
    same(ours(scalar, Tensor(x)), theirs(scalar, torch.from_numpy(x)), rtol=1e-5, atol=1e-5)


def test_an_int_scalar_keeps_an_int_tensor_int_and_a_float_one_makes_it_float():
    x = data((6,), np.int32)
    assert (Tensor(x) + 1).dtype == lathe.dtypes.int32
    assert (Tensor(x) * 1.5).dtype == lathe.dtypes.float32
    np.testing.assert_allclose((Tensor(x) * 1.5).numpy(), x * np.float32(1.5))


@pytest.mark.parametrize("op", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8])
def test_bitwise(op, dtype):
    a, b = data((3, 7), dtype, 0, 100), data((7,), dtype, 0, 100)
    fn = {"and": lambda p, q: p & q, "or": lambda p, q: p | q, "xor": lambda p, q: p ^ q}[op]
    same(fn(Tensor(a), Tensor(b)), fn(torch.from_numpy(a), torch.from_numpy(b)))


def test_invert_and_shifts():
    b = data((9,), np.bool_)
    same(~Tensor(b), ~torch.from_numpy(b))
    i = data((9,), np.int32, -50, 50)
    same(~Tensor(i), ~torch.from_numpy(i))
    u = data((9,), np.int32, 0, 1000)
    same(Tensor(u) << 3, torch.from_numpy(u) << 3)
    same(Tensor(u) >> 2, torch.from_numpy(u) >> 2)
    with pytest.raises(lathe.DTypeError):
        ~Tensor(data((3,)))


def test_where():
    c = data((3, 4), np.bool_)
    x, y = data((3, 4)), data((4,))
    same(Tensor(c).where(Tensor(x), Tensor(y)), torch.where(torch.from_numpy(c), torch.from_numpy(x), torch.from_numpy(y)))
    same(Tensor(c).where(Tensor(x), 0.0), torch.where(torch.from_numpy(c), torch.from_numpy(x), torch.tensor(0.0)))
    np.testing.assert_array_equal(Tensor(c).where(1, 2).numpy(), np.where(c, 1, 2).astype(np.int32))


# ---- reductions ------------------------------------------------------------------------------------

REDUCE = {
    "sum": (lambda x, a, k: x.sum(a, k), lambda x, a, k: x.sum(dim=a, keepdim=k) if a is not None else (x.sum().reshape([1] * x.ndim) if k else x.sum())),
    "mean": (lambda x, a, k: x.mean(a, k), lambda x, a, k: x.mean(dim=a, keepdim=k) if a is not None else (x.mean().reshape([1] * x.ndim) if k else x.mean())),
    "max": (lambda x, a, k: x.max(a, k), lambda x, a, k: torch.amax(x, dim=a if a is not None else tuple(range(x.ndim)), keepdim=k)),
    "min": (lambda x, a, k: x.min(a, k), lambda x, a, k: torch.amin(x, dim=a if a is not None else tuple(range(x.ndim)), keepdim=k)),
    "prod": (lambda x, a, k: x.prod(a, k), lambda x, a, k: x.prod(dim=a, keepdim=k) if isinstance(a, int) else None),
    "var": (lambda x, a, k: x.var(a, k), lambda x, a, k: x.var(dim=a, keepdim=k) if a is not None else x.var()),
    "std": (lambda x, a, k: x.std(a, k), lambda x, a, k: x.std(dim=a, keepdim=k) if a is not None else x.std()),
}
REDUCE_CASES = [((3, 5), None), ((3, 5), 0), ((3, 5), -1), ((2, 3, 13), (0, 2)), ((2, 3, 13), 1), ((1,), 0), ((7,), None), ((11, 1, 3), (1,))]


# torch.prod takes one axis, and torch's var/std of everything no keepdim: those cases are not asked of it.
REDUCE_TABLE = [(op, case, keepdim) for op in sorted(REDUCE) for case in REDUCE_CASES for keepdim in (False, True)
                if not (op == "prod" and not isinstance(case[1], int)) and not (op in ("var", "std") and case[1] is None and keepdim)]


@pytest.mark.parametrize("op,case,keepdim", REDUCE_TABLE, ids=str)
def test_reductions(op, case, keepdim):
    shape, axis = case
    ours, theirs = REDUCE[op]
    x = data(shape, low=0.5, high=1.5)
    want = theirs(torch.from_numpy(x), axis, keepdim)
    same(ours(Tensor(x), axis, keepdim), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 13), (7,)], ids=str)
def test_argmax_argmin_cumsum_any_all(shape):
    x = data(shape)
    t = torch.from_numpy(x)
    same(Tensor(x).argmax(-1), torch.argmax(t, -1).int())
    same(Tensor(x).argmin(0), torch.argmin(t, 0).int())
    assert Tensor(x).argmax().item() == int(np.argmax(x))
    same(Tensor(x).cumsum(0), torch.cumsum(t, 0), rtol=1e-5, atol=1e-5)
    b = x > 0
    same(Tensor(b).any(0), torch.from_numpy(b).any(0))
    same(Tensor(b).all(-1), torch.from_numpy(b).all(-1))


def test_integer_sums_and_empty_reductions():
    x = data((4, 9), np.int32, -100, 100)
    same(Tensor(x).sum(1), torch.from_numpy(x).sum(1).int())
    e = np.zeros((0, 3), np.float32)
    same(Tensor(e).sum(0), torch.from_numpy(e).sum(0))
    assert Tensor(e).sum().item() == 0.0


# ---- movement and indexing ---------------------------------------------------------------------------

def test_movement():
    x = data((2, 3, 5))
    t = torch.from_numpy(x)
    L = Tensor(x)
    same(L.reshape(6, 5), t.reshape(6, 5))
    same(L.reshape((5, -1)), t.reshape(5, -1))
    same(L.permute(2, 0, 1), t.permute(2, 0, 1))
    same(L.transpose(0, 2), t.transpose(0, 2))
    same(L.T, t.permute(2, 1, 0))
    same(L[:, :1].expand(2, 4, 5), t[:, :1].expand(2, 4, 5))
    same(L.flip(1), t.flip(1))
    same(L.flip((0, 2)), t.flip((0, 2)))
    same(L.unsqueeze(1), t.unsqueeze(1))
    same(L.reshape(2, 1, 15).squeeze(1), t.reshape(2, 1, 15).squeeze(1))
    same(L.flatten(), t.flatten())
    same(L.flatten(1), t.flatten(1))
    same(L.pad([(0, 0), (1, 2), (3, 0)], value=1.5), torch.nn.functional.pad(t, (3, 0, 1, 2), value=1.5))
    same(L.pad([None, None, (2, 2)], mode="reflect"), torch.nn.functional.pad(t, (2, 2), mode="reflect"))
    same(L.shrink([None, (1, 3), (0, 4)]), t[:, 1:3, 0:4])
    same(L.cat(L * 2, dim=1), torch.cat([t, t * 2], 1))
    same(Tensor.stack(L, L + 1, dim=-1), torch.stack([t, t + 1], -1))
    for ours, theirs in zip(L.split(2, dim=2), t.split(2, dim=2)):
        same(ours, theirs)
    for ours, theirs in zip(L.split([1, 4], dim=2), t.split([1, 4], dim=2)):
        same(ours, theirs)
    for ours, theirs in zip(L.chunk(2, dim=1), t.chunk(2, dim=1)):
        same(ours, theirs)
    same(L.repeat(2, 1, 3), t.repeat(2, 1, 3))
    idx = RNG.integers(0, 3, size=(2, 4, 5)).astype(np.int64)
    same(L.gather(1, Tensor(idx)), torch.gather(t, 1, torch.from_numpy(idx)))
    same(L.contiguous(), t.contiguous())


@pytest.mark.parametrize(
    "key",
    [0, -1, 1, (slice(None), 2), (Ellipsis, 3), (None, 1), slice(0, 1), (slice(None, None, -1),), (slice(1, None, 2), slice(None), slice(4, 0, -2)),
     (1, Ellipsis, None), (slice(-5, 99),), ()],
    ids=str,
)
def test_basic_indexing_as_numpy(key):
    x = data((3, 4, 5))
    np.testing.assert_array_equal(Tensor(x)[key].numpy(), x[key])


def test_bad_indices_are_index_errors():
    t = Tensor(data((3, 4)))
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(IndexError):
        t[[0, 1]]
    with pytest.raises(ValueError):
        t[::0]


# ---- compound ops -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((1, 1), (1, 1)), ((7, 13), (13, 5)), ((13,), (13, 3)), ((4, 13), (13,)), ((2, 3, 7, 11), (11, 5)), ((2, 1, 5, 3), (4, 3, 2)), ((0, 3), (3, 4)), ((5, 0), (0, 2))], ids=str)
def test_matmul(shapes):
    a, b = data(shapes[0]), data(shapes[1])
    same(Tensor(a) @ Tensor(b), torch.from_numpy(a) @ torch.from_numpy(b), rtol=1e-5, atol=1e-5)


def test_matmul_of_integers():
    a, b = data((5, 7), np.int32), data((7, 3), np.int32)
    same(Tensor(a) @ Tensor(b), torch.from_numpy(a) @ torch.from_numpy(b))


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_softmax_family(axis):
    x = data((3, 7, 5), low=-10, high=10)
    t = torch.from_numpy(x)
    same(Tensor(x).softmax(axis), torch.softmax(t, axis), rtol=1e-5, atol=1e-6)
    same(Tensor(x).log_softmax(axis), torch.log_softmax(t, axis), rtol=1e-5, atol=1e-5)
    same(Tensor(x).layernorm(axis), torch.nn.functional.layer_norm(t.movedim(axis, -1), (t.shape[axis],)).movedim(-1, axis), rtol=1e-4, atol=1e-4)


CONVS = [
    # input, weight, stride, padding, dilation, groups
    ((1, 1, 5, 5), (1, 1, 3, 3), 1, 0, 1, 1),
    ((2, 3, 11, 7), (4, 3, 3, 3), 1, 1, 1, 1),
    ((2, 4, 13, 13), (6, 2, 3, 5), 2, (1, 2), 1, 2),
    ((1, 3, 9, 9), (5, 3, 3, 3), 1, 2, 2, 1),
    ((2, 6, 8, 8), (6, 1, 3, 3), 1, 1, 1, 6),
    ((2, 3, 17), (4, 3, 5), 2, 2, 1, 1),
    ((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), 1, 1, 1, 1),
]


@pytest.mark.parametrize("case", CONVS, ids=str)
def test_convolution(case):
    shape, wshape, stride, padding, dilation, groups = case
    x, w, bias = data(shape), data(wshape), data((wshape[0],))
    conv = {3: torch.nn.functional.conv1d, 4: torch.nn.functional.conv2d, 5: torch.nn.functional.conv3d}[len(shape)]
    want = conv(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias), stride=stride, padding=padding, dilation=dilation, groups=groups)
    got = Tensor(x).conv2d(Tensor(w), Tensor(bias), groups=groups, stride=stride, dilation=dilation, padding=padding)
    same(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [((1, 2, 5, 5), (2, 3, 3, 3), 2, 1, 1, 1, 1), ((2, 4, 6, 7), (4, 2, 3, 2), 1, 0, 0, 2, 1), ((1, 3, 4, 4), (3, 2, 4, 4), 2, 1, 1, 1, 2)], ids=str)
def test_transposed_convolution(case):
    shape, wshape, stride, padding, output_padding, groups, dilation = case
    x, w = data(shape), data(wshape)
    want = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=stride, padding=padding,
                                                output_padding=output_padding, groups=groups, dilation=dilation)
    got = Tensor(x).conv_transpose2d(Tensor(w), groups=groups, stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    same(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [((1, 1, 6, 6), 2, None, 0), ((2, 3, 11, 9), 3, 2, 1), ((1, 2, 7, 8), (2, 3), (1, 2), 0)], ids=str)
def test_pools(case):
    shape, kernel, stride, padding = case
    x = data(shape)
    t = torch.from_numpy(x)
    same(Tensor(x).max_pool2d(kernel, stride, padding=padding), torch.nn.functional.max_pool2d(t, kernel, stride, padding))
    same(Tensor(x).avg_pool2d(kernel, stride, padding=padding), torch.nn.functional.avg_pool2d(t, kernel, stride, padding), rtol=1e-5, atol=1e-6)
    same(Tensor(x).avg_pool2d(kernel, stride, padding=padding, count_include_pad=False),
         torch.nn.functional.avg_pool2d(t, kernel, stride, padding, count_include_pad=False), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_attention(causal):
    q, k, v = data((2, 3, 7, 8)), data((2, 3, 5, 8)), data((2, 3, 5, 4))
    if causal:
        k, v = data((2, 3, 7, 8)), data((2, 3, 7, 4))
    want = torch.nn.functional.scaled_dot_product_attention(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal) \
        if hasattr(torch.nn.functional, "scaled_dot_product_attention") else None
    if want is None:  # torch before 2.0: the definition itself
        s = torch.from_numpy(q) @ torch.from_numpy(k).transpose(-2, -1) / np.sqrt(8)
        if causal:
            s = s.masked_fill(torch.ones(7, 7, dtype=torch.bool).triu(1), float("-inf"))
        want = torch.softmax(s, -1) @ torch.from_numpy(v)
    same(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=causal), want, rtol=1e-4, atol=1e-5)


def test_einsum():
    a, b, c = data((3, 4)), data((4, 5)), data((2, 3, 3))
    same(Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(b)), torch.einsum("ij,jk->ik", torch.from_numpy(a), torch.from_numpy(b)), rtol=1e-5, atol=1e-5)
    same(Tensor.einsum("bii->b", Tensor(c)), torch.einsum("bii->b", torch.from_numpy(c)), rtol=1e-5, atol=1e-5)


# ---- creation, dtypes, data out -----------------------------------------------------------------------

def test_creation():
    np.testing.assert_array_equal(Tensor.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(Tensor.ones((4,), dtype="int8").numpy(), np.ones(4, np.int8))
    np.testing.assert_array_equal(Tensor.full((2, 2), 7).numpy(), np.full((2, 2), 7, np.int32))
    np.testing.assert_array_equal(Tensor.full((3,), 0.5, dtype=np.float64).numpy(), np.full(3, 0.5))
    np.testing.assert_array_equal(Tensor.full((2,), True).numpy(), np.array([True, True]))
    np.testing.assert_array_equal(Tensor.arange(5).numpy(), np.arange(5, dtype=np.int32))
    np.testing.assert_allclose(Tensor.arange(1, 2, 0.25).numpy(), np.arange(1, 2, 0.25, dtype=np.float32))
    np.testing.assert_array_equal(Tensor.arange(10, 0, -3).numpy(), np.arange(10, 0, -3, dtype=np.int32))
    np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
    assert Tensor.empty(0, 4).shape == (0, 4)
    r = Tensor.rand(1000, seed=3).numpy()
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.05
    np.testing.assert_array_equal(Tensor.rand(5, seed=3).numpy(), Tensor.rand(5, seed=3).numpy())
    n = Tensor.randn(4000, seed=1).numpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1


def test_construction_from_python_data_follows_tinygrad():
    assert Tensor([1, 2, 3]).dtype == lathe.dtypes.int32
    assert Tensor([1.0, 2.0]).dtype == lathe.dtypes.float32
    assert Tensor([True, False]).dtype == lathe.dtypes.bool
    assert Tensor(3).shape == () and Tensor(3).item() == 3
    assert Tensor(2.5).item() == 2.5
    assert Tensor(np.arange(3, dtype=np.int64)).dtype == lathe.dtypes.int64  # an array keeps its dtype
    assert Tensor([1, 2], dtype="float16").dtype == lathe.dtypes.float16
    assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert Tensor(Tensor([1.5])).tolist() == [1.5]


@pytest.mark.parametrize("to", ["float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"])
def test_cast(to):
    x = data((5, 7), low=0, high=100)
    got = Tensor(x).cast(to).numpy()
    want = x.astype(to)  # numpy: torch 1.13 has no uint16/32/64
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_bitcast_and_bfloat16():
    x = data((6,))
    np.testing.assert_array_equal(Tensor(x).bitcast(lathe.dtypes.int32).numpy(), x.view(np.int32))
    b = Tensor(x).cast("bfloat16")
    assert b.dtype == lathe.dtypes.bfloat16
    np.testing.assert_array_equal(b.numpy(), torch.from_numpy(x).bfloat16().float().numpy())  # numpy reads bfloat16 as float32


def test_dtypes_compare_with_names_and_numpy():
    d = Tensor([1.0]).dtype
    assert d == lathe.dtypes.float32 and d == "float32" and d == np.float32 and d != "int32"
    assert d.itemsize == 4 and d.is_float and d.np == np.dtype("float32")
    assert repr(lathe.dtypes.bool) == "dtypes.bool"
    assert len({lathe.dtypes.float32, lathe.dtypes.float32}) == 1


def test_scalars_out():
    t = Tensor([[2.5]])
    assert t.item() == 2.5 and float(t) == 2.5 and int(t) == 2 and bool(t)
    assert isinstance(Tensor([3]).item(), int)
    with pytest.raises(lathe.ShapeError):
        Tensor([1, 2]).item()
    with pytest.raises(ValueError):
        bool(Tensor([1, 2]))
    assert len(Tensor.zeros(4, 2)) == 4
    with pytest.raises(TypeError):
        len(Tensor(1))


def test_realize_is_in_place_and_lazy_until_then():
    t = Tensor([1.0, 2.0]) * 3
    assert not t.is_realized
    assert t.realize() is t and t.is_realized
    np.testing.assert_array_equal(np.asarray(t), [3.0, 6.0])
    assert "lazy" in repr(Tensor([1.0]) + 1)


# ---- errors -----------------------------------------------------------------------------------------------

def test_errors_name_the_op_and_shapes():
    with pytest.raises(lathe.ShapeError, match=r"\(3, 4\)"):
        Tensor.zeros(3, 4) + Tensor.zeros(5)
    with pytest.raises(lathe.ShapeError):
        Tensor.zeros(3, 4) @ Tensor.zeros(3, 4)
    with pytest.raises(lathe.ShapeError):
        Tensor.zeros(6).reshape(4, 2)
    with pytest.raises(lathe.DTypeError):
        Tensor.zeros(2).cast("complex64")
    with pytest.raises(lathe.DTypeError):
        Tensor(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        Tensor.zeros("x")
    with pytest.raises(lathe.Error):
        Tensor.arange(0, 5, 0)
    with pytest.raises(lathe.ShapeError):
        Tensor.zeros(4).conv2d(Tensor.zeros(1, 1, 1))


# ---- arguments of every kind, and Python's own semantics ---------------------------------------------

def test_sizes_and_pairs_from_sequences_that_make_new_items():
    x = Tensor.ones(3, 4)
    assert Tensor.zeros(np.array([2, 3])).shape == (2, 3)
    assert Tensor.zeros(range(300, 302)).shape == (300, 301)
    assert Tensor.full(np.array([2, 2]), 1).tolist() == [[1, 1], [1, 1]]
    assert x.shrink(np.array([[1, 3], [0, 4]])).shape == (2, 4)
    assert x.pad(np.array([[1, 1], [0, 0]])).shape == (5, 4)
    assert x.reshape(range(12, 13)).shape == (12,)
    assert Tensor.stack(np.ones((3, 2), np.float32)).shape == (3, 2)
    assert Tensor.ones(1, 1, 4, 4).conv2d(Tensor.ones(1, 1, 3, 3), padding=np.array([1, 1])).shape == (1, 1, 4, 4)
    np.testing.assert_array_equal(x.sum(axis=np.int64(0)).numpy(), np.full(4, 3, np.float32))


def test_ints_past_int32_and_past_int64():
    assert Tensor(2**40).dtype == lathe.dtypes.int64 and Tensor(2**40).item() == 2**40
    assert Tensor([2**40, 1]).tolist() == [2**40, 1]
    assert Tensor.full((2,), 2**40).tolist() == [2**40, 2**40]
    with pytest.raises(OverflowError):
        Tensor.ones(2) + 2**70
    with pytest.raises(IndexError):
        Tensor.ones(2)[10**30]
    assert Tensor.arange(5)[-(10**30):10**30].tolist() == [0, 1, 2, 3, 4]  # slices clamp, as Python's


def test_float_floor_division_and_remainder_agree_with_python():
    a = data((200,), low=-5, high=5)
    b = np.where(np.abs(data((200,), low=-2, high=2)) < 0.05, 0.5, data((200,), low=-2, high=2)).astype(np.float32)
    np.testing.assert_array_equal((Tensor(a) // Tensor(b)).numpy(), a // b)
    np.testing.assert_allclose((Tensor(a) % Tensor(b)).numpy(), a % b, rtol=1e-5, atol=1e-5)
    assert (Tensor([1.0]) // 0.1).item() == 9.0  # floor(1.0 / 0.1) would say 10


def test_more_operators_and_keywords():
    np.testing.assert_array_equal((1 << Tensor([1, 2])).numpy(), [2, 4])
    np.testing.assert_array_equal((64 >> Tensor([1, 2])).numpy(), [32, 16])
    np.testing.assert_array_equal(Tensor([True, True]).logical_and(other=Tensor([False, True])).numpy(), [False, True])
    np.testing.assert_array_equal(Tensor([7, -7]).idiv(other=2).numpy(), [3, -3])


def test_bool_indices_are_refused_not_read_as_ints():
    with pytest.raises(IndexError, match="bool"):
        Tensor.ones(3)[True]
    with pytest.raises(IndexError, match="bool"):
        Tensor.ones(3)[np.bool_(False)]


def test_symbolic_tensors_report_their_bound_sizes():
    n = lathe.Variable("n", 1, 4)
    assert len(Tensor.zeros(n.bind(2), 3)) == 2
    assert Tensor.zeros(n.bind(1)).item() == 0.0
    assert Tensor.zeros(n.bind(3)).numpy().shape == (3,)


def test_lists_of_special_floats_and_of_ints_of_every_size():
    t = Tensor([float("nan"), float("inf"), -float("inf"), 1.5])
    assert t.dtype == lathe.dtypes.float32
    np.testing.assert_array_equal(t.numpy(), np.array([np.nan, np.inf, -np.inf, 1.5], np.float32))
    assert Tensor([-(2**31), 2**31 - 1]).dtype == lathe.dtypes.int32
    assert Tensor([2**31]).dtype == lathe.dtypes.int64
