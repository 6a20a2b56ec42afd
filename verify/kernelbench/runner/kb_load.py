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

import kb_caller
import kb_split

BUILD_SALT = "skilldb-kb-build/1"

# The headers precompiled (make_pch): torch/extension.h for load_inline's
# bindings, torch/types.h for thunks (kb_caller). Under a precompiled
# headers' root, each has a directory of its own (PCH_DIRS), made apart:
# thunks need only torch/types.h, a third of torch/extension.h's time, and
# builds wait for it in a cold cache's first burst.
PCH_EXTENSION = "skilldb_torch_extension.h"
PCH_TYPES = "skilldb_torch_types.h"
# ATen/core/Tensor.h, for thunks whose C++ sources only declare functions
# (kb_caller.light_eligible): made beside torch/types.h, in its directory.
PCH_TENSOR = "skilldb_torch_tensor.h"
PCH_DIRS = {PCH_TYPES: "types", PCH_TENSOR: "types", PCH_EXTENSION: "ext"}
PCH_INCLUDES = {PCH_EXTENSION: "torch/extension.h", PCH_TYPES: "torch/types.h",
                PCH_TENSOR: "ATen/core/Tensor.h"}

# How a split build's record begins when one of its parts did not compile
# (_build_split); the build as written comes next, not the light one.
_SPLIT_PART_FAILED = "split, a part did not build"

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


