// skilldb: the command-line tool. This file owns argument parsing (CLI11,
// the only translation unit that includes it) and dispatches to one Run
// function per subcommand (commands.h).
//
// Numbers are read as text and converted after parsing by numbers.h, never
// by CLI11: CLI11 wraps "-1" into an unsigned. Arguments nothing consumed
// are reported by name ("unknown command 'serch'; did you mean 'search'"),
// every exception is caught here (exit 2), and a failed write of stdout is
// an error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <type_traits>

#include "commands.h"
#include "context.h"
#ifdef SKILLDB_CLI_AGENTS
#include "agent_commands.h"
#endif
#include "files.h"
#include "numbers.h"
#include "skilldb/maintenance.h"
#include "skilldb/verify/verify.h"
#include "text.h"

namespace skilldb::cli {
namespace {

constexpr const char* kDescription =
    "skilldb: a versioned skill library for GPU-kernel agents.\n"
    "\n"
    "Every commit (add, import, rm) creates a new library version; every read\n"
    "can be made as of any retained version with --as-of. The library is at\n"
    "--db PATH, else $SKILLDB_DB, else the default library\n"
    "(~/.local/share/skilldb/library, created from the seed library on first\n"
    "use).\n"
    "\n"
    "Exit codes: 0 success, 1 user error (message on stderr), 2 internal "
    "error.";

constexpr IntRange kVersion{0, UINT64_MAX, "a version number"};
constexpr IntRange kCommitVersion{1, UINT64_MAX, "a version number"};
constexpr IntRange kCount{1, UINT64_MAX};
constexpr IntRange kRounds{1, 100};  // what the verifier accepts

// The name an option goes by in messages: its long flag ("-k,--k" is
// "--k"), or a positional's name in capitals ("VERSION").
std::string DisplayName(const std::string& flags) {
  std::string last = flags.substr(flags.rfind(',') + 1);
  if (last.starts_with("-")) return last;
  std::string upper = last;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  return upper;
}

template <typename T>
struct Unwrapped {
  using type = T;
  static constexpr bool kOptional = false;
};
template <typename T>
struct Unwrapped<std::optional<T>> {
  using type = T;
  static constexpr bool kOptional = true;
};

// The numeric options of every command: CLI11 stores each as text, and
// Convert checks and assigns the ones given once parsing is done.
class NumericArgs {
 public:
  // An integer option (or positional) into `target` (an integer or an
  // optional one). REQUIRES: `range` fits the target's type.
  template <typename T>
  CLI::Option* Int(CLI::App* cmd, const std::string& flags, T* target,
                   const IntRange& range, const std::string& help) {
    using V = typename Unwrapped<T>::type;
    static_assert(std::is_integral_v<V>);
    Entry& e = entries_.emplace_back();
    e.assign = [target, range,
                name = DisplayName(flags)](std::string_view text) -> Status {
      if constexpr (std::is_signed_v<V>) {
        SKILLDB_ASSIGN_OR_RETURN(int64_t v, ParseSignedArg(name, text, range));
        *target = static_cast<V>(v);
      } else {
        SKILLDB_ASSIGN_OR_RETURN(uint64_t v,
                                 ParseUnsignedArg(name, text, range));
        *target = static_cast<V>(v);
      }
      return Status::Ok();
    };
    const std::string described = DescribeRange(range);
    const bool bounded = described.starts_with("between");
    e.option = cmd->add_option(flags, e.text,
                               bounded ? help + " (" + described + ")" : help);
    e.option->type_name(range.noun == kVersion.noun ? "VERSION" : "INT");
    if constexpr (!Unwrapped<T>::kOptional) {
      e.option->default_str(std::to_string(*target));
    }
    return e.option;
  }

  // A real option into `target`.
  CLI::Option* Real(CLI::App* cmd, const std::string& flags, double* target,
                    const RealRange& range, const std::string& help) {
    Entry& e = entries_.emplace_back();
    e.assign = [target, range,
                name = DisplayName(flags)](std::string_view text) -> Status {
      SKILLDB_ASSIGN_OR_RETURN(*target, ParseRealArg(name, text, range));
      return Status::Ok();
    };
    e.option = cmd->add_option(flags, e.text,
                               help + " (" + DescribeRange(range) + ")");
    e.option->type_name("NUM");
    char shown[32];
    std::snprintf(shown, sizeof(shown), "%g", *target);
    e.option->default_str(shown);
    return e.option;
  }

  // Converts every option that was given, in declaration order; the first
  // error (InvalidArgument naming the option and its range).
  Status Convert() const {
    for (const Entry& e : entries_) {
      if (e.option->count() == 0) continue;
      SKILLDB_RETURN_IF_ERROR(e.assign(e.text));
    }
    return Status::Ok();
  }

