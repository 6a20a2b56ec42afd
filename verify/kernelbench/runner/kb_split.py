"""Splitting a CUDA answer's source so that its kernels compile without
torch's headers.

A load_inline CUDA source is mostly kernels (device code that needs only
CUDA's headers) and host functions taking torch::Tensor that launch them.
nvcc parses everything it is given three times (cudafe++, cicc, then the
host compiler on cudafe++'s output, where no precompiled header applies),
so torch's headers are nearly all of such a build: for the study's l1p12
answer 24.7 s with torch/types.h against 0.74 s for its kernel alone
(bench/build_split.sh measures it).

split() cuts the source into two translation units:
  device  the kernels, the device functions and what they need (macros,
          non-torch headers, types and constants), and for every kernel a
          launcher: a host function that launches it with the configuration
          and arguments it is given; compiled by nvcc with CUDA's headers only
  host    the rest (the torch functions), each launch `k<<<g, b, s, st>>>(a)`
          replaced by the launcher's call `launch_k(g, b, s, st, a)`;
          compiled with the answer's C++ sources by the host compiler, where
          torch/extension.h comes precompiled

The computation does not change: the same kernels with the same launch
configuration on the same stream with the same arguments, converted to the
kernel's parameter types at the launcher's call as they were at the launch.
VERSION names this module's rules in build cache keys (kb_load): a build
split by an earlier version is never reused. Only what this module
understands is split; anything else raises
Unsplittable with the reason and the caller compiles the source whole (so a
split can cost a build its time, never its result).
"""

import re

VERSION = 2

# Headers that only device code needs or that a host compiler may not parse.
_DEVICE_ONLY_INCLUDE = re.compile(
    r'[<"](cub/|thrust/|cuda/|cooperative_groups|mma\.h|cuda_pipeline|cuda_awbarrier|'
    r'sm_\d|crt/|[^>"]*\.cuh[>"])')
# Headers of torch (and pybind11): the host part only.
_TORCH_INCLUDE = re.compile(r'[<"](torch/|ATen/|c10/|pybind11/|THC/|caffe2/)')
_TORCH_NAME = re.compile(r'\b(torch|at|c10|pybind11|py|caffe2)\s*::|\bTORCH_|\bAT_|\bC10_')
_WORD = re.compile(r"[A-Za-z_]\w*")
_BOTH_HEAD = re.compile(
    r"^(?:(?:static|inline|extern)\s+)*(?:struct|class|union|enum|typedef|using|template|"
    r"constexpr|const)\b")


_STD_HEADERS = ("cmath", "cstdlib", "cstdint", "cstddef", "cstring", "climits", "cfloat",
                "algorithm", "limits", "type_traits", "utility")


class Unsplittable(Exception):
    """The source has something the split does not handle (the message says
    what); it is to be compiled whole."""


class Split:
    def __init__(self, device, host, kernels):
        self.device = device    # source for nvcc, CUDA's headers only
        self.host = host        # source for the host compiler, torch included
        self.kernels = kernels  # names of the kernels given launchers


def _mask(src, comments_only=False):
    """src with comments and the insides of string and character literals
    blanked (newlines kept, so positions and lines stay); with
    `comments_only` the literals are kept."""
    out = list(src)
    n = len(src)

    def blank(a, b, literal=False):
        if literal and comments_only:
            return
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            if src[i:j].rstrip("\r").endswith("\\"):
                # The backslash splices the next line into the comment.
                raise Unsplittable("a // comment continued by a backslash")
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                raise Unsplittable("a comment is not closed")
            blank(i, j + 2)
            i = j + 2
        elif c == '"' and i > 0 and src[i - 1] == "R":
            m = re.match(r'"([^()\\\s]{0,16})\(', src[i:])
            if not m:
                raise Unsplittable("a raw string literal could not be read")
            end = src.find(")" + m.group(1) + '"', i)
            if end < 0:
                raise Unsplittable("a raw string literal is not closed")
            blank(i + 1, end + len(m.group(1)) + 1, literal=True)
            i = end + len(m.group(1)) + 2
        elif c == "'" and i > 0 and src[i - 1].isdigit() and i + 1 < n and src[i + 1].isalnum():
            i += 1  # a digit separator (1'000)
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                if src[j] == "\n":
                    raise Unsplittable("a string literal is not closed on its line")
                j += 2 if src[j] == "\\" else 1
            if j >= n:
                raise Unsplittable("a string literal is not closed")
            blank(i + 1, j, literal=True)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _matching(m, i, open_c, close_c):
    """Index of the bracket closing the one at m[i]."""
    depth = 0
    for k in range(i, len(m)):
        if m[k] == open_c:
            depth += 1
        elif m[k] == close_c:
            depth -= 1
            if depth == 0:
                return k
    raise Unsplittable("a bracket '%s' is not closed" % open_c)


