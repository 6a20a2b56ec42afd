// skilldb._skilldb: Library (local or remote), Verifier, and the trainer's
// advantage and reward functions.
//
// Every call that reads the index, verifies or commits releases the GIL
// once its Python arguments are converted: threads of one process query in
// parallel, and an asyncio loop (skilldb.aio) runs them in worker threads.
// A Library handle may be closed while other threads use it: each call
// holds its own reference to the open library until it returns.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <mutex>

#include "bindings.h"
#include "skilldb/library.h"
#include "skilldb/replay_verifier.h"
#include "skilldb/server/remote_library.h"
#include "skilldb/trainer/advantages.h"
#include "skilldb/trainer/rewards.h"
#include "skilldb/verify/verify.h"

namespace skilldb::python {
namespace {

using GilRelease = nb::gil_scoped_release;

// The Python object of a Library: a handle on shared state, so that it
// copies and moves freely while close() reaches every copy.
class PyLibrary {
 public:
  PyLibrary(std::shared_ptr<Library> library, bool remote)
      : state_(std::make_shared<State>()) {
    state_->library = std::move(library);
    state_->remote = remote;
  }

  // The open library; FailedPreconditionError once closed.
  std::shared_ptr<Library> get() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->library) {
      throw StatusError(Status::FailedPrecondition("the library is closed"));
    }
    return state_->library;
  }
  void close() {
    std::shared_ptr<Library> last;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      last = std::move(state_->library);
    }
    GilRelease release;  // closing flushes; other threads may go on
    last.reset();
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->library == nullptr;
  }
  bool remote() const { return state_->remote; }

 private:
  struct State {
    std::mutex mu;
    std::shared_ptr<Library> library;  // guarded by mu; null once closed
    bool remote = false;
  };
  std::shared_ptr<State> state_;
};

// The verifier of a remote library's proposals: the server's own, which
// RemoteProposal hands the request to; never called here.
class ServerSideVerifier : public Verifier {
 public:
  std::string_view Name() const override { return "server"; }
  Result<VerificationReport> Verify(const VerificationRequest&) override {
    return Status::Unavailable("this proposal is verified by the server");
  }
};

struct PyVerifier {
  std::shared_ptr<verify::TaskVerifier> verifier;
};

// fields: None (title), "title,body", or ["title", "body"].
HitFields FieldsArg(const nb::handle& fields) {
  if (fields.is_none()) return HitFields{HitField::kTitle};
  if (nb::isinstance<nb::str>(fields)) {
    return Take(ParseHitFields(nb::cast<std::string>(fields)));
  }
  std::string list;
  for (nb::handle f : fields) {
    list += (list.empty() ? "" : ",") + nb::cast<std::string>(f);
  }
  return Take(ParseHitFields(list.empty() ? "none" : list));
}

QueryOptions MakeQueryOptions(size_t k, std::optional<Version> as_of,
                              std::vector<std::string> tags,
                              std::vector<std::string> ops,
                              std::vector<std::string> arch,
                              std::optional<std::string> language,
                              std::optional<std::string> status,
                              bool all_statuses, const nb::handle& fields,
                              bool record_retrieved) {
  QueryOptions o;
  if (k > kMaxQueryK) {
    throw StatusError(Status::InvalidArgument(
        "k must be at most " + std::to_string(kMaxQueryK)));
  }
  o.k = k;
  o.as_of = as_of;
  o.tags = std::move(tags);
  o.ops = std::move(ops);
  o.arch = std::move(arch);
  if (language) o.language = Take(ParseLanguage(*language));
  if (status) o.status = Take(ParseSkillStatus(*status));
  o.all_statuses = all_statuses;
  o.fields = FieldsArg(fields);
  o.record_retrieved = record_retrieved;
  return o;
}

ProposalOptions MakeProposalOptions(const std::string& dedup,
                                    const nb::handle& policy,
                                    const std::string& author,
                                    const std::string& message,
                                    double near_duplicate_jaccard) {
  nb::dict d;
  d["dedup"] = dedup;
  if (!policy.is_none()) d["policy"] = policy;
  d["author"] = author;
  d["message"] = message;
  d["near_duplicate_jaccard"] = near_duplicate_jaccard;
  return FromPython<ProposalOptions>(d, "proposal options");
}

VerificationReport ReportArg(const nb::handle& report) {
  if (nb::isinstance<VerificationReport>(report)) {
    return nb::cast<VerificationReport>(report);
  }
  if (nb::isinstance<nb::str>(report)) {
    return Take(ReportFromJson(nb::cast<std::string>(report)));
  }
  return Take(ReportFromJson(JsonDumps(report)));
}

