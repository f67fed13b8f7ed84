# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln's arrays to NumPy, PyTorch, CuPy and JAX and theirs to kiln through DLPack, without copies.

    python3 check_interop.py LIBRARY [numpy|torch|cupy|jax]   (default numpy; the others need a GPU)

LIBRARY is the kiln_dlpack_interop module (tests/dlpack/interop.cpp). Each framework that imports is checked:
kiln -> framework (the framework's array has kiln's data pointer and values), framework -> kiln (kiln's import
sees the framework's data pointer; a kiln kernel's in-place update is visible to the framework, or for JAX,
whose arrays are immutable, a kiln reduction reads the right total). One framework per process, so that their
libraries do not meet. Exit 0: passed; 77: the framework (or its GPU) is not there; 1: a failure.
"""
import ctypes
import sys

api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

N = 100003

lib = None


def load_kiln():
    """Loads kiln's module after the framework: a framework imported after it aborted in its own initialization
    on the GPU machine (PyTorch in `import torch`, JAX in its first compilation)."""
    global lib
    lib = ctypes.CDLL(sys.argv[1])
    lib.kiln_interop_make.restype = ctypes.c_void_p
    lib.kiln_interop_make.argtypes = [ctypes.c_longlong, ctypes.c_float, ctypes.c_int]
    lib.kiln_interop_increment.argtypes = [ctypes.c_void_p]
    lib.kiln_interop_sum.restype = ctypes.c_double
    lib.kiln_interop_sum.argtypes = [ctypes.c_void_p]
    lib.kiln_interop_last_pointer.restype = ctypes.c_void_p
    lib.kiln_interop_error.restype = ctypes.c_char_p


failures = []


class KilnTensor:
    """What kiln exported, in the DLPack protocol's Python form (__dlpack__ and __dlpack_device__)."""

    def __init__(self, device):
        self.device = device
        self.ptr = lib.kiln_interop_make(N, 2.0, device)
        if not self.ptr:
            raise RuntimeError(lib.kiln_interop_error().decode())
        self.data = ctypes.c_void_p.from_address(self.ptr).value  # DLManagedTensor's first member: dl_tensor.data

    def __dlpack__(self, stream=None, **kwargs):
        # kiln's synchronous calls have finished: no stream to order after.
        return api.PyCapsule_New(self.ptr, b"dltensor", None)

    def __dlpack_device__(self):
        return (2, self.device) if self.device >= 0 else (1, 0)


def into_kiln(capsule, fn):
    """Hands a framework's capsule to kiln (which takes ownership, as the protocol says, by renaming it)."""
    ptr = api.PyCapsule_GetPointer(capsule, b"dltensor")
    api.PyCapsule_SetName(capsule, b"used_dltensor")
    return fn(ptr)


def check(name, ok, detail=""):
    print(f"  {'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)
    if not ok:
        failures.append(name)


def run(framework, device, to_framework, from_kiln, data_ptr, values, sync, mutable=True):
    print(f"{framework} ({'GPU ' + str(device) if device >= 0 else 'host'}):", flush=True)
    load_kiln()
    k = KilnTensor(device)
    x = from_kiln(k)
    v = values(x)
    check("kiln -> framework without a copy", data_ptr(x) == k.data)
    check("kiln -> framework values", all(abs(v[i] - 2.0 * i) <= 1e-3 * max(1, i) for i in (0, 1, 777, N - 1)))
    y = to_framework()
    sync()
    if mutable:
        rc = into_kiln(y.__dlpack__(), lib.kiln_interop_increment)
        check("framework -> kiln", rc == 0, lib.kiln_interop_error().decode())
        check("framework -> kiln without a copy", lib.kiln_interop_last_pointer() == data_ptr(y))
        sync()
        w = values(y)
        check("kiln's in-place update seen by the framework", all(w[i] == i + 1.0 for i in (0, 1, 777, N - 1)))
    else:
        total = into_kiln(y.__dlpack__(), lib.kiln_interop_sum)
        check("framework -> kiln", total >= 0, lib.kiln_interop_error().decode())
        check("framework -> kiln without a copy", lib.kiln_interop_last_pointer() == data_ptr(y))
        want = N * (N - 1) / 2.0
        check("kiln's reduction of the framework's array", abs(total - want) <= 1e-5 * want, f"{total} vs {want}")


framework = sys.argv[2] if len(sys.argv) > 2 else "numpy"
try:
    import numpy as np
    if framework == "numpy":
        run("numpy", -1, lambda: np.arange(N, dtype=np.float32), np.from_dlpack,
            lambda a: a.__array_interface__["data"][0], lambda a: a, lambda: None)
    elif framework == "torch":
        import torch
        if not torch.cuda.is_available():
            sys.exit(77)
        torch.zeros(1, device="cuda")  # the CUDA libraries loaded before kiln
        run("torch", 0, lambda: torch.arange(N, dtype=torch.float32, device="cuda"), torch.from_dlpack,
            lambda t: t.data_ptr(), lambda t: t.cpu().numpy(), torch.cuda.synchronize)
    elif framework == "cupy":
        import cupy as cp
        run("cupy", 0, lambda: cp.arange(N, dtype=cp.float32), cp.from_dlpack, lambda a: a.data.ptr, cp.asnumpy,
            lambda: cp.cuda.Device(0).synchronize())
    elif framework == "jax":
        import jax
        import jax.numpy as jnp
        if not any(d.platform == "gpu" for d in jax.devices()):
            sys.exit(77)
        jnp.zeros(1).block_until_ready()  # the GPU backend and its compiler loaded before kiln
        run("jax", 0, lambda: jnp.arange(N, dtype=jnp.float32), jax.dlpack.from_dlpack,
            lambda a: a.unsafe_buffer_pointer(), lambda a: np.asarray(a), lambda: None, mutable=False)
    else:
        sys.exit(f"unknown framework {framework}")
except ImportError as e:
    print(f"{framework}: not installed ({e})")
    sys.exit(77)

if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
sys.exit(0)