def _top_level_split(text, sep=","):
    """text split at `sep` outside any brackets."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append((start, k))
            start = k + 1
    parts.append((start, len(text)))
    return parts


def _items(m):
    """The top-level items of masked source m: (kind, start, end) with kind
    'pp' (a preprocessor line with its continuations), 'func' (a function
    definition), 'block' (namespace or extern block) or 'decl' (anything
    ending in ';')."""
    items = []
    n = len(m)
    i = 0
    while i < n:
        if m[i].isspace():
            i += 1
            continue
        if m[i] == "#":
            j = i
            while True:
                e = m.find("\n", j)
                if e < 0:
                    e = n
                    break
                if m[e - 1] == "\\":
                    j = e + 1
                    continue
                break
            items.append(("pp", i, e))
            i = e
            continue
        start = i
        depth = 0
        kind = None
        while i < n:
            c = m[i]
            if c == "\n" and depth == 0:
                nxt = i + 1
                while nxt < n and m[nxt] in " \t":
                    nxt += 1
                if nxt < n and m[nxt] == "#":
                    raise Unsplittable("a preprocessor line inside a declaration at line %d"
                                       % (m.count("\n", 0, nxt) + 1))
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "{":
                if depth == 0:
                    head = m[start:i].strip()
                    close = _matching(m, i, "{", "}")
                    if re.match(r"^((inline\s+)?namespace\b|extern\s*\"\s*\"\s*$)", head):
                        kind, i = "block", close + 1
                        break
                    if head.endswith(")") or re.search(
                            r"\)\s*(const|noexcept|override|final|mutable|->[^=;]*)\s*$", head):
                        kind, i = "func", close + 1
                        break
                    i = close  # struct, class, enum, initializer: on to ';'
                else:
                    i = _matching(m, i, "{", "}")
            elif c == ";" and depth == 0:
                kind, i = "decl", i + 1
                break
            i += 1
        if kind is None:
            raise Unsplittable("the source ends inside a declaration")
        # A ';' right after a function's body (a lambda's, `};`) belongs to it.
        j = i
        while j < n and m[j] in " \t":
            j += 1
        if kind == "func" and j < n and m[j] == ";":
            i = j + 1
        items.append((kind, start, i))
    return items


def _has(word, text):
    return re.search(r"\b%s\b" % word, text) is not None


def _kernel_signature(m, src, start, end):
    """(name, parameter text) of the kernel defined in src[start:end]."""
    body = m.find("{", start, end)
    close = m.rfind(")", start, body) if body >= 0 else -1
    if close < 0:
        raise Unsplittable("a kernel's parameters could not be read")
    depth = 0
    for k in range(close, start - 1, -1):
        if m[k] == ")":
            depth += 1
        elif m[k] == "(":
            depth -= 1
            if depth == 0:
                open_ = k
                break
    else:
        raise Unsplittable("a kernel's parameters could not be read")
    name = re.search(r"([A-Za-z_]\w*)\s*$", m[start:open_])
    if not name:
        raise Unsplittable("a kernel's name could not be read")
    params = src[open_ + 1:close]
    pm = m[open_ + 1:close]
    if "=" in pm:
        raise Unsplittable("kernel %s has a default argument" % name.group(1))
    names = []
    if pm.strip() not in ("", "void"):
        for a, b in _top_level_split(pm):
            p = pm[a:b].strip()
            pn = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", p)
            words = _WORD.findall(p)
            if not pn or len(words) < 2 or pn.group(1).startswith("__") or pn.group(1) in (
                    "int", "float", "double", "long", "short", "char", "unsigned", "bool",
                    "signed", "size_t", "const"):
                raise Unsplittable("kernel %s has a parameter without a name" % name.group(1))
            if "..." in p:
                raise Unsplittable("kernel %s is variadic" % name.group(1))
            names.append(pn.group(1))
    return name.group(1), params, names


def _name_before(m, at):
    """(start, name) of the identifier ending just before m[at] (spaces
    skipped), or (at, "")."""
    e = at
    while e > 0 and m[e - 1].isspace():
        e -= 1
    b = e
    while b > 0 and (m[b - 1].isalnum() or m[b - 1] == "_"):
        b -= 1
    name = m[b:e]
    return (b, name) if name and not name[0].isdigit() else (at, "")


def _rewrite_launches(src, m, kernels, tag):
    """src (one host item) with each `k<<<...>>>(...)` of a known kernel
    turned into its launcher's call. Every other mention of a kernel's name
    in host code is refused (a pointer to it, an attribute call, a local
    declaration hiding it: the split would launch something else or
    nothing)."""
    text = _mask(src, comments_only=True)  # the original, comments blanked
    edits = []
    pos = 0
    while True:
        at = m.find("<<<", pos)
        if at < 0:
            break
        e = at
        while e > 0 and m[e - 1].isspace():
            e -= 1
        if e > 0 and m[e - 1] == ">":
            raise Unsplittable("a launch with template arguments")
        start, name = _name_before(m, at)
        if name not in kernels:
            raise Unsplittable("a launch of %s, which is not a kernel of this source"
                               % (name or "an expression"))
        if start > 0 and (m[start - 1] == ":" or m[start - 1] == "." or m[start - 1] == ">"):
            raise Unsplittable("a launch of a qualified name")
        depth, k, close_cfg = 0, at + 3, -1
        while k < len(m):
            c = m[k]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0 and m.startswith(">>>", k):
                close_cfg = k
                break
            k += 1
        if close_cfg < 0:
            raise Unsplittable("a launch configuration is not closed")
        cfg = [text[at + 3 + a:at + 3 + b].strip()
               for a, b in _top_level_split(m[at + 3:close_cfg])]
        if not 2 <= len(cfg) <= 4 or any(not c for c in cfg):
            raise Unsplittable("a launch configuration with %d parts" % len(cfg))
        cfg = [c if re.fullmatch(r"[\w.]+", c) else "(%s)" % c for c in cfg]
        cfg += ["0"] * (4 - len(cfg))
        p = close_cfg + 3
        while p < len(m) and m[p].isspace():
            p += 1
        if p >= len(m) or m[p] != "(":
            raise Unsplittable("a launch without arguments in parentheses")
        close_args = _matching(m, p, "(", ")")
        args = text[p + 1:close_args].strip()
        # nvcc evaluates the configuration before the arguments, a call's
        # arguments are unsequenced: only expressions without side effects
        # of their own may move (a function they call is taken as pure).
        effects = re.sub(r"(==|!=|<=|>=|->)", "  ", m[at + 3:close_cfg] + " " + m[p + 1:close_args])
        if re.search(r"\+\+|--|[^=!<>]=", effects):
            raise Unsplittable("a launch whose configuration or arguments assign")
        call = "skilldb_launch_%s_%s(%s%s)" % (
            tag, name, ", ".join(cfg), ", " + args if args else "")
        edits.append((start, close_args + 1, call))
        pos = close_args + 1
    # Any other mention of a kernel's name.
    rest = list(m)
    for a, b, _ in edits:
        rest[a:b] = " " * (b - a)
    for word in _WORD.finditer("".join(rest)):
        if word.group(0) in kernels:
            raise Unsplittable("host code names kernel %s other than to launch it"
                               % word.group(0))
    out = src
    for a, b, text in reversed(edits):
        out = out[:a] + text + out[b:]
    return out


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)[ \t]*((?:[^\n]*\\\n)*[^\n]*)", re.M)
_DEFINE = re.compile(r"(\w+)(\([^)]*\))?(.*)", re.S)


def _directives(m):
    """(directive, rest) of every preprocessor line of masked source m, top
    level or inside a function, in order, continuations joined: ("define",
    "N 4"), ("ifdef", "X"), ("include", "<a.h>")."""
    for d in _DIRECTIVE.finditer(m):
        yield d.group(1), d.group(2).replace("\\\n", " ").strip()


def _defines(m):
    """(name, parameters or "", body) of every #define and #undef of m."""
    for directive, rest in _directives(m):
        if directive in ("define", "undef"):
            d = _DEFINE.match(rest)
            if d:
                yield d.group(1), d.group(2) or "", d.group(3)


