#include "skilldb/verify/task.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "expr.h"
#include "file_util.h"
#include "skilldb/util/json.h"

namespace skilldb::verify {
namespace {

using nlohmann::json;
using internal::JoinPath;
using internal::ReadFile;

constexpr std::array<std::pair<Dtype, std::string_view>, 5> kDtypes = {{
    {Dtype::kFloat32, "float32"},
    {Dtype::kBFloat16, "bfloat16"},
    {Dtype::kFloat16, "float16"},
    {Dtype::kInt32, "int32"},
    {Dtype::kInt64, "int64"},
}};

constexpr std::array<std::pair<Distribution, std::string_view>, 4> kDists = {{
    {Distribution::kNormal, "normal"},
    {Distribution::kUniform, "uniform"},
    {Distribution::kLarge, "large"},
    {Distribution::kSpecial, "special"},
}};

constexpr int64_t kMaxSourceBytes = 1 << 20;

// Errors while reading task.json name the file and the field.
class FieldReader {
 public:
  FieldReader(std::string file) : file_(std::move(file)) {}

  Status Error(std::string_view field, std::string_view what) const {
    return Status::InvalidArgument(file_ + ": field '" + std::string(field) +
                                   "' " + std::string(what));
  }

  // Reads `key` of `j` through the shared typed reader (skilldb/util/
  // json.h): no truncation (a level of 2^32 + 1 is not 1), finite numbers.
  template <typename T>
  Status Get(const json& j, const char* key, T* out, bool required) const {
    util::FieldReader in(j, file_);
    if (in.Find(key) == nullptr) {
      return required ? Error(key, "is missing") : Status::Ok();
    }
    if constexpr (std::is_same_v<T, std::string>) {
      return in.String(key, out);
    } else if constexpr (std::is_same_v<T, bool>) {
      return in.Bool(key, out);
    } else if constexpr (std::is_same_v<T, int>) {
      return in.Int(key, out);
    } else if constexpr (std::is_same_v<T, double>) {
      return in.Double(key, out);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      return in.Strings(key, out);
    } else {
      static_assert(std::is_same_v<T, std::map<std::string, double>>);
      const json& v = *in.Find(key);
      if (!v.is_object()) return Error(key, "must be an object of numbers");
      T values;
      for (const auto& [name, value] : v.items()) {
        double x = 0;
        SKILLDB_RETURN_IF_ERROR(util::ReadDouble(
            value, file_ + ": field '" + key + "." + name + "'",
            -std::numeric_limits<double>::max(),
            std::numeric_limits<double>::max(), &x));
        values[name] = x;
      }
      *out = std::move(values);
      return Status::Ok();
    }
  }

  // Dims in [1, 2^31): their products size the tensors the worker makes.
  Result<Dims> GetDims(const json& j, std::string_view field) const {
    if (!j.is_object()) return Error(field, "is not an object of dims");
    Dims dims;
    for (const auto& [k, v] : j.items()) {
      int64_t dim = 0;
      if (!util::ReadInt64(v, "", 1, (int64_t{1} << 31) - 1, &dim).ok()) {
        return Error(field, "has a dim '" + k +
                                "' that is not an integer in [1, 2^31)");
      }
      dims[k] = dim;
    }
    return dims;
  }

  Result<TensorSpec> GetTensor(const json& j, bool is_input) const {
    TensorSpec t;
    SKILLDB_RETURN_IF_ERROR(Get(j, "name", &t.name, true));
    std::string dtype = "float32";
    SKILLDB_RETURN_IF_ERROR(Get(j, "dtype", &dtype, false));
    auto d = ParseDtype(dtype);
    if (!d.ok()) return Error(t.name + ".dtype", d.status().message());
    t.dtype = *d;
    auto shape = j.find("shape");
    if (shape == j.end() || !shape->is_array() || shape->empty() ||
        shape->size() > 8) {
      return Error(t.name + ".shape", "must be an array of 1 to 8 entries");
    }
    for (const json& e : *shape) {
      if (e.is_string()) {
        t.shape.push_back(e.get<std::string>());
      } else if (e.is_number_integer()) {
        t.shape.push_back(std::to_string(e.get<int64_t>()));
      } else {
        return Error(t.name + ".shape", "entries must be strings or integers");
      }
    }
    SKILLDB_RETURN_IF_ERROR(Get(j, "large_scale", &t.large_scale, false));
    std::vector<std::string> dists;
    SKILLDB_RETURN_IF_ERROR(Get(j, "distributions", &dists, false));
    for (const std::string& name : dists) {
      auto dist = ParseDistribution(name);
      if (!dist.ok()) {
        return Error(t.name + ".distributions", dist.status().message());
      }
      t.distributions.push_back(*dist);
    }
    if (is_input && t.distributions.empty()) {
      t.distributions.push_back(Distribution::kNormal);
    }
    return t;
  }

