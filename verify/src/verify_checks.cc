// The verification pipeline, part 2: correctness checks, timing rounds, the
// decision and the roofline bound.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gen.h"
#include "tensor_data.h"
#include "verifier_impl.h"

namespace skilldb::verify::internal {
namespace {

using nlohmann::json;

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// The worker's view of the task's tensors at `dims`; `dist_index` picks
// each input's distribution, `tol_factor` scales the output tolerances.
Result<json> LayoutJson(const Task& task, const Dims& dims, int dist_index,
                        double tol_factor, json* outputs) {
  json inputs = json::array();
  for (const TensorSpec& s : task.inputs) {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(s, dims));
    const Distribution d = s.distributions[static_cast<size_t>(dist_index) %
                                           s.distributions.size()];
    inputs.push_back({{"dtype", static_cast<int>(s.dtype)},
                      {"shape", shape},
                      {"dist", static_cast<int>(d)},
                      {"scale", s.large_scale}});
  }
  *outputs = json::array();
  for (const TensorSpec& s : task.outputs) {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(s, dims));
    const Tolerance tol = ToleranceFor(task, s.dtype);
    outputs->push_back({{"dtype", static_cast<int>(s.dtype)},
                        {"shape", shape},
                        {"atol", tol.atol * tol_factor},
                        {"rtol", tol.rtol * tol_factor}});
  }
  return inputs;
}

int TrialsPerShape(const Task& task) {
  size_t n = 1;
  for (const TensorSpec& s : task.inputs) n = std::max(n, s.distributions.size());
  return static_cast<int>(n);
}

std::string DistText(const Task& task, int k) {
  std::string out;
  for (const TensorSpec& s : task.inputs) {
    if (!out.empty()) out += "/";
    out += DistributionName(
        s.distributions[static_cast<size_t>(k) % s.distributions.size()]);
  }
  return out;
}

// Turns one call's diagnostics into findings.
void CallFindings(JobState* job, const json& call, bool cuda) {
  const int rc = call.value("rc", 0);
  if (rc != 0) {
    job->Add(FindingCode::kLaunchError,
             "launch() returned " + std::to_string(rc));
  }
  if (call.value("foreign", 0) > 0) {
    job->Add(FindingCode::kForeignStream,
             "work was enqueued on a stream other than the one launch() was "
             "given (" + call.value("foreign_detail", std::string()) + ")");
  }
  if (call.value("alloc_denied", false)) {
    job->Add(FindingCode::kResourceLimit,
             "the candidate tried to allocate more device memory than the "
             "limit allows");
  }
  if (cuda) {
    const int launched = call.value("kernels", -1);
    const int executed = call.value("kernels_executed", -1);
    if (launched == 0 || executed == 0) {
      job->Add(FindingCode::kNoKernelLaunched,
               "launch() ran no kernel of its own (" +
                   std::to_string(launched) + " launches, " +
                   std::to_string(executed) +
                   " kernel executions seen): the output was produced some "
                   "other way, e.g. by a decoy");
    }
  }
}

void LateFindings(JobState* job, const json& reply) {
  const int late = reply.value("late_ops", 0);
  if (late > 0) {
    job->Add(FindingCode::kLateWork,
             std::to_string(late) +
                 " CUDA operations came from another host thread, outside "
                 "launch(): work escaping the timed call was refused");
  }
}

void AddExamples(CorrectnessResult* c, const std::vector<std::string>& ex) {
  for (const std::string& e : ex) {
    if (c->errors.size() < 8) c->errors.push_back(e);
  }
}

}  // namespace

Result<bool> TaskVerifierImpl::CheckCorrectness(Job* job) {
  CorrectnessResult& c = job->out.report.correctness;
  c.checked = true;
  const Task& task = job->task->task;
  for (size_t d = 0; d < task.check_dims.size(); ++d) {
    for (int k = 0; k < TrialsPerShape(task); ++k) {
      SKILLDB_ASSIGN_OR_RETURN(bool ok, CheckShape(job, task.check_dims[d], k));
      if (!ok || job->failed()) return false;
    }
  }
  job->slot->validated_tasks.insert(task.name);
  for (int t = 0; t < options_.timing_shape_trials; ++t) {
    SKILLDB_ASSIGN_OR_RETURN(bool ok, CheckTimingShape(job, t));
    if (!ok || job->failed()) return false;
  }
  c.passed = true;
  return true;
}

