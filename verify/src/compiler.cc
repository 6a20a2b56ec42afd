#include "skilldb/verify/compiler.h"
#include "skilldb/util/clock.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "file_util.h"
#include "skilldb/util/sha256.h"
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

// Cache layout: <cache>/<key[0:2]>/<key>.so for a success, <key>.diag
// (holding the log) for a compiler diagnosis; <key>.log beside a success.
// (Failures were kept as <key>.fail before only diagnoses were cached: such
// entries may hold a killed compile's verdict, and are never read.)
struct CachePaths {
  std::string so, log, fail;
};

CachePaths PathsFor(const std::string& cache_dir, const std::string& key) {
  const std::string dir = JoinPath(cache_dir, key.substr(0, 2));
  const std::string base = JoinPath(dir, key);
  return {base + ".so", base + ".log", base + ".diag"};
}

// The lines a compiler tool wrote about itself: a diagnosis quotes source
// lines ("  12 | code") and names the file ("candidate.cc:3:1: error:
// 'out_of_memory' ..."), so lines a candidate can fill with text of its
// choosing are skipped when looking for the tools' own limit messages.
std::string ToolLines(const std::string& output) {
  std::string kept;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string_view line(output.data() + start, end - start);
    size_t i = 0;
    while (i < line.size() &&
           (line[i] == ' ' || (line[i] >= '0' && line[i] <= '9')))
      ++i;
    const bool quote = i < line.size() && line[i] == '|';
    const bool located =
        line.rfind("candidate.", 0) == 0 ||
        line.rfind("skilldb_candidate", 0) == 0 ||
        (!line.empty() && (line[0] == '/' || line[0] == ' ' ||
                           line[0] == '\t' || line[0] == '.')) ||
        line.rfind("In file included", 0) == 0;
    if (!quote && !located) {
      kept.append(line);
      kept += '\n';
    }
    start = end + 1;
  }
  return kept;
}

bool Contains(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

// Which limit stopped a failed compile, or "" when the compiler itself
// diagnosed the source. A compiler driver (g++, nvcc) reports a killed
// subprocess (cc1plus, cicc, ptxas) with an exit status of its own, so its
// messages for that are recognised too. Anything unrecognised that still
// looks like the machine (a signal, lost output) counts as a limit: not
// caching costs one more compile, caching a wrong verdict poisons every
// later one.
std::string LimitHit(const internal::RunResult& r) {
  if (r.timed_out) return "time";
  if (r.term_signal == SIGXCPU) return "cpu";
  if (r.term_signal == SIGXFSZ) return "file size";
  if (r.term_signal != 0) return "signal";
  const std::string o = ToolLines(r.output);
  if (Contains(o, "out of memory") || Contains(o, "memory exhausted") ||
      Contains(o, "Cannot allocate memory") || Contains(o, "bad_alloc") ||
      Contains(o, "std::length_error") || Contains(o, "Out of memory")) {
    return "memory";
  }
  if (Contains(o, "CPU time limit") || Contains(o, "signal 24") ||
      Contains(o, "SIGXCPU")) {
    return "cpu";
  }
  if (Contains(o, "File size limit") || Contains(o, "signal 25") ||
      Contains(o, "SIGXFSZ")) {
    return "file size";
  }
  if (Contains(o, "terminated program") || Contains(o, "died due to signal") ||
      Contains(o, "Killed signal") || Contains(o, "internal compiler error") ||
      Contains(o, "Segmentation fault") || Contains(o, "core dumped")) {
    return "signal";
  }
  if (r.output_truncated) return "output";
  return "";
}

// The program `name` resolves to (PATH searched), "" if none.
std::string Resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// The installation a compiler belongs to: for .../bin/prog, the directory
// above bin (the CUDA toolkit root for nvcc), resolved.
std::string InstallRoot(const std::string& program) {
  const std::string resolved = Resolve(program);
  if (resolved.empty()) return "";
  char buf[PATH_MAX];
  if (::realpath(resolved.c_str(), buf) == nullptr) return "";
  std::string p = buf;
  for (int i = 0; i < 2; ++i) {
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos || slash == 0) return "";
    p.resize(slash);
  }
  return p;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) == nullptr ? path : std::string(buf);
}