std::vector<UsageRecord> UsageArg(const nb::handle& records) {
  std::vector<UsageRecord> out;
  for (nb::handle r : records) {
    if (nb::isinstance<nb::dict>(r)) {
      out.push_back(FromPython<UsageRecord>(r, "usage record"));
      continue;
    }
    nb::sequence t = nb::borrow<nb::sequence>(r);
    const size_t n = nb::len(t);
    if (n < 2 || n > 3) {
      throw StatusError(Status::InvalidArgument(
          "a usage record is (id, event[, count]) or a dict"));
    }
    UsageRecord u;
    u.id = nb::cast<std::string>(t[0]);
    u.event = Take(ParseUsageEvent(nb::cast<std::string>(t[1])));
    if (n == 3) u.count = nb::cast<uint64_t>(t[2]);
    out.push_back(std::move(u));
  }
  return out;
}

CommitOptions Commit(const std::string& message, const std::string& author) {
  CommitOptions c;
  c.message = message;
  c.author = author;
  return c;
}

// Propose, deduplicate, verify, commit: one verified insertion.
ProposalOutcome ProposeNow(Library& lib, const Skill& candidate,
                           const ProposalOptions& options, Verifier& verifier,
                           const VerificationRequest& request) {
  auto proposal = Take(lib.Propose(candidate, options));
  Take(proposal->Duplicates());
  Take(proposal->Verify(verifier, request));
  return Take(proposal->Commit());
}

// What a binding returns for a call's result: a Result's value, nothing
// for a Status, any other value as it is; raises StatusError for an error.
inline void Unwrap(const Status& s) { Check(s); }
template <typename T>
T Unwrap(Result<T> r) {
  return Take(std::move(r));
}
template <typename T>
T Unwrap(T value) {
  return value;
}

// Runs `call()` with the GIL released (other Python threads go on while
// it reads, verifies or commits) and returns Unwrap's value.
template <typename Call>
auto Released(Call call) {
  GilRelease release;
  return Unwrap(call());
}

// Released over the open library: `call(Library&)`. The reference is taken
// first, under the GIL, so a close() from another thread waits for this
// call instead of pulling the library from under it.
template <typename Call>
auto OnLibrary(const PyLibrary& self, Call call) {
  std::shared_ptr<Library> lib = self.get();
  return Released([&] { return call(*lib); });
}

#define SKILLDB_QUERY_ARGS                                                    \
  nb::arg("k") = 10, nb::arg("as_of") = nb::none(),                          \
      nb::arg("tags") = std::vector<std::string>(),                          \
      nb::arg("ops") = std::vector<std::string>(),                           \
      nb::arg("arch") = std::vector<std::string>(),                          \
      nb::arg("language") = nb::none(), nb::arg("status") = nb::none(),      \
      nb::arg("all_statuses") = false, nb::arg("fields") = nb::none(),       \
      nb::arg("record_retrieved") = false