 private:
  struct Entry {
    CLI::Option* option = nullptr;
    std::string text;  // CLI11 writes here; a deque keeps its address
    std::function<Status(std::string_view)> assign;
  };
  std::deque<Entry> entries_;
};

// Everything the parser fills in, and the command it selects.
struct Cli {
  GlobalArgs g;
  Io io;
  NumericArgs numbers;
  std::function<int()> run;
  bool progress = false;
  bool no_progress = false;
  InitArgs init;
  ImportArgs import;
  ExportArgs exp;
  AddArgs add;
  RmArgs rm;
  ShowArgs show;
  HistoryArgs history;
  LogArgs log;
  DiffArgs diff;
  StatsArgs stats;
  QueryArgs query;
  std::vector<std::string> query_words;
  ProposeArgs propose;
  AuditArgs audit;
  UsageArgs usage;
  PruneArgs prune;
  RevertArgs revert;
  SetStatusArgs set_status;
  TagArgs tag;
  GcArgs gc;
  VerifyArgs verify;
  ServeArgs serve;
  KernelbenchArgs kernelbench;
  LlmArgs llm;
  EmbedArgs embed;
#ifdef SKILLDB_CLI_AGENTS
  SolveArgs solve;
  RolloutsArgs rollouts;
  DistillArgs distill;
#endif
};

// Makes `cmd`, once parsed, the command that runs `f`.
void Runs(CLI::App* cmd, Cli& c, std::function<int()> f) {
  cmd->callback([&c, f = std::move(f)] { c.run = f; });
}

void AddCommitOptions(CLI::App* cmd, std::string* message,
                      std::string* author) {
  cmd->add_option("-m,--message", *message, "commit message");
  cmd->add_option("--author", *author, "commit author (default: $USER)");
}

void AddGlobalOptions(CLI::App& app, Cli& c) {
  app.add_option(
      "--db", c.g.db,
      "library directory (default: $SKILLDB_DB or the default library)");
  app.add_flag("--json", c.g.json, "machine-readable JSON output");
  c.numbers.Int(&app, "--lock-timeout", &c.g.lock_timeout_ms, {0, 86'400'000},
                "milliseconds a write waits for another process that holds "
                "the library open for writing");
  app.add_flag("--progress", c.progress,
               "show progress of long work on stderr (default: when stderr "
               "is a terminal)");
  app.add_flag("--no-progress", c.no_progress, "never show progress");
}

void AddInit(CLI::App& app, Cli& c) {
  auto* cmd = app.add_subcommand("init", "create an empty library");
  cmd->add_option("--analyzer", c.init.analyzer,
                  "text analysis, fixed for the library's life: whitespace, "
                  "standard (Unicode words, stemming) or code (standard + "
                  "identifier splitting)")
      ->check(CLI::IsMember({"whitespace", "standard", "code"}));
  c.numbers.Real(cmd, "--k1", &c.init.k1, {0},
                 "BM25 k1, term-frequency saturation");
  c.numbers.Real(cmd, "--b", &c.init.b, {0, 1}, "BM25 b, length normalization");
  cmd->add_option(
      "--field-weights", c.init.field_weights,
      "integer weight per field, e.g. title=4,tags=3 (a field of weight w "
      "counts as its text repeated w times; default: all 1, plain BM25 over "
      "the joined text; the default library uses title=4,tags=3, chosen by "
      "the relevance evaluation)");
  Runs(cmd, c, [&c] { return RunInit(c.g, c.init, c.io); });
}

void AddWriteCommands(CLI::App& app, Cli& c) {
  auto* imp = app.add_subcommand(
      "import", "import a JSONL file of skills as one commit (all or nothing)");
  imp->add_option("file", c.import.file, "JSONL file, or - for stdin")
      ->required();
  AddCommitOptions(imp, &c.import.message, &c.import.author);
  Runs(imp, c, [&c] { return RunImport(c.g, c.import, c.io); });

  auto* add = app.add_subcommand(
      "add",
      "add one skill (a JSON object); an existing id gets a new revision");
  add->add_option("file", c.add.file, "JSON file, or - for stdin")->required();
  AddCommitOptions(add, &c.add.message, &c.add.author);
  Runs(add, c, [&c] { return RunAdd(c.g, c.add, c.io); });

  auto* rm = app.add_subcommand("rm", "delete a skill (its history stays)");
  rm->add_option("id", c.rm.id, "skill id")->required();
  AddCommitOptions(rm, &c.rm.message, &c.rm.author);
  Runs(rm, c, [&c] { return RunRm(c.g, c.rm, c.io); });
}

void AddReadCommands(CLI::App& app, Cli& c) {
  auto* exp =
      app.add_subcommand("export", "write the skills as JSONL (re-importable)");
  c.numbers.Int(exp, "--as-of", &c.exp.as_of, kVersion,
                "export the library as of this version");
  exp->add_option("-o,--output", c.exp.output,
                  "write to this file instead of stdout");
  exp->add_option(
      "--sqlite", c.exp.sqlite,
      "write an SQLite database (skills, revisions, commits, changes, "
      "evidence, usage, audit, tags, and an FTS5 table skills_fts)");
  Runs(exp, c, [&c] { return RunExport(c.g, c.exp, c.io); });

  auto* show = app.add_subcommand("show", "print one skill");
  show->add_option("id", c.show.id, "skill id")->required();
  c.numbers.Int(show, "--as-of", &c.show.as_of, kVersion,
                "show the skill as of this version");
  Runs(show, c, [&c] { return RunShow(c.g, c.show, c.io); });

  auto* history = app.add_subcommand(
      "history", "list every revision of a skill, newest first");
  history->add_option("id", c.history.id, "skill id")->required();
  Runs(history, c, [&c] { return RunHistory(c.g, c.history, c.io); });

  auto* log = app.add_subcommand("log", "list commits, newest first");
  c.numbers
      .Int(log, "-n,--limit", &c.log.limit, kCount,
           "show at most this many commits (default: all)")
      ->default_str("");
  Runs(log, c, [&c] { return RunLog(c.g, c.log, c.io); });

  auto* diff = app.add_subcommand("diff", "what differs between two versions");
  c.numbers.Int(diff, "from", &c.diff.from, kVersion, "first version")
      ->required();
  c.numbers.Int(diff, "to", &c.diff.to, kVersion, "second version")->required();
  Runs(diff, c, [&c] { return RunDiff(c.g, c.diff, c.io); });

  auto* stats =
      app.add_subcommand("stats", "counts, index and disk statistics");
  c.numbers.Int(stats, "--as-of", &c.stats.as_of, kVersion,
                "statistics as of this version");
  Runs(stats, c, [&c] { return RunStats(c.g, c.stats, c.io); });
}

// The client options of every command that talks to a model (one set, so
// no command lacks one: query and llm check take --llm-key as solve does);
// `agent` adds the ones only the agents use.
void AddLlmOptions(CLI::App* cmd, Cli& c, LlmClientArgs* llm, bool agent) {
  cmd->add_option("--llm-url", llm->url,
                  "OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
                  "(default: $SKILLDB_LLM_URL, $OPENAI_BASE_URL)");
  cmd->add_option("--llm-model", llm->model,
                  "model name (default: $SKILLDB_LLM_MODEL, else the "
                  "server's first)");
  cmd->add_option("--llm-key", llm->key,
                  "API key (default: $SKILLDB_LLM_KEY, $OPENAI_API_KEY); "
                  "never printed or stored, even when a server echoes it");
  c.numbers.Real(cmd, "--llm-timeout", &llm->timeout_s,
                 {.min = 0, .max = 604800, .exclusive_min = true},
                 "seconds one request may take in all, retries included "
                 "(default: $SKILLDB_LLM_TIMEOUT, else the command's)")
      ->default_str("");
  c.numbers.Int(cmd, "--llm-retries", &llm->retries, {0, 20},
                "retries of a request that failed on the way "
                "(default: $SKILLDB_LLM_RETRIES, else the command's)");
  cmd->add_option("--llm-native-n", llm->native_n,
                  "true: the server honours n > 1 in one request; false: n "
                  "samples are n requests (default: $SKILLDB_LLM_NATIVE_N, "
                  "else true)")
      ->check(CLI::IsMember({"true", "false"}));
  if (!agent) return;
  c.numbers.Int(cmd, "--llm-concurrency", &llm->max_in_flight, {0, 4096},
                "requests in flight at most (0: 8, or the rollouts)");
  cmd->add_flag("--llm-token-ids", llm->token_ids,
                "ask the server for token ids (vLLM >= 0.10.2) and keep them "
                "in the rollout store");
}

void AddLlm(CLI::App& app, Cli& c) {
  auto* cmd = app.add_subcommand(
      "llm", "the LLM endpoint: 'check' reaches it, lists its models and "
             "reports latency");
  cmd->add_option("action", c.llm.action, "check")
      ->required()
      ->check(CLI::IsMember({"check"}));
  AddLlmOptions(cmd, c, &c.llm.llm, /*agent=*/false);
  cmd->add_flag("--probe", c.llm.probe,
                "also time a one-token generation");
  Runs(cmd, c, [&c] { return RunLlm(c.g, c.llm, c.io); });
}

void AddEmbed(CLI::App& app, Cli& c) {
  auto* cmd = app.add_subcommand(
      "embed",
      "embed every retained skill revision the embedding store lacks (the "
      "background pass of query --rerank dense; commits never wait for it)");
  cmd->add_option("--model", c.embed.model,
                  "sentence-transformers checkpoint directory (default: "
                  "$SKILLDB_EMBED_MODEL, else the all-MiniLM-L6-v2 "
                  "scripts/setup.sh installs)");
  cmd->add_option("--embeddings", c.embed.embeddings,
                  "the embedding store (default: LIBRARY.embeddings.sqlite)");
  cmd->add_flag("--prune", c.embed.prune,
                "also drop embeddings of revisions the library no longer "
                "retains (after gc)");
  c.numbers.Int(cmd, "--batch", &c.embed.batch, {1, 4096},
                "texts per forward pass and per store write");
  Runs(cmd, c, [&c] { return RunEmbed(c.g, c.embed, c.io); });
}

void AddQuery(CLI::App& app, Cli& c) {
  auto* cmd = app.add_subcommand(
      "query",
      "BM25 search: the top skills for TEXT (ties by id); alias: search");
  cmd->alias("search");
  cmd->add_option("text", c.query_words,
                  "query text (several words may go unquoted)")
      ->default_str("");
  cmd->add_option("--file", c.query.file,
                  "run one query per line of FILE (- for stdin); with --json "
                  "prints one JSON object per line");
  c.numbers.Int(cmd, "--threads", &c.query.threads, {0, 1024},
                "threads for --file, 0 = all cores");
  c.numbers.Int(cmd, "-k,--k", &c.query.k, {1, kMaxQueryK}, "number of hits");
  c.numbers.Int(cmd, "--as-of", &c.query.as_of, kVersion,
                "search the library as of this version");
  cmd->add_option("--tag", c.query.tags,
                  "only skills with this tag (repeatable)")
      ->default_str("");
  cmd->add_option("--op", c.query.ops,
                  "only skills for this op family (repeatable)")
      ->default_str("");
  cmd->add_option("--arch", c.query.arch,
                  "only skills for this arch (repeatable)")
      ->default_str("");
  cmd->add_option("--language", c.query.language,
                  "only skills in this language")
      ->check(CLI::IsMember({"cuda", "triton", "any"}));
  cmd->add_option(
         "--status", c.query.status,
         "only skills with this status (default: active and candidate)")
      ->check(CLI::IsMember({"candidate", "active", "deprecated", "pruned"}));
  cmd->add_option(
      "--fields", c.query.fields,
      "what each hit carries besides id and score, as of the version "
      "queried: a comma-separated list of title, summary, body, code, tags, "
      "ops, arch, language, status, usage (counters and utility), or all or "
      "none");
  cmd->add_option("--rerank", c.query.rerank,
                  "rerank the BM25 candidates with an LLM: listwise (one "
                  "ranking), pointwise (a yes/no per candidate) or endpoint "
                  "(a /v1/rerank or TEI server); or dense: sentence "
                  "embeddings of every live skill, fused with BM25 (--fusion); "
                  "BM25 order is kept, with the reason, whenever the model "
                  "fails")
      ->check(CLI::IsMember({"listwise", "pointwise", "endpoint", "dense"}));
  cmd->add_option("--model", c.query.model,
                  "--rerank dense: the sentence-transformers checkpoint "
                  "directory (default: $SKILLDB_EMBED_MODEL, else the "
                  "all-MiniLM-L6-v2 scripts/setup.sh installs)");
  cmd->add_option("--fusion", c.query.fusion,
                  "--rerank dense: how the dense ranking meets BM25's: blend "
                  "(scores, half each), rrf (reciprocal rank), none (dense "
                  "alone)")
      ->check(CLI::IsMember({"rrf", "blend", "none"}))
      ->capture_default_str();
  cmd->add_option("--embeddings", c.query.embeddings,
                  "--rerank dense: the embedding store (default: "
                  "LIBRARY.embeddings.sqlite)");
  AddLlmOptions(cmd, c, &c.query.llm, /*agent=*/false);
  cmd->add_option("--rerank-api", c.query.rerank_api,
                  "the endpoint's shape: cohere (/v1/rerank) or tei (/rerank)")
      ->check(CLI::IsMember({"cohere", "tei"}));
  c.numbers.Int(cmd, "--candidates", &c.query.candidates, {1, 1000},
                "BM25 candidates the reranker orders (at least --k)");
  Runs(cmd, c, [&c] {
    for (const std::string& w : c.query_words) {
      c.query.text += (c.query.text.empty() ? "" : " ") + w;
    }
    return RunQuery(c.g, c.query, c.io);
  });
}

void AddVerificationOptions(CLI::App* cmd, Cli& c, std::string* task,
                            std::string* candidate, std::string* baseline,
                            int* rounds) {
  cmd->add_option("--task", *task,
                  "verification task (skilldb verify --list-tasks)");
  cmd->add_option("--candidate", *candidate,
                  "kernel source to verify (.cu or .cc)");
  cmd->add_option("--baseline", *baseline,
                  "baseline source (default: the task's reference)");
  c.numbers.Int(cmd, "--rounds", rounds, kRounds, "timing rounds");
}

void AddPropose(CLI::App& app, Cli& c) {
  ProposeArgs& p = c.propose;
  auto* cmd =
      app.add_subcommand("propose",
                         "verified insertion: deduplicate, verify, then commit "
                         "or reject a candidate skill");
  cmd->add_option("file", p.file, "candidate skill (a JSON object), or -")
      ->required();
  cmd->add_option("--verifier", p.verifier,
                  "replay (a recorded report, --evidence), host or cuda (runs "
                  "--candidate on --task)")
      ->check(CLI::IsMember({"replay", "host", "cuda"}))
      ->default_str("replay");
  cmd->add_option("--evidence", p.evidence,
                  "verification report JSON to replay");
  AddVerificationOptions(cmd, c, &p.task, &p.candidate, &p.baseline, &p.rounds);
  const VerificationPolicy defaults;
  char policy_help[320];
  std::snprintf(policy_help, sizeof(policy_help),
                "acceptance policy items: min-rounds=%d, min-speedup=%g, "
                "min-ci-low=%g, max-speedup=%g, correctness=true, "
                "device-class=sm_90 (repeatable or comma-separated)",
                defaults.min_rounds, defaults.min_speedup, defaults.min_ci_low,
                defaults.max_plausible_speedup);
  cmd->add_option("--policy", p.policy, policy_help)
      ->default_str("");
  cmd->add_option("--dedup", p.dedup,
                  "duplicates: reject, supersede (deprecate them) or merge "
                  "(new revision)")
      ->check(CLI::IsMember({"reject", "supersede", "merge"}));
  c.numbers.Real(cmd, "--near-jaccard", &p.near_jaccard,
                 {.min = 0, .max = 1, .exclusive_min = true},
                 "word 3-shingle Jaccard at which a skill is a near "
                 "duplicate");
  AddCommitOptions(cmd, &p.message, &p.author);
  Runs(cmd, c, [&c] { return RunPropose(c.g, c.propose, c.io); });
}

void AddUsageCommands(CLI::App& app, Cli& c) {
  auto* audit =
      app.add_subcommand("audit", "the audit log of proposals, oldest first");
  c.numbers
      .Int(audit, "-n,--limit", &c.audit.limit, kCount,
           "only the newest N entries (default: all)")
      ->default_str("");
  Runs(audit, c, [&c] { return RunAudit(c.g, c.audit, c.io); });

  auto* usage = app.add_subcommand("usage",
                                   "usage counters and utility (all skills, "
                                   "or one); --record adds an event");
  usage->add_option("id", c.usage.id, "skill id");
  usage
      ->add_option(
          "--record", c.usage.record,
          "record an event: retrieved, selected, applied, succeeded or failed")
      ->check(CLI::IsMember(
          {"retrieved", "selected", "applied", "succeeded", "failed"}));
  c.numbers.Int(usage, "--count", &c.usage.count, {1, kMaxUsageCount},
                "events to record");
  Runs(usage, c, [&c] { return RunUsage(c.g, c.usage, c.io); });
}

void AddLifecycleCommands(CLI::App& app, Cli& c) {
  auto* prune = app.add_subcommand(
      "prune",
      "mark skills pruned by policy in one version (dry run unless --apply)");
  prune
      ->add_option("--policy", c.prune.policy,
                   "low-utility=X[:MIN_APPLIED] (default min 10), superseded, "
                   "unused=VERSIONS, near-duplicates=JACCARD (keeps each "
                   "cluster's best); repeatable")
      ->required()
      ->default_str("");
  prune->add_flag("--apply", c.prune.apply,
                  "commit the change (default: only print it)");
  AddCommitOptions(prune, &c.prune.message, &c.prune.author);
  Runs(prune, c, [&c] { return RunPrune(c.g, c.prune, c.io); });

  auto* revert = app.add_subcommand(
      "revert", "undo one commit: a new version that restores what it changed");
  c.numbers
      .Int(revert, "version", &c.revert.version, kCommitVersion,
           "the commit to undo")
      ->required();
  AddCommitOptions(revert, &c.revert.message, &c.revert.author);
  Runs(revert, c, [&c] { return RunRevert(c.g, c.revert, c.io); });

  auto* status =
      app.add_subcommand("set-status", "set the lifecycle status of skills");
  status
      ->add_option("status", c.set_status.status,
                   "candidate, active, deprecated or pruned")
      ->required()
      ->check(CLI::IsMember({"candidate", "active", "deprecated", "pruned"}));
  status->add_option("ids", c.set_status.ids, "skill ids")
      ->required()
      ->default_str("");
  AddCommitOptions(status, &c.set_status.message, &c.set_status.author);
  Runs(status, c, [&c] { return RunSetStatus(c.g, c.set_status, c.io); });
}

void AddRetentionCommands(CLI::App& app, Cli& c) {
  auto* tag = app.add_subcommand(
      "tag", "name a version (e.g. a training checkpoint); gc keeps it");
  tag->add_option("name", c.tag.name, "tag name")->required();
  c.numbers.Int(tag, "version", &c.tag.version, kCommitVersion,
                "version (default: the newest)");
  tag->add_flag("-d,--delete", c.tag.remove, "delete the tag");
  Runs(tag, c, [&c] { return RunTag(c.g, c.tag, c.io); });

  auto* tags = app.add_subcommand("tags", "list tags");
  Runs(tags, c, [&c] { return RunTags(c.g, c.io); });

  auto* gc = app.add_subcommand(
      "gc", "drop history older than the retention, never a tagged version");
  c.numbers.Int(gc, "--keep-last", &c.gc.keep_last, kCount,
                "keep the newest N versions");
  c.numbers.Int(gc, "--keep-since", &c.gc.keep_since, kVersion,
                "keep versions >= V");
  Runs(gc, c, [&c] { return RunGc(c.g, c.gc, c.io); });

  auto* compact = app.add_subcommand("compact",
                                     "rewrite the index into one segment and "
                                     "compact storage (no new version)");
  Runs(compact, c, [&c] { return RunCompact(c.g, c.io); });

  auto* check = app.add_subcommand(
      "check",
      "verify the library: checksums of every table file, the index against "
      "the records (exit 2 if damaged)");
  Runs(check, c, [&c] { return RunCheck(c.g, c.io); });
}

void AddVerify(CLI::App& app, Cli& c) {
  VerifyArgs& v = c.verify;
  auto* cmd = app.add_subcommand(
      "verify", "check and time a candidate kernel against a task's reference");
  AddVerificationOptions(cmd, c, &v.task, &v.candidate, &v.baseline, &v.rounds);
  cmd->add_option("--backend", v.backend, "cuda (GPU) or host (CPU, sandboxed)")
      ->check(CLI::IsMember({"cuda", "host"}));
  cmd->add_flag("--list-tasks", v.list_tasks, "list the tasks");
  Runs(cmd, c, [&c] { return RunVerify(c.g, c.verify, c.io); });
}

void AddServe(CLI::App& app, Cli& c) {
  ServeArgs& s = c.serve;
  auto* cmd = app.add_subcommand(
      "serve",
      "serve the library over HTTP: JSON API (/openapi.json), the durable "
      "proposal queue, KernelGYM's /evaluate, /metrics and a web page (/ui); "
      "stops on SIGINT or SIGTERM");
  cmd->add_option("--listen", s.listen,
                  "HOST:PORT to listen on (port 0: any free port; --json "
                  "prints the one taken)");
  cmd->add_option("--token-file", s.token_file,
                  "bearer tokens, one per line: writes need one");
  cmd->add_flag("--auth-reads", s.auth_reads, "reads need a token too");
  cmd->add_flag("--read-only", s.read_only,
                "open the library read-only and refuse writes (beside a "
                "writing process; sees its commits every --refresh-ms)");
  c.numbers.Int(cmd, "--gpu-workers", &s.gpu_workers, {1, 64},
                "verifier workers: GPUs 0..N-1, or host worker processes; "
                "also the proposal queue's workers");
  c.numbers.Int(cmd, "--queue-workers", &s.queue_workers, {0, 64},
                "threads carrying out queued proposals (default: --gpu-workers; "
                "0 accepts proposals and leaves them queued for a later run)");
  c.numbers.Int(cmd, "--eval-rounds", &s.eval_rounds, {1, 100},
                "timing rounds of a KernelGYM /evaluate (its num_perf_trials "
                "are spread over them)");
  cmd->add_option("--verifier", s.verifier,
                  "auto (cuda where a GPU answers, else host), cuda, host, "
                  "or none")
      ->check(CLI::IsMember({"auto", "cuda", "host", "none"}));
  c.numbers.Int(cmd, "--threads", &s.threads, {1, 1024},
                "HTTP threads (connections served at once)");
  c.numbers.Int(cmd, "--max-body-mb", &s.max_body_mb, {1, 1024},
                "largest request body, MiB");
  c.numbers.Int(cmd, "--refresh-ms", &s.refresh_ms, {0, 3600000},
                "with --read-only: reopen the library this often (0: never)");
  cmd->add_flag("--accept-active", s.accept_active,
                "commit accepted proposals as active skills when they ask "
                "(default: every one goes in as a candidate)");
  cmd->add_flag("--no-replay", s.no_replay,
                "refuse proposals that bring a report recorded elsewhere");
  cmd->add_option("--policy", s.policy,
                  "the floor of every proposal's policy: min-rounds=3, "
                  "min-speedup=1.05, min-ci-low=1.0, correctness=true, "
                  "max-speedup=50, device-class=sm_90");
  cmd->add_flag("--quiet", s.quiet, "no request log on stderr");
  Runs(cmd, c, [&c] { return RunServe(c.g, c.serve, c.io); });
}

void AddKernelbench(CLI::App& app, Cli& c) {
  KernelbenchArgs& k = c.kernelbench;
  auto* cmd = app.add_subcommand(
      "kernelbench",
      "KernelBench: import PATH (problems -> the task store), eval RUN_DIR "
      "(judge answers by level/problem/sample; fast_p per level), list, run "
      "OUT_DIR (answers from a model, verified as they arrive, then eval's "
      "table)");
  cmd->add_option("action", k.action, "import, eval, list or run")
      ->required()
      ->check(CLI::IsMember({"import", "eval", "list", "run"}));
  cmd->add_option(
      "path", k.path,
      "import: a KernelBench checkout, its KernelBench/ or level<N>/ "
      "folder, or one problem file; eval: the run directory; run: "
      "the output directory (KernelBench's generation layout; a run "
      "started again on it with the same model, format and --skills "
      "resumes after the last judged turn of each trajectory)");
  cmd->add_option("--store", k.store,
                  "task store (default: $SKILLDB_KB_STORE, else "
                  "~/.local/share/skilldb/kernelbench)");
  c.numbers.Int(cmd, "--level", &k.level, {0, 99}, "only this level (0: all)");
  cmd->add_option("--problems", k.problems, "problem ids, e.g. 1-20,33");
  cmd->add_option("--precision", k.precision, "fp32, fp16 or bf16")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  cmd->add_option("--protocol", k.protocol,
                  "eval: skilldb (this verifier's: separate processes, fresh inputs "
                  "per call, interleaved rounds, hack findings) or kernelbench "
                  "(KernelBench 423217d's own, to compare with published tables)")
      ->check(CLI::IsMember({"skilldb", "kernelbench"}));
  cmd->add_option("--backend", k.backend,
                  "eval: the answers' backend, cuda or triton (default: detected)")
      ->check(CLI::IsMember({"cuda", "triton"}));
  cmd->add_option("--results", k.results,
                  "eval: results file, one JSON line per answer; a stopped run "
                  "resumes from it (default: RUN_DIR/skilldb_eval.jsonl)");
  cmd->add_option("--cache", k.cache,
                  "eval: builds and baselines; eval, run, import: the runners' "
                  "bytecode (default: $SKILLDB_KB_CACHE, else "
                  "~/.cache/skilldb/kernelbench)");
  cmd->add_option("--python", k.python, "the Python with torch (default: python3)");
  cmd->add_option("--device", k.device, "cuda (the first visible GPU) or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_flag("--no-confine", k.no_confine,
                "run the runners without namespaces and seccomp (reports say so)");
  c.numbers.Int(cmd, "--trials", &k.trials, {1, 100}, "eval: correctness trials");
  c.numbers.Int(cmd, "--rounds", &k.rounds, {1, 100}, "eval: interleaved timing rounds");
  c.numbers.Int(cmd, "--calls", &k.calls, {1, 10000}, "eval: timed calls per round");
  c.numbers.Int(cmd, "--perf-trials", &k.perf_trials, {1, 10000},
                "eval: timed trials under --protocol kernelbench");
  c.numbers.Int(cmd, "--build-jobs", &k.build_jobs, {0, 1024},
                "eval: answers built at once (0: half the cores)");
  c.numbers.Int(cmd, "--workers", &k.workers, {1, 64},
                "eval, run: answers judged at once, each by its own runners; on "
                "one device they are checked side by side and timed alone");
  c.numbers.Int(cmd, "--gpus", &k.gpus, {1, 64},
                "eval, run: GPUs the workers are spread over (the first N visible)");
  c.numbers.Int(cmd, "--seed", &k.seed, {0, UINT64_MAX >> 2},
                "eval: seed for inputs (0: fresh; fixed seeds are for tests)");
  cmd->add_flag("--credit-torch-ops", k.credit_torch_ops,
                "eval: count answers whose device time is mostly PyTorch's own "
                "kernels as speedups");
  cmd->add_flag("--no-compile-baseline", k.no_compile_baseline,
                "eval: do not time torch.compile");
  cmd->add_flag(
      "--no-generic-caller", k.no_generic_caller,
      "eval, run: give every C++/CUDA answer its own pybind11 binding "
      "(slower builds) instead of calling its functions through "
      "thunks and the generic caller built once per torch version");
  cmd->add_flag(
      "--no-bytecode-cache", k.no_bytecode_cache,
      "eval, run, import: runners compile what they import unless the "
      "interpreter "
      "carries its bytecode, instead of reading it from the cache (filled "
      "once, outside the sandbox)");
  c.numbers.Int(cmd, "--max-screen-bytes", &k.max_screen_bytes, {0, int64_t{1} << 46},
                "import: inputs larger than this are not screened for degenerate "
                "problems");
  c.numbers.Int(cmd, "--jobs", &k.import_jobs, {0, 64},
                "import: problems inspected at once, each by its own runner "
                "(0: a quarter of the cores, at most 8)");
  AddLlmOptions(cmd, c, &k.llm, /*agent=*/true);
  c.numbers.Int(cmd, "--turns", &k.turns, {1, 100},
                "run: turns per trajectory");
  c.numbers.Int(cmd, "--samples", &k.samples, {1, 1000},
                "run: trajectories per problem (pass@k over them)");
  cmd->add_option(
         "--skills", k.skills,
         "run: on (skills from the library, --db, in the prompt) or off "
         "(the ablation)")
      ->check(CLI::IsMember({"on", "off"}));
  c.numbers.Int(cmd, "--select", &k.select_k, {1, 20},
                "run: skills per prompt");
  cmd->add_option(
         "--format", k.format,
         "run: the answer format asked for: cuda (load_inline), triton, "
         "or cpp (load_inline cpp_sources, CPU) (default: cpp with "
         "--device cpu, else cuda)")
      ->check(CLI::IsMember({"cuda", "triton", "cpp"}));
  c.numbers.Real(cmd, "--temperature", &k.temperature, {.min = 0, .max = 2},
                 "run: sampling temperature");
  c.numbers.Int(cmd, "--max-tokens", &k.max_tokens, {1, 1 << 20},
                "run: completion tokens per turn at most");
  c.numbers.Int(cmd, "--concurrency", &k.concurrency, {0, 4096},
                "run: trajectories in flight (0: min(16, all))");
  auto* local = cmd->add_option(
      "--local-model", k.local_model,
      "run: a Llama or Qwen2 checkpoint (Hugging Face folder) generating in "
      "process on libtorch, instead of a server (runs in skilldb-ml; one "
      "request at a time, each batching its samples)");
  cmd->add_option("--local-device", k.local_device,
                  "run: where --local-model runs: cpu, cuda or cuda:N "
                  "(default: cpu)")
      ->needs(local);
  Runs(cmd, c, [&c] { return RunKernelbench(c.g, c.kernelbench, c.io); });
}

#ifdef SKILLDB_CLI_AGENTS
// The agents' subcommands (agent_commands.h): solve, rollouts, distill.

void AddRolloutsOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--rollouts", *path,
                  "rollout store (SQLite; default: $SKILLDB_ROLLOUTS, else "
                  "<library>.rollouts.sqlite beside the library)");
}

