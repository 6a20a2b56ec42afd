// JSON codecs of the public types. Output: ordered_json, so keys come in a
// fixed, readable order; non-finite numbers (which JSON lacks) become null
// and invalid UTF-8 is replaced, so a dump never throws. Input: untrusted
// text through ParseUntrustedJson, typed reads through FieldReader.
#include "skilldb/json.h"

#include "skilldb/util/json.h"

namespace skilldb {
namespace {

using Out = nlohmann::ordered_json;
using In = nlohmann::json;
using util::FieldReader;

std::string Dump(const Out& j) { return util::DumpLossy(j); }

// The value of a codec embedded in another (the skill and report codecs
// write compact JSON text of their own).
Out Embed(const std::string& json_text) {
  return Out::parse(json_text, nullptr, /*allow_exceptions=*/false);
}

// Parses `text` and requires an object.
Result<In> ParseObject(std::string_view text, const char* what) {
  SKILLDB_ASSIGN_OR_RETURN(In j, util::ParseUntrustedJson(text, what));
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(what) +
                                   " must be a JSON object");
  }
  return j;
}

// Reads the member `key` of `j` (an object) with the codec for T.
template <typename T>
Status ReadNested(const In& j, const char* key, const char* what, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  auto value = FromJson<T>(it->dump());
  if (!value.ok()) return value.status().WithContext(std::string(what));
  *out = std::move(value).value();
  return Status::Ok();
}

template <typename T>
Status ReadNestedList(const In& j, const char* key, const char* what,
                      std::vector<T>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) {
    return Status::InvalidArgument(std::string(what) + " field '" + key +
                                   "' must be an array");
  }
  out->clear();
  for (const In& e : *it) {
    auto value = FromJson<T>(e.dump());
    if (!value.ok()) return value.status().WithContext(std::string(what));
    out->push_back(std::move(value).value());
  }
  return Status::Ok();
}

Status ReadEnumName(const FieldReader& r, const char* key, auto parse,
                    auto* out) {
  std::string name;
  SKILLDB_RETURN_IF_ERROR(r.String(key, &name));
  if (name.empty()) return Status::Ok();
  auto value = parse(name);
  if (!value.ok()) return value.status().WithContext(key);
  *out = *value;
  return Status::Ok();
}

Out CountersJson(const UsageCounters& c) {
  Out j = Out::object();
  for (int i = 0; i < kNumUsageEvents; ++i) {
    j[std::string(UsageEventName(static_cast<UsageEvent>(i)))] = c.counts[i];
  }
  j["last_used_version"] = c.last_used_version;
  j["utility"] = c.utility();
  return j;
}

Out HitJson(const Hit& h) {
  Out j{{"id", h.id}, {"score", h.score}};
  if (h.fields.needs_record()) j["revision"] = h.revision;
  if (h.fields.has(HitField::kTitle)) j["title"] = h.title;
  if (h.fields.has(HitField::kSummary)) j["summary"] = h.summary;
  if (h.fields.has(HitField::kBody)) j["body"] = h.body;
  if (h.fields.has(HitField::kCode)) j["code"] = h.code;
  if (h.fields.has(HitField::kTags)) j["tags"] = h.tags;
  if (h.fields.has(HitField::kOps)) j["ops"] = h.ops;
  if (h.fields.has(HitField::kArch)) j["arch"] = h.arch;
  if (h.fields.has(HitField::kLanguage))
    j["language"] = LanguageName(h.language);
  if (h.fields.has(HitField::kStatus)) j["status"] = SkillStatusName(h.status);
  if (h.fields.has(HitField::kUsage) && h.usage) {
    j["usage"] = CountersJson(*h.usage);
    j["utility"] = h.usage->utility();
  }
  return j;
}

Out CommitJson(const CommitInfo& c) {
  return Out{{"version", c.version},   {"time_ms", c.time_ms},
             {"kind", c.kind},         {"message", c.message},
             {"author", c.author},     {"added", c.added},
             {"updated", c.updated},   {"deleted", c.deleted},
             {"skills", c.num_skills}, {"total_length", c.total_length}};
}

