// RemoteLibrary (remote_library.h): the Library interface over the
// server's JSON API, decoded with the API layer's codecs.
#include "skilldb/server/remote_library.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "skilldb/json.h"
#include "skilldb/replay_verifier.h"
#include "skilldb/util/json.h"

namespace skilldb::server {
namespace {

using RJson = nlohmann::ordered_json;

Status NotServed(const char* what) {
  return Status::NotSupported(
      std::string(what) +
      " is not served over HTTP: a server takes skills only through "
      "verified insertion (POST /v1/proposals); run it on the server's host");
}

StatusCode CodeNamed(const std::string& name) {
  for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    if (StatusCodeName(static_cast<StatusCode>(c)) == name) {
      return static_cast<StatusCode>(c);
    }
  }
  return StatusCode::kInternal;
}

// A server's answer, parsed with bounds (it is untrusted: nesting, value
// count, repeated keys); a discarded value when it is not JSON within them.
RJson ParseAnswer(const std::string& body) {
  util::JsonLimits limits;
  limits.max_depth = 64;
  limits.max_bytes = std::max<size_t>(body.size(), 1);
  limits.max_values = body.size() / 2 + 16;
  auto j = util::ParseUntrustedJson<RJson>(body, "the server's answer", limits);
  if (!j.ok()) return RJson(RJson::value_t::discarded);
  return std::move(j).value();
}

// The server's error body as a Status (its code), or one made from the
// HTTP status when the body is not the server's.
Status ErrorFrom(int http_status, const std::string& body,
                 const std::string& what) {
  RJson j = ParseAnswer(body);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const RJson& e = j["error"];
    // Members of the wrong type are read as absent (value() would throw).
    const std::string code =
        e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>()
                                                    : std::string("internal");
    const std::string message = e.contains("message") && e["message"].is_string()
                                    ? e["message"].get<std::string>()
                                    : std::string();
    return Status(CodeNamed(code), what + ": " + message);
  }
  const std::string excerpt = body.substr(0, 200);
  if (http_status == 404) return Status::NotFound(what + ": " + excerpt);
  if (http_status == 429 || http_status == 503) {
    return Status::Unavailable(what + ": the server is busy (HTTP " +
                               std::to_string(http_status) + ")");
  }
  return Status::Internal(what + ": HTTP " + std::to_string(http_status) +
                          " " + excerpt);
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", u);
      out += buf;
    }
  }
  return out;
}

template <typename T>
Result<std::vector<T>> ListOf(const std::string& body, const char* key) {
  RJson j = ParseAnswer(body);
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) {
    return Status::Internal(std::string("the server's answer has no '") +
                            key + "' list");
  }
  std::vector<T> out;
  for (const auto& e : j[key]) {
    SKILLDB_ASSIGN_OR_RETURN(T v, FromJson<T>(e.dump()));
    out.push_back(std::move(v));
  }
  return out;
}

class Http {
 public:
  explicit Http(RemoteOptions options) : options_(std::move(options)) {}
  const RemoteOptions& options() const { return options_; }