void BindLibraryReads(nb::class_<PyLibrary>& cls) {
  cls.def(
      "query",
      [](PyLibrary& self, const std::string& text, size_t k,
         std::optional<Version> as_of, std::vector<std::string> tags,
         std::vector<std::string> ops, std::vector<std::string> arch,
         std::optional<std::string> language, std::optional<std::string> status,
         bool all_statuses, nb::handle fields, bool record_retrieved) {
        const QueryOptions o =
            MakeQueryOptions(k, as_of, std::move(tags), std::move(ops),
                             std::move(arch), language, status, all_statuses,
                             fields, record_retrieved);
        return OnLibrary(self,
                         [&](Library& lib) { return lib.Query(o, text); });
      },
      nb::arg("text"), SKILLDB_QUERY_ARGS,
      "The top k skills for `text` by BM25 as of `as_of` (default: head).");
  cls.def(
      "query_batch",
      [](PyLibrary& self, const std::vector<std::string>& texts, int threads,
         size_t k, std::optional<Version> as_of, std::vector<std::string> tags,
         std::vector<std::string> ops, std::vector<std::string> arch,
         std::optional<std::string> language, std::optional<std::string> status,
         bool all_statuses, nb::handle fields, bool record_retrieved) {
        const QueryOptions o =
            MakeQueryOptions(k, as_of, std::move(tags), std::move(ops),
                             std::move(arch), language, status, all_statuses,
                             fields, record_retrieved);
        return OnLibrary(self, [&](Library& lib) {
          return lib.QueryBatch(o, texts, threads);
        });
      },
      nb::arg("texts"), nb::arg("threads") = 0, SKILLDB_QUERY_ARGS,
      "query() for every text, all as of one version, on `threads` threads.");
  cls.def(
      "get",
      [](PyLibrary& self, const std::string& id, std::optional<Version> as_of) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.Get(id, ReadOptions{as_of});
        });
      },
      nb::arg("id"), nb::arg("as_of") = nb::none());
  cls.def(
      "history",
      [](PyLibrary& self, const std::string& id) {
        return OnLibrary(self, [&](Library& lib) { return lib.History(id); });
      },
      nb::arg("id"), "Every retained revision of `id`, newest first.");
  cls.def(
      "log",
      [](PyLibrary& self, size_t limit, std::optional<Version> from_version) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.Log(LogOptions{limit, from_version});
        });
      },
      nb::arg("limit") = 0, nb::arg("from_version") = nb::none(),
      "Commit records, newest first (limit 0: all).");
  cls.def(
      "commit_info",
      [](PyLibrary& self, Version v) {
        return OnLibrary(self, [&](Library& lib) { return lib.GetCommit(v); });
      },
      nb::arg("version"));
  cls.def(
      "changes",
      [](PyLibrary& self, Version v) {
        return OnLibrary(self,
                         [&](Library& lib) { return lib.CommitChanges(v); });
      },
      nb::arg("version"));
  cls.def(
      "diff",
      [](PyLibrary& self, Version from, Version to) {
        return OnLibrary(self,
                         [&](Library& lib) { return lib.Diff(from, to); });
      },
      nb::arg("from_version"), nb::arg("to_version"));
  cls.def(
      "stats",
      [](PyLibrary& self, std::optional<Version> as_of) {
        return OnLibrary(
            self, [&](Library& lib) { return lib.Stats(ReadOptions{as_of}); });
      },
      nb::arg("as_of") = nb::none());
  cls.def(
      "skills",
      [](PyLibrary& self, std::optional<Version> as_of) {
        std::vector<Skill> out;
        OnLibrary(self, [&](Library& lib) {
          return lib.Scan(ReadOptions{as_of}, [&](const Skill& s) {
            out.push_back(s);
            return true;
          });
        });
        return out;
      },
      nb::arg("as_of") = nb::none(), "Every skill live at the version, by id.");
  cls.def(
      "audit",
      [](PyLibrary& self, size_t limit, uint64_t after_seq) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.Audit(AuditOptions{limit, after_seq});
        });
      },
      nb::arg("limit") = 0, nb::arg("after_seq") = 0);
  cls.def(
      "usage",
      [](PyLibrary& self, const std::string& id) {
        return OnLibrary(self, [&](Library& lib) { return lib.GetUsage(id); });
      },
      nb::arg("id"));
}