# Macros whose value a condition may test: the compilers' and CUDA's own,
# the same with or without torch's headers.
_SAFE_MACRO = re.compile(r"^(defined|__CUDA_ARCH__|CUDA_VERSION|CUDART_VERSION|"
                         r"__cplusplus|__GNUC\w*|__clang\w*|__linux__|__x86_64__|__aarch64__)$")


def _check_conditions(m, torch_macros):
    """A preprocessor condition (#if, #ifdef, #elif ...) may test a macro
    that torch's headers define, and then choose otherwise in the device
    part, which has none of them: the code would change without a compile
    error. With `torch_macros` (the names torch's headers define beyond
    CUDA's) a condition on any of them is refused; without, only
    conditions on the compilers' and CUDA's macros, and on macros this
    source defined before from literals, are let through."""
    defined = {}
    for directive, rest in _directives(m):
        if directive == "define":
            d = _DEFINE.match(rest)
            if d:
                defined[d.group(1)] = set(_WORD.findall(d.group(3)))
            continue
        if directive not in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"):
            continue
        # Numbers (1.0f, 0x1Fu) are not names.
        condition = re.sub(r"\b\d[\w.']*", " ", rest)
        for name in _WORD.findall(condition):
            if torch_macros is not None:
                if name in torch_macros or defined.get(name, set()) & torch_macros:
                    raise Unsplittable("a preprocessor condition on %s, which torch's headers "
                                       "define or it is defined from" % name)
                continue
            if _SAFE_MACRO.match(name):
                continue
            if name in defined and all(_SAFE_MACRO.match(w) for w in defined[name]):
                continue
            raise Unsplittable("a preprocessor condition on %s (torch's headers may define it)"
                               % name)


