"""Frames and tensors on the channel between the verifier and a runner.

A frame is the verifier's own (verify/src/ipc.h): b"SKDB", a little-endian
u32 header length, a u64 blob length, the JSON header, then the blob. Tensors
travel as raw bytes in their own dtype inside the blob, described in the
header by {"dtype", "shape", "offset", "nbytes"}: never pickled, so the side
that parses them (the C++ verifier, or the candidate runner when inputs are
handed to it) reads plain numbers only.
"""

import json
import struct

import torch

MAGIC = b"SKDB"
MAX_HEADER = 16 << 20
MAX_BLOB = 64 << 30

# Element types the verifier decodes (kernelbench_compare.cc). Any other
# dtype is widened to one of these before it is sent.
WIRE_DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.bool: "bool",
}
WIRE_BY_NAME = {v: k for k, v in WIRE_DTYPES.items()}


class ChannelClosed(Exception):
    pass


def _recv_exact(sock, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ChannelClosed("the verifier closed the channel")
        got += k
    return buf


def read_frame(sock):
    prefix = _recv_exact(sock, 16)
    if bytes(prefix[:4]) != MAGIC:
        raise ChannelClosed("bad frame magic")
    hlen, blen = struct.unpack("<IQ", bytes(prefix[4:16]))
    if hlen > MAX_HEADER or blen > MAX_BLOB:
        raise ChannelClosed("frame over the size limit")
    header = json.loads(bytes(_recv_exact(sock, hlen)).decode("utf-8"))
    blob = _recv_exact(sock, blen) if blen else bytearray()
    return header, blob


def send_frame(sock, header, parts=()):
    """Sends `header` and the concatenation of `parts` (bytes-like)."""
    h = json.dumps(header, allow_nan=True, default=str).encode("utf-8")
    total = sum(len(p) for p in parts)
    sock.sendall(MAGIC + struct.pack("<IQ", len(h), total) + h)
    for p in parts:
        if len(p):
            sock.sendall(p)


def wire_dtype(t):
    """The dtype `t` travels as (after WidenForWire)."""
    if t.dtype in WIRE_DTYPES:
        return WIRE_DTYPES[t.dtype]
    if t.is_floating_point() or t.is_complex():
        return "float64"
    return "int64"


def widen_for_wire(t):
    if t.dtype in WIRE_DTYPES:
        return t
    if t.is_complex():
        return torch.view_as_real(t.resolve_conj()).to(torch.float64)
    return t.to(torch.float64 if t.is_floating_point() else torch.int64)


# Device tensors of at least this many bytes come to the host through
# page-locked memory (host_copy).
PINNED_MIN_BYTES = 1 << 20


def host_copy(t):
    """`t` on the host. A large device tensor is copied into page-locked
    memory from PyTorch's caching host allocator: the next fetch of that
    size gets the same pages back, so a 256 MiB output costs the link's
    copy, not a fresh pageable buffer's page faults and the driver's
    staging through it (about 170 ms a fetch of 256 MiB on an H100 host).
    Where the allocation fails (no page-locked memory to be had), the
    pageable copy."""
    if t.device.type == "cpu":
        return t
    if t.numel() * t.element_size() >= PINNED_MIN_BYTES:
        try:
            host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
            host.copy_(t)
            return host
        except RuntimeError:
            pass
    return t.cpu()


def tensor_bytes(t):
    """Raw bytes of `t` (any device), contiguous, in its wire dtype: a
    read-only byte view of a host copy (no second copy of an output of
    hundreds of MB: the view keeps its array alive until it is sent)."""
    src = t.detach()
    t = host_copy(widen_for_wire(src).contiguous())
    if t.numel() == 0:
        return b""
    if t.data_ptr() == src.data_ptr():
        # A CPU tensor is its own host copy: the view would see later
        # writes (a forward that changes its inputs after they are encoded).
        t = t.clone()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return memoryview(t.numpy()).cast("B").toreadonly()


def tensor_from_bytes(buf, dtype_name, shape):
    dtype = WIRE_BY_NAME.get(dtype_name) or getattr(torch, dtype_name)
    numel = 1
    for s in shape:
        numel *= int(s)
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    # Read in place (a received frame's blob is writable) where its
    # elements are aligned, copied once by clone() so that the tensor owns
    # its memory.
    view = memoryview(buf).cast("B")
    word = torch.int16 if dtype == torch.bfloat16 else dtype
    t = torch.frombuffer(view, dtype=word) if not view.readonly else None
    if t is None or t.data_ptr() % t.element_size():
        t = torch.frombuffer(bytearray(view), dtype=word)
    if dtype == torch.bfloat16:
        t = t.view(torch.bfloat16)
    return t.reshape(shape).clone()


class BlobWriter:
    """Collects tensors for one reply: descriptors for the header, parts for
    the blob."""

    def __init__(self):
        self.parts = []
        self.offset = 0

    def add(self, t, extra=None):
        raw = tensor_bytes(t)
        # A complex tensor travels as its (real, imaginary) pairs: its shape
        # gains a last dimension of 2 (view_as_real's).
        d = {"dtype": wire_dtype(t), "shape": list(t.shape) + ([2] if t.is_complex() else []),
             "offset": self.offset, "nbytes": len(raw)}
        if t.dtype not in WIRE_DTYPES:
            d["orig_dtype"] = str(t.dtype).replace("torch.", "")
        if extra:
            d.update(extra)
        self.parts.append(raw)
        self.offset += len(raw)
        return d


def encode_values(values, writer):
    """A JSON description of a list of forward arguments (tensors, numbers,
    strings, nested lists/tuples, None); tensors go to `writer`."""
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            d = writer.add(v)
            d["kind"] = "tensor"
            d["torch_dtype"] = str(v.dtype).replace("torch.", "")
            out.append(d)
        elif isinstance(v, bool):
            out.append({"kind": "bool", "value": v})
        elif isinstance(v, int):
            out.append({"kind": "int", "value": v})
        elif isinstance(v, float):
            out.append({"kind": "float", "value": v})
        elif isinstance(v, str):
            out.append({"kind": "str", "value": v})
        elif v is None:
            out.append({"kind": "none"})
        elif isinstance(v, (list, tuple)):
            out.append({"kind": "tuple" if isinstance(v, tuple) else "list",
                        "items": encode_values(list(v), writer)})
        elif isinstance(v, torch.dtype):
            out.append({"kind": "dtype", "value": str(v).replace("torch.", "")})
        else:
            raise TypeError("cannot send a %s between runners" % type(v).__name__)
    return out


def decode_values(desc, blob):
    out = []
    for d in desc:
        k = d["kind"]
        if k == "tensor":
            raw = memoryview(blob)[d["offset"]:d["offset"] + d["nbytes"]]
            t = tensor_from_bytes(raw, d["dtype"], d["shape"])
            want = d.get("torch_dtype")
            if want and want != d["dtype"]:
                if getattr(torch, want).is_complex:
                    t = torch.view_as_complex(t.contiguous())
                t = t.to(getattr(torch, want))
            out.append(t)
        elif k in ("bool", "int", "float", "str"):
            out.append(d["value"])
        elif k == "none":
            out.append(None)
        elif k in ("list", "tuple"):
            items = decode_values(d["items"], blob)
            out.append(tuple(items) if k == "tuple" else items)
        elif k == "dtype":
            out.append(getattr(torch, d["value"]))
        else:
            raise ValueError("unknown value kind %r" % k)
    return out