// What a confined compiler sees (read-only): the system toolchain, the
// compilers' installations, the protocol header. No /etc beyond the
// loader's cache and the alternatives links, no /home, no /root, no /tmp.
std::vector<std::string> VisiblePaths(const CompilerOptions& o) {
  std::vector<std::string> v = {"/usr",
                                "/lib",
                                "/lib64",
                                "/lib32",
                                "/libx32",
                                "/bin",
                                "/sbin",
                                "/etc/alternatives",
                                "/etc/ld.so.cache",
                                "/etc/ld.so.conf",
                                "/etc/ld.so.conf.d"};
  for (const std::string* program : {&o.nvcc_path, &o.cxx_path}) {
    const std::string root = InstallRoot(*program);
    if (!root.empty() && root != "/usr" && root != "/") v.push_back(root);
  }
  v.push_back(RealPath(o.protocol_dir));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
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
  // The confined compiler sees the protocol directory at its real path
  // alone: a path through other directories ("prefix/lib/../share/...",
  // as an installed verifier finds it) would not resolve there.
  c->options_.protocol_dir = RealPath(options.protocol_dir);
  auto header = internal::ReadFile(JoinPath(options.protocol_dir, kHeaderName));
  if (!header.ok()) {
    return header.status().WithContext("protocol header");
  }
  c->protocol_header_ = std::move(*header);
  c->nvcc_banner_ = Banner(options.nvcc_path);
  c->cxx_banner_ = Banner(options.cxx_path);
  c->visible_ = VisiblePaths(c->options_);
  std::string limits = " rlimits(";
  limits += options.memory_bytes > 0 ? "as," : "";
  limits += "cpu,fsize) output<=" + std::to_string(options.max_log_bytes);
  if (!options.confine) {
    c->confinement_ = "compiler: unconfined (off)" + limits;
    return c;
  }
  // Probe: the compilers that exist must start confined.
  SKILLDB_ASSIGN_OR_RETURN(
      std::string probe_dir,
      internal::MakeTempDir(JoinPath(options.cache_dir, "tmp"), "probe-"));
  std::string why;
  bool any = false;
  for (const auto& [banner, path] :
       {std::pair{&c->cxx_banner_, &options.cxx_path},
        std::pair{&c->nvcc_banner_, &options.nvcc_path}}) {
    if (banner->empty() || !why.empty()) continue;
    internal::RunOptions o;
    o.argv = {*path, "--version"};
    o.cwd = probe_dir;
    o.timeout_s = 30;
    o.confine = {true, c->visible_, probe_dir};
    auto r = internal::Run(o);
    if (!r.ok()) {
      why = r.status().message();
    } else if (!r->confine_error.empty()) {
      why = r->confine_error;
    } else if (!r->ok()) {
      why = *path + " --version fails confined (exit " +
            std::to_string(r->exit_code) + ", signal " +
            std::to_string(r->term_signal) + ")";
    } else {
      any = true;
    }
  }
  internal::RemoveTree(probe_dir);
  c->confined_ = any && why.empty();
  c->confinement_ =
      c->confined_
          ? std::string("compiler: ") + (::geteuid() != 0 ? "userns " : "") +
                "mntns netns pidns no-caps" + limits
          : "compiler: unconfined (" +
                (why.empty() ? std::string("no compiler") : why) + ")" + limits;
  return c;
}

std::vector<std::string> Compiler::Flags(SourceLanguage language) const {
  std::vector<std::string> f;
  if (language == SourceLanguage::kCuda) {
    f = {options_.nvcc_path,
         "-O3",
         options_.cuda_gencode,
         "-std=c++17",
         "-shared",
         "-Xcompiler=-fPIC,-fno-gnu-unique",
         "-cudart=shared",
         "-I" + options_.protocol_dir,
         "-include",
         kHeaderName};
    f.insert(f.end(), options_.extra_nvcc_flags.begin(),
             options_.extra_nvcc_flags.end());
  } else {
    f = {options_.cxx_path,
         "-O3",
         "-std=c++17",
         "-shared",
         "-fPIC",
         "-fno-gnu-unique",
         "-I" + options_.protocol_dir,
         "-include",
         kHeaderName};
    f.insert(f.end(), options_.extra_cxx_flags.begin(),
             options_.extra_cxx_flags.end());
  }
  return f;
}

std::string Compiler::CacheKey(std::string_view source,
                               SourceLanguage language) const {
  util::Sha256 h;
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
  std::string hex = h.HexDigest();
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
    out.wall_ms = util::MsSince(t0);
    return out;
  }
  if (auto fail = internal::ReadFile(paths.fail, options_.max_log_bytes + 1024);
      fail.ok()) {
    out.cache_hit = true;
    out.log = std::move(*fail);
    out.failure = CompileFailure::kDiagnosis;
    out.wall_ms = util::MsSince(t0);
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
  run.file_size_limit_bytes = options_.file_size_bytes;
  run.address_space_bytes = options_.memory_bytes;
  run.cpu_limit_s = options_.cpu_seconds > 0
                        ? options_.cpu_seconds
                        : static_cast<int64_t>(options_.timeout_s) + 1;
  run.extra_env = {"TMPDIR=" + work, "HOME=" + work, "LC_ALL=C"};
  run.clean_env = true;
  if (confined_) run.confine = {true, visible_, work};
  auto result = internal::Run(run);
  if (!result.ok()) {
    internal::RemoveTree(work);
    return result.status();
  }
  if (!result->confine_error.empty()) {
    internal::RemoveTree(work);
    return Status::Unavailable("the compiler's confinement failed: " +
                               result->confine_error);
  }
  out.log = result->output;
  if (result->output_truncated) out.log += "\n[compiler output truncated]\n";
  if (result->timed_out) {
    out.log += "\n[compilation timed out after " +
               std::to_string(static_cast<int>(options_.timeout_s)) + " s]\n";
  } else if (result->exec_errno != 0) {
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
    out.limit = result->ok() ? "" : LimitHit(*result);
    if (result->ok()) {
      // Exit status 0 but no object: not something the source determines.
      out.limit = "signal";
      out.log += "\n[the compiler exited 0 without writing the object]\n";
    }
    if (out.limit.empty()) {
      out.failure = CompileFailure::kDiagnosis;
      SKILLDB_RETURN_IF_ERROR(internal::WriteFileAtomic(paths.fail, out.log));
    } else {
      out.failure = CompileFailure::kLimit;
      if (!result->timed_out) {
        out.log += "\n[compilation stopped by its " + out.limit +
                   " limit; not cached]\n";
      }
    }
  }
  out.wall_ms = util::MsSince(t0);
  return out;
}

}  // namespace skilldb::verify
