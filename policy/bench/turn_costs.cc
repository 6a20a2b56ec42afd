// skilldb_policy_bench: where a Policy Agent turn spends its time, and how
// many turns a rollout pool completes per minute, with a scripted LLM.
//
// Everything but the model is real: a library of the seed skills (the
// engine), BM25 selection (optionally with the listwise reranker asking the
// scripted model), prompts, the OpenAI-compatible HTTP client talking to the
// scripted protocol server in process, extraction, the verifier (host or
// CUDA backend) and the SQLite rollout store. Each rollout of a task answers
// turn 1 with the team's wrong candidate (compiles, runs, fails the check)
// and turn 2 with its fast candidate (compile, correctness, timing), so a
// turn's split covers every phase. By default each extracted source gets a
// unique comment so every compile misses the cache, as distinct model
// outputs would (--cached-sources turns that off).
//
//   skilldb_policy_bench --backend host --concurrency 1,8 --out turns.json
//
// Prints one JSON object: per concurrency level, the mean per-turn split
// (retrieval, rerank, generation, compile, correctness, timing, verify wall,
// total) and the pool's counters (turns per minute, per verifier worker),
// plus the comparison with a real model's generation time at
// --decode-tokens-per-s for the completions' token counts.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "scripted_llm_server.h"
#include "skilldb/library.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/policy/policy_agent.h"
#include "skilldb/policy/rollout_pool.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/rerank/listwise.h"
#include "build_paths.h"

namespace skilldb::policy::bench {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

struct Args {
  std::string backend = "host";
  std::vector<std::string> tasks;
  std::vector<int> concurrency = {1, 8, 64};
  int rollouts_per_level = 0;  // 0 = the level's concurrency
  int turns = 2;
  int samples = 1;
  int workers = 0;
  std::string rerank = "none";
  bool distinct_sources = true;
  double decode_tokens_per_s = 60;
  std::string out;
  std::string seed_dir = SKILLDB_SEED_DIR;
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--backend")
      a->backend = value();
    else if (k == "--tasks")
      a->tasks = Split(value());
    else if (k == "--concurrency") {
      a->concurrency.clear();
      for (const std::string& c : Split(value()))
        a->concurrency.push_back(std::stoi(c));
    } else if (k == "--rollouts")
      a->rollouts_per_level = std::stoi(value());
    else if (k == "--turns")
      a->turns = std::stoi(value());
    else if (k == "--samples")
      a->samples = std::stoi(value());
    else if (k == "--workers")
      a->workers = std::stoi(value());
    else if (k == "--rerank")
      a->rerank = value();
    else if (k == "--cached-sources")
      a->distinct_sources = false;
    else if (k == "--decode-tokens-per-s")
      a->decode_tokens_per_s = std::stod(value());
    else if (k == "--out")
      a->out = value();
    else if (k == "--seed")
      a->seed_dir = value();
    else {
      std::cerr << "unknown argument " << k << "\n";
      return false;
    }
  }
  if (a->tasks.empty()) {
    a->tasks =
        a->backend == "cuda"
            ? std::vector<std::string>{"softmax_rows_fp32", "sum_dim1_fp32",
                                       "matmul_fp32", "layernorm_fp32"}
            : std::vector<std::string>{"sum_dim1_fp32", "softmax_rows_fp32",
                                       "matmul_fp32"};
  }
  return true;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Gives every extracted source a unique trailing comment (distinct model
// outputs never share a compile-cache entry).
class DistinctExtractor : public CompletionExtractor {
 public:
  Result<Extraction> Extract(const PolicyTask& task,
                             std::string_view completion) const override {
    SKILLDB_ASSIGN_OR_RETURN(Extraction e, inner_.Extract(task, completion));
    if (e.found) {
      const auto now =
          std::chrono::steady_clock::now().time_since_epoch().count();
      e.source += "// bench sample " + std::to_string(next_++) + " " +
                  std::to_string(now) + "\n";
    }
    return e;
  }

 private:
  CodeExtractor inner_;
  mutable std::atomic<uint64_t> next_{0};
};

Status LoadSeed(const std::string& dir, Library* lib) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Skill> skills;
  for (const fs::path& f : files) {
    std::stringstream lines(ReadText(f.string()));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      SKILLDB_ASSIGN_OR_RETURN(Skill s, ParseSkillJson(line));
      skills.push_back(std::move(s));
    }
  }
  return lib->PutMany(skills).status();
}