  // The body of a 2xx answer to `method` `path`, else the error.
  Result<std::string> Call(const char* method, const std::string& path,
                           const std::string& body = "") const {
    const std::string what = std::string(method) + " " + path;
    for (int attempt = 0;; ++attempt) {
      httplib::Client client(options_.url);
      client.set_tcp_nodelay(true);  // the body is a second write: no Nagle wait
      const auto timeout = std::chrono::milliseconds(options_.timeout_ms);
      client.set_connection_timeout(timeout);
      client.set_read_timeout(timeout);
      client.set_write_timeout(timeout);
      httplib::Headers headers;
      if (!options_.token.empty()) {
        headers.emplace("Authorization", "Bearer " + options_.token);
      }
      httplib::Result res =
          std::string(method) == "GET"
              ? client.Get(path, headers)
              : client.Post(path, headers, body, "application/json");
      if (!res) {
        const auto err = res.error();
        if (err == httplib::Error::Read || err == httplib::Error::Write) {
          return Status::DeadlineExceeded(what + ": no answer from " +
                                          options_.url + " (" +
                                          httplib::to_string(err) + ")");
        }
        return Status::Unavailable(what + ": cannot reach " + options_.url +
                                   " (" + httplib::to_string(err) + ")");
      }
      if (res->status >= 200 && res->status < 300) return res->body;
      if ((res->status == 429 || res->status == 503) &&
          attempt < options_.retries) {
        int wait_s = 1;
        if (res->has_header("Retry-After")) {
          wait_s = std::atoi(res->get_header_value("Retry-After").c_str());
        }
        std::this_thread::sleep_for(
            std::chrono::seconds(std::clamp(wait_s, 1, 30)));
        continue;
      }
      return ErrorFrom(res->status, res->body, what);
    }
  }

 private:
  RemoteOptions options_;
};

// A proposal decided by the server's queue (remote_library.h).
class RemoteProposal final : public Proposal {
 public:
  RemoteProposal(std::shared_ptr<const Http> http, Skill candidate,
                 ProposalOptions options, Version base)
      : http_(std::move(http)),
        candidate_(std::move(candidate)),
        options_(std::move(options)),
        base_(base) {}

  const std::string& id() const override { return id_; }
  Version base_version() const override { return base_; }
  const Skill& candidate() const override { return candidate_; }

  Result<std::vector<DuplicateMatch>> Duplicates() override {
    const std::string body = "{\"candidate\":" + SkillToJson(candidate_) +
                             ",\"options\":" + ToJson(options_) + "}";
    SKILLDB_ASSIGN_OR_RETURN(std::string answer,
                             http_->Call("POST", "/v1/duplicates", body));
    return ListOf<DuplicateMatch>(answer, "duplicates");
  }

  Result<VerificationReport> Verify(
      Verifier& verifier, const VerificationRequest& request) override {
    if (queued_) {
      return Status::FailedPrecondition("proposal " + id_ +
                                        " was already sent to the queue");
    }
    QueuedRequest q;
    q.candidate = candidate_;
    q.options = options_;
    if (auto* replay = dynamic_cast<ReplayVerifier*>(&verifier)) {
      SKILLDB_ASSIGN_OR_RETURN(q.replay_report, replay->Verify(request));
    } else {
      q.verification = request;
    }
    SKILLDB_ASSIGN_OR_RETURN(std::string answer,
                             http_->Call("POST", "/v1/proposals", ToJson(q)));
    SKILLDB_ASSIGN_OR_RETURN(QueuedProposal sent,
                             FromJson<QueuedProposal>(answer));
    id_ = sent.id;
    queued_ = true;
    SKILLDB_ASSIGN_OR_RETURN(final_, WaitForDecision());
    if (final_.state == QueueState::kFailed) {
      std::string why;
      for (const auto& r : final_.reasons) why += (why.empty() ? "" : "; ") + r;
      return Status::Unavailable("queued proposal " + id_ + " failed: " + why);
    }
    if (!final_.report) {
      return Status::Internal("queued proposal " + id_ + " has no report");
    }
    return *final_.report;
  }

  Result<ProposalOutcome> Commit() override {
    if (!queued_) {
      return Status::FailedPrecondition(
          "a remote proposal is decided by the server's queue: call Verify "
          "first");
    }
    if (committed_) {
      return Status::FailedPrecondition("proposal " + id_ +
                                        " was already committed");
    }
    committed_ = true;
    if (final_.state == QueueState::kConflict) {
      std::string why;
      for (const auto& r : final_.reasons) why += (why.empty() ? "" : "; ") + r;
      return Status::Aborted(why + " (propose again)");
    }
    if (!final_.outcome) {
      return Status::Internal("queued proposal " + id_ + " ended " +
                              std::string(QueueStateName(final_.state)) +
                              " without an outcome");
    }
    return *final_.outcome;
  }