void AddSolve(CLI::App& app, Cli& c) {
  SolveArgs& s = c.solve;
  auto* cmd = app.add_subcommand(
      "solve",
      "the Policy Agent: write a kernel for a verifier task over several "
      "turns, conditioned on library skills, with verifier feedback; "
      "prints the best kernel, its report and the trajectory id (exit 1 "
      "when no speedup was verified); with --tasks, a rollout pool and its "
      "throughput");
  cmd->add_option("--task", s.task,
                  "verifier task (skilldb verify --list-tasks)");
  cmd->add_option("--tasks", s.tasks,
                  "several tasks, comma-separated (the pool)")
      ->delimiter(',');
  c.numbers.Int(cmd, "--turns", &s.turns, {1, 64}, "turns at most");
  c.numbers.Int(cmd, "--samples", &s.samples, {1, 1024},
                "completions per turn");
  c.numbers.Int(cmd, "--rollouts-per-task", &s.rollouts, {1, 4096},
                "independent trajectories per task");
  c.numbers.Int(cmd, "--concurrency", &s.concurrency, {0, 4096},
                "rollouts in flight (0: all)");
  cmd->add_option("--backend", s.backend, "cuda (GPU, default) or host (CPU)")
      ->check(CLI::IsMember({"cuda", "host"}));
  c.numbers.Int(cmd, "--workers", &s.workers, {0, verify::kMaxHostWorkers},
                "host verifier workers (0: one per two cores)");
  cmd->add_option("--rerank", s.rerank,
                  "second selection stage: none (BM25, default) or listwise "
                  "(the same model ranks the candidates)")
      ->check(CLI::IsMember({"none", "listwise"}));
  c.numbers.Int(cmd, "--skills", &s.skills, {1, 100}, "skills in the prompt");
  c.numbers.Int(cmd, "--candidates", &s.candidates, {1, 1000},
                "BM25 candidates");
  c.numbers.Real(cmd, "--temperature", &s.temperature, {0, 10},
                 "sampling temperature");
  c.numbers.Int(cmd, "--max-tokens", &s.max_tokens, {1, 1 << 20},
                "completion tokens at most");
  cmd->add_flag("--no-early-stop", s.no_early_stop,
                "run every turn even after a verified speedup");
  cmd->add_option("--group", s.group,
                  "group label stored with the trajectories");
  AddRolloutsOption(cmd, &s.rollouts_path);
  AddLlmOptions(cmd, c, &s.llm, /*agent=*/true);
  Runs(cmd, c, [&c] { return RunSolve(c.g, c.solve, c.io); });
}