void BindLibraryWrites(nb::class_<PyLibrary>& cls) {
  cls.def(
      "put",
      [](PyLibrary& self, const Skill& skill, const std::string& message,
         const std::string& author) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.Put(skill, Commit(message, author));
        });
      },
      nb::arg("skill"), nb::arg("message") = "", nb::arg("author") = "",
      "Adds or revises `skill` in one commit; returns the new version.");
  cls.def(
      "put_many",
      [](PyLibrary& self, const std::vector<Skill>& skills,
         const std::string& message, const std::string& author) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.PutMany(skills, Commit(message, author));
        });
      },
      nb::arg("skills"), nb::arg("message") = "", nb::arg("author") = "");
  cls.def(
      "delete",
      [](PyLibrary& self, const std::string& id, const std::string& message,
         const std::string& author) {
        return OnLibrary(self, [&](Library& lib) {
          return lib.Delete(id, Commit(message, author));
        });
      },
      nb::arg("id"), nb::arg("message") = "", nb::arg("author") = "");
  cls.def(
      "record_usage",
      [](PyLibrary& self, nb::handle records) {
        const std::vector<UsageRecord> r = UsageArg(records);
        OnLibrary(self, [&](Library& lib) { return lib.RecordUsage(r); });
      },
      nb::arg("records"),
      "Records usage events in one batched write: a list of (id, event[, "
      "count]) or {'id', 'event', 'count'}; events: retrieved, selected, "
      "applied, succeeded, failed. Nothing is recorded on error.");
  cls.def(
      "propose",
      [](PyLibrary& self, const Skill& candidate, nb::handle verifier,
         nb::handle request, nb::handle report, const std::string& dedup,
         nb::handle policy, const std::string& author,
         const std::string& message, double near_duplicate_jaccard) {
        const ProposalOptions options = MakeProposalOptions(
            dedup, policy, author, message, near_duplicate_jaccard);
        auto lib = self.get();
        if (!report.is_none()) {
          ReplayVerifier replay(ReportArg(report));
          VerificationRequest req;
          req.task = ReportArg(report).task;
          return Released([&] {
            return ProposeNow(*lib, candidate, options, replay, req);
          });
        }
        if (verifier.is_none() && !request.is_none() && self.remote()) {
          // A server verifies with its own verifier (RemoteProposal sends
          // the request); nothing runs here.
          ServerSideVerifier server_side;
          const VerificationRequest req =
              FromPython<VerificationRequest>(request, "request");
          return Released([&] {
            return ProposeNow(*lib, candidate, options, server_side, req);
          });
        }
        if (verifier.is_none() || request.is_none()) {
          throw StatusError(Status::InvalidArgument(
              "propose needs report=, or verifier= and request= (a remote "
              "library needs only request=)"));
        }
        std::shared_ptr<verify::TaskVerifier> v =
            nb::cast<PyVerifier&>(verifier).verifier;
        const VerificationRequest req =
            FromPython<VerificationRequest>(request, "request");
        return Released(
            [&] { return ProposeNow(*lib, candidate, options, *v, req); });
      },
      nb::arg("candidate"), nb::kw_only(), nb::arg("verifier") = nb::none(),
      nb::arg("request") = nb::none(), nb::arg("report") = nb::none(),
      nb::arg("dedup") = "reject", nb::arg("policy") = nb::none(),
      nb::arg("author") = "", nb::arg("message") = "",
      nb::arg("near_duplicate_jaccard") = 0.6,
      "Verified insertion: deduplicate, verify (with `verifier` on `request`, "
      "or replaying `report`), then commit or reject. Returns the outcome; a "
      "conflict with a newer commit raises AbortedError.");
  cls.def(
      "enqueue",
      [](PyLibrary& self, const Skill& candidate, nb::handle request,
         nb::handle report, const std::string& dedup, nb::handle policy,
         const std::string& author, const std::string& message) {
        QueuedRequest q;
        q.candidate = candidate;
        q.options = MakeProposalOptions(dedup, policy, author, message, 0.6);
        if (!report.is_none()) q.replay_report = ReportArg(report);
        if (!request.is_none()) {
          q.verification = FromPython<VerificationRequest>(request, "request");
        }
        return OnLibrary(self, [&](Library& lib) { return lib.Enqueue(q); });
      },
      nb::arg("candidate"), nb::kw_only(), nb::arg("request") = nb::none(),
      nb::arg("report") = nb::none(), nb::arg("dedup") = "reject",
      nb::arg("policy") = nb::none(), nb::arg("author") = "",
      nb::arg("message") = "",
      "Puts a proposal in the durable queue (a server's workers carry it "
      "out); returns it, state 'queued'.");
  cls.def(
      "queued",
      [](PyLibrary& self, const std::string& id) {
        return OnLibrary(self, [&](Library& lib) { return lib.GetQueued(id); });
      },
      nb::arg("id"));
  cls.def(
      "list_queued",
      [](PyLibrary& self, std::optional<std::string> state, size_t limit) {
        QueueListOptions o;
        if (state) o.state = Take(ParseQueueState(*state));
        o.limit = limit;
        return OnLibrary(self, [&](Library& lib) { return lib.ListQueued(o); });
      },
      nb::arg("state") = nb::none(), nb::arg("limit") = 0);
}

