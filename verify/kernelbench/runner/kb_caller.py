"""The generic caller: an answer's load_inline functions called without a
pybind11 binding of the answer's own.

load_inline(name, cpp_sources, functions=[...]) compiles, per answer, a
main.cpp that includes torch/extension.h and binds each function with
pybind11. On the H100 machine that file took 8.6 s with a precompiled
header and 23 s without; nearly all of it is torch's headers, not the
answer (an empty file with torch/extension.h precompiled: 5.7 s on this
project's CPU machine, with torch/types.h: 1.6 s).

Here an answer's C++ sources are compiled with torch/types.h and, for each
function, thunks (skilldb_thunk.h) that a caller built once per torch and
Python (skilldb_caller.cpp) calls, converting arguments and results with
pybind11's own casters for the functions' parameter and return types: the
conversions, the errors for arguments that do not fit and the handling of
torch's errors are those of load_inline's binding. Whatever the thunks do
not cover (a type they do not list, sources that use pybind11 or Python's
API, options they do not know, no functions named) is built with its own
binding as before, and the build record says why.

A thunk library in an extension's directory is NAME.thunks.so with
NAME.thunks.json (the functions, whether torch's error handling wraps
them, the caller's key), written last: a directory without it holds an
ordinary extension, NAME.so.
"""

import hashlib
import json
import os
import re
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "skilldb_caller"
SALT = "skilldb-kb-caller/2"  # /2: built at -O3
LIBRARY_SUFFIX = ".thunks.so"
META_SUFFIX = ".thunks.json"

# load_inline's keywords past the sources the thunks reproduce (those that
# change only how a build is run or what it links) or check below.
_KNOWN_OPTIONS = {
    "extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths",
    "build_directory", "verbose", "with_cuda", "is_python_module",
    "with_pytorch_error_handling", "keep_intermediates", "use_pch", "no_implicit_headers",
    "sycl_sources", "extra_sycl_cflags", "with_sycl"}
_PYTHON_API = re.compile(r"pybind11|PYBIND11|\bpy\s*::|Python\.h|torch/python\.h|\bPyObject\b")
_EXT_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)

_callers = {}  # caller key -> its imported module
_key = []      # caller_key(), once computed


def caller_key():
    """The caller's directory name under an extension root: a hash of its
    sources, the torch version and Python's. Part of every extension's key
    (kb_load.extension_key): a thunk library is made for one caller."""
    if _key:
        return _key[0]
    h = hashlib.sha256(SALT.encode())
    for f in ("skilldb_caller.cpp", "skilldb_thunk.h"):
        with open(os.path.join(HERE, f), "rb") as src:
            h.update(src.read())
    h.update(json.dumps([torch.__version__, list(sys.version_info[:2])]).encode())
    _key.append("caller-" + h.hexdigest()[:24])
    return _key[0]


def caller_built(root):
    """Whether the caller is built under the extension root `root`."""
    return bool(root) and os.path.exists(os.path.join(root, caller_key(), NAME + ".so"))


def build_caller(root, load_inline):
    """Builds the caller into root/<caller_key()> with torch's own
    `load_inline` (so with torch's flags and pybind11's ABI); returns the
    key. Raises what the build raises."""
    key = caller_key()
    directory = os.path.join(root, key)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(HERE, "skilldb_caller.cpp")) as f:
        source = f.read()
    # -O3: a call's conversions are inside the timed calls of every answer
    # (load_inline's own bindings are compiled at the answer's level, -O3
    # for most).
    load_inline(NAME, [source], functions=None, extra_cflags=["-O3"], extra_include_paths=[HERE],
                extra_ldflags=["-ldl"], build_directory=directory, verbose=False)
    return key


def functions_of(functions):
    """load_inline's `functions` as it reads them: {name: docstring}, or
    None if it is neither a name, a list nor a dict."""
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, list):
        return {f: f for f in functions}
    if isinstance(functions, dict):
        return dict(functions)
    return None


def odd_arguments(cpp_sources, kwargs):
    """What of load_inline's arguments torch's own build would refuse or
    treat otherwise than the thunks (sources that are neither a string nor
    a list, flags that are not lists); None if nothing. Such a call gets
    load_inline's binding, which does what torch does with them."""
    if not isinstance(cpp_sources, (str, list)):
        return "cpp_sources is a %s" % type(cpp_sources).__name__
    for k in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"):
        if kwargs.get(k) is not None and not isinstance(kwargs[k], list):
            return "%s is a %s" % (k, type(kwargs[k]).__name__)
    return None


