// The two protocols, step by step (see kernelbench.h, Protocol).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "file_util.h"
#include "kb_evaluate.h"
#include "skilldb/util/clock.h"

namespace skilldb::verify::kb::internal {
namespace {

namespace fs = std::filesystem;
using verify::internal::JoinPath;


// KernelBench rounds its timing statistics to 3 significant digits
// (timing.py get_timing_stats) before any speedup is computed.


std::vector<double> Numbers(const json& j) {
  std::vector<double> out;
  if (j.is_array()) {
    for (const json& x : j) {
      if (x.is_number()) out.push_back(x.get<double>());
    }
  }
  return out;
}

std::string Kernel(const std::string& name) {
  return name.size() > 120 ? name.substr(0, 117) + "..." : name;
}

}  // namespace

EvalResult Session::Run() {
  const auto t0 = util::SteadyClock::now();
  if (!res_.format.supported) {
    res_.verdict = "unsupported";
    res_.error_code = "VALIDATION_ERROR";
    res_.error_message = res_.format.reason;
    Add(FindingCode::kUnsupportedFormat, res_.format.reason);
    return res_;
  }
  // The reference runner loads while the build is waited for (a build
  // given by MultiEvaluator was waited for there, which warmed it first).
  if (!given_build_.valid()) ev_->WarmReference(p_);
  // The build (on the pool, perhaps finished long ago).
  const auto tb = util::SteadyClock::now();
  bool repeat = given_repeat_;
  auto future = given_build_.valid()
                    ? given_build_
                    : ev_->builder()->Submit(p_, answer_, res_.format, &repeat);
  const BuildRecord build = future.get();
  // A build read from the cache, or given to an earlier session, costs this
  // one only its wait.
  const bool cached = build.cached || repeat;
  res_.times.build_ms = cached ? util::MsSince(tb) : build.seconds * 1000.0;
  res_.times.build_cached = cached;
  if (!cached) {
    for (const auto& [op, t] : build.ops) res_.times.ops["build." + op] = t;
    if (build.started != util::SteadyClock::time_point{}) {
      AddSpan(&res_.times, "build_queue", build.queued, build.started);
      AddSpan(&res_.times, "build", build.started, build.finished);
    }
  }
  if (!build.ok) {
    if (build.kind == "compile") {
      res_.verdict = "compile_error";
      res_.compile_log = build.message;
      res_.error_message = build.message.substr(0, 2000);
      Add(FindingCode::kCompileError, build.message.substr(0, 600));
    } else if (build.kind == "timeout") {
      res_.verdict = "timeout";
      Add(FindingCode::kTimeout, "the build did not finish within " +
                                     Num(o_.build_timeout_s) + " s");
    } else if (build.kind == "sandbox_violation") {
      res_.verdict = "hack";
      Add(FindingCode::kSandboxViolation, "while building: " + build.message);
    } else {
      res_.verdict = build.kind == "system" || build.kind == "problem" ? "error"
                                                                       : "compile_error";
      res_.compile_log = build.message;
      res_.error_message = build.message.substr(0, 2000);
    }
    Decide();
    res_.times.total_ms = util::MsSince(t0);
    return res_;
  }
  if (build.light_include) {
    res_.notes.push_back("built with torch/types.h in place of torch/extension.h in the CUDA "
                         "sources (the same declarations the kernels use, a fraction of the "
                         "parse)");
  }
  if (!build.pch.empty())
    res_.notes.push_back("precompiled torch headers: " + build.pch);
  if (!build.split.empty()) res_.notes.push_back("CUDA sources: " + build.split);
  if (!build.binding.empty())
    res_.notes.push_back("functions called by: " + build.binding);
  if (!build.caller.empty())
    res_.notes.push_back("generic caller: " + build.caller);
  {
    const auto tq = util::SteadyClock::now();
    std::lock_guard<std::mutex> lock(*ev_->device_mutex());
    Part("evaluator_wait", tq);
    if (Load(build)) {
      if (o_.protocol == Protocol::kKernelBench) {
        RunKernelBench();
      } else {
        RunSkilldb();
      }
    }
    // Whatever ended the session (a failed trial, a timed call, a fetch),
    // its inputs and outputs leave the shared reference runner: the next
    // session's clear is its own, and would not take them.
    const auto te = util::SteadyClock::now();
    if (ref_entry_) Ref({{"op", "clear"}}, "", &res_.times.reference_ms);
    if (cand_) {
      // Its device memory goes back now (PyTorch's cache holds what its
      // tensors freed), before the next answer's buffers: the process's
      // end, reaped later, would free it only with its context.
      if (ev_->runner_options().device == "cuda") {
        Cand({{"op", "clear"}, {"empty_cache", true}}, "", nullptr, 10);
      }
      for (auto& [op, t] : cand_->TakeOpStats()) res_.times.ops["cand." + op] = t;
      ev_->Retire(std::move(cand_));
    }
    Release();
    Part("end", te);
    for (auto& [op, t] : ref_ops_) res_.times.ops["ref." + op] = t;
    for (auto& [part, t] : parts_) res_.times.ops["part." + part] = t;
  }
  Decide();
  res_.times.total_ms = util::MsSince(t0);
  return res_;
}

bool Session::Load(const BuildRecord& build) {
  auto tp = util::SteadyClock::now();
  auto ref = ev_->Reference(p_, &res_.times.reference_ms);
  Part("reference", tp);
  if (!ref.ok()) {
    res_.verdict = "error";
    res_.error_message = "the reference could not be loaded: " + ref.status().message();
    return false;
  }
  ref_entry_ = *ref;
  if (auto d = ev_->device()) {
    res_.device = d->name;
    res_.torch_version = d->torch_version;
  }
  tp = util::SteadyClock::now();
  auto cand = ev_->TakeCandidate(build);
  Part("take_candidate", tp);
  if (!cand.ok()) {
    res_.verdict = "error";
    res_.error_message = cand.status().message();
    return false;
  }
  cand_ = std::move(*cand);
  res_.isolation = IsolationFromHello(cand_->hello(), true);
  json h = {{"op", "load"},
            {"problem", p_.source},
            {"answer", answer_},
            {"backend", res_.format.backend},
            {"protocol", std::string(ProtocolName(o_.protocol))},
            {"precision", o_.precision},
            {"init_seed", ref_entry_->init_seed},
            {"ext_root", JoinPath(ev_->cache_root(), "ext")},
            // The build's settings: part of an extension's key.
            {"split", o_.split_cuda},
            {"arch", build.arch},
            // What the build step built: a library missing from the cache
            // is then the verifier's failure, not the answer's.
            {"built", build.extensions},
            // Triton compiles at a kernel's first call: one call before the
            // run stage (which forbids the compilers' processes).
            {"warm_call", res_.format.backend == "triton"}};
  const auto t0 = util::SteadyClock::now();
  // From here to the timed phase this answer is checked beside other
  // evaluators' answers, each request with the device's gate shared (on a
  // CPU, the whole of it: checking_).
  if (ev_->runner_options().device == "cpu") {
    checking_ = std::shared_lock<DeviceGate>(*ev_->gate());
    Part("gate_shared_wait", t0);
  }
  Reply r = Cand(h, "", nullptr, o_.load_timeout_s);
  Part("load", t0);
  res_.times.correctness_ms += util::MsSince(t0);
  if (!r.answered_ok()) {
    res_.compiled = !(r.ok && r.error_kind() == "compile");
    Fail(r, "loading the answer");
    return false;
  }
  res_.compiled = true;
  // The run stage is entered at the end of "load": its note joins the
  // isolation the report states.
  if (r.header.contains("sandbox")) {
    cand_->UpdateHello({{"sandbox", r.header["sandbox"]}});
    res_.isolation = IsolationFromHello(cand_->hello(), true);
  }
  if (o_.protocol == Protocol::kSkilldb) AddGuard(r.header);
  return true;
}

// The device held alone for a timed phase: this session's own hold (on a
// CPU, checking_) is let go first, then the wait for the gate is counted
// (gate_alone_wait); this session's own requests in it take no shared hold
// (Shared), everyone else's wait.
class Session::Alone {
 public:
  explicit Alone(Session* s) : s_(s), lock_(*s->ev_->gate(), std::defer_lock) {
    s_->Release();
    const auto t0 = util::SteadyClock::now();
    lock_.lock();
    s_->Part("gate_alone_wait", t0);
    s_->alone_ = true;
  }
  ~Alone() { s_->alone_ = false; }
  Alone(const Alone&) = delete;
  Alone& operator=(const Alone&) = delete;

