// The skilldb server: one process owns a library, its durable proposal
// queue and the verifier, and serves any number of clients JSON over HTTP
// (cpp-httplib), a KernelGYM-compatible /evaluate, Prometheus metrics and a
// read-only web page. `skilldb serve` (cli/serve_command.cc) runs it; the
// routes are listed by GET /openapi.json.
//
//   ServerOptions options;
//   options.verifier = verifier.get();           // may be null
//   auto server = Server::Start(options, library);
//   ... (*server)->port() ...
//   (*server)->Stop();
//
// A Server is safe to use from several threads; Stop is idempotent.
#ifndef SKILLDB_SERVER_SERVER_H_
#define SKILLDB_SERVER_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/server/evaluation.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8712;  // 0 = any free port (see Server::port)
  // Bearer tokens (Authorization: Bearer T). Empty: no authentication.
  // Otherwise every write needs one, and reads too with auth_reads.
  std::vector<std::string> tokens;
  bool auth_reads = false;
  // Refuse every write (the library may still be open for writing).
  bool read_only = false;
  // HTTP worker threads: also the bound on connections served at once.
  // Default: 32.
  int threads = 32;
  // Requests handled at once past which new ones get 429. Default: 256.
  int max_in_flight = 256;
  // Request bodies larger than this get 413. Default: 8 MiB.
  size_t max_body_bytes = size_t{8} << 20;
  // Socket read and write timeouts, seconds. Default: 10.
  int io_timeout_s = 10;
  // Queries per POST /v1/search; hits per query are bounded by kMaxQueryK.
  // Default: 1024.
  size_t max_batch_queries = 1024;
  // Threads a batch search runs on (QueryBatch). Default: 2.
  int query_threads = 2;
  // Usage records per POST /v1/usage. Default: 100000.
  size_t max_usage_records = 100000;

  // The verifier for POST /v1/verify, queued proposals that ask for a
  // verification and /evaluate (unless `evaluation` is given). May be null.
  // REQUIRES: outlives the server.
  Verifier* verifier = nullptr;
  // Verifications run at once (the verifier's workers: one per GPU).
  // Default: 1.
  int verify_workers = 1;
  // Synchronous verifications (/v1/verify, /evaluate) waiting for a worker
  // past which new ones get 429 with Retry-After. Default: 64.
  int max_pending_verifications = 64;
  // Proposal queue workers (threads carrying out queued proposals).
  // Default: 1; 0 leaves the queue to another process.
  int proposal_workers = 1;
  // Queued (not final) proposals past which POST /v1/proposals gets 429.
  // Default: 10000.
  size_t max_queued_proposals = 10000;
  // Whether a proposal may bring a report recorded elsewhere (replayed)
  // instead of a verification to run here. Default: true.
  bool allow_replay = true;
  // The floor every proposal's policy is raised to (a client cannot ask
  // for a laxer one).
  VerificationPolicy min_policy;
  // Whether an accepted proposal may go in as an active skill (when its
  // client asks, the default of ProposalOptions). Default: false: every
  // skill committed through the server is a candidate, as the Summary
  // Agent commits its own (text no person has read yet); queries see
  // candidates unless they filter by status.
  bool accept_active = false;
  // KernelGYM's /evaluate. Null: MakeVerifierEvaluation(verifier,
  // evaluation_rounds).
  std::shared_ptr<Evaluation> evaluation;
  // Timing rounds of an /evaluate through the verifier (KernelGYM's
  // num_perf_trials are spread over them). Default: 3.
  int evaluation_rounds = 3;
  // KernelGYM task records kept for /status and /results (oldest dropped
  // first). Default: 100000.
  size_t max_evaluation_records = 100000;
  // With a read-only library: reopen it this often to see new commits
  // (0 = never). Needs `reopen`.
  int refresh_ms = 0;
  std::function<Result<std::unique_ptr<Library>>()> reopen;
  // Where request lines go (one per request), or null for none.
  std::function<void(const std::string& line)> log;
};

class Server {
 public:
  // Binds, starts the HTTP threads and the proposal workers, and returns.
  // InvalidArgument for bad options; Unavailable if the address cannot be
  // bound. REQUIRES: `library` outlives the server (and is replaced by
  // options.reopen's results when refreshing).
  static Result<std::unique_ptr<Server>> Start(
      const ServerOptions& options, std::shared_ptr<Library> library);
  virtual ~Server() = default;

  virtual int port() const = 0;
  // Stops accepting, finishes the requests and proposals in progress and
  // joins every thread. Idempotent.
  virtual void Stop() = 0;
  // Blocks until Stop (from another thread or a signal handler's helper).
  virtual void Wait() = 0;
};

// Reads a token file: one token per line; blank lines and lines starting
// with '#' are skipped. NotFound / IOError naming the file; InvalidArgument
// for a file with no token or a token shorter than 16 characters.
Result<std::vector<std::string>> ReadTokenFile(const std::string& path);

}  // namespace skilldb::server

#endif  // SKILLDB_SERVER_SERVER_H_