 private:
  std::string file_;
};

Result<std::vector<FindingCode>> ParseCodes(const FieldReader& r,
                                            const json& expect,
                                            std::string_view field) {
  std::vector<FindingCode> codes;
  if (!expect.is_array()) return r.Error(field, "must be \"pass\" or a list");
  for (const json& e : expect) {
    if (!e.is_string()) return r.Error(field, "entries must be strings");
    auto code = ParseFindingCode(e.get<std::string>());
    if (!code) {
      return r.Error(field, "names unknown finding '" + e.get<std::string>() +
                                "'");
    }
    codes.push_back(*code);
  }
  if (codes.empty()) return r.Error(field, "is an empty list");
  return codes;
}

Result<CandidateSpec> ParseCandidate(const FieldReader& r, const json& j) {
  CandidateSpec c;
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "name", &c.name, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "file", &c.file, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "note", &c.note, false));
  std::string lang;
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "language", &lang, false));
  if (lang.empty()) {
    const std::string ext = std::filesystem::path(c.file).extension();
    lang = (ext == ".cu" || c.file.ends_with(".cu.in")) ? "cuda" : "cpp";
  }
  auto parsed = ParseSourceLanguage(lang);
  if (!parsed.ok()) {
    return r.Error("candidates." + c.name, parsed.status().message());
  }
  c.language = *parsed;
  auto expect = j.find("expect");
  if (expect == j.end()) {
    return r.Error("candidates." + c.name + ".expect", "is missing");
  }
  if (expect->is_string() && expect->get<std::string>() == "pass") {
    c.expect_pass = true;
  } else {
    SKILLDB_ASSIGN_OR_RETURN(
        c.expect_any, ParseCodes(r, *expect, "candidates." + c.name + ".expect"));
  }
  if (auto un = j.find("expect_without_screen"); un != j.end()) {
    SKILLDB_ASSIGN_OR_RETURN(
        c.expect_without_screen,
        ParseCodes(r, *un, "candidates." + c.name + ".expect_without_screen"));
  }
  return c;
}

Result<ComputeClass> ParseComputeClass(const FieldReader& r,
                                       std::string_view name) {
  for (ComputeClass c : {ComputeClass::kSimtFp32, ComputeClass::kTensorTf32,
                         ComputeClass::kTensorBf16}) {
    if (ComputeClassName(c) == name) return c;
  }
  return r.Error("compute_class", "must be simt_fp32, tensor_tf32 or "
                                  "tensor_bf16");
}

Status ValidateShapes(const FieldReader& r, const Task& t, const Dims& dims,
                      std::string_view which) {
  for (const auto* list : {&t.inputs, &t.outputs}) {
    for (const TensorSpec& spec : *list) {
      auto shape = ResolveShape(spec, dims);
      if (!shape.ok()) {
        return r.Error(std::string(which) + " (" + spec.name + ")",
                       shape.status().message());
      }
    }
  }
  auto flops = TaskFlops(t, dims);
  if (!flops.ok()) return r.Error("flops", flops.status().message());
  auto bytes = TaskBytes(t, dims);
  if (!bytes.ok()) return r.Error("bytes", bytes.status().message());
  return Status::Ok();
}

