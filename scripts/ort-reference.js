#!/usr/bin/env node
// Writes ONNX Runtime's outputs as the reference outputs of ONNX backend-test case folders.
//
// Usage: node scripts/ort-reference.js [--time RUNS [--threads T] [--profile PREFIX]] CASE_DIR...
//   CASE_DIR/model.onnx and CASE_DIR/test_data_set_*/input_N.pb (serialized onnx TensorProto) are
//   read; each data set gets output_N.pb, named after the model's outputs, in the model's order.
// ONNX Runtime comes from the npm package onnxruntime-node; scripts/install-model-deps.sh installs
// it into build/ort (set NODE_PATH, or ORT_NODE_MODULES, to use another node_modules folder).
// ORT runs single-threaded with all graph optimisations on (its default), so the reference is
// what a user of ONNX Runtime would get.
'use strict';
const fs = require('fs');
const path = require('path');

function loadOrt() {
  const dirs = [process.env.ORT_NODE_MODULES, path.join(__dirname, '..', 'build', 'ort', 'node_modules')];
  for (const d of dirs) {
    if (!d) continue;
    try { return require(path.join(d, 'onnxruntime-node')); } catch (e) { /* try the next */ }
  }
  try { return require('onnxruntime-node'); } catch (e) {
    console.error('onnxruntime-node not found: run scripts/install-model-deps.sh, or set ORT_NODE_MODULES');
    process.exit(2);
  }
}
const ort = loadOrt();

// --- minimal protobuf for onnx.TensorProto: dims=1 (int64), data_type=2, name=8, raw_data=9;
// --- float_data=4, int32_data=5, int64_data=7, double_data=10 are read too.
const DT = {1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool', 11: 'float64'};
const DT_CODE = Object.fromEntries(Object.entries(DT).map(([k, v]) => [v, Number(k)]));
const CTOR = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
              int8: Int8Array, uint8: Uint8Array, bool: Uint8Array};

function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7n;
  }
  return [v, pos];
}

function decodeTensor(buf) {
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], ints: [], doubles: []};
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) t.dataType = Number(v);
      else if (field === 5 || field === 7) t.ints.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      const body = buf.subarray(pos, end);
      if (field === 8) t.name = body.toString('utf8');
      else if (field === 9) t.raw = Buffer.from(body);
      else if (field === 1 || field === 5 || field === 7) {  // packed varints
        let p = 0;
        while (p < body.length) {
          let v;
          [v, p] = readVarint(body, p);
          if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v))); else t.ints.push(BigInt.asIntN(64, v));
        }
      } else if (field === 4) {
        for (let p = 0; p < body.length; p += 4) t.floats.push(body.readFloatLE(p));
      } else if (field === 10) {
        for (let p = 0; p < body.length; p += 8) t.doubles.push(body.readDoubleLE(p));
      }
      pos = end;
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(pos));
      pos += 4;
    } else if (wire === 1) {
      if (field === 10) t.doubles.push(buf.readDoubleLE(pos));
      pos += 8;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
  return t;
}

