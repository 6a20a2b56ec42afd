// skilldb._skilldb: the module's entry, its exceptions and its value types.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "skilldb/json.h"
#include "skilldb/library.h"

namespace skilldb::python {
namespace {

// The exception class of every status code, created at import.
PyObject* g_errors[static_cast<int>(StatusCode::kInternal) + 1] = {};

constexpr const char* kErrorNames[] = {
    "Error",                    // kOk: unused; the base class
    "NotFoundError",            "InvalidArgumentError",
    "AlreadyExistsError",       "FailedPreconditionError",
    "AbortedError",             "CorruptionError",
    "IOError",                  "UnavailableError",
    "DeadlineExceededError",    "NotSupportedError",
    "InternalError"};

// repr() of a string, as Python writes it.
std::string Q(const std::string& s) {
  return nb::cast<std::string>(nb::repr(nb::str(s.data(), s.size())));
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

template <typename T, typename Cls, typename Repr>
void Common(Cls& cls, Repr repr) {
  cls.def("to_json", [](const T& v) { return ToJson(v); },
          "The value as compact JSON (the API layer's codec).");
  cls.def("to_dict", [](const T& v) { return JsonLoads(ToJson(v)); },
          "The value as a dict (json.loads of to_json()).");
  cls.def("__repr__", repr);
  cls.def("__eq__", [](const T& a, const T& b) { return a == b; });
}

void SetSkillLanguage(Skill& s, const std::string& name) {
  s.language = Take(ParseLanguage(name));
}
void SetSkillStatus(Skill& s, const std::string& name) {
  s.status = Take(ParseSkillStatus(name));
}

void BindSkill(nb::module_& m) {
  auto cls = nb::class_<Skill>(m, "Skill",
                               "One skill: a short, verified write-up of a "
                               "kernel optimization technique.");
  cls.def(
      "__init__",
      [](Skill* s, std::string id, std::string title, std::string summary,
         std::string body, std::string code, std::string language,
         std::vector<std::string> tags, std::vector<std::string> ops,
         std::vector<std::string> arch, std::string status) {
        new (s) Skill();
        s->id = std::move(id);
        s->title = std::move(title);
        s->summary = std::move(summary);
        s->body = std::move(body);
        s->code = std::move(code);
        SetSkillLanguage(*s, language);
        s->tags = std::move(tags);
        s->ops = std::move(ops);
        s->arch = std::move(arch);
        SetSkillStatus(*s, status);
      },
      nb::arg("id"), nb::arg("title"), nb::arg("summary") = "",
      nb::arg("body") = "", nb::arg("code") = "", nb::arg("language") = "any",
      nb::arg("tags") = std::vector<std::string>(),
      nb::arg("ops") = std::vector<std::string>(),
      nb::arg("arch") = std::vector<std::string>(),
      nb::arg("status") = "active");
  cls.def_rw("id", &Skill::id)
      .def_rw("title", &Skill::title)
      .def_rw("summary", &Skill::summary)
      .def_rw("body", &Skill::body)
      .def_rw("code", &Skill::code)
      .def_rw("tags", &Skill::tags)
      .def_rw("ops", &Skill::ops)
      .def_rw("arch", &Skill::arch)
      .def_rw("evidence_json", &Skill::evidence_json,
              "Verification reports, each a JSON object (compact text).")
      .def_prop_rw(
          "language",
          [](const Skill& s) { return std::string(LanguageName(s.language)); },
          SetSkillLanguage)
      .def_prop_rw(
          "status",
          [](const Skill& s) { return std::string(SkillStatusName(s.status)); },
          SetSkillStatus)
      .def("validate", [](const Skill& s) { Check(ValidateSkill(s)); },
           "Raises InvalidArgumentError naming what a stored skill may not be.")
      .def_static(
          "from_json", [](const std::string& text) { return Take(ParseSkillJson(text)); },
          "Reads one JSONL line (the import format).")
      .def_static(
          "from_dict",
          [](const nb::dict& d) { return Take(ParseSkillJson(JsonDumps(d))); },
          "Reads a dict of the import format.");
  Common<Skill>(cls, [](const Skill& s) {
    return "Skill(id=" + Q(s.id) + ", title=" + Q(s.title) + ", status=" +
           Q(std::string(SkillStatusName(s.status))) + ")";
  });
}

void BindQueryTypes(nb::module_& m) {
  auto counters = nb::class_<UsageCounters>(m, "UsageCounters");
  for (int e = 0; e < kNumUsageEvents; ++e) {
    const auto event = static_cast<UsageEvent>(e);
    // The names are string literals (NUL-terminated, static).
    counters.def_prop_ro(UsageEventName(event).data(),
                         [event](const UsageCounters& c) { return c.count(event); });
  }
  counters.def_ro("last_used_version", &UsageCounters::last_used_version)
      .def_prop_ro("utility", &UsageCounters::utility,
                   "(succeeded + 1) / (succeeded + failed + 2)");
  Common<UsageCounters>(counters, [](const UsageCounters& c) {
    return "UsageCounters(retrieved=" +
           std::to_string(c.count(UsageEvent::kRetrieved)) +
           ", applied=" + std::to_string(c.count(UsageEvent::kApplied)) +
           ", utility=" + Num(c.utility()) + ")";
  });

  auto hit = nb::class_<Hit>(m, "Hit", "One BM25 hit with the fields asked for.");
  hit.def_ro("id", &Hit::id)
      .def_ro("score", &Hit::score)
      .def_ro("revision", &Hit::revision)
      .def_ro("title", &Hit::title)
      .def_ro("summary", &Hit::summary)
      .def_ro("body", &Hit::body)
      .def_ro("code", &Hit::code)
      .def_ro("tags", &Hit::tags)
      .def_ro("ops", &Hit::ops)
      .def_ro("arch", &Hit::arch)
      .def_ro("usage", &Hit::usage)
      .def_prop_ro("language",
                   [](const Hit& h) { return std::string(LanguageName(h.language)); })
      .def_prop_ro("status",
                   [](const Hit& h) { return std::string(SkillStatusName(h.status)); });
  Common<Hit>(hit, [](const Hit& h) {
    return "Hit(id=" + Q(h.id) + ", score=" + Num(h.score) + ")";
  });

  auto result = nb::class_<QueryResult>(m, "QueryResult");
  result.def_ro("version", &QueryResult::version).def_ro("hits", &QueryResult::hits);
  result.def("__len__", [](const QueryResult& r) { return r.hits.size(); });
  result.def("__getitem__", [](const QueryResult& r, size_t i) {
    if (i >= r.hits.size()) throw nb::index_error();
    return r.hits[i];
  });
  Common<QueryResult>(result, [](const QueryResult& r) {
    return "QueryResult(version=" + std::to_string(r.version) +
           ", hits=" + std::to_string(r.hits.size()) + ")";
  });
}

void BindHistoryTypes(nb::module_& m) {
  auto commit = nb::class_<CommitInfo>(m, "CommitInfo");
  commit.def_ro("version", &CommitInfo::version)
      .def_ro("time_ms", &CommitInfo::time_ms)
      .def_ro("kind", &CommitInfo::kind)
      .def_ro("message", &CommitInfo::message)
      .def_ro("author", &CommitInfo::author)
      .def_ro("added", &CommitInfo::added)
      .def_ro("updated", &CommitInfo::updated)
      .def_ro("deleted", &CommitInfo::deleted)
      .def_ro("num_skills", &CommitInfo::num_skills);
  Common<CommitInfo>(commit, [](const CommitInfo& c) {
    return "CommitInfo(version=" + std::to_string(c.version) + ", kind=" +
           Q(c.kind) + ", message=" + Q(c.message) + ")";
  });

  auto change = nb::class_<Change>(m, "Change");
  change.def_ro("id", &Change::id).def_prop_ro("kind", [](const Change& c) {
    return std::string(ChangeKindName(c.kind));
  });
  Common<Change>(change, [](const Change& c) {
    return "Change(id=" + Q(c.id) + ", kind=" +
           Q(std::string(ChangeKindName(c.kind))) + ")";
  });

  auto rev = nb::class_<Revision>(m, "Revision");
  rev.def_ro("version", &Revision::version)
      .def_ro("deleted", &Revision::deleted)
      .def_ro("skill", &Revision::skill);
  Common<Revision>(rev, [](const Revision& r) {
    return "Revision(version=" + std::to_string(r.version) +
           (r.deleted ? ", deleted=True" : ", id=" + Q(r.skill.id)) + ")";
  });

  auto diff = nb::class_<DiffEntry>(m, "DiffEntry");
  diff.def_ro("id", &DiffEntry::id)
      .def_prop_ro("kind",
                   [](const DiffEntry& d) { return std::string(ChangeKindName(d.kind)); })
      .def_ro("before", &DiffEntry::before)
      .def_ro("after", &DiffEntry::after);
  Common<DiffEntry>(diff, [](const DiffEntry& d) {
    return "DiffEntry(id=" + Q(d.id) + ", kind=" +
           Q(std::string(ChangeKindName(d.kind))) + ")";
  });

  auto info = nb::class_<LibraryInfo>(m, "LibraryInfo");
  info.def_ro("path", &LibraryInfo::path)
      .def_ro("read_only", &LibraryInfo::read_only)
      .def_ro("head", &LibraryInfo::head)
      .def_ro("oldest_retained", &LibraryInfo::oldest_retained)
      .def_ro("k1", &LibraryInfo::k1)
      .def_ro("b", &LibraryInfo::b);
  Common<LibraryInfo>(info, [](const LibraryInfo& i) {
    return "LibraryInfo(path=" + Q(i.path) + ", head=" + std::to_string(i.head) +
           (i.read_only ? ", read_only=True)" : ")");
  });

  auto stats = nb::class_<LibraryStats>(m, "LibraryStats");
  stats.def_ro("version", &LibraryStats::version)
      .def_ro("num_skills", &LibraryStats::num_skills)
      .def_ro("disk_bytes", &LibraryStats::disk_bytes);
  Common<LibraryStats>(stats, [](const LibraryStats& s) {
    return "LibraryStats(version=" + std::to_string(s.version) +
           ", num_skills=" + std::to_string(s.num_skills) + ")";
  });

  auto audit = nb::class_<AuditEntry>(m, "AuditEntry");
  audit.def_ro("seq", &AuditEntry::seq)
      .def_ro("time_ms", &AuditEntry::time_ms)
      .def_ro("event", &AuditEntry::event)
      .def_ro("proposal_id", &AuditEntry::proposal_id)
      .def_ro("skill_id", &AuditEntry::skill_id)
      .def_ro("author", &AuditEntry::author)
      .def_ro("version", &AuditEntry::version)
      .def_ro("reasons", &AuditEntry::reasons);
  Common<AuditEntry>(audit, [](const AuditEntry& a) {
    return "AuditEntry(seq=" + std::to_string(a.seq) + ", event=" + Q(a.event) +
           ", skill_id=" + Q(a.skill_id) + ")";
  });
}

void BindProposalTypes(nb::module_& m) {
  auto dup = nb::class_<DuplicateMatch>(m, "DuplicateMatch");
  dup.def_ro("id", &DuplicateMatch::id)
      .def_ro("jaccard", &DuplicateMatch::jaccard)
      .def_ro("bm25_similarity", &DuplicateMatch::bm25_similarity)
      .def_prop_ro("kind", [](const DuplicateMatch& d) {
        return std::string(d.kind == DuplicateMatch::Kind::kExact ? "exact" : "near");
      });
  Common<DuplicateMatch>(dup, [](const DuplicateMatch& d) {
    return "DuplicateMatch(id=" + Q(d.id) + ", jaccard=" + Num(d.jaccard) + ")";
  });

  auto outcome = nb::class_<ProposalOutcome>(m, "ProposalOutcome");
  outcome.def_ro("accepted", &ProposalOutcome::accepted)
      .def_ro("version", &ProposalOutcome::version)
      .def_ro("skill_id", &ProposalOutcome::skill_id)
      .def_ro("deprecated", &ProposalOutcome::deprecated)
      .def_ro("reasons", &ProposalOutcome::reasons)
      .def_ro("duplicates", &ProposalOutcome::duplicates)
      .def_ro("audit_seq", &ProposalOutcome::audit_seq);
  Common<ProposalOutcome>(outcome, [](const ProposalOutcome& o) {
    return "ProposalOutcome(accepted=" + std::string(o.accepted ? "True" : "False") +
           ", skill_id=" + Q(o.skill_id) + ", version=" + std::to_string(o.version) +
           ", reasons=" + std::to_string(o.reasons.size()) + ")";
  });

  auto report = nb::class_<VerificationReport>(
      m, "VerificationReport",
      "Everything a verifier found out about one candidate.");
  report.def_ro("verifier", &VerificationReport::verifier)
      .def_ro("device", &VerificationReport::device)
      .def_ro("device_class", &VerificationReport::device_class)
      .def_ro("task", &VerificationReport::task)
      .def_ro("compiled", &VerificationReport::compiled)
      .def_ro("compile_log", &VerificationReport::compile_log)
      .def_ro("passed", &VerificationReport::passed)
      .def_ro("reasons", &VerificationReport::reasons)
      .def_prop_ro("correct",
                   [](const VerificationReport& r) { return r.correctness.passed; })
      .def_prop_ro("speedup",
                   [](const VerificationReport& r) { return r.speedup.ratio; })
      .def_prop_ro("ci_low",
                   [](const VerificationReport& r) { return r.speedup.ci_low; })
      .def_prop_ro("ci_high",
                   [](const VerificationReport& r) { return r.speedup.ci_high; })
      .def_static(
          "from_json",
          [](const std::string& text) { return Take(ReportFromJson(text)); })
      .def_static("from_dict", [](const nb::dict& d) {
        return Take(ReportFromJson(JsonDumps(d)));
      });
  Common<VerificationReport>(report, [](const VerificationReport& r) {
    return "VerificationReport(task=" + Q(r.task) + ", passed=" +
           std::string(r.passed ? "True" : "False") + ", speedup=" +
           Num(r.speedup.ratio) + ")";
  });

  auto queued = nb::class_<QueuedProposal>(
      m, "QueuedProposal", "A proposal in the library's durable queue.");
  queued.def_ro("id", &QueuedProposal::id)
      .def_ro("attempts", &QueuedProposal::attempts)
      .def_ro("outcome", &QueuedProposal::outcome)
      .def_ro("report", &QueuedProposal::report)
      .def_ro("reasons", &QueuedProposal::reasons)
      .def_ro("submitted_ms", &QueuedProposal::submitted_ms)
      .def_ro("updated_ms", &QueuedProposal::updated_ms)
      .def_prop_ro("candidate",
                   [](const QueuedProposal& q) { return q.request.candidate; })
      .def_prop_ro("state", [](const QueuedProposal& q) {
        return std::string(QueueStateName(q.state));
      });
  Common<QueuedProposal>(queued, [](const QueuedProposal& q) {
    return "QueuedProposal(id=" + Q(q.id) + ", state=" +
           Q(std::string(QueueStateName(q.state))) + ")";
  });
}

}  // namespace

nb::object JsonLoads(const std::string& text) {
  return nb::module_::import_("json").attr("loads")(text);
}

std::string JsonDumps(const nb::handle& obj) {
  return nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(obj));
}

void BindErrors(nb::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "skilldb.Error",
      "A skilldb call failed. `code` names the status code (not_found, "
      "invalid_argument, ...); str() is the message.",
      PyExc_Exception, nullptr);
  g_errors[0] = base;
  m.attr("Error") = nb::borrow(base);
  for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    const std::string name = std::string("skilldb.") + kErrorNames[c];
    PyObject* cls = PyErr_NewException(name.c_str(), base, nullptr);
    g_errors[c] = cls;
    m.attr(kErrorNames[c]) = nb::borrow(cls);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      const Status& s = e.status();
      PyObject* cls = g_errors[static_cast<int>(s.code())];
      if (cls == nullptr) cls = g_errors[0];
      nb::object error = nb::borrow(cls)(s.message());
      error.attr("code") = std::string(StatusCodeName(s.code()));
      PyErr_SetObject(cls, error.ptr());
    }
  });
}

void BindTypes(nb::module_& m) {
  BindSkill(m);
  BindQueryTypes(m);
  BindHistoryTypes(m);
  BindProposalTypes(m);
}

}  // namespace skilldb::python

NB_MODULE(_skilldb, m) {
  namespace nb = nanobind;
  m.doc() =
      "skilldb: a versioned skill library for GPU-kernel agents (the C++ "
      "engine through nanobind). Use the package `skilldb`, which re-exports "
      "this module and adds the asyncio wrapper and the RL integrations.";
  nb::set_leak_warnings(false);
  skilldb::python::BindErrors(m);
  skilldb::python::BindTypes(m);
  skilldb::python::BindLibrary(m);
  skilldb::python::BindTrainer(m);
}
