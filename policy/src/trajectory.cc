#include "skilldb/policy/trajectory.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "json_io.h"
#include "skilldb/json.h"

namespace skilldb::policy {
namespace {

using internal::Json;
using internal::ParseJson;
using internal::Reader;

constexpr std::pair<SampleVerdict, const char*> kVerdictNames[] = {
    {SampleVerdict::kFaster, "faster"},
    {SampleVerdict::kNotFaster, "not_faster"},
    {SampleVerdict::kWrong, "wrong"},
    {SampleVerdict::kCompileError, "compile_error"},
    {SampleVerdict::kLoadError, "load_error"},
    {SampleVerdict::kRuntimeError, "runtime_error"},
    {SampleVerdict::kHack, "hack"},
    {SampleVerdict::kNoCode, "no_code"},
    {SampleVerdict::kTooLarge, "too_large"},
    {SampleVerdict::kVerifierError, "verifier_error"},
};

Json RefJson(const SkillRef& r) {
  return Json{{"id", r.id},
              {"revision", r.revision},
              {"title", r.title},
              {"bm25_score", r.bm25_score},
              {"bm25_rank", r.bm25_rank},
              {"score", r.score}};
}

Result<SkillRef> RefFromJson(const Json& j) {
  SkillRef r;
  Reader in(j, "skill_ref");
  SKILLDB_RETURN_IF_ERROR(in.String("id", &r.id));
  SKILLDB_RETURN_IF_ERROR(in.Uint64("revision", &r.revision));
  SKILLDB_RETURN_IF_ERROR(in.String("title", &r.title));
  SKILLDB_RETURN_IF_ERROR(in.Double("bm25_score", &r.bm25_score));
  SKILLDB_RETURN_IF_ERROR(in.Size("bm25_rank", &r.bm25_rank));
  SKILLDB_RETURN_IF_ERROR(in.Double("score", &r.score));
  return r;
}

Result<std::vector<SkillRef>> RefsFromJson(const Reader& in, const char* key) {
  std::vector<SkillRef> out;
  const Json* v = in.Find(key);
  if (v == nullptr) return out;
  if (!v->is_array()) return in.WrongType(key, "an array");
  for (const Json& e : *v) {
    SKILLDB_ASSIGN_OR_RETURN(SkillRef r, RefFromJson(e));
    out.push_back(std::move(r));
  }
  return out;
}

Json Parsed(const std::string& compact) {
  return Json::parse(compact, nullptr, /*allow_exceptions=*/false);
}

Json SelectionJson(const SelectionRecord& s) {
  Json retrieved = Json::array(), selected = Json::array(),
       gens = Json::array();
  for (const SkillRef& r : s.retrieved) retrieved.push_back(RefJson(r));
  for (const SkillRef& r : s.selected) selected.push_back(RefJson(r));
  for (const GenerationRecord& g : s.generations)
    gens.push_back(Parsed(skilldb::ToJson(g)));
  return Json{{"query", s.query},
              {"library_version", s.library_version},
              {"retrieved", retrieved},
              {"selected", selected},
              {"reranked", s.reranked},
              {"rerank_mode", s.rerank_mode},
              {"rerank_reason", s.rerank_reason},
              {"generations", gens},
              {"reused", s.reused}};
}

Result<GenerationRecord> GenerationFromJson(const Json& j) {
  return FromJson<GenerationRecord>(internal::Dump(j));
}

Result<SelectionRecord> SelectionFrom(const Json& j) {
  SelectionRecord s;
  Reader in(j, "selection");
  SKILLDB_RETURN_IF_ERROR(in.String("query", &s.query));
  SKILLDB_RETURN_IF_ERROR(in.Uint64("library_version", &s.library_version));
  SKILLDB_ASSIGN_OR_RETURN(s.retrieved, RefsFromJson(in, "retrieved"));
  SKILLDB_ASSIGN_OR_RETURN(s.selected, RefsFromJson(in, "selected"));
  SKILLDB_RETURN_IF_ERROR(in.Bool("reranked", &s.reranked));
  SKILLDB_RETURN_IF_ERROR(in.String("rerank_mode", &s.rerank_mode));
  SKILLDB_RETURN_IF_ERROR(in.String("rerank_reason", &s.rerank_reason));
  SKILLDB_RETURN_IF_ERROR(in.Bool("reused", &s.reused));
  if (const Json* gens = in.Find("generations")) {
    if (!gens->is_array()) return in.WrongType("generations", "an array");
    for (const Json& g : *gens) {
      SKILLDB_ASSIGN_OR_RETURN(GenerationRecord r, GenerationFromJson(g));
      s.generations.push_back(std::move(r));
    }
  }
  return s;
}

Json SampleTimesJson(const SampleTimes& t) {
  return Json{{"compile_ms", t.compile_ms},
              {"correctness_ms", t.correctness_ms},
              {"timing_ms", t.timing_ms},
              {"verify_ms", t.verify_ms},
              {"compile_cache_hit", t.compile_cache_hit}};
}

Status SampleTimesFrom(const Json& j, SampleTimes* t) {
  Reader in(j, "sample.times");
  SKILLDB_RETURN_IF_ERROR(in.Double("compile_ms", &t->compile_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("correctness_ms", &t->correctness_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("timing_ms", &t->timing_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("verify_ms", &t->verify_ms));
  return in.Bool("compile_cache_hit", &t->compile_cache_hit);
}

Json SampleJson(const SampleRecord& s) {
  Json j{{"index", s.index},
         {"generation", Parsed(skilldb::ToJson(s.generation))},
         {"finish_reason", s.finish_reason},
         {"extraction", s.extraction},
         {"source", s.source},
         {"language", s.language},
         {"verdict", SampleVerdictName(s.verdict)},
         {"findings", s.findings},
         {"times", SampleTimesJson(s.times)},
         {"reward", s.reward},
         {"feedback", s.feedback}};
  if (s.report) j["report"] = Parsed(ReportToJson(*s.report));
  return j;
}

Result<SampleRecord> SampleFrom(const Json& j) {
  SampleRecord s;
  Reader in(j, "sample");
  SKILLDB_RETURN_IF_ERROR(in.Int("index", &s.index));
  if (const Json* g = in.Find("generation")) {
    SKILLDB_ASSIGN_OR_RETURN(s.generation, GenerationFromJson(*g));
  }
  SKILLDB_RETURN_IF_ERROR(in.String("finish_reason", &s.finish_reason));
  SKILLDB_RETURN_IF_ERROR(in.String("extraction", &s.extraction));
  SKILLDB_RETURN_IF_ERROR(in.String("source", &s.source));
  SKILLDB_RETURN_IF_ERROR(in.String("language", &s.language));
  std::string verdict = "no_code";
  SKILLDB_RETURN_IF_ERROR(in.String("verdict", &verdict));
  SKILLDB_ASSIGN_OR_RETURN(s.verdict, ParseSampleVerdict(verdict));
  SKILLDB_RETURN_IF_ERROR(in.Strings("findings", &s.findings));
  if (const Json* t = in.Find("times")) {
    SKILLDB_RETURN_IF_ERROR(SampleTimesFrom(*t, &s.times));
  }
  SKILLDB_RETURN_IF_ERROR(in.Double("reward", &s.reward));
  SKILLDB_RETURN_IF_ERROR(in.String("feedback", &s.feedback));
  if (const Json* r = in.Find("report")) {
    SKILLDB_ASSIGN_OR_RETURN(VerificationReport report,
                             ReportFromJson(internal::Dump(*r)));
    s.report = std::move(report);
  }
  return s;
}

Json TimesJson(const TurnTimes& t) {
  return Json{{"retrieval_ms", t.retrieval_ms},
              {"rerank_ms", t.rerank_ms},
              {"prompt_ms", t.prompt_ms},
              {"generation_ms", t.generation_ms},
              {"extraction_ms", t.extraction_ms},
              {"compile_ms", t.compile_ms},
              {"correctness_ms", t.correctness_ms},
              {"timing_ms", t.timing_ms},
              {"verify_wall_ms", t.verify_wall_ms},
              {"usage_ms", t.usage_ms},
              {"total_ms", t.total_ms}};
}

Result<TurnTimes> TimesFrom(const Json& j) {
  TurnTimes t;
  Reader in(j, "times");
  SKILLDB_RETURN_IF_ERROR(in.Double("retrieval_ms", &t.retrieval_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("rerank_ms", &t.rerank_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("prompt_ms", &t.prompt_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("generation_ms", &t.generation_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("extraction_ms", &t.extraction_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("compile_ms", &t.compile_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("correctness_ms", &t.correctness_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("timing_ms", &t.timing_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("verify_wall_ms", &t.verify_wall_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("usage_ms", &t.usage_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("total_ms", &t.total_ms));
  return t;
}

Json TurnJson(const TurnRecord& t) {
  Json samples = Json::array();
  for (const SampleRecord& s : t.samples) samples.push_back(SampleJson(s));
  return Json{{"turn", t.turn},     {"selection", SelectionJson(t.selection)},
              {"samples", samples}, {"best_sample", t.best_sample},
              {"reward", t.reward}, {"times", TimesJson(t.times)}};
}

Result<TurnRecord> TurnFrom(const Json& j) {
  TurnRecord t;
  Reader in(j, "turn");
  SKILLDB_RETURN_IF_ERROR(in.Int("turn", &t.turn));
  if (const Json* s = in.Find("selection")) {
    SKILLDB_ASSIGN_OR_RETURN(t.selection, SelectionFrom(*s));
  }
  if (const Json* samples = in.Find("samples")) {
    if (!samples->is_array()) return in.WrongType("samples", "an array");
    for (const Json& s : *samples) {
      SKILLDB_ASSIGN_OR_RETURN(SampleRecord r, SampleFrom(s));
      t.samples.push_back(std::move(r));
    }
  }
  SKILLDB_RETURN_IF_ERROR(in.Int("best_sample", &t.best_sample));
  SKILLDB_RETURN_IF_ERROR(in.Double("reward", &t.reward));
  if (const Json* times = in.Find("times")) {
    SKILLDB_ASSIGN_OR_RETURN(t.times, TimesFrom(*times));
  }
  return t;
}

}  // namespace

bool operator==(const SampleRecord& a, const SampleRecord& b) {
  auto report = [](const SampleRecord& s) {
    return s.report ? ReportToJson(*s.report) : std::string();
  };
  return a.index == b.index && a.generation == b.generation &&
         a.finish_reason == b.finish_reason && a.extraction == b.extraction &&
         a.source == b.source && a.language == b.language &&
         a.verdict == b.verdict && a.findings == b.findings &&
         a.report.has_value() == b.report.has_value() &&
         report(a) == report(b) && a.times == b.times && a.reward == b.reward &&
         a.feedback == b.feedback;
}

std::string_view SampleVerdictName(SampleVerdict verdict) {
  for (const auto& [v, name] : kVerdictNames) {
    if (v == verdict) return name;
  }
  return "unknown";
}

Result<SampleVerdict> ParseSampleVerdict(std::string_view name) {
  std::string accepted;
  for (const auto& [v, n] : kVerdictNames) {
    if (name == n) return v;
    accepted += accepted.empty() ? n : std::string(", ") + n;
  }
  return Status::InvalidArgument("unknown sample verdict '" +
                                 std::string(name) + "' (expected one of " +
                                 accepted + ")");
}

const SampleRecord* BestSample(const Trajectory& t) {
  if (t.best_turn < 0 || t.best_turn >= static_cast<int>(t.turns.size()))
    return nullptr;
  const TurnRecord& turn = t.turns[t.best_turn];
  if (t.best_sample < 0 ||
      t.best_sample >= static_cast<int>(turn.samples.size()))
    return nullptr;
  return &turn.samples[t.best_sample];
}

const TurnRecord* BestTurn(const Trajectory& t) {
  return BestSample(t) == nullptr ? nullptr : &t.turns[t.best_turn];
}

std::string NewTrajectoryId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  char buf[48];
  std::snprintf(buf, sizeof(buf), "t-%llx-%08llx",
                static_cast<unsigned long long>(now),
                static_cast<unsigned long long>(rng() & 0xffffffffull));
  return buf;
}

std::string ToJson(const SkillRef& ref) { return internal::Dump(RefJson(ref)); }
std::string ToJson(const SelectionRecord& s) {
  return internal::Dump(SelectionJson(s));
}
std::string ToJson(const SampleTimes& t) {
  return internal::Dump(SampleTimesJson(t));
}
Result<SampleTimes> SampleTimesFromJson(std::string_view json) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, ParseJson(json, "sample.times"));
  SampleTimes t;
  SKILLDB_RETURN_IF_ERROR(SampleTimesFrom(j, &t));
  return t;
}
std::string ToJson(const SampleRecord& s) {
  return internal::Dump(SampleJson(s));
}
std::string ToJson(const TurnTimes& t) { return internal::Dump(TimesJson(t)); }
std::string ToJson(const TurnRecord& t) { return internal::Dump(TurnJson(t)); }

std::string ToJson(const Trajectory& t) {
  Json turns = Json::array();
  for (const TurnRecord& turn : t.turns) turns.push_back(TurnJson(turn));
  return internal::Dump(Json{{"id", t.id},
                             {"group", t.group},
                             {"task", t.task},
                             {"backend", t.backend},
                             {"model", t.model},
                             {"library_version", t.library_version},
                             {"max_turns", t.max_turns},
                             {"samples_per_turn", t.samples_per_turn},
                             {"started_ms", t.started_ms},
                             {"finished_ms", t.finished_ms},
                             {"solved", t.solved},
                             {"best_turn", t.best_turn},
                             {"best_sample", t.best_sample},
                             {"status", t.status},
                             {"error", t.error},
                             {"turns", turns}});
}

Result<SelectionRecord> SelectionFromJson(std::string_view json) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, ParseJson(json, "selection"));
  return SelectionFrom(j);
}

Result<SampleRecord> SampleFromJson(std::string_view json) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, ParseJson(json, "sample"));
  return SampleFrom(j);
}

Result<TurnTimes> TurnTimesFromJson(std::string_view json) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, ParseJson(json, "times"));
  return TimesFrom(j);
}

Result<Trajectory> TrajectoryFromJson(std::string_view json) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, ParseJson(json, "trajectory"));
  Trajectory t;
  Reader in(j, "trajectory");
  SKILLDB_RETURN_IF_ERROR(in.String("id", &t.id));
  SKILLDB_RETURN_IF_ERROR(in.String("group", &t.group));
  SKILLDB_RETURN_IF_ERROR(in.String("task", &t.task));
  SKILLDB_RETURN_IF_ERROR(in.String("backend", &t.backend));
  SKILLDB_RETURN_IF_ERROR(in.String("model", &t.model));
  SKILLDB_RETURN_IF_ERROR(in.Uint64("library_version", &t.library_version));
  SKILLDB_RETURN_IF_ERROR(in.Int("max_turns", &t.max_turns));
  SKILLDB_RETURN_IF_ERROR(in.Int("samples_per_turn", &t.samples_per_turn));
  SKILLDB_RETURN_IF_ERROR(in.Int64("started_ms", &t.started_ms));
  SKILLDB_RETURN_IF_ERROR(in.Int64("finished_ms", &t.finished_ms));
  SKILLDB_RETURN_IF_ERROR(in.Bool("solved", &t.solved));
  SKILLDB_RETURN_IF_ERROR(in.Int("best_turn", &t.best_turn));
  SKILLDB_RETURN_IF_ERROR(in.Int("best_sample", &t.best_sample));
  SKILLDB_RETURN_IF_ERROR(in.String("status", &t.status));
  SKILLDB_RETURN_IF_ERROR(in.String("error", &t.error));
  if (const Json* turns = in.Find("turns")) {
    if (!turns->is_array()) return in.WrongType("turns", "an array");
    for (const Json& turn : *turns) {
      SKILLDB_ASSIGN_OR_RETURN(TurnRecord r, TurnFrom(turn));
      t.turns.push_back(std::move(r));
    }
  }
  return t;
}

}  // namespace skilldb::policy
