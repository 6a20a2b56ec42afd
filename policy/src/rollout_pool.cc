#include "skilldb/policy/rollout_pool.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "json_io.h"
#include "skilldb/util/parallel.h"

namespace skilldb::policy {
namespace {

void AddTimes(const TurnTimes& t, TurnTimes* sum) {
  sum->retrieval_ms += t.retrieval_ms;
  sum->rerank_ms += t.rerank_ms;
  sum->prompt_ms += t.prompt_ms;
  sum->generation_ms += t.generation_ms;
  sum->extraction_ms += t.extraction_ms;
  sum->compile_ms += t.compile_ms;
  sum->correctness_ms += t.correctness_ms;
  sum->timing_ms += t.timing_ms;
  sum->verify_wall_ms += t.verify_wall_ms;
  sum->usage_ms += t.usage_ms;
  sum->total_ms += t.total_ms;
}

void Count(const Result<Trajectory>& r, PoolCounters* c) {
  ++c->jobs;
  if (!r.ok()) {
    ++c->errors;
    return;
  }
  ++c->trajectories;
  if (r->status == "failed") ++c->failed;
  if (r->solved) ++c->solved;
  for (const TurnRecord& turn : r->turns) {
    ++c->turns;
    AddTimes(turn.times, &c->time);
    for (const SampleRecord& s : turn.samples) {
      ++c->samples;
      if (s.report) ++c->verified;
    }
  }
}

void Rates(PoolCounters* c) {
  const double minutes = c->wall_ms / 60000.0;
  if (minutes <= 0) return;
  c->turns_per_minute = c->turns / minutes;
  c->turns_per_minute_per_worker = c->turns_per_minute / c->workers;
  c->samples_per_minute = c->samples / minutes;
  c->verifications_per_minute = c->verified / minutes;
}

}  // namespace

std::string ToJson(const PoolCounters& c) {
  internal::Json time = internal::ParseJson(ToJson(c.time), "times").value();
  return internal::Dump(internal::Json{
      {"jobs", c.jobs},
      {"trajectories", c.trajectories},
      {"failed", c.failed},
      {"errors", c.errors},
      {"solved", c.solved},
      {"turns", c.turns},
      {"samples", c.samples},
      {"verified", c.verified},
      {"prompt_tokens", c.prompt_tokens},
      {"completion_tokens", c.completion_tokens},
      {"wall_ms", c.wall_ms},
      {"time_ms", time},
      {"workers", c.workers},
      {"turns_per_minute", c.turns_per_minute},
      {"turns_per_minute_per_worker", c.turns_per_minute_per_worker},
      {"samples_per_minute", c.samples_per_minute},
      {"verifications_per_minute", c.verifications_per_minute}});
}

Result<PoolResult> RolloutPool::Run(const std::vector<RolloutJob>& jobs) {
  if (options_.concurrency < 1) {
    return Status::InvalidArgument("pool concurrency must be at least 1");
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].task == nullptr) {
      return Status::InvalidArgument("rollout job " + std::to_string(i) +
                                     " has no task");
    }
  }
  PoolResult out;
  out.results.assign(jobs.size(), Status::Internal("job did not run"));
  llm::Backbone* backbone = agent_->deps().backbone;
  const llm::TokenUsage before = backbone->Usage();
  const auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      out.results[i] = agent_->Solve(*jobs[i].task, jobs[i].options);
      if (options_.on_done) options_.on_done(i, out.results[i]);
    }
  };
  util::RunOnThreads(
      std::min(static_cast<size_t>(options_.concurrency), jobs.size()), work);
  PoolCounters& c = out.counters;
  c.wall_ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  const llm::TokenUsage after = backbone->Usage();
  c.prompt_tokens = after.prompt_tokens - before.prompt_tokens;
  c.completion_tokens = after.completion_tokens - before.completion_tokens;
  c.workers = options_.workers > 0 ? options_.workers : 1;
  for (const Result<Trajectory>& r : out.results) Count(r, &c);
  Rates(&c);
  return out;
}

}  // namespace skilldb::policy
