"""lathe.InferenceSession against ONNX Runtime's outputs on the project's test models, and what an
ONNX Runtime user relies on: the graph's description, output selection, dynamic sizes, bytes,
threads, and errors that are Python exceptions naming what was wrong."""

import glob
import os
import threading

import numpy as np
import pytest

import lathe

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "onnx", "models")
# What `lathe test-onnx` holds the same models to (ONNX's backend runner's tolerances).
RTOL, ATOL = 1e-3, 1e-7


def model_dirs():
    return sorted(d for d in glob.glob(os.path.join(MODELS, "*")) if os.path.isfile(os.path.join(d, "model.onnx")))


def reference_data(model_dir):
    """The first test data set: inputs by name, expected outputs in order (ONNX Runtime's)."""
    folder = os.path.join(model_dir, "test_data_set_0")
    inputs = dict(lathe.load_tensor_pb(f) for f in sorted(glob.glob(os.path.join(folder, "input_*.pb"))))
    outputs = [lathe.load_tensor_pb(f)[1] for f in sorted(glob.glob(os.path.join(folder, "output_*.pb")))]
    return inputs, outputs


@pytest.mark.parametrize("model_dir", model_dirs(), ids=os.path.basename)
def test_matches_onnx_runtime(model_dir):
    inputs, expected = reference_data(model_dir)
    sess = lathe.InferenceSession(os.path.join(model_dir, "model.onnx"))
    got = sess.run(None, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_describes_the_graph_as_onnx_runtime_does():
    sess = lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"))
    (image,) = sess.get_inputs()
    (logits,) = sess.get_outputs()
    assert (image.name, image.type, image.shape) == ("image", "tensor(float)", ["batch", 3, 16, 16])
    assert (logits.name, logits.shape, logits.dtype) == ("logits", ["batch", 10], np.dtype("float32"))


def test_from_bytes_and_output_selection():
    path = os.path.join(MODELS, "cnn_resnet", "model.onnx")
    inputs, expected = reference_data(os.path.dirname(path))
    with open(path, "rb") as f:
        sess = lathe.InferenceSession(f.read())
    name = sess.get_outputs()[0].name
    (only,) = sess.run([name], inputs)
    np.testing.assert_allclose(only, expected[0], rtol=RTOL, atol=ATOL)
    with pytest.raises(lathe.OnnxError, match="no output named 'nope'"):
        sess.run(["nope"], inputs)


def test_dynamic_batch_compiled_for_what_runs_need():
    """Each batch matches the same images run one at a time; sizes past the compiled maximum
    compile again (for twice the size), sizes within it do not."""
    sess = lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"))
    rng = np.random.default_rng(3)
    images = rng.standard_normal((7, 3, 16, 16)).astype(np.float32)
    one_by_one = np.concatenate([sess.run(None, {"image": images[i : i + 1]})[0] for i in range(7)])
    assert sess.get_max_sizes() == {"batch": 1}
    for batch in (2, 7, 5, 1):
        (got,) = sess.run(None, {"image": images[:batch]})
        np.testing.assert_allclose(got, one_by_one[:batch], rtol=1e-4, atol=1e-5)
    assert sess.get_max_sizes() == {"batch": 7}  # 2, then 7 (past twice 2); 5 and 1 fit


def test_a_given_maximum_is_kept_and_enforced():
    sess = lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"), max_sizes={"batch": 4})
    assert sess.get_max_sizes() == {"batch": 4}
    sess.run(None, {"image": np.zeros((4, 3, 16, 16), np.float32)})
    with pytest.raises(lathe.OnnxError, match="batch"):
        sess.run(None, {"image": np.zeros((5, 3, 16, 16), np.float32)})
    with pytest.raises(lathe.OnnxError, match="no input of the model"):
        lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"), max_sizes={"batc": 4})


def test_bad_inputs_raise_and_change_nothing():
    path = os.path.join(MODELS, "cnn_resnet", "model.onnx")
    inputs, expected = reference_data(os.path.dirname(path))
    sess = lathe.InferenceSession(path)
    (name,) = inputs
    with pytest.raises(lathe.OnnxError, match="missing"):
        sess.run(None, {})
    with pytest.raises(lathe.OnnxError, match=name):
        sess.run(None, {name: np.zeros((1, 3, 31, 32), np.float32)})  # wrong shape
    with pytest.raises(lathe.OnnxError, match="float64, the model expects float32"):
        sess.run(None, {name: inputs[name].astype(np.float64)})  # wrong dtype
    with pytest.raises(lathe.DTypeError, match="complex"):
        sess.run(None, {name: inputs[name].astype(np.complex64)})
    np.testing.assert_allclose(sess.run(None, inputs)[0], expected[0], rtol=RTOL, atol=ATOL)
    # A view that is not contiguous, and an array in the other byte order, are read as numpy sees them.
    flipped = np.ascontiguousarray(inputs[name][..., ::-1])[..., ::-1]
    np.testing.assert_allclose(sess.run(None, {name: flipped})[0], expected[0], rtol=RTOL, atol=ATOL)
    swapped = inputs[name].astype(inputs[name].dtype.newbyteorder("S"))
    np.testing.assert_allclose(sess.run(None, {name: swapped})[0], expected[0], rtol=RTOL, atol=ATOL)


def test_a_bad_input_compiles_nothing():
    sess = lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"))
    sess.run(None, {"image": np.zeros((2, 3, 16, 16), np.float32)})
    with pytest.raises(lathe.OnnxError, match="image"):
        sess.run(None, {"image": np.zeros((64, 3, 16, 15), np.float32)})  # a fixed size wrong
    with pytest.raises(lathe.OnnxError, match="image"):
        sess.run(None, {"image": np.zeros((64, 3, 16), np.float32)})  # a rank wrong
    assert sess.get_max_sizes() == {"batch": 2}


def test_errors_are_python_exceptions():
    assert issubclass(lathe.OnnxError, lathe.Error) and issubclass(lathe.Error, RuntimeError)
    with pytest.raises(lathe.Error, match="no_such_model.onnx"):
        lathe.InferenceSession("/nonexistent/no_such_model.onnx")
    with pytest.raises(lathe.OnnxError):
        lathe.InferenceSession(b"not a model")


def test_threads_share_sessions_safely():
    """Two sessions run at once from two threads, and one session from both (its runs take turns);
    every answer is the one a single thread gets."""
    a_dir, b_dir = os.path.join(MODELS, "cnn_resnet"), os.path.join(MODELS, "mlp_bn_silu")
    (a_in, a_out), (b_in, b_out) = reference_data(a_dir), reference_data(b_dir)
    a = lathe.InferenceSession(os.path.join(a_dir, "model.onnx"))
    b = lathe.InferenceSession(os.path.join(b_dir, "model.onnx"))
    failures = []

    def work(sess, inputs, expected):
        try:
            for _ in range(20):
                got = sess.run(None, inputs)
                for g, e in zip(got, expected):
                    np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    # A session with a dynamic batch, grown by one thread while another runs it.
    dyn = lathe.InferenceSession(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"))
    images = np.random.default_rng(5).standard_normal((12, 3, 16, 16)).astype(np.float32)
    single = np.concatenate([dyn.run(None, {"image": images[i : i + 1]})[0] for i in range(12)])

    def batches(sizes):
        try:
            for n in sizes:
                np.testing.assert_allclose(dyn.run(None, {"image": images[:n]})[0], single[:n], rtol=1e-4, atol=1e-5)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=work, args=args) for args in [(a, a_in, a_out), (b, b_in, b_out), (a, a_in, a_out)]]
    threads += [threading.Thread(target=batches, args=(s,)) for s in ([1, 3, 2, 9, 4] * 3, [2, 5, 12, 1, 7] * 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert dyn.get_max_sizes()["batch"] >= 12


def _export_mask_model(path):
    """A model whose output size depends on its input's values: the entries above 0.5, doubled,
    and their sum (a boolean mask: NonZero and GatherND in ONNX)."""
    import torch

    class Mask(torch.nn.Module):
        def forward(self, x):
            kept = x[x > 0.5] * 2
            return kept, kept.sum()

    torch.onnx.export(Mask(), (torch.rand(3, 7),), path, opset_version=13, input_names=["x"], output_names=["kept", "total"])


def test_output_sizes_that_depend_on_the_data(tmp_path):
    """Exported from PyTorch, a boolean mask: each run decides how many values come out, from one
    prepared plan, as PyTorch computes them."""
    path = str(tmp_path / "mask.onnx")
    _export_mask_model(path)
    sess = lathe.InferenceSession(path)
    rng = np.random.default_rng(5)
    for fill in ("some", "none", "all"):
        x = rng.random((3, 7), dtype=np.float32)
        if fill == "none":
            x[:] = 0.25
        elif fill == "all":
            x[:] = 0.75
        kept, total = sess.run(None, {"x": x})
        want = x[x > 0.5] * 2
        assert kept.shape == want.shape
        np.testing.assert_allclose(kept, want, rtol=1e-6)
        np.testing.assert_allclose(total, want.sum(), rtol=1e-5, atol=1e-6)