Result<bool> TaskVerifierImpl::CheckShape(Job* job, const Dims& dims, int k) {
  const Task& task = job->task->task;
  const uint64_t seed = SplitMix64(job->seed ^ SplitMix64(
      std::hash<std::string>()(json(dims).dump()) + static_cast<uint64_t>(k)));
  std::vector<HostTensor> inputs;
  std::string blob;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const TensorSpec& s = task.inputs[i];
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(s, dims));
    inputs.push_back(GenerateTensor(
        s, shape, SplitMix64(seed + i),
        s.distributions[static_cast<size_t>(k) % s.distributions.size()]));
    blob += inputs.back().bytes;
  }
  SKILLDB_ASSIGN_OR_RETURN(auto want, oracles_->Run(task, dims, inputs));
  json outputs;
  SKILLDB_ASSIGN_OR_RETURN(json in_layout, LayoutJson(task, dims, k, 1.0, &outputs));
  const json header = {{"op", "check"}, {"slot", "cand"}, {"inputs", in_layout},
                       {"outputs", outputs}, {"count_kernels", true}};
  Message m;
  SKILLDB_ASSIGN_OR_RETURN(
      bool ok, CallWorker(job, header, blob, options_.limits.call_timeout_s + 5, &m));
  if (!ok) return false;
  const bool cuda = options_.backend == Backend::kCuda;
  CallFindings(job, m.header["call"], cuda);
  LateFindings(job, m.header);
  CorrectnessResult& c = job->out.report.correctness;
  ++c.trials;
  const std::string where = "at shape " + json(dims).dump() + " with " +
                            DistText(task, k) + " inputs";
  size_t offset = 0;
  for (size_t o = 0; o < task.outputs.size(); ++o) {
    const TensorSpec& s = task.outputs[o];
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(s, dims));
    const size_t n = want[o].size() * static_cast<size_t>(DtypeSize(s.dtype));
    const std::string got = m.blob.substr(std::min(offset, m.blob.size()), n);
    offset += n;
    const OutputCheck oc = CheckOutput(s.dtype, got, want[o],
                                       ToleranceFor(task, s.dtype), shape);
    c.max_abs_error = std::max(c.max_abs_error, oc.max_abs_error);
    c.max_rel_error = std::max(c.max_rel_error, oc.max_rel_error);
    AddExamples(&c, oc.examples);
    if (oc.unwritten > 0) {
      job->Add(FindingCode::kUnwrittenOutput,
               std::to_string(oc.unwritten) + " of " +
                   std::to_string(oc.elements) + " elements of output '" +
                   s.name + "' " + ShapeText(shape) +
                   " were never written " + where);
    }
    if (oc.mismatches > 0) {
      job->Add(FindingCode::kWrongOutput,
               std::to_string(oc.mismatches) + " of " +
                   std::to_string(oc.elements) + " elements of output '" +
                   s.name + "' are outside tolerance " + where +
                   " (max abs error " + Num(oc.max_abs_error) + ")");
    }
  }
  if (m.header.value("inputs_modified", false)) {
    job->Add(FindingCode::kInputsModified,
             "the candidate modified its input tensors " + where);
  }
  if (!m.header.value("guard_ok", true)) {
    job->Add(FindingCode::kOutOfBoundsWrite,
             "the candidate wrote outside its output tensors " + where);
  }
  if (job->failed()) return false;
  if (!job->slot->validated_tasks.count(task.name)) {
    return ValidateReference(job, dims, inputs, want);
  }
  return true;
}

// Runs the task's reference on the same inputs (after the candidate, so no
// correct output existed while the candidate ran) and checks it against
// the oracle: a failure is a task bug, reported as an error.
Result<bool> TaskVerifierImpl::ValidateReference(
    Job* job, const Dims& dims, const std::vector<HostTensor>& inputs,
    const std::vector<std::vector<double>>& want) {
  const Task& task = job->task->task;
  std::string blob;
  for (const HostTensor& t : inputs) blob += t.bytes;
  json outputs;
  SKILLDB_ASSIGN_OR_RETURN(json in_layout, LayoutJson(task, dims, 0, 1.0, &outputs));
  Message m;
  SKILLDB_ASSIGN_OR_RETURN(
      bool ok, CallWorker(job,
                          {{"op", "check"}, {"slot", "ref"}, {"inputs", in_layout},
                           {"outputs", outputs}, {"count_kernels", false}},
                          blob, options_.limits.call_timeout_s + 5, &m));
  if (!ok) return Status::Internal("the reference of task " + task.name + " failed to run");
  size_t offset = 0;
  for (size_t o = 0; o < task.outputs.size(); ++o) {
    const TensorSpec& s = task.outputs[o];
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(s, dims));
    const size_t n = want[o].size() * static_cast<size_t>(DtypeSize(s.dtype));
    const OutputCheck oc = CheckOutput(
        s.dtype, m.blob.substr(std::min(offset, m.blob.size()), n), want[o],
        ToleranceFor(task, s.dtype), shape);
    offset += n;
    if (oc.unwritten > 0 || oc.mismatches > 0) {
      return Status::Internal(
          "the reference of task " + task.name + " disagrees with its oracle at " +
          json(dims).dump() + ": " + std::to_string(oc.mismatches) +
          " mismatches, " + std::to_string(oc.unwritten) + " unwritten" +
          (oc.examples.empty() ? "" : "; " + oc.examples.front()));
    }
  }
  return true;
}

