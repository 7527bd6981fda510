"""`lathe serve` over loopback, with real clients (requests and curl): the Open Inference
Protocol's endpoints, answers equal to `lathe run`'s, the binary tensor extension, dynamic
batching, a table of bad requests, overload, shutdown, and a bounded soak with flat memory.

CTest runs this with LATHE_CLI (the `lathe` binary) and LATHE_TEST_MODELS (tests/onnx/models).
"""
import concurrent.futures
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import time

import numpy as np
import pytest
import requests
import yaml

LATHE = os.environ.get("LATHE_CLI", "lathe")
MODELS = os.environ.get("LATHE_TEST_MODELS", os.path.join(os.path.dirname(__file__), "..", "onnx", "models"))
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def make_repository(root):
    """mlp: a dynamic batch, batched within 20 ms up to 8 rows; mlp_plain: the same model, two
    instances, no batching; cnn: static sizes (1, 3, 32, 32)."""
    for name, source, config in [
        ("mlp", "mlp_dynamic_batch", {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 20000}}),
        ("mlp_plain", "mlp_dynamic_batch", {"max_batch_size": 8, "instance_count": 2}),
        ("cnn", "cnn_resnet", None),
    ]:
        os.makedirs(os.path.join(root, name, "1"))
        shutil.copy(os.path.join(MODELS, source, "model.onnx"), os.path.join(root, name, "1", "model.onnx"))
        if config:
            with open(os.path.join(root, name, "config.json"), "w") as f:
                json.dump(config, f)
    return root


class Server:
    def __init__(self, repo, *args):
        # The access log (a line per request) goes to a file: a pipe nobody reads would fill.
        self.log = open(os.path.join(repo, "server.log"), "w+")
        env = dict(os.environ)
        # A sanitized build's quarantine of freed memory is what would grow (the soak test): kept
        # small whether or not the caller set ASAN_OPTIONS (a build without ASan ignores it).
        quarantine = "quarantine_size_mb=4:thread_local_quarantine_size_kb=64"
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"] + ":" + quarantine if env.get("ASAN_OPTIONS") else quarantine
        self.proc = subprocess.Popen([LATHE, "serve", repo, "--port", "0", "--threads", "1", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError("lathe serve did not start: " + line + self.stop()[1])
        self.url = m.group(1)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        self.log.seek(0)
        return self.proc.returncode, self.log.read()

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def infer(self, model, body, **kw):
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return requests.post(f"{self.url}/v2/models/{model}/infer", data=data, timeout=60, **kw)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(make_repository(str(tmp_path_factory.mktemp("repo"))))
    yield s
    code, err = s.stop()
    assert code == 0, err
    assert "stopped on a signal" in err
    assert re.search(r"\"path\":\"/v2/models/mlp/infer\".*\"status\":200", err), "an access log line per request"


def mlp_input(rows, seed):
    return np.random.default_rng(seed).standard_normal((rows, 32)).astype(np.float32)


def json_request(name, x):
    return {"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}


def output_array(response, k=0):
    o = response.json()["outputs"][k]
    return np.array(o["data"], dtype=np.float32).reshape(o["shape"])


def lathe_run(model, name, x, tmp_path):
    """What `lathe run` gives for input `name` = x."""
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    args = [LATHE, "run", model, "--input", f"{name}={tmp_path / 'x.npy'}", "--output-dir", str(out), "--iters", "1"]
    subprocess.run(args, check=True, capture_output=True, text=True)
    return {f[:-4]: np.load(out / f) for f in os.listdir(out)}


def test_health_and_metadata(server):
    for path in ["/v2/health/live", "/v2/health/ready", "/v2/models/mlp/ready", "/v2/models/cnn/versions/1/ready"]:
        assert requests.get(server.url + path).status_code == 200, path
    meta = requests.get(server.url + "/v2").json()
    assert meta["name"] == "lathe" and "binary_tensor_data" in meta["extensions"]
    mlp = requests.get(server.url + "/v2/models/mlp").json()
    assert mlp["name"] == "mlp" and mlp["versions"] == ["1"] and mlp["platform"] == "onnx"
    assert mlp["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 32]}]
    assert mlp["outputs"][0]["shape"] == [-1, 10]
    cnn = requests.get(server.url + "/v2/models/cnn/versions/1").json()
    assert cnn["inputs"][0]["shape"] == [1, 3, 32, 32]
    assert requests.get(server.url + "/v2/models/nothing").status_code == 404
    assert requests.get(server.url + "/v2/models/mlp/versions/7/ready").status_code == 404


def test_answers_equal_lathe_run(server, tmp_path):
    x = mlp_input(3, 1)
    want = lathe_run(os.path.join(MODELS, "mlp_dynamic_batch", "model.onnx"), "x", x, tmp_path)
    for model in ["mlp", "mlp_plain"]:
        r = server.infer(model, {**json_request("x", x), "id": "req-7"})
        assert r.status_code == 200, r.text
        assert r.json()["id"] == "req-7" and r.json()["model_name"] == model
        np.testing.assert_allclose(output_array(r), want["log_probs"], rtol=1e-5, atol=1e-6)
    image = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = lathe_run(os.path.join(MODELS, "cnn_resnet", "model.onnx"), "image", image, tmp_path)
    r = server.infer("cnn", json_request("image", image))
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(output_array(r), want["logits"], rtol=1e-5, atol=1e-6)


def binary_request(name, x, binary_output=True):
    header = json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32",
                                      "parameters": {"binary_data_size": x.nbytes}}],
                         "parameters": {"binary_data_output": binary_output}}).encode()
    return header + x.tobytes(), {"Inference-Header-Content-Length": str(len(header))}