def extension_key(name, cpp_sources, cuda_sources, functions, kwargs, split=False, arch=None):
    """The build directory name of one load_inline call: a hash of its
    arguments, the torch version, the target architectures (`arch`, else
    TORCH_CUDA_ARCH_LIST: the build sets it, the run step is told the
    build's), Python's, the generic caller's key and, for a build that may
    be split, the splitter's version."""
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
        "arch": os.environ.get("TORCH_CUDA_ARCH_LIST", "") if arch is None else arch,
        "python": sys.version_info[:2],
        # the thunks' and the caller's sources: a thunk library is made for
        # one caller (kb_caller)
        "caller": kb_caller.caller_key(),
    }
    if split and cuda_sources:
        payload["split"] = kb_split.VERSION
    blob = json.dumps(payload, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


class VerifierError(RuntimeError):
    """A failure of the verifier's own state (the extension cache lacks what
    its build step built, or the generic caller), not of the answer: the
    run step reports it as the system's (verdict "error"), never as the
    answer's compile error."""


class ExtensionShim:
    """Stands in for torch.utils.cpp_extension.load_inline.

    mode "build": builds into root/<key> with torch's own load_inline. CUDA
    sources are tried three ways, each only if the one before fails: split
    (kb_split: the kernels through nvcc without torch's headers, the torch
    functions with the C++ sources, where torch/extension.h is precompiled),
    then whole with torch/extension.h replaced by the lighter torch/types.h
    that load_inline already puts at the top of a .cu file (most CUDA files
    need only ATen; the full header adds the C++ frontend and pybind11), then
    as written. The record says which one built and why the others did not.
    With `generic_caller` and the caller built in `cache` (kb_caller), the
    functions of C++-only and split builds are compiled as thunks with
    torch/types.h instead of a binding with torch/extension.h; where the
    thunks do not cover a call or do not build, it gets its binding as
    above, and the record's "binding" says which and why.
    `pch` is the precompiled headers' root (make_pch's out_dir for each
    header, in its PCH_DIRS directory), or None.
    mode "run": imports root/<key>/<name>.so, which the build made, or loads
    its thunk library through the caller in root; `arch` is the
    TORCH_CUDA_ARCH_LIST the build ran with (None: this process's).
    """

    def __init__(self, mode, root, light_cuda_include=True, pch=None, cache=None, split=True,
                 arch=None, generic_caller=True, built=None):
        import torch.utils.cpp_extension as cpp_ext
        self.cpp_ext = cpp_ext
        self.real = cpp_ext.load_inline
        while isinstance(self.real, ExtensionShim):  # installed before: torch's is under it
            self.real = self.real.real
        self.mode = mode
        self.root = root
        self.light = light_cuda_include
        self.split = split
        self.generic_caller = generic_caller
        self.pch = pch
        self.cache = cache
        self.arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "") if arch is None else arch
        # run mode: the extension keys the build step reported (None: not
        # told), to tell a build the cache lost from a call the build never
        # saw (an answer whose load_inline arguments change between runs).
        self.built = None if built is None else set(built)
        self.records = []

    # Keywords past cpp_sources go on by name: torch 2.x put sycl_sources
    # between cuda_sources and functions.
    def __call__(self, name, cpp_sources, cuda_sources=None, functions=None, **kwargs):
        key = extension_key(name, cpp_sources, cuda_sources, functions, kwargs, self.split,
                            self.arch)
        directory = os.path.join(self.root, key)
        if self.mode == "build" and self.cache:
            # Built before (by another answer with the same call): reused.
            cached = os.path.join(self.cache, key)
            if kb_caller.has_thunks(cached, name):
                try:
                    module = kb_caller.load_module(self.cache, cached, name)
                    self.records.append({"name": name, "key": key, "cached": True})
                    return module
                except Exception:  # the cache's fault, not the answer's: built below
                    pass
            if os.path.exists(os.path.join(cached, name + ".so")):
                self.records.append({"name": name, "key": key, "cached": True})
                return self.cpp_ext._import_module_from_library(
                    name, cached, kwargs.get("is_python_module", True))
        if self.mode == "run":
            if kb_caller.has_thunks(directory, name):
                if not kb_caller.caller_built(self.root):
                    raise VerifierError(
                        "load_inline(%r): the generic caller %s is missing from the extension "
                        "cache %s" % (name, kb_caller.caller_key(), self.root))
                self.records.append({"name": name, "key": key, "binding": "generic caller"})
                return kb_caller.load_module(self.root, directory, name)
            so = os.path.join(directory, name + ".so")
            if not os.path.exists(so) and self.built is not None and key in self.built:
                raise VerifierError(
                    "load_inline(%r): the build step built it (key %s) but the extension "
                    "cache %s no longer has it" % (name, key, self.root))
            if not os.path.exists(so):
                raise RuntimeError(
                    "load_inline(%r): no library was built for this call (its "
                    "arguments differ from those the build step saw; key %s, "
                    "TORCH_CUDA_ARCH_LIST %r)" % (name, key, self.arch))
            self.records.append({"name": name, "key": key})
            return self.cpp_ext._import_module_from_library(
                name, directory, kwargs.get("is_python_module", True))
        os.makedirs(directory, exist_ok=True)
        kwargs = dict(kwargs)
        kwargs["build_directory"] = directory
        kwargs["verbose"] = False
        record = {"name": name, "key": key, "light_include": False}
        odd = kb_caller.odd_arguments(cpp_sources, kwargs)  # before the flags are touched
        if odd:
            record["odd_arguments"] = odd
        if self.pch:
            flags = _as_list(kwargs.get("extra_cflags"))
            header = self._pch_header(flags)
            if header:
                kwargs["extra_cflags"] = flags + ["-include", header, "-Winvalid-pch"]
                record["pch"] = pch_variant(flags) or "default"
            else:
                record["pch"] = "none made for extra_cflags %s" % (flags,)
        start = time.time()
        try:  # the record of a failed build too (how its CUDA sources were tried)
            return self._build_ways(name, cpp_sources, cuda_sources, functions, kwargs,
                                    directory, key, record)
        finally:
            record["seconds"] = time.time() - start
            self.records.append(record)

    def _build_ways(self, name, cpp_sources, cuda_sources, functions, kwargs, directory, key,
                    record):
        """Split, then light, then as written (see the class)."""
        cuda_list = _as_list(cuda_sources)
        part_failed = False
        if self.split and cuda_list:
            module = self._build_split(name, cpp_sources, cuda_list, functions, kwargs,
                                       directory, key, record)
            if module is not None:
                return module
            # A part that did not compile: most often the answer's own error,
            # which the light build would only repeat before the build as
            # written (a compile-error answer's build took 27 s and 44 CPU-s
            # on the H100 machine, 2026-12-06). Straight to the build as
            # written, whose outcome is the answer's either way.
            part_failed = record.get("split", "").startswith(_SPLIT_PART_FAILED)
        elif not cuda_list:
            module = self._build_thunks(name, _as_list(cpp_sources), functions, kwargs,
                                        directory, [], bool(kwargs.get("with_cuda")), record)
            if module is not None:
                return module
        light = [_EXT_INCLUDE.sub("", s) for s in cuda_list]
        if part_failed and self.light and light != cuda_list:
            record["light_include_skipped"] = "a part of the split did not compile"
        elif self.light and cuda_list and light != cuda_list:
            try:
                module = self.real(name, cpp_sources, cuda_sources=light,
                                   functions=functions, **kwargs)
                record["light_include"] = True
                return module
            except Exception as e:  # compile it as written below
                record["light_include_error"] = str(e)[-400:]
                _clean_build_dir(directory)
                _forget_version(self.cpp_ext, name)
        return self.real(name, cpp_sources, cuda_sources=cuda_sources,
                         functions=functions, **kwargs)

    def _pch_header(self, extra_cflags, header=PCH_EXTENSION):
        """The precompiled `header` (a key of PCH_INCLUDES) made for
        these flags (make_pch), or None."""
        sub = pch_variant(extra_cflags) if self.pch else None
        if sub is None:
            return None
        path = os.path.join(self.pch, PCH_DIRS[header], sub, header)
        return path if os.path.exists(path + ".gch") else None

    def _thunks_planned(self, cpp_text, functions, kwargs, record):
        """Whether this call is to be built with thunks (kb_caller); if not,
        the record says why."""
        why = kb_caller.not_eligible(cpp_text, functions, kwargs) if self.generic_caller else (
            "the generic caller is off")
        if why is None and record.get("odd_arguments"):
            why = record["odd_arguments"]
        if why is None and not kb_caller.caller_built(self.cache):
            why = "the generic caller is not built yet"
        if why is not None:
            record["binding"] = "pybind11: " + why
        return why is None

    def _build_thunks(self, name, cpp, functions, kwargs, directory, objs, with_cuda, record,
                      planned=None):
        """The module of a thunk library (kb_caller) made of the C++ sources
        `cpp` and the objects `objs` (a list, or a function that returns
        it: called after the thunks compile, at the link, so the objects
        may still be compiling meanwhile; what it raises is not the
        thunks' failure and goes to the caller), or None, with the reason
        in the record, when the call is not eligible or the library does
        not build (then it is built with its own binding)."""
        cpp_text = "\n".join(cpp)
        if planned is None:
            planned = self._thunks_planned(cpp_text, functions, kwargs, record)
        if not planned:
            return None
        import shlex
        t0 = time.time()
        user = _user_cflags(kwargs.get("extra_cflags"))
        # Sources that only declare the functions compile after
        # ATen/core/Tensor.h alone (each header precompiled, torch 1.13
        # here: 0.38 s against 1.44 s, bench/thunk_headers.py); if that
        # fails (a declaration names more of torch), after torch/types.h.
        tensor_pch = (self._pch_header(user, PCH_TENSOR)
                      if kb_caller.light_eligible(cpp_text) else None)
        try:
            v = _torch_build_vars(os.path.join(directory, "skilldb_probe_thunks"), with_cuda, user,
                                  _as_list(kwargs.get("extra_cuda_cflags")),
                                  _as_list(kwargs.get("extra_include_paths")))
            src = os.path.join(directory, "skilldb_thunks.cpp")
            obj = os.path.join(directory, "skilldb_thunks.o")
            header = None
            for light, pch in ([(True, tensor_pch)] if tensor_pch else []) + [
                    (False, self._pch_header(user, PCH_TYPES))]:
                with open(src, "w") as f:
                    f.write(kb_caller.thunk_source(cpp_text, functions, light))
                # In the build directory, as torch's ninja runs its compiles
                # (an answer's relative -I or library paths mean the same).
                try:
                    _run_compiler(_cxx_command(v, name, src, obj, pch, ["-I", kb_caller.HERE]),
                                  "the thunks did not compile", directory)
                except Exception as e:
                    if not light:
                        raise
                    record["light_thunks_error"] = str(e)[-400:]
                    continue
                header = ("ATen/core/Tensor.h" if light else "torch/types.h") if pch else None
                break
        except Exception as e:  # built with its own binding
            return self._thunks_failed(e, directory, name, record)
        linked = objs() if callable(objs) else objs
        try:
            _run_compiler(shlex.split(v["cxx"]) + [obj] + list(linked) + _torch_ldflags(
                with_cuda, _as_list(kwargs.get("extra_ldflags"))) + [
                "-o", kb_caller.library_path(directory, name)], "the thunk library did not link",
                directory)
            kb_caller.write_meta(directory, name, functions,
                                 kwargs.get("with_pytorch_error_handling", True))
            module = kb_caller.load_module(self.cache, directory, name)
        except Exception as e:  # built with its own binding
            return self._thunks_failed(e, directory, name, record)
        record["binding"] = "generic caller (%.1f s%s)" % (
            time.time() - t0, ", precompiled " + header if header else "")
        return module

    @staticmethod
    def _thunks_failed(e, directory, name, record):
        """None, the thunks' failure `e` in the record."""
        record["binding"] = "pybind11: the thunks did not build (%s)" % type(e).__name__
        record["thunk_error"] = str(e)[-2000:]
        kb_caller.remove(directory, name)
        return None

    def _build_split(self, name, cpp_sources, cuda_list, functions, kwargs, directory, key,
                     record):
        """The split build (see the class); None, with the reason in the
        record, when the source does not split or its parts do not build."""
        joined = "\n".join(cuda_list)
        try:
            macros = torch_macros(directory, kwargs) if kb_split.has_conditions(joined) else None
            parts = kb_split.split(joined, key[:12], macros)
        except kb_split.Unsplittable as e:
            record["split"] = "not split: %s" % e
            return None
        except Exception as e:  # the splitter's own fault: never the answer's
            record["split"] = "not split: the splitter failed (%s)" % type(e).__name__
            record["split_error"] = str(e)[-400:]
            return None
        # nvcc compiled the host functions at its host optimization level
        # (-O<n> among the CUDA flags, none by default), the binding at the
        # C++ flags': where they agree the host part joins the C++ sources;
        # where not, it gets a file of its own at nvcc's level.
        cuda_level = host_opt_level(kwargs.get("extra_cuda_cflags"), cuda=True)
        if cuda_level is None:
            record["split"] = ("not split: host compiler options, --default-stream or "
                               "preprocessor flags among the CUDA flags")
            return None
        # Joined only where nothing of the C++ side can reach the host
        # functions: C++ flags that are at most the same -O level, C++
        # sources without preprocessor lines (other than #include) or
        # definitions ahead of them.
        user = _flag_tokens(_user_cflags(kwargs.get("extra_cflags")))
        cpp_text = "\n".join(_as_list(cpp_sources))
        own_file = (cuda_level != host_opt_level(user) or
                    any(not re.fullmatch(r"-O(\d|s|fast)?", f) for f in user) or
                    re.search(r"^[ \t]*#[ \t]*(?!include\b)\w", cpp_text, re.M) is not None or
                    "{" in cpp_text)
        cpp = _as_list(cpp_sources) + ([] if own_file else [parts.host])
        # With thunks, the host part includes torch/types.h where it stands
        # alone, as the thunks' file does (kb_caller).
        thunks = self._thunks_planned("\n".join(cpp), functions, kwargs, record)
        host_header = PCH_TYPES if thunks else PCH_EXTENSION
        t0 = time.time()
        try:
            # Two compiles at a time (a build has two jobs, MAX_JOBS): the
            # device part beside the host part in its own file, then beside
            # the thunks (when planned), which need the parts' objects only
            # at their link.
            from concurrent.futures import ThreadPoolExecutor

            def device_part():
                obj = compile_device_part(parts.device, directory, kwargs)
                return obj, time.time() - t0

            with ThreadPoolExecutor(max_workers=2) as pool:
                host = pool.submit(compile_host_part, parts.host, directory, kwargs, cuda_level,
                                   self._pch_header(["-O" + cuda_level] if cuda_level != "0"
                                                    else [], host_header), name,
                                   host_header) if own_file else None
                device = pool.submit(device_part)
                if host is not None:
                    host.exception()  # done (what it raised comes at the link)

                def part_objects():
                    return [device.result()[0]] + ([host.result()] if host is not None else [])

                module = self._build_thunks(name, cpp, functions, kwargs, directory,
                                            part_objects, True, record, thunks)
                objs = part_objects()
                device_seconds = device.result()[1]
            if module is None:
                kw = dict(kwargs)
                kw["with_cuda"] = True
                kw["extra_ldflags"] = _as_list(kw.get("extra_ldflags")) + objs
                module = self.real(name, cpp, cuda_sources=None, functions=functions, **kw)
        except Exception as e:  # built whole below
            # The compilers' words quote the answer: kept out of the
            # line the report shows, in the record for bench/build_split.py.
            record["split"] = "%s (%s); built whole" % (_SPLIT_PART_FAILED, type(e).__name__)
            record["split_error"] = str(e)[-2000:]
            _clean_build_dir(directory)
            _forget_version(self.cpp_ext, name)
            return None
        record["split"] = "split: %d kernel(s), device part %.1f s%s" % (
            len(parts.kernels), device_seconds,
            ", host part at -O%s in its own file" % cuda_level if own_file else "")
        return module