Out GenerationJson(const GenerationRecord& g) {
  Out prompt = Out::array();
  for (const ChatMessage& m : g.prompt) {
    prompt.push_back(Out{{"role", m.role}, {"content", m.content}});
  }
  Out j{{"model", g.model}, {"prompt", prompt}};
  if (!g.prompt_text.empty()) j["prompt_text"] = g.prompt_text;
  if (!g.prompt_token_ids.empty()) j["prompt_token_ids"] = g.prompt_token_ids;
  j["completion"] = g.completion;
  if (!g.completion_token_ids.empty())
    j["completion_token_ids"] = g.completion_token_ids;
  if (!g.completion_logprobs.empty())
    j["completion_logprobs"] = g.completion_logprobs;
  return j;
}

Out RankedHitJson(const RankedHit& h) {
  return Out{{"hit", HitJson(h.hit)},
             {"bm25_rank", h.bm25_rank},
             {"rerank_score", h.rerank_score},
             {"score", h.score}};
}

Out DuplicateJson(const DuplicateMatch& d) {
  return Out{
      {"id", d.id},
      {"kind", d.kind == DuplicateMatch::Kind::kExact ? "exact" : "near"},
      {"bm25_similarity", d.bm25_similarity},
      {"jaccard", d.jaccard}};
}

Result<ChangeKind> ParseChangeKind(std::string_view name) {
  for (ChangeKind k :
       {ChangeKind::kAdded, ChangeKind::kUpdated, ChangeKind::kDeleted}) {
    if (name == ChangeKindName(k)) return k;
  }
  return Status::InvalidArgument("unknown change kind '" + std::string(name) +
                                 "' (expected added, updated or deleted)");
}

Status ReadCounters(const In& j, UsageCounters* c) {
  FieldReader r(j, "usage counters");
  for (int i = 0; i < kNumUsageEvents; ++i) {
    const std::string name(UsageEventName(static_cast<UsageEvent>(i)));
    SKILLDB_RETURN_IF_ERROR(r.Uint64(name.c_str(), &c->counts[i]));
  }
  return r.Uint64("last_used_version", &c->last_used_version);
}

Status ReadSkillMember(const In& j, const char* key,
                       std::optional<Skill>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  auto skill = ParseSkillJson(it->dump());
  if (!skill.ok()) return skill.status().WithContext(key);
  *out = std::move(skill).value();
  return Status::Ok();
}

}  // namespace

std::string ToJson(const Hit& hit) { return Dump(HitJson(hit)); }

std::string ToJson(const QueryResult& result) {
  Out hits = Out::array();
  for (const Hit& h : result.hits) hits.push_back(HitJson(h));
  return Dump(Out{{"version", result.version}, {"hits", hits}});
}

std::string ToJson(const CommitInfo& commit) {
  return Dump(CommitJson(commit));
}

std::string ToJson(const Change& change) {
  return Dump(Out{{"id", change.id}, {"change", ChangeKindName(change.kind)}});
}

std::string ToJson(const Revision& revision) {
  Out j{{"version", revision.version}, {"deleted", revision.deleted}};
  if (!revision.deleted) j["skill"] = Embed(SkillToJson(revision.skill));
  return Dump(j);
}

std::string ToJson(const DiffEntry& entry) {
  Out j{{"id", entry.id}, {"change", ChangeKindName(entry.kind)}};
  if (entry.before) j["before"] = Embed(SkillToJson(*entry.before));
  if (entry.after) j["after"] = Embed(SkillToJson(*entry.after));
  return Dump(j);
}

std::string ToJson(const LibraryInfo& info) {
  const FieldWeights& w = info.field_weights;
  return Dump(Out{{"path", info.path},
                  {"analyzer", AnalyzerName(info.analyzer)},
                  {"k1", info.k1},
                  {"b", info.b},
                  {"field_weights",
                   {{"title", w.title},
                    {"summary", w.summary},
                    {"body", w.body},
                    {"tags", w.tags},
                    {"ops", w.ops},
                    {"code", w.code}}},
                  {"read_only", info.read_only},
                  {"head", info.head},
                  {"oldest_retained", info.oldest_retained}});
}