void AddRollouts(CLI::App& app, Cli& c) {
  RolloutsArgs& r = c.rollouts;
  auto* cmd = app.add_subcommand(
      "rollouts", "the rollout store: list, show ID, export (JSONL)");
  cmd->add_option("action", r.action, "list, show or export")
      ->required()
      ->check(CLI::IsMember({"list", "show", "export"}));
  cmd->add_option("id", r.id, "trajectory id (show)");
  cmd->add_option("--task", r.task, "only this task");
  cmd->add_option("--group", r.group, "only this group");
  cmd->add_option("--solved", r.solved, "only solved (yes) or unsolved (no)")
      ->check(CLI::IsMember({"yes", "no"}));
  c.numbers.Int(cmd, "-n,--limit", &r.limit, {0, UINT64_MAX >> 1},
                "at most N, newest for list (0: all)");
  cmd->add_option("-o,--output", r.output, "export to this file");
  cmd->add_option("--format", r.format,
                  "export: trajectories (one per line, default) or "
                  "generations (one model call per line, for training)")
      ->check(CLI::IsMember({"trajectories", "generations"}));
  AddRolloutsOption(cmd, &r.rollouts_path);
  Runs(cmd, c, [&c] { return RunRollouts(c.g, c.rollouts, c.io); });
}