def _forget_version(cpp_ext, name):
    """Before a retry under the same name: torch counts the sources it saw
    per name and builds changed ones as NAME_v1, which the run step (that
    imports NAME.so) would not find."""
    versioner = getattr(cpp_ext, "JIT_EXTENSION_VERSIONER", None)
    entries = getattr(versioner, "entries", None)
    if isinstance(entries, dict):
        entries.pop(name, None)


def _flag_tokens(flags):
    """Flags as the compiler sees them: each entry split as a shell would
    (an answer may pass "-O3 --use_fast_math" as one)."""
    import shlex
    out = []
    for f in _as_list(flags):
        try:
            out += shlex.split(str(f))
        except ValueError:
            out.append(str(f))
    return out


def _clean_build_dir(directory):
    for entry in os.listdir(directory):
        p = os.path.join(directory, entry)
        if os.path.isfile(p):
            os.unlink(p)


def _torch_build_vars(probe, with_cuda, extra_cflags=(), extra_cuda_cflags=(),
                      extra_include_paths=()):
    """The variables (cxx, cflags, nvcc, cuda_cflags, ...) of the ninja file
    torch's cpp_extension writes for a build with these options, written for
    empty sources in the directory `probe`: the compilers and flags torch's
    own build would use, for any torch version."""
    import inspect
    import torch.utils.cpp_extension as cpp_ext
    os.makedirs(probe, exist_ok=True)
    sources = [os.path.join(probe, "main.cpp")]
    if with_cuda:
        sources.append(os.path.join(probe, "probe.cu"))
    for src in sources:
        open(src, "w").close()
    fn = cpp_ext._write_ninja_file_to_build_library
    params = inspect.signature(fn).parameters
    kw = dict(path=os.path.join(probe, "build.ninja"), name="skilldb_probe", sources=sources,
              extra_cflags=list(extra_cflags), extra_cuda_cflags=list(extra_cuda_cflags),
              extra_sycl_cflags=[], extra_ldflags=[],
              extra_include_paths=list(extra_include_paths), with_cuda=with_cuda,
              with_sycl=False, is_standalone=False)
    fn(**{k: v for k, v in kw.items() if k in params})
    text = open(os.path.join(probe, "build.ninja")).read()
    return {k: v.strip() for k, v in re.findall(r"^(\w+) = (.*)$", text, re.M)}