Result<bool> TaskVerifierImpl::CheckTimingShape(Job* job, int trial) {
  const Task& task = job->task->task;
  const Dims& dims = TimingDims(task, options_.backend);
  json outputs;
  SKILLDB_ASSIGN_OR_RETURN(
      json in_layout,
      LayoutJson(task, dims, trial, options_.device_tolerance_factor, &outputs));
  const json header = {{"op", "full"}, {"inputs", in_layout}, {"outputs", outputs},
                       {"seed", SplitMix64(job->seed ^ (0xf011ull + static_cast<uint64_t>(trial)))}};
  Message m;
  SKILLDB_ASSIGN_OR_RETURN(
      bool ok, CallWorker(job, header, {}, 3 * options_.limits.call_timeout_s + 10, &m));
  if (!ok) return false;
  const bool cuda = options_.backend == Backend::kCuda;
  CallFindings(job, m.header["call"], cuda);
  LateFindings(job, m.header);
  CorrectnessResult& c = job->out.report.correctness;
  ++c.trials;
  const std::string where = "at the timing shape " + json(dims).dump() +
                            " with " + DistText(task, trial) +
                            " inputs, compared with the device reference";
  const json& outs = m.header["outputs"];
  for (size_t o = 0; o < task.outputs.size() && o < outs.size(); ++o) {
    const int64_t unwritten = outs[o].value("unwritten", int64_t{0});
    const int64_t bad = outs[o].value("mismatches", int64_t{0});
    c.max_abs_error = std::max(c.max_abs_error, outs[o].value("max_abs", 0.0));
    if (unwritten > 0) {
      job->Add(FindingCode::kUnwrittenOutput,
               std::to_string(unwritten) + " elements of output '" +
                   task.outputs[o].name + "' were never written " + where);
    }
    if (bad > 0) {
      const std::string ex = "first at flat index " +
                             std::to_string(outs[o].value("first_bad", int64_t{-1})) +
                             ": " + Num(outs[o].value("first_got", 0.0)) +
                             " vs " + Num(outs[o].value("first_want", 0.0));
      AddExamples(&c, {ex});
      job->Add(FindingCode::kWrongOutput,
               std::to_string(bad) + " elements of output '" +
                   task.outputs[o].name + "' are outside tolerance " + where +
                   " (" + ex + ")");
    }
  }
  if (m.header.value("inputs_modified", false)) {
    job->Add(FindingCode::kInputsModified,
             "the candidate modified its input tensors " + where);
  }
  if (!m.header.value("guard_ok", true)) {
    job->Add(FindingCode::kOutOfBoundsWrite,
             "the candidate wrote outside its output tensors " + where);
  }
  return !job->failed();
}

Result<bool> TaskVerifierImpl::RunRounds(Job* job,
                                         std::vector<RoundSamples>* samples) {
  const Task& task = job->task->task;
  const Dims& dims = TimingDims(task, options_.backend);
  const int timed = job->request->timed_calls_per_round;
  const int warmup = options_.warmup_calls;
  const bool cuda = options_.backend == Backend::kCuda;
  json outputs;
  SKILLDB_ASSIGN_OR_RETURN(
      json in_layout,
      LayoutJson(task, dims, 0, options_.device_tolerance_factor, &outputs));
  for (int r = 0; r < job->request->rounds; ++r) {
    std::vector<int> order(static_cast<size_t>(warmup + timed));
    for (int& o : order) o = static_cast<int>(job->rng() & 1);
    std::vector<int> all(static_cast<size_t>(timed));
    for (int i = 0; i < timed; ++i) all[static_cast<size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), job->rng);
    all.resize(std::min<size_t>(all.size(),
                                static_cast<size_t>(options_.spot_checks_per_round)));
    const json header = {{"op", "round"},
                         {"inputs", in_layout},
                         {"outputs", outputs},
                         {"seed", job->rng()},
                         {"warmup", warmup},
                         {"timed", timed},
                         {"order", order},
                         {"rotate", options_.rotate_buffers},
                         {"spot", all},
                         {"flush", true}};
    Message m;
    SKILLDB_ASSIGN_OR_RETURN(
        bool ok, CallWorker(job, header, {},
                            2 * options_.limits.call_timeout_s + 10, &m));
    if (!ok) return false;
    const json& h = m.header;
    RoundSamples s;
    s.baseline_ms = h.value("base_ms", std::vector<double>{});
    s.candidate_ms = h.value("cand_ms", std::vector<double>{});
    s.baseline_host_ms = h.value("base_host_ms", std::vector<double>{});
    s.candidate_host_ms = h.value("cand_host_ms", std::vector<double>{});
    samples->push_back(std::move(s));
    json call = {{"rc", 0},
                 {"foreign", h.value("foreign", 0)},
                 {"foreign_detail", h.value("foreign_detail", std::string())},
                 {"alloc_denied", h.value("alloc_denied", false)},
                 {"kernels", h.value("zero_kernel_calls", 0) > 0 ? 0 : 1}};
    CallFindings(job, call, cuda);
    LateFindings(job, h);
    for (const json& spot : h.value("spot", json::array())) {
      const int64_t bad = spot.value("mismatches", int64_t{0}) +
                          spot.value("unwritten", int64_t{0});
      if (bad > 0) {
        job->Add(FindingCode::kInconsistentResults,
                 "timed call " + std::to_string(spot.value("index", 0)) +
                     " of round " + std::to_string(r + 1) + " produced " +
                     std::to_string(bad) +
                     " elements that differ from the reference on the same "
                     "inputs: results during timing are not what was checked");
      }
      if (spot.value("inputs_modified", false)) {
        job->Add(FindingCode::kInputsModified,
                 "a timed call modified its inputs (round " +
                     std::to_string(r + 1) + ")");
      }
    }
    if (job->failed()) return false;
  }
  return true;
}

