// skilldb export --sqlite FILE: the library as an SQLite database for
// offline inspection with SQL.
//
// Tables: skills (live as of the version), revisions (every retained
// revision), commits, changes, evidence (one row per report), usage, audit,
// tags, and skills_fts, an FTS5 index over the skills' text. The file is
// written under a temporary name and renamed into place, so a failed export
// never leaves a partial database under FILE.
#include <cstdint>
#include <filesystem>
#include <map>

#include "context.h"
#include "skilldb/util/sqlite.h"

namespace skilldb::cli {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE skills (
  id TEXT PRIMARY KEY, title TEXT NOT NULL, summary TEXT, body TEXT, code TEXT,
  language TEXT, status TEXT, tags TEXT, ops TEXT, arch TEXT,
  provenance TEXT, lineage TEXT, extra TEXT, evidence_count INTEGER,
  trust TEXT, utility REAL, json TEXT NOT NULL);
CREATE TABLE revisions (
  id TEXT NOT NULL, version INTEGER NOT NULL, deleted INTEGER NOT NULL,
  title TEXT, status TEXT, json TEXT, PRIMARY KEY (id, version));
CREATE TABLE commits (
  version INTEGER PRIMARY KEY, time_ms INTEGER, kind TEXT, message TEXT,
  author TEXT, added INTEGER, updated INTEGER, deleted INTEGER,
  num_skills INTEGER, total_length INTEGER);
CREATE TABLE changes (version INTEGER, id TEXT, change TEXT, PRIMARY KEY (version, id));
CREATE TABLE evidence (
  skill_id TEXT, idx INTEGER, task TEXT, verifier TEXT, device TEXT,
  passed INTEGER, speedup REAL, ci_low REAL, ci_high REAL, report TEXT,
  PRIMARY KEY (skill_id, idx));
CREATE TABLE usage (
  skill_id TEXT PRIMARY KEY, retrieved INTEGER, selected INTEGER,
  applied INTEGER, succeeded INTEGER, failed INTEGER,
  last_used_version INTEGER, utility REAL);
CREATE TABLE audit (
  seq INTEGER PRIMARY KEY, time_ms INTEGER, event TEXT, proposal_id TEXT,
  skill_id TEXT, author TEXT, base_version INTEGER, version INTEGER,
  reasons TEXT, json TEXT);
CREATE TABLE tags (name TEXT PRIMARY KEY, version INTEGER);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE skills_fts USING fts5(id UNINDEXED, title, summary, body, tags, ops, code);
)sql";

// The export's database: statements prepared once per text (the inserts
// run once per row), through the shared SQLite helper.
class Db {
 public:
  Status Open(const std::string& path) {
    SKILLDB_ASSIGN_OR_RETURN(db_, util::SqliteDb::Create(path, "export"));
    return db_->Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;",
                     db_->name());
  }
  Status Exec(const char* sql) { return db_->Exec(sql, db_->name()); }
  // Binds `values` (text, integer or real) to `sql` and runs it.
  Status Insert(const char* sql, const std::vector<Json>& values) {
    auto it = stmts_.find(sql);
    if (it == stmts_.end()) {
      SKILLDB_ASSIGN_OR_RETURN(util::SqliteStatement stmt,
                               db_->Prepare(sql, db_->name()));
      it = stmts_.emplace(sql, std::move(stmt)).first;
    }
    util::SqliteStatement& stmt = it->second;
    stmt.Reset();
    for (size_t i = 0; i < values.size(); ++i) {
      const Json& v = values[i];
      const int col = static_cast<int>(i + 1);
      if (v.is_null()) {
        stmt.Null(col);
      } else if (v.is_boolean()) {
        stmt.Int(col, v.get<bool>() ? 1 : 0);
      } else if (v.is_number_unsigned() &&
                 v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        stmt.Text(col, v.dump());  // SQLite integers are 64-bit signed
      } else if (v.is_number_integer()) {
        stmt.Int(col, v.get<int64_t>());
      } else if (v.is_number()) {
        stmt.Real(col, v.get<double>());
      } else {
        stmt.Text(col, v.is_string() ? v.get<std::string>()
                                     : util::DumpLossy(v));
      }
    }
    return stmt.Run(db_->name() + ": " + sql);
  }

 private:
  std::unique_ptr<util::SqliteDb> db_;
  std::map<std::string, util::SqliteStatement> stmts_;
};

Json Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