def _torch_ldflags(with_cuda, extra_ldflags=()):
    """The link flags torch's build of a Python extension would use (its
    libraries, CUDA's with `with_cuda`, then `extra_ldflags`), for any torch
    version."""
    import inspect
    import torch.utils.cpp_extension as cpp_ext
    fn = cpp_ext._prepare_ldflags
    params = inspect.signature(fn).parameters
    kw = dict(extra_ldflags=list(extra_ldflags), with_cuda=with_cuda, with_sycl=False,
              verbose=False, is_standalone=False)
    return ["-shared"] + fn(**{k: v for k, v in kw.items() if k in params})


# The answer flags a precompiled header is made for: none (torch's default,
# KernelBench's example passes [""]) and -O3 (what most answers ask for).
# GCC refuses a header made with other optimization flags (-O3 defines
# __OPTIMIZE__ and leaves __NO_INLINE__ undefined), so each has its own.
PCH_VARIANTS = {(): "", ("-O3",): "O3"}


def pch_variant(extra_cflags):
    """The PCH_VARIANTS subdirectory that suits a build with these
    extra_cflags, or None (no precompiled header fits)."""
    key = tuple(sorted(f.strip() for f in _as_list(extra_cflags) if f and f.strip()))
    return PCH_VARIANTS.get(key)