void BindVerifier(nb::module_& m) {
  auto cls = nb::class_<PyVerifier>(
      m, "Verifier",
      "The execution verifier: 'host' (C++ candidates on the CPU, sandboxed) "
      "or 'cuda' (the GPU). Thread-safe: verifications run on `workers` "
      "worker processes and queue when all are busy.");
  cls.def(
      "__init__",
      [](PyVerifier* self, const std::string& backend, int workers,
         const std::string& task_dir, const std::string& cache_dir) {
        const verify::Backend b = Take(verify::ParseBackend(backend));
        verify::VerifierOptions o = verify::DefaultOptions(b);
        if (b == verify::Backend::kHost) o.host_workers = workers;
        if (!task_dir.empty()) o.task_dir = task_dir;
        if (!cache_dir.empty()) o.cache_dir = cache_dir;
        new (self)
            PyVerifier{Released([&] { return verify::MakeVerifier(o); })};
      },
      nb::arg("backend") = "host", nb::arg("workers") = 1,
      nb::arg("task_dir") = "", nb::arg("cache_dir") = "");
  cls.def(
      "verify",
      [](PyVerifier& self, const std::string& task, const std::string& source,
         std::optional<std::string> language, const std::string& name,
         std::optional<std::string> baseline, int rounds,
         int timed_calls_per_round, bool check_correctness, uint64_t seed) {
        VerificationRequest r;
        r.task = task;
        r.candidate.name = name;
        r.candidate.source = source;
        r.candidate.language = language.value_or(std::string(
            verify::SourceLanguageName(verify::LanguageFor(self.verifier->options().backend))));
        if (baseline) {
          r.baseline = {"baseline", r.candidate.language, *baseline};
        }
        r.rounds = rounds;
        r.timed_calls_per_round = timed_calls_per_round;
        r.check_correctness = check_correctness;
        r.seed = seed;
        auto v = self.verifier;
        return Released([&] { return v->Verify(r); });
      },
      nb::arg("task"), nb::arg("source"), nb::arg("language") = nb::none(),
      nb::arg("name") = "candidate", nb::arg("baseline") = nb::none(),
      nb::arg("rounds") = 3, nb::arg("timed_calls_per_round") = 30,
      nb::arg("check_correctness") = true, nb::arg("seed") = 0,
      "Verifies `source` against task `task`. A candidate that fails is a "
      "report with passed False, not an error.");
  cls.def("tasks", [](PyVerifier& self) {
    return Take(verify::ListTasks(self.verifier->options().task_dir));
  });
  cls.def_prop_ro("name", [](PyVerifier& self) {
    return std::string(self.verifier->Name());
  });
  cls.def("__repr__", [](PyVerifier& self) {
    return "Verifier(backend='" +
           std::string(verify::BackendName(self.verifier->options().backend)) +
           "')";
  });
}

}  // namespace

void BindLibrary(nb::module_& m) {
  auto cls = nb::class_<PyLibrary>(
      m, "Library",
      "A versioned skill library: local (skilldb.open) or behind a server "
      "(skilldb.connect). Safe to use from several threads.");
  cls.def_prop_ro("version",
                  [](PyLibrary& self) {
                    return OnLibrary(self, [](Library& lib) {
                      return lib.CurrentVersion();
                    });
                  })
      .def_prop_ro("remote", &PyLibrary::remote)
      .def_prop_ro("closed", &PyLibrary::closed)
      .def("info",
           [](PyLibrary& self) {
             return OnLibrary(self, [](Library& lib) { return lib.Info(); });
           })
      .def("close", &PyLibrary::close,
           "Closes the library (a read-write one releases its lock).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__exit__",
          [](PyLibrary& self, nb::handle, nb::handle, nb::handle) {
            self.close();
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(),
          nb::arg("traceback").none())
      .def("__repr__", [](PyLibrary& self) {
        if (self.closed()) return std::string("Library(closed)");
        const LibraryInfo info = self.get()->Info();
        return "Library(path='" + info.path + "', version=" +
               std::to_string(info.head) +
               (info.read_only ? ", read_only=True" : "") +
               (self.remote() ? ", remote=True)" : ")");
      });
  BindLibraryReads(cls);
  BindLibraryWrites(cls);
  BindVerifier(m);

  m.def(
      "open",
      [](const std::string& path, bool read_only, bool create,
         bool sync_commits, int lock_timeout_ms) {
        Options o;
        o.read_only = read_only;
        o.create_if_missing = create;
        o.sync_commits = sync_commits;
        o.lock_timeout_ms = lock_timeout_ms;
        return PyLibrary(Released([&] { return Library::Open(o, path); }),
                         false);
      },
      nb::arg("path"), nb::kw_only(), nb::arg("read_only") = false,
      nb::arg("create") = false, nb::arg("sync_commits") = true,
      nb::arg("lock_timeout_ms") = 10000,
      "Opens the library at `path`: read-write (one process at a time) or "
      "read_only=True (any number, beside a writer; sees the commits made "
      "before it opened).");
  m.def(
      "connect",
      [](const std::string& url, const std::string& token, int timeout_ms,
         int retries) {
        server::RemoteOptions o;
        o.url = url;
        o.token = token;
        o.timeout_ms = timeout_ms;
        o.retries = retries;
        return PyLibrary(Released([&] { return server::OpenRemoteLibrary(o); }),
                         true);
      },
      nb::arg("url"), nb::kw_only(), nb::arg("token") = "",
      nb::arg("timeout_ms") = 30000, nb::arg("retries") = 3,
      "A Library served by `skilldb serve` at `url` (RemoteLibrary): queries, "
      "usage and proposals over HTTP.");
  m.def(
      "_bench_query",
      [](PyLibrary& self, const std::string& text, int n, size_t k) {
        auto lib = self.get();
        QueryOptions o;
        o.k = k;
        GilRelease release;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) Take(lib->Query(o, text));
        return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
            .count();
      },
      nb::arg("library"), nb::arg("text"), nb::arg("n"), nb::arg("k") = 10,
      "Benchmarks only: seconds for `n` queries in a C++ loop (the binding's "
      "overhead is a Python loop of query() against this).");
}