DATATYPE = {np.dtype(np.float32): "FP32", np.dtype(np.float64): "FP64", np.dtype(np.int64): "INT64", np.dtype(np.int32): "INT32",
            np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "UINT8", np.dtype(np.int8): "INT8"}


def test_every_test_model_answers_as_lathe_run(tmp_path):
    """Each model of tests/onnx/models served (its named axis 0 up to 8, other named axes up to
    the sizes below) on its test data: the server's outputs equal `lathe run`'s on the same
    inputs, and both the reference's."""
    other_axes = {"rnn_scripted_loop": {"seq": 16}}  # a sequence of any length: a loop run as a step
    import sys
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from onnx_pb import read_tensor_proto
    repo = tmp_path / "all"
    cases = sorted(d for d in os.listdir(MODELS) if os.path.exists(os.path.join(MODELS, d, "model.onnx")))
    assert len(cases) >= 10, cases
    for name in cases:
        os.makedirs(repo / name / "1")
        shutil.copy(os.path.join(MODELS, name, "model.onnx"), repo / name / "1" / "model.onnx")
        with open(repo / name / "config.json", "w") as f:
            json.dump({"max_batch_size": 8, **({"max_sizes": other_axes[name]} if name in other_axes else {})}, f)
    s = Server(str(repo))
    try:
        for name in cases:
            data = os.path.join(MODELS, name, "test_data_set_0")
            inputs, wants = [], []
            for f in sorted(os.listdir(data)):
                with open(os.path.join(data, f), "rb") as fh:
                    (inputs if f.startswith("input") else wants).append(read_tensor_proto(fh.read()))
            meta = requests.get(f"{s.url}/v2/models/{name}").json()
            names = [i["name"] for i in meta["inputs"]]
            assert len(names) == len(inputs), name
            body = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": DATATYPE[a.dtype], "data": a.ravel().tolist()}
                               for n, (_, a) in zip(names, inputs)]}
            r = s.infer(name, body)
            assert r.status_code == 200, (name, r.text)
            got = {o["name"]: np.array(o["data"]).reshape(o["shape"]) for o in r.json()["outputs"]}
            args = [LATHE, "run", os.path.join(MODELS, name, "model.onnx"), "--iters", "1", "--output-dir", str(tmp_path / name)]
            for n, (_, a) in zip(names, inputs):
                np.save(tmp_path / f"{name}-{n}.npy", a)
                args += ["--input", f"{n}={tmp_path / f'{name}-{n}.npy'}"]
            subprocess.run(args, check=True, capture_output=True, text=True)
            for k, o in enumerate(meta["outputs"]):
                ran = np.load(tmp_path / name / f"{o['name']}.npy")
                np.testing.assert_allclose(got[o["name"]], ran, rtol=1e-5, atol=1e-5, err_msg=f"{name} {o['name']}")
                np.testing.assert_allclose(got[o["name"]], wants[k][1], rtol=1e-3, atol=1e-4, err_msg=f"{name} {o['name']} against the reference")
    finally:
        code, err = s.stop()
    assert code == 0, err


