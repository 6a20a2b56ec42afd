#include "context.h"

namespace skilldb::cli {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ", ";
    out += EscapeLine(s);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

int RunShow(const GlobalArgs& g, const ShowArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  const Version version = a.as_of.value_or((*library)->CurrentVersion());
  auto skill = (*library)->Get(a.id, ReadOptions{.as_of = version});
  if (!skill.ok()) return Fail(g, io, skill.status());
  auto usage = (*library)->GetUsage(a.id);
  if (!usage.ok()) return Fail(g, io, usage.status());
  const Trust trust = SkillTrust(*skill);
  if (g.json) {
    PrintJson(io, Json{{"version", version},
                       {"skill", AsJson(*skill)},
                       {"trust", std::string(TrustName(trust))},
                       {"usage", AsJson(*usage)}});
    return kExitOk;
  }
  std::ostream& out = *io.out;
  out << EscapeLine(skill->id) << "  (version " << version << ", "
      << SkillStatusName(skill->status) << ", " << LanguageName(skill->language)
      << ")\n";
  out << "title:    " << EscapeLine(skill->title) << "\n";
  if (!skill->summary.empty()) {
    out << "summary:  " << EscapeLine(skill->summary) << "\n";
  }
  out << "tags:     " << Join(skill->tags) << "\n";
  out << "ops:      " << Join(skill->ops) << "\n";
  out << "arch:     " << Join(skill->arch) << "\n";
  const Provenance& p = skill->provenance;
  if (!p.empty()) {
    out << "source:   " << (p.source.empty() ? "-" : EscapeLine(p.source));
    if (!p.author.empty()) out << " by " << EscapeLine(p.author);
    if (!p.task_id.empty()) out << ", task " << EscapeLine(p.task_id);
    if (!p.rollout_id.empty()) out << ", rollout " << EscapeLine(p.rollout_id);
    if (p.model_step) out << ", step " << *p.model_step;
    out << "\n";
  }
  if (!skill->lineage.derived_from.empty()) {
    out << "derived from: " << Join(skill->lineage.derived_from) << "\n";
  }
  if (!skill->lineage.supersedes.empty()) {
    out << "supersedes:   " << Join(skill->lineage.supersedes) << "\n";
  }
  out << "evidence: " << skill->evidence_json.size() << " report(s), "
      << TrustName(trust) << "\n";
  for (const std::string& e : skill->evidence_json) {
    auto r = ReportFromJson(e);
    if (!r.ok()) continue;
    out << "          " << (r->passed ? "passed" : "failed") << " "
        << EscapeLine(r->task) << " on " << EscapeLine(r->device)
        << ": speedup " << FormatScore(r->speedup.ratio) << " (CI "
        << FormatScore(r->speedup.ci_low) << ".."
        << FormatScore(r->speedup.ci_high) << ")\n";
  }
  out << "usage:    applied " << usage->count(UsageEvent::kApplied)
      << ", succeeded " << usage->count(UsageEvent::kSucceeded) << ", failed "
      << usage->count(UsageEvent::kFailed) << "; utility "
      << FormatScore(usage->utility()) << "\n";
  if (!skill->body.empty()) out << "\n" << EscapeBlock(skill->body) << "\n";
  if (!skill->code.empty()) {
    out << "\n--- code ---\n" << EscapeBlock(skill->code) << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
