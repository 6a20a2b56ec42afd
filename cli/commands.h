// The skilldb command-line tool: one Run function per subcommand, each taking
// plain argument structs (main.cc owns the CLI11 parsing, so only one
// translation unit pays for that header).
//
// Every Run function returns the process exit code: 0 success, 1 a user
// error (bad input, missing skill or version, library locked), 2 an internal
// error (corruption, I/O). Errors are printed to stderr naming the input and
// what is wrong; with --json they are also printed to stderr as
// {"error": {"code": ..., "message": ...}}.
#ifndef SKILLDB_CLI_COMMANDS_H_
#define SKILLDB_CLI_COMMANDS_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "progress.h"
#include "skilldb/library.h"
#include "skilldb/util/exit_code.h"

namespace skilldb::llm {
class Backbone;
}  // namespace skilldb::llm

namespace skilldb::verify::kb {
struct RunnerOptions;
struct EvalOptions;
}  // namespace skilldb::verify::kb

namespace skilldb::cli {

using util::kExitInternalError;
using util::kExitOk;
using util::kExitUserError;

// The OpenAI-compatible client's options, the same on every command that
// talks to a model (query --rerank, llm check, solve, distill): unset means
// the environment's or the default (llm::ResolveClientConfig).
struct LlmClientArgs {
  std::optional<std::string> url;    // --llm-url
  std::optional<std::string> model;  // --llm-model
  std::optional<std::string> key;    // --llm-key
  double timeout_s = 0;              // --llm-timeout; 0 = not given
  std::optional<int> retries;        // --llm-retries
  std::string native_n;              // --llm-native-n true|false; "" = unset
  int max_in_flight = 0;             // --llm-concurrency; 0 = the default
  // --llm-token-ids: ask for prompt and completion token ids (vLLM's
  // return_token_ids), kept in the rollout store for training.
  bool token_ids = false;
};

// Options every command takes.
struct GlobalArgs {
  std::string db;     // --db; "" = $SKILLDB_DB, else the default library
  bool json = false;  // --json
  int lock_timeout_ms = 10000;  // --lock-timeout: wait for another writer
  // --progress / --no-progress / whether stderr is a terminal.
  ProgressMode progress = ProgressMode::kOff;
};

// Where output goes; tests point these at string streams.
struct Io {
  std::ostream* out;
  std::ostream* err;
  std::istream* in;
};

struct InitArgs {
  std::string analyzer = "code";
  std::string field_weights;  // "title=3,summary=2,..." ("" = the defaults)
  double k1 = 1.2;
  double b = 0.75;
};
struct ImportArgs {
  std::string file;  // path or "-"
  std::string message;
  std::string author;
};
struct ExportArgs {
  std::optional<Version> as_of;
  std::string output;  // "" = stdout
  std::string sqlite;  // --sqlite FILE: write an SQLite database instead
};
struct AddArgs {
  std::string file;  // path or "-"
  std::string message;
  std::string author;
};
struct RmArgs {
  std::string id;
  std::string message;
  std::string author;
};
struct ShowArgs {
  std::string id;
  std::optional<Version> as_of;
};
struct HistoryArgs {
  std::string id;
};
struct LogArgs {
  size_t limit = 0;
};
struct DiffArgs {
  Version from = 0;
  Version to = 0;
};
struct StatsArgs {
  std::optional<Version> as_of;
};
struct QueryArgs {
  std::string text;
  std::string file;  // --file: one query per line
  int threads = 0;   // --threads for --file; 0 = all cores
  size_t k = 10;
  std::optional<Version> as_of;
  std::vector<std::string> tags;
  std::vector<std::string> ops;
  std::vector<std::string> arch;
  std::string language;  // "" = any
  std::string status;    // "" = active and candidate
  // --fields: what each JSON hit carries besides id and score
  // (ParseHitFields' syntax).
  std::string fields = "title,usage";
  // --rerank MODE (listwise, pointwise or endpoint; "" = BM25 alone): the
  // BM25 top `candidates` are reranked by the LLM at --llm-url
  // (rerank_query_command.cc).
  std::string rerank;
  LlmClientArgs llm;
  std::string rerank_api = "cohere";  // endpoint shape: cohere | tei
  size_t candidates = 20;
  // --rerank dense (dense_command.cc): the sentence encoder's checkpoint
  // ("" = $SKILLDB_EMBED_MODEL, else the all-MiniLM-L6-v2 setup installs),
  // the fusion with BM25 (none, rrf, blend) and the embedding store (""
  // = LIBRARY.embeddings.sqlite).
  std::string model;
  std::string fusion = "blend";
  std::string embeddings;
};

// skilldb embed (dense_command.cc): the background pass that embeds every
// retained revision the embedding store lacks.
struct EmbedArgs {
  std::string model;       // as QueryArgs
  std::string embeddings;  // as QueryArgs
  bool prune = false;      // --prune: drop embeddings of revisions gc removed
  size_t batch = 32;       // --batch: texts per forward and per store write
};

// skilldb llm ACTION (llm_command.cc); ACTION: check.
struct LlmArgs {
  std::string action;
  LlmClientArgs llm;
  bool probe = false;     // --probe: also time a one-token generation
};

struct ProposeArgs {
  std::string file;       // the candidate skill (one JSON object), or "-"
  std::string verifier;   // replay | host | cuda ("" = replay with --evidence)
  std::string evidence;   // --evidence REPORT.json (replay)
  std::string task;       // --task for host/cuda
  std::string candidate;  // --candidate kernel source for host/cuda
  std::string baseline;   // --baseline source ("" = the task's reference)
  int rounds = 3;
  std::vector<std::string> policy;  // key=value items
  std::string dedup = "reject";
  double near_jaccard = 0.6;
  std::string message;
  std::string author;
};
struct AuditArgs {
  size_t limit = 0;
};
struct UsageArgs {
  std::string id;      // "" = every skill with usage
  std::string record;  // --record EVENT
  uint64_t count = 1;
};
struct PruneArgs {
  std::vector<std::string>
      policy;  // low-utility=X[:N] superseded unused=K near-duplicates=J
  bool apply = false;
  std::string message;
  std::string author;
};
struct RevertArgs {
  Version version = 0;
  std::string message;
  std::string author;
};
struct SetStatusArgs {
  std::string status;
  std::vector<std::string> ids;
  std::string message;
  std::string author;
};
struct TagArgs {
  std::string name;                // "" with list
  std::optional<Version> version;  // default: the head
  bool remove = false;
};
struct GcArgs {
  std::optional<uint64_t> keep_last;
  std::optional<Version> keep_since;
};
struct VerifyArgs {
  std::string task;
  std::string candidate;
  std::string baseline;
  std::string backend = "cuda";
  int rounds = 3;
  bool list_tasks = false;
};

// skilldb serve (serve_command.cc): the server of server/.
struct ServeArgs {
  std::string listen = "127.0.0.1:8712";  // HOST:PORT (port 0: any free)
  std::string token_file;  // "" = no authentication
  bool auth_reads = false;  // tokens for reads too
  bool read_only = false;   // open read-only, refuse writes
  int gpu_workers = 1;      // verifier workers (GPUs; host processes)
  int eval_rounds = 3;      // timing rounds of an /evaluate
  int queue_workers = -1;   // proposal queue workers; -1: gpu_workers
  std::string verifier = "auto";  // auto | cuda | host | none
  int threads = 32;          // HTTP threads
  int max_body_mb = 8;       // request body limit
  int refresh_ms = 1000;     // read-only: reopen this often
  bool no_replay = false;    // refuse replayed reports
  bool accept_active = false;  // accepted proposals may go in active
  std::vector<std::string> policy;  // the floor of every proposal's policy
  bool quiet = false;        // no request log on stderr
};

// Items: min-rounds=N min-speedup=X min-ci-low=X correctness=true|false
// max-speedup=X device-class=NAME, also comma-separated in one item
// (propose_command.cc). InvalidArgument naming the bad item.
Result<VerificationPolicy> ParsePolicy(const std::vector<std::string>& items);

// skilldb kernelbench ACTION (kernelbench_command.cc): import PATH, eval
// RUN_DIR, list, run OUT_DIR (kernelbench_run_command.cc: the Policy Agent
// through an OpenAI-compatible server, verified as answers arrive). The options
// map onto verify/kernelbench's (see skilldb/verify/kernelbench.h for their
// meaning and defaults).
struct KernelbenchArgs {
  std::string action;     // import | eval | list | run
  std::string path;       // import: a checkout, level folder or file; eval: RUN_DIR
  std::string store;      // "" = $SKILLDB_KB_STORE or the user data dir
  int level = 0;
  std::string problems;   // "1-20,33"
  std::string precision = "fp32";
  std::string protocol = "skilldb";
  std::string backend;    // cuda | triton ("" = detect)
  std::string results;    // eval: results file ("" = RUN_DIR/skilldb_eval.jsonl)
  std::string cache;      // builds and baselines
  std::string python;     // interpreter with torch ("" = python3)
  std::string device = "cuda";
  bool no_confine = false;
  int trials = 5;
  int rounds = 3;
  int calls = 30;
  int perf_trials = 100;
  int build_jobs = 0;
  int workers = 1;  // eval, run: answers judged at once
  int gpus = 1;     // eval, run: GPUs they are spread over
  uint64_t seed = 0;
  bool credit_torch_ops = false;
  bool no_compile_baseline = false;
  bool no_generic_caller = false;
  bool no_bytecode_cache = false;
  int64_t max_screen_bytes = int64_t{2} << 30;
  int import_jobs = 0;  // import: problems inspected at once (0 = auto)
  // run: the model, the trajectories and what the prompt shows.
  LlmClientArgs llm;
  int turns = 1;
  int samples = 1;
  std::string skills = "on";  // on | off (the ablation)
  int select_k = 3;           // skills in the prompt
  std::string
      format;  // cuda | triton | cpp ("" = cpp on --device cpu, else cuda)
  double temperature = 0.8;
  int max_tokens = 4096;
  int concurrency = 0;  // trajectories in flight (0: min(16, all))
  // run: a Llama / Qwen2 checkpoint run in process (skilldb-ml) instead of
  // a server, on this device ("cpu", "cuda", "cuda:N").
  std::string local_model;
  std::string local_device = "cpu";
};

// Prints a usage error (bad arguments, found before any command ran) with
// where to find help, and returns its exit code (1).
int FailUsage(const GlobalArgs& g, const Io& io, const Status& status);

int RunInit(const GlobalArgs& g, const InitArgs& a, const Io& io);
int RunImport(const GlobalArgs& g, const ImportArgs& a, const Io& io);
int RunExport(const GlobalArgs& g, const ExportArgs& a, const Io& io);
int RunAdd(const GlobalArgs& g, const AddArgs& a, const Io& io);
int RunRm(const GlobalArgs& g, const RmArgs& a, const Io& io);
int RunShow(const GlobalArgs& g, const ShowArgs& a, const Io& io);
int RunHistory(const GlobalArgs& g, const HistoryArgs& a, const Io& io);
int RunLog(const GlobalArgs& g, const LogArgs& a, const Io& io);
int RunDiff(const GlobalArgs& g, const DiffArgs& a, const Io& io);
int RunStats(const GlobalArgs& g, const StatsArgs& a, const Io& io);
int RunQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io);
// query --rerank (rerank_query_command.cc); RunQuery hands over to it.
int RunRerankedQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io);
// query --rerank dense, and embed: NotSupported in a build without libtorch.
int RunDenseQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io);
int RunEmbed(const GlobalArgs& g, const EmbedArgs& a, const Io& io);
// `skilldb [GLOBAL OPTIONS] train ARGS...`, with `args` the trainer's
// arguments (its name first; main.cc's TrainCommand): in skilldb-ml the
// trainer (trainer/train_command.h); in the plain CLI, the whole command
// line handed over to skilldb-ml.
int RunTrain(std::vector<std::string> args);
// The BM25 options of a query's arguments (query_command.cc).
Result<QueryOptions> MakeQueryOptions(const QueryArgs& a, bool json);
int RunLlm(const GlobalArgs& g, const LlmArgs& a, const Io& io);
int RunPropose(const GlobalArgs& g, const ProposeArgs& a, const Io& io);
int RunAudit(const GlobalArgs& g, const AuditArgs& a, const Io& io);
int RunUsage(const GlobalArgs& g, const UsageArgs& a, const Io& io);
int RunPrune(const GlobalArgs& g, const PruneArgs& a, const Io& io);
int RunRevert(const GlobalArgs& g, const RevertArgs& a, const Io& io);
int RunSetStatus(const GlobalArgs& g, const SetStatusArgs& a, const Io& io);
int RunTag(const GlobalArgs& g, const TagArgs& a, const Io& io);
int RunTags(const GlobalArgs& g, const Io& io);
int RunGc(const GlobalArgs& g, const GcArgs& a, const Io& io);
int RunCompact(const GlobalArgs& g, const Io& io);
// Exit 2 when the library is damaged (see Library::Check).
int RunCheck(const GlobalArgs& g, const Io& io);
int RunVerify(const GlobalArgs& g, const VerifyArgs& a, const Io& io);
// Serves until SIGINT or SIGTERM; exit 0 after a clean stop.
int RunServe(const GlobalArgs& g, const ServeArgs& a, const Io& io);
// The in-process backbone of `kernelbench run --local-model DIR`: in
// skilldb-ml, the checkpoint at `dir` on `device` (errors name the flag);
// in skilldb, the command is handed over to skilldb-ml (returns only when
// that failed, saying where it looked).
Result<std::unique_ptr<llm::Backbone>> OpenLocalModel(const std::string& dir,
                                                      const std::string& device);

int RunKernelbench(const GlobalArgs& g, const KernelbenchArgs& a, const Io& io);
// kernelbench run (kernelbench_run_command.cc; NotSupported without the
// agents' modules), with the runner and evaluation options already made.
int RunKernelbenchRun(const GlobalArgs& g, const KernelbenchArgs& a,
                      const Io& io, const verify::kb::RunnerOptions& runner,
                      const verify::kb::EvalOptions& eval);
// export --sqlite (export_sqlite.cc)
int RunExportSqlite(const GlobalArgs& g, const ExportArgs& a, const Io& io);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_COMMANDS_H_