std::optional<double> TaskVerifierImpl::RooflineFloorMs(const Job& job) const {
  const Task& task = job.task->task;
  const Dims& dims = TimingDims(task, options_.backend);
  auto flops = TaskFlops(task, dims);
  auto bytes = TaskBytes(task, dims);
  const DeviceDescription& d = job.slot->device;
  if (!flops.ok() || !bytes.ok() || d.bandwidth_bytes_per_s <= 0 ||
      d.fp32_flops_per_s <= 0) {
    return std::nullopt;
  }
  // Datasheet peaks (dense) for the SXM parts; a bound must never be
  // below what hardware can do, so the larger of measured and datasheet.
  double sheet_bw = 0, sheet_fp32 = 0, sheet_tf32 = 0, sheet_bf16 = 0;
  if (d.name.find("H200") != std::string::npos) {
    sheet_bw = 4.8e12, sheet_fp32 = 67e12, sheet_tf32 = 495e12, sheet_bf16 = 989e12;
  } else if (d.name.find("H100") != std::string::npos) {
    sheet_bw = 3.35e12, sheet_fp32 = 67e12, sheet_tf32 = 495e12, sheet_bf16 = 989e12;
  }
  double bw, fp32, tf32, bf16;
  if (options_.backend == Backend::kCuda) {
    bw = std::max(d.bandwidth_bytes_per_s, sheet_bw);
    fp32 = std::max(d.fp32_flops_per_s, sheet_fp32);
    tf32 = std::max(fp32 * 8, sheet_tf32);
    bf16 = std::max(fp32 * 16, sheet_bf16);
  } else {
    // The host measurement is one scalar FMA stream per core and one
    // memcpy on a machine that may be shared: caches, SIMD and a quieter
    // moment can beat both, hence the generous slack (the bound is a
    // sanity check against impossible timings, not a performance model).
    bw = d.bandwidth_bytes_per_s * 8;
    fp32 = tf32 = bf16 = d.fp32_flops_per_s * 16;
  }
  double peak = fp32;
  if (task.compute_class == ComputeClass::kTensorTf32) peak = tf32;
  if (task.compute_class == ComputeClass::kTensorBf16) peak = bf16;
  const double f = options_.roofline_peak_factor;
  const double s = std::max(*flops / (peak * f), *bytes / (bw * f));
  return s * 1e3;
}

void TaskVerifierImpl::Decide(Job* job, const std::vector<RoundSamples>& samples) {
  std::vector<double> base;
  for (const RoundSamples& s : samples) {
    base.insert(base.end(), s.baseline_ms.begin(), s.baseline_ms.end());
  }
  std::optional<double> bound;
  job->out.roofline_floor_ms = RooflineFloorMs(*job);
  if (job->out.roofline_floor_ms && *job->out.roofline_floor_ms > 0 && !base.empty()) {
    bound = Median(base) / *job->out.roofline_floor_ms;
  }
  DecisionOptions d = options_.decision;
  Decision decision = verify::Decide(samples, d, bound, job->seed);
  VerificationReport& rep = job->out.report;
  rep.rounds = std::move(decision.rounds);
  rep.speedup = decision.estimate;
  rep.max_plausible_speedup = bound;
  for (Finding& f : decision.findings) job->Add(f.code, std::move(f.message));
}

}  // namespace skilldb::verify::internal