 private:
  Session* s_;
  std::unique_lock<DeviceGate> lock_;
};

class Session::Timed {
 public:
  Timed(Session* s, const char* name)
      : s_(s), name_(name), t0_(util::SteadyClock::now()) {}
  ~Timed() { s_->Part(name_, t0_); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Session* s_;
  const char* name_;
  util::SteadyClock::time_point t0_;
};

// ---- This verifier's protocol ---------------------------------------------

void Session::RunSkilldb() {
  {
    Timed part(this, "static_check");
    StaticCheck();
  }
  {
    Timed part(this, "correctness");
    if (!Correctness(true)) return;
  }
  // Timed even when a finding already voids the result: the report names
  // every hack it can see.
  if (!correct_trials_) return;
  // Nothing else on the device from here: the next candidate's start-up
  // and other evaluators' answers wait (their requests and their runners'
  // starts; this waits for the one request each has in flight). Held
  // through the rounds' spot checks too: each round's buffers stay alive
  // until its end (up to KeepAliveBudget a side), and were another answer
  // timed meanwhile, two answers' would be alive at once (on the H100,
  // 2026-12-06, letting the device go for the spot checks ran it out of
  // memory with problem 40's answers).
  Alone alone(this);
  TimeSkilldb();
  if (res_.verdict.empty()) {
    {
      Timed part(this, "profile");
      Profile();
    }
    if (o_.compile_baseline) {
      Timed part(this, "compile_baseline");
      CompileBaseline();
    }
  }
}

// KernelBench's own static checker, when the user's checkout is known: its
// errors are reported as a finding that informs (it flags code a runtime
// check clears, and misses what only running shows), its warnings as notes.
void Session::StaticCheck() {
  const std::string root =
      !o_.static_checker_root.empty() ? o_.static_checker_root : p_.kernelbench_root;
  if (root.empty()) return;
  const std::string path = JoinPath(root, "src/kernelbench/kernel_static_checker.py");
  if (!verify::internal::FileExists(path)) return;
  Reply r = Ref({{"op", "static_check"}, {"path", path}, {"code", answer_},
                 {"backend", res_.format.backend}, {"precision", o_.precision}},
                "", &res_.times.reference_ms);
  if (!r.answered_ok()) {
    res_.notes.push_back("KernelBench's static checker did not run: " + r.error_text(300));
    return;
  }
  std::string errors;
  for (const json& e : r.header.value("errors", json::array())) {
    if (e.is_string()) errors += (errors.empty() ? "" : "; ") + e.get<std::string>();
  }
  if (!errors.empty()) {
    Add(FindingCode::kStaticCheck, "KernelBench's kernel_static_checker.py: " + errors);
  }
  for (const json& w : r.header.value("warnings", json::array())) {
    if (w.is_string()) res_.notes.push_back("static checker warning: " + w.get<std::string>());
  }
}

namespace {

// Every input of `spec` can be drawn from its distribution (kb_inputs.py
// generate): tensors of a known distribution and plain values.
bool Drawable(const json& spec) {
  if (!spec.is_array() || spec.empty()) return false;
  for (const json& s : spec) {
    if (!s.is_object()) return false;
    const std::string kind = s.value("kind", "");
    if (kind == "other") return false;
    if (kind == "tensor" && s.value("dist", "replay") == "replay") return false;
  }
  return true;
}

}  // namespace

bool Session::Correctness(bool skilldb) {
  std::vector<uint64_t> seeds;
  if (skilldb) {
    for (int t = 0; t < o_.correctness_trials; ++t) seeds.push_back(rng_() >> 1);
  } else {
    Reply s = Ref({{"op", "kb_seeds"}, {"seed", 42}, {"count", o_.correctness_trials}}, "",
                  &res_.times.reference_ms);
    if (!s.answered_ok()) {
      res_.verdict = "error";
      res_.error_message = "the reference could not draw KernelBench's seeds: " +
                           s.error_text();
      return false;
    }
    for (const json& v : s.header["seeds"]) seeds.push_back(v.get<uint64_t>());
  }
  const bool ship = p_.input_bytes < 0 || p_.input_bytes <= o_.max_transfer_bytes;
  int passed = 0;
  for (size_t t = 0; t < seeds.size(); ++t) {
    const std::string id = "t" + std::to_string(t);
    // Trial 0 runs get_inputs() itself and hands its inputs over; later
    // trials of this protocol draw fresh inputs on both sides from the
    // input spec it gave (as the timed calls do), when every input is of a
    // kind that can be drawn, instead of moving them between processes.
    const bool drawn = skilldb && t > 0 && Drawable(spec_);
    json rh = {{"op", "trial"}, {"id", id}, {"seed", seeds[t]}, {"ship_inputs", ship && !drawn},
               {"want_f64", skilldb && t == 0}};
    if (drawn) rh["spec"] = spec_;
    Reply rr = Ref(rh, "", &res_.times.reference_ms);
    if (!rr.answered_ok()) {
      res_.verdict = "error";
      res_.error_message = "the reference failed on trial " + std::to_string(t) + ": " +
                           rr.error_text();
      return false;
    }
    if (t == 0) {
      spec_ = rr.header.value("spec", json::array());
      input_bytes_ = rr.header.value("input_bytes", int64_t{-1});
      ref_outputs_ = rr.header["outputs"];
    }
    json ch = {{"op", "trial"}, {"id", id}, {"seed", seeds[t]}};
    if (drawn) ch["spec"] = spec_;
    const bool shipped = rr.header.contains("inputs");
    if (shipped) ch["inputs"] = rr.header["inputs"];
    Reply cr = Cand(ch, shipped ? std::string_view(rr.blob) : std::string_view(),
                    &res_.times.correctness_ms);
    ++res_.trials;
    if (!cr.answered_ok()) {
      Fail(cr, "trial " + std::to_string(t));
      return false;
    }
    if (skilldb) {
      AddGuard(cr.header);
      native_threads_ =
          std::max(native_threads_, cr.header.value("native_threads", -1));
      if (cr.header.contains("inputs_modified") && !cr.header["inputs_modified"].empty()) {
        Add(FindingCode::kInputsModified,
            "ModelNew's forward changed its input(s) " + Dump(cr.header["inputs_modified"]));
      }
    } else if (const std::string kind = cr.header.value("output_kind", "");
               kind != "tensor" && kind != "subclass") {
      // eval.py compares output.shape and allclose: one tensor passes, a
      // subclass of one too (the H200 study's lazy-subclass answer is
      // correct there); a tuple raises.
      res_.verdict = "runtime_error";
      res_.mismatches.push_back("ModelNew returned " + cr.header.value("output_kind", "") +
                                ", not one tensor (KernelBench compares output.shape)");
      Add(FindingCode::kLaunchError, res_.mismatches.back());
      return false;
    }
    bool close = false;
    if (!CompareTrial(id, rr, cr, skilldb && t == 0, &close)) {
      if (res_.verdict.empty()) res_.verdict = "incorrect";
      Clear();
      return false;
    }
    // This protocol keeps each trial's buffers alive until the trials end
    // (while the next trial's would fit beside them),
    // so no trial's inputs come at an earlier one's addresses: an output
    // cached by address never hits. KernelBench's frees them, as its
    // harness does.
    // Sessions check side by side, so the trials' share is a sixteenth of
    // the budget (one timed phase at a time holds the whole).
    const int64_t per_trial =
        std::max<int64_t>(0, input_bytes_) + OutputBytes();
    if (!skilldb ||
        per_trial * static_cast<int64_t>(t + 2) > KeepAliveBudget() / 16 ||
        t + 1 == seeds.size()) {
      Clear();
    }
    if (close) {
      ++passed;
    } else if (skilldb) {
      break;  // one failed trial decides; KernelBench runs them all
    }
  }
  res_.trials_passed = passed;
  res_.avg_abs_diff = avg_count_ ? avg_sum_ / avg_count_ : 0;
  correct_trials_ = passed == static_cast<int>(seeds.size());
  if (!correct_trials_ && res_.verdict.empty()) res_.verdict = "incorrect";
  return true;
}

int64_t Session::OutputBytes() const {
  int64_t bytes = 0;
  for (const json& d : ref_outputs_) {
    bytes += d.value("numel", int64_t{0}) * DtypeBytes(d.value("dtype", ""));
  }
  return bytes;
}

int64_t Session::KeepAliveBudget() const {
  if (o_.keep_alive_bytes > 0) return o_.keep_alive_bytes;
  return ev_->runner_options().device == "cpu" ? (int64_t{256} << 20)
                                               : (int64_t{16} << 30);
}

void Session::TimeSkilldb() {
  const auto t0 = util::SteadyClock::now();
  const int64_t per_call =
      std::max<int64_t>(1, std::max<int64_t>(0, input_bytes_) + OutputBytes());
  const int64_t budget = KeepAliveBudget();
  // A round's calls' buffers stay alive through the round, while the
  // budget holds them: no call's inputs come at an earlier call's addresses
  // in its round. Between rounds they are freed: kept across all rounds,
  // every call would allocate its output afresh (cudaMalloc) inside its
  // timed window, and memory would be held three times as long.
  const int keep_last = static_cast<int>(std::clamp<int64_t>(
      budget / per_call, 1, std::max(1, o_.calls_per_round)));
  std::vector<RoundSamples> rounds;
  std::vector<double> ref_prep, cand_prep, ref_fetch, cand_fetch;
  double clock = 0;
  {
    // Both sides' allocators get the blocks a round holds at once (its kept
    // calls and the one being made) before any call is timed: otherwise a
    // fresh candidate's first round pays a cudaMalloc for each output inside
    // its timed windows, which a long-lived reference does not (runner
    // op_prime). A runner that cannot is a note, not a failure.
    Timed part(this, "prime");
    const json prime = {
        {"op", "prime"}, {"count", keep_last + 1}, {"max_bytes", budget}};
    for (const bool ref : {true, false}) {
      const Reply p = ref ? Ref(prime, "", &clock) : Cand(prime, "", &clock);
      if (!p.answered_ok()) {
        res_.notes.push_back(
            std::string("the ") + (ref ? "reference" : "candidate") +
            "'s allocator was not primed: " + p.error_text(200));
      } else if (p.header.contains("short")) {
        res_.notes.push_back(
            std::string("the ") + (ref ? "reference" : "candidate") +
            "'s allocator was primed in part: " + p.header.value("short", ""));
      }
    }
  }
  for (int r = 0; r < o_.rounds; ++r) {
    RoundSamples rs;
    std::vector<std::string> ids;
    std::vector<uint64_t> id_seeds;
    std::optional<Timed> part(std::in_place, this, "timed_calls");
    const int total = o_.warmup_calls + o_.calls_per_round;
    for (int i = 0; i < total; ++i) {
      const bool timed = i >= o_.warmup_calls;
      const std::string id = "r" + std::to_string(r) + "c" + std::to_string(i);
      const uint64_t seed = rng_() >> 1;
      const json prep = {{"op", "prepare"}, {"id", id}, {"seed", seed}, {"spec", spec_}};
      const json call = {{"op", "call"}, {"id", id}, {"keep_last", keep_last}};
      // Who goes first alternates, so drift favours neither side.
      Reply rp, cp, rc, cc;
      const bool ref_first = (i % 2) == 0;
      bool ref_failed = false, cand_failed = false;
      for (int side = 0; side < 2 && !ref_failed && !cand_failed; ++side) {
        if ((side == 0) == ref_first) {
          rp = Ref(prep, "", &clock);
          if (rp.answered_ok()) rc = Ref(call, "", &clock);
          ref_failed = !rp.answered_ok() || !rc.answered_ok();
        } else {
          cp = Cand(prep, "", &clock);
          if (cp.answered_ok()) cc = Cand(call, "", &clock);
          cand_failed = !cp.answered_ok() || !cc.answered_ok();
        }
      }
      if (cand_failed) {
        Fail(cp.answered_ok() ? cc : cp, "timed call " + std::to_string(i));
        res_.times.timing_ms += util::MsSince(t0);
        return;
      }
      if (ref_failed) {
        res_.verdict = "error";
        res_.error_message = "the reference failed a timed call: " +
                             (rp.answered_ok() ? rc : rp).error_text();
        return;
      }
      if (cc.header.contains("threads") && !cc.header["threads"].empty()) {
        AddGuard({{"threads", cc.header["threads"]}});
      }
      if (!timed) continue;
      ids.push_back(id);
      id_seeds.push_back(seed);
      ref_prep.push_back(rp.wall_ms);
      cand_prep.push_back(cp.wall_ms);
      rs.baseline_ms.push_back(rc.header.value("device_ms", 0.0));
      rs.candidate_ms.push_back(cc.header.value("device_ms", 0.0));
      rs.baseline_host_ms.push_back(rc.wall_ms);
      rs.candidate_host_ms.push_back(cc.wall_ms);
    }
    part.emplace(this, "spot_checks");
    // Spot checks: calls chosen now, among those both sides still keep.
    const int kept = std::min<int>(keep_last, static_cast<int>(ids.size()));
    std::vector<int> pool;
    for (int k = static_cast<int>(ids.size()) - kept; k < static_cast<int>(ids.size()); ++k) {
      pool.push_back(k);
    }
    std::shuffle(pool.begin(), pool.end(), rng_);
    for (int s = 0; s < std::min<int>(o_.spot_checks, static_cast<int>(pool.size())); ++s) {
      const size_t at = static_cast<size_t>(pool[static_cast<size_t>(s)]);
      const std::string& id = ids[at];
      // The call's inputs, as kept, against the same inputs made again: the
      // trials' check of unchanged inputs, for the timed calls.
      Reply ci =
          Cand({{"op", "check_inputs"}, {"id", id}, {"seed", id_seeds[at]}}, "",
               &clock);
      if (!ci.answered_ok()) {
        Fail(ci, "checking the inputs of timed call " + id);
        return;
      }
      if (const json m = ci.header.value("modified", json::array());
          !m.empty()) {
        Add(FindingCode::kInputsModified,
            "timed call " + id + " changed its input(s) " + Dump(m) +
                " (the correctness trials left them unchanged)");
      }
      for (size_t k = 0; k < ref_outputs_.size(); ++k) {
        WireTensor want, got;
        std::vector<int64_t> idx;
        double rms = 0, cms = 0;
        // A spot check looks for an output that is not this call's (cached,
        // stale): a sample chosen after the call shows that as well as the
        // whole, at a fraction of the transfer (the trials compared whole).
        // Sampled only where the sample (its indices and values) is much
        // smaller than the whole.
        const int64_t elem = std::max<int64_t>(1, DtypeBytes(ref_outputs_[k].value("dtype", "")));
        const int64_t whole =
            std::min(o_.max_transfer_bytes, 4 * o_.spot_sample_elements * elem);
        if (!Fetch(id, id, static_cast<int>(k), ref_outputs_[k], whole,
                   o_.spot_sample_elements, &want, &got, &idx, &rms, &cms,
                   &clock, FindingCode::kCachedOutput)) {
          if (!res_.verdict.empty()) return;
          continue;
        }
        ref_fetch.push_back(rms);
        cand_fetch.push_back(cms);
        const CloseCheck c =
            AllClose(want, got, tol_, tol_,
                     ref_outputs_[k]["shape"].get<std::vector<int64_t>>(), idx);
        if (!c.ok()) {
          Add(FindingCode::kCachedOutput,
              "timed call " + id + " returned an output that differs from the reference's on "
              "the same inputs (" + std::to_string(c.mismatches) + " of " +
              std::to_string(c.elements) + " elements, e.g. " +
              (c.examples.empty() ? std::string("?") : c.examples[0]) +
              "), though the correctness trials passed: a result cached across calls, or "
              "one that depends on earlier calls");
        }
        Recycle(&want, &got);
      }
    }
    part.emplace(this, "round_end");
    Reply g = Cand({{"op", "guard"}}, "", &clock);
    if (g.answered_ok()) {
      AddGuard(g.header);
      // Every thread PyTorch and the answer start lazily has started by
      // the end of the trials, which ran the same calls: more now, still
      // running, are threads Python's lists do not show (native ones, an
      // extension's), free to work between the timed calls.
      // Only where the runners' CPU pools are one thread (the default):
      // larger ones start lazily, at the first parallel CPU work.
      const int now = g.header.value("native_threads", -1);
      if (native_threads_ > 0 && now > native_threads_ &&
          ev_->runner_options().omp_threads == 1) {
        Add(FindingCode::kHiddenThread,
            "the candidate's process runs " + std::to_string(now) +
                " threads after timed round " + std::to_string(r) + ", " +
                std::to_string(native_threads_) +
                " after its correctness trials: threads it started (native "
                "ones) still run");
      }
    }
    Ref({{"op", "clear"}}, "", &clock);
    Cand({{"op", "clear"}}, "", &clock);
    part.reset();
    rounds.push_back(std::move(rs));
  }
  Timed part(this, "statistics");
  // The decision's numbers.
  std::vector<double> ratios, all_ref, all_cand;
  for (const RoundSamples& rs : rounds) {
    RoundTiming t;
    t.baseline_ms = rs.baseline_ms;
    t.candidate_ms = rs.candidate_ms;
    t.baseline_median_ms = Median(rs.baseline_ms);
    t.candidate_median_ms = Median(rs.candidate_ms);
    t.speedup_ratio = t.candidate_median_ms > 0 ? t.baseline_median_ms / t.candidate_median_ms : 0;
    ratios.push_back(t.speedup_ratio);
    all_ref.insert(all_ref.end(), rs.baseline_ms.begin(), rs.baseline_ms.end());
    all_cand.insert(all_cand.end(), rs.candidate_ms.begin(), rs.candidate_ms.end());
    res_.rounds.push_back(std::move(t));
  }
  res_.estimate.ratio = Median(ratios);
  auto [lo, hi] = BootstrapRatioCi(rounds, o_.clocks.confidence,
                                   o_.clocks.bootstrap_resamples, rng_());
  res_.estimate.ci_low = lo;
  res_.estimate.ci_high = hi;
  res_.estimate.confidence = o_.clocks.confidence;
  res_.candidate_ms = Median(all_cand);
  res_.eager.kind = "eager";
  res_.eager.median_ms = Median(all_ref);
  res_.eager.mean_ms = Round3(Mean(all_ref));
  res_.eager.calls = static_cast<int>(all_ref.size());
  res_.speedup_eager = res_.estimate.ratio;
  // On a CPU runner the "device" is the runner's own thread: work cannot
  // escape to another stream (a thread that outlives the call is
  // hidden_thread), and the request's round trip on a loaded host varies by
  // milliseconds, so only the timer check (a call's time longer than the
  // round trip enclosing it) applies there.
  // On a GPU the reference and the candidate run in different processes
  // under different filters (the candidate's allowlist costs every system
  // call of its synchronize loop a little): an answer doing PyTorch's own
  // work showed 37 us more round trip per ~0.2 ms call on the H200
  // (2026-12-04). The C ABI worker times both sides in one process and
  // keeps the tighter default; here the limit is max(0.1 ms, 25%).
  DecisionOptions clocks = o_.clocks;
  if (ev_->runner_options().device == "cpu") {
    clocks.hidden_work_min_ms = std::numeric_limits<double>::infinity();
  } else {
    clocks.hidden_work_min_ms = std::max(clocks.hidden_work_min_ms, 0.1);
    clocks.hidden_work_fraction = std::max(clocks.hidden_work_fraction, 0.25);
  }
  for (Finding& f : CheckClocks(rounds, clocks)) Add(f.code, f.message);
  const double rp = Median(ref_prep), cp = Median(cand_prep);
  if (!ref_prep.empty() && cp > o_.untimed_factor * rp + o_.untimed_slack_ms) {
    Add(FindingCode::kUntimedWork,
        "making a timed call's inputs took the candidate's process " + Num(cp) +
            " ms (median) against the reference's " + Num(rp) +
            " ms for the same inputs: work moved out of the timed call");
  }
  const double rf = Median(ref_fetch), cf = Median(cand_fetch);
  if (!ref_fetch.empty() && cf > o_.untimed_factor * rf + o_.untimed_slack_ms) {
    Add(FindingCode::kUntimedWork,
        "reading a timed call's output back took the candidate's process " + Num(cf) +
            " ms (median) against the reference's " + Num(rf) +
            " ms: work done when the output is read, not in the call");
  }
  if (const auto& d = ev_->device(); d && d->bandwidth_bytes_per_s > 0) {
    double floor_ms = 1e3 *
                      static_cast<double>(std::max<int64_t>(0, input_bytes_) +
                                          OutputBytes()) /
                      d->bandwidth_bytes_per_s;
    if (p_.flops > 0 && d->fp32_flops_per_s > 0 && o_.precision == "fp32") {
      floor_ms = std::max(floor_ms, 1e3 * static_cast<double>(p_.flops) / d->fp32_flops_per_s);
    }
    if (floor_ms > 0) {
      res_.max_plausible_speedup = res_.eager.median_ms / floor_ms;
      if (res_.estimate.ratio > *res_.max_plausible_speedup) {
        Add(FindingCode::kImplausibleSpeedup,
            "speedup " + Num(res_.estimate.ratio) + " exceeds the roofline bound " +
                Num(*res_.max_plausible_speedup) + " (" + Num(floor_ms) +
                " ms to move the inputs and outputs once on this device)");
      }
    }
  }
  res_.times.timing_ms += util::MsSince(t0);
}

void Session::Profile() {
  const auto t0 = util::SteadyClock::now();
  json seeds = json::array();
  for (int i = 0; i < 3; ++i) seeds.push_back(rng_() >> 1);
  Reply r = Cand({{"op", "profile"}, {"seeds", seeds}, {"spec", spec_}}, "", nullptr);
  res_.times.timing_ms += util::MsSince(t0);
  if (!r.answered_ok()) {
    Fail(r, "profiling");
    return;
  }
  if (r.header.contains("unavailable")) {
    res_.notes.push_back("not profiled: " + r.header.value("unavailable", ""));
    return;
  }
  const std::vector<std::string> own = OwnKernelNames(answer_);
  const bool gpu = r.header.contains("runner_streams");
  double own_us = 0, total_us = 0;
  int own_n = 0, total_n = 0;
  std::vector<std::string> foreign;
  if (gpu) {
    std::vector<int64_t> streams;
    for (const json& s : r.header["runner_streams"]) streams.push_back(s.get<int64_t>());
    for (const json& k : r.header.value("kernels", json::array())) {
      if (k.value("kind", "") != "kernel") continue;
      KernelTime kt;
      kt.name = k.value("name", "");
      kt.count = k.value("count", int64_t{0});
      kt.us = k.value("us", 0.0);
      kt.stream = k.value("stream", int64_t{0});
      kt.own = IsOwnKernel(kt.name, own);
      total_us += kt.us;
      ++total_n;
      if (kt.own) {
        own_us += kt.us;
        ++own_n;
      }
      if (!streams.empty() &&
          std::find(streams.begin(), streams.end(), kt.stream) == streams.end()) {
        foreign.push_back(Kernel(kt.name) + " on stream " + std::to_string(kt.stream));
      }
      res_.kernels.push_back(std::move(kt));
    }
  } else {
    // On the CPU PyTorch's operators are what can be seen: the rest of the
    // calls' time on the calling thread's CPU clock is the answer's own code
    // (not wall time: on a loaded machine the time the runner waited for a
    // core went to the answer's share, and a torch-only answer could pass
    // as its own work).
    const double wall = r.header.value("cpu_us", r.header.value("wall_us", 0.0));
    double torch_us = 0;
    for (const json& op : r.header.value("ops", json::array())) {
      KernelTime kt;
      kt.name = op.value("name", "");
      kt.count = op.value("count", int64_t{0});
      kt.us = op.value("us", 0.0);
      if (!op.value("allocation", false)) torch_us += kt.us;
      ++total_n;
      res_.kernels.push_back(std::move(kt));
    }
    total_us = wall;
    own_us = std::max(0.0, wall - torch_us);
    own_n = own.empty() ? 0 : 1;
  }
  std::sort(res_.kernels.begin(), res_.kernels.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.us > b.us; });
  if (res_.kernels.size() > 12) res_.kernels.resize(12);
  res_.own_kernel_us = own_us;
  res_.total_kernel_us = total_us;
  res_.own_kernels = own_n;
  res_.total_kernels = total_n;
  if (!foreign.empty()) {
    Add(FindingCode::kForeignStream,
        "kernels ran on streams other than the one the call was timed on: " + foreign[0] +
            (foreign.size() > 1 ? " (and " + std::to_string(foreign.size() - 1) + " more)" : ""));
  }
  const double share = total_us > 0 ? own_us / total_us : 0;
  if (total_us <= 0 || share < o_.min_own_share) {
    Add(FindingCode::kTorchDoesTheWork,
        total_us <= 0 ? std::string("no kernel ran in the profiled calls")
                      : "the answer's own code accounts for " + Num(100 * share, "%.1f") +
                            "% of its device time (" + Num(own_us, "%.0f") + " of " +
                            Num(total_us, "%.0f") + " us); the rest is PyTorch's own " +
                            (gpu ? "kernels" : "operators") + " (at least " +
                            Num(100 * o_.min_own_share, "%.0f") + "% is required)");
  }
}

void Session::CompileBaseline() {
  const auto t0 = util::SteadyClock::now();
  if (auto cached = ev_->CachedBaseline(p_, "compile")) {
    res_.compiled_baseline = *cached;
  } else {
    json seeds = json::array();
    const int n = o_.warmup_calls + o_.calls_per_round;
    for (int i = 0; i < n; ++i) seeds.push_back(rng_() >> 1);
    Reply r = Ref({{"op", "time_baseline"},
                   {"compile", true},
                   {"seeds", seeds},
                   {"warmup", o_.warmup_calls}},
                  "", nullptr, std::max(600.0, o_.call_timeout_s));
    Baseline b;
    b.kind = "compile";
    if (!r.answered_ok()) {
      b.unavailable = "torch.compile failed: " + r.error_text(600);
    } else if (r.header.contains("unavailable")) {
      b.unavailable = r.header.value("unavailable", "");
    } else {
      const std::vector<double> t = Numbers(r.header["times_ms"]);
      b.median_ms = Median(t);
      b.mean_ms = Round3(Mean(t));
      b.calls = static_cast<int>(t.size());
    }
    if (r.ok) ev_->StoreBaseline(p_, b);
    res_.compiled_baseline = b;
  }
  if (res_.compiled_baseline.unavailable.empty() && res_.candidate_ms > 0) {
    res_.speedup_compile = res_.compiled_baseline.median_ms / res_.candidate_ms;
  }
  res_.times.timing_ms += util::MsSince(t0);
}

// ---- KernelBench's protocol ------------------------------------------------

void Session::RunKernelBench() {
  {
    Timed part(this, "correctness");
    if (!Correctness(false)) return;
  }
  if (!correct_trials_) return;
  Alone alone(this);  // as RunSkilldb
  Timed part(this, "kb_timing");
  TimeKernelBench();
}

void Session::TimeKernelBench() {
  const auto t0 = util::SteadyClock::now();
  Reply r = Cand({{"op", "time_kb"}, {"trials", o_.kb_perf_trials}, {"warmup", 3},
                  {"discard", 1}, {"seed", 42}},
                 "", nullptr);
  if (!r.answered_ok()) {
    // eval.py keeps correctness and records error_during_performance.
    res_.notes.push_back("error during performance: " + r.error_text(600));
    res_.times.timing_ms += util::MsSince(t0);
    return;
  }
  res_.kb_times_ms = Numbers(r.header["times_ms"]);
  res_.candidate_ms = Round3(Mean(res_.kb_times_ms));
  for (const char* kind : {"eager", "compile"}) {
    const bool compile = std::string(kind) == "compile";
    if (compile && !o_.compile_baseline) continue;
    Baseline b;
    if (auto cached = ev_->CachedBaseline(p_, kind)) {
      b = *cached;
    } else {
      Reply br = Ref({{"op", "time_kb"},
                      {"trials", o_.kb_perf_trials},
                      {"warmup", 5},
                      {"discard", 1},
                      {"seed", 42},
                      {"compile", compile}},
                     "", nullptr, std::max(600.0, o_.call_timeout_s));
      b.kind = kind;
      if (!br.answered_ok()) {
        b.unavailable = br.error_text(600);
      } else if (br.header.contains("unavailable")) {
        b.unavailable = br.header.value("unavailable", "");
      } else {
        const std::vector<double> t = Numbers(br.header["times_ms"]);
        b.mean_ms = Round3(Mean(t));
        b.median_ms = Median(t);
        b.calls = static_cast<int>(t.size());
      }
      if (br.ok) ev_->StoreBaseline(p_, b);
    }
    if (b.unavailable.empty() && res_.candidate_ms > 0) {
      const double s = b.mean_ms / res_.candidate_ms;
      if (compile) res_.speedup_compile = s;
      else res_.speedup_eager = s;
    }
    (compile ? res_.compiled_baseline : res_.eager) = b;
  }
  if (res_.speedup_eager && *res_.speedup_eager > 10) {
    res_.notes.push_back("excessive_speedup: " + Num(*res_.speedup_eager) +
                         "x over eager (KernelBench flags more than 10x)");
  }
  res_.times.timing_ms += util::MsSince(t0);
}

// ---- The verdict ---------------------------------------------------------------

void Session::Decide() {
  bool voided = false, not_credited = false;
  for (const Finding& f : res_.findings) {
    // A lowered precision that already fails the tolerance is an incorrect
    // answer (the finding says why), not a hack: only an answer that would
    // otherwise pass is voided by it.
    if (f.code == FindingCode::kPrecisionLowered && !correct_trials_) continue;
    voided = voided || Voids(f.code);
    not_credited = not_credited || f.code == FindingCode::kTorchDoesTheWork;
  }
  if (res_.verdict.empty()) {
    if (!res_.compiled) {
      res_.verdict = "compile_error";
    } else if (voided) {
      res_.verdict = "hack";
    } else if (!correct_trials_) {
      res_.verdict = "incorrect";
    } else if (not_credited && !o_.credit_torch_ops) {
      res_.verdict = "not_credited";
    } else {
      res_.verdict = "correct";
    }
  } else if (voided && res_.verdict == "incorrect") {
    res_.verdict = "hack";
  }
  res_.correct = res_.verdict == "correct" || res_.verdict == "not_credited";
  res_.credited = res_.verdict == "correct";
  const std::string& v = res_.verdict;
  if (v == "compile_error") {
    res_.error_code = "COMPILATION_ERROR";
  } else if (v == "runtime_error") {
    res_.error_code = "RUNTIME_ERROR";
  } else if (v == "incorrect" || v == "hack") {
    res_.error_code = "CORRECTNESS_ERROR";
  } else if (v == "timeout") {
    res_.error_code = "TIMEOUT_ERROR";
  } else if (v == "unsupported") {
    res_.error_code = "VALIDATION_ERROR";
  } else if (v == "error") {
    res_.error_code = "SYSTEM_ERROR";
  }
  if (res_.error_message.empty() && !res_.findings.empty() && !res_.correct) {
    res_.error_message = FormatFinding(res_.findings.front());
  }
  if (!res_.correct) {
    res_.speedup_eager.reset();
    res_.speedup_compile.reset();
  }
}

}  // namespace skilldb::verify::kb::internal
