"""Plans from Python: prepared once, executed many times on new data and at new variable values
without compiling again; their profiles; and the settings a plan or a session is prepared with."""

import json
import os

import numpy as np
import pytest

import lathe
from lathe import Tensor, Variable

from test_session import MODELS, reference_data


def test_a_plan_runs_again_on_new_values_of_a_borrowed_input():
    x = np.zeros((4, 8), np.float32)
    y = (Tensor.from_numpy(x) * 2 + 1).sum(axis=1)
    plan = y.prepare()
    for round in range(3):
        x[:] = np.arange(32, dtype=np.float32).reshape(4, 8) * round  # written in place: the plan reads it
        plan.execute()
        np.testing.assert_allclose(plan.numpy(), (x * 2 + 1).sum(1))


def test_write_copies_new_values_into_a_plans_input():
    a = Tensor.empty(3, 5)
    plan = (a.softmax(-1) * 10).prepare(threads=1)
    for seed in range(3):
        values = np.random.default_rng(seed).normal(size=(3, 5)).astype(np.float32)
        plan.write(a, values)
        plan.execute()
        e = np.exp(values - values.max(-1, keepdims=True))
        np.testing.assert_allclose(plan.numpy(), 10 * e / e.sum(-1, keepdims=True), rtol=1e-5)
    with pytest.raises(lathe.DTypeError):
        plan.write(a, np.zeros((3, 5), np.int32))
    with pytest.raises(lathe.ShapeError):
        plan.write(a, np.zeros((4, 5), np.float32))
    with pytest.raises(lathe.Error, match="reads no buffer"):
        plan.write(Tensor([1.0]), np.zeros(1, np.float32))


def test_variables_are_rebound_without_compiling_and_outputs_read_at_their_sizes():
    n = Variable("n", 1, 16)
    data = np.arange(16 * 3, dtype=np.float32).reshape(16, 3)
    x = Tensor(data)
    rows = x.shrink([(0, n.bind(4)), None]) * 2
    total = rows.sum(axis=0)
    plan = lathe.prepare(rows, total)
    assert plan.num_outputs == 2
    assert plan.variables == {"n": (1, 16)}
    kernels = list(plan.kernels)
    for size in (1, 7, 16, 3):
        plan.execute({"n": size})
        np.testing.assert_array_equal(plan.numpy(0), data[:size] * 2)
        np.testing.assert_array_equal(plan.numpy(1), (data[:size] * 2).sum(0))
    assert plan.kernels == kernels
    with pytest.raises(lathe.Error, match="outside its bounds"):
        plan.execute({"n": 17})
    with pytest.raises(IndexError):
        plan.numpy(2)


def test_symbolic_shapes_and_sizes():
    n = Variable("n", 1, 10)
    t = Tensor.zeros(n.bind(3), 4)
    assert isinstance(t.shape[0], lathe.SInt) and t.shape[1] == 4
    assert t.shape[0].max == 10 and t.shape[0].value() == 3 and t.shape[0].value({"n": 5}) == 5
    assert (t.shape[0] * 2 + 1).value({"n": 5}) == 11
    assert t.numpy().shape == (3, 4)


def test_profile_and_memory():
    x = Tensor.rand(64, 64, seed=1)
    plan = (x @ x).relu().prepare()
    profile = plan.execute(profile=True)
    assert len(profile) >= 1
    k = profile[0]
    assert k.ms > 0 and k.ops > 0 and k.bytes > 0 and k.gflops > 0 and k.name
    assert "KernelProfile(" in repr(k)
    assert plan.execute() is None
    assert plan.memory["io_bytes"] > 0


def test_prepare_settings():
    x = Tensor.rand(33, 17, seed=2)
    want = (x.exp() + 1).sum(axis=1).numpy()
    backends = [b.split("/")[1] for b in lathe.backends() if b.startswith("CPU/")]
    assert backends, "a build has a CPU backend"
    for settings in [dict(threads=1), dict(optimize=False)] + [dict(threads=2, backend=b) for b in backends]:
        plan = (x.exp() + 1).sum(axis=1).prepare(**settings)
        plan.execute()
        np.testing.assert_allclose(plan.numpy(), want, rtol=1e-6)
    with pytest.raises(lathe.Error):
        x.prepare(threads=0)
    with pytest.raises(lathe.Error):
        x.exp().prepare(backend="no-such-backend")


def test_a_session_with_settings_fills_a_profile_and_writes_a_trace(tmp_path):
    model = os.path.join(MODELS, "cnn_resnet")
    inputs, expected = reference_data(model)
    sess = lathe.InferenceSession(os.path.join(model, "model.onnx"), threads=1, backend="clang", optimize=True)
    profile = []
    trace = tmp_path / "run.json"
    got = sess.run(None, inputs, profile=profile, trace=trace)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-3, atol=1e-7)
    assert profile and all(isinstance(p, lathe.KernelProfile) for p in profile)
    assert any(p.labels for p in profile)  # the ONNX nodes each kernel computes
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any(e.get("ph") == "X" for e in events)
    got_again = sess.run(None, inputs)  # no profile, no trace: the same answers
    np.testing.assert_array_equal(got_again[0], got[0])
    with pytest.raises(lathe.Error):
        lathe.InferenceSession(os.path.join(model, "model.onnx"), threads=0)


def test_threads_realize_one_tensor_and_share_one_plan():
    import threading

    data = np.random.default_rng(5).standard_normal((96, 96)).astype(np.float32)
    x = Tensor(data)
    y = (x @ x).relu().sum(axis=1)  # lazy: every thread asks for it at once
    want = np.maximum(data.astype(np.float64) @ data, 0).sum(1)
    n = Variable("n", 1, 96)
    plan = (x.shrink([(0, n.bind(96)), None]) * 3).sum(axis=1).prepare()
    got, errors = [], []

    def work(i):
        try:
            got.append(y.numpy())
            size = 1 + (i * 37) % 96
            for _ in range(5):
                plan.execute({"n": size})  # runs of one plan from many threads take turns
            y.realize()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(got) == 6
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-3)
    assert y.is_realized
    plan.execute({"n": 5})
    np.testing.assert_allclose(plan.numpy(), (data[:5] * 3).sum(1), rtol=1e-5)


def test_plan_numpy_before_a_run_and_with_a_variable_never_bound():
    x = Tensor.ones(8)
    plan = (x * 2).prepare()
    with pytest.raises(lathe.Error, match="execute"):
        plan.numpy()
    m = Variable("m", 2, 8)  # never bound: the plan runs at its minimum until told otherwise
    plan = (x.shrink([(0, m)]) * 2).prepare()
    plan.execute()
    assert plan.numpy().shape == (2,)
    plan.execute({"m": 5})
    np.testing.assert_array_equal(plan.numpy(), np.full(5, 2, np.float32))


def test_threads_reading_a_bfloat16_plan_do_not_wait_on_each_other_forever():
    import threading

    plan = (Tensor.ones(64, 64).cast("bfloat16") * 3).prepare()
    plan.execute()
    outs = []
    threads = [threading.Thread(target=lambda: [outs.append(plan.numpy()) for _ in range(5)]) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "plan.numpy() deadlocked"
    assert len(outs) == 15 and all((o == 3).all() and o.dtype == np.float32 for o in outs)