void AddDistill(CLI::App& app, Cli& c) {
  DistillArgs& d = c.distill;
  auto* cmd = app.add_subcommand(
      "distill",
      "the Skill Summary Agent: a solved trajectory becomes a candidate skill "
      "submitted through verified insertion; a failed one leaves unverified "
      "pitfall notes on the skills it used (exit 1 unless accepted or "
      "attached)");
  cmd->add_option("trajectory", d.id, "trajectory id (skilldb rollouts list)")
      ->required();
  cmd->add_option("--backend", d.backend,
                  "verifier for the evidence (default: the trajectory's)")
      ->check(CLI::IsMember({"cuda", "host"}));
  cmd->add_option("--dedup", d.dedup, "duplicates: reject, supersede or merge")
      ->check(CLI::IsMember({"reject", "supersede", "merge"}));
  c.numbers.Int(cmd, "--attempts", &d.attempts, {1, 100},
                "model answers tried until one validates");
  c.numbers.Int(cmd, "--workers", &d.workers, {0, verify::kMaxHostWorkers},
                "host verifier workers (0: one per two cores)");
  AddRolloutsOption(cmd, &d.rollouts_path);
  AddLlmOptions(cmd, c, &d.llm, /*agent=*/true);
  Runs(cmd, c, [&c] { return RunDistill(c.g, c.distill, c.io); });
}
#endif  // SKILLDB_CLI_AGENTS

