// Thunks: an answer's functions called by the prebuilt generic caller
// (skilldb_caller.cpp) instead of through a pybind11 binding of its own.
//
// load_inline(functions=["f"]) compiles, per answer, a binding
// (PYBIND11_MODULE, m.def("f", torch::wrap_pybind_function(f))) in a file
// that includes torch/extension.h: on the H100 machine 8.6 s with a
// precompiled header, 23 s without. Most of it is the header set, not the
// answer: the deferred instantiations of torch's headers alone take 5.7 s
// of an empty file with torch/extension.h precompiled, 1.6 s with
// torch/types.h (torch 1.13 here).
//
// Here the answer's file includes torch/types.h and this header, and for
// every function f gets
//   skilldb_thunk_sig_f()         its signature: the tags of its parameter
//                                 and return types ("Tensor,long->Tensor")
//   skilldb_thunk_call_f(a, r)    calls f with a[i] pointing at the i-th
//                                 argument's value (of the decayed
//                                 parameter type) and stores the result in
//                                 *r (of the decayed return type)
// The caller converts each Python argument with pybind11's own caster for
// exactly that type (make_caster<T>::load(h, true), as pybind11's
// dispatcher does for a function of one overload) and the result with the
// return type's caster, so the conversions are pybind11's. Exceptions pass
// through to the caller, which handles them as wrap_pybind_function does.
//
// Only the types listed below are known: a function with any other
// parameter or return type does not compile here (Tag is left undefined),
// and the answer is built with its own binding as before.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace skilldb_thunk {

using Tensor2 = std::tuple<at::Tensor, at::Tensor>;
using Tensor3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using Tensor4 = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
using OptTensor = c10::optional<at::Tensor>;
using OptLong = c10::optional<long>;
using OptDouble = c10::optional<double>;

// The types both ways: X(C++ type, tag). int64_t is long here (LP64).
#define SKILLDB_THUNK_VALUE_TYPES(X)     \
  X(at::Tensor, "Tensor")                \
  X(bool, "bool")                        \
  X(int, "int")                          \
  X(long, "long")                        \
  X(long long, "longlong")               \
  X(unsigned int, "uint")                \
  X(unsigned long, "ulong")              \
  X(float, "float")                      \
  X(double, "double")                    \
  X(std::string, "str")                  \
  X(std::vector<at::Tensor>, "Tensor[]") \
  X(std::vector<long>, "long[]")         \
  X(std::vector<int>, "int[]")           \
  X(std::vector<float>, "float[]")       \
  X(std::vector<double>, "double[]")     \
  X(skilldb_thunk::OptTensor, "Tensor?") \
  X(skilldb_thunk::OptLong, "long?")     \
  X(skilldb_thunk::OptDouble, "double?")

// The argument types: those and IntArrayRef (not returned: it would be a
// view of what the function returns).
#define SKILLDB_THUNK_ARG_TYPES(X) \
  SKILLDB_THUNK_VALUE_TYPES(X)     \
  X(at::IntArrayRef, "IntArrayRef")

// The return types: those and tuples of tensors; "void" for none.
#define SKILLDB_THUNK_RETURN_TYPES(X)                 \
  SKILLDB_THUNK_VALUE_TYPES(X)                        \
  X(skilldb_thunk::Tensor2, "(Tensor,Tensor)")        \
  X(skilldb_thunk::Tensor3, "(Tensor,Tensor,Tensor)") \
  X(skilldb_thunk::Tensor4, "(Tensor,Tensor,Tensor,Tensor)")

template <class T>
struct ArgTag;  // undefined: a parameter of this type is not supported
template <class T>
struct ReturnTag;  // undefined: a return of this type is not supported
#define SKILLDB_THUNK_ARG_TAG(T, s)         \
  template <>                               \
  struct ArgTag<T> {                        \
    static const char* name() { return s; } \
  };
#define SKILLDB_THUNK_RETURN_TAG(T, s)      \
  template <>                               \
  struct ReturnTag<T> {                     \
    static const char* name() { return s; } \
  };
SKILLDB_THUNK_ARG_TYPES(SKILLDB_THUNK_ARG_TAG)
SKILLDB_THUNK_RETURN_TYPES(SKILLDB_THUNK_RETURN_TAG)
template <>
struct ReturnTag<void> {
  static const char* name() { return "void"; }
};

template <class T>
using Stored = typename std::decay<T>::type;

template <class R, class... A>
std::string Signature(R (*)(A...)) {
  std::string s;
  const char* names[] = {ArgTag<Stored<A>>::name()..., nullptr};
  for (std::size_t i = 0; i < sizeof...(A); ++i) {
    if (i) s += ",";
    s += names[i];
  }
  return s + "->" + ReturnTag<Stored<R>>::name();
}

#if __cplusplus >= 201703L
// A noexcept function is a type of its own from C++17, which torch's
// function_traits does not know: wrap_pybind_function does not compile for
// one, so neither do its thunks (it gets load_inline's binding, which fails
// as it does under KernelBench).
template <class R, class... A>
std::string Signature(R (*)(A...) noexcept) = delete;
#endif

template <class R, class... A, std::size_t... I>
void Invoke(std::true_type /*void*/, R (*f)(A...), void** a, void*,
            std::index_sequence<I...>) {
  f(static_cast<A&&>(*static_cast<Stored<A>*>(a[I]))...);
}

template <class R, class... A, std::size_t... I>
void Invoke(std::false_type, R (*f)(A...), void** a, void* r,
            std::index_sequence<I...>) {
  *static_cast<Stored<R>*>(r) =
      f(static_cast<A&&>(*static_cast<Stored<A>*>(a[I]))...);
}

template <class R, class... A>
void Call(R (*f)(A...), void** a, void* r) {
  static_assert(sizeof...(A) < 64, "too many parameters");
  Invoke(std::is_void<R>(), f, a, r, std::index_sequence_for<A...>());
}

}  // namespace skilldb_thunk

// One function's thunks (see the top of this file). `f` is looked up at
// namespace scope, as m.def("f", f) in load_inline's binding looks it up:
// an overloaded or templated f does not compile here either.
#define SKILLDB_THUNK(f)                                                  \
  extern "C" __attribute__((visibility("default")))                       \
  const char* skilldb_thunk_sig_##f() {                                   \
    static const std::string s = skilldb_thunk::Signature(&f);            \
    return s.c_str();                                                     \
  }                                                                       \
  extern "C"                                                              \
      __attribute__((visibility("default"))) void skilldb_thunk_call_##f( \
          void** a, void* r) {                                            \
    skilldb_thunk::Call(&f, a, r);                                        \
  }