function toOrtTensor(t) {
  const dtype = DT[t.dataType];
  if (!dtype) throw new Error(`tensor ${t.name}: unsupported data_type ${t.dataType}`);
  const C = CTOR[dtype];
  let data;
  if (t.raw) {
    data = new C(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  } else if (dtype === 'float32') {
    data = Float32Array.from(t.floats);
  } else if (dtype === 'float64') {
    data = Float64Array.from(t.doubles);
  } else if (dtype === 'int64') {
    data = BigInt64Array.from(t.ints);
  } else {
    data = C.from(t.ints.map(Number));
  }
  return new ort.Tensor(dtype, data, t.dims);
}

function writeVarint(out, v) {
  v = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
}

function encodeTensor(name, t) {
  const code = DT_CODE[t.type];
  if (!code) throw new Error(`output ${name}: unsupported type ${t.type}`);
  const head = [];
  for (const d of t.dims) { head.push(0x08); writeVarint(head, d); }    // dims, unpacked
  head.push(0x10); writeVarint(head, code);                              // data_type
  const nameBytes = Buffer.from(name, 'utf8');
  head.push(0x42); writeVarint(head, nameBytes.length);                 // name
  const raw = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const rawHead = [0x4a]; writeVarint(rawHead, raw.length);             // raw_data
  return Buffer.concat([Buffer.from(head), nameBytes, Buffer.from(rawHead), raw]);
}

// With --time RUNS [--threads T]: no outputs are written; prints one JSON line per case with
// ONNX Runtime's min/median/max latency over RUNS runs of the first data set, and the session's
// creation time (bench/onnx_models.py). --profile PREFIX also writes ONNX Runtime's profile of
// those runs (a Chrome trace, each node's time: PREFIX_<date>.json; bench/per_block.py).
const timeArg = process.argv.indexOf('--time');
const timeRuns = timeArg > 0 ? Number(process.argv[timeArg + 1]) : 0;
const threadArg = process.argv.indexOf('--threads');
const threads = threadArg > 0 ? Number(process.argv[threadArg + 1]) : 1;
const profileArg = process.argv.indexOf('--profile');
const profilePrefix = profileArg > 0 ? process.argv[profileArg + 1] : null;

async function timeCase(sess, feeds, dir, loadMs) {
  for (let i = 0; i < 3; i++) await sess.run(feeds);
  const times = [];
  for (let i = 0; i < timeRuns; i++) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({model: path.basename(dir), threads, min_ms: times[0], median_ms: times[Math.floor(times.length / 2)],
                              max_ms: times[times.length - 1], load_ms: loadMs}));
}

async function runCase(dir) {
  const model = path.join(dir, 'model.onnx');
  const t0 = process.hrtime.bigint();  // session creation is ONNX Runtime's prepare
  const options = {intraOpNumThreads: threads, interOpNumThreads: 1};
  if (profilePrefix && timeRuns > 0) Object.assign(options, {enableProfiling: true, profileFilePrefix: profilePrefix});
  const sess = await ort.InferenceSession.create(model, options);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const sets = fs.readdirSync(dir).filter(n => n.startsWith('test_data_set_')).sort();
  if (sets.length === 0) throw new Error(`${dir}: no test_data_set_* folder`);
  for (const set of sets) {
    const sdir = path.join(dir, set);
    const inputs = fs.readdirSync(sdir).filter(n => /^input_\d+\.pb$/.test(n))
      .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
    const feeds = {};
    inputs.forEach((f, i) => {
      const t = decodeTensor(fs.readFileSync(path.join(sdir, f)));
      const name = t.name || sess.inputNames[i];
      if (!sess.inputNames.includes(name)) throw new Error(`${sdir}/${f}: ${name} is no input of the model`);
      feeds[name] = toOrtTensor(t);
    });
    if (timeRuns > 0) {
      await timeCase(sess, feeds, dir, loadMs);
      if (profilePrefix) sess.endProfiling();
      return;
    }
    const res = await sess.run(feeds);
    for (const f of fs.readdirSync(sdir)) if (/^output_\d+\.pb$/.test(f)) fs.unlinkSync(path.join(sdir, f));
    sess.outputNames.forEach((n, i) => {
      fs.writeFileSync(path.join(sdir, `output_${i}.pb`), encodeTensor(n, res[n]));
    });
    const shapes = sess.outputNames.map(n => `${n}[${res[n].dims.join('x')}]`).join(' ');
    console.log(`ort ${path.basename(dir)}/${set}: ${shapes}`);
  }
}

(async () => {
  const dirs = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !['--time', '--threads', '--profile'].includes(all[i - 1]));
  if (dirs.length === 0) {
    console.error('usage: node scripts/ort-reference.js [--time RUNS [--threads T] [--profile PREFIX]] CASE_DIR...');
    process.exit(2);
  }
  for (const d of dirs) await runCase(d);
})().catch(e => { console.error(e); process.exit(1); });
