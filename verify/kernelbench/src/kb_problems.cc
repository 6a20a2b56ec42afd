// Problems, the task store on disk, id lists and answer formats.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "file_util.h"
#include "kb_internal.h"

namespace skilldb::verify::kb {
namespace {

using internal::json;
using internal::Env;
using verify::internal::JoinPath;


std::string LevelDir(const std::string& root, int level) {
  return JoinPath(root, "level" + std::to_string(level));
}

std::string ProblemDir(const std::string& root, int level, int id) {
  return JoinPath(LevelDir(root, level), std::to_string(id));
}

std::vector<int> NumberedEntries(const std::string& dir, const char* prefix) {
  std::vector<int> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  const size_t plen = std::strlen(prefix);
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= plen || name.compare(0, plen, prefix) != 0) continue;
    const std::string digits = name.substr(plen);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back(std::atoi(digits.c_str()));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

json ProblemToJson(const Problem& p) {
  return {{"level", p.level},
          {"id", p.id},
          {"name", p.name},
          {"code_hash", p.code_hash},
          {"source_path", p.source_path},
          {"kernelbench_root", p.kernelbench_root},
          {"init_inputs", internal::ParseJson(p.init_inputs_json, "init inputs")
                              .value_or(json::array())},
          {"inputs", internal::SpecsToJson(p.inputs)},
          {"precision", p.precision},
          {"tolerance", p.tolerance},
          {"input_bytes", p.input_bytes},
          {"flops", p.flops},
          {"degenerate", p.degenerate},
          {"degenerate_reason", p.degenerate_reason}};
}

}  // namespace

std::string Problem::key() const {
  return "level" + std::to_string(level) + "/" + std::to_string(id);
}

Result<double> ToleranceFor(std::string_view precision) {
  if (precision == "fp32" || precision == "float32") return 1e-4;
  if (precision == "fp16" || precision == "float16" || precision == "bf16" ||
      precision == "bfloat16") {
    return 1e-2;
  }
  return Status::InvalidArgument("unknown precision '" + std::string(precision) +
                                 "' (fp32, fp16 or bf16)");
}

Result<TaskStore> TaskStore::Open(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("the task store path is empty");
  SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(dir));
  return TaskStore(dir);
}

std::string TaskStore::DefaultDir() {
  if (std::string v = Env("SKILLDB_KB_STORE"); !v.empty()) return v;
  if (std::string v = Env("XDG_DATA_HOME"); !v.empty()) {
    return JoinPath(v, "skilldb/kernelbench");
  }
  if (std::string v = Env("HOME"); !v.empty()) {
    return JoinPath(v, ".local/share/skilldb/kernelbench");
  }
  return "/tmp/skilldb-kernelbench";
}

Status TaskStore::Put(const Problem& p) {
  const std::string dir = ProblemDir(dir_, p.level, p.id);
  SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(dir));
  SKILLDB_RETURN_IF_ERROR(
      verify::internal::WriteFileAtomic(JoinPath(dir, "problem.py"), p.source));
  return verify::internal::WriteFileAtomic(JoinPath(dir, "task.json"),
                                           ProblemToJson(p).dump(1) + "\n");
}

Result<Problem> TaskStore::Get(int level, int id) const {
  const std::string dir = ProblemDir(dir_, level, id);
  auto meta = verify::internal::ReadFile(JoinPath(dir, "task.json"));
  if (!meta.ok()) {
    if (meta.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("level " + std::to_string(level) + " problem " +
                              std::to_string(id) + " is not in the task store " +
                              dir_ + " (skilldb kernelbench import)");
    }
    return meta.status();
  }
  SKILLDB_ASSIGN_OR_RETURN(json j, internal::ParseJson(*meta, dir + "/task.json"));
  SKILLDB_ASSIGN_OR_RETURN(std::string source,
                           verify::internal::ReadFile(JoinPath(dir, "problem.py")));
  Problem p;
  p.level = j.value("level", level);
  p.id = j.value("id", id);
  p.name = j.value("name", "");
  p.source = std::move(source);
  p.code_hash = j.value("code_hash", "");
  p.source_path = j.value("source_path", "");
  p.kernelbench_root = j.value("kernelbench_root", "");
  p.init_inputs_json = internal::Dump(j.value("init_inputs", json::array()));
  p.inputs = internal::SpecsFromJson(j.value("inputs", json::array()));
  p.precision = j.value("precision", "fp32");
  p.tolerance = j.value("tolerance", 1e-4);
  p.input_bytes = j.value("input_bytes", int64_t{-1});
  p.flops = j.value("flops", int64_t{-1});
  p.degenerate = j.value("degenerate", "unknown");
  p.degenerate_reason = j.value("degenerate_reason", "");
  if (p.level != level || p.id != id) {
    return Status::Corruption(dir + "/task.json names level " +
                              std::to_string(p.level) + " problem " +
                              std::to_string(p.id));
  }
  return p;
}

