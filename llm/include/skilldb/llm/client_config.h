// ClientConfig: where an OpenAI-compatible server is and how to talk to it
// (timeouts, retries, the concurrency limit, TLS, what the server accepts),
// and ResolveClientConfig, the one function that fills it from command-line
// flags and the environment.
//
// These are plain values: safe to copy and to share read-only between
// threads. ResolveClientConfig reads the environment only through the lookup
// it is given.
#ifndef SKILLDB_LLM_CLIENT_CONFIG_H_
#define SKILLDB_LLM_CLIENT_CONFIG_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::llm {

// When and how often a request is tried again. A request is retried on HTTP
// 408, 429 and 5xx answers, on connection errors (refused, reset, dropped
// mid-answer) and, if retry_on_timeout, on timeouts. The wait before retry k
// (k = 0, 1, ...) is min(max_backoff_ms, initial_backoff_ms * 2^k) scaled by
// a uniform factor in [1 - jitter, 1], unless the server said how long to
// wait (Retry-After in seconds or as an HTTP-date, or OpenAI's
// retry-after-ms) and that is at most max_retry_after_ms: then exactly that.
struct RetryOptions {
  // Retries after the first attempt (0 = try once). Default: 3.
  int max_retries = 3;
  int initial_backoff_ms = 500;  // Default: 500.
  int max_backoff_ms = 8000;     // Default: 8000.
  // Fraction of the backoff removed at random, in [0, 1]. Default: 0.5.
  double jitter = 0.5;
  // Longest server-requested wait that is honoured; a longer Retry-After
  // falls back to the exponential backoff. Default: 60000.
  int max_retry_after_ms = 60000;
  bool retry_on_timeout = true;  // Default: true.
  // Seeds the jitter; 0 = seeded from std::random_device. Default: 0.
  uint64_t jitter_seed = 0;
  // How the client waits between attempts. Tests record the waits instead
  // of sleeping. Must be safe to call from several threads at once.
  // Default (empty): std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep_for;
};

// The chat templates the client can apply itself (only Score needs one: the
// /v1/completions endpoint takes raw text). Each must match the template the
// server's model uses, or scores are of a differently formatted prompt.
//   "chatml"  Qwen2 / Qwen2.5 / Qwen3 style: <|im_start|>role\n...<|im_end|>\n
//   "llama3"  Llama 3:
//   <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
//             (without <|begin_of_text|>: servers add BOS to completions)
//   "plain"   "role: content\n" lines, then "assistant: " (base models)
// "" = none: Score returns NotSupported.

struct ClientConfig {
  // The API root, e.g. "http://localhost:8000/v1" or
  // "https://api.openai.com/v1": endpoints are appended to it
  // ("/chat/completions"). A URL without a path gets "/v1". Scheme http or
  // https. Default: "http://localhost:8000/v1" (vLLM's default port).
  std::string base_url = "http://localhost:8000/v1";
  // The model to request. "" = the first model the server lists at
  // /v1/models (asked once, on the first request). Default: "".
  std::string model;
  // Sent as "Authorization: Bearer <api_key>" when non-empty. Never
  // handed on: a key of 8 bytes or more that a server echoes (in an error
  // body, in generated text) is replaced by "[redacted]" before any
  // message, answer or stored record sees it. Default: "".
  std::string api_key;

  int connect_timeout_ms = 10000;  // Default: 10000.
  // Longest silence while waiting for or reading an answer (a generation
  // is one wait: set it above the longest generation). Default: 600000.
  int read_timeout_ms = 600000;
  int write_timeout_ms = 60000;  // Default: 60000.
  // Longest a request may take in all: every attempt, every wait between
  // attempts and every byte of the answer (a server that drips bytes never
  // trips read_timeout_ms). A retry that would start after it is not made.
  // Default: 900000 (15 min; the CLI's query and check set less).
  int request_timeout_ms = 900000;
  // Called (from the transport's threads) when a request has waited 10 s
  // more for its answer, and before each retry, with a line saying what
  // it waits for ("waiting for POST http://...: 20.0 s so far"). The CLI
  // prints it on stderr. Must be safe to call from several threads.
  // Default: empty (silent).
  std::function<void(std::string_view)> on_wait;
  RetryOptions retry;
  // Requests this client has in flight at most; further callers wait for a
  // slot (a backoff wait does not hold one). >= 1. Default: 8.
  int max_in_flight = 8;
  // Larger answers are refused (InvalidArgument) without reading further:
  // server answers are untrusted. Each request also bounds its answer by
  // what it asked for (a chat answer of n samples of max_tokens tokens;
  // see llm/README.md), which is far smaller for most. Default: 64 MiB.
  size_t max_response_bytes = size_t{64} << 20;