def make_pch(out_dir, variants=None, headers=None):
    """Precompiles torch/extension.h (PCH_EXTENSION), torch/types.h
    (PCH_TYPES, for thunks) and ATen/core/Tensor.h (PCH_TENSOR, for thunks
    of declarations), or those of them named in `headers`, for each
    of PCH_VARIANTS, with the flags torch's own build of a load_inline
    binding (main.cpp) uses, into out_dir (a variant in its subdirectory;
    `variants`, if given, names the ones wanted besides the default);
    returns the default variant of the first header made, to pass as
    `-include` (its .gch beside it).

    The extension's name (-DTORCH_EXTENSION_NAME) is left out: GCC refuses a
    header made with a macro defined otherwise than in the compile that
    includes it, and the name differs for every extension (until 2026-12-05
    the header was made with it, and no build ever used it). Each variant is
    checked by compiling a file under another extension's name with
    -Werror=invalid-pch; one that GCC refuses is removed (RuntimeError for
    a default)."""
    import shlex
    import subprocess
    v = _torch_build_vars(os.path.join(out_dir, "probe"), False)
    flags = [f for f in shlex.split(v["cflags"]) + shlex.split(v.get("post_cflags", ""))
             if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    wanted = [(extra, sub) for extra, sub in sorted(PCH_VARIANTS.items(), key=lambda kv: kv[1])
              if variants is None or sub in variants or sub == ""]
    kinds = [(name, PCH_INCLUDES[name]) for name in (PCH_EXTENSION, PCH_TYPES, PCH_TENSOR)
             if headers is None or name in headers]
    if not kinds:
        raise ValueError("make_pch: no header among %r" % (headers,))
    started = []  # (extra flags, subdirectory, header, its compile)
    for extra, sub in wanted:
        d = os.path.join(out_dir, sub)
        os.makedirs(d, exist_ok=True)
        for name, include in kinds:
            header = os.path.join(d, name)
            with open(header, "w") as f:
                f.write("#include <%s>\n" % include)
            started.append((extra, sub, header, subprocess.Popen(
                [v["cxx"]] + flags + list(extra) + ["-x", "c++-header", header, "-o",
                                                    header + ".gch"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)))
    try:
        return _check_pch(v, flags, out_dir, started)
    finally:  # a variant still compiling when the default was refused
        for *_, proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _check_pch(v, flags, out_dir, started):
    """make_pch's second half: each variant's compile awaited and checked."""
    import subprocess
    default = None
    for extra, sub, header, made in started:
        _, made_err = made.communicate()
        check = os.path.join(out_dir, "probe", "check.cpp")
        with open(check, "w") as f:
            f.write("int skilldb_pch_check;\n")
        checked = made.returncode == 0 and subprocess.run(
            [v["cxx"]] + flags + list(extra) + [
                "-DTORCH_EXTENSION_NAME=skilldb_pch_check", "-include", header,
                "-Werror=invalid-pch", "-fsyntax-only", check],
            capture_output=True, text=True)
        if not checked or checked.returncode != 0:
            why = (made_err if made.returncode != 0 else checked.stderr)[-600:]
            if sub == "":
                raise RuntimeError("the precompiled %s was not made or is refused: %s" %
                                   (os.path.basename(header), why))
            for p in (header, header + ".gch"):
                if os.path.exists(p):
                    os.unlink(p)
            continue
        if sub == "" and default is None:
            default = header
    return default


def _user_cflags(flags):
    """The answer's extra_cflags without what the shim added (-include of
    its precompiled header, -Winvalid-pch); an answer's own -include stays."""
    flags = _as_list(flags)
    out, i = [], 0
    while i < len(flags):
        f = flags[i]
        if (f == "-include" and i + 1 < len(flags) and
                os.path.basename(str(flags[i + 1])) in PCH_INCLUDES):
            i += 2
            continue
        if f != "-Winvalid-pch":
            out.append(f)
        i += 1
    return out


def host_opt_level(flags, cuda=False):
    """The host compiler's optimization level ("0", "1", "2", "3", "s",
    "fast") for a compile with these extra flags: the last -O<n>. For nvcc
    (`cuda`) None when the flags pass anything to the host compiler
    (-Xcompiler, --compiler-options), define macros or add headers (-D,
    -U, -I, -include: the host part would need them), change what host
    code's stream 0 means (--default-stream) or need a device link (-rdc,
    -dc)."""
    level = "0"
    for f in _flag_tokens(flags):
        if cuda and (f.startswith("-Xcompiler") or f.startswith("--compiler-options") or
                     f.startswith("-ccbin") or f.startswith("--compiler-bindir") or
                     # per-thread default stream: host code's stream 0 means
                     # another stream under nvcc than under the host compiler
                     "default-stream" in f or
                     # macros and headers the host part would have to get too
                     re.match(r"-(D|U|I|include|isystem|-define-macro|-undefine-macro|"
                              r"-include-path|-pre-include|rdc|-relocatable-device-code|dc)", f)):
            return None
        m = re.fullmatch(r"(?:-O|--optimize[= ]?)(\d|s|fast)?", f)
        if m:
            level = m.group(1) or ("3" if cuda else "1")
    return level


def compile_host_part(source, directory, kwargs, level, pch, name, header=None):
    """Compiles a split's host part in a file of its own (after torch's
    `header`, PCH_EXTENSION's by default; PCH_TYPES's without the answer's
    own torch/extension.h includes), with torch's C++
    flags for this build (none of the answer's C++ flags: nvcc's host pass
    never saw them; CUDA flags that define macros leave a source whole, see
    host_opt_level) under the extension's name, at nvcc's host optimization
    level; returns the object's path. RuntimeError with the compiler's
    message."""
    v = _torch_build_vars(os.path.join(directory, "skilldb_probe_host"), True,
                          [], _as_list(kwargs.get("extra_cuda_cflags")),
                          _as_list(kwargs.get("extra_include_paths")))
    src = os.path.join(directory, "skilldb_host.cpp")
    obj = os.path.join(directory, "skilldb_host.o")
    with open(src, "w") as f:
        if header == PCH_TYPES:
            f.write("#include <torch/types.h>\n" + _EXT_INCLUDE.sub("", source))
        else:
            f.write("#include <torch/extension.h>\n" + source)
    _run_compiler(_cxx_command(v, name, src, obj, pch, ["-O" + level] if level != "0" else []),
                  "the host part did not compile")
    return obj


def _cxx_command(v, name, src, obj, pch, extra=()):
    """torch's C++ compile of `src` into `obj` for the build whose ninja
    variables are `v` (_torch_build_vars), under the extension's own name
    (as the binding's: a PYBIND11_MODULE among the sources names the module
    the run step imports), with `extra` flags and the precompiled header
    `pch` (None: none)."""
    import shlex
    cflags = [f for f in shlex.split(v["cflags"]) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    return shlex.split(v["cxx"]) + cflags + ["-DTORCH_EXTENSION_NAME=" + name] + list(extra) + (
        ["-include", pch, "-Winvalid-pch"] if pch else []) + [
        "-c", src, "-o", obj] + shlex.split(v.get("post_cflags", ""))


def _run_compiler(cmd, what, cwd=None):
    """Runs a compiler or linker (in `cwd`); RuntimeError(`what` and its
    output) if it fails."""
    import subprocess
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(what + ":\n" + (done.stderr or done.stdout)[-2000:])


def torch_macros(directory, kwargs):
    """The macros torch's headers define beyond CUDA's, as the whole build
    of this call would see them, under the host compiler and under nvcc
    (which defines some 2,800 more through them): the names a condition in
    a split source must not test. RuntimeError if a preprocessor fails."""
    import shlex
    import subprocess
    v = _torch_build_vars(os.path.join(directory, "skilldb_probe_macros"), True,
                          _as_list(kwargs.get("extra_cflags")),
                          _as_list(kwargs.get("extra_cuda_cflags")),
                          _as_list(kwargs.get("extra_include_paths")))
    cuda_only = "#include <cuda.h>\n#include <cuda_runtime.h>\n"
    with_torch = "#include <torch/types.h>\n" + cuda_only
    probe = os.path.join(directory, "skilldb_probe_macros", "probe.cu")
    found = []
    for text in (cuda_only, with_torch):
        commands = [shlex.split(v["cxx"]) + shlex.split(v["cflags"]) + ["-dM", "-E", "-x", "c++", "-"]]
        if "nvcc" in v:
            with open(probe, "w") as f:
                f.write(text)
            commands.append(shlex.split(v["nvcc"]) + [
                f for f in shlex.split(v.get("cuda_cflags", "")) if not f.startswith("-gencode")] +
                ["-E", "-Xcompiler", "-dM", probe])
        names = set()
        for cmd in commands:
            done = subprocess.run(cmd, input=text, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError("preprocessing torch's headers failed: " + done.stderr[-400:])
            names |= set(re.findall(r"^#define (\w+)", done.stdout, re.M))
        found.append(names)
    return found[1] - found[0]


def compile_device_part(source, directory, kwargs):
    """Compiles a split's device part (kb_split) with nvcc and the CUDA
    flags torch's build of this load_inline call would use (its arch list,
    the answer's extra_cuda_cflags and include paths); returns the object's
    path. Raises RuntimeError with nvcc's message."""
    import shlex
    import subprocess
    v = _torch_build_vars(os.path.join(directory, "skilldb_probe_device"), True,
                          _as_list(kwargs.get("extra_cflags")),
                          _as_list(kwargs.get("extra_cuda_cflags")),
                          _as_list(kwargs.get("extra_include_paths")))
    if "nvcc" not in v:
        raise RuntimeError("torch's build has no nvcc (no CUDA toolkit)")
    src = os.path.join(directory, "skilldb_device.cu")
    obj = os.path.join(directory, "skilldb_device.o")
    with open(src, "w") as f:
        f.write(source)
    cmd = shlex.split(v["nvcc"]) + shlex.split(v.get("cuda_cflags", "")) + [
        "-c", src, "-o", obj] + shlex.split(v.get("cuda_post_cflags", ""))
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("nvcc on the device part failed:\n" + (done.stderr or done.stdout)[-2000:])
    return obj


def install_shim(shim):
    import torch.utils.cpp_extension as cpp_ext
    cpp_ext.load_inline = shim

