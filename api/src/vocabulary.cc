// The API layer's vocabulary: names and parsers of its enums, small rules
// (tag names, field weights) and derived values (utility, trust) that every
// module shares.
#include <charconv>
#include <set>
#include <string>

#include "skilldb/library.h"
#include "skilldb/maintenance.h"
#include "skilldb/options.h"
#include "skilldb/proposal.h"
#include "skilldb/reranker.h"
#include "skilldb/verifier.h"

namespace skilldb {
namespace {

struct Field {
  const char* name;
  int FieldWeights::*weight;
};
constexpr Field kFields[] = {
    {"title", &FieldWeights::title}, {"summary", &FieldWeights::summary},
    {"body", &FieldWeights::body},   {"tags", &FieldWeights::tags},
    {"ops", &FieldWeights::ops},     {"code", &FieldWeights::code},
};

}  // namespace

Status ValidateFieldWeights(const FieldWeights& weights) {
  bool any = false;
  for (const Field& f : kFields) {
    const int w = weights.*(f.weight);
    if (w < 0 || w > 16) {
      return Status::InvalidArgument(std::string("field weight '") + f.name +
                                     "' must be in [0, 16], got " +
                                     std::to_string(w));
    }
    any = any || w > 0;
  }
  if (!any)
    return Status::InvalidArgument(
        "at least one field weight must be positive");
  return Status::Ok();
}

std::string FormatFieldWeights(const FieldWeights& weights) {
  std::string out;
  for (const Field& f : kFields) {
    if (!out.empty()) out += ",";
    out += f.name;
    out += "=" + std::to_string(weights.*(f.weight));
  }
  return out;
}

Result<FieldWeights> ParseFieldWeights(std::string_view text) {
  FieldWeights weights;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    const Field* field = nullptr;
    for (const Field& f : kFields) {
      if (eq != std::string_view::npos && item.substr(0, eq) == f.name)
        field = &f;
    }
    int value = -1;
    if (field != nullptr) {
      auto [p, ec] = std::from_chars(item.data() + eq + 1,
                                     item.data() + item.size(), value);
      if (ec != std::errc() || p != item.data() + item.size()) field = nullptr;
    }
    if (field == nullptr) {
      return Status::InvalidArgument(
          "bad field weight '" + std::string(item) +
          "' (expected NAME=INTEGER with NAME one of title, summary, body, "
          "tags, ops, code)");
    }
    weights.*(field->weight) = value;
  }
  SKILLDB_RETURN_IF_ERROR(ValidateFieldWeights(weights));
  return weights;
}

std::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded:
      return "added";
    case ChangeKind::kUpdated:
      return "updated";
    case ChangeKind::kDeleted:
      return "deleted";
  }
  return "added";
}

std::string_view UsageEventName(UsageEvent event) {
  switch (event) {
    case UsageEvent::kRetrieved:
      return "retrieved";
    case UsageEvent::kSelected:
      return "selected";
    case UsageEvent::kApplied:
      return "applied";
    case UsageEvent::kSucceeded:
      return "succeeded";
    case UsageEvent::kFailed:
      return "failed";
  }
  return "retrieved";
}

Result<UsageEvent> ParseUsageEvent(std::string_view name) {
  for (int i = 0; i < kNumUsageEvents; ++i) {
    const auto e = static_cast<UsageEvent>(i);
    if (name == UsageEventName(e)) return e;
  }
  return Status::InvalidArgument(
      "unknown usage event '" + std::string(name) +
      "' (expected retrieved, selected, applied, succeeded or failed)");
}

double UsageCounters::utility() const {
  const double s = static_cast<double>(count(UsageEvent::kSucceeded));
  const double f = static_cast<double>(count(UsageEvent::kFailed));
  return (s + 1.0) / (s + f + 2.0);
}

Status ValidateTagName(std::string_view name) {
  auto ok_first = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
  };
  bool valid = !name.empty() && name.size() <= 64 && ok_first(name[0]);
  for (char c : name)
    valid = valid && (ok_first(c) || c == '.' || c == '_' || c == '-');
  if (!valid) {
    return Status::InvalidArgument(
        "invalid tag name '" + std::string(name.substr(0, 80)) +
        "' (tags match [A-Za-z0-9][A-Za-z0-9._-]{0,63})");
  }
  return Status::Ok();
}