Result<std::vector<Problem>> TaskStore::List(int level) const {
  std::vector<Problem> out;
  const std::vector<int> levels =
      level > 0 ? std::vector<int>{level} : NumberedEntries(dir_, "level");
  for (int l : levels) {
    for (int id : NumberedEntries(LevelDir(dir_, l), "")) {
      SKILLDB_ASSIGN_OR_RETURN(Problem p, Get(l, id));
      out.push_back(std::move(p));
    }
  }
  return out;
}

Status TaskStore::PutUnimportable(int level,
                                  const std::vector<Unimportable>& list) {
  SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(LevelDir(dir_, level)));
  json j = json::array();
  for (const Unimportable& u : list) {
    j.push_back({{"level", u.level}, {"id", u.id}, {"file", u.file},
                 {"reason", u.reason}});
  }
  return verify::internal::WriteFileAtomic(
      JoinPath(LevelDir(dir_, level), "unimportable.json"), j.dump(1) + "\n");
}

Result<std::vector<Unimportable>> TaskStore::ListUnimportable(int level) const {
  std::vector<Unimportable> out;
  const std::vector<int> levels =
      level > 0 ? std::vector<int>{level} : NumberedEntries(dir_, "level");
  for (int l : levels) {
    const std::string path = JoinPath(LevelDir(dir_, l), "unimportable.json");
    if (!verify::internal::FileExists(path)) continue;
    SKILLDB_ASSIGN_OR_RETURN(std::string text, verify::internal::ReadFile(path));
    SKILLDB_ASSIGN_OR_RETURN(json j, internal::ParseJson(text, path));
    if (!j.is_array()) return Status::Corruption(path + " is not a list");
    for (const json& e : j) {
      if (!e.is_object()) continue;
      out.push_back({e.value("level", l), e.value("id", 0), e.value("file", ""),
                     e.value("reason", "")});
    }
  }
  return out;
}

