// skilldb: the command-line tool. This file owns argument parsing (CLI11)
// and dispatches to one Run function per subcommand (commands.h).
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"
#ifdef SKILLDB_CLI_AGENTS
#include "agent_commands.h"
#endif

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

void AddVersionOption(CLI::App* cmd, std::optional<Version>* v,
                      const char* what) {
  cmd->add_option("--as-of", *v, what)->check(CLI::NonNegativeNumber);
}

#ifdef SKILLDB_CLI_AGENTS
// The agents' subcommands (agent_commands.h): solve, rollouts, distill.
struct AgentArgs {
  SolveArgs solve;
  RolloutsArgs rollouts;
  DistillArgs distill;
};

void AddLlmOptions(CLI::App* cmd, LlmArgs* llm) {
  cmd->add_option("--llm-url", llm->url,
                  "OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
                  "(default: $SKILLDB_LLM_URL, $OPENAI_BASE_URL)");
  cmd->add_option("--llm-model", llm->model,
                  "model name (default: $SKILLDB_LLM_MODEL, else the "
                  "server's first)");
  cmd->add_option("--llm-key", llm->key,
                  "API key (default: $SKILLDB_LLM_KEY, $OPENAI_API_KEY)");
  cmd->add_option("--llm-concurrency", llm->max_in_flight,
                  "requests in flight at most (default: 8, or the rollouts)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--llm-token-ids", llm->token_ids,
                "ask the server for token ids (vLLM >= 0.10.2) and keep them "
                "in the rollout store");
}

void AddRolloutsOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--rollouts", *path,
                  "rollout store (SQLite; default: $SKILLDB_ROLLOUTS, else "
                  "<library>.rollouts.sqlite beside the library)");
}

