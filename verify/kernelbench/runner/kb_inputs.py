"""Input specs: what a problem's get_inputs() returns, and fresh inputs like it.

describe() turns one call of get_inputs() into a spec per argument: kind,
dtype, shape and, for tensors, the distribution its values came from when it
is one torch draws directly (torch.rand, torch.randn, torch.randint, a
Bernoulli mask, a constant). generate() draws fresh inputs from such specs
on the device with a seeded generator, which is what makes fresh inputs for
every timed call affordable on problems whose inputs are gigabytes. An
argument whose values match none of these (a triangular matrix, sorted
values, a positive-definite matrix) makes the spec "replay": fresh inputs
then come from get_inputs() itself under a new seed.
"""

import math

import torch

# Fewer elements than this and a draw is not classified (replayed instead).
MIN_CLASSIFY = 4096
# Integer tensors with fewer elements are replayed.
MIN_CLASSIFY_INT = 256
# Elements looked at when classifying (a strided subsample of the tensor).
SAMPLE = 1 << 20


def _stats(t):
    flat = t.detach().reshape(-1)
    n = flat.numel()
    if n > SAMPLE:
        step = n // SAMPLE
        flat = flat[::step][:SAMPLE]
    x = flat.to(torch.float64).cpu()
    return x


def _sorted(x, shape):
    """Is the sample `x` sorted, either way, whole or along the last
    dimension of `shape` (a tensor's rows)?"""
    n = x.numel()
    if n < 2:
        return False
    d = x[1:] - x[:-1]
    if bool((d >= 0).all()) or bool((d <= 0).all()):
        return True
    row = int(shape[-1]) if len(shape) >= 2 else n
    if 1 < row < n and n == math.prod(int(s) for s in shape):  # not a subsample
        dr = x.reshape(-1, row)
        dr = dr[:, 1:] - dr[:, :-1]
        return bool((dr >= 0).all()) or bool((dr <= 0).all())
    return False


def _looks_randint(x, lo, hi, shape=()):
    """Do the integers `x` (float64, a sample) look like independent draws,
    uniform over [lo, hi]? Their mean, their spread and how many distinct
    values show must be what such draws give (a permutation, sorted offsets,
    a few repeated ids are not: their values are replayed)."""
    n = x.numel()
    if n < MIN_CLASSIFY_INT:
        return False
    v = hi - lo + 1
    sd = math.sqrt((v * v - 1) / 12.0)
    if abs(float(x.mean()) - (lo + hi) / 2.0) > 6.0 * sd / math.sqrt(n):
        return False
    if abs(float(x.std()) - sd) > 0.1 * sd:
        return False
    if _sorted(x, shape):
        return False  # sorted either way, whole or by rows: offsets, bounds
    # Distinct values among n draws from v: expected v (1 - (1 - 1/v)^n),
    # with a spread under sqrt of that.
    expected = v * -math.expm1(n * math.log1p(-1.0 / v)) if v > 1 else 1.0
    distinct = int(torch.unique(x).numel())
    return abs(distinct - expected) <= 6.0 * math.sqrt(expected) + 2


def classify(t):
    """The distribution `t`'s values look drawn from, as a dict, or
    {"dist": "replay"}."""
    if t.numel() == 0:
        return {"dist": "empty"}
    if t.is_complex():
        return {"dist": "replay"}  # its values as they are: no drawn complex
    if t.dtype == torch.bool:
        x = _stats(t)
        return {"dist": "bernoulli", "p": float(x.mean())}
    x = _stats(t)
    n = x.numel()
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return {"dist": "const", "value": lo}
    if not t.is_floating_point():
        # Integers: uniform over [lo, hi] when they look drawn that way.
        return {"dist": "randint", "low": int(lo), "high": int(hi) + 1} \
            if _looks_randint(x, lo, hi, list(t.shape)) else {"dist": "replay"}
    if n < MIN_CLASSIFY:
        return {"dist": "replay"}
    mean = float(x.mean())
    std = float(x.std())
    zeros = float((x == 0).to(torch.float64).mean())
    tol = 6.0 / math.sqrt(n)
    if zeros > 0.01:
        return {"dist": "replay"}
    if lo >= 0.0 and hi < 1.0 and abs(mean - 0.5) < tol * 0.3 and abs(std - 0.28868) < 0.02:
        return {"dist": "rand"}
    if abs(mean) < tol * 1.5 and abs(std - 1.0) < 0.03:
        kurt = float(((x - mean) ** 4).mean() / (std ** 4))
        if abs(kurt - 3.0) < 0.3:
            return {"dist": "randn"}
    return {"dist": "replay"}


def describe(values, classify_values=True):
    """Specs of the forward arguments `values` (the list get_inputs()
    returned)."""
    specs = []
    for v in values:
        if isinstance(v, torch.Tensor):
            s = {"kind": "tensor", "dtype": str(v.dtype).replace("torch.", ""),
                 "shape": list(v.shape), "bytes": v.numel() * v.element_size()}
            if classify_values and v.device.type != "meta":
                s.update(classify(v))
            else:
                s["dist"] = "replay"
            specs.append(s)
        elif isinstance(v, bool):
            specs.append({"kind": "bool", "value": v})
        elif isinstance(v, (int, float)):
            specs.append({"kind": type(v).__name__, "value": v})
        else:
            specs.append({"kind": "other", "type": type(v).__name__})
    return specs


def replay_needed(specs):
    for s in specs:
        if s["kind"] == "tensor" and s.get("dist") == "replay":
            return True
        if s["kind"] == "other":
            return True
    return False


def generate(specs, seed, device):
    """Fresh forward arguments from `specs` (no "replay" among them), drawn
    on `device` from a generator seeded with `seed`."""
    g = torch.Generator(device=device)
    g.manual_seed(int(seed) & ((1 << 63) - 1))
    out = []
    for s in specs:
        if s["kind"] != "tensor":
            out.append(s["value"])
            continue
        dtype = getattr(torch, s["dtype"])
        shape = s["shape"]
        d = s["dist"]
        if d == "empty":
            t = torch.empty(shape, dtype=dtype, device=device)
        elif d == "const":
            t = torch.full(shape, s["value"], dtype=dtype, device=device)
        elif d == "bernoulli":
            t = torch.rand(shape, generator=g, device=device) < s["p"]
        elif d == "randint":
            t = torch.randint(s["low"], s["high"], shape, generator=g,
                              device=device, dtype=torch.int64).to(dtype)
        elif d == "rand":
            t = torch.rand(shape, generator=g, device=device, dtype=torch.float32).to(dtype)
        elif d == "randn":
            t = torch.randn(shape, generator=g, device=device, dtype=torch.float32).to(dtype)
        else:
            raise ValueError("spec %r cannot be generated" % d)
        out.append(t)
    return out


def nbytes(values):
    total = 0
    for v in values:
        if isinstance(v, torch.Tensor):
            total += v.numel() * v.element_size()
        elif isinstance(v, (list, tuple)):
            total += nbytes(v)
    return total
