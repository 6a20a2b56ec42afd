#include "skilldb/verify/compiler.h"

#include <chrono>
#include <cstdio>

#include "file_util.h"
#include "sha256.h"
#include "subprocess.h"

namespace skilldb::verify {
namespace {

using internal::JoinPath;

constexpr char kHeaderName[] = "skilldb_candidate.h";

std::string Banner(const std::string& program) {
  internal::RunOptions o;
  o.argv = {program, "--version"};
  o.timeout_s = 30;
  auto r = internal::Run(o);
  if (!r.ok() || !r->ok()) return "";
  return r->output;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

// Cache layout: <cache>/<key[0:2]>/<key>.so for a success, <key>.fail
// (holding the log) for a compile error; <key>.log beside a success.
struct CachePaths {
  std::string so, log, fail;
};

CachePaths PathsFor(const std::string& cache_dir, const std::string& key) {
  const std::string dir = JoinPath(cache_dir, key.substr(0, 2));
  const std::string base = JoinPath(dir, key);
  return {base + ".so", base + ".log", base + ".fail"};
}

}  // namespace

Result<std::unique_ptr<Compiler>> Compiler::Make(
    const CompilerOptions& options) {
  if (options.cache_dir.empty()) {
    return Status::InvalidArgument("CompilerOptions.cache_dir is empty");
  }
  if (options.protocol_dir.empty()) {
    return Status::InvalidArgument("CompilerOptions.protocol_dir is empty");
  }
  SKILLDB_RETURN_IF_ERROR(internal::MakeDirs(options.cache_dir));
  std::unique_ptr<Compiler> c(new Compiler(options));
  auto header = internal::ReadFile(JoinPath(options.protocol_dir, kHeaderName));
  if (!header.ok()) {
    return header.status().WithContext("protocol header");
  }
  c->protocol_header_ = std::move(*header);
  c->nvcc_banner_ = Banner(options.nvcc_path);
  c->cxx_banner_ = Banner(options.cxx_path);
  return c;
}

std::vector<std::string> Compiler::Flags(SourceLanguage language) const {
  std::vector<std::string> f;
  if (language == SourceLanguage::kCuda) {
    f = {options_.nvcc_path, "-O3", options_.cuda_gencode, "-std=c++17",
         "-shared", "-Xcompiler=-fPIC,-fno-gnu-unique", "-cudart=shared",
         "-I" + options_.protocol_dir, "-include", kHeaderName};
    f.insert(f.end(), options_.extra_nvcc_flags.begin(),
             options_.extra_nvcc_flags.end());
  } else {
    f = {options_.cxx_path, "-O3", "-std=c++17", "-shared", "-fPIC",
         "-fno-gnu-unique", "-I" + options_.protocol_dir, "-include",
         kHeaderName};
    f.insert(f.end(), options_.extra_cxx_flags.begin(),
             options_.extra_cxx_flags.end());
  }
  return f;
}

std::string Compiler::CacheKey(std::string_view source,
                               SourceLanguage language) const {
  internal::Sha256 h;
  h.Update(SourceLanguageName(language));
  h.Update(std::string_view("\0", 1));
  h.Update(language == SourceLanguage::kCuda ? nvcc_banner_ : cxx_banner_);
  for (const std::string& flag : Flags(language)) {
    h.Update(std::string_view("\0", 1));
    h.Update(flag);
  }
  h.Update(std::string_view("\0", 1));
  h.Update(protocol_header_);
  h.Update(std::string_view("\0", 1));
  h.Update(source);
  std::string hex;
  static const char* kHex = "0123456789abcdef";
  for (uint8_t b : h.Finish()) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

Result<CompileOutput> Compiler::Compile(std::string_view source,
                                        SourceLanguage language) {
  const auto t0 = std::chrono::steady_clock::now();
  if (static_cast<int64_t>(source.size()) > options_.max_source_bytes) {
    return Status::InvalidArgument(
        "candidate source is " + std::to_string(source.size()) +
        " bytes, the limit is " + std::to_string(options_.max_source_bytes));
  }
  const std::string& banner =
      language == SourceLanguage::kCuda ? nvcc_banner_ : cxx_banner_;
  if (banner.empty()) {
    return Status::Unavailable(
        std::string(language == SourceLanguage::kCuda ? "nvcc ('"
                                                      : "C++ compiler ('") +
        (language == SourceLanguage::kCuda ? options_.nvcc_path
                                           : options_.cxx_path) +
        "') cannot be run");
  }
  CompileOutput out;
  out.key = CacheKey(source, language);
  const CachePaths paths = PathsFor(options_.cache_dir, out.key);
  if (internal::FileExists(paths.so)) {
    out.ok = true;
    out.cache_hit = true;
    out.library_path = paths.so;
    auto log = internal::ReadFile(paths.log, options_.max_log_bytes + 1024);
    if (log.ok()) out.log = std::move(*log);
    out.wall_ms = MsSince(t0);
    return out;
  }
  if (auto fail = internal::ReadFile(paths.fail, options_.max_log_bytes + 1024);
      fail.ok()) {
    out.cache_hit = true;
    out.log = std::move(*fail);
    out.wall_ms = MsSince(t0);
    return out;
  }
  SKILLDB_ASSIGN_OR_RETURN(
      std::string work,
      internal::MakeTempDir(JoinPath(options_.cache_dir, "tmp"), "build-"));
  const std::string src_name =
      language == SourceLanguage::kCuda ? "candidate.cu" : "candidate.cc";
  Status st = internal::WriteFileAtomic(JoinPath(work, src_name), source);
  if (!st.ok()) {
    internal::RemoveTree(work);
    return st;
  }
  internal::RunOptions run;
  run.argv = Flags(language);
  run.argv.insert(run.argv.end(), {"-o", "candidate.so", src_name});
  run.cwd = work;
  run.timeout_s = options_.timeout_s;
  run.max_output_bytes = options_.max_log_bytes;
  run.file_size_limit_bytes = int64_t{1} << 30;
  auto result = internal::Run(run);
  if (!result.ok()) {
    internal::RemoveTree(work);
    return result.status();
  }
  out.log = result->output;
  if (result->output_truncated) out.log += "\n[compiler output truncated]\n";
  if (result->timed_out) {
    out.log += "\n[compilation timed out after " +
               std::to_string(static_cast<int>(options_.timeout_s)) + " s]\n";
  } else if (result->exit_code == 127 && !result->ok()) {
    internal::RemoveTree(work);
    return Status::Unavailable("the compiler could not be executed: " +
                               result->output);
  }
  const std::string built = JoinPath(work, "candidate.so");
  SKILLDB_RETURN_IF_ERROR(
      internal::MakeDirs(JoinPath(options_.cache_dir, out.key.substr(0, 2))));
  if (result->ok() && internal::FileExists(built)) {
    st = internal::WriteFileAtomic(paths.log, out.log);
    if (st.ok() && ::rename(built.c_str(), paths.so.c_str()) != 0) {
      st = Status::IOError("cannot move the compiled object into the cache");
    }
    internal::RemoveTree(work);
    SKILLDB_RETURN_IF_ERROR(st);
    out.ok = true;
    out.library_path = paths.so;
  } else {
    internal::RemoveTree(work);
    // Timeouts are not cached: they may come from a loaded machine.
    if (!result->timed_out) {
      SKILLDB_RETURN_IF_ERROR(internal::WriteFileAtomic(paths.fail, out.log));
    }
  }
  out.wall_ms = MsSince(t0);
  return out;
}

}  // namespace skilldb::verify