void AddAgentCommands(CLI::App& app, const GlobalArgs& g, const Io& io,
                      std::function<int()>* run, AgentArgs* a) {
  SolveArgs& s = a->solve;
  auto* solve = app.add_subcommand(
      "solve",
      "the Policy Agent: write a kernel for a verifier task over several "
      "turns, conditioned on library skills, with verifier feedback; "
      "prints the best kernel, its report and the trajectory id (exit 1 "
      "when no speedup was verified); with --tasks, a rollout pool and its "
      "throughput");
  solve->add_option("--task", s.task,
                    "verifier task (skilldb verify --list-tasks)");
  solve
      ->add_option("--tasks", s.tasks,
                   "several tasks, comma-separated (the pool)")
      ->delimiter(',');
  solve->add_option("--turns", s.turns, "turns at most (default 3)")
      ->check(CLI::PositiveNumber);
  solve->add_option("--samples", s.samples, "completions per turn (default 1)")
      ->check(CLI::PositiveNumber);
  solve
      ->add_option("--rollouts-per-task", s.rollouts,
                   "independent trajectories per task (default 1)")
      ->check(CLI::PositiveNumber);
  solve
      ->add_option("--concurrency", s.concurrency,
                   "rollouts in flight (default: all)")
      ->check(CLI::NonNegativeNumber);
  solve->add_option("--backend", s.backend, "cuda (GPU, default) or host (CPU)")
      ->check(CLI::IsMember({"cuda", "host"}));
  solve
      ->add_option("--workers", s.workers,
                   "host verifier workers (default: one per two cores)")
      ->check(CLI::NonNegativeNumber);
  solve
      ->add_option("--rerank", s.rerank,
                   "second selection stage: none (BM25, default) or listwise "
                   "(the same model ranks the candidates)")
      ->check(CLI::IsMember({"none", "listwise"}));
  solve->add_option("--skills", s.skills, "skills in the prompt (default 3)")
      ->check(CLI::PositiveNumber);
  solve
      ->add_option("--candidates", s.candidates, "BM25 candidates (default 20)")
      ->check(CLI::PositiveNumber);
  solve
      ->add_option("--temperature", s.temperature,
                   "sampling temperature (default 0.8)")
      ->check(CLI::NonNegativeNumber);
  solve
      ->add_option("--max-tokens", s.max_tokens,
                   "completion tokens (default 4096)")
      ->check(CLI::PositiveNumber);
  solve->add_flag("--no-early-stop", s.no_early_stop,
                  "run every turn even after a verified speedup");
  solve->add_option("--group", s.group,
                    "group label stored with the trajectories");
  AddRolloutsOption(solve, &s.rollouts_path);
  AddLlmOptions(solve, &s.llm);
  solve->callback([run, &g, &io, a] {
    *run = [&g, &io, a] { return RunSolve(g, a->solve, io); };
  });

  RolloutsArgs& r = a->rollouts;
  auto* rollouts = app.add_subcommand(
      "rollouts", "the rollout store: list, show ID, export (JSONL)");
  rollouts->add_option("action", r.action, "list, show or export")
      ->required()
      ->check(CLI::IsMember({"list", "show", "export"}));
  rollouts->add_option("id", r.id, "trajectory id (show)");
  rollouts->add_option("--task", r.task, "only this task");
  rollouts->add_option("--group", r.group, "only this group");
  rollouts
      ->add_option("--solved", r.solved, "only solved (yes) or unsolved (no)")
      ->check(CLI::IsMember({"yes", "no"}));
  rollouts->add_option("-n,--limit", r.limit, "at most N (newest for list)");
  rollouts->add_option("-o,--output", r.output, "export to this file");
  rollouts
      ->add_option("--format", r.format,
                   "export: trajectories (one per line, default) or "
                   "generations (one model call per line, for training)")
      ->check(CLI::IsMember({"trajectories", "generations"}));
  AddRolloutsOption(rollouts, &r.rollouts_path);
  rollouts->callback([run, &g, &io, a] {
    *run = [&g, &io, a] { return RunRollouts(g, a->rollouts, io); };
  });

  DistillArgs& d = a->distill;
  auto* distill = app.add_subcommand(
      "distill",
      "the Skill Summary Agent: a solved trajectory becomes a candidate skill "
      "submitted through verified insertion; a failed one leaves unverified "
      "pitfall notes on the skills it used (exit 1 unless accepted or "
      "attached)");
  distill
      ->add_option("trajectory", d.id, "trajectory id (skilldb rollouts list)")
      ->required();
  distill
      ->add_option("--backend", d.backend,
                   "verifier for the evidence (default: the trajectory's)")
      ->check(CLI::IsMember({"cuda", "host"}));
  distill
      ->add_option("--dedup", d.dedup, "duplicates: reject, supersede or merge")
      ->check(CLI::IsMember({"reject", "supersede", "merge"}));
  distill
      ->add_option("--attempts", d.attempts,
                   "model answers tried until one validates (default 3)")
      ->check(CLI::PositiveNumber);
  distill->add_option("--workers", d.workers, "host verifier workers")
      ->check(CLI::NonNegativeNumber);
  AddRolloutsOption(distill, &d.rollouts_path);
  AddLlmOptions(distill, &d.llm);
  distill->callback([run, &g, &io, a] {
    *run = [&g, &io, a] { return RunDistill(g, a->distill, io); };
  });
}
#endif  // SKILLDB_CLI_AGENTS

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app(kDescription, "skilldb");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalArgs g;
  app.add_option(
      "--db", g.db,
      "library directory (default: $SKILLDB_DB or the default library)");
  app.add_flag("--json", g.json, "machine-readable JSON output");
  app.add_option(
         "--lock-timeout", g.lock_timeout_ms,
         "milliseconds a write waits for another process that holds the "
         "library open for writing (default 10000)")
      ->check(CLI::NonNegativeNumber);

  Io io{&std::cout, &std::cerr, &std::cin};
  std::function<int()> run;

  InitArgs init;
  auto* c_init = app.add_subcommand("init", "create an empty library");
  c_init
      ->add_option("--analyzer", init.analyzer,
                   "text analysis, fixed for the library's life: whitespace, "
                   "standard (Unicode words, stemming) or code (standard + "
                   "identifier splitting)")
      ->check(CLI::IsMember({"whitespace", "standard", "code"}));
  c_init->add_option("--k1", init.k1, "BM25 k1 (term-frequency saturation)");
  c_init->add_option("--b", init.b, "BM25 b (length normalization, 0..1)");
  c_init->add_option(
      "--field-weights", init.field_weights,
      "integer weight per field, e.g. title=4,tags=3 (a field of "
      "weight w counts as its text repeated w times; default: all 1, "
      "plain BM25 over the joined text; the default library uses "
      "title=4,tags=3, chosen by the relevance evaluation)");
  c_init->callback([&] { run = [&] { return RunInit(g, init, io); }; });

  ImportArgs import;
  auto* c_import = app.add_subcommand(
      "import", "import a JSONL file of skills as one commit (all or nothing)");
  c_import->add_option("file", import.file, "JSONL file, or - for stdin")
      ->required();
  c_import->add_option("-m,--message", import.message, "commit message");
  c_import->add_option("--author", import.author,
                       "commit author (default: $USER)");
  c_import->callback([&] { run = [&] { return RunImport(g, import, io); }; });

  ExportArgs exp;
  auto* c_export =
      app.add_subcommand("export", "write the skills as JSONL (re-importable)");
  AddVersionOption(c_export, &exp.as_of,
                   "export the library as of this version");
  c_export->add_option("-o,--output", exp.output,
                       "write to this file instead of stdout");
  c_export->add_option(
      "--sqlite", exp.sqlite,
      "write an SQLite database (skills, revisions, commits, changes, "
      "evidence, usage, audit, tags, and an FTS5 table skills_fts)");
  c_export->callback([&] { run = [&] { return RunExport(g, exp, io); }; });

  AddArgs add;
  auto* c_add = app.add_subcommand(
      "add",
      "add one skill (a JSON object); an existing id gets a new revision");
  c_add->add_option("file", add.file, "JSON file, or - for stdin")->required();
  c_add->add_option("-m,--message", add.message, "commit message");
  c_add->add_option("--author", add.author, "commit author (default: $USER)");
  c_add->callback([&] { run = [&] { return RunAdd(g, add, io); }; });

  RmArgs rm;
  auto* c_rm = app.add_subcommand("rm", "delete a skill (its history stays)");
  c_rm->add_option("id", rm.id, "skill id")->required();
  c_rm->add_option("-m,--message", rm.message, "commit message");
  c_rm->add_option("--author", rm.author, "commit author (default: $USER)");
  c_rm->callback([&] { run = [&] { return RunRm(g, rm, io); }; });

  ShowArgs show;
  auto* c_show = app.add_subcommand("show", "print one skill");
  c_show->add_option("id", show.id, "skill id")->required();
  AddVersionOption(c_show, &show.as_of, "show the skill as of this version");
  c_show->callback([&] { run = [&] { return RunShow(g, show, io); }; });

  HistoryArgs history;
  auto* c_history = app.add_subcommand(
      "history", "list every revision of a skill, newest first");
  c_history->add_option("id", history.id, "skill id")->required();
  c_history->callback(
      [&] { run = [&] { return RunHistory(g, history, io); }; });

  LogArgs log;
  auto* c_log = app.add_subcommand("log", "list commits, newest first");
  c_log->add_option("-n,--limit", log.limit, "show at most this many commits");
  c_log->callback([&] { run = [&] { return RunLog(g, log, io); }; });

  DiffArgs diff;
  auto* c_diff =
      app.add_subcommand("diff", "what differs between two versions");
  c_diff->add_option("from", diff.from, "first version")
      ->required()
      ->check(CLI::NonNegativeNumber);
  c_diff->add_option("to", diff.to, "second version")
      ->required()
      ->check(CLI::NonNegativeNumber);
  c_diff->callback([&] { run = [&] { return RunDiff(g, diff, io); }; });

  StatsArgs stats;
  auto* c_stats =
      app.add_subcommand("stats", "counts, index and disk statistics");
  AddVersionOption(c_stats, &stats.as_of, "statistics as of this version");
  c_stats->callback([&] { run = [&] { return RunStats(g, stats, io); }; });

  QueryArgs query;
  auto* c_query = app.add_subcommand(
      "query", "BM25 search: the top skills for TEXT (ties by id)");
  c_query->add_option("text", query.text, "query text");
  c_query->add_option(
      "--file", query.file,
      "run one query per line of FILE (- for stdin); with --json "
      "prints one JSON object per line");
  c_query
      ->add_option("--threads", query.threads,
                   "threads for --file (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  c_query->add_option("-k,--k", query.k, "number of hits");
  AddVersionOption(c_query, &query.as_of,
                   "search the library as of this version");
  c_query->add_option("--tag", query.tags,
                      "only skills with this tag (repeatable)");
  c_query->add_option("--op", query.ops,
                      "only skills for this op family (repeatable)");
  c_query->add_option("--arch", query.arch,
                      "only skills for this arch (repeatable)");
  c_query
      ->add_option("--language", query.language, "only skills in this language")
      ->check(CLI::IsMember({"cuda", "triton", "any"}));
  c_query
      ->add_option(
          "--status", query.status,
          "only skills with this status (default: active and candidate)")
      ->check(CLI::IsMember({"candidate", "active", "deprecated", "pruned"}));
  c_query->add_option(
      "--fields", query.fields,
      "what each hit carries besides id and score, as of the version "
      "queried: a comma-separated list of title, summary, body, code, tags, "
      "ops, arch, language, status, usage (counters and utility), or all or "
      "none (default: title,usage)");
  c_query->callback([&] { run = [&] { return RunQuery(g, query, io); }; });

  ProposeArgs propose;
  auto* c_propose =
      app.add_subcommand("propose",
                         "verified insertion: deduplicate, verify, then commit "
                         "or reject a candidate skill");
  c_propose
      ->add_option("file", propose.file,
                   "candidate skill (a JSON object), or -")
      ->required();
  c_propose
      ->add_option("--verifier", propose.verifier,
                   "replay (a recorded report, --evidence), host or cuda (runs "
                   "--candidate on --task)")
      ->check(CLI::IsMember({"replay", "host", "cuda"}));
  c_propose->add_option("--evidence", propose.evidence,
                        "verification report JSON to replay");
  c_propose->add_option("--task", propose.task,
                        "verification task (skilldb verify --list-tasks)");
  c_propose->add_option("--candidate", propose.candidate,
                        "kernel source to verify (.cu or .cc)");
  c_propose->add_option("--baseline", propose.baseline,
                        "baseline source (default: the task's reference)");
  c_propose->add_option("--rounds", propose.rounds, "timing rounds")
      ->check(CLI::PositiveNumber);
  c_propose->add_option(
      "--policy", propose.policy,
      "acceptance policy items: min-rounds=3, min-speedup=1.05, "
      "min-ci-low=1.0, "
      "max-speedup=50, correctness=true, device-class=sm_90 (repeatable or "
      "comma-separated)");
  c_propose
      ->add_option("--dedup", propose.dedup,
                   "duplicates: reject, supersede (deprecate them) or merge "
                   "(new revision)")
      ->check(CLI::IsMember({"reject", "supersede", "merge"}));
  c_propose->add_option("--near-jaccard", propose.near_jaccard,
                        "word 3-shingle Jaccard at which a skill is a near "
                        "duplicate (default 0.6)");
  c_propose->add_option("-m,--message", propose.message, "commit message");
  c_propose->add_option("--author", propose.author, "author (default: $USER)");
  c_propose->callback(
      [&] { run = [&] { return RunPropose(g, propose, io); }; });

  AuditArgs audit;
  auto* c_audit =
      app.add_subcommand("audit", "the audit log of proposals, oldest first");
  c_audit->add_option("-n,--limit", audit.limit, "only the newest N entries");
  c_audit->callback([&] { run = [&] { return RunAudit(g, audit, io); }; });

  UsageArgs usage;
  auto* c_usage = app.add_subcommand("usage",
                                     "usage counters and utility (all skills, "
                                     "or one); --record adds an event");
  c_usage->add_option("id", usage.id, "skill id");
  c_usage
      ->add_option(
          "--record", usage.record,
          "record an event: retrieved, selected, applied, succeeded or failed")
      ->check(CLI::IsMember(
          {"retrieved", "selected", "applied", "succeeded", "failed"}));
  c_usage->add_option("--count", usage.count, "events to record (default 1)");
  c_usage->callback([&] { run = [&] { return RunUsage(g, usage, io); }; });

  PruneArgs prune;
  auto* c_prune = app.add_subcommand(
      "prune",
      "mark skills pruned by policy in one version (dry run unless --apply)");
  c_prune
      ->add_option("--policy", prune.policy,
                   "low-utility=X[:MIN_APPLIED] (default min 10), superseded, "
                   "unused=VERSIONS, near-duplicates=JACCARD (keeps each "
                   "cluster's best); "
                   "repeatable")
      ->required();
  c_prune->add_flag("--apply", prune.apply,
                    "commit the change (default: only print it)");
  c_prune->add_option("-m,--message", prune.message, "commit message");
  c_prune->add_option("--author", prune.author, "author (default: $USER)");
  c_prune->callback([&] { run = [&] { return RunPrune(g, prune, io); }; });

  RevertArgs revert;
  auto* c_revert = app.add_subcommand(
      "revert", "undo one commit: a new version that restores what it changed");
  c_revert->add_option("version", revert.version, "the commit to undo")
      ->required();
  c_revert->add_option("-m,--message", revert.message, "commit message");
  c_revert->add_option("--author", revert.author, "author (default: $USER)");
  c_revert->callback([&] { run = [&] { return RunRevert(g, revert, io); }; });

  SetStatusArgs set_status;
  auto* c_status =
      app.add_subcommand("set-status", "set the lifecycle status of skills");
  c_status
      ->add_option("status", set_status.status,
                   "candidate, active, deprecated or pruned")
      ->required()
      ->check(CLI::IsMember({"candidate", "active", "deprecated", "pruned"}));
  c_status->add_option("ids", set_status.ids, "skill ids")->required();
  c_status->add_option("-m,--message", set_status.message, "commit message");
  c_status->add_option("--author", set_status.author,
                       "author (default: $USER)");
  c_status->callback(
      [&] { run = [&] { return RunSetStatus(g, set_status, io); }; });

  TagArgs tag;
  auto* c_tag = app.add_subcommand(
      "tag", "name a version (e.g. a training checkpoint); gc keeps it");
  c_tag->add_option("name", tag.name, "tag name")->required();
  c_tag->add_option("version", tag.version, "version (default: the newest)");
  c_tag->add_flag("-d,--delete", tag.remove, "delete the tag");
  c_tag->callback([&] { run = [&] { return RunTag(g, tag, io); }; });

  auto* c_tags = app.add_subcommand("tags", "list tags");
  c_tags->callback([&] { run = [&] { return RunTags(g, io); }; });

  GcArgs gc;
  auto* c_gc = app.add_subcommand(
      "gc", "drop history older than the retention, never a tagged version");
  c_gc->add_option("--keep-last", gc.keep_last, "keep the newest N versions");
  c_gc->add_option("--keep-since", gc.keep_since, "keep versions >= V");
  c_gc->callback([&] { run = [&] { return RunGc(g, gc, io); }; });

  auto* c_compact = app.add_subcommand("compact",
                                       "rewrite the index into one segment and "
                                       "compact storage (no new version)");
  c_compact->callback([&] { run = [&] { return RunCompact(g, io); }; });

  VerifyArgs verify_args;
  auto* c_verify = app.add_subcommand(
      "verify", "check and time a candidate kernel against a task's reference");
  c_verify->add_option("--task", verify_args.task,
                       "task name (see --list-tasks)");
  c_verify->add_option("--candidate", verify_args.candidate,
                       "candidate source (.cu or .cc)");
  c_verify->add_option("--baseline", verify_args.baseline,
                       "baseline source (default: the task's reference)");
  c_verify
      ->add_option("--backend", verify_args.backend,
                   "cuda (GPU) or host (CPU, sandboxed)")
      ->check(CLI::IsMember({"cuda", "host"}));
  c_verify
      ->add_option("--rounds", verify_args.rounds,
                   "independent timing rounds (>= 3)")
      ->check(CLI::PositiveNumber);
  c_verify->add_flag("--list-tasks", verify_args.list_tasks, "list the tasks");
  c_verify->callback(
      [&] { run = [&] { return RunVerify(g, verify_args, io); }; });

#ifdef SKILLDB_CLI_AGENTS
  AgentArgs agent_args;
  AddAgentCommands(app, g, io, &run, &agent_args);
#endif

  for (CLI::App* sub : app.get_subcommands({})) sub->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "skilldb: error: " << e.what() << "\n"
              << "run 'skilldb --help' or 'skilldb COMMAND --help' for usage\n";
    return 1;
  }
  return run ? run() : 1;
}

}  // namespace skilldb::cli

int main(int argc, char** argv) { return skilldb::cli::Main(argc, argv); }
