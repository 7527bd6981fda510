"""Just enough protobuf for ONNX files without the `onnx` Python package: onnx.TensorProto
(dims = 1, data_type = 2, name = 8, raw_data = 9; float_data = 4 read too) to and from numpy,
and a model's opsets and operator counts. Shared by scripts/make-test-models.py and
bench/onnx_models.py."""
import struct

import numpy as np

DTYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int32): 6,
          np.dtype(np.int64): 7, np.dtype(np.bool_): 9, np.dtype(np.float64): 11}
NP_OF = {v: k for k, v in DTYPES.items()}


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos
        shift += 7


def _fields(buf):
    """Yields (field, wire type, value) of one protobuf message; value is int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = _read_varint(buf, pos)
        elif wire == 1:
            v, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            v, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError("unsupported protobuf wire type %d" % wire)
        yield field, wire, v


def tensor_proto(name, array):
    a = np.ascontiguousarray(array)
    if a.dtype not in DTYPES:
        raise TypeError("no TensorProto data_type for %s" % a.dtype)
    out = bytearray()
    for d in a.shape:
        out += b"\x08" + _varint(d)
    out += b"\x10" + _varint(DTYPES[a.dtype])
    nb = name.encode()
    out += b"\x42" + _varint(len(nb)) + nb
    raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    out += b"\x4a" + _varint(len(raw)) + raw
    return bytes(out)


def read_tensor_proto(data):
    dims, dtype, name, raw = [], 0, "", None
    floats = []
    for field, wire, v in _fields(data):
        if field == 1:
            if wire == 0:
                dims.append(v)
            else:
                p = 0
                while p < len(v):
                    d, p = _read_varint(v, p)
                    dims.append(d)
        elif field == 2:
            dtype = v
        elif field == 8:
            name = v.decode()
        elif field == 9:
            raw = bytes(v)
        elif field == 4:
            floats += list(struct.unpack("<%df" % (len(v) // 4), v))
    dt = NP_OF[dtype]
    arr = np.frombuffer(raw, dtype=dt.newbyteorder("<")) if raw is not None else np.array(floats, dtype=dt)
    return name, arr.reshape(dims).astype(dt)


def model_summary(path):
    """(opsets, {op_type: count}, initializer bytes) of an ONNX model file."""
    with open(path, "rb") as f:
        data = f.read()
    opsets, ops, init_bytes = {}, {}, 0
    for field, _, v in _fields(data):
        if field == 8:  # opset_import
            dom, ver = "", 0
            for f2, _, v2 in _fields(v):
                if f2 == 1:
                    dom = v2.decode()
                elif f2 == 2:
                    ver = v2
            opsets[dom or "ai.onnx"] = ver
        elif field == 7:  # graph
            for f2, _, v2 in _fields(v):
                if f2 == 1:  # node
                    for f3, _, v3 in _fields(v2):
                        if f3 == 4:
                            op = v3.decode()
                            ops[op] = ops.get(op, 0) + 1
                elif f2 == 5:  # initializer
                    init_bytes += len(v2)
    return opsets, ops, init_bytes




def tensor_name(data):
    """The name of a serialized TensorProto."""
    for field, _, v in _fields(data):
        if field == 8:
            return v.decode()
    return ""