 private:
  Result<QueuedProposal> WaitForDecision() const {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(http_->options().proposal_timeout_ms);
    auto pause = std::chrono::milliseconds(20);
    while (true) {
      SKILLDB_ASSIGN_OR_RETURN(std::string answer,
                               http_->Call("GET", "/v1/proposals/" + id_));
      SKILLDB_ASSIGN_OR_RETURN(QueuedProposal q,
                               FromJson<QueuedProposal>(answer));
      if (IsFinalQueueState(q.state)) return q;
      if (std::chrono::steady_clock::now() >= deadline) {
        return Status::DeadlineExceeded("queued proposal " + id_ +
                                        " is still " +
                                        std::string(QueueStateName(q.state)));
      }
      // Polling: the server answers at once, so waiting between polls is
      // what keeps this cheap; it backs off to one poll a second.
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
  }

  std::shared_ptr<const Http> http_;
  Skill candidate_;
  ProposalOptions options_;
  Version base_;
  std::string id_;
  bool queued_ = false;
  bool committed_ = false;
  QueuedProposal final_;
};

class RemoteLibrary final : public Library {
 public:
  RemoteLibrary(std::shared_ptr<const Http> http, LibraryInfo info)
      : http_(std::move(http)), info_(std::move(info)) {}

  LibraryInfo Info() const override {
    auto body = http_->Call("GET", "/v1/info");
    if (body.ok()) {
      auto info = FromJson<LibraryInfo>(*body);
      if (info.ok()) return *info;
    }
    return info_;
  }
  Version CurrentVersion() const override { return Info().head; }

  Result<Version> Put(const Skill&, const CommitOptions&) override {
    return NotServed("Put");
  }
  Result<Version> PutMany(const std::vector<Skill>&,
                          const CommitOptions&) override {
    return NotServed("PutMany");
  }
  Result<Version> Import(SkillSource&, const CommitOptions&) override {
    return NotServed("Import");
  }
  Result<Version> Delete(std::string_view, const CommitOptions&) override {
    return NotServed("Delete");
  }
  Result<Version> Commit(const std::vector<Skill>&,
                         const std::vector<std::string>&,
                         const CommitOptions&) override {
    return NotServed("Commit");
  }

  Result<Skill> Get(std::string_view id, const ReadOptions& options) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/skills/" + Escape(id) + AsOf(options.as_of)));
    return ParseSkillJson(body);
  }

  Status Scan(const ReadOptions& options,
              const std::function<bool(const Skill&)>& fn) override {
    std::string after;
    while (true) {
      std::string path = "/v1/skills?limit=1000";
      if (options.as_of) path += "&as_of=" + std::to_string(*options.as_of);
      if (!after.empty()) path += "&after=" + Escape(after);
      SKILLDB_ASSIGN_OR_RETURN(std::string body, http_->Call("GET", path));
      SKILLDB_ASSIGN_OR_RETURN(auto skills, ListOf<Skill>(body, "skills"));
      for (const Skill& s : skills) {
        if (!fn(s)) return Status::Ok();
      }
      RJson j = ParseAnswer(body);
      if (!j.is_object() || !j["next"].is_string()) return Status::Ok();
      after = j["next"].get<std::string>();
    }
  }