std::string ToJson(const LibraryStats& s) {
  return Dump(
      Out{{"version", s.version},
          {"skills", s.num_skills},
          {"total_length", s.total_length},
          {"avg_length", s.avg_length},
          {"status",
           {{"candidate", s.candidate},
            {"active", s.active},
            {"deprecated", s.deprecated},
            {"pruned", s.pruned}}},
          {"language",
           {{"cuda", s.cuda}, {"triton", s.triton}, {"any", s.any_language}}},
          {"trust",
           {{"unverified", s.unverified},
            {"provisional", s.provisional},
            {"trusted", s.trusted}}},
          {"segments", s.num_segments},
          {"documents", s.num_documents},
          {"disk_bytes", s.disk_bytes},
          {"index_table_bytes", s.index_table_bytes},
          {"record_table_bytes", s.record_table_bytes},
          {"other_table_bytes", s.other_table_bytes}});
}

std::string ToJson(const UsageCounters& counters) {
  return Dump(CountersJson(counters));
}

std::string ToJson(const UsageRecord& record) {
  return Dump(Out{{"id", record.id},
                  {"event", UsageEventName(record.event)},
                  {"count", record.count}});
}

std::string ToJson(const AuditEntry& entry) {
  if (!entry.json.empty()) return entry.json;
  return Dump(Out{{"seq", entry.seq},
                  {"time_ms", entry.time_ms},
                  {"event", entry.event},
                  {"proposal_id", entry.proposal_id},
                  {"skill_id", entry.skill_id},
                  {"author", entry.author},
                  {"base_version", entry.base_version},
                  {"version", entry.version},
                  {"reasons", entry.reasons}});
}

std::string ToJson(const DuplicateMatch& match) {
  return Dump(DuplicateJson(match));
}

std::string ToJson(const ProposalOutcome& o) {
  Out dups = Out::array();
  for (const DuplicateMatch& d : o.duplicates) dups.push_back(DuplicateJson(d));
  return Dump(Out{{"accepted", o.accepted},
                  {"version", o.version},
                  {"skill_id", o.skill_id},
                  {"deprecated", o.deprecated},
                  {"reasons", o.reasons},
                  {"duplicates", dups},
                  {"audit_seq", o.audit_seq}});
}

std::string ToJson(const PruneAction& action) {
  return Dump(Out{{"id", action.id}, {"reasons", action.reasons}});
}

std::string ToJson(const GcReport& r) {
  return Dump(Out{{"old_oldest", r.old_oldest},
                  {"new_oldest", r.new_oldest},
                  {"tagged", r.tagged},
                  {"revisions_dropped", r.revisions_dropped},
                  {"commits_dropped", r.commits_dropped},
                  {"df_entries_dropped", r.df_entries_dropped},
                  {"documents_dropped", r.documents_dropped},
                  {"disk_bytes_before", r.disk_bytes_before},
                  {"disk_bytes_after", r.disk_bytes_after}});
}

std::string ToJson(const TagInfo& tag) {
  return Dump(Out{{"name", tag.name}, {"version", tag.version}});
}

std::string ToJson(const ChatMessage& m) {
  return Dump(Out{{"role", m.role}, {"content", m.content}});
}

std::string ToJson(const GenerationRecord& record) {
  return Dump(GenerationJson(record));
}

std::string ToJson(const RankedHit& hit) { return Dump(RankedHitJson(hit)); }

std::string ToJson(const RerankResult& r) {
  Out hits = Out::array();
  for (const RankedHit& h : r.hits) hits.push_back(RankedHitJson(h));
  Out gens = Out::array();
  for (const GenerationRecord& g : r.generations)
    gens.push_back(GenerationJson(g));
  return Dump(Out{{"applied", r.applied},
                  {"mode", r.mode},
                  {"reason", r.reason},
                  {"cached", r.cached},
                  {"hits", hits},
                  {"generations", gens}});
}

