"""Memory shared with numpy and torch without copies, and its lifetime: what borrowed memory is
held by, that deleting the source early neither crashes nor reads freed memory, and that memory
lathe cannot read in place is copied instead."""

import gc
import threading

import numpy as np
import pytest
import torch

import lathe
from lathe import Tensor


def address(a):
    return a.__array_interface__["data"][0]


# ---- numpy in --------------------------------------------------------------------------------------

def test_from_numpy_borrows_contiguous_memory_and_sees_later_writes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_numpy(x)
    assert t.is_realized
    assert address(np.asarray(t)) == address(x)  # the same memory, both ways
    y = t * 2
    x[1, 2] = 100
    assert y.numpy()[1, 2] == 200


def test_the_constructor_copies():
    x = np.ones(5, np.float32)
    t = Tensor(x)
    x[:] = 7
    np.testing.assert_array_equal(t.numpy(), np.ones(5, np.float32))


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2],  # strided
        lambda: np.arange(24, dtype=np.float32).reshape(4, 6).T,  # Fortran order
        lambda: np.frombuffer(bytearray(4 * 9 + 1), dtype=np.uint8)[1:].view(np.float32),  # misaligned (read-only besides)
        lambda: np.arange(6, dtype=">f4"),  # big-endian: converted by the session layer, refused here
    ],
    ids=["strided", "fortran", "misaligned", "big-endian"],
)
def test_memory_lathe_cannot_read_in_place_is_copied_or_refused(make):
    x = make()
    if not x.dtype.isnative:
        with pytest.raises(lathe.DTypeError, match="byte order"):
            Tensor.from_numpy(x)
        return
    t = Tensor.from_numpy(x)
    np.testing.assert_array_equal(t.numpy(), x)
    assert address(np.asarray(t)) != address(x)


def test_a_read_only_array_is_copied_not_borrowed():
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    t = Tensor.from_numpy(x)
    assert address(np.asarray(t)) != address(x)
    np.testing.assert_array_equal((t + 1).numpy(), x + 1)


def test_deleting_the_array_early_keeps_its_memory_while_lathe_holds_it():
    x = np.arange(1 << 16, dtype=np.float32)
    t = Tensor.from_numpy(x)
    y = (t + 1).sum()
    del x
    gc.collect()
    np.testing.assert_allclose(y.item(), (np.arange(1 << 16, dtype=np.float64) + 1).sum(), rtol=1e-6)
    np.testing.assert_array_equal(t.numpy()[:3], [0, 1, 2])


def test_the_array_is_let_go_when_the_last_tensor_is():
    import weakref

    class Owner(np.ndarray):  # numpy arrays cannot be weakly referenced; a subclass can
        pass

    x = np.arange(10, dtype=np.float32).view(Owner)
    gone = weakref.ref(x)
    t = Tensor.from_numpy(x)
    del x
    gc.collect()
    assert gone() is not None
    u = t.reshape(2, 5)  # a view of the same buffer holds it too
    del t
    gc.collect()
    assert gone() is not None
    np.testing.assert_array_equal(u.numpy()[1], [5, 6, 7, 8, 9])
    del u
    gc.collect()
    assert gone() is None


def test_a_tensor_borrowed_in_another_thread_is_let_go_safely():
    x = np.arange(1000, dtype=np.float32)
    result = []

    def work():
        t = Tensor.from_numpy(x)
        result.append(float((t * 2).sum().item()))
        del t  # the last holder may drop it without the interpreter lock held elsewhere

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert result == [999000.0] * 4


# ---- numpy and torch out ------------------------------------------------------------------------

def test_buffer_protocol_views_a_realized_tensor_without_a_copy():
    t = (Tensor.arange(6).reshape(2, 3) * 2).realize()
    m = memoryview(t)
    assert m.shape == (2, 3) and m.format == "i"
    a = np.asarray(t)
    b = np.asarray(t)
    assert address(a) == address(b)  # both view the tensor's buffer
    np.testing.assert_array_equal(a, [[0, 2, 4], [6, 8, 10]])
    del t
    gc.collect()
    np.testing.assert_array_equal(a, [[0, 2, 4], [6, 8, 10]])  # the view holds the buffer


