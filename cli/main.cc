// skilldb: the command-line tool. This file owns argument parsing (CLI11)
// and dispatches to one Run function per subcommand (commands.h).
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"

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
    "Exit codes: 0 success, 1 user error (message on stderr), 2 internal error.";

void AddVersionOption(CLI::App* cmd, std::optional<Version>* v,
                      const char* what) {
  cmd->add_option("--as-of", *v, what)->check(CLI::NonNegativeNumber);
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app(kDescription, "skilldb");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalArgs g;
  app.add_option("--db", g.db, "library directory (default: $SKILLDB_DB or the default library)");
  app.add_flag("--json", g.json, "machine-readable JSON output");
  app.add_option("--lock-timeout", g.lock_timeout_ms,
                 "milliseconds a write waits for another process that holds the "
                 "library open for writing (default 10000)")
      ->check(CLI::NonNegativeNumber);

  Io io{&std::cout, &std::cerr, &std::cin};
  std::function<int()> run;

  InitArgs init;
  auto* c_init = app.add_subcommand("init", "create an empty library");
  c_init->add_option("--analyzer", init.analyzer,
                     "text analysis, fixed for the library's life: whitespace, "
                     "standard (Unicode words, stemming) or code (standard + "
                     "identifier splitting)")
      ->check(CLI::IsMember({"whitespace", "standard", "code"}));
  c_init->add_option("--k1", init.k1, "BM25 k1 (term-frequency saturation)");
  c_init->add_option("--b", init.b, "BM25 b (length normalization, 0..1)");
  c_init->add_option("--field-weights", init.field_weights,
                     "integer weight per field, e.g. title=3,summary=2,body=1,"
                     "tags=2,ops=1,code=1 (a field of weight w counts as its "
                     "text repeated w times)");
  c_init->callback([&] { run = [&] { return RunInit(g, init, io); }; });

  ImportArgs import;
  auto* c_import = app.add_subcommand(
      "import", "import a JSONL file of skills as one commit (all or nothing)");
  c_import->add_option("file", import.file, "JSONL file, or - for stdin")->required();
  c_import->add_option("-m,--message", import.message, "commit message");
  c_import->add_option("--author", import.author, "commit author (default: $USER)");
  c_import->callback([&] { run = [&] { return RunImport(g, import, io); }; });

  ExportArgs exp;
  auto* c_export = app.add_subcommand("export", "write the skills as JSONL (re-importable)");
  AddVersionOption(c_export, &exp.as_of, "export the library as of this version");
  c_export->add_option("-o,--output", exp.output, "write to this file instead of stdout");
  c_export->callback([&] { run = [&] { return RunExport(g, exp, io); }; });

  AddArgs add;
  auto* c_add = app.add_subcommand(
      "add", "add one skill (a JSON object); an existing id gets a new revision");
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
  auto* c_history = app.add_subcommand("history", "list every revision of a skill, newest first");
  c_history->add_option("id", history.id, "skill id")->required();
  c_history->callback([&] { run = [&] { return RunHistory(g, history, io); }; });

  LogArgs log;
  auto* c_log = app.add_subcommand("log", "list commits, newest first");
  c_log->add_option("-n,--limit", log.limit, "show at most this many commits");
  c_log->callback([&] { run = [&] { return RunLog(g, log, io); }; });

  DiffArgs diff;
  auto* c_diff = app.add_subcommand("diff", "what differs between two versions");
  c_diff->add_option("from", diff.from, "first version")->required()->check(CLI::NonNegativeNumber);
  c_diff->add_option("to", diff.to, "second version")->required()->check(CLI::NonNegativeNumber);
  c_diff->callback([&] { run = [&] { return RunDiff(g, diff, io); }; });

  StatsArgs stats;
  auto* c_stats = app.add_subcommand("stats", "counts, index and disk statistics");
  AddVersionOption(c_stats, &stats.as_of, "statistics as of this version");
  c_stats->callback([&] { run = [&] { return RunStats(g, stats, io); }; });

  QueryArgs query;
  auto* c_query = app.add_subcommand(
      "query", "BM25 search: the top skills for TEXT (ties by id)");
  c_query->add_option("text", query.text, "query text");
  c_query->add_option("--file", query.file,
                      "run one query per line of FILE (- for stdin); with --json "
                      "prints one JSON object per line");
  c_query->add_option("--threads", query.threads, "threads for --file (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  c_query->add_option("-k,--k", query.k, "number of hits");
  AddVersionOption(c_query, &query.as_of, "search the library as of this version");
  c_query->add_option("--tag", query.tags, "only skills with this tag (repeatable)");
  c_query->add_option("--op", query.ops, "only skills for this op family (repeatable)");
  c_query->add_option("--arch", query.arch, "only skills for this arch (repeatable)");
  c_query->add_option("--language", query.language, "only skills in this language")
      ->check(CLI::IsMember({"cuda", "triton", "any"}));
  c_query->add_option("--status", query.status,
                      "only skills with this status (default: active and candidate)")
      ->check(CLI::IsMember({"candidate", "active", "deprecated", "pruned"}));
  c_query->callback([&] { run = [&] { return RunQuery(g, query, io); }; });

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