  Result<std::vector<Revision>> History(std::string_view id) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/skills/" + Escape(id) + "/history"));
    return ListOf<Revision>(body, "revisions");
  }

  Result<std::vector<CommitInfo>> Log(const LogOptions& options) override {
    std::string path = "/v1/log?limit=" + std::to_string(options.limit);
    if (options.from) path += "&from=" + std::to_string(*options.from);
    SKILLDB_ASSIGN_OR_RETURN(std::string body, http_->Call("GET", path));
    return ListOf<CommitInfo>(body, "commits");
  }

  Result<CommitInfo> GetCommit(Version version) override {
    SKILLDB_ASSIGN_OR_RETURN(RJson j, CommitJson(version));
    return FromJson<CommitInfo>(j["commit"].dump());
  }

  Result<std::vector<Change>> CommitChanges(Version version) override {
    SKILLDB_ASSIGN_OR_RETURN(RJson j, CommitJson(version));
    return ListOf<Change>(j.dump(), "changes");
  }

  Result<std::vector<DiffEntry>> Diff(Version from, Version to) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/diff?from=" + std::to_string(from) +
                               "&to=" + std::to_string(to)));
    return ListOf<DiffEntry>(body, "entries");
  }

  Result<LibraryStats> Stats(const ReadOptions& options) override {
    std::string path = "/v1/stats";
    if (options.as_of) path += "?as_of=" + std::to_string(*options.as_of);
    SKILLDB_ASSIGN_OR_RETURN(std::string body, http_->Call("GET", path));
    return FromJson<LibraryStats>(body);
  }

  Result<QueryResult> Query(const QueryOptions& options,
                            std::string_view text) override {
    RJson req{{"query", std::string(text)},
              {"options", RJson::parse(ToJson(options))}};
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("POST", "/v1/search", util::DumpLossy(req)));
    SKILLDB_ASSIGN_OR_RETURN(auto results, ListOf<QueryResult>(body, "results"));
    if (results.size() != 1) {
      return Status::Internal("the server answered one query with " +
                              std::to_string(results.size()) + " results");
    }
    return std::move(results.front());
  }

  Result<std::vector<QueryResult>> QueryBatch(
      const QueryOptions& options, const std::vector<std::string>& texts,
      int) override {
    if (texts.empty()) return std::vector<QueryResult>();
    RJson req{{"queries", texts}, {"options", RJson::parse(ToJson(options))}};
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("POST", "/v1/search", util::DumpLossy(req)));
    return ListOf<QueryResult>(body, "results");
  }

  Status ScanRevisions(
      const std::function<bool(const std::string&, const Revision&)>&)
      override {
    return NotServed("ScanRevisions");
  }

  Result<std::unique_ptr<Proposal>> Propose(
      const Skill& candidate, const ProposalOptions& options) override {
    SKILLDB_RETURN_IF_ERROR(ValidateSkill(candidate));
    return std::unique_ptr<Proposal>(
        new RemoteProposal(http_, candidate, options, CurrentVersion()));
  }

  Result<std::vector<AuditEntry>> Audit(const AuditOptions& options) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/audit?limit=" + std::to_string(options.limit) +
                               "&after=" + std::to_string(options.after_seq)));
    return ListOf<AuditEntry>(body, "entries");
  }

  Result<QueuedProposal> Enqueue(const QueuedRequest& request) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body, http_->Call("POST", "/v1/proposals", ToJson(request)));
    return FromJson<QueuedProposal>(body);
  }
  Result<QueuedProposal> GetQueued(std::string_view id) override {
    SKILLDB_RETURN_IF_ERROR(ParseQueueId(id).status());
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/proposals/" + std::string(id)));
    return FromJson<QueuedProposal>(body);
  }
  Result<std::vector<QueuedProposal>> ListQueued(
      const QueueListOptions& options) override {
    std::string path = "/v1/proposals?limit=" + std::to_string(options.limit) +
                       "&after=" + std::to_string(options.after_seq);
    if (options.state) {
      path += "&state=" + std::string(QueueStateName(*options.state));
    }
    SKILLDB_ASSIGN_OR_RETURN(std::string body, http_->Call("GET", path));
    return ListOf<QueuedProposal>(body, "proposals");
  }
  Result<QueueCounts> CountQueued() override {
    SKILLDB_ASSIGN_OR_RETURN(std::string body, http_->Call("GET", "/healthz"));
    RJson j = ParseAnswer(body);
    if (!j.is_object() || !j.contains("proposals")) {
      return Status::Internal("the server's /healthz has no proposal counts");
    }
    return FromJson<QueueCounts>(j["proposals"].dump());
  }
  Result<std::optional<QueuedProposal>> ClaimQueued() override {
    return Status::NotSupported(
        "queued proposals are claimed by the server's own workers");
  }
  Status FinishQueued(std::string_view, QueueState,
                      const std::vector<std::string>&) override {
    return Status::NotSupported(
        "queued proposals are finished by the server's own workers");
  }

  Status RecordUsage(std::string_view id, UsageEvent event,
                     uint64_t count) override {
    return RecordUsage({UsageRecord{std::string(id), event, count}});
  }
  Status RecordUsage(const std::vector<UsageRecord>& records) override {
    std::string body = "{\"records\":[";
    for (size_t i = 0; i < records.size(); ++i) {
      if (i > 0) body += ',';
      body += ToJson(records[i]);
    }
    body += "]}";
    return http_->Call("POST", "/v1/usage", body).status();
  }
  Result<UsageCounters> GetUsage(std::string_view id) override {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/skills/" + Escape(id) + "/usage"));
    return FromJson<UsageCounters>(body);
  }
  Status ScanUsage(const std::function<bool(const std::string&,
                                            const UsageCounters&)>&) override {
    return NotServed("ScanUsage");
  }

  Result<Version> SetStatus(const std::vector<std::string>&, SkillStatus,
                            const CommitOptions&) override {
    return NotServed("SetStatus");
  }
  Result<Version> Revert(Version, const CommitOptions&) override {
    return NotServed("Revert");
  }
  Result<std::vector<PruneAction>> PlanPrune(const PrunePolicy&) override {
    return NotServed("PlanPrune");
  }
  Result<Version> ApplyPrune(const std::vector<PruneAction>&,
                             const CommitOptions&) override {
    return NotServed("ApplyPrune");
  }
  Status Tag(std::string_view, Version) override { return NotServed("Tag"); }
  Status DeleteTag(std::string_view) override { return NotServed("DeleteTag"); }
  Result<std::vector<TagInfo>> Tags() override { return NotServed("Tags"); }
  Status Compact() override { return NotServed("Compact"); }
  Result<CheckReport> Check() override { return NotServed("Check"); }
  Result<GcReport> Gc(const GcOptions&) override { return NotServed("Gc"); }

 private:
  static std::string AsOf(const std::optional<Version>& as_of) {
    return as_of ? "?as_of=" + std::to_string(*as_of) : "";
  }
  Result<RJson> CommitJson(Version version) const {
    SKILLDB_ASSIGN_OR_RETURN(
        std::string body,
        http_->Call("GET", "/v1/commits/" + std::to_string(version)));
    RJson j = ParseAnswer(body);
    if (!j.is_object() || !j.contains("commit")) {
      return Status::Internal("the server's commit answer is malformed");
    }
    return j;
  }

  std::shared_ptr<const Http> http_;
  LibraryInfo info_;
};

}  // namespace

Result<std::unique_ptr<Library>> OpenRemoteLibrary(
    const RemoteOptions& options) {
  if (!options.url.starts_with("http://") &&
      !options.url.starts_with("https://")) {
    return Status::InvalidArgument("'" + options.url +
                                   "' is not an http:// or https:// url");
  }
  if (options.timeout_ms <= 0 || options.retries < 0) {
    return Status::InvalidArgument(
        "remote options: timeout_ms must be positive and retries >= 0");
  }
  auto http = std::make_shared<const Http>(options);
  SKILLDB_ASSIGN_OR_RETURN(std::string body, http->Call("GET", "/v1/info"));
  SKILLDB_ASSIGN_OR_RETURN(LibraryInfo info, FromJson<LibraryInfo>(body));
  return std::unique_ptr<Library>(new RemoteLibrary(http, std::move(info)));
}

}  // namespace skilldb::server