def test_a_constant_buffer_is_exported_read_only():
    a = np.asarray(Tensor.arange(4))  # arange's values are folded into plans: not to be written
    assert not a.flags.writeable


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64", "bool"])
def test_dlpack_to_numpy_and_torch(dtype):
    t = Tensor(np.arange(6).reshape(2, 3) % 2 == 1) if dtype == "bool" else Tensor(np.arange(6).reshape(2, 3)).cast(dtype)
    t.realize()
    want = np.asarray(t)
    if dtype != "bool":  # numpy 1.24 imports no DLPack bool
        np.testing.assert_array_equal(np.from_dlpack(t), want)
    back = Tensor.from_dlpack(t)  # lathe reads its own capsule, bool included
    assert back.dtype == t.dtype
    np.testing.assert_array_equal(back.numpy(), want)
    if dtype != "bool":  # torch 1.13 reads DLPack 0.6, which has no bool
        via_torch = torch.from_dlpack(t)
        np.testing.assert_array_equal(via_torch.numpy(), want)
        assert via_torch.data_ptr() == address(want)  # no copy


def test_an_exported_tensor_outlives_the_lathe_tensor():
    t = (Tensor.arange(1 << 12).cast("float32") + 0.5).realize()
    theirs = torch.from_dlpack(t)
    del t
    gc.collect()
    assert theirs[10].item() == 10.5
    assert theirs.sum().item() == pytest.approx(sum(i + 0.5 for i in range(1 << 12)))


def test_dlpack_device_and_a_symbolic_tensor_refused():
    t = Tensor([1.0, 2.0])
    assert t.__dlpack_device__() == (1, 0)
    n = lathe.Variable("n", 1, 4)
    s = Tensor.zeros(4, 2).shrink([(0, n.bind(2)), None])
    with pytest.raises(lathe.ShapeError, match="symbolic"):
        s.__dlpack__()
    assert s.numpy().shape == (2, 2)  # numpy() copies it at its bound size


# ---- torch (and numpy) in through DLPack ---------------------------------------------------------------

def test_from_dlpack_borrows_torch_memory_and_holds_it():
    src = torch.arange(10, dtype=torch.float32)
    t = Tensor.from_dlpack(src)
    src[3] = 30.0
    assert t.numpy()[3] == 30.0  # the same memory
    del src
    gc.collect()
    np.testing.assert_array_equal((t * 2).numpy()[:4], [0, 2, 4, 60])


def test_from_dlpack_copies_strided_memory():
    src = torch.arange(20, dtype=torch.int64).reshape(4, 5)[:, 1::2]
    t = Tensor.from_dlpack(src)
    np.testing.assert_array_equal(t.numpy(), src.numpy())
    src.zero_()
    assert t.numpy()[0, 0] == 1  # a copy


def test_from_dlpack_of_numpy_and_of_a_capsule():
    x = np.linspace(0, 1, 7, dtype=np.float64)
    np.testing.assert_array_equal(Tensor.from_dlpack(x).numpy(), x)
    capsule = torch.ones(3).__dlpack__()
    np.testing.assert_array_equal(Tensor.from_dlpack(capsule).numpy(), [1, 1, 1])
    with pytest.raises(lathe.Error, match="capsule"):
        Tensor.from_dlpack(capsule)  # used once already
    with pytest.raises(lathe.Error):
        Tensor.from_dlpack(object())


def test_round_trip_lathe_torch_lathe_shares_one_buffer():
    t = (Tensor.ones(3, 3) * 4).realize()
    back = Tensor.from_dlpack(torch.from_dlpack(t))
    assert address(np.asarray(back)) == address(np.asarray(t))
    del t
    gc.collect()
    np.testing.assert_array_equal(back.numpy(), np.full((3, 3), 4, np.float32))


def test_what_cannot_be_viewed_is_a_buffer_error_and_numpy_copies_it():
    n = lathe.Variable("n", 1, 8)
    for t in (Tensor([1.5]).cast("bfloat16"), Tensor.zeros(n.bind(3))):
        with pytest.raises(BufferError):
            memoryview(t)
    np.testing.assert_array_equal(np.asarray(Tensor([1.5]).cast("bfloat16")), [1.5])  # through __array__, as float32
    np.testing.assert_array_equal(np.asarray(Tensor.zeros(n.bind(3))), [0, 0, 0])
    assert memoryview(Tensor.arange(3)).readonly  # a constant: viewed, not to be written


def test_views_taken_by_threads_at_once_stay_valid():
    t = Tensor.full((1000,), 1.0) * 2  # lazy: every thread realizes it
    views = []

    def view():
        views.append(np.asarray(t))

    threads = [threading.Thread(target=view) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    junk = [(Tensor.full((1000,), 9.0) * 1).realize() for _ in range(20)]  # memory freed by a lost race would be reused here
    assert all((v == 2).all() for v in views)
    assert len({address(v) for v in views}) == 1  # one buffer: the first realization kept
    del junk