std::string_view DedupPolicyName(DedupPolicy policy) {
  switch (policy) {
    case DedupPolicy::kReject:
      return "reject";
    case DedupPolicy::kSupersede:
      return "supersede";
    case DedupPolicy::kMerge:
      return "merge";
  }
  return "reject";
}

Result<DedupPolicy> ParseDedupPolicy(std::string_view name) {
  for (DedupPolicy p :
       {DedupPolicy::kReject, DedupPolicy::kSupersede, DedupPolicy::kMerge}) {
    if (name == DedupPolicyName(p)) return p;
  }
  return Status::InvalidArgument("unknown dedup policy '" + std::string(name) +
                                 "' (expected reject, supersede or merge)");
}

std::string_view TrustName(Trust trust) {
  switch (trust) {
    case Trust::kUnverified:
      return "unverified";
    case Trust::kProvisional:
      return "provisional";
    case Trust::kTrusted:
      return "trusted";
  }
  return "unverified";
}

Trust SkillTrust(const Skill& skill, int trusted_tasks) {
  std::set<std::string> tasks;
  for (const std::string& e : skill.evidence_json) {
    auto report = ReportFromJson(e);
    if (report.ok() && report->passed) tasks.insert(report->task);
  }
  if (tasks.empty()) return Trust::kUnverified;
  return static_cast<int>(tasks.size()) >= trusted_tasks ? Trust::kTrusted
                                                         : Trust::kProvisional;
}

std::string_view AnalyzerName(Analyzer analyzer) {
  switch (analyzer) {
    case Analyzer::kWhitespace:
      return "whitespace";
    case Analyzer::kStandard:
      return "standard";
    case Analyzer::kCode:
      return "code";
  }
  return "unknown";  // a value outside the enum: rejected by ParseAnalyzer
}

Result<Analyzer> ParseAnalyzer(std::string_view name) {
  for (Analyzer a :
       {Analyzer::kWhitespace, Analyzer::kStandard, Analyzer::kCode}) {
    if (name == AnalyzerName(a)) return a;
  }
  return Status::InvalidArgument("unknown analyzer '" + std::string(name) +
                                 "' (expected whitespace, standard or code)");
}

namespace {

constexpr HitField kHitFields[] = {
    HitField::kTitle,  HitField::kSummary, HitField::kBody, HitField::kCode,
    HitField::kTags,   HitField::kOps,     HitField::kArch, HitField::kLanguage,
    HitField::kStatus, HitField::kUsage,
};

}  // namespace

std::string_view HitFieldName(HitField field) {
  switch (field) {
    case HitField::kTitle:
      return "title";
    case HitField::kSummary:
      return "summary";
    case HitField::kBody:
      return "body";
    case HitField::kCode:
      return "code";
    case HitField::kTags:
      return "tags";
    case HitField::kOps:
      return "ops";
    case HitField::kArch:
      return "arch";
    case HitField::kLanguage:
      return "language";
    case HitField::kStatus:
      return "status";
    case HitField::kUsage:
      return "usage";
  }
  return "title";
}

Result<HitFields> ParseHitFields(std::string_view text) {
  if (text == "all") return HitFields::All();
  if (text == "none") return HitFields::None();
  HitFields fields;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    bool known = false;
    for (HitField f : kHitFields) {
      if (item == HitFieldName(f)) {
        fields |= f;
        known = true;
      }
    }
    if (!known) {
      return Status::InvalidArgument(
          "unknown hit field '" + std::string(item.substr(0, 40)) +
          "' (expected a comma-separated list of title, summary, body, code, "
          "tags, ops, arch, language, status, usage; or all or none)");
    }
  }
  return fields;
}

std::string FormatHitFields(HitFields fields) {
  std::string out;
  for (HitField f : kHitFields) {
    if (!fields.has(f)) continue;
    if (!out.empty()) out += ",";
    out += HitFieldName(f);
  }
  return out;
}

RerankResult Bm25Order(const RerankRequest& request, std::string_view mode,
                       std::string reason) {
  RerankResult result;
  result.mode = std::string(mode);
  result.reason = std::move(reason);
  const size_t n = request.k == 0
                       ? request.candidates.size()
                       : std::min(request.k, request.candidates.size());
  for (size_t i = 0; i < n; ++i) {
    RankedHit h;
    h.hit = request.candidates[i];
    h.bm25_rank = i + 1;
    h.score = request.candidates[i].score;
    result.hits.push_back(std::move(h));
  }
  return result;
}

}  // namespace skilldb