std::string Fence(const std::string& source, const std::string& marker) {
  return "Attempt.\n```\n" + marker + "\n" + source + "\n```\n";
}

// Turn 1: the wrong candidate (marked); turn 2 (whose prompt repeats the
// marked answer): the fast one. Queued per task, reranker answers first.
void Script(scripted::ScriptedLlmServer& server, const Args& a,
            const std::vector<PolicyTask>& tasks) {
  scripted::ScriptedReply rank = scripted::TextReply({"[2] > [1] > [3]"});
  rank.prompt_contains = "You are RankGPT";
  rank.times = -1;
  server.Add(rank);
  const std::string ext = a.backend == "cuda" ? ".cu" : ".cc";
  const std::string fast_file = "fast" + ext;
  const std::string wrong_file = "wrong" + ext;
  for (const PolicyTask& t : tasks) {
    const std::string dir = t.task.dir + "/candidates/";
    const std::string marker = "// attempt 1 for " + t.task.name;
    scripted::ScriptedReply fast =
        scripted::TextReply({Fence(ReadText(dir + fast_file), "// attempt 2")});
    fast.prompt_contains = marker;
    fast.times = -1;
    server.Add(fast);
    scripted::ScriptedReply wrong =
        scripted::TextReply({Fence(ReadText(dir + wrong_file), marker)});
    wrong.prompt_contains = "Task `" + t.task.name + "`";
    wrong.times = -1;
    server.Add(wrong);
  }
}

Json MeanSplit(const std::vector<Result<Trajectory>>& results,
               double tokens_per_s) {
  TurnTimes sum;
  size_t turns = 0, samples = 0, cache_hits = 0;
  double completion_tokens = 0;
  std::vector<double> totals;
  for (const auto& r : results) {
    if (!r.ok()) continue;
    for (const TurnRecord& t : r->turns) {
      ++turns;
      sum.retrieval_ms += t.times.retrieval_ms;
      sum.rerank_ms += t.times.rerank_ms;
      sum.prompt_ms += t.times.prompt_ms;
      sum.generation_ms += t.times.generation_ms;
      sum.extraction_ms += t.times.extraction_ms;
      sum.compile_ms += t.times.compile_ms;
      sum.correctness_ms += t.times.correctness_ms;
      sum.timing_ms += t.times.timing_ms;
      sum.verify_wall_ms += t.times.verify_wall_ms;
      sum.usage_ms += t.times.usage_ms;
      sum.total_ms += t.times.total_ms;
      totals.push_back(t.times.total_ms);
      for (const SampleRecord& s : t.samples) {
        ++samples;
        cache_hits += s.times.compile_cache_hit;
        completion_tokens += s.generation.completion_token_ids.size();
      }
    }
  }
  const double n = std::max<size_t>(turns, 1);
  std::sort(totals.begin(), totals.end());
  const double tokens_per_turn = completion_tokens / n;
  const double non_generation = (sum.total_ms - sum.generation_ms) / n;
  return Json{
      {"turns", turns},
      {"samples", samples},
      {"retrieval_ms", sum.retrieval_ms / n},
      {"rerank_ms", sum.rerank_ms / n},
      {"prompt_ms", sum.prompt_ms / n},
      {"generation_ms", sum.generation_ms / n},
      {"extraction_ms", sum.extraction_ms / n},
      {"compile_ms", sum.compile_ms / n},
      {"compile_cache_hits", cache_hits},
      {"correctness_ms", sum.correctness_ms / n},
      {"timing_ms", sum.timing_ms / n},
      {"verify_wall_ms", sum.verify_wall_ms / n},
      {"usage_ms", sum.usage_ms / n},
      {"total_ms", sum.total_ms / n},
      {"total_p50_ms", totals.empty() ? 0.0 : totals[totals.size() / 2]},
      {"non_generation_ms", non_generation},
      {"completion_tokens_per_turn", tokens_per_turn},
      {"real_model_generation_ms", tokens_per_turn / tokens_per_s * 1000.0}};
}

