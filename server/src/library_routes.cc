// The library's read routes (search, skills, history, log, commits, diff,
// stats, audit) and usage recording. Every response is built from the API
// layer's JSON codecs (skilldb/json.h), so the server, the CLI's --json and
// the Python module speak one format.
#include "server_impl.h"
#include "skilldb/json.h"

namespace skilldb::server::internal {
namespace {

Result<std::optional<Version>> AsOfParam(const httplib::Request& req) {
  SKILLDB_ASSIGN_OR_RETURN(auto v, UintParam(req, "as_of"));
  return v ? std::optional<Version>(*v) : std::optional<Version>();
}

// The query texts and options of a POST /v1/search body:
// {"query": "..."} or {"queries": ["...", ...]}, and "options" (the
// QueryOptions codec).
Status ReadSearch(const Json& body, size_t max_queries,
                  std::vector<std::string>* texts, QueryOptions* options) {
  if (auto q = body.find("query"); q != body.end()) {
    if (!q->is_string()) {
      return Status::InvalidArgument("search: 'query' must be a string");
    }
    texts->push_back(q->get<std::string>());
  }
  if (auto qs = body.find("queries"); qs != body.end()) {
    if (!qs->is_array()) {
      return Status::InvalidArgument("search: 'queries' must be an array");
    }
    for (const auto& q : *qs) {
      if (!q.is_string()) {
        return Status::InvalidArgument(
            "search: every entry of 'queries' must be a string");
      }
      texts->push_back(q.get<std::string>());
    }
  }
  if (texts->empty()) {
    return Status::InvalidArgument("search: give 'query' or 'queries'");
  }
  if (texts->size() > max_queries) {
    return Status::InvalidArgument(
        "search: " + std::to_string(texts->size()) +
        " queries, over the server's limit of " + std::to_string(max_queries));
  }
  if (auto o = body.find("options"); o != body.end() && !o->is_null()) {
    SKILLDB_ASSIGN_OR_RETURN(*options, FromJson<QueryOptions>(o->dump()));
  }
  return Status::Ok();
}

// The options of GET /v1/search?q=...&k=&as_of=&fields=&language=&status=
Result<QueryOptions> SearchParams(const httplib::Request& req) {
  QueryOptions options;
  SKILLDB_ASSIGN_OR_RETURN(auto k, UintParam(req, "k"));
  if (k) {
    if (*k > kMaxQueryK) {
      return Status::InvalidArgument("k must be at most " +
                                     std::to_string(kMaxQueryK));
    }
    options.k = *k;
  }
  SKILLDB_ASSIGN_OR_RETURN(options.as_of, AsOfParam(req));
  if (req.has_param("fields")) {
    SKILLDB_ASSIGN_OR_RETURN(options.fields,
                             ParseHitFields(req.get_param_value("fields")));
  }
  if (req.has_param("language")) {
    SKILLDB_ASSIGN_OR_RETURN(options.language,
                             ParseLanguage(req.get_param_value("language")));
  }
  if (req.has_param("status")) {
    SKILLDB_ASSIGN_OR_RETURN(options.status,
                             ParseSkillStatus(req.get_param_value("status")));
  }
  for (const char* list : {"tags", "ops", "arch"}) {
    const size_t n = req.get_param_value_count(list);
    std::vector<std::string>* out = list[0] == 't'   ? &options.tags
                                    : list[0] == 'o' ? &options.ops
                                                     : &options.arch;
    for (size_t i = 0; i < n; ++i) out->push_back(req.get_param_value(list, i));
  }
  return options;
}

Result<std::vector<UsageRecord>> ReadUsage(const Json& body, size_t limit) {
  auto records = body.find("records");
  if (records == body.end() || !records->is_array()) {
    return Status::InvalidArgument("usage: 'records' must be an array");
  }
  if (records->size() > limit) {
    return Status::InvalidArgument("usage: " +
                                   std::to_string(records->size()) +
                                   " records, over the server's limit of " +
                                   std::to_string(limit));
  }
  std::vector<UsageRecord> out;
  out.reserve(records->size());
  for (const auto& r : *records) {
    SKILLDB_ASSIGN_OR_RETURN(UsageRecord record,
                             FromJson<UsageRecord>(r.dump()));
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

void ServerImpl::AddLibraryRoutes() {
  auto search = [this](const std::vector<std::string>& texts,
                       const QueryOptions& options, httplib::Response& res) {
    auto lib = library();
    if (texts.size() == 1) {
      auto r = lib->Query(options, texts.front());
      if (!r.ok()) return SendError(res, r.status());
      return SendJson(res, 200,
                      "{\"version\":" + std::to_string(r->version) +
                          ",\"results\":[" + ToJson(*r) + "]}");
    }
    auto r = lib->QueryBatch(options, texts, options_.query_threads);
    if (!r.ok()) return SendError(res, r.status());
    const Version v = r->empty() ? lib->CurrentVersion() : r->front().version;
    SendJson(res, 200,
             "{\"version\":" + std::to_string(v) +
                 ",\"results\":" + JsonList(*r) + "}");
  };
  Route("POST", "/v1/search", "search", Access::kRead,
        [this, search](const httplib::Request& req, httplib::Response& res) {
          auto body = ParseBody(req, "search");
          if (!body.ok()) return SendError(res, body.status());
          std::vector<std::string> texts;
          QueryOptions options;
          Status s = ReadSearch(*body, options_.max_batch_queries, &texts,
                                &options);
          if (!s.ok()) return SendError(res, s);
          search(texts, options, res);
        });
  Route("GET", "/v1/search", "search_get", Access::kRead,
        [search](const httplib::Request& req, httplib::Response& res) {
          auto options = SearchParams(req);
          if (!options.ok()) return SendError(res, options.status());
          search({req.get_param_value("q")}, *options, res);
        });
  Route("GET", "/v1/info", "info", Access::kRead,
        [this](const httplib::Request&, httplib::Response& res) {
          SendJson(res, 200, ToJson(library()->Info()));
        });
  Route("GET", "/v1/stats", "stats", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto as_of = AsOfParam(req);
          if (!as_of.ok()) return SendError(res, as_of.status());
          auto s = library()->Stats(ReadOptions{*as_of});
          if (!s.ok()) return SendError(res, s.status());
          SendJson(res, 200, ToJson(*s));
        });
  Route("GET", "/v1/skills", "skills", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto as_of = AsOfParam(req);
          if (!as_of.ok()) return SendError(res, as_of.status());
          auto limit = UintParam(req, "limit");
          if (!limit.ok()) return SendError(res, limit.status());
          const size_t max = std::min<uint64_t>(limit->value_or(1000), 10000);
          const std::string after = req.get_param_value("after");
          std::vector<Skill> skills;
          std::string next;
          Status s = library()->Scan(ReadOptions{*as_of}, [&](const Skill& k) {
            if (!after.empty() && k.id <= after) return true;
            if (skills.size() == max) {
              next = skills.back().id;
              return false;
            }
            skills.push_back(k);
            return true;
          });
          if (!s.ok()) return SendError(res, s);
          Json tail = next.empty() ? Json(nullptr) : Json(next);
          SendJson(res, 200,
                   "{\"skills\":" + JsonList(skills) + ",\"next\":" +
                       tail.dump() + "}");
        });
  Route("GET", R"(/v1/skills/([^/]+))", "skill", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto as_of = AsOfParam(req);
          if (!as_of.ok()) return SendError(res, as_of.status());
          auto s = library()->Get(req.matches[1].str(), ReadOptions{*as_of});
          if (!s.ok()) return SendError(res, s.status());
          SendJson(res, 200, SkillToJson(*s));
        });
  Route("GET", R"(/v1/skills/([^/]+)/history)", "history", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto h = library()->History(req.matches[1].str());
          if (!h.ok()) return SendError(res, h.status());
          SendJson(res, 200, "{\"revisions\":" + JsonList(*h) + "}");
        });
  Route("GET", R"(/v1/skills/([^/]+)/usage)", "skill_usage", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto u = library()->GetUsage(req.matches[1].str());
          if (!u.ok()) return SendError(res, u.status());
          SendJson(res, 200, ToJson(*u));
        });
  Route("GET", "/v1/log", "log", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto limit = UintParam(req, "limit");
          auto from = UintParam(req, "from");
          if (!limit.ok()) return SendError(res, limit.status());
          if (!from.ok()) return SendError(res, from.status());
          LogOptions options;
          options.limit = limit->value_or(100);
          options.from = *from;
          auto log = library()->Log(options);
          if (!log.ok()) return SendError(res, log.status());
          SendJson(res, 200, "{\"commits\":" + JsonList(*log) + "}");
        });
  Route("GET", R"(/v1/commits/(\d+))", "commit", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          const Version v = std::stoull(req.matches[1].str());
          auto lib = library();
          auto c = lib->GetCommit(v);
          if (!c.ok()) return SendError(res, c.status());
          auto changes = lib->CommitChanges(v);
          if (!changes.ok()) return SendError(res, changes.status());
          SendJson(res, 200,
                   "{\"commit\":" + ToJson(*c) +
                       ",\"changes\":" + JsonList(*changes) + "}");
        });
  Route("GET", "/v1/diff", "diff", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto from = UintParam(req, "from");
          auto to = UintParam(req, "to");
          if (!from.ok()) return SendError(res, from.status());
          if (!to.ok()) return SendError(res, to.status());
          if (!*from || !*to) {
            return SendError(res, Status::InvalidArgument(
                                      "diff needs ?from=V&to=V"));
          }
          auto d = library()->Diff(**from, **to);
          if (!d.ok()) return SendError(res, d.status());
          SendJson(res, 200, "{\"entries\":" + JsonList(*d) + "}");
        });
  Route("GET", "/v1/audit", "audit", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto limit = UintParam(req, "limit");
          auto after = UintParam(req, "after");
          if (!limit.ok()) return SendError(res, limit.status());
          if (!after.ok()) return SendError(res, after.status());
          AuditOptions options;
          options.limit = limit->value_or(0);
          options.after_seq = after->value_or(0);
          auto a = library()->Audit(options);
          if (!a.ok()) return SendError(res, a.status());
          SendJson(res, 200, "{\"entries\":" + JsonList(*a) + "}");
        });
  Route("POST", "/v1/usage", "usage", Access::kWrite,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto body = ParseBody(req, "usage");
          if (!body.ok()) return SendError(res, body.status());
          auto records = ReadUsage(*body, options_.max_usage_records);
          if (!records.ok()) return SendError(res, records.status());
          Status s = library()->RecordUsage(*records);
          if (!s.ok()) return SendError(res, s);
          SendJson(res, 200,
                   "{\"recorded\":" + std::to_string(records->size()) + "}");
        });
}

}  // namespace skilldb::server::internal