def test_binary_tensor_data(server):
    x = mlp_input(4, 3)
    by_json = output_array(server.infer("mlp_plain", json_request("x", x)))
    body, headers = binary_request("x", x)
    r = server.infer("mlp_plain", body, headers=headers)
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    head = json.loads(r.content[:n])
    out = head["outputs"][0]
    assert out["parameters"]["binary_data_size"] == 4 * 10 * 4
    got = np.frombuffer(r.content[n:], dtype=np.float32).reshape(out["shape"])
    np.testing.assert_array_equal(got, by_json)
    body, headers = binary_request("x", x, binary_output=False)  # binary in, JSON out
    np.testing.assert_array_equal(output_array(server.infer("mlp_plain", body, headers=headers)), by_json)


def test_curl_is_a_client_too(server):
    x = mlp_input(1, 4)
    out = subprocess.run(["curl", "-s", "-f", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                          json.dumps(json_request("x", x)), server.url + "/v2/models/mlp_plain/infer"],
                         check=True, capture_output=True, text=True).stdout
    assert json.loads(out)["outputs"][0]["shape"] == [1, 10]
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", server.url + "/v2/models/nothing"],
                          capture_output=True, text=True).stdout
    assert code == "404"


def metric(server, name, model):
    text = requests.get(server.url + "/metrics").text
    m = re.search(rf'^{name}\{{model="{model}",version="1"\}} (\d+)', text, re.M)
    return int(m.group(1))


def bucket(server, model, le):
    text = requests.get(server.url + "/metrics").text
    return int(re.search(rf'lathe_inference_batch_size_bucket\{{model="{model}",version="1",le="{re.escape(le)}"\}} (\d+)', text).group(1))


def test_concurrent_requests_are_batched_and_answer_as_one_by_one(server):
    """8 concurrent requests of 1 or 2 rows (12 in all) answer as they do alone in fewer runs than
    requests; the histogram counts every run and the rows they computed. A burst the 20 ms window
    splits into 8 runs (a slow machine) is sent again, up to 3 times."""
    inputs = [mlp_input(1 + i % 2, 10 + i) for i in range(8)]
    alone = [output_array(server.infer("mlp_plain", json_request("x", x))) for x in inputs]
    for attempt in range(3):
        runs_before = metric(server, "lathe_inference_exec_count", "mlp")
        rows_before = metric(server, "lathe_inference_count", "mlp")
        counted_before = bucket(server, "mlp", "+Inf")
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda x: server.infer("mlp", json_request("x", x)), inputs))
        for r, want in zip(answers, alone):
            assert r.status_code == 200, r.text
            np.testing.assert_allclose(output_array(r), want, rtol=1e-5, atol=1e-6)
        runs = metric(server, "lathe_inference_exec_count", "mlp") - runs_before
        assert bucket(server, "mlp", "+Inf") - counted_before == runs, "the histogram counts every run"
        assert metric(server, "lathe_inference_count", "mlp") - rows_before == 12, "the rows computed are the requests' rows"
        if runs < len(inputs):
            break
    assert runs < len(inputs), f"{len(inputs)} concurrent requests took {runs} runs three times: none was batched"


