"""Loading problems and answers the way KernelBench 423217d does, with the
candidate's builds split from its runs.

KernelBench (src/kernelbench/eval.py) execs a problem into a fresh dict and
then, for CUDA answers, execs the answer into the same dict (so an answer
may use the problem's globals); Triton answers are imported from a
temporary file (Triton's decorators need real source lines). Both are kept.

A CUDA answer builds when its module runs (load_inline). Here that happens
in a build process, where compilers may be started: the build shim gives
each load_inline call a directory named by a hash of everything that
determines its output, and the answer's run process (where no process can be
started) gets the shim that imports the library built there.
"""

import hashlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import time

import torch

BUILD_SALT = "skilldb-kb-build/1"

_EXT_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)


def load_problem(source):
    """Execs a problem; returns (context, Model, get_inputs, get_init_inputs).
    Raises what the problem raises."""
    context = {}
    code = compile(source, "<problem>", "exec")
    exec(code, context)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in context]
    if missing:
        raise NameError("the problem defines no %s" % ", ".join(missing))
    return context, context["Model"], context["get_inputs"], context["get_init_inputs"]


def load_answer(source, backend, context, scratch):
    """Execs an answer the way KernelBench does for `backend` and returns its
    ModelNew (None if it defines none)."""
    if backend in ("triton", "tilelang", "cute"):
        fd, path = tempfile.mkstemp(suffix=".py", prefix="answer_", dir=scratch)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location("temp_module", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["temp_module"] = module
        spec.loader.exec_module(module)
        return getattr(module, "ModelNew", None)
    code = compile(source, "<answer>", "exec")
    exec(code, context)
    return context.get("ModelNew")


def _as_list(v):
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def extension_key(name, cpp_sources, cuda_sources, functions, kwargs):
    """The build directory name of one load_inline call: a hash of its
    arguments, the torch version, the target architectures and Python's."""
    relevant = {k: v for k, v in kwargs.items()
                if k not in ("verbose", "build_directory", "keep_intermediates")}
    payload = {
        "salt": BUILD_SALT,
        "name": name,
        "cpp": _as_list(cpp_sources),
        "cuda": _as_list(cuda_sources),
        "functions": functions if isinstance(functions, dict) else _as_list(functions),
        "kwargs": {k: repr(v) for k, v in sorted(relevant.items())},
        "torch": torch.__version__,
        "arch": os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
        "python": sys.version_info[:2],
    }
    blob = json.dumps(payload, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


class ExtensionShim:
    """Stands in for torch.utils.cpp_extension.load_inline.

    mode "build": builds into root/<key> with torch's own load_inline, first
    with torch/extension.h in the CUDA sources replaced by the lighter
    torch/types.h that load_inline already puts at the top of a .cu file
    (most CUDA files need only ATen; the full header adds the C++ frontend
    and pybind11), and again as written if that does not compile.
    mode "run": imports root/<key>/<name>.so, which the build made.
    """

    def __init__(self, mode, root, light_cuda_include=True, pch=None, cache=None):
        import torch.utils.cpp_extension as cpp_ext
        self.cpp_ext = cpp_ext
        self.real = cpp_ext.load_inline
        self.mode = mode
        self.root = root
        self.light = light_cuda_include
        self.pch = pch
        self.cache = cache
        self.records = []

    # Keywords past cpp_sources go on by name: torch 2.x put sycl_sources
    # between cuda_sources and functions.
    def __call__(self, name, cpp_sources, cuda_sources=None, functions=None, **kwargs):
        key = extension_key(name, cpp_sources, cuda_sources, functions, kwargs)
        directory = os.path.join(self.root, key)
        if self.mode == "build" and self.cache:
            # Built before (by another answer with the same call): reused.
            cached = os.path.join(self.cache, key)
            if os.path.exists(os.path.join(cached, name + ".so")):
                self.records.append({"name": name, "key": key, "cached": True})
                return self.cpp_ext._import_module_from_library(
                    name, cached, kwargs.get("is_python_module", True))
        if self.mode == "run":
            so = os.path.join(directory, name + ".so")
            if not os.path.exists(so):
                raise RuntimeError(
                    "load_inline(%r): no library was built for this call (its "
                    "arguments differ from those the build step saw)" % name)
            self.records.append({"name": name, "key": key})
            return self.cpp_ext._import_module_from_library(
                name, directory, kwargs.get("is_python_module", True))
        os.makedirs(directory, exist_ok=True)
        kwargs = dict(kwargs)
        kwargs["build_directory"] = directory
        kwargs["verbose"] = False
        if self.pch:
            kwargs["extra_cflags"] = _as_list(kwargs.get("extra_cflags")) + [
                "-include", self.pch, "-Winvalid-pch"]
        record = {"name": name, "key": key, "light_include": False}
        start = time.time()
        cuda_list = _as_list(cuda_sources)
        light = [_EXT_INCLUDE.sub("", s) for s in cuda_list]
        if self.light and cuda_list and light != cuda_list:
            try:
                module = self.real(name, cpp_sources, cuda_sources=light,
                                   functions=functions, **kwargs)
                record["light_include"] = True
                record["seconds"] = time.time() - start
                self.records.append(record)
                return module
            except Exception as e:  # compile it as written below
                record["light_include_error"] = str(e)[-400:]
                _clean_build_dir(directory)
        module = self.real(name, cpp_sources, cuda_sources=cuda_sources,
                           functions=functions, **kwargs)
        record["seconds"] = time.time() - start
        self.records.append(record)
        return module


def _clean_build_dir(directory):
    for entry in os.listdir(directory):
        p = os.path.join(directory, entry)
        if os.path.isfile(p):
            os.unlink(p)


def make_pch(out_dir):
    """Precompiles torch/extension.h with the flags torch's own build of a
    load_inline binding (main.cpp) uses, into out_dir; returns the header
    to pass as `-include` (its .gch beside it). GCC uses the .gch when the
    flags match and quietly parses the header when they do not (the shim
    adds -Winvalid-pch, so the build log says which)."""
    import inspect
    import shlex
    import subprocess
    import torch.utils.cpp_extension as cpp_ext
    os.makedirs(out_dir, exist_ok=True)
    header = os.path.join(out_dir, "skilldb_torch_extension.h")
    with open(header, "w") as f:
        f.write("#pragma once\n#include <torch/extension.h>\n")
    probe = os.path.join(out_dir, "probe")
    os.makedirs(probe, exist_ok=True)
    src = os.path.join(probe, "main.cpp")
    open(src, "w").close()
    fn = cpp_ext._write_ninja_file_to_build_library
    params = inspect.signature(fn).parameters
    kw = dict(path=os.path.join(probe, "build.ninja"), name="skilldb_pch_probe", sources=[src],
              extra_cflags=[], extra_cuda_cflags=[], extra_sycl_cflags=[], extra_ldflags=[],
              extra_include_paths=[], with_cuda=False, with_sycl=False, is_standalone=False)
    fn(**{k: v for k, v in kw.items() if k in params})
    text = open(os.path.join(probe, "build.ninja")).read()
    cxx = re.search(r"^cxx = (.*)$", text, re.M).group(1).strip()
    cflags = re.search(r"^cflags = (.*)$", text, re.M).group(1)
    post = re.search(r"^post_cflags = (.*)$", text, re.M)
    cmd = [cxx] + shlex.split(cflags) + (shlex.split(post.group(1)) if post else []) + [
        "-x", "c++-header", header, "-o", header + ".gch"]
    subprocess.run(cmd, check=True, capture_output=True)
    return header


def install_shim(shim):
    import torch.utils.cpp_extension as cpp_ext
    cpp_ext.load_inline = shim

