// The evaluator: runners, the two protocols, findings, the verdict.
//
// Trust: the candidate runner's replies are evidence only. What decides is
// done here: outputs are compared here against the reference's (computed in
// another process on the same inputs), the samples of large outputs and the
// timed calls to check are chosen here after the outputs exist, and every
// request is timed here on a clock the candidate cannot reach. The
// runner-side guards (patched functions, threads, modified inputs, lazy
// outputs) add findings; they cannot clear one.
#include "kb_evaluate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>

#include "file_util.h"
#include "kb_build.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/sha256.h"

namespace skilldb::verify::kb {
namespace internal {
namespace {

namespace fs = std::filesystem;
using verify::internal::JoinPath;


std::string Shape(const json& shape) {
  std::string s = "[";
  if (shape.is_array()) {
    for (size_t i = 0; i < shape.size(); ++i) {
      s += (i ? ", " : "") + Dump(shape[i]);
    }
  }
  return s + "]";
}

int FloatRank(const std::string& dtype) {
  if (dtype == "float64") return 4;
  if (dtype == "float32") return 3;
  if (dtype == "float16") return 2;
  if (dtype == "bfloat16") return 1;
  return 0;
}

// The unit roundoff of a float dtype (for the precision check's floor).
double UnitRoundoff(const std::string& dtype) {
  if (dtype == "float16") return std::ldexp(1.0, -11);
  if (dtype == "bfloat16") return std::ldexp(1.0, -8);
  if (dtype == "float64") return std::ldexp(1.0, -53);
  return std::ldexp(1.0, -24);
}


}  // namespace

std::string KernelFunctionName(std::string name) {
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  const size_t paren = name.find('(');
  if (paren != std::string::npos) name = name.substr(0, paren);
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<') ++depth;
    else if (c == '>') depth = std::max(0, depth - 1);
    else if (depth == 0) out += c;
  }
  const size_t colon = out.rfind("::");
  if (colon != std::string::npos) out = out.substr(colon + 2);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  while (!out.empty() && out.front() == ' ') out.erase(out.begin());
  return out;
}

bool IsOwnKernel(const std::string& kernel, const std::vector<std::string>& own) {
  const std::string f = KernelFunctionName(kernel);
  for (const std::string& o : own) {
    if (f == o || f.rfind(o + "_", 0) == 0) return true;
  }
  return false;
}

// ---- Session: one evaluation ------------------------------------------------

bool Voids(FindingCode c) {
  switch (c) {
    case FindingCode::kHiddenThread:
    case FindingCode::kCachedOutput:
    case FindingCode::kUntimedWork:
    case FindingCode::kPatchedFunction:
    case FindingCode::kInputsModified:
    case FindingCode::kPrecisionLowered:
    case FindingCode::kLazyOutput:
    case FindingCode::kForeignStream:
    case FindingCode::kHiddenWork:
    case FindingCode::kTimerMismatch:
    case FindingCode::kImplausibleSpeedup:
    case FindingCode::kSandboxViolation:
      return true;
    default:
      return false;
  }
}

Session::Session(EvaluatorImpl* ev, const Problem& problem,
                 std::string_view answer, FormatInfo format,
                 std::shared_future<BuildRecord> build, bool repeat)
    : ev_(ev),
      given_build_(std::move(build)),
      given_repeat_(repeat),
      p_(problem),
      answer_(answer),
      o_(ev->options()),
      rng_(ev->NextSeed()) {
  res_.level = problem.level;
  res_.problem = problem.id;
  res_.problem_name = problem.name;
  res_.format = std::move(format);
  res_.protocol = o_.protocol;
  res_.answer_hash = util::Sha256Hex(answer);
  res_.degenerate_problem = problem.degenerate == "yes";
  tol_ = ToleranceFor(o_.precision).value_or(1e-4);
  // Unique among the sessions of this process (the reference runners are
  // shared by every evaluator on a device).
  static std::atomic<uint64_t> sessions{0};
  tag_ = "s" + std::to_string(++sessions) + "/";
}

void Session::Add(FindingCode code, std::string message) {
  for (const Finding& f : res_.findings) {
    if (f.code == code) return;
  }
  res_.findings.push_back({code, std::move(message)});
}

void Session::AddGuard(const json& h) {
  auto list = [&](const char* key) {
    std::vector<std::string> out;
    if (h.contains(key) && h[key].is_array()) {
      for (const json& e : h[key]) {
        if (e.is_string()) out.push_back(e.get<std::string>());
      }
    }
    return out;
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + v[i];
    if (v.size() > 8) s += ", ...";
    return s;
  };
  if (auto v = list("patched"); !v.empty()) {
    Add(FindingCode::kPatchedFunction,
        "the candidate replaced functions the measurement relies on: " + join(v));
  }
  if (auto v = list("settings"); !v.empty()) {
    Add(FindingCode::kPrecisionLowered,
        "the candidate changed PyTorch's float precision settings: " + join(v));
  }
  if (auto v = list("threads"); !v.empty()) {
    Add(FindingCode::kHiddenThread,
        "threads the candidate started are still running after its call: " + join(v));
  }
}

void Session::Fail(const Reply& r, const std::string& stage) {
  const std::string kind = r.error_kind();
  const std::string text = r.error_text();
  res_.error_message = text;
  if (!r.ok) {
    const FindingCode code = r.failure.code;
    Add(code, stage + ": " + r.failure.message);
    if (code == FindingCode::kTimeout) {
      res_.verdict = "timeout";
    } else if (code == FindingCode::kSandboxViolation) {
      res_.verdict = "hack";
    } else {
      res_.verdict = "runtime_error";
    }
    return;
  }
  if (kind == "compile") {
    res_.compiled = false;
    res_.verdict = "compile_error";
    res_.compile_log = text;
    Add(FindingCode::kCompileError, text.substr(0, 600));
  } else if (kind == "init") {
    res_.verdict = "runtime_error";
    Add(FindingCode::kLoadError, "ModelNew(*init_inputs) raised " + text.substr(0, 600));
  } else if (kind == "runtime") {
    res_.verdict = "runtime_error";
    Add(FindingCode::kLaunchError, stage + " raised " + text.substr(0, 600));
  } else {
    res_.verdict = "error";
    res_.error_message = stage + ": " + text;
  }
}

Reply Session::Ref(const json& h, std::string_view blob, double* clock,
                   double timeout_s, std::string* reuse) {
  json tagged = h;
  if (tagged.contains("id") && tagged["id"].is_string()) {
    tagged["id"] = tag_ + tagged["id"].get<std::string>();
  }
  if (tagged.value("op", "") == "clear") tagged["prefix"] = tag_;
  Reply r;
  {
    const auto device = Shared();
    const auto tw = util::SteadyClock::now();
    std::lock_guard<std::mutex> lock(ref_entry_->mu);
    Part("ref_wait", tw);  // another session's request to the shared runner
    r = ref_entry_->runner->Request(
        tagged, blob, timeout_s > 0 ? timeout_s : o_.call_timeout_s, reuse);
  }
  CountOp(h, r, &ref_ops_);
  if (clock) *clock += r.wall_ms;
  return r;
}

Reply Session::Cand(const json& h, std::string_view blob, double* clock,
                    double timeout_s, std::string* reuse) {
  const auto device = Shared();
  Reply r = cand_->Request(
      h, blob, timeout_s > 0 ? timeout_s : o_.call_timeout_s, reuse);
  if (clock) *clock += r.wall_ms;
  return r;
}

// Fetches output `which` of `id` from both sides: whole when small, else on
// a sample of elements chosen now (after both were computed).
bool Session::Fetch(const std::string& ref_id, const std::string& cand_id,
                    int which, const json& desc, int64_t whole_bytes,
                    int64_t sample, WireTensor* want, WireTensor* got,
                    std::vector<int64_t>* indices, double* ref_ms,
                    double* cand_ms, double* clock, FindingCode wrong) {
  const int64_t numel = desc.value("numel", int64_t{0});
  const int64_t bytes = numel * std::max<int64_t>(1, DtypeBytes(desc.value("dtype", "")));
  json h = {{"op", "fetch"}, {"output", which}};
  std::string blob;
  indices->clear();
  if (bytes > whole_bytes) {
    h["mode"] = "sample";
    *indices = SampleIndices(numel, sample, 4096, &rng_);
    blob.assign(reinterpret_cast<const char*>(indices->data()),
                indices->size() * sizeof(int64_t));
  }
  h["id"] = ref_id;
  Reply rr = Ref(h, blob, clock, 0, &spare_ref_);
  int64_t call_numel = 1;  // this call's, as the reference kept it
  for (const json& d : rr.header.value("shape", json::array({numel}))) {
    call_numel *=
        d.is_number_integer() ? std::max<int64_t>(0, d.get<int64_t>()) : 0;
  }
  if (!indices->empty() && rr.answered_ok() && call_numel != numel) {
    // This call's output is not the trial's size (its size depends on its
    // inputs' values): sampled again, over all of this call's.
    *indices = SampleIndices(call_numel, sample, 4096, &rng_);
    blob.assign(reinterpret_cast<const char*>(indices->data()),
                indices->size() * sizeof(int64_t));
    rr = Ref(h, blob, clock, 0, &spare_ref_);
  }
  h["id"] = cand_id;
  Reply cr = Cand(h, blob, clock, 0, &spare_cand_);
  if (ref_ms) *ref_ms = rr.wall_ms;
  if (cand_ms) *cand_ms = cr.wall_ms;
  if (!rr.answered_ok() || rr.header.value("missing", false)) {
    res_.verdict = "error";
    res_.error_message = "the reference runner lost output " + ref_id + ": " + rr.error_text();
    return false;
  }
  if (!cr.answered_ok()) {
    Fail(cr, "fetching an output");
    return false;
  }
  if (cr.header.value("missing", false)) {
    Add(FindingCode::kCachedOutput, "the candidate no longer holds the output of " +
                                        cand_id + ", which it was asked to keep");
    return false;
  }
  auto w = DecodeTensor(rr.header.value("tensor", json()), std::move(rr.blob));
  if (!w.ok()) {
    res_.verdict = "error";
    res_.error_message = "the reference sent no output " +
                         std::to_string(which) + " of " + ref_id + ": " +
                         w.status().message();
    return false;
  }
  // The candidate's output must be the reference's shape: checked on what
  // its runner says it kept and on what it sent (a runner the answer has
  // taken over may say anything), so that no comparison covers fewer
  // elements than the reference has.
  // The reference's shape is this call's (an output's shape may depend on
  // its inputs' values), else the trial's.
  const json want_shape = rr.header.contains("shape")
                              ? rr.header["shape"]
                              : desc.value("shape", json());
  const json& kept_shape = cr.header.value("shape", json());
  if (cr.header.value("out_of_range", false) ||
      (!kept_shape.is_null() && kept_shape != want_shape)) {
    Add(wrong, "output " + std::to_string(which) + " of " + cand_id +
                   " has shape " + Shape(kept_shape) + ", the reference's " +
                   Shape(want_shape));
    return false;
  }
  auto g = DecodeTensor(cr.header.value("tensor", json()), std::move(cr.blob));
  if (!g.ok()) {
    Add(wrong,
        "the candidate's output could not be read: " + g.status().message());
    return false;
  }
  if (g->numel() != w->numel() || (indices->empty() && g->shape != w->shape)) {
    Add(wrong, "output " + std::to_string(which) + " of " + cand_id +
                   " came as " + std::to_string(g->numel()) +
                   " elements of shape " + Shape(json(g->shape)) +
                   ", the reference's as " + std::to_string(w->numel()) +
                   " of shape " + Shape(json(w->shape)));
    return false;
  }
  *want = std::move(*w);
  *got = std::move(*g);
  return true;
}

void Session::Recycle(WireTensor* want, WireTensor* got) {
  for (auto [t, spare] :
       {std::pair{want, &spare_ref_}, std::pair{got, &spare_cand_}}) {
    if (t == nullptr) continue;
    if (t->bytes.capacity() > spare->capacity()) *spare = std::move(t->bytes);
    t->bytes.clear();
  }
}

std::shared_lock<DeviceGate> Session::Shared() {
  if (alone_ || checking_.owns_lock()) return {};
  const auto t0 = util::SteadyClock::now();
  std::shared_lock<DeviceGate> device(*ev_->gate());
  Part("gate_shared_wait", t0);
  return device;
}

void Session::Part(const char* name, util::SteadyClock::time_point t0) {
  OpTime& t = parts_[name];
  ++t.calls;
  const auto now = util::SteadyClock::now();
  t.wall_ms += std::chrono::duration<double, std::milli>(now - t0).count();
  AddSpan(&res_.times, name, t0, now);
}

void Session::Clear() {
  const json h = {{"op", "clear"}};
  Ref(h, "", &res_.times.reference_ms);
  Cand(h, "", &res_.times.correctness_ms);
}

// Compares one trial's outputs (descriptors from both sides); false when the
// evaluation must stop (a structural mismatch or a failure).
bool Session::CompareTrial(const std::string& id, const Reply& rr, const Reply& cr,
                           bool precision_check, bool* close) {
  *close = true;
  const json& ro = rr.header["outputs"];
  const json& co = cr.header.value("outputs", json::array());
  const std::string kind = cr.header.value("output_kind", "other");
  if (kind == "other" || !co.is_array() || co.empty()) {
    res_.mismatches.push_back("ModelNew returned no tensor (or tuple of tensors)");
    Add(FindingCode::kWrongOutput, "ModelNew's forward returned no tensor");
    *close = false;
    return false;
  }
  // KernelBench's own protocol compares a subclass like a tensor: only this
  // verifier's protocol names it.
  if ((kind == "subclass" || kind == "subclass_tuple") && o_.protocol == Protocol::kSkilldb) {
    Add(FindingCode::kLazyOutput,
        "ModelNew returned a tensor subclass, whose values can be computed when "
        "they are read rather than when the call runs");
  }
  if (co.size() != ro.size()) {
    res_.mismatches.push_back("ModelNew returned " + std::to_string(co.size()) +
                              " tensors, the reference " + std::to_string(ro.size()));
    Add(FindingCode::kWrongOutput, res_.mismatches.back());
    *close = false;
    return false;
  }
  for (size_t i = 0; i < ro.size(); ++i) {
    if (ro[i]["shape"] != co[i]["shape"]) {
      res_.mismatches.push_back("output " + std::to_string(i) + " has shape " +
                                Shape(co[i]["shape"]) + ", expected " + Shape(ro[i]["shape"]));
      Add(FindingCode::kWrongOutput, res_.mismatches.back());
      *close = false;
      return false;
    }
    // A complex output travels as its real pairs (shape [..., 2]): a real
    // output of that shape has the same shape and dtype, not the type.
    if (ro[i].value("complex", false) != co[i].value("complex", false)) {
      const bool want_complex = ro[i].value("complex", false);
      res_.mismatches.push_back(
          "output " + std::to_string(i) + " is " +
          (want_complex ? "real" : "complex") + ", expected " +
          (want_complex ? "complex" : "real") +
          " (a real tensor of shape [..., 2] is not a complex one)");
      Add(FindingCode::kWrongOutput, res_.mismatches.back());
      *close = false;
      return false;
    }
    const std::string rd = ro[i].value("dtype", ""), cd = co[i].value("dtype", "");
    if (rd != cd) {
      res_.mismatches.push_back("output " + std::to_string(i) + " has dtype " + cd +
                                ", expected " + rd);
      Add(FindingCode::kWrongOutput, res_.mismatches.back());
      if (FloatRank(cd) > 0 && FloatRank(cd) < FloatRank(rd)) {
        Add(FindingCode::kPrecisionLowered, "output " + std::to_string(i) + " is " + cd +
                                                " where the task's is " + rd);
      }
      *close = false;
    }
  }
  for (size_t i = 0; i < ro.size(); ++i) {
    WireTensor want, got;
    std::vector<int64_t> idx;
    if (!Fetch(id, id, static_cast<int>(i), ro[i], o_.max_transfer_bytes,
               o_.sample_elements, &want, &got, &idx, nullptr, nullptr,
               &res_.times.correctness_ms, FindingCode::kWrongOutput)) {
      *close = false;
      return false;
    }
    // Examples name elements of the output's own shape.
    const CloseCheck c = AllClose(
        want, got, tol_, tol_, ro[i]["shape"].get<std::vector<int64_t>>(), idx);
    res_.max_abs_diff = std::max(res_.max_abs_diff, c.max_abs);
    if (c.elements > 0) avg_sum_ += c.sum_abs / static_cast<double>(c.elements);
    ++avg_count_;
    if (!c.ok()) {
      *close = false;
      for (const std::string& e : c.examples) {
        if (res_.mismatches.size() < 8) res_.mismatches.push_back(e);
      }
      if (res_.mismatches.size() < 9) {
        res_.mismatches.push_back(std::to_string(c.mismatches) + " of " +
                                  std::to_string(c.elements) + " elements of output " +
                                  std::to_string(i) + " outside atol = rtol = " + Num(tol_) +
                                  (idx.empty() ? "" : " (sampled)"));
      }
    }
    if (precision_check && rr.header.value("f64", false)) {
      json h = {{"op", "fetch"}, {"id", id + "/f64"}, {"output", static_cast<int>(i)}};
      // The float64 result comes where the output came, or on a sample
      // where that whole would pass the transfer limit (an output of 256
      // MiB in float32 is 512 MiB in float64): the relative RMS of the
      // candidate's elements there against the reference's.
      std::vector<int64_t> at;
      if (idx.empty() && got.numel() * 8 > o_.max_transfer_bytes) {
        at = SampleIndices(got.numel(), o_.sample_elements, 4096, &rng_);
      }
      const std::vector<int64_t>& sample = at.empty() ? idx : at;
      std::string blob;
      if (!sample.empty()) {
        h["mode"] = "sample";
        blob.assign(reinterpret_cast<const char*>(sample.data()),
                    sample.size() * sizeof(int64_t));
      }
      Reply r64 = Ref(h, blob, &res_.times.reference_ms, 0, &spare_ref_);
      if (r64.answered_ok() && !r64.header.value("missing", false)) {
        auto e = DecodeTensor(r64.header.value("tensor", json()),
                              std::move(r64.blob));
        const int64_t n =
            at.empty() ? got.numel() : static_cast<int64_t>(at.size());
        if (e.ok() && e->numel() == n) {
          const double err_c = at.empty() ? RelativeRmsError(got, *e)
                                          : RelativeRmsError(got, *e, at);
          const double err_r = at.empty() ? RelativeRmsError(want, *e)
                                          : RelativeRmsError(want, *e, at);
          const double floor = 64 * UnitRoundoff(ro[i].value("dtype", ""));
          if (std::isfinite(err_c) && std::isfinite(err_r) &&
              err_c > std::max(32 * err_r, floor)) {
            Add(FindingCode::kPrecisionLowered,
                "output " + std::to_string(i) + " is " + Num(err_c) +
                    " from the float64 result (relative RMS), the " +
                    ro[i].value("dtype", "") +
                    " reference " + Num(err_r) +
                    ": the candidate computes in a lower precision than the task's");
          }
        }
        if (e.ok()) Recycle(&*e, nullptr);
      }
    }
    Recycle(&want, &got);
  }
  return true;
}

}  // namespace internal
}  // namespace skilldb::verify::kb