// Every name `sub` (or, for a top-level command, the app) knows an option
// by: "--as-of", "-k", ...
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

std::string DidYouMean(const std::vector<std::string>& nearest) {
  return nearest.empty() ? ""
                         : "; did you mean " + JoinAlternatives(nearest) + "?";
}

Status UnknownCommand(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  std::map<std::string, std::string> alias_of;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
    for (const std::string& alias : sub->get_aliases()) {
      names.push_back(alias);
      alias_of[alias] = sub->get_name();
    }
  }
  std::string hint;
  for (const std::string& n : NearestNames(word, names)) {
    hint += (hint.empty() ? "; did you mean '" : "' or '") + n;
    if (alias_of.count(n)) hint += "' (an alias of '" + alias_of[n] + "')";
  }
  if (!hint.empty() && hint.back() != ')') hint += "'";
  return Status::InvalidArgument(
      "unknown command '" + EscapeLine(word) + "'" +
      (hint.empty() ? " (see skilldb --help for the commands)" : hint + "?"));
}

// The first argument that nothing consumed, as the error it is: an unknown
// command, an unknown option (with the nearest names), or one argument too
// many. OK when every argument was used.
Status CheckNothingLeft(const CLI::App& app) {
  const std::vector<std::string> left = app.remaining(/*recurse=*/true);
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (left.empty()) return Status::Ok();
  // train's arguments are the trainer's own (AddTrain).
  if (!parsed.empty() && parsed.front()->get_name() == "train") {
    return Status::Ok();
  }
  const std::string& arg = left.front();
  if (parsed.empty() && !arg.starts_with("-")) return UnknownCommand(app, arg);
  const std::string where =
      parsed.empty() ? "skilldb" : "skilldb " + parsed.front()->get_name();
  if (arg.size() > 1 && arg.starts_with("-")) {
    const std::string flag = arg.substr(0, arg.find('='));
    std::vector<std::string> names = OptionNames(app);
    if (!parsed.empty()) {
      for (std::string& n : OptionNames(*parsed.front())) names.push_back(n);
    }
    return Status::InvalidArgument("unknown option '" + EscapeLine(flag) +
                                   "' for '" + where + "'" +
                                   DidYouMean(NearestNames(flag, names)));
  }
  return Status::InvalidArgument("unexpected argument '" + EscapeLine(arg) +
                                 "' for '" + where + "'");
}

