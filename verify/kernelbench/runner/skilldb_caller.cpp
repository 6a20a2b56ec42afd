// The generic caller: one Python extension, built once per torch and
// Python, that calls answers' functions through their thunks
// (skilldb_thunk.h) so that no answer needs a pybind11 binding of its own.
//
// Built by kb_caller.build_caller with torch's load_inline (functions=None:
// this file has the module), so it is compiled as load_inline compiles a
// binding: torch/extension.h first, torch's flags, pybind11's ABI.
//
//   load(path, functions, error_handling) -> {name: Function}
//     dlopens the thunk library at `path` (kept loaded, as Python keeps an
//     extension) and looks up each function's thunks; ImportError if the
//     library does not load, a thunk is missing, or a signature names a type
//     this caller does not know.
//   Function(*args)
//     as load_inline's m.def("f", torch::wrap_pybind_function(f)) would be
//     called: positional arguments only, each converted by pybind11's caster
//     for the parameter's type with conversion allowed (pybind11's
//     dispatcher for a function of one overload), TypeError when one does
//     not convert; the call inside torch's HANDLE_TH_ERRORS /
//     END_HANDLE_TH_ERRORS_PYBIND (with_pytorch_error_handling, the
//     default) or bare; the result converted by its type's caster with
//     return_value_policy::move, as pybind11 converts a value returned.
#include <dlfcn.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "skilldb_thunk.h"

namespace py = pybind11;

namespace {

struct Arg {
  virtual ~Arg() = default;
  virtual bool Load(py::handle h) = 0;
  virtual void* Value() = 0;
};

template <class T>
struct ArgOf final : Arg {
  py::detail::make_caster<T> caster;
  bool Load(py::handle h) override { return caster.load(h, true); }
  void* Value() override { return &py::detail::cast_op<T&>(caster); }
};

struct Ret {
  virtual ~Ret() = default;
  virtual void* Value() = 0;
  virtual py::object Cast() = 0;
};

template <class T>
struct RetOf final : Ret {
  T value{};
  void* Value() override { return &value; }
  py::object Cast() override {
    return py::reinterpret_steal<py::object>(py::detail::make_caster<T>::cast(
        std::move(value), py::return_value_policy::move, py::handle()));
  }
};

struct RetVoid final : Ret {
  void* Value() override { return nullptr; }
  py::object Cast() override { return py::none(); }
};

std::unique_ptr<Arg> MakeArg(const std::string& tag) {
#define SKILLDB_MAKE_ARG(T, s) \
  if (tag == s) return std::unique_ptr<Arg>(new ArgOf<T>());
  SKILLDB_THUNK_ARG_TYPES(SKILLDB_MAKE_ARG)
#undef SKILLDB_MAKE_ARG
  return nullptr;
}

std::unique_ptr<Ret> MakeRet(const std::string& tag) {
  if (tag == "void") return std::unique_ptr<Ret>(new RetVoid());
#define SKILLDB_MAKE_RET(T, s) \
  if (tag == s) return std::unique_ptr<Ret>(new RetOf<T>());
  SKILLDB_THUNK_RETURN_TYPES(SKILLDB_MAKE_RET)
#undef SKILLDB_MAKE_RET
  return nullptr;
}

// "A,B->R" split at its top-level commas ("(Tensor,Tensor)" is one tag).
bool ParseSignature(const std::string& sig, std::vector<std::string>* args,
                    std::string* ret) {
  const auto arrow = sig.rfind("->");
  if (arrow == std::string::npos) return false;
  *ret = sig.substr(arrow + 2);
  const std::string params = sig.substr(0, arrow);
  int depth = 0;
  std::string cur;
  for (char c : params) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      args->push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args->push_back(cur);
  return true;
}

class Function {
 public:
  using Thunk = void (*)(void**, void*);
  Function(std::string name, std::vector<std::string> args, std::string ret,
           Thunk thunk, bool error_handling)
      : name_(std::move(name)),
        args_(std::move(args)),
        ret_(std::move(ret)),
        thunk_(thunk),
        error_handling_(error_handling) {}

  py::object Call(py::args args, py::kwargs kwargs) const {
    if (kwargs.size() != 0 || args.size() != args_.size())
      Incompatible(args, kwargs);
    std::vector<std::unique_ptr<Arg>> held;
    std::vector<void*> values;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      held.push_back(MakeArg(args_[i]));
      if (!held.back()->Load(args[i])) Incompatible(args, kwargs);
      values.push_back(held.back()->Value());
    }
    std::unique_ptr<Ret> ret = MakeRet(ret_);
    if (error_handling_) {
      HANDLE_TH_ERRORS
      thunk_(values.data(), ret->Value());
      END_HANDLE_TH_ERRORS_PYBIND
    } else {
      thunk_(values.data(), ret->Value());
    }
    return ret->Cast();
  }

  std::string Describe() const {
    std::string s = "(";
    for (std::size_t i = 0; i < args_.size(); ++i) {
      s += (i ? ", arg" : "arg") + std::to_string(i) + ": " + args_[i];
    }
    return s + ") -> " + ret_;
  }

  const std::string& name() const { return name_; }

 private:
  // pybind11's words for arguments that do not fit the one overload.
  [[noreturn]] void Incompatible(const py::args& args,
                                 const py::kwargs& kwargs) const {
    std::string msg =
        name_ +
        "(): incompatible function arguments. The following argument types "
        "are supported:\n    1. " +
        Describe() + "\n\nInvoked with: ";
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) msg += ", ";
      msg += py::repr(args[i]).cast<std::string>();
    }
    if (kwargs.size() != 0)
      msg += "; kwargs: " + py::repr(kwargs).cast<std::string>();
    throw py::type_error(msg);
  }

  std::string name_;
  std::vector<std::string> args_;
  std::string ret_;
  Thunk thunk_;
  bool error_handling_;
};

py::dict Load(const std::string& path,
              const std::vector<std::string>& functions, bool error_handling) {
  // Kept loaded for the process's life, as Python keeps an extension.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    throw py::import_error("the thunk library " + path +
                           " did not load: " + (why ? why : "unknown reason"));
  }
  py::dict out;
  for (const std::string& f : functions) {
    using Sig = const char* (*)();
    auto sig =
        reinterpret_cast<Sig>(dlsym(lib, ("skilldb_thunk_sig_" + f).c_str()));
    auto call = reinterpret_cast<Function::Thunk>(
        dlsym(lib, ("skilldb_thunk_call_" + f).c_str()));
    if (sig == nullptr || call == nullptr) {
      throw py::import_error("the thunk library " + path +
                             " has no thunks for " + f);
    }
    std::vector<std::string> args;
    std::string ret;
    const std::string s = sig();
    if (!ParseSignature(s, &args, &ret) || !MakeRet(ret)) {
      throw py::import_error(f +
                             ": a signature this caller does not know: " + s);
    }
    for (const std::string& a : args) {
      if (!MakeArg(a))
        throw py::import_error(
            f + ": a parameter type this caller does not know: " + a);
    }
    out[py::str(f)] =
        Function(f, std::move(args), std::move(ret), call, error_handling);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  py::class_<Function>(m, "Function")
      .def("__call__", &Function::Call)
      .def("__repr__", [](const Function& f) {
        return "<skilldb_caller.Function " + f.name() + f.Describe() + ">";
      });
  m.def(
      "load", &Load,
      "Loads a thunk library's functions (see the top of skilldb_caller.cpp).");
}