void BindTrainer(nb::module_& m) {
  m.def(
      "compute_advantages",
      [](const nb::list& decisions, double gamma, const std::string& baseline,
         const std::string& normalization, double std_epsilon) {
        std::vector<trainer::Decision> batch;
        for (nb::handle h : decisions) {
          nb::dict d = nb::borrow<nb::dict>(h);
          trainer::Decision x;
          x.task = nb::cast<std::string>(d["task"]);
          x.agent = nb::cast<std::string>(d["agent"]);
          x.rollout = nb::cast<std::string>(d["rollout"]);
          x.turn = d.contains("turn") ? nb::cast<int>(d["turn"]) : 0;
          x.reward = nb::cast<double>(d["reward"]);
          batch.push_back(std::move(x));
        }
        trainer::AdvantageOptions o;
        o.gamma = gamma;
        o.baseline = Take(trainer::ParseBaseline(baseline));
        o.normalization = Take(trainer::ParseNormalization(normalization));
        o.std_epsilon = std_epsilon;
        auto r = Take(trainer::ComputeAdvantages(batch, o));
        return std::make_pair(r.returns, r.advantages);
      },
      nb::arg("decisions"), nb::kw_only(), nb::arg("gamma") = 1.0,
      nb::arg("baseline") = "loo", nb::arg("normalization") = "per_agent",
      nb::arg("std_epsilon") = 1e-6,
      "Per-agent advantages for multi-turn REINFORCE (the trainer's): "
      "decisions are dicts with task, agent, rollout, turn, reward. Returns "
      "(returns, advantages), in input order.");
  m.def(
      "policy_turn_reward",
      [](bool correct, std::optional<double> speedup, bool hack,
         double correct_weight, double speedup_weight, double speedup_cap,
         double hack_reward) {
        trainer::RewardConfig c;
        c.correct_weight = correct_weight;
        c.speedup_weight = speedup_weight;
        c.speedup_cap = speedup_cap;
        c.hack_reward = hack_reward;
        Check(trainer::ValidateRewardConfig(c));
        return trainer::PolicyTurnReward(correct, speedup, hack, c);
      },
      nb::arg("correct"), nb::arg("speedup") = nb::none(),
      nb::arg("hack") = false, nb::kw_only(), nb::arg("correct_weight") = 0.5,
      nb::arg("speedup_weight") = 0.5, nb::arg("speedup_cap") = 3.0,
      nb::arg("hack_reward") = 0.0,
      "The Policy Agent's turn reward: correct_weight x correct + "
      "speedup_weight x min(speedup, cap); hack_reward for a reward hack.");
  m.def(
      "selection_rewards",
      [](const std::vector<std::pair<std::string, double>>& outcomes,
         bool relative, double weight) {
        trainer::RewardConfig c;
        c.selection_relative = relative;
        c.selection_weight = weight;
        std::vector<trainer::SelectionOutcome> in;
        for (const auto& [task, ret] : outcomes) in.push_back({task, ret});
        return trainer::SelectionRewards(in, c);
      },
      nb::arg("outcomes"), nb::kw_only(), nb::arg("relative") = true,
      nb::arg("weight") = 1.0,
      "The Selection Agent's rewards from (task, group_return) pairs.");
  m.def(
      "summary_reward",
      [](bool inserted, int later_successful_uses) {
        return trainer::SummaryReward(inserted, later_successful_uses,
                                      trainer::RewardConfig{});
      },
      nb::arg("inserted"), nb::arg("later_successful_uses") = 0,
      "The Summary Agent's reward (the trainer's default weights).");
}

}  // namespace skilldb::python