int Main(int argc, char** argv) {
  Args a;
  if (!ParseArgs(argc, argv, &a)) return 2;
  auto die = [](const Status& st) {
    std::cerr << "skilldb_policy_bench: " << st.ToString() << "\n";
    return 1;
  };
  auto backend = verify::ParseBackend(a.backend);
  if (!backend.ok()) return die(backend.status());
  verify::VerifierOptions vo = verify::DefaultOptions(*backend);
  if (a.workers > 0) vo.host_workers = a.workers;
  auto verifier = verify::MakeVerifier(vo);
  if (!verifier.ok()) return die(verifier.status());
  auto device = (*verifier)->Describe();
  if (!device.ok()) return die(device.status());
  std::vector<PolicyTask> tasks;
  for (const std::string& name : a.tasks) {
    auto t = LoadPolicyTask(vo, name);
    if (!t.ok()) return die(t.status());
    tasks.push_back(std::move(*t));
  }
  const fs::path tmp = fs::temp_directory_path() /
                       ("skilldb-policy-bench-" + std::to_string(getpid()));
  fs::create_directories(tmp);
  Options lo;
  lo.create_if_missing = true;
  lo.sync_commits = false;
  lo.field_weights = kSkillLibraryWeights;
  auto lib = Library::Open(lo, (tmp / "lib").string());
  if (!lib.ok()) return die(lib.status());
  if (Status st = LoadSeed(a.seed_dir, lib->get()); !st.ok()) return die(st);
  auto store = RolloutStore::Open((tmp / "rollouts.sqlite").string());
  if (!store.ok()) return die(store.status());

  scripted::ServerOptions so;
  so.threads = 128;
  so.protocol.max_model_len = 65536;
  auto server = scripted::ScriptedLlmServer::Start(so);
  if (!server.ok()) return die(server.status());
  Script(**server, a, tasks);
  llm::ClientConfig cc;
  cc.base_url = (*server)->base_url();
  cc.model = "scripted-model";
  cc.request_token_ids = true;
  cc.max_in_flight = 128;
  auto client = llm::OpenAiClient::Create(cc);
  if (!client.ok()) return die(client.status());

  SelectionOptions sel;
  std::unique_ptr<Reranker> reranker;
  std::unique_ptr<SkillSelector> selector;
  if (a.rerank == "listwise") {
    auto r = rerank::MakeListwiseReranker(client->get(), {}, {});
    if (!r.ok()) return die(r.status());
    reranker = std::move(*r);
    selector =
        std::make_unique<RerankingSelector>(lib->get(), reranker.get(), sel);
  } else {
    selector = std::make_unique<Bm25Selector>(lib->get(), sel);
  }
  DistinctExtractor distinct;
  PolicyAgentDeps deps;
  deps.backbone = client->get();
  deps.selector = selector.get();
  deps.verifier = verifier->get();
  deps.library = lib->get();
  deps.store = store->get();
  if (a.distinct_sources) deps.extractor = &distinct;
  auto agent = PolicyAgent::Make(deps);
  if (!agent.ok()) return die(agent.status());

  Json out{{"backend", a.backend},
           {"device", device->name},
           {"device_class", device->device_class},
           {"verifier_workers", device->devices},
           {"tasks", a.tasks},
           {"turns", a.turns},
           {"samples", a.samples},
           {"rerank", a.rerank},
           {"distinct_sources", a.distinct_sources},
           {"decode_tokens_per_s", a.decode_tokens_per_s},
           {"levels", Json::array()}};
  for (int c : a.concurrency) {
    std::vector<RolloutJob> jobs;
    const int n = a.rollouts_per_level > 0 ? a.rollouts_per_level : c;
    for (int i = 0; i < n; ++i) {
      RolloutJob job{&tasks[i % tasks.size()], PolicyOptions()};
      job.options.max_turns = a.turns;
      job.options.samples = a.samples;
      job.options.group = "bench-c" + std::to_string(c);
      jobs.push_back(job);
    }
    PoolOptions po;
    po.concurrency = c;
    po.workers = device->devices;
    auto result = RolloutPool(agent->get(), po).Run(jobs);
    if (!result.ok()) return die(result.status());
    Json level{{"concurrency", c},
               {"rollouts", n},
               {"per_turn", MeanSplit(result->results, a.decode_tokens_per_s)},
               {"pool", Json::parse(ToJson(result->counters))}};
    std::cerr << "concurrency " << c << ": "
              << level["pool"]["turns_per_minute_per_worker"]
              << " turns/min/worker\n";
    out["levels"].push_back(level);
    // Written after every level, so a run cut short keeps what it measured.
    if (!a.out.empty()) std::ofstream(a.out) << out.dump(2) << "\n";
  }
  std::cout << out.dump(2) << "\n";
  lib->reset();
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}

}  // namespace
}  // namespace skilldb::policy::bench

int main(int argc, char** argv) {
  return skilldb::policy::bench::Main(argc, argv);
}