Status WriteAll(Library& lib, Db& db, Version version, Progress& progress,
                uint64_t* skills_written) {
  auto head = lib.GetCommit(version);
  const uint64_t total = head.ok() ? head->num_skills : 0;
  SKILLDB_RETURN_IF_ERROR(db.Exec(kSchema));
  std::map<std::string, UsageCounters> usage;
  SKILLDB_RETURN_IF_ERROR(
      lib.ScanUsage([&](const std::string& id, const UsageCounters& c) {
        usage[id] = c;
        return true;
      }));
  Status status;
  SKILLDB_RETURN_IF_ERROR(
      lib.Scan(ReadOptions{.as_of = version}, [&](const Skill& s) {
        Json j = AsJson(s);
        const double utility = usage.count(s.id) ? usage[s.id].utility()
                                                 : UsageCounters().utility();
        status = db.Insert(
            "INSERT INTO skills VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            {s.id, s.title, s.summary, s.body, s.code,
             std::string(LanguageName(s.language)),
             std::string(SkillStatusName(s.status)), Json(s.tags), Json(s.ops),
             Json(s.arch), j.value("provenance", Json(nullptr)),
             j.value("lineage", Json(nullptr)), j.value("extra", Json(nullptr)),
             Json(s.evidence_json.size()),
             std::string(TrustName(SkillTrust(s))), utility, j});
        if (status.ok()) {
          status = db.Insert("INSERT INTO skills_fts VALUES (?,?,?,?,?,?,?)",
                             {s.id, s.title, s.summary, s.body, Joined(s.tags),
                              Joined(s.ops), s.code});
        }
        for (size_t i = 0; status.ok() && i < s.evidence_json.size(); ++i) {
          auto r = ReportFromJson(s.evidence_json[i]);
          VerificationReport rep = r.ok() ? *r : VerificationReport();
          status =
              db.Insert("INSERT INTO evidence VALUES (?,?,?,?,?,?,?,?,?,?)",
                        {s.id, Json(i), rep.task, rep.verifier, rep.device,
                         rep.passed, rep.speedup.ratio, rep.speedup.ci_low,
                         rep.speedup.ci_high, s.evidence_json[i]});
        }
        progress.Update(++*skills_written, total);
        return status.ok();
      }));
  SKILLDB_RETURN_IF_ERROR(status);
  SKILLDB_RETURN_IF_ERROR(
      lib.ScanRevisions([&](const std::string& id, const Revision& r) {
        status = db.Insert(
            "INSERT INTO revisions VALUES (?,?,?,?,?,?)",
            {id, r.version, r.deleted,
             r.deleted ? Json(nullptr) : Json(r.skill.title),
             r.deleted ? Json(nullptr)
                       : Json(std::string(SkillStatusName(r.skill.status))),
             r.deleted ? Json(nullptr) : AsJson(r.skill)});
        return status.ok();
      }));
  SKILLDB_RETURN_IF_ERROR(status);
  SKILLDB_ASSIGN_OR_RETURN(auto commits, lib.Log({}));
  for (const CommitInfo& c : commits) {
    SKILLDB_RETURN_IF_ERROR(
        db.Insert("INSERT INTO commits VALUES (?,?,?,?,?,?,?,?,?,?)",
                  {c.version, c.time_ms, c.kind, c.message, c.author, c.added,
                   c.updated, c.deleted, c.num_skills, c.total_length}));
    auto changes = lib.CommitChanges(c.version);
    if (!changes.ok()) continue;  // collected by gc
    for (const Change& ch : *changes) {
      SKILLDB_RETURN_IF_ERROR(
          db.Insert("INSERT INTO changes VALUES (?,?,?)",
                    {c.version, ch.id, std::string(ChangeKindName(ch.kind))}));
    }
  }
  for (const auto& [id, c] : usage) {
    SKILLDB_RETURN_IF_ERROR(
        db.Insert("INSERT INTO usage VALUES (?,?,?,?,?,?,?,?)",
                  {id, c.counts[0], c.counts[1], c.counts[2], c.counts[3],
                   c.counts[4], c.last_used_version, c.utility()}));
  }
  SKILLDB_ASSIGN_OR_RETURN(auto audit, lib.Audit({}));
  for (const AuditEntry& e : audit) {
    SKILLDB_RETURN_IF_ERROR(db.Insert(
        "INSERT INTO audit VALUES (?,?,?,?,?,?,?,?,?,?)",
        {e.seq, e.time_ms, e.event, e.proposal_id, e.skill_id, e.author,
         e.base_version, e.version, Json(e.reasons), Json(e.json)}));
  }
  SKILLDB_ASSIGN_OR_RETURN(auto tags, lib.Tags());
  for (const TagInfo& t : tags) {
    SKILLDB_RETURN_IF_ERROR(
        db.Insert("INSERT INTO tags VALUES (?,?)", {t.name, t.version}));
  }
  const LibraryInfo info = lib.Info();
  for (auto [k, v] : std::vector<std::pair<std::string, Json>>{
           {"exported_version", version},
           {"head", info.head},
           {"analyzer", std::string(AnalyzerName(info.analyzer))},
           {"path", info.path}}) {
    SKILLDB_RETURN_IF_ERROR(
        db.Insert("INSERT INTO meta VALUES (?,?)", {k, util::DumpLossy(v)}));
  }
  return db.Exec("COMMIT;");
}

}  // namespace

int RunExportSqlite(const GlobalArgs& g, const ExportArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  const Version version = a.as_of.value_or((*library)->CurrentVersion());
  const std::string tmp = a.sqlite + ".tmp";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  uint64_t skills = 0;
  Status s;
  {
    Progress progress(g.progress, io.err, "exporting", "skills");
    Db db;
    s = db.Open(tmp);
    if (s.ok()) s = WriteAll(**library, db, version, progress, &skills);
  }
  if (s.ok()) {
    std::filesystem::rename(tmp, a.sqlite, ec);
    if (ec)
      s = Status::IOError("cannot write '" + a.sqlite + "': " + ec.message());
  }
  if (!s.ok()) {
    std::filesystem::remove(tmp, ec);
    return Fail(g, io, s);
  }
  if (g.json) {
    PrintJson(
        io,
        Json{{"sqlite", a.sqlite}, {"version", version}, {"skills", skills}});
  } else {
    *io.out << "exported " << skills << " skills (version " << version
            << ") with history, "
            << "evidence, usage and the audit log to " << EscapeLine(a.sqlite)
            << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