std::string ToJson(const VerificationReport& report) {
  return ReportToJson(report);
}

std::string ToJson(const Skill& skill) { return SkillToJson(skill); }

// ---- Readers ----

template <>
Result<Hit> FromJson<Hit>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "hit"));
  FieldReader r(j, "hit");
  Hit h;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &h.id));
  SKILLDB_RETURN_IF_ERROR(r.Double("score", &h.score));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("revision", &h.revision));
  // A member present means its field was asked for.
  auto mark = [&](const char* key, HitField f) {
    if (r.Find(key) != nullptr) h.fields |= f;
  };
  mark("title", HitField::kTitle);
  mark("summary", HitField::kSummary);
  mark("body", HitField::kBody);
  mark("code", HitField::kCode);
  mark("tags", HitField::kTags);
  mark("ops", HitField::kOps);
  mark("arch", HitField::kArch);
  mark("language", HitField::kLanguage);
  mark("status", HitField::kStatus);
  mark("usage", HitField::kUsage);
  SKILLDB_RETURN_IF_ERROR(r.String("title", &h.title));
  SKILLDB_RETURN_IF_ERROR(r.String("summary", &h.summary));
  SKILLDB_RETURN_IF_ERROR(r.String("body", &h.body));
  SKILLDB_RETURN_IF_ERROR(r.String("code", &h.code));
  SKILLDB_RETURN_IF_ERROR(r.Strings("tags", &h.tags));
  SKILLDB_RETURN_IF_ERROR(r.Strings("ops", &h.ops));
  SKILLDB_RETURN_IF_ERROR(r.Strings("arch", &h.arch));
  SKILLDB_RETURN_IF_ERROR(
      ReadEnumName(r, "language", ParseLanguage, &h.language));
  SKILLDB_RETURN_IF_ERROR(
      ReadEnumName(r, "status", ParseSkillStatus, &h.status));
  if (const In* u = r.Find("usage")) {
    UsageCounters c;
    SKILLDB_RETURN_IF_ERROR(ReadCounters(*u, &c).WithContext("hit"));
    h.usage = c;
  }
  return h;
}

template <>
Result<QueryResult> FromJson<QueryResult>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "query result"));
  QueryResult q;
  SKILLDB_RETURN_IF_ERROR(
      FieldReader(j, "query result").Uint64("version", &q.version));
  SKILLDB_RETURN_IF_ERROR(ReadNestedList(j, "hits", "query result", &q.hits));
  return q;
}

template <>
Result<CommitInfo> FromJson<CommitInfo>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "commit"));
  FieldReader r(j, "commit");
  CommitInfo c;
  SKILLDB_RETURN_IF_ERROR(r.Require("version"));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &c.version));
  SKILLDB_RETURN_IF_ERROR(r.Int64("time_ms", &c.time_ms));
  SKILLDB_RETURN_IF_ERROR(r.String("kind", &c.kind));
  SKILLDB_RETURN_IF_ERROR(r.String("message", &c.message));
  SKILLDB_RETURN_IF_ERROR(r.String("author", &c.author));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("added", &c.added));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("updated", &c.updated));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("deleted", &c.deleted));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("skills", &c.num_skills));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("total_length", &c.total_length));
  return c;
}

template <>
Result<Change> FromJson<Change>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "change"));
  FieldReader r(j, "change");
  Change c;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &c.id));
  SKILLDB_RETURN_IF_ERROR(ReadEnumName(r, "change", ParseChangeKind, &c.kind));
  return c;
}

template <>
Result<Revision> FromJson<Revision>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "revision"));
  FieldReader r(j, "revision");
  Revision rev;
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &rev.version));
  SKILLDB_RETURN_IF_ERROR(r.Bool("deleted", &rev.deleted));
  std::optional<Skill> skill;
  SKILLDB_RETURN_IF_ERROR(ReadSkillMember(j, "skill", &skill));
  if (skill) rev.skill = std::move(*skill);
  return rev;
}