ProgressMode ChooseProgress(const Cli& c) {
  if (c.no_progress) return ProgressMode::kOff;
  if (isatty(STDERR_FILENO)) return ProgressMode::kTerminal;
  return c.progress ? ProgressMode::kLines : ProgressMode::kOff;
}

// Parses argv into `c` and returns -1 to go on, or the exit code.
int Parse(CLI::App& app, Cli& c, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, *c.io.out, *c.io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, *c.io.out, *c.io.err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, *c.io.out, *c.io.err);
  } catch (const CLI::ParseError& e) {
    return FailUsage(c.g, c.io, Status::InvalidArgument(e.what()));
  }
  Status s = CheckNothingLeft(app);
  if (s.ok() && !c.run) {
    s = Status::InvalidArgument(
        "a command is required (see skilldb --help for the commands)");
  }
  if (s.ok()) s = c.numbers.Convert();
  if (!s.ok()) return FailUsage(c.g, c.io, s);
  c.g.progress = ChooseProgress(c);
  return -1;
}

// `skilldb train` is handed over before parsing (its arguments are the
// trainer's own), but listed here so that --help shows it, and so that a
// build without the trainer says why the command is missing.
void AddTrain(CLI::App& app, Cli& c) {
  auto* cmd = app.add_subcommand(
      "train",
      "the trainer: SFT cold start and RL over the three agents "
      "(skilldb train demo | --config FILE | report RUN_DIR; "
      "skilldb train --help)");
  cmd->prefix_command();
  Runs(cmd, c, [&c] {
    return Fail(c.g, c.io,
                Status::NotSupported(
                    "this build has no trainer (it needs libtorch; "
                    "trainer/README.md says how to build it)"));
  });
}

