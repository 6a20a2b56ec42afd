#include "oracle.h"

#include <dlfcn.h>

#include <cstring>

#include "skilldb_oracle.h"

namespace skilldb::verify::internal {

OracleSet::~OracleSet() {
  for (void* h : handles_) ::dlclose(h);
}

Result<OracleSet::OracleFn> OracleSet::Get(const Task& task) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = compiler_->CacheKey(task.oracle_cpp,
                                              SourceLanguage::kCpp);
  if (auto it = fns_.find(key); it != fns_.end()) return it->second;
  SKILLDB_ASSIGN_OR_RETURN(CompileOutput out,
                           compiler_->Compile(task.oracle_cpp,
                                              SourceLanguage::kCpp));
  if (!out.ok) {
    return Status::Internal("oracle of task " + task.name +
                            " does not compile:\n" + out.log);
  }
  void* h = ::dlopen(out.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    return Status::Internal("cannot load the oracle of task " + task.name +
                            ": " + ::dlerror());
  }
  auto fn = reinterpret_cast<OracleFn>(::dlsym(h, "oracle"));
  if (fn == nullptr) {
    ::dlclose(h);
    return Status::Internal("oracle of task " + task.name +
                            " defines no 'oracle' function");
  }
  handles_.push_back(h);
  fns_[key] = fn;
  return fn;
}

Result<std::vector<std::vector<double>>> OracleSet::Run(
    const Task& task, const Dims& dims, const std::vector<HostTensor>& inputs) {
  SKILLDB_ASSIGN_OR_RETURN(OracleFn fn, Get(task));
  std::vector<std::vector<double>> in_values;
  std::vector<OracleTensor> in_t(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_values.push_back(inputs[i].values);
    OracleTensor& t = in_t[i];
    std::memset(&t, 0, sizeof(t));
    t.data = in_values.back().data();
    t.ndim = static_cast<int32_t>(inputs[i].shape.size());
    for (size_t d = 0; d < inputs[i].shape.size(); ++d) t.shape[d] = inputs[i].shape[d];
    t.numel = inputs[i].numel();
  }
  std::vector<std::vector<double>> outs;
  std::vector<OracleTensor> out_t(task.outputs.size());
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                             ResolveShape(task.outputs[i], dims));
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    outs.emplace_back(static_cast<size_t>(n), 0.0);
    OracleTensor& t = out_t[i];
    std::memset(&t, 0, sizeof(t));
    t.ndim = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) t.shape[d] = shape[d];
    t.numel = n;
  }
  for (size_t i = 0; i < outs.size(); ++i) out_t[i].data = outs[i].data();
  const int rc = fn(in_t.data(), static_cast<int>(in_t.size()), out_t.data(),
                    static_cast<int>(out_t.size()));
  if (rc != 0) {
    return Status::Internal("oracle of task " + task.name + " returned " +
                            std::to_string(rc));
  }
  return outs;
}

}  // namespace skilldb::verify::internal