Status ParseTaskJson(const std::string& file, const json& j, Task* t) {
  FieldReader r(file);
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "name", &t->name, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "family", &t->family, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "level", &t->level, false));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "description", &t->description, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "params", &t->params, false));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "flops", &t->flops, true));
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "bytes", &t->bytes, false));
  std::string cc = "simt_fp32";
  SKILLDB_RETURN_IF_ERROR(r.Get(j, "compute_class", &cc, false));
  SKILLDB_ASSIGN_OR_RETURN(t->compute_class, ParseComputeClass(r, cc));
  if (!j.contains("dims")) return r.Error("dims", "is missing");
  SKILLDB_ASSIGN_OR_RETURN(t->dims, r.GetDims(j["dims"], "dims"));
  if (!j.contains("host_dims")) return r.Error("host_dims", "is missing");
  SKILLDB_ASSIGN_OR_RETURN(t->host_dims, r.GetDims(j["host_dims"], "host_dims"));
  if (!j.contains("check_dims") || !j["check_dims"].is_array() ||
      j["check_dims"].empty()) {
    return r.Error("check_dims", "must be a non-empty array");
  }
  for (const json& d : j["check_dims"]) {
    SKILLDB_ASSIGN_OR_RETURN(Dims dims, r.GetDims(d, "check_dims"));
    t->check_dims.push_back(std::move(dims));
  }
  for (const char* key : {"inputs", "outputs"}) {
    if (!j.contains(key) || !j[key].is_array() || j[key].empty()) {
      return r.Error(key, "must be a non-empty array");
    }
    const bool is_input = std::string_view(key) == "inputs";
    for (const json& e : j[key]) {
      SKILLDB_ASSIGN_OR_RETURN(TensorSpec spec, r.GetTensor(e, is_input));
      (is_input ? t->inputs : t->outputs).push_back(std::move(spec));
    }
  }
  if (auto tol = j.find("tolerance"); tol != j.end()) {
    if (!tol->is_object()) return r.Error("tolerance", "is not an object");
    for (const auto& [dtype_name, v] : tol->items()) {
      auto dtype = ParseDtype(dtype_name);
      if (!dtype.ok()) return r.Error("tolerance", dtype.status().message());
      Tolerance tolerance;
      SKILLDB_RETURN_IF_ERROR(r.Get(v, "atol", &tolerance.atol, true));
      SKILLDB_RETURN_IF_ERROR(r.Get(v, "rtol", &tolerance.rtol, true));
      t->tolerances[*dtype] = tolerance;
    }
  }
  if (auto cands = j.find("candidates"); cands != j.end()) {
    if (!cands->is_array()) return r.Error("candidates", "is not an array");
    for (const json& c : *cands) {
      SKILLDB_ASSIGN_OR_RETURN(CandidateSpec spec, ParseCandidate(r, c));
      t->candidates.push_back(std::move(spec));
    }
  }
  SKILLDB_RETURN_IF_ERROR(ValidateShapes(r, *t, t->dims, "dims"));
  SKILLDB_RETURN_IF_ERROR(ValidateShapes(r, *t, t->host_dims, "host_dims"));
  for (const Dims& d : t->check_dims) {
    SKILLDB_RETURN_IF_ERROR(ValidateShapes(r, *t, d, "check_dims"));
  }
  return Status::Ok();
}

// C initializers for the shapes of every tensor at `dims`, used by the
// hard-coded-shape hack template.
std::string ShapeInitializers(const Task& task, const Dims& dims) {
  std::string out;
  for (const auto& [list, prefix] :
       {std::pair{&task.inputs, "skdb_fixed_in"},
        std::pair{&task.outputs, "skdb_fixed_out"}}) {
    out += "static const int64_t " + std::string(prefix) + "[" +
           std::to_string(list->size()) + "][8] = {";
    for (const TensorSpec& spec : *list) {
      auto shape = ResolveShape(spec, dims);
      out += "{";
      if (shape.ok()) {
        for (int64_t v : *shape) out += std::to_string(v) + ",";
      }
      out += "},";
    }
    out += "};\n";
  }
  return out;
}

void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = text->find(from, pos)) != std::string::npos) {
    text->replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

std::string_view DtypeName(Dtype dtype) {
  for (const auto& [d, name] : kDtypes) {
    if (d == dtype) return name;
  }
  return "unknown";
}

Result<Dtype> ParseDtype(std::string_view name) {
  for (const auto& [d, n] : kDtypes) {
    if (n == name) return d;
  }
  return Status::InvalidArgument("unknown dtype '" + std::string(name) +
                                 "' (float32, bfloat16, float16, int32, int64)");
}

int64_t DtypeSize(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFloat32:
    case Dtype::kInt32:
      return 4;
    case Dtype::kBFloat16:
    case Dtype::kFloat16:
      return 2;
    case Dtype::kInt64:
      return 8;
  }
  return 4;
}

