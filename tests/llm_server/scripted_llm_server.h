// ScriptedLlmServer: a scripted protocol server for tests and benchmarks of
// everything that talks to an LLM over HTTP. It speaks the OpenAI-compatible
// protocol as vLLM serves it (the same endpoints and JSON shapes: chat and
// legacy completions with logprobs and echo, usage, /v1/models, Cohere-shape
// /v1/rerank and TEI's /rerank) but its answers come from a script: replies
// queued by tests (or read from a JSONL file by the scripted_llm_server
// executable), each matched to requests by endpoint and prompt substring,
// each able to answer well, slowly, with an error status and Retry-After,
// with malformed or truncated JSON, or by dropping the connection.
//
// It is not a model: a good answer's text is the reply's text, its tokens
// come from ScriptedTokenize and their logprobs from ScriptedTokenLogprob,
// so tests can compute what a client should read.
//
// A ScriptedLlmServer is safe for concurrent use: tests add replies and read
// the request log while the server's threads answer.
#ifndef SKILLDB_TESTS_LLM_SERVER_SCRIPTED_LLM_SERVER_H_
#define SKILLDB_TESTS_LLM_SERVER_SCRIPTED_LLM_SERVER_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scripted_protocol.h"
#include "skilldb/status.h"

namespace skilldb::scripted {

// A delay that grows with the work a real server would do. Each answer
// waits base_ms + prompt tokens x per_prompt_token_us + completion tokens x
// per_completion_token_us before it is sent (plus the reply's own delay).
struct LatencyModel {
  int base_ms = 0;
  int per_prompt_token_us = 0;
  int per_completion_token_us = 0;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;      // 0 = an ephemeral port (see port())
  int threads = 32;  // connections served at once
  // Keep connections open between requests (as vLLM does). Off by default
  // so that Stop() never waits for idle connections to time out.
  bool keep_alive = false;
  // The protocol's variations between servers (see ProtocolOptions).
  ProtocolOptions protocol;
  LatencyModel latency;
  // Answers a request no scripted reply matches. Default: a good answer
  // with the text "OK" (lexical-overlap scores for rerank).
  ScriptedReply default_reply;
  // Serve https with this PEM certificate and key (see
  // WriteSelfSignedCertificate). Default: "" (http).
  std::string tls_cert_path;
  std::string tls_key_path;
};

// One request as the server received it.
struct ReceivedRequest {
  std::string method;
  std::string path;
  Endpoint endpoint = Endpoint::kAny;          // kAny for an unknown path
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string prompt;   // the text replies are matched against
  int status = 0;       // what the server answered (0 while answering)
  uint64_t serial = 0;  // 1 for the first request, then 2, ...
  std::chrono::steady_clock::time_point arrived;
};

class ScriptedLlmServer {
 public:
  // Binds and starts serving on background threads. Errors: Unavailable
  // when the address cannot be bound, InvalidArgument for unusable TLS
  // files.
  static Result<std::unique_ptr<ScriptedLlmServer>> Start(
      const ServerOptions& options = ServerOptions());
  ~ScriptedLlmServer();  // Stop()s
  ScriptedLlmServer(const ScriptedLlmServer&) = delete;
  ScriptedLlmServer& operator=(const ScriptedLlmServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>/v1" (https with TLS): a client's base URL.
  std::string base_url() const;
  // "http://127.0.0.1:<port>": for endpoints at the root (TEI).
  std::string origin() const;

  // Queues `reply` behind those already queued. A request takes the first
  // queued reply that matches it; a reply is used up after `times` requests.
  void Add(ScriptedReply reply);
  void Add(std::vector<ScriptedReply> replies);
  void SetDefault(ScriptedReply reply);
  size_t PendingReplies() const;

  size_t RequestCount() const;
  size_t RequestCount(Endpoint endpoint) const;
  std::vector<ReceivedRequest> Requests() const;
  // The most requests the server was answering at one time.
  int MaxConcurrent() const;
  // Blocks until `count` requests have arrived or `timeout` passes; true
  // when they arrived.
  bool WaitForRequests(size_t count, std::chrono::milliseconds timeout) const;
  void ClearLog();

  // Stops listening and closes connections; requests in a delay are
  // answered at once. Later requests are refused (the server is gone).
  void Stop();

 private:
  struct Impl;
  explicit ScriptedLlmServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace skilldb::scripted

#endif  // SKILLDB_TESTS_LLM_SERVER_SCRIPTED_LLM_SERVER_H_