Result<std::vector<int>> ParseIdList(std::string_view text) {
  std::vector<int> out;
  std::string s(text);
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(start, end - start);
    const size_t dash = item.find('-');
    auto number = [&](const std::string& t) -> Result<int> {
      if (t.empty() || t.size() > 6 ||
          t.find_first_not_of("0123456789") != std::string::npos) {
        return Status::InvalidArgument("'" + item + "' in the problem list '" + s +
                                       "' is not a number or a range like 1-20");
      }
      return std::atoi(t.c_str());
    };
    if (dash == std::string::npos) {
      SKILLDB_ASSIGN_OR_RETURN(int v, number(item));
      out.push_back(v);
    } else {
      SKILLDB_ASSIGN_OR_RETURN(int a, number(item.substr(0, dash)));
      SKILLDB_ASSIGN_OR_RETURN(int b, number(item.substr(dash + 1)));
      if (b < a || b - a > 100000) {
        return Status::InvalidArgument("the range '" + item + "' is empty or too long");
      }
      for (int v = a; v <= b; ++v) out.push_back(v);
    }
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool InIdList(const std::vector<int>& ids, int id) {
  return ids.empty() || std::binary_search(ids.begin(), ids.end(), id);
}

std::string_view AnswerFormatName(AnswerFormat f) {
  switch (f) {
    case AnswerFormat::kCuda: return "cuda";
    case AnswerFormat::kTriton: return "triton";
    case AnswerFormat::kCAbi: return "c_abi";
    case AnswerFormat::kCute: return "cute";
    case AnswerFormat::kTileLang: return "tilelang";
    case AnswerFormat::kThunderKittens: return "thunderkittens";
    case AnswerFormat::kHip: return "hip";
    case AnswerFormat::kTorchOnly: return "torch_only";
    case AnswerFormat::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

FormatInfo Unsupported(AnswerFormat f, std::string reason) {
  FormatInfo i;
  i.format = f;
  i.supported = false;
  i.reason = std::move(reason);
  return i;
}

FormatInfo Supported(AnswerFormat f, std::string backend) {
  FormatInfo i;
  i.format = f;
  i.supported = true;
  i.backend = std::move(backend);
  return i;
}

bool Has(std::string_view s, const char* needle) {
  return s.find(needle) != std::string_view::npos;
}

FormatInfo NotSupported(AnswerFormat f) {
  switch (f) {
    case AnswerFormat::kCute:
      return Unsupported(f, "CuTe / CUTLASS DSL answers are not supported: the "
                            "runner neither ships nor confines the CuTe DSL's JIT "
                            "(nvidia-cutlass-dsl), and running the answer as plain "
                            "Python would judge something other than its kernels");
    case AnswerFormat::kTileLang:
      return Unsupported(f, "TileLang answers are not supported: the runner neither "
                            "ships nor confines TileLang's JIT (TVM); KernelBench "
                            "itself runs them in fp16/bf16 only");
    case AnswerFormat::kThunderKittens:
      return Unsupported(f, "ThunderKittens answers are not supported: they need the "
                            "ThunderKittens headers (THUNDERKITTENS_ROOT) and C++20 "
                            "builds, which the runner does not provide");
    case AnswerFormat::kHip:
      return Unsupported(f, "HIP answers are not supported: they need an AMD GPU "
                            "and hipcc");
    case AnswerFormat::kCAbi:
      return Unsupported(f, "a launch() C ABI kernel is judged by the task verifier "
                            "(skilldb verify --task NAME), not against a KernelBench "
                            "problem");
    default:
      return Unsupported(f, "the answer defines no class ModelNew");
  }
}

}  // namespace

FormatInfo DetectFormat(std::string_view source, std::string_view declared) {
  static const std::regex kModelNew(R"(class\s+ModelNew\b)");
  const std::string s(source);
  const bool has_model_new = std::regex_search(s, kModelNew);
  if (!declared.empty()) {
    if (declared == "cute" || declared == "cutlass") return NotSupported(AnswerFormat::kCute);
    if (declared == "tilelang") return NotSupported(AnswerFormat::kTileLang);
    if (declared == "thunderkittens") return NotSupported(AnswerFormat::kThunderKittens);
    if (declared == "hip") return NotSupported(AnswerFormat::kHip);
    if (declared != "cuda" && declared != "triton") {
      return Unsupported(AnswerFormat::kUnknown,
                         "unknown backend '" + std::string(declared) +
                             "' (cuda, triton, cute, tilelang, thunderkittens, hip)");
    }
    if (!has_model_new) return NotSupported(AnswerFormat::kUnknown);
    return Supported(declared == "triton" ? AnswerFormat::kTriton : AnswerFormat::kCuda,
                     std::string(declared));
  }
  if (!has_model_new) {
    if (Has(s, "launch(") && Has(s, "extern \"C\"")) return NotSupported(AnswerFormat::kCAbi);
    return NotSupported(AnswerFormat::kUnknown);
  }
  if (Has(s, "@T.prim_func") || Has(s, "import tilelang")) {
    return NotSupported(AnswerFormat::kTileLang);
  }
  if (Has(s, "import cutlass") || Has(s, "from cutlass") || Has(s, "@cute.")) {
    return NotSupported(AnswerFormat::kCute);
  }
  if (Has(s, "kittens::") || Has(s, "THUNDERKITTENS")) {
    return NotSupported(AnswerFormat::kThunderKittens);
  }
  if (Has(s, "hipcc") || Has(s, "hipLaunchKernelGGL") || Has(s, "<hip/")) {
    return NotSupported(AnswerFormat::kHip);
  }
  if (Has(s, "@triton.jit") || Has(s, "@triton.autotune")) {
    return Supported(AnswerFormat::kTriton, "triton");
  }
  if (Has(s, "load_inline") || Has(s, "cpp_extension")) {
    return Supported(AnswerFormat::kCuda, "cuda");
  }
  return Supported(AnswerFormat::kTorchOnly, "cuda");
}

std::vector<std::string> OwnKernelNames(std::string_view source) {
  static const std::regex kGlobal(
      R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?)"
      R"((?:static\s+|inline\s+|__forceinline__\s+)*void\s+)"
      R"((?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*))");
  static const std::regex kTriton(
      R"(@triton\.(?:jit|autotune|heuristics)[\s\S]*?\n\s*def\s+([A-Za-z_]\w*))");
  std::vector<std::string> out;
  const std::string s(source);
  for (const std::regex* re : {&kGlobal, &kTriton}) {
    for (auto it = std::sregex_iterator(s.begin(), s.end(), *re);
         it != std::sregex_iterator(); ++it) {
      out.push_back((*it)[1].str());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string_view ProtocolName(Protocol p) {
  return p == Protocol::kKernelBench ? "kernelbench" : "skilldb";
}

Result<Protocol> ParseProtocol(std::string_view name) {
  if (name == "skilldb") return Protocol::kSkilldb;
  if (name == "kernelbench") return Protocol::kKernelBench;
  return Status::InvalidArgument("unknown protocol '" + std::string(name) +
                                 "' (skilldb or kernelbench)");
}

}  // namespace skilldb::verify::kb