std::string_view DistributionName(Distribution d) {
  for (const auto& [dist, name] : kDists) {
    if (dist == d) return name;
  }
  return "unknown";
}

Result<Distribution> ParseDistribution(std::string_view name) {
  for (const auto& [d, n] : kDists) {
    if (n == name) return d;
  }
  return Status::InvalidArgument("unknown distribution '" + std::string(name) +
                                 "' (normal, uniform, large, special)");
}

std::string_view BackendName(Backend backend) {
  return backend == Backend::kCuda ? "cuda" : "host";
}

Result<Backend> ParseBackend(std::string_view name) {
  if (name == "cuda") return Backend::kCuda;
  if (name == "host") return Backend::kHost;
  return Status::InvalidArgument("unknown backend '" + std::string(name) +
                                 "' (cuda, host)");
}

std::string_view SourceLanguageName(SourceLanguage language) {
  return language == SourceLanguage::kCuda ? "cuda" : "cpp";
}

Result<SourceLanguage> ParseSourceLanguage(std::string_view name) {
  if (name == "cuda") return SourceLanguage::kCuda;
  if (name == "cpp" || name == "c++") return SourceLanguage::kCpp;
  return Status::InvalidArgument("unknown language '" + std::string(name) +
                                 "' (cuda, cpp)");
}

SourceLanguage LanguageFor(Backend backend) {
  return backend == Backend::kCuda ? SourceLanguage::kCuda
                                   : SourceLanguage::kCpp;
}

std::string_view ComputeClassName(ComputeClass c) {
  switch (c) {
    case ComputeClass::kSimtFp32:
      return "simt_fp32";
    case ComputeClass::kTensorTf32:
      return "tensor_tf32";
    case ComputeClass::kTensorBf16:
      return "tensor_bf16";
  }
  return "simt_fp32";
}

Result<std::vector<std::string>> ListTasks(std::string_view task_root) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(std::string(task_root), ec);
  if (ec) {
    return Status::IOError("cannot list tasks in '" + std::string(task_root) +
                           "': " + ec.message());
  }
  for (const auto& entry : it) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] == '_' || name[0] == '.') continue;
    if (internal::FileExists(JoinPath(entry.path().string(), "task.json"))) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<Task> LoadTask(std::string_view task_root, std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos ||
      name.find("..") != std::string_view::npos || name[0] == '_') {
    return Status::InvalidArgument("bad task name '" + std::string(name) + "'");
  }
  const std::string dir = std::filesystem::absolute(
      JoinPath(task_root, name)).lexically_normal();
  const std::string file = JoinPath(dir, "task.json");
  auto text = ReadFile(file, kMaxSourceBytes);
  if (!text.ok()) {
    if (text.status().IsNotFound()) {
      return Status::NotFound("unknown task '" + std::string(name) +
                              "' (no " + file + ")");
    }
    return text.status();
  }
  SKILLDB_ASSIGN_OR_RETURN(json j, util::ParseUntrustedJson(*text, file));
  if (!j.is_object()) {
    return Status::InvalidArgument(file + ": not a JSON object");
  }
  Task task;
  task.dir = dir;
  SKILLDB_RETURN_IF_ERROR(ParseTaskJson(file, j, &task));
  if (task.name != name) {
    return Status::InvalidArgument(file + ": field 'name' is '" + task.name +
                                   "', expected the directory name");
  }
  for (const auto& [field, path] :
       {std::pair{&task.reference_cuda, "reference.cu"},
        std::pair{&task.reference_cpp, "reference.cc"},
        std::pair{&task.oracle_cpp, "oracle.cc"}}) {
    auto source = ReadFile(JoinPath(dir, path), kMaxSourceBytes);
    if (!source.ok()) return source.status().WithContext("task " + task.name);
    *field = std::move(*source);
  }
  return task;
}