template <>
Result<DiffEntry> FromJson<DiffEntry>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "diff entry"));
  FieldReader r(j, "diff entry");
  DiffEntry e;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &e.id));
  SKILLDB_RETURN_IF_ERROR(ReadEnumName(r, "change", ParseChangeKind, &e.kind));
  SKILLDB_RETURN_IF_ERROR(ReadSkillMember(j, "before", &e.before));
  SKILLDB_RETURN_IF_ERROR(ReadSkillMember(j, "after", &e.after));
  return e;
}

template <>
Result<LibraryInfo> FromJson<LibraryInfo>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "library info"));
  FieldReader r(j, "library info");
  LibraryInfo info;
  SKILLDB_RETURN_IF_ERROR(r.String("path", &info.path));
  SKILLDB_RETURN_IF_ERROR(
      ReadEnumName(r, "analyzer", ParseAnalyzer, &info.analyzer));
  SKILLDB_RETURN_IF_ERROR(r.Double("k1", &info.k1));
  SKILLDB_RETURN_IF_ERROR(r.Double("b", &info.b));
  if (const In* w = r.Find("field_weights")) {
    FieldReader wr(*w, "field_weights");
    FieldWeights& fw = info.field_weights;
    int64_t v = 0;
    for (auto [key, field] : {std::pair{"title", &fw.title},
                              {"summary", &fw.summary},
                              {"body", &fw.body},
                              {"tags", &fw.tags},
                              {"ops", &fw.ops},
                              {"code", &fw.code}}) {
      v = *field;
      SKILLDB_RETURN_IF_ERROR(wr.Int64(key, &v));
      *field = static_cast<int>(v);
    }
    SKILLDB_RETURN_IF_ERROR(ValidateFieldWeights(fw));
  }
  SKILLDB_RETURN_IF_ERROR(r.Bool("read_only", &info.read_only));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("head", &info.head));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("oldest_retained", &info.oldest_retained));
  return info;
}

template <>
Result<LibraryStats> FromJson<LibraryStats>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "library stats"));
  FieldReader r(j, "library stats");
  LibraryStats s;
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &s.version));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("skills", &s.num_skills));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("total_length", &s.total_length));
  SKILLDB_RETURN_IF_ERROR(r.Double("avg_length", &s.avg_length));
  if (const In* st = r.Find("status")) {
    FieldReader sr(*st, "library stats status");
    SKILLDB_RETURN_IF_ERROR(sr.Uint64("candidate", &s.candidate));
    SKILLDB_RETURN_IF_ERROR(sr.Uint64("active", &s.active));
    SKILLDB_RETURN_IF_ERROR(sr.Uint64("deprecated", &s.deprecated));
    SKILLDB_RETURN_IF_ERROR(sr.Uint64("pruned", &s.pruned));
  }
  if (const In* lang = r.Find("language")) {
    FieldReader lr(*lang, "library stats language");
    SKILLDB_RETURN_IF_ERROR(lr.Uint64("cuda", &s.cuda));
    SKILLDB_RETURN_IF_ERROR(lr.Uint64("triton", &s.triton));
    SKILLDB_RETURN_IF_ERROR(lr.Uint64("any", &s.any_language));
  }
  if (const In* trust = r.Find("trust")) {
    FieldReader tr(*trust, "library stats trust");
    SKILLDB_RETURN_IF_ERROR(tr.Uint64("unverified", &s.unverified));
    SKILLDB_RETURN_IF_ERROR(tr.Uint64("provisional", &s.provisional));
    SKILLDB_RETURN_IF_ERROR(tr.Uint64("trusted", &s.trusted));
  }
  SKILLDB_RETURN_IF_ERROR(r.Uint64("segments", &s.num_segments));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("documents", &s.num_documents));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("disk_bytes", &s.disk_bytes));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("index_table_bytes", &s.index_table_bytes));
  SKILLDB_RETURN_IF_ERROR(
      r.Uint64("record_table_bytes", &s.record_table_bytes));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("other_table_bytes", &s.other_table_bytes));
  return s;
}

