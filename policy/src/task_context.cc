#include "skilldb/policy/task_context.h"

#include <cctype>
#include <set>

#include "skilldb/util/file.h"

namespace skilldb::policy {
namespace {

// Words that say nothing about a technique: C++ keywords and common types,
// the protocol's own names, and loop-variable noise.
const std::set<std::string, std::less<>>& StopIdentifiers() {
  static const std::set<std::string, std::less<>> words = {
      "auto",
      "bool",
      "break",
      "case",
      "char",
      "const",
      "constexpr",
      "continue",
      "default",
      "define",
      "double",
      "else",
      "endif",
      "enum",
      "extern",
      "false",
      "float",
      "for",
      "if",
      "ifdef",
      "ifndef",
      "include",
      "inline",
      "int",
      "int32_t",
      "int64_t",
      "long",
      "namespace",
      "nullptr",
      "return",
      "short",
      "signed",
      "size_t",
      "sizeof",
      "static",
      "static_cast",
      "reinterpret_cast",
      "const_cast",
      "struct",
      "switch",
      "template",
      "true",
      "typedef",
      "typename",
      "uint16_t",
      "uint32_t",
      "uint64_t",
      "uint8_t",
      "unsigned",
      "using",
      "void",
      "volatile",
      "while",
      "std",
      "Tensor",
      "launch",
      "n_in",
      "n_out",
      "numel",
      "ndim",
      "shape",
      "stride",
      "data",
      "dtype",
      "stream",
      "cudaStream_t",
      "cudaSuccess",
      "cudaGetLastError",
      "out",
      "rows",
      "cols",
      "restrict",
      "__restrict__",
      "cmath",
      "cstdint",
      "cstring",
      "cuda_runtime",
      "cuda_bf16",
      "skdb",
  };
  return words;
}

bool IdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Skips a // or /* */ comment starting at `i`; returns the index after it
// (or `i` when there is none).
size_t SkipComment(std::string_view s, size_t i) {
  if (i + 1 >= s.size() || s[i] != '/') return i;
  if (s[i + 1] == '/') {
    const size_t end = s.find('\n', i);
    return end == std::string_view::npos ? s.size() : end;
  }
  if (s[i + 1] == '*') {
    const size_t end = s.find("*/", i + 2);
    return end == std::string_view::npos ? s.size() : end + 2;
  }
  return i;
}

}  // namespace

const std::string& ReferenceSource(const PolicyTask& task) {
  return task.backend == verify::Backend::kCuda ? task.task.reference_cuda
                                                : task.task.reference_cpp;
}

std::string CandidateLanguage(const PolicyTask& task) {
  return std::string(
      verify::SourceLanguageName(verify::LanguageFor(task.backend)));
}

Result<PolicyTask> LoadPolicyTask(const verify::VerifierOptions& options,
                                  std::string_view name,
                                  std::string_view protocol_path) {
  PolicyTask out;
  out.backend = options.backend;
  SKILLDB_ASSIGN_OR_RETURN(out.task, verify::LoadTask(options.task_dir, name));
  std::string path(protocol_path);
  if (path.empty()) path = options.task_dir + "/../PROTOCOL.md";
  auto protocol = util::ReadFile(path);
  if (!protocol.ok()) {
    return protocol.status().WithContext("the candidate protocol");
  }
  out.protocol = std::move(*protocol);
  return out;
}

std::vector<std::string> ReferenceIdentifiers(std::string_view source,
                                              size_t limit) {
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  size_t i = 0;
  while (i < source.size() && out.size() < limit) {
    const size_t after_comment = SkipComment(source, i);
    if (after_comment != i) {
      i = after_comment;
      continue;
    }
    if (!IdentStart(source[i]) || (i > 0 && IdentChar(source[i - 1]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < source.size() && IdentChar(source[end])) ++end;
    std::string_view word = source.substr(i, end - i);
    i = end;
    if (word.size() < 3 || StopIdentifiers().count(word) || seen.count(word)) {
      continue;
    }
    seen.emplace(word);
    out.emplace_back(word);
  }
  return out;
}

std::string RetrievalQuery(const PolicyTask& task) {
  std::string q = task.task.description;
  if (!task.task.family.empty()) q += " " + task.task.family;
  for (const std::string& id : ReferenceIdentifiers(ReferenceSource(task))) {
    q += " " + id;
  }
  return q;
}

}  // namespace skilldb::policy
