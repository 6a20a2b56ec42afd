// The nanobind module skilldb._skilldb: shared declarations of its binding
// files (module.cc: errors and value types; library_bindings.cc: Library,
// Verifier and the trainer's functions). Internal.
//
// Conventions: every Status error is raised as a skilldb.Error subclass
// carrying the status code (`code`, e.g. "not_found"); every value type has
// __repr__, to_json() (the API layer's codec) and to_dict(); calls that
// query, verify or commit release the GIL.
#ifndef SKILLDB_PYTHON_BINDINGS_H_
#define SKILLDB_PYTHON_BINDINGS_H_

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

#include "skilldb/json.h"
#include "skilldb/status.h"

namespace skilldb::python {

namespace nb = nanobind;

// What a binding throws for a non-OK Status; the module's translator turns
// it into the skilldb.Error subclass of its code.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status)
      : status_(std::move(status)), what_(status_.ToString()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

// Throws StatusError unless `s` is OK.
inline void Check(const Status& s) {
  if (!s.ok()) throw StatusError(s);
}
// The value of `r`, or throws its StatusError.
template <typename T>
T Take(Result<T> r) {
  if (!r.ok()) throw StatusError(r.status());
  return std::move(r).value();
}

// json.loads(text) / json.dumps(obj).
nb::object JsonLoads(const std::string& text);
std::string JsonDumps(const nb::handle& obj);

// A Python argument given as a dict (or a JSON string) read with the API
// layer's codec for T; InvalidArgument naming `what` otherwise.
template <typename T>
T FromPython(const nb::handle& obj, const char* what) {
  std::string text = nb::isinstance<nb::str>(obj) ? nb::cast<std::string>(obj)
                                                  : JsonDumps(obj);
  auto r = FromJson<T>(text);
  if (!r.ok()) throw StatusError(r.status().WithContext(what));
  return std::move(r).value();
}

void BindErrors(nb::module_& m);
void BindTypes(nb::module_& m);
void BindLibrary(nb::module_& m);
void BindTrainer(nb::module_& m);

}  // namespace skilldb::python

#endif  // SKILLDB_PYTHON_BINDINGS_H_