template <>
Result<UsageCounters> FromJson<UsageCounters>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "usage counters"));
  UsageCounters c;
  SKILLDB_RETURN_IF_ERROR(ReadCounters(j, &c));
  return c;
}

template <>
Result<UsageRecord> FromJson<UsageRecord>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "usage record"));
  FieldReader r(j, "usage record");
  UsageRecord u;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.Require("event"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &u.id));
  SKILLDB_RETURN_IF_ERROR(ReadEnumName(r, "event", ParseUsageEvent, &u.event));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("count", &u.count));
  return u;
}

template <>
Result<AuditEntry> FromJson<AuditEntry>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "audit entry"));
  FieldReader r(j, "audit entry");
  AuditEntry e;
  SKILLDB_RETURN_IF_ERROR(r.Uint64("seq", &e.seq));
  SKILLDB_RETURN_IF_ERROR(r.Int64("time_ms", &e.time_ms));
  SKILLDB_RETURN_IF_ERROR(r.String("event", &e.event));
  SKILLDB_RETURN_IF_ERROR(r.String("proposal_id", &e.proposal_id));
  SKILLDB_RETURN_IF_ERROR(r.String("skill_id", &e.skill_id));
  SKILLDB_RETURN_IF_ERROR(r.String("author", &e.author));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("base_version", &e.base_version));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &e.version));
  SKILLDB_RETURN_IF_ERROR(r.Strings("reasons", &e.reasons));
  e.json = std::string(text);
  return e;
}

template <>
Result<DuplicateMatch> FromJson<DuplicateMatch>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "duplicate"));
  FieldReader r(j, "duplicate");
  DuplicateMatch d;
  SKILLDB_RETURN_IF_ERROR(r.String("id", &d.id));
  std::string kind = "near";
  SKILLDB_RETURN_IF_ERROR(r.String("kind", &kind));
  if (kind != "exact" && kind != "near") {
    return Status::InvalidArgument(
        "duplicate field 'kind' must be exact or "
        "near");
  }
  d.kind = kind == "exact" ? DuplicateMatch::Kind::kExact
                           : DuplicateMatch::Kind::kNear;
  SKILLDB_RETURN_IF_ERROR(r.Double("bm25_similarity", &d.bm25_similarity));
  SKILLDB_RETURN_IF_ERROR(r.Double("jaccard", &d.jaccard));
  return d;
}

template <>
Result<ProposalOutcome> FromJson<ProposalOutcome>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "proposal outcome"));
  FieldReader r(j, "proposal outcome");
  ProposalOutcome o;
  SKILLDB_RETURN_IF_ERROR(r.Bool("accepted", &o.accepted));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &o.version));
  SKILLDB_RETURN_IF_ERROR(r.String("skill_id", &o.skill_id));
  SKILLDB_RETURN_IF_ERROR(r.Strings("deprecated", &o.deprecated));
  SKILLDB_RETURN_IF_ERROR(r.Strings("reasons", &o.reasons));
  SKILLDB_RETURN_IF_ERROR(
      ReadNestedList(j, "duplicates", "proposal outcome", &o.duplicates));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("audit_seq", &o.audit_seq));
  return o;
}

template <>
Result<PruneAction> FromJson<PruneAction>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "prune action"));
  FieldReader r(j, "prune action");
  PruneAction a;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &a.id));
  SKILLDB_RETURN_IF_ERROR(r.Strings("reasons", &a.reasons));
  return a;
}

template <>
Result<GcReport> FromJson<GcReport>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "gc report"));
  FieldReader r(j, "gc report");
  GcReport g;
  SKILLDB_RETURN_IF_ERROR(r.Uint64("old_oldest", &g.old_oldest));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("new_oldest", &g.new_oldest));
  if (const In* t = r.Find("tagged")) {
    if (!t->is_array()) return r.WrongType("tagged", "an array of versions");
    for (const In& v : *t) {
      if (!v.is_number_unsigned())
        return r.WrongType("tagged", "an array of versions");
      g.tagged.push_back(v.get<Version>());
    }
  }
  SKILLDB_RETURN_IF_ERROR(r.Uint64("revisions_dropped", &g.revisions_dropped));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("commits_dropped", &g.commits_dropped));
  SKILLDB_RETURN_IF_ERROR(
      r.Uint64("df_entries_dropped", &g.df_entries_dropped));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("documents_dropped", &g.documents_dropped));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("disk_bytes_before", &g.disk_bytes_before));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("disk_bytes_after", &g.disk_bytes_after));
  return g;
}

