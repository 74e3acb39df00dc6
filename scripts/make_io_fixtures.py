#!/usr/bin/python3
# Writes spec/fixtures/io: the files spec/serialize_spec.lua loads, made by NumPy 1.24 and
# PyTorch 1.13 (Debian's python3-numpy, python3-torch), never by sk.
#   /usr/bin/python3 scripts/make_io_fixtures.py
# Every array holds value(dtype, i) at flat C-order index i (the spec computes the same):
#   bool: i % 3 == 0; uint8: (37 i) % 256; other ints: 7 i - 11; floats: (i - 2.5) * 0.75.
# .safetensors files are laid out by this script with Python's json, as the safetensors
# package writes them (README, tensor.rs): tensors sorted by dtype size (descending) then
# name, the JSON padded with spaces to a multiple of 8; bfloat16 bytes come from torch.
import json, os, struct, zipfile
import numpy as np
import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "spec", "fixtures", "io")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]

def values(dtype, n):
    i = np.arange(n)
    if dtype == "bool": return i % 3 == 0
    if dtype == "uint8": return ((37 * i) % 256).astype(np.uint8)
    if dtype.startswith("int"): return (7 * i - 11).astype(dtype)
    return ((i - 2.5) * 0.75).astype(dtype)

def arr(dtype, shape):
    return values(dtype, int(np.prod(shape))).reshape(shape)

os.makedirs(OUT, exist_ok=True)
# .npy: every dtype (2x3), big-endian, Fortran order, 0-d, empty, 1-d
for d in DTYPES:
    np.save(f"{OUT}/{d}.npy", arr(d, (2, 3)))
np.save(f"{OUT}/float32_big.npy", arr("float32", (2, 3)).astype(">f4"))
np.save(f"{OUT}/int16_big.npy", arr("int16", (2, 3)).astype(">i2"))
np.save(f"{OUT}/float64_fortran.npy", np.asfortranarray(arr("float64", (2, 3, 4))))
np.save(f"{OUT}/scalar.npy", np.array(1.5, dtype=np.float32))
np.save(f"{OUT}/empty.npy", np.zeros((0, 3), dtype=np.int32))
np.save(f"{OUT}/vector.npy", arr("int64", (5,)))
# a version 2.0 and a 3.0 header (the writer picks them for huge headers; forced here)
with open(f"{OUT}/v2.npy", "wb") as f:
    np.lib.format.write_array(f, arr("float32", (2, 3)), version=(2, 0))
with open(f"{OUT}/v3.npy", "wb") as f:
    np.lib.format.write_array(f, arr("float32", (2, 3)), version=(3, 0))
# .npz: stored and deflated
np.savez(f"{OUT}/stored.npz", a=arr("float32", (2, 3)), b=arr("int64", (4,)), c=arr("bool", (2, 2)))
np.savez_compressed(f"{OUT}/deflated.npz", a=arr("float32", (2, 3)), b=arr("int64", (4,)), c=arr("bool", (2, 2)))
# an array of torch's, through NumPy
np.save(f"{OUT}/torch_float32.npy", torch.arange(6, dtype=torch.float32).reshape(2, 3).sub(2.5).mul(0.75).numpy())

ST = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
      "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}
def safetensors(path, tensors, metadata=None):
    size = lambda d: 2 if d == "bfloat16" else np.dtype(d).itemsize
    names = sorted(tensors, key=lambda k: (-size(tensors[k][0]), k))
    header, data = {}, b""
    if metadata: header["__metadata__"] = metadata
    for k in names:
        d, shape = tensors[k]
        if d == "bfloat16":
            b = torch.tensor(values("float32", int(np.prod(shape))), dtype=torch.bfloat16).view(torch.int16).numpy().tobytes()
        else:
            b = arr(d, shape).tobytes()
        header[k] = {"dtype": ST[d], "shape": list(shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)

safetensors(f"{OUT}/all.safetensors", {d: (d, (2, 3)) for d in ST}, {"format": "pt", "source": "make_io_fixtures.py"})
safetensors(f"{OUT}/model.safetensors", {"layer.0.weight": ("float32", (3, 2)), "layer.0.bias": ("float32", (3,)),
                                          "scalar": ("float64", ()), "empty": ("int32", (0, 4))})