def not_eligible(cpp_text, functions, kwargs):
    """Why a load_inline call with these C++ sources (all that the binding's
    file would hold), functions and options cannot be built with thunks;
    None if it can."""
    if functions is None:
        return "no functions named (the sources bind themselves)"
    fns = functions_of(functions)
    if not fns:
        return "no functions named"
    if any(not isinstance(f, str) or not re.fullmatch(r"[A-Za-z_]\w{0,200}", f, re.ASCII)
           for f in fns):
        return "a function name is not an identifier"
    # load_inline pastes a docstring into its binding's source as it is: one
    # with a quote, a backslash or a line break changes or breaks that source.
    if any(not isinstance(d, str) or re.search(r'["\\\n\r]', d) for d in fns.values()):
        return "a docstring load_inline would paste into its source as it is"
    unknown = sorted(set(kwargs) - _KNOWN_OPTIONS)
    if unknown:
        return "load_inline options %s" % unknown
    if kwargs.get("is_python_module", True) is not True:
        return "is_python_module is not True"
    if kwargs.get("no_implicit_headers") or kwargs.get("sycl_sources") or kwargs.get("with_sycl"):
        return "no_implicit_headers or SYCL"
    if _PYTHON_API.search(cpp_text):
        return "the sources use pybind11 or Python's API"
    return None


# What a thunk file of declarations only starts with (light_eligible): the
# tensor type and torch's names for ATen's, as torch/types.h gives them.
_LIGHT_PRELUDE = ("#include <ATen/core/Tensor.h>\n"
                  "namespace torch { using namespace at; using Dtype = at::ScalarType; }")
# Lines a file of declarations may hold besides them: the includes of torch's
# headers (left out of the thunk file) and of the standard library's.
_DECLARATION_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*(?:[<"]torch/(?:extension|types)\.h[>"]|<[a-z_]+>)[ \t]*$',
    re.M)
_TORCH_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/(?:extension|types)\.h[>"]'
                            r'[^\n]*$', re.M)


def light_eligible(cpp_text):
    """Whether these C++ sources only declare (no braces: no definitions,
    no namespaces or classes; no preprocessor lines but the includes of
    torch/extension.h, torch/types.h and standard headers): their thunks
    then compile after ATen/core/Tensor.h (thunk_source(light=True)), and a
    declaration means the same after either header or does not compile."""
    rest = _DECLARATION_INCLUDE.sub("", cpp_text)
    return "{" not in rest and "#" not in rest


def thunk_source(cpp_text, functions, light=False):
    """The thunk library's one C++ file: torch/types.h (`light`: the tensor
    type and torch's names for ATen's, for sources that light_eligible
    passes) and the thunk header, the sources (their torch/extension.h
    includes left out: that header is torch/types.h's and the C++
    frontend's and pybind11's; a source that needs more does not compile
    and is built with its own binding), then each function's thunks."""
    text = _TORCH_INCLUDE.sub("", cpp_text) if light else _EXT_INCLUDE.sub("", cpp_text)
    return "\n".join(
        [_LIGHT_PRELUDE if light else "#include <torch/types.h>", '#include "skilldb_thunk.h"',
         text] + ["SKILLDB_THUNK(%s)" % f for f in functions_of(functions)]) + "\n"


def library_path(directory, name):
    return os.path.join(directory, name + LIBRARY_SUFFIX)


def has_thunks(directory, name):
    return os.path.exists(os.path.join(directory, name + META_SUFFIX))


def write_meta(directory, name, functions, error_handling):
    """Marks the thunk library in `directory` complete (written last,
    atomically)."""
    meta = {"functions": functions_of(functions), "error_handling": bool(error_handling),
            "caller": caller_key()}
    path = os.path.join(directory, name + META_SUFFIX)
    with open(path + ".tmp", "w") as f:
        json.dump(meta, f)
    os.replace(path + ".tmp", path)


def remove(directory, name):
    for p in (library_path(directory, name), os.path.join(directory, name + META_SUFFIX)):
        if os.path.exists(p):
            os.unlink(p)


def _caller(root, key):
    if key not in _callers:
        import torch.utils.cpp_extension as cpp_ext
        directory = os.path.join(root, key)
        if not os.path.exists(os.path.join(directory, NAME + ".so")):
            raise ImportError("the generic caller %s is not built under %s" % (key, root))
        _callers[key] = cpp_ext._import_module_from_library(NAME, directory, True)
    return _callers[key]


def load_module(root, directory, name):
    """The module load_inline would have returned for the thunk library
    `name` in `directory`: a module whose attributes are its functions,
    called through the caller under the extension root `root`. ImportError
    if it does not load."""
    with open(os.path.join(directory, name + META_SUFFIX)) as f:
        meta = json.load(f)
    caller = _caller(root, meta["caller"])
    functions = caller.load(library_path(directory, name), dict(meta["functions"]),
                            bool(meta["error_handling"]))
    module = types.ModuleType(name, "thunks of %s, called by the generic caller" % name)
    module.__file__ = library_path(directory, name)
    for f in meta["functions"]:
        setattr(module, f, functions[f])
    return module