template <>
Result<TagInfo> FromJson<TagInfo>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "tag"));
  FieldReader r(j, "tag");
  TagInfo t;
  SKILLDB_RETURN_IF_ERROR(r.Require("name"));
  SKILLDB_RETURN_IF_ERROR(r.String("name", &t.name));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("version", &t.version));
  return t;
}

template <>
Result<ChatMessage> FromJson<ChatMessage>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "chat message"));
  FieldReader r(j, "chat message");
  ChatMessage m;
  SKILLDB_RETURN_IF_ERROR(r.Require("role"));
  SKILLDB_RETURN_IF_ERROR(r.String("role", &m.role));
  SKILLDB_RETURN_IF_ERROR(r.String("content", &m.content));
  return m;
}

template <>
Result<GenerationRecord> FromJson<GenerationRecord>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "generation"));
  FieldReader r(j, "generation");
  GenerationRecord g;
  SKILLDB_RETURN_IF_ERROR(r.String("model", &g.model));
  SKILLDB_RETURN_IF_ERROR(ReadNestedList(j, "prompt", "generation", &g.prompt));
  SKILLDB_RETURN_IF_ERROR(r.String("prompt_text", &g.prompt_text));
  SKILLDB_RETURN_IF_ERROR(r.Int32s("prompt_token_ids", &g.prompt_token_ids));
  SKILLDB_RETURN_IF_ERROR(r.String("completion", &g.completion));
  SKILLDB_RETURN_IF_ERROR(
      r.Int32s("completion_token_ids", &g.completion_token_ids));
  SKILLDB_RETURN_IF_ERROR(
      r.Doubles("completion_logprobs", &g.completion_logprobs));
  return g;
}

template <>
Result<RankedHit> FromJson<RankedHit>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "ranked hit"));
  FieldReader r(j, "ranked hit");
  RankedHit h;
  SKILLDB_RETURN_IF_ERROR(r.Require("hit"));
  SKILLDB_RETURN_IF_ERROR(ReadNested(j, "hit", "ranked hit", &h.hit));
  SKILLDB_RETURN_IF_ERROR(r.Size("bm25_rank", &h.bm25_rank));
  SKILLDB_RETURN_IF_ERROR(r.Double("rerank_score", &h.rerank_score));
  SKILLDB_RETURN_IF_ERROR(r.Double("score", &h.score));
  return h;
}

template <>
Result<RerankResult> FromJson<RerankResult>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(In j, ParseObject(text, "rerank result"));
  FieldReader r(j, "rerank result");
  RerankResult out;
  SKILLDB_RETURN_IF_ERROR(r.Bool("applied", &out.applied));
  SKILLDB_RETURN_IF_ERROR(r.String("mode", &out.mode));
  SKILLDB_RETURN_IF_ERROR(r.String("reason", &out.reason));
  SKILLDB_RETURN_IF_ERROR(r.Bool("cached", &out.cached));
  SKILLDB_RETURN_IF_ERROR(
      ReadNestedList(j, "hits", "rerank result", &out.hits));
  SKILLDB_RETURN_IF_ERROR(
      ReadNestedList(j, "generations", "rerank result", &out.generations));
  return out;
}

template <>
Result<VerificationReport> FromJson<VerificationReport>(std::string_view text) {
  SKILLDB_RETURN_IF_ERROR(
      util::ParseUntrustedJson(text, "verification report").status());
  return ReportFromJson(text);
}

template <>
Result<Skill> FromJson<Skill>(std::string_view text) {
  return ParseSkillJson(text);
}

}  // namespace skilldb
