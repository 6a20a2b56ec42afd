// The scripted protocol server's vocabulary and its answers: which endpoint
// a request is for, what a scripted reply says, the tokenizer its answers
// use, and the JSON bodies it writes (the shapes vLLM serves). Pure
// functions: safe to call from any thread.
#ifndef SKILLDB_TESTS_LLM_SERVER_SCRIPTED_PROTOCOL_H_
#define SKILLDB_TESTS_LLM_SERVER_SCRIPTED_PROTOCOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::scripted {

enum class Endpoint {
  kAny,          // in a reply: chat, completions and both reranks
  kChat,         // POST /v1/chat/completions
  kCompletions,  // POST /v1/completions
  kModels,       // GET /v1/models
  kRerank,       // POST /v1/rerank, /rerank, /v2/rerank with "documents"
  kTeiRerank,    // POST /rerank with "texts"
};
// "any", "chat", "completions", "models", "rerank", "tei_rerank".
std::string_view EndpointName(Endpoint endpoint);
std::optional<Endpoint> EndpointFromName(std::string_view name);

// How the answer's bytes reach the client.
enum class Delivery {
  kWhole,      // the body, whole
  kTruncated,  // the first truncate_at bytes, as a complete HTTP answer
  kDropped,    // Content-Length of the whole body, truncate_at bytes, then
               // the connection is closed (a server dying mid-answer)
  kDrip,       // the whole body, drip_bytes at a time every drip_interval_ms
               // (a server that never goes silent long enough for a read
               // timeout, yet never finishes)
};

// One scripted reply: which requests it answers and how.
struct ScriptedReply {
  // Matching. Endpoint::kAny never answers /v1/models.
  Endpoint endpoint = Endpoint::kAny;
  // A substring of the request's prompt text ("" = any): chat: the message
  // contents joined by "\n"; completions: the prompt; rerank: the query.
  std::string prompt_contains;
  int times = 1;  // requests it answers; -1 = every matching request

  // The answer.
  int status = 200;
  std::map<std::string, std::string> headers;  // e.g. {"Retry-After", "1"}
  // Completion texts, one per choice (cycled when n exceeds them). A good
  // answer applies the request's stop strings and max_tokens to them.
  // Default: {"OK"}.
  std::vector<std::string> texts = {"OK"};
  // Each "{{serial}}" in a text becomes "REQUEST.CHOICE" (the request's
  // serial number and the choice's index): every answer distinct, as a
  // model's are (benchmarks that must not hit a build cache).
  bool numbered = false;
  uint64_t request_serial = 0;  // set by the server for the request answered
  std::string finish_reason;  // "" = "stop" or "length" as computed
  // The logprob of every sampled token. Default: ScriptedTokenLogprob's.
  std::optional<double> token_logprob;
  // Alternatives listed at every position after the sampled token (best
  // first), before "<alt1>", "<alt2>", ... placeholders fill top_logprobs:
  // e.g. {{"no", -2.3}} behind a sampled "yes". Default: none.
  std::map<std::string, double> alternatives;
  // Rerank: a score per document. Default (empty): the fraction of the
  // query's words found in the document.
  std::vector<double> scores;
  // Sent verbatim instead of a generated body (malformed JSON, missing
  // fields, wrong types, error bodies). A non-2xx status without a body
  // gets an OpenAI-style {"error": {...}} body.
  std::optional<std::string> body;
  std::string content_type = "application/json";
  bool omit_usage = false;  // leave "usage" out of a generated body
  Delivery delivery = Delivery::kWhole;
  size_t truncate_at = 0;  // bytes sent for kTruncated and kDropped
  size_t drip_bytes = 1;   // kDrip: bytes per write
  int drip_interval_ms = 0;  // kDrip: wait before each write
  int delay_ms = 0;        // wait before answering
};

// Replies for tests.
ScriptedReply TextReply(std::vector<std::string> texts);
ScriptedReply StatusReply(int status,
                          std::map<std::string, std::string> headers = {});
ScriptedReply RawReply(int status, std::string body);

// How servers differ; the scripted server can play each.
struct ProtocolOptions {
  std::string model = "scripted-model";
  int max_model_len = 4096;
  bool check_model = true;      // 404 for another model name (vLLM does)
  bool echo_supported = true;   // false: 400 for echo (hosted APIs)
  bool top_k_supported = true;  // false: 400 for top_k (OpenAI)
  bool n_supported = true;      // false: n is ignored, one choice returned
  // Echoes and prompt_token_ids begin with "<s>" (id 1), a BOS the echoed
  // text does not contain, as vLLM lists Llama's.
  bool bos_token = false;
};

// The tokenizer of the scripted answers: a run of letters, digits and
// non-ASCII bytes with at most one leading space, a single other
// character, or a run of whitespace. The tokens spell the text exactly.
std::vector<std::string> ScriptedTokenize(std::string_view text);
int32_t ScriptedTokenId(std::string_view token);  // in [100, 50100)
// A token's logprob in the answers: deterministic, in [-2.0, -0.01].
double ScriptedTokenLogprob(std::string_view token);
// The prompt text of a chat as the scripted server templates it (ChatML).
std::string ScriptedChatPrompt(
    const std::vector<std::pair<std::string, std::string>>& messages);

// The text a request is matched against (see prompt_contains); "" when the
// body is not a request of that endpoint.
std::string MatchText(Endpoint endpoint, std::string_view body);

// What the server answers, before delivery and delays.
struct Answer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::map<std::string, std::string> headers;
  size_t prompt_tokens = 0;
  size_t completion_tokens = 0;
};

// The answer to `body` at `endpoint` under `reply`: a good answer built
// from the request (validated as vLLM validates it: 400 for a malformed
// request, 404 for an unknown model) when the reply has status 200 and no
// body; otherwise the reply's status and body. `serial` numbers ids.
Answer Respond(Endpoint endpoint, std::string_view body,
               const ScriptedReply& reply, const ProtocolOptions& options,
               uint64_t serial);

// Reads one reply from a JSON object: {"endpoint", "prompt_contains",
// "times", "status", "headers", "texts" (or "text"), "finish_reason",
// "token_logprob", "alternatives", "scores", "body", "content_type",
// "omit_usage", "delivery" ("whole" | "truncated" | "dropped"), "truncate_at",
// "delay_ms"}, each optional. Errors: InvalidArgument for bad JSON, an unknown
// key or a wrong type.
Result<ScriptedReply> ReplyFromJson(std::string_view json_text);
// Reads a JSONL script (blank lines and lines starting with '#' skipped).
// Errors: InvalidArgument naming the line.
Result<std::vector<ScriptedReply>> ParseScript(std::string_view jsonl);

}  // namespace skilldb::scripted

#endif  // SKILLDB_TESTS_LLM_SERVER_SCRIPTED_PROTOCOL_H_