  // TLS (https only). A PEM file of CA certificates to trust instead of the
  // system store. Default: "" (the system store).
  std::string ca_cert_path;
  bool verify_tls = true;  // Verify the server's certificate. Default: true.

  // What the server accepts (see llm/README.md for each server).
  // Send top_k when SamplingOptions::top_k > 0 (vLLM, SGLang and llama.cpp
  // take it; OpenAI's API rejects it: set false there, and top_k is then
  // ignored). Default: true.
  bool send_top_k = true;
  // The server honours n > 1 in one request. When false, n samples are n
  // requests of n = 1 (seeds seed, seed + 1, ... when a seed is set).
  // Default: true.
  bool native_n = true;
  // Ask for token ids ("return_token_ids": true, vLLM >= 0.10.2); they are
  // read whenever an answer carries them. Default: false.
  bool request_token_ids = false;
  // The chat template Score applies (see above). Default: "".
  std::string chat_template;
  // max_tokens of a scoring request: 1 works everywhere; vLLM versions that
  // accept 0 with echo save one decoding step. Default: 1.
  int score_max_tokens = 1;
};

// The parts of a base URL. Returned by ParseBaseUrl.
struct BaseUrl {
  std::string scheme;  // "http" | "https"
  std::string host;    // without brackets for IPv6
  int port = 0;        // explicit or the scheme's default
  std::string path;    // "/v1": no trailing slash, "/v1" when none given
  bool path_given = false;  // the URL had a path of its own
  // "scheme://host:port" as the HTTP library wants it.
  std::string Origin() const;
};

// Splits `url` ("https://host[:port][/path]"). Errors: InvalidArgument for
// another scheme, no host, a bad port, or a query or fragment.
Result<BaseUrl> ParseBaseUrl(std::string_view url);

// Checks the ranges of every field (timeouts > 0, max_in_flight >= 1, ...).
// Errors: InvalidArgument naming the field.
Status ValidateClientConfig(const ClientConfig& config);

// What the CLI's --llm-* options gave (unset = not given).
struct ClientFlags {
  std::optional<std::string> url;
  std::optional<std::string> model;
  std::optional<std::string> key;
  std::optional<double> timeout_s;  // --llm-timeout: request_timeout_ms
  std::optional<int> retries;       // --llm-retries: retry.max_retries
  std::optional<bool> native_n;     // --llm-native-n
};

// Returns a variable's value, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Reads the process environment (std::getenv).
EnvLookup ProcessEnvironment();

// Builds the client configuration: each setting comes from the first of
// these that is set and non-empty:
//   url:      flags.url,       SKILLDB_LLM_URL, OPENAI_BASE_URL, base's
//   model:    flags.model,     SKILLDB_LLM_MODEL, base's ("" = the
//             server's first model)
//   key:      flags.key,       SKILLDB_LLM_KEY, OPENAI_API_KEY, base's
//   timeout:  flags.timeout_s, SKILLDB_LLM_TIMEOUT (seconds, > 0), base's
//   retries:  flags.retries,   SKILLDB_LLM_RETRIES (0..20), base's
//   native_n: flags.native_n,  SKILLDB_LLM_NATIVE_N (1/0, true/false),
//             base's
// Every other field keeps the value in `base`. Errors: InvalidArgument when
// the chosen URL does not parse or a value is out of range, naming where it
// came from.
Result<ClientConfig> ResolveClientConfig(
    const ClientFlags& flags, const EnvLookup& env = ProcessEnvironment(),
    const ClientConfig& base = ClientConfig());

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_CLIENT_CONFIG_H_
