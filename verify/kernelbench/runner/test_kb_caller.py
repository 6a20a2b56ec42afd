"""kb_caller: an answer's functions called through thunks and the generic
caller behave as load_inline's own pybind11 binding of them: the same
results, the same conversions of arguments (and refusals, as TypeError),
the same errors from the functions; what the thunks do not cover is built
with its own binding, and the build record says why.

Real builds on this machine's torch (C++ sources on the CPU): the caller
once, then one binding and one thunk library of the same sources."""

import os
import shutil
import sys
import warnings

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch = pytest.importorskip("torch")
import torch.utils.cpp_extension as cpp_ext  # noqa: E402

import kb_caller  # noqa: E402
import kb_load  # noqa: E402

SOURCE = r'''
#include <torch/extension.h>
torch::Tensor add(torch::Tensor a, torch::Tensor b) { return a + b; }
torch::Tensor scale(const torch::Tensor& a, double s, int64_t k, bool flag) {
  return flag ? a * s + k : a;
}
std::vector<torch::Tensor> twice(torch::Tensor a) { return {a, a * 2}; }
std::tuple<torch::Tensor, torch::Tensor> pair(torch::Tensor a) { return {a, a + 1}; }
void fill(torch::Tensor a, float v) { a.fill_(v); }
torch::Tensor maybe(torch::Tensor a, c10::optional<torch::Tensor> b) { return b ? a + *b : a; }
torch::Tensor shape(torch::Tensor a, std::vector<int64_t> s) { return a.reshape(s); }
torch::Tensor view(torch::Tensor a, at::IntArrayRef s) { return a.view(s); }
int64_t count(torch::Tensor a, int n) {
  TORCH_CHECK(a.numel() == n, "want ", n, " elements, got ", a.numel());
  return n;
}
torch::Tensor same(torch::Tensor a) { return a; }
std::string name(std::string s, float f) { return s + "!"; }
torch::Tensor warned(torch::Tensor a) {
  TORCH_WARN("warned: ", a.numel(), " elements");
  return a * 2;
}
'''
FUNCTIONS = ["add", "scale", "twice", "pair", "fill", "maybe", "shape", "view", "count", "same",
             "name", "warned"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the binding load_inline makes, the thunk module, the build shim,
    the extension root holding the caller)."""
    root = tmp_path_factory.mktemp("ext")
    kb_caller.build_caller(str(root), cpp_ext.load_inline)
    assert kb_caller.caller_built(str(root))
    ref_dir = tmp_path_factory.mktemp("binding")
    binding = cpp_ext.load_inline("kb_caller_binding", [SOURCE], functions=FUNCTIONS,
                                  build_directory=str(ref_dir))
    shim = kb_load.ExtensionShim("build", str(tmp_path_factory.mktemp("build")), cache=str(root))
    thunks = shim("kb_caller_thunks", [SOURCE], functions=FUNCTIONS)
    return binding, thunks, shim, root


def _outcome(module, name, args):
    try:
        return "ok", getattr(module, name)(*args)
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0]


def _equal(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    return type(a) is type(b) and a == b


def _cases():
    x = torch.arange(6.0)
    np = pytest.importorskip("numpy")
    return [
        ("add", (x, x)), ("add", (x,)), ("add", (x, 1)), ("add", (x, x, x)),
        ("scale", (x, 2, 3, True)),          # an int where a double is wanted: converted
        ("scale", (x, 2.5, 3.0, True)),      # a float where an int is wanted: refused
        ("scale", (x, 2, 3, 1)),             # an int where a bool is wanted
        ("scale", (x, 2, True, True)),
        ("scale", (x, "a", 1, True)),
        ("scale", (x, torch.tensor(2.0), torch.tensor(3), torch.tensor(True))),
        ("scale", (x, np.float64(2), np.int64(3), np.bool_(True))),
        ("twice", (x,)), ("pair", (x,)), ("fill", (x.clone(), 3)),
        ("maybe", (x, None)), ("maybe", (x, x)), ("maybe", (x, 3)),
        ("shape", (x, [2, 3])), ("shape", (x, (3, 2))), ("shape", (x, torch.Size([6]))),
        ("shape", (x, [2.0, 3])),
        ("view", (x, [2, 3])), ("view", (x, (6,))), ("view", (x, [torch.tensor(3), 2])),
        ("view", (x, 6)),
        ("count", (x, 6)), ("count", (x, 5)), ("count", (x, 2 ** 40)),
        ("count", (x, torch.tensor(6))),
        ("same", (x,)), ("same", (None,)),
        ("name", ("a", 1)), ("name", (b"a", 1.0)), ("name", (1, 1.0)),
    ]


def test_thunks_call_as_load_inline_s_binding_does(built):
    binding, thunks, shim, _ = built
    assert shim.records[-1]["binding"].startswith("generic caller"), shim.records
    differ = []
    for name, args in _cases():
        a, b = _outcome(binding, name, args), _outcome(thunks, name, args)
        # The same outcome: the same result, or the same exception with the
        # same first line (pybind11's words for arguments that do not fit,
        # the function's own for its errors).
        if a[0] != b[0] or (a[0] == "ok" and not _equal(a[1], b[1])) or (
                a[0] != "ok" and a[1] != b[1]):
            differ.append((name, a, b))
    assert not differ, differ
    x = torch.ones(3)
    assert binding.same(x) is x and thunks.same(x) is x  # the same Python tensor back
    assert thunks.same.__name__ == binding.same.__name__ == "same"
    with pytest.raises(TypeError, match="incompatible function arguments"):
        thunks.same(a=x)  # positional arguments only, as m.def's
    y = torch.zeros(2)
    thunks.fill(y, 7)
    assert torch.equal(y, torch.full((2,), 7.0))         # a tensor changed in place


def test_torch_warn_reaches_python_as_from_the_binding(built):
    """TORCH_WARN in an answer's function: a Python warning of the same
    category and text from the thunks as from load_inline's binding
    (torch's warning handler around the call), and the result still comes."""
    binding, thunks, _, _ = built
    x = torch.arange(4.0)
    seen = []
    for module in (binding, thunks):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = module.warned(x)
        assert torch.equal(y, x * 2)
        # torch appends where it was raised ("(Triggered internally at
        # FILE:LINE.)"): the binding's main.cpp, the thunks' own file.
        seen.append([(w.category, str(w.message).split(" (Triggered internally at")[0])
                     for w in caught])
    assert seen[0] == seen[1], seen
    assert len(seen[0]) == 1 and "warned: 4 elements" in seen[0][0][1], seen


def test_the_run_step_loads_the_thunks_through_the_caller(built):
    _, _, shim, root = built
    record = shim.records[-1]
    # The builder moves the extension into the cache it keeps the caller in.
    shutil.copytree(os.path.join(shim.root, record["key"]), os.path.join(root, record["key"]))
    run = kb_load.ExtensionShim("run", str(root))
    module = run("kb_caller_thunks", [SOURCE], functions=FUNCTIONS)
    assert run.records[-1]["binding"] == "generic caller"
    assert torch.equal(module.add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
    # A build that finds it in the cache loads it the same way.
    again = kb_load.ExtensionShim("build", str(root / "other"), cache=str(root))
    assert again("kb_caller_thunks", [SOURCE], functions=FUNCTIONS).count(
        torch.ones(4), 4) == 4
    assert again.records[-1]["cached"] is True


@pytest.mark.parametrize("source,functions,kwargs,why", [
    # a type the thunks do not list (pybind11's stl.h binds it): the
    # thunks do not compile, the binding is built as load_inline builds it
    ("#include <torch/extension.h>\n#include <map>\n"
     "int64_t total(std::map<std::string, int64_t> m) { int64_t s = 0;"
     " for (auto& kv : m) s += kv.second; return s; }", ["total"], {},
     "pybind11: the thunks did not build"),
    ("#include <torch/extension.h>\n"
     "int64_t total(py::list l) { return (int64_t)l.size(); }", ["total"], {},
     "pybind11: the sources use pybind11 or Python's API"),
    ("#include <torch/extension.h>\n"
     "int64_t total(int64_t a) { return a; }", ["total"], {"is_python_module": True,
                                                          "extra_cflags": ["-O1"]}, None),
])
def test_what_the_thunks_do_not_cover_gets_its_own_binding(built, tmp_path, source, functions,
                                                            kwargs, why):
    _, _, _, root = built
    shim = kb_load.ExtensionShim("build", str(tmp_path), cache=str(root))
    import zlib
    module = shim("kb_caller_other_%d" % zlib.crc32(source.encode()), [source],
                  functions=functions, **kwargs)
    binding = shim.records[-1]["binding"]
    if why is None:
        assert binding.startswith("generic caller"), binding
        assert module.total(5) == 5
    else:
        assert binding.startswith(why), binding
        arg = {"a": 2, "b": 3} if "map" in source else [1, 2, 3, 4, 5]
        assert module.total(arg) == 5


def test_eligibility():
    assert kb_caller.not_eligible("int f();", None, {}).startswith("no functions")
    assert kb_caller.not_eligible("int f();", ["f"], {"is_python_module": False})
    assert kb_caller.not_eligible("int f();", ["f g"], {}) == "a function name is not an identifier"
    assert "options" in kb_caller.not_eligible("int f();", ["f"], {"sources_x": 1})
    assert kb_caller.not_eligible("PyObject* f();", ["f"], {})
    assert kb_caller.not_eligible("int f();", "f", {"extra_cflags": ["-O3"]}) is None
    assert kb_caller.functions_of({"f": "doc"}) == {"f": "doc"}
    # a docstring load_inline would paste into its source as it is
    assert kb_caller.not_eligible("int f();", {"f": 'say "hi"'}, {})
    assert kb_caller.not_eligible("int f();", {"f": "two\nlines"}, {})
    assert kb_caller.not_eligible("int f();", ["f\u00e9"], {})  # identifiers are ASCII
    # what torch's build refuses or treats otherwise gets its binding
    assert kb_caller.odd_arguments(("int f();",), {}) == "cpp_sources is a tuple"
    assert kb_caller.odd_arguments("int f();", {"extra_cflags": "-O3"}) == "extra_cflags is a str"
    assert kb_caller.odd_arguments(["int f();"], {"extra_cflags": ["-O3"]}) is None
    src = kb_caller.thunk_source("#include <torch/extension.h>\nint f();", ["f"])
    assert "torch/extension.h" not in src and src.rstrip().endswith("SKILLDB_THUNK(f)")


DECLARED = ("#include <torch/extension.h>\n#include <vector>\n"
            "torch::Tensor add(torch::Tensor a, torch::Tensor b);\n"
            "std::vector<at::Tensor> twice(const torch::Tensor& a, int64_t k);\n")
DEFINED = ("#include <torch/types.h>\n"
           "torch::Tensor add(torch::Tensor a, torch::Tensor b) { return a + b; }\n"
           "std::vector<at::Tensor> twice(const torch::Tensor& a, int64_t k) {"
           " return {a, a * k}; }\n"
           "torch::autograd::Variable negated(torch::autograd::Variable a) { return -a; }\n")


def test_light_eligibility():
    assert kb_caller.light_eligible(DECLARED)
    assert kb_caller.light_eligible("#include <torch/types.h>\nint64_t f(int64_t a);")
    # definitions, namespaces, macros, other headers: torch/types.h's file
    assert not kb_caller.light_eligible("int f() { return 1; }")
    assert not kb_caller.light_eligible("namespace n { int f(); }")
    assert not kb_caller.light_eligible("#define N 4\nint f();")
    assert not kb_caller.light_eligible('#include "mine.h"\nint f();')
    assert not kb_caller.light_eligible("#include <ATen/cuda/CUDAContext.h>\nint f();")
    light = kb_caller.thunk_source(DECLARED, ["add"], light=True)
    assert "torch/" not in light and light.startswith("#include <ATen/core/Tensor.h>")
    assert "#include <vector>" in light


def _definitions(directory):
    """An object file with DEFINED's functions, compiled as torch's build
    compiles C++ (as a CUDA answer's definitions come from its .cu)."""
    v = kb_load._torch_build_vars(os.path.join(directory, "probe"), False)
    src, obj = os.path.join(directory, "defs.cpp"), os.path.join(directory, "defs.o")
    with open(src, "w") as f:
        f.write(DEFINED)
    kb_load._run_compiler(kb_load._cxx_command(v, "kb_defs", src, obj, None), "defs")
    return obj


@pytest.fixture(scope="module")
def tensor_pch(tmp_path_factory):
    """A precompiled headers' root holding ATen/core/Tensor.h's alone (made
    once for the cases below)."""
    pch = tmp_path_factory.mktemp("pch")
    kb_load.make_pch(str(pch / "types"), variants=[], headers=[kb_load.PCH_TENSOR])
    assert (pch / "types" / (kb_load.PCH_TENSOR + ".gch")).exists()
    return pch


@pytest.mark.parametrize("declared,functions,light", [
    # declarations only: the thunks compile after ATen/core/Tensor.h
    (DECLARED, ["add", "twice"], True),
    # a declaration naming more of torch than that header: after
    # torch/types.h, the first compile's error in the record
    (DECLARED + "torch::autograd::Variable negated(torch::autograd::Variable a);\n",
     ["add", "twice", "negated"], False),
])
def test_thunks_of_declarations_compile_after_the_tensor_header(built, tensor_pch, tmp_path,
                                                                declared, functions, light):
    _, _, _, root = built
    shim = kb_load.ExtensionShim("build", str(tmp_path / "build"), pch=str(tensor_pch),
                                 cache=str(root))
    directory = tmp_path / "ext"
    directory.mkdir()
    obj = _definitions(str(tmp_path))
    record = {}
    name = "kb_light_%d" % len(functions)
    module = shim._build_thunks(name, [declared], functions, {}, str(directory), [obj], False,
                                record)
    assert module is not None, record
    if light:
        assert record["binding"].endswith("precompiled ATen/core/Tensor.h)"), record
        assert "light_thunks_error" not in record
    else:
        # torch/types.h is not precompiled here: the second compile has none
        assert record["binding"].startswith("generic caller (") and "precompiled" not in \
            record["binding"], record
        assert record["light_thunks_error"]
        assert torch.equal(module.negated(torch.ones(2)), -torch.ones(2))
    assert torch.equal(module.add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
    a, b = module.twice(torch.ones(3), 3)
    assert torch.equal(b, torch.full((3,), 3.0))