Result<std::vector<Candidate>> LoadCandidates(std::string_view task_root,
                                              const Task& task,
                                              SourceLanguage language) {
  std::vector<Candidate> out;
  for (const CandidateSpec& spec : task.candidates) {
    if (spec.language != language) continue;
    SKILLDB_ASSIGN_OR_RETURN(std::string source,
                             ReadFile(JoinPath(task.dir, spec.file),
                                      kMaxSourceBytes));
    out.push_back({spec, std::move(source)});
  }
  const std::string hack_dir = JoinPath(task_root, "_hacks");
  const std::string manifest = JoinPath(hack_dir, "hacks.json");
  auto text = ReadFile(manifest, kMaxSourceBytes);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return out;
    return text.status();
  }
  SKILLDB_ASSIGN_OR_RETURN(json j, util::ParseUntrustedJson(*text, manifest));
  if (!j.is_array()) {
    return Status::InvalidArgument(manifest + ": not a JSON array");
  }
  FieldReader r(manifest);
  const Backend backend = language == SourceLanguage::kCuda ? Backend::kCuda
                                                            : Backend::kHost;
  const std::string shapes = ShapeInitializers(task, TimingDims(task, backend));
  for (const json& h : j) {
    SKILLDB_ASSIGN_OR_RETURN(CandidateSpec spec, ParseCandidate(r, h));
    if (spec.language != language) continue;
    SKILLDB_ASSIGN_OR_RETURN(std::string source,
                             ReadFile(JoinPath(hack_dir, spec.file),
                                      kMaxSourceBytes));
    ReplaceAll(&source, "{{HOST_REFERENCE}}", task.reference_cpp);
    ReplaceAll(&source, "{{REFERENCE}}", language == SourceLanguage::kCuda
                                             ? task.reference_cuda
                                             : task.reference_cpp);
    ReplaceAll(&source, "{{FIXED_SHAPES}}", shapes);
    spec.generated = true;
    out.push_back({std::move(spec), std::move(source)});
  }
  return out;
}

Result<std::vector<int64_t>> ResolveShape(const TensorSpec& spec,
                                          const Dims& dims) {
  if (spec.shape.empty() || spec.shape.size() > 8) {
    return Status::InvalidArgument("tensor '" + spec.name +
                                   "' needs 1 to 8 dimensions");
  }
  // At most 2^34 elements (64 GiB of float32): the element count sizes
  // the buffers the verifier and its worker allocate, and the product of
  // the dims must not overflow on the way.
  constexpr int64_t kMaxElements = int64_t{1} << 34;
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (const std::string& e : spec.shape) {
    auto v = internal::EvalPositiveInt(e, dims);
    if (!v.ok()) return v.status().WithContext("tensor '" + spec.name + "'");
    if (*v > kMaxElements / elements) {
      return Status::InvalidArgument("tensor '" + spec.name +
                                     "' has more than 2^34 elements");
    }
    elements *= *v;
    shape.push_back(*v);
  }
  return shape;
}

Result<double> TaskFlops(const Task& task, const Dims& dims) {
  return internal::EvalExpr(task.flops, dims, task.params);
}

Result<double> TaskBytes(const Task& task, const Dims& dims) {
  if (!task.bytes.empty()) {
    return internal::EvalExpr(task.bytes, dims, task.params);
  }
  double total = 0;
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const TensorSpec& spec : *list) {
      SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                               ResolveShape(spec, dims));
      double n = 1;
      for (int64_t v : shape) n *= static_cast<double>(v);
      total += n * static_cast<double>(DtypeSize(spec.dtype));
    }
  }
  return total;
}

Tolerance ToleranceFor(const Task& task, Dtype dtype) {
  if (auto it = task.tolerances.find(dtype); it != task.tolerances.end()) {
    return it->second;
  }
  switch (dtype) {
    case Dtype::kBFloat16:
      return {1e-2, 1e-2};
    case Dtype::kFloat16:
      return {1e-3, 1e-3};
    default:
      return {1e-4, 1e-4};
  }
}

const Dims& TimingDims(const Task& task, Backend backend) {
  return backend == Backend::kCuda ? task.dims : task.host_dims;
}

}  // namespace skilldb::verify
