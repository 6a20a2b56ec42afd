// RemoteLibrary: the Library interface over a skilldb server's HTTP API, so
// that an agent written against Library works unchanged when the library
// lives in `skilldb serve` on another machine.
//
//   auto lib = skilldb::server::OpenRemoteLibrary({.url = "http://host:8712"});
//   auto hits = (*lib)->Query(options, "shared memory tiling");
//
// What it serves: reads (info, get, scan, history, log, commits, diff,
// stats, queries and batches, audit, usage), usage recording (batched), and
// verified insertion through the server's durable queue. Proposals: Propose
// makes a RemoteProposal; its Duplicates asks the server; its Verify sends
// the candidate to the queue (a ReplayVerifier's report is sent to be
// replayed, any other verifier's request to be verified by the server's
// verifier, which owns the GPUs) and waits for the decision, so Verify
// returns the server's report and Commit the decision already made (or
// Aborted for a conflict). Direct writes (Put, Import, Delete, tags, gc,
// prune, compact, check) are NotSupported: a server takes skills only
// through verified insertion.
//
// Errors: the server's, with its status code (a JSON error body carries
// it); Unavailable when the server cannot be reached or answers 429/503
// past the retries; DeadlineExceeded past options.timeout_ms.
//
// Thread-safe: each call makes its own connection.
#ifndef SKILLDB_SERVER_REMOTE_LIBRARY_H_
#define SKILLDB_SERVER_REMOTE_LIBRARY_H_

#include <memory>
#include <string>

#include "skilldb/library.h"

namespace skilldb::server {

struct RemoteOptions {
  std::string url = "http://127.0.0.1:8712";  // http://host:port
  std::string token;                           // bearer token, "" = none
  int timeout_ms = 30000;  // per request. Default: 30 s.
  // How long a proposal's Verify waits for the queue's decision.
  // Default: 1 h.
  int proposal_timeout_ms = 3600000;
  // Retries of a request answered 429 or 503 (honouring Retry-After).
  // Default: 3.
  int retries = 3;
};

// Connects and reads the library's info. InvalidArgument for a malformed
// url; Unavailable when the server does not answer.
Result<std::unique_ptr<Library>> OpenRemoteLibrary(const RemoteOptions& options);

}  // namespace skilldb::server

#endif  // SKILLDB_SERVER_REMOTE_LIBRARY_H_
