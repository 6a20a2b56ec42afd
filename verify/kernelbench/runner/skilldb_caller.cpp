// The generic caller: one Python extension, built once per torch and
// Python, that calls answers' functions through their thunks
// (skilldb_thunk.h) so that no answer needs a pybind11 binding of its own.
//
// Built by kb_caller.build_caller with torch's load_inline (functions=None:
// this file has the module), so it is compiled as load_inline compiles a
// binding: torch/extension.h first, torch's flags, pybind11's ABI.
//
//   load(path, {name: docstring}, error_handling) -> {name: function}
//     dlopens the thunk library at `path` (kept loaded, as Python keeps an
//     extension) and looks up each function's thunks; ImportError if the
//     library does not load, a thunk is missing, or a signature names a type
//     this caller does not know. Each function is a builtin of that name
//     and docstring, as m.def makes.
//   function(*args)
//     as load_inline's m.def("f", torch::wrap_pybind_function(f)) would be
//     called: positional arguments only, each converted by pybind11's caster
//     for the parameter's type with conversion allowed (pybind11's
//     dispatcher for a function of one overload), TypeError when one does
//     not convert; the call inside torch's HANDLE_TH_ERRORS /
//     END_HANDLE_TH_ERRORS_PYBIND (with_pytorch_error_handling, the
//     default) or bare; the result converted by its type's caster with
//     return_value_policy::move, as pybind11 converts a value returned.
#include <dlfcn.h>

#include <cstddef>
#include <memory>
#include <new>
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

// Arguments and results are placed in slots on the caller's stack (no heap
// allocation per call: the conversions are inside every timed call).
constexpr std::size_t kSlot = 128;
constexpr std::size_t kMaxArgs = 64;  // skilldb_thunk.h's bound
template <class T>
Arg* PlaceArg(void* slot) {
  static_assert(sizeof(ArgOf<T>) <= kSlot, "slot too small");
  return new (slot) ArgOf<T>();
}
template <class T>
Ret* PlaceRet(void* slot) {
  static_assert(sizeof(RetOf<T>) <= kSlot, "slot too small");
  return new (slot) RetOf<T>();
}
Ret* PlaceVoid(void* slot) { return new (slot) RetVoid(); }
using ArgMaker = Arg* (*)(void*);
using RetMaker = Ret* (*)(void*);

// The maker of a tag's argument or result; nullptr for a tag not known.
// Resolved once per function, when it is loaded.
ArgMaker ArgMakerOf(const std::string& tag) {
#define SKILLDB_MAKE_ARG(T, s) \
  if (tag == s) return &PlaceArg<T>;
  SKILLDB_THUNK_ARG_TYPES(SKILLDB_MAKE_ARG)
#undef SKILLDB_MAKE_ARG
  return nullptr;
}

RetMaker RetMakerOf(const std::string& tag) {
  if (tag == "void") return &PlaceVoid;
#define SKILLDB_MAKE_RET(T, s) \
  if (tag == s) return &PlaceRet<T>;
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
  // `args` and `ret` are known tags (ArgMakerOf, RetMakerOf).
  Function(std::string name, std::vector<std::string> args, std::string ret,
           Thunk thunk, bool error_handling)
      : name_(std::move(name)),
        args_(std::move(args)),
        ret_(std::move(ret)),
        thunk_(thunk),
        error_handling_(error_handling) {
    for (const std::string& a : args_) makers_.push_back(ArgMakerOf(a));
    ret_maker_ = RetMakerOf(ret_);
  }

  // Keyword arguments never reach here: the function pybind11 makes of
  // this (Load) takes positional ones only, and refuses others itself.
  py::object Call(const py::args& args) const {
    if (args.size() != makers_.size()) Incompatible(args);
    struct Placed {  // destroys what was placed, however the call ends
      Arg* args[kMaxArgs];
      std::size_t n = 0;
      Ret* ret = nullptr;
      ~Placed() {
        for (std::size_t i = 0; i < n; ++i) args[i]->~Arg();
        if (ret != nullptr) ret->~Ret();
      }
    } placed;
    alignas(std::max_align_t) unsigned char slots[kMaxArgs][kSlot];
    alignas(std::max_align_t) unsigned char ret_slot[kSlot];
    void* values[kMaxArgs];
    for (std::size_t i = 0; i < makers_.size(); ++i) {
      placed.args[placed.n++] = makers_[i](slots[i]);
      if (!placed.args[i]->Load(args[i])) Incompatible(args);
      values[i] = placed.args[i]->Value();
    }
    placed.ret = ret_maker_(ret_slot);
    Ret* ret = placed.ret;
    if (error_handling_) {
      HANDLE_TH_ERRORS
      thunk_(values, ret->Value());
      END_HANDLE_TH_ERRORS_PYBIND
    } else {
      thunk_(values, ret->Value());
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
  [[noreturn]] void Incompatible(const py::args& args) const {
    std::string msg =
        name_ +
        "(): incompatible function arguments. The following argument types "
        "are supported:\n    1. " +
        Describe() + "\n\nInvoked with: ";
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) msg += ", ";
      msg += py::repr(args[i]).cast<std::string>();
    }
    throw py::type_error(msg);
  }

  std::string name_;
  std::vector<std::string> args_;
  std::string ret_;
  Thunk thunk_;
  bool error_handling_;
  std::vector<ArgMaker> makers_;
  RetMaker ret_maker_ = nullptr;
};

py::dict Load(const std::string& path, const py::dict& functions,
              bool error_handling) {
  // Kept loaded for the process's life, as Python keeps an extension.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    throw py::import_error("the thunk library " + path +
                           " did not load: " + (why ? why : "unknown reason"));
  }
  py::dict out;
  for (const auto& item : functions) {
    const std::string f = py::str(item.first);
    const std::string doc = py::str(item.second);
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
    if (!ParseSignature(s, &args, &ret) || !RetMakerOf(ret)) {
      throw py::import_error(f +
                             ": a signature this caller does not know: " + s);
    }
    for (const std::string& a : args) {
      if (!ArgMakerOf(a))
        throw py::import_error(
            f + ": a parameter type this caller does not know: " + a);
    }
    // A builtin function of the name and docstring load_inline's m.def
    // gives, calling the thunk through Function.
    auto fn = std::make_shared<const Function>(
        f, std::move(args), std::move(ret), call, error_handling);
    out[py::str(f)] =
        py::cpp_function([fn](const py::args& a) { return fn->Call(a); },
                         py::name(f.c_str()), py::doc(doc.c_str()));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def(
      "load", &Load,
      "Loads a thunk library's functions (see the top of skilldb_caller.cpp).");
}