def has_conditions(source):
    """Whether the source has preprocessor conditions (then split() is
    exact only with torch_macros)."""
    return re.search(r"^[ \t]*#[ \t]*(if|elif)", _mask(source), re.M) is not None


def split(source, tag, torch_macros=None):
    """Splits one CUDA source (the answer's cuda_sources joined); `tag` (an
    identifier fragment, say the build's hash) names the launchers so that
    two extensions' launchers never meet; `torch_macros`, if given, the
    macros torch's headers define (see _check_conditions). Raises
    Unsplittable."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", tag):
        raise ValueError("tag must be an identifier fragment")
    if "\r" in source:
        raise Unsplittable("carriage returns in the source")
    m = _mask(source)
    if "<<<" not in m:
        raise Unsplittable("no kernel launch")
    # What nvcc defines and the host compiler does not: host code that tests
    # it would take another branch in the host part.
    nv = re.search(r"\b(__CUDACC\w*|__NVCC__|__CUDA_ARCH_LIST__|__NVCC_DIAG\w*)\b", m)
    if nv:
        raise Unsplittable("the source tests %s, which only nvcc defines" % nv.group(1))
    # Half precision anywhere (the host part may convert to and from it):
    # nvcc builds with torch's -D__CUDA_NO_HALF_CONVERSIONS__ (and the
    # like), the host compiler not; a conversion nvcc refuses would compile
    # there.
    if re.search(r"\b(__half2?|half2?|__nv_bfloat16\w*|nv_bfloat16\w*|__nv_fp8\w*)\b", m):
        raise Unsplittable("half-precision types (their conversions differ between nvcc and "
                           "the host compiler)")
    if any("<<<" in body for _, _, body in _defines(m)):
        raise Unsplittable("a macro that launches a kernel")
    if re.search(r"\bcuda(MemcpyToSymbol|MemcpyFromSymbol|GetSymbolAddress|GetSymbolSize)"
                 r"(Async)?\b|\bcudaFuncSetAttribute\b|\bcudaOccupancy\w*\b|"
                 r"\bcudaFuncGetAttributes\b|\bcudaLaunch(Kernel|CooperativeKernel)\w*\b", m):
        raise Unsplittable("host code that names a device symbol")
    items = _items(m)
    _check_conditions(m, torch_macros)
    kernels = {}
    classified = []
    for kind, a, b in items:
        text, mt = source[a:b], m[a:b]
        if kind == "pp":
            if re.match(r"#\s*include\b", mt):
                path = source[a:b]
                if _TORCH_INCLUDE.search(path):
                    classified.append(("host", text))
                elif _DEVICE_ONLY_INCLUDE.search(path):
                    classified.append(("device", text))
                else:
                    classified.append(("both", text))
            else:
                classified.append(("both", text))
            continue
        device_words = [w for w in ("__global__", "__device__", "__constant__", "__shared__",
                                    "__managed__") if _has(w, mt)]
        if kind == "block":
            if device_words:
                raise Unsplittable("device code inside a namespace or extern block")
            if "<<<" in mt:
                raise Unsplittable("a launch inside a namespace or extern block")
            classified.append(("host", text))
            continue
        if _has("__managed__", mt):
            raise Unsplittable("a __managed__ variable")
        if _has("__global__", mt) and kind == "func":
            if re.match(r"^\s*template\b", mt):
                raise Unsplittable("a template kernel")
            if _TORCH_NAME.search(mt):
                raise Unsplittable("a kernel that uses torch")
            name, params, names = _kernel_signature(m, source, a, b)
            if name in kernels:
                raise Unsplittable("kernel %s is defined twice" % name)
            kernels[name] = (params, names)
            classified.append(("kernel", (name, text)))
            continue
        struct_like = _BOTH_HEAD.match(mt.strip()) and kind == "decl"
        if device_words and not struct_like:
            if _TORCH_NAME.search(mt):
                raise Unsplittable("device code that uses torch")
            if _has("__host__", mt) and not _has("__global__", mt):
                # In both parts: a function must be inline there (one
                # definition per part, both linked into one library).
                if kind == "func" and not re.match(r"^\s*template\b", mt) and not re.search(
                        r"\b(inline|__inline__|__forceinline__|static|constexpr)\b",
                        mt[:mt.find("(")]):
                    text = "inline " + text
                classified.append(("both", text))
            else:
                classified.append(("device", text))
            continue
        if kind == "decl" and struct_like and not _TORCH_NAME.search(mt) \
                and not re.search(r"\bnamespace\s+(torch|at|c10|py)\b", mt):
            classified.append(("both", text))
            continue
        classified.append(("host", text))
    if not kernels:
        raise Unsplittable("no kernel definition")
    for kind, a, b in items:
        if kind != "pp" and re.search(r"^[ \t]*#[ \t]*(define|undef)\b", m[a:b], re.M):
            # It would reach only the part its item goes to.
            raise Unsplittable("a #define or #undef inside a function or declaration")
    for name, params, _ in _defines(m):
        if ({name} | set(_WORD.findall(params))) & set(kernels):
            raise Unsplittable("a macro named like a kernel (or with such a parameter)")
    # The standard headers torch's would have brought: the same overloads
    # (abs, min, max on floats ...) for the kernels as in the whole build.
    device = ["#include <cuda.h>", "#include <cuda_runtime.h>"] + [
        "#include <%s>" % h for h in _STD_HEADERS]
    host = ["#include <cuda.h>", "#include <cuda_runtime.h>"]
    for where, what in classified:
        if where == "kernel":
            name, text = what
            params, names = kernels[name]
            head = "void skilldb_launch_%s_%s(dim3 skilldb_g, dim3 skilldb_b, size_t skilldb_s, " \
                   "cudaStream_t skilldb_st%s)" % (tag, name, ", " + params if names else "")
            device.append(text)
            device.append("%s {\n  %s<<<skilldb_g, skilldb_b, skilldb_s, skilldb_st>>>(%s);\n}"
                          % (head, name, ", ".join(names)))
            host.append(head + ";")
        elif where == "device":
            device.append(what)
        elif where == "both":
            device.append(what)
            host.append(what)
        else:
            host.append(what)
    # The launches, in host items only (a launch from device code, dynamic
    # parallelism, stays in the device part and is not supported there).
    out_host = []
    for line in host:
        # Launcher declarations name only their launcher; every other host
        # item has its launches rewritten and no other use of a kernel.
        out_host.append(line if line.startswith("void skilldb_launch_") else
                        _rewrite_launches(line, _mask(line), kernels, tag))
    for d in device:
        if "<<<" in _mask(d) and not d.lstrip().startswith("void skilldb_launch_"):
            raise Unsplittable("a launch from device code")
    return Split("\n".join(device) + "\n", "\n".join(out_host) + "\n", sorted(kernels))