int ParseAndRun(int argc, char** argv, const Io& io) {
  CLI::App app(kDescription, "skilldb");
  app.option_defaults()->always_capture_default();
  app.allow_extras();  // CheckNothingLeft names what is left over
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("skilldb ") + SKILLDB_VERSION,
                       "print the version and exit");
  Cli c;
  c.io = io;
  AddGlobalOptions(app, c);
  AddInit(app, c);
  AddWriteCommands(app, c);
  AddReadCommands(app, c);
  AddQuery(app, c);
  AddPropose(app, c);
  AddUsageCommands(app, c);
  AddLifecycleCommands(app, c);
  AddRetentionCommands(app, c);
  AddVerify(app, c);
  AddServe(app, c);
  AddKernelbench(app, c);
  AddLlm(app, c);
  AddEmbed(app, c);
#ifdef SKILLDB_CLI_AGENTS
  AddSolve(app, c);
  AddRollouts(app, c);
  AddDistill(app, c);
#endif
  AddTrain(app, c);
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->fallthrough();
    sub->allow_extras();
  }
  const int parsed = Parse(app, c, argc, argv);
  return parsed >= 0 ? parsed : c.run();
}

// `skilldb [GLOBAL OPTIONS] train ARGS...`: true when the command is
// train, with the trainer's arguments in *args (its name first): ARGS, and
// --json when given before it (the trainer's commands accept it). --db is
// refused (*error): a run keeps its library in RUN_DIR/library.
bool TrainCommand(int argc, char** argv, std::vector<std::string>* args,
                  std::string* error) {
  bool json = false, db = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "train") {
      args->assign({"skilldb train"});
      args->insert(args->end(), argv + i + 1, argv + argc);
      if (json) args->push_back("--json");
      if (db) {
        *error = "skilldb train keeps its library in RUN_DIR/library; "
                 "--db does not apply to it";
      }
      return true;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--progress" || a == "--no-progress") {
    } else if (a == "--db" || a == "--lock-timeout") {
      db = db || a == "--db";
      ++i;  // the option's value
    } else if (a.starts_with("--db=") || a.starts_with("--lock-timeout=")) {
      db = db || a.starts_with("--db=");
    } else {
      return false;  // another command, or something to report as such
    }
  }
  return false;
}

}  // namespace

int Main(int argc, char** argv) {
  SetProcessArgs(argc, argv);
  // `skilldb train ...` parses its own arguments (trainer/README.md); the
  // plain CLI hands it to skilldb-ml, its companion (ml_commands.cc).
  std::vector<std::string> train_args;
  std::string train_error;
  if (TrainCommand(argc, argv, &train_args, &train_error)) {
    if (!train_error.empty()) {
      std::cerr << "skilldb: error: " << train_error << "\n";
      return kExitUserError;
    }
    return RunTrain(std::move(train_args));
  }
  FdStreamBuf stdout_buf(STDOUT_FILENO);
  std::ostream out(&stdout_buf);
  const Io io{&out, &std::cerr, &std::cin};
  int code = kExitInternalError;
  try {
    code = ParseAndRun(argc, argv, io);
  } catch (const std::bad_alloc&) {
    std::cerr << "skilldb: internal error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "skilldb: internal error: " << EscapeBlock(e.what()) << "\n";
  } catch (...) {
    std::cerr << "skilldb: internal error: unknown exception\n";
  }
  // Output that did not arrive is an error, whatever the command said.
  // (A command that failed has said why already.)
  const Status written = StreamStatus(out, "stdout");
  if (!written.ok() && code == kExitOk) {
    std::cerr << "skilldb: error: " << written.message() << "\n";
    code = kExitInternalError;
  }
  return code;
}

}  // namespace skilldb::cli

int main(int argc, char** argv) { return skilldb::cli::Main(argc, argv); }