def bad_requests():
    x = mlp_input(1, 5)
    good = json_request("x", x)
    body, headers = binary_request("x", x)
    n = int(headers["Inference-Header-Content-Length"])
    return [
        ("invalid JSON", "mlp_plain", "{not json", {}, 400, "not valid JSON"),
        ("not an object", "mlp_plain", "[1, 2]", {}, 400, "not a JSON object"),
        ("no inputs", "mlp_plain", {"id": "x"}, {}, 400, "inputs"),
        ("unknown input", "mlp_plain", {"inputs": [{**good["inputs"][0], "name": "y"}]}, {}, 400, "has no input 'y'"),
        ("missing input", "mlp_plain", {"inputs": []}, {}, 400, "'x' is not given"),
        ("wrong datatype", "mlp_plain", {"inputs": [{**good["inputs"][0], "datatype": "FP64"}]}, {}, 400, "is float64, the model expects float32"),
        ("unknown datatype", "mlp_plain", {"inputs": [{**good["inputs"][0], "datatype": "BYTES"}]}, {}, 400, "BYTES"),
        ("wrong rank", "mlp_plain", {"inputs": [{**good["inputs"][0], "shape": [32]}]}, {}, 400, "axes"),
        ("wrong fixed size", "mlp_plain", {"inputs": [{**good["inputs"][0], "shape": [2, 16]}]}, {}, 400, "axis 1"),
        ("too few elements", "mlp_plain", {"inputs": [{**good["inputs"][0], "shape": [2, 32]}]}, {}, 400, "needs 64"),
        ("strings as data", "mlp_plain", {"inputs": [{**good["inputs"][0], "data": ["a"] * 32}]}, {}, 400, "not numbers"),
        ("batch over the maximum", "mlp_plain", json_request("x", mlp_input(9, 6)), {}, 400, "outside the prepared range [1, 8]"),
        ("unknown output", "mlp_plain", {**good, "outputs": [{"name": "nope"}]}, {}, 400, "'nope' is not an output"),
        ("truncated binary data", "mlp_plain", body[:-4], headers, 400, "truncated"),
        ("binary data left over", "mlp_plain", body + b"1234", headers, 400, "after the last binary input"),
        ("header longer than the body", "mlp_plain", body[:n - 1], {"Inference-Header-Content-Length": str(len(body) + 5)}, 400, "more than the body"),
        ("header not a number", "mlp_plain", body, {"Inference-Header-Content-Length": "twelve"}, 400, "not a length"),
        ("binary size not the shape's", "mlp_plain",
         json.dumps({"inputs": [{**good["inputs"][0], "parameters": {"binary_data_size": 12}}]}).encode() + b"x" * 12,
         {"Inference-Header-Content-Length": str(len(json.dumps({"inputs": [{**good["inputs"][0], "parameters": {"binary_data_size": 12}}]})))},
         400, "needs 128"),
        ("arrays nested too deep", "mlp_plain", '{"inputs": [{"name": "x", "shape": [1, 32], "datatype": "FP32", "data": ' + "[" * 100000 + "1" + "]" * 100000 + "}]}",
         {}, 400, "nested more than"),
        ("a float beyond FP32", "mlp_plain", {"inputs": [{**good["inputs"][0], "data": [1e39] * 32}]}, {}, 400, "outside FP32's range"),
        ("a mistyped parameter", "mlp_plain", {**good, "parameters": {"binary_data_output": "yes"}}, {}, 400, "not true or false"),
        ("parameters not an object", "mlp_plain", {"inputs": [{**good["inputs"][0], "parameters": 3}]}, {}, 400, "not an object"),
        ("a huge shape", "mlp_plain", {"inputs": [{**good["inputs"][0], "shape": [1 << 40, 1 << 40]}]}, {}, 413, "more than"),
        ("static model, wrong size", "cnn", {"inputs": [{"name": "image", "shape": [1, 3, 32, 31], "datatype": "FP32", "data": [0.0] * 2976}]}, {}, 400, "axis 3"),
        ("unknown model", "nothing", good, {}, 404, "no model named 'nothing'"),
        ("unknown version", "mlp_plain/versions/3", good, {}, 404, "no version '3'"),
    ]


@pytest.mark.parametrize("case", bad_requests(), ids=lambda c: c[0])
def test_bad_requests_answer_their_status_and_the_server_serves_on(server, case):
    _, model, body, headers, status, says = case
    r = server.infer(model, body, headers=headers)
    assert r.status_code == status, r.text
    assert says in r.json()["error"], r.json()["error"]
    ok = server.infer("mlp_plain", json_request("x", mlp_input(1, 8)))
    assert ok.status_code == 200, ok.text


def test_non_finite_outputs_and_chunked_bodies(server):
    """Outputs that overflow come back as JSON's NaN/Infinity tokens (Python's json reads them);
    a body without a Content-Length is refused unread (411)."""
    x = np.full((1, 32), 3e38, dtype=np.float32)
    x[0, ::2] = -3e38
    r = server.infer("mlp_plain", json_request("x", x))
    assert r.status_code == 200, r.text
    out = output_array(r)
    assert not np.isfinite(out).all(), out
    body, headers = binary_request("x", x)
    by_binary = server.infer("mlp_plain", body, headers=headers)
    n = int(by_binary.headers["Inference-Header-Content-Length"])
    np.testing.assert_array_equal(np.frombuffer(by_binary.content[n:], dtype=np.float32).reshape(out.shape), out)
    chunks = (c for c in [json.dumps(json_request("x", mlp_input(1, 1))).encode()])
    r = requests.post(server.url + "/v2/models/mlp_plain/infer", data=chunks, timeout=60)
    assert r.status_code == 411, r.text


