// Defaults of this build, the factory, and small helpers for callers.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "file_util.h"
#include "skilldb/verify/verify.h"
#include "verifier_impl.h"

#ifndef SKILLDB_VERIFY_SOURCE_DIR
#error "SKILLDB_VERIFY_SOURCE_DIR must be defined by the build"
#endif
#ifndef SKILLDB_VERIFY_HOST_WORKER
#define SKILLDB_VERIFY_HOST_WORKER ""
#endif
#ifndef SKILLDB_VERIFY_CUDA_WORKER
#define SKILLDB_VERIFY_CUDA_WORKER ""
#endif
// Where `cmake --install` puts the workers and the tasks, relative to the
// installed library's directory (lib/) and to an installed executable's
// (bin/): the build passes its install layout's relative paths.
#ifndef SKILLDB_VERIFY_LIBEXEC_FROM_LIB
#define SKILLDB_VERIFY_LIBEXEC_FROM_LIB "../libexec/skilldb"
#define SKILLDB_VERIFY_LIBEXEC_FROM_BIN "../libexec/skilldb"
#define SKILLDB_VERIFY_DATA_FROM_LIB "../share/skilldb/verify"
#define SKILLDB_VERIFY_DATA_FROM_BIN "../share/skilldb/verify"
#endif

namespace skilldb::verify {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string DefaultCacheDir() {
  if (std::string v = Env("SKILLDB_VERIFY_CACHE"); !v.empty()) return v;
  if (std::string v = Env("XDG_CACHE_HOME"); !v.empty()) {
    return internal::JoinPath(v, "skilldb/verify");
  }
  if (std::string v = Env("HOME"); !v.empty()) {
    return internal::JoinPath(v, ".cache/skilldb/verify");
  }
  return "/tmp/skilldb-verify-cache";
}

// The directory of the binary this code was loaded from: the shared
// library itself, or the executable a static copy was linked into.
std::string LoadedFromDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadedFromDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The installed layout's `relative` path (then `leaf`) beside the loaded
// binary if it exists, else `built`, the build tree's path: an installed
// copy finds its own workers and tasks wherever the prefix was moved, and
// a build-tree binary (which has no such neighbours) uses the tree's. The
// loaded binary is the shared library (in lib/) or, for the static library,
// the executable it was linked into (often in bin/, a sibling of lib/).
std::string InstalledOrBuilt(const std::string& built, const char* from_lib,
                             const char* from_bin, const char* leaf) {
  const std::string dir = LoadedFromDir();
  if (!dir.empty()) {
    for (const char* relative : {from_lib, from_bin}) {
      std::string installed = internal::JoinPath(dir, relative);
      if (leaf[0] != '\0') installed = internal::JoinPath(installed, leaf);
      if (internal::FileExists(installed)) return installed;
    }
  }
  return built;
}

std::string Num(double v, const char* fmt = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

}  // namespace

VerifierOptions DefaultOptions(Backend backend) {
  VerifierOptions o;
  o.backend = backend;
  // A relocated build (binaries carried to another machine) points at the
  // tasks and protocol through SKILLDB_VERIFY_SOURCE_DIR.
  std::string src = Env("SKILLDB_VERIFY_SOURCE_DIR");
  if (src.empty()) {
    src = InstalledOrBuilt(SKILLDB_VERIFY_SOURCE_DIR,
                           SKILLDB_VERIFY_DATA_FROM_LIB,
                           SKILLDB_VERIFY_DATA_FROM_BIN, "");
  }
  o.task_dir = internal::JoinPath(src, "tasks");
  o.protocol_dir = internal::JoinPath(src, "protocol");
  o.worker_path =
      backend == Backend::kCuda
          ? InstalledOrBuilt(
                SKILLDB_VERIFY_CUDA_WORKER, SKILLDB_VERIFY_LIBEXEC_FROM_LIB,
                SKILLDB_VERIFY_LIBEXEC_FROM_BIN, "skilldb_verify_worker_cuda")
          : InstalledOrBuilt(
                SKILLDB_VERIFY_HOST_WORKER, SKILLDB_VERIFY_LIBEXEC_FROM_LIB,
                SKILLDB_VERIFY_LIBEXEC_FROM_BIN, "skilldb_verify_worker_host");
  // Relocated builds name their workers explicitly.
  if (std::string v =
          Env(backend == Backend::kCuda ? "SKILLDB_VERIFY_CUDA_WORKER"
                                        : "SKILLDB_VERIFY_HOST_WORKER");
      !v.empty()) {
    o.worker_path = v;
  }
  o.cache_dir = DefaultCacheDir();
  o.scratch_root = Env("TMPDIR").empty() ? "/tmp" : Env("TMPDIR");
  if (backend == Backend::kHost) {
    o.warmup_calls = 2;
    o.timing_shape_trials = 1;
  }
  return o;
}

Result<std::unique_ptr<TaskVerifier>> MakeVerifier(
    const VerifierOptions& options) {
  SKILLDB_ASSIGN_OR_RETURN(auto v, internal::TaskVerifierImpl::Make(options));
  return std::unique_ptr<TaskVerifier>(std::move(v));
}

Result<Artifact> ArtifactFromFile(const std::string& path) {
  Artifact a;
  a.name = path;
  if (path.ends_with(".cu") || path.ends_with(".cuh")) {
    a.language = "cuda";
  } else if (path.ends_with(".cc") || path.ends_with(".cpp") ||
             path.ends_with(".cxx")) {
    a.language = "cpp";
  } else {
    return Status::InvalidArgument("cannot tell the language of '" + path +
                                   "' (use .cu for CUDA, .cc for host C++)");
  }
  auto text = internal::ReadFile(path, 1 << 20);
  if (!text.ok()) return text.status();
  a.source = std::move(*text);
  return a;
}

std::string FormatReportText(const VerificationReport& r) {
  std::string out;
  out += std::string(r.passed ? "PASSED" : "REJECTED") + "  task " + r.task +
         " on " + r.device + " (" + r.verifier + ", " + r.verifier_version +
         ")\n";
  if (!r.compiled) {
    out += "compile failed:\n" + r.compile_log;
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  const CorrectnessResult& c = r.correctness;
  if (c.checked) {
    out += "correctness: " + std::string(c.passed ? "ok" : "FAILED") + " (" +
           std::to_string(c.trials) + " trials, max abs error " +
           Num(c.max_abs_error) + ", max rel error " + Num(c.max_rel_error) +
           ")\n";
    for (const std::string& e : c.errors) out += "  " + e + "\n";
  }
  if (!r.rounds.empty()) {
    out += "speedup " + Num(r.speedup.ratio, "%.3f") + "x, " +
           Num(r.speedup.confidence * 100, "%.0f") + "% CI [" +
           Num(r.speedup.ci_low, "%.3f") + ", " +
           Num(r.speedup.ci_high, "%.3f") + "]";
    if (r.max_plausible_speedup) {
      out += ", roofline bound " + Num(*r.max_plausible_speedup, "%.3g") + "x";
    }
    out += "\n";
    for (size_t i = 0; i < r.rounds.size(); ++i) {
      const RoundTiming& t = r.rounds[i];
      out += "  round " + std::to_string(i + 1) + ": baseline " +
             Num(t.baseline_median_ms, "%.4f") + " ms, candidate " +
             Num(t.candidate_median_ms, "%.4f") + " ms, ratio " +
             Num(t.speedup_ratio, "%.3f") + " (" +
             std::to_string(t.candidate_ms.size()) + " calls)\n";
    }
  }
  for (const std::string& reason : r.reasons) out += "reason: " + reason + "\n";
  const IsolationInfo& i = r.isolation;
  if (!i.applied) {
    out += "isolation: not applicable (the candidate never ran";
    out += r.compiled ? ")\n" : ": it did not compile)\n";
    if (!i.notes.empty()) out += "  " + i.notes + "\n";
    return out;
  }
  auto yes = [](bool b) { return b ? "yes" : "NO"; };
  out += std::string("isolation: namespaces ") + yes(i.namespaces) +
         ", seccomp " + yes(i.seccomp) + ", network " +
         (i.network ? "REACHABLE" : "none") + ", pid namespace " +
         yes(i.pid_namespace) + ", compiler confined " +
         yes(i.compiler_confined) + "\n";
  if (!i.notes.empty()) out += "  " + i.notes + "\n";
  return out;
}

}  // namespace skilldb::verify
