// The read-only web page, rendered on the server: search with highlighted
// hits, a skill's page (body, highlighted code, evidence as a chart of
// speedup intervals, usage and utility, history with diffs), the commit
// log, one commit, and the audit log's rejected proposals. No script runs
// on any page (the Content-Security-Policy forbids it), and every value
// from the library is escaped (html.h).
#include <cstdio>
#include <ctime>

#include "html.h"
#include "server_impl.h"

namespace skilldb::server::internal {
namespace {

void SendPage(httplib::Response& res, int status, const std::string& html) {
  res.status = status;
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; style-src 'unsafe-inline'; img-src "
                 "'self' data:; form-action 'self'; base-uri 'none'; "
                 "frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(html, "text/html; charset=utf-8");
}

void SendPageError(httplib::Response& res, const Status& s) {
  SendPage(res, HttpStatusFor(s.code()),
           Page("Error", "<p>" + HtmlEscape(s.ToString()) + "</p>"));
}

std::string Date(int64_t time_ms) {
  const std::time_t secs = static_cast<std::time_t>(time_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string Fixed(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// A link to a skill's page; `id` is escaped (ids are restricted, but the
// page never relies on that).
std::string SkillLink(const std::string& id, const std::string& text_html) {
  return "<a href=\"/ui/skills/" + HtmlEscape(id) + "\">" + text_html + "</a>";
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string SearchBody(Library& lib, const std::string& q) {
  std::string body =
      "<form action=\"/ui\" method=\"get\"><input name=\"q\" size=\"60\" "
      "value=\"" +
      HtmlEscape(q) + "\"> <button>search</button></form>";
  if (q.empty()) {
    return body + "<p class=\"note\">Library version " +
           std::to_string(lib.CurrentVersion()) + ".</p>";
  }
  QueryOptions options;
  options.k = 20;
  options.fields = {HitField::kTitle, HitField::kSummary, HitField::kTags,
                    HitField::kStatus, HitField::kUsage};
  auto result = lib.Query(options, q);
  if (!result.ok()) {
    return body + "<p>" + HtmlEscape(result.status().ToString()) + "</p>";
  }
  const auto words = QueryWords(q);
  body += "<p class=\"meta\">" + std::to_string(result->hits.size()) +
          " hits at version " + std::to_string(result->version) + "</p>";
  for (const Hit& h : result->hits) {
    body += "<div class=\"hit\" data-id=\"" + HtmlEscape(h.id) + "\">" +
            SkillLink(h.id, "<b>" + HighlightWords(h.title, words) + "</b>") +
            " <span class=\"meta\">" + HtmlEscape(h.id) + " &middot; score " +
            Fixed(h.score, 3) + " &middot; " +
            HtmlEscape(SkillStatusName(h.status));
    if (h.usage) body += " &middot; utility " + Fixed(h.usage->utility());
    body += "</span><br>" + HighlightWords(h.summary, words);
    if (!h.tags.empty()) {
      body += "<br><span class=\"meta\">tags: " +
              HighlightWords(Join(h.tags), words) + "</span>";
    }
    body += "</div>";
  }
  return body;
}

std::string EvidenceSection(const Skill& skill) {
  std::vector<Interval> intervals;
  std::string table =
      "<table><tr><th>task</th><th>device</th><th>verifier</th><th>speedup "
      "[CI]</th><th>passed</th><th>when</th></tr>";
  for (const std::string& json : skill.evidence_json) {
    auto report = ReportFromJson(json);
    if (!report.ok()) {
      table += "<tr><td colspan=\"6\">unreadable report: " +
               HtmlEscape(report.status().message()) + "</td></tr>";
      continue;
    }
    Interval iv;
    iv.label = report->task + " @ " + report->device_class;
    iv.point = report->speedup.ratio;
    iv.low = report->speedup.ci_low;
    iv.high = report->speedup.ci_high;
    for (const RoundTiming& r : report->rounds) iv.rounds.push_back(r.speedup_ratio);
    intervals.push_back(iv);
    table += "<tr><td>" + HtmlEscape(report->task) + "</td><td>" +
             HtmlEscape(report->device) + "</td><td>" +
             HtmlEscape(report->verifier) + "</td><td>" +
             Fixed(iv.point) + "x [" + Fixed(iv.low) + ", " + Fixed(iv.high) +
             "]</td><td>" + (report->passed ? "yes" : "no") + "</td><td>" +
             (report->finished_at_ms > 0 ? Date(report->finished_at_ms) : "") +
             "</td></tr>";
  }
  table += "</table>";
  if (skill.evidence_json.empty()) {
    return "<h2>Evidence</h2><p class=\"note\">No verification reports.</p>";
  }
  return "<h2>Evidence</h2>" + IntervalChart(intervals) + table;
}

std::string HistorySection(Library& lib, const std::string& id) {
  auto history = lib.History(id);
  if (!history.ok()) {
    return "<h2>History</h2><p>" + HtmlEscape(history.status().ToString()) +
           "</p>";
  }
  std::string out = "<h2>History</h2>";
  const auto& revs = *history;  // newest first
  for (size_t i = 0; i < revs.size(); ++i) {
    const Revision& r = revs[i];
    out += "<h3><a href=\"/ui/skills/" + HtmlEscape(id) + "?as_of=" +
           std::to_string(r.version) + "\">version " +
           std::to_string(r.version) + "</a>" +
           (r.deleted ? " (deleted)" : "") + "</h3>";
    if (i + 1 < revs.size() && !r.deleted && !revs[i + 1].deleted) {
      const Skill& before = revs[i + 1].skill;
      const Skill& after = r.skill;
      if (before.title != after.title) {
        out += "<p>title: " + HtmlEscape(before.title) + " &rarr; " +
               HtmlEscape(after.title) + "</p>";
      }
      if (before.status != after.status) {
        out += "<p>status: " + HtmlEscape(SkillStatusName(before.status)) +
               " &rarr; " + HtmlEscape(SkillStatusName(after.status)) + "</p>";
      }
      if (before.body != after.body) {
        out += "<p>body:</p>" + LineDiff(before.body, after.body);
      }
      if (before.code != after.code) {
        out += "<p>code:</p>" + LineDiff(before.code, after.code);
      }
      if (before.evidence_json.size() != after.evidence_json.size()) {
        out += "<p>evidence: " + std::to_string(before.evidence_json.size()) +
               " &rarr; " + std::to_string(after.evidence_json.size()) +
               " reports</p>";
      }
    }
  }
  return out;
}

std::string SkillBody(Library& lib, const Skill& s) {
  std::string body = "<p class=\"meta\">" + HtmlEscape(s.id) + " &middot; " +
                     HtmlEscape(SkillStatusName(s.status)) + " &middot; " +
                     HtmlEscape(LanguageName(s.language)) + "</p>";
  if (!s.summary.empty()) body += "<p>" + HtmlEscape(s.summary) + "</p>";
  body += "<p class=\"meta\">tags: " + HtmlEscape(Join(s.tags)) +
          " &middot; ops: " + HtmlEscape(Join(s.ops)) +
          " &middot; arch: " + HtmlEscape(Join(s.arch)) + "</p>";
  body += "<h2>Body</h2><pre class=\"body\">" + HtmlEscape(s.body) + "</pre>";
  if (!s.code.empty()) {
    body += "<h2>Code</h2><pre class=\"code\">" + HighlightCode(s.code) +
            "</pre>";
  }
  body += EvidenceSection(s);
  auto usage = lib.GetUsage(s.id);
  body += "<h2>Usage</h2>";
  if (usage.ok()) {
    body += "<table><tr>";
    for (int e = 0; e < kNumUsageEvents; ++e) {
      body += "<th>" +
              HtmlEscape(UsageEventName(static_cast<UsageEvent>(e))) + "</th>";
    }
    body += "<th>utility</th><th>last used at version</th></tr><tr>";
    for (int e = 0; e < kNumUsageEvents; ++e) {
      body += "<td>" + std::to_string(usage->counts[e]) + "</td>";
    }
    body += "<td>" + Fixed(usage->utility()) + "</td><td>" +
            std::to_string(usage->last_used_version) + "</td></tr></table>";
  } else {
    body += "<p>" + HtmlEscape(usage.status().ToString()) + "</p>";
  }
  body += HistorySection(lib, s.id);
  return body;
}

std::string LogBody(Library& lib) {
  LogOptions options;
  options.limit = 200;
  auto log = lib.Log(options);
  if (!log.ok()) return "<p>" + HtmlEscape(log.status().ToString()) + "</p>";
  std::string body =
      "<table><tr><th>version</th><th>when</th><th>kind</th><th>author</th>"
      "<th>message</th><th>+/~/-</th><th>skills</th></tr>";
  for (const CommitInfo& c : *log) {
    body += "<tr><td><a href=\"/ui/commits/" + std::to_string(c.version) +
            "\">" + std::to_string(c.version) + "</a></td><td>" +
            Date(c.time_ms) + "</td><td>" + HtmlEscape(c.kind) + "</td><td>" +
            HtmlEscape(c.author) + "</td><td>" + HtmlEscape(c.message) +
            "</td><td>" + std::to_string(c.added) + "/" +
            std::to_string(c.updated) + "/" + std::to_string(c.deleted) +
            "</td><td>" + std::to_string(c.num_skills) + "</td></tr>";
  }
  return body + "</table>";
}

std::string AuditBody(Library& lib) {
  auto entries = lib.Audit(AuditOptions{.limit = 2000});
  if (!entries.ok()) {
    return "<p>" + HtmlEscape(entries.status().ToString()) + "</p>";
  }
  std::string body =
      "<table><tr><th>seq</th><th>when</th><th>event</th><th>skill</th>"
      "<th>author</th><th>reasons</th></tr>";
  size_t shown = 0;
  for (auto it = entries->rbegin(); it != entries->rend(); ++it) {
    if (it->event != "rejected" && it->event != "aborted") continue;
    std::string reasons;
    for (const std::string& r : it->reasons) {
      reasons += "<li>" + HtmlEscape(r) + "</li>";
    }
    body += "<tr><td>" + std::to_string(it->seq) + "</td><td>" +
            Date(it->time_ms) + "</td><td>" + HtmlEscape(it->event) +
            "</td><td>" + HtmlEscape(it->skill_id) + "</td><td>" +
            HtmlEscape(it->author) + "</td><td><ul>" + reasons +
            "</ul></td></tr>";
    ++shown;
  }
  body += "</table>";
  if (shown == 0) body += "<p class=\"note\">No rejected proposals.</p>";
  return body;
}

}  // namespace

void ServerImpl::AddWebRoutes() {
  Route("GET", "/", "root", Access::kPublic,
        [](const httplib::Request&, httplib::Response& res) {
          res.set_redirect("/ui");
        });
  Route("GET", "/favicon.ico", "favicon", Access::kPublic,
        [](const httplib::Request&, httplib::Response& res) {
          res.status = 204;
        });
  Route("GET", "/ui", "ui_search", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          const std::string q = req.get_param_value("q");
          SendPage(res, 200, Page("Search", SearchBody(*library(), q)));
        });
  Route("GET", R"(/ui/skills/([^/]+))", "ui_skill", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto as_of = UintParam(req, "as_of");
          if (!as_of.ok()) return SendPageError(res, as_of.status());
          auto lib = library();
          ReadOptions read;
          if (*as_of) read.as_of = **as_of;
          auto skill = lib->Get(req.matches[1].str(), read);
          if (!skill.ok()) return SendPageError(res, skill.status());
          SendPage(res, 200, Page(skill->title, SkillBody(*lib, *skill)));
        });
  Route("GET", "/ui/log", "ui_log", Access::kRead,
        [this](const httplib::Request&, httplib::Response& res) {
          SendPage(res, 200, Page("Commit log", LogBody(*library())));
        });
  Route("GET", R"(/ui/commits/(\d+))", "ui_commit", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          const Version v = std::stoull(req.matches[1].str());
          auto lib = library();
          auto commit = lib->GetCommit(v);
          if (!commit.ok()) return SendPageError(res, commit.status());
          auto changes = lib->CommitChanges(v);
          if (!changes.ok()) return SendPageError(res, changes.status());
          std::string body = "<p>" + HtmlEscape(commit->message) +
                             "</p><p class=\"meta\">" +
                             HtmlEscape(commit->kind) + " by " +
                             HtmlEscape(commit->author) + ", " +
                             Date(commit->time_ms) + "</p><ul>";
          for (const Change& c : *changes) {
            body += "<li>" + HtmlEscape(ChangeKindName(c.kind)) + " " +
                    SkillLink(c.id, HtmlEscape(c.id)) + "</li>";
          }
          body += "</ul>";
          SendPage(res, 200,
                   Page("Commit " + std::to_string(v), body));
        });
  Route("GET", "/ui/audit", "ui_audit", Access::kRead,
        [this](const httplib::Request&, httplib::Response& res) {
          SendPage(res, 200,
                   Page("Rejected proposals", AuditBody(*library())));
        });
}

}  // namespace skilldb::server::internal