def test_limits_413_and_503(tmp_path):
    s = Server(make_repository(str(tmp_path / "repo")), "--max-request-mb", "1", "--max-queue", "1", "--http-threads", "32")
    try:
        big = json_request("x", mlp_input(8, 9))
        big["pad"] = "x" * (2 << 20)
        r = s.infer("mlp_plain", big)
        assert r.status_code == 413, r.text
        image = np.zeros((1, 3, 32, 32), dtype=np.float32)
        codes = []
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            for _ in range(5):  # floods of 64 at a queue of 1, until one overflows it (the first, in practice)
                codes += list(pool.map(lambda _: s.infer("cnn", json_request("image", image)).status_code, range(64)))
                if 503 in codes:
                    break
        assert set(codes) <= {200, 503}, codes
        assert 503 in codes and 200 in codes, codes
        assert metric(s, "lathe_inference_request_failure", "cnn") == codes.count(503)
    finally:
        code, err = s.stop()
    assert code == 0, err


def test_sigterm_lets_requests_in_flight_finish(tmp_path):
    """Requests held by the batcher's delay when SIGTERM arrives are still answered."""
    repo = tmp_path / "slow"
    os.makedirs(repo / "mlp" / "1")
    shutil.copy(os.path.join(MODELS, "mlp_dynamic_batch", "model.onnx"), repo / "mlp" / "1" / "model.onnx")
    with open(repo / "mlp" / "config.json", "w") as f:
        json.dump({"max_batch_size": 64, "dynamic_batching": {"max_queue_delay_microseconds": 5000000}}, f)
    s = Server(str(repo))
    inputs = [mlp_input(1, 30 + i) for i in range(6)]
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        pending = [pool.submit(s.infer, "mlp", json_request("x", x)) for x in inputs]
        waiting = 0
        for _ in range(400):  # until all six wait in the batcher's 5 s window, as /metrics says
            text = requests.get(s.url + "/metrics").text
            waiting = int(re.search(r"^lathe_inference_queued (\d+)", text, re.M).group(1))
            if waiting == 6:
                break
            time.sleep(0.01)
        assert waiting == 6, f"{waiting} requests waiting, not 6"
        s.proc.send_signal(signal.SIGTERM)
        codes = [p.result().status_code for p in pending]
    assert codes == [200] * 6, codes
    code, err = s.stop()
    assert code == 0 and "stopped on a signal" in err, err


def test_soak_memory_stays_flat(server):
    x = json_request("x", mlp_input(2, 11))
    body = json.dumps(x)

    def burst(n):
        with requests.Session() as session:
            for _ in range(n):
                r = session.post(server.url + "/v2/models/mlp_plain/infer", data=body, timeout=60)
                assert r.status_code == 200
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(burst, [100] * 4))  # warm: pools, caches
    before = server.rss_kb()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(burst, [500] * 4))
    grown = server.rss_kb() - before
    assert grown < 16 * 1024, f"2000 requests grew the server by {grown} KB"


def test_kserve_manifest_is_valid_yaml():
    with open(os.path.join(ROOT, "docs", "deploy", "kserve.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"] for d in docs}
    assert "InferenceService" in kinds
    isvc = next(d for d in docs if d["kind"] == "InferenceService")
    container = isvc["spec"]["predictor"]["containers"][0]
    assert container["args"][0] == "serve"
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"


@pytest.mark.parametrize("config, says", [
    ({"max_batch_size": 8, "max_sizes": {"batch": 16}}, "max_batch_size 8 and max_sizes' batch (16) differ"),
    ({"max_batch_size": 4, "dynamic_batching": {}}, "dynamic_batching needs every input's axis 0"),
], ids=["two limits on axis 0", "batching a model of fixed sizes"])
def test_configs_that_contradict_the_model_are_refused_at_load(tmp_path, config, says):
    source = "mlp_dynamic_batch" if "max_sizes" in config else "cnn_resnet"
    os.makedirs(tmp_path / "m" / "1")
    shutil.copy(os.path.join(MODELS, source, "model.onnx"), tmp_path / "m" / "1" / "model.onnx")
    with open(tmp_path / "m" / "config.json", "w") as f:
        json.dump(config, f)
    r = subprocess.run([LATHE, "serve", str(tmp_path), "--port", "0"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and says in r.stderr, r.stderr
