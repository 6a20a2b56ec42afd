// scripted_llm_server: the scripted protocol server as a process, for shell
// tests and benchmarks. Replies come from a JSONL script (one
// ScriptedReply object per line, see scripted_protocol.h) and from POST
// /scripted/replies while it runs; GET /scripted/requests returns the
// request log. It prints "listening on <base URL>" once it accepts
// connections and runs until SIGINT or SIGTERM.
//
//   scripted_llm_server --script replies.jsonl --port-file port.txt
//       --latency-base-ms 20 --per-completion-token-us 8000   (one line)
//       [--max-model-len 1048576]
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "scripted_llm_server.h"
#include "self_signed_cert.h"

namespace {

using skilldb::scripted::ServerOptions;

int Fail(const std::string& message) {
  std::cerr << "scripted_llm_server: " << message << "\n";
  return 1;
}

// Blocks until SIGINT or SIGTERM (blocked before any thread starts, so the
// server's threads never take them).
void BlockStopSignals(sigset_t* set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, set, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  ServerOptions options;
  std::string script_path, port_file, default_text, self_signed_dir;
  CLI::App app{"A scripted protocol server speaking the OpenAI-compatible API"};
  app.add_option("--host", options.host, "address to bind")
      ->capture_default_str();
  app.add_option("--port", options.port, "port (0 = ephemeral)")
      ->capture_default_str();
  app.add_option("--model", options.protocol.model, "model name it serves")
      ->capture_default_str();
  app.add_option("--script", script_path, "JSONL file of scripted replies");
  app.add_option("--port-file", port_file, "write the bound port here");
  app.add_option("--default-text", default_text,
                 "text of the answer when no scripted reply matches");
  app.add_option("--threads", options.threads, "connections served at once")
      ->capture_default_str();
  app.add_option("--latency-base-ms", options.latency.base_ms,
                 "delay per answer");
  app.add_option("--per-prompt-token-us", options.latency.per_prompt_token_us,
                 "delay per prompt token");
  app.add_option("--per-completion-token-us",
                 options.latency.per_completion_token_us,
                 "delay per completion token");
  app.add_flag("--keep-alive", options.keep_alive, "keep connections open");
  app.add_option("--max-model-len", options.protocol.max_model_len,
                 "context length in the answers' tokens (longer prompts: 400)")
      ->capture_default_str();
  bool no_echo = false, no_top_k = false, no_n = false;
  app.add_flag("--no-echo", no_echo, "refuse echo (as hosted APIs do)");
  app.add_flag("--no-top-k", no_top_k, "refuse top_k (as OpenAI does)");
  app.add_flag("--no-n", no_n, "ignore n > 1");
  app.add_flag("--bos", options.protocol.bos_token,
               "list a BOS in echoes (vLLM)");
  app.add_option("--tls-cert", options.tls_cert_path,
                 "serve https with this PEM cert");
  app.add_option("--tls-key", options.tls_key_path, "and this PEM key");
  app.add_option(
      "--tls-self-signed", self_signed_dir,
      "serve https with a new self-signed cert written to DIR/cert.pem");
  CLI11_PARSE(app, argc, argv);
  options.protocol.echo_supported = !no_echo;
  options.protocol.top_k_supported = !no_top_k;
  options.protocol.n_supported = !no_n;
  if (!default_text.empty()) options.default_reply.texts = {default_text};
  if (!self_signed_dir.empty()) {
    options.tls_cert_path = self_signed_dir + "/cert.pem";
    options.tls_key_path = self_signed_dir + "/key.pem";
    auto s = skilldb::scripted::WriteSelfSignedCertificate(
        options.tls_cert_path, options.tls_key_path);
    if (!s.ok()) return Fail(s.ToString());
  }
  std::vector<skilldb::scripted::ScriptedReply> replies;
  if (!script_path.empty()) {
    std::ifstream in(script_path);
    if (!in) return Fail("cannot read " + script_path);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = skilldb::scripted::ParseScript(text.str());
    if (!parsed.ok())
      return Fail(script_path + ": " + parsed.status().ToString());
    replies = std::move(parsed).value();
  }
  sigset_t stop_signals;
  BlockStopSignals(&stop_signals);
  auto server = skilldb::scripted::ScriptedLlmServer::Start(options);
  if (!server.ok()) return Fail(server.status().ToString());
  (*server)->Add(std::move(replies));
  if (!port_file.empty()) {
    std::ofstream(port_file) << (*server)->port() << "\n";
  }
  std::cout << "listening on " << (*server)->base_url() << std::endl;
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  (*server)->Stop();
  std::cout << "stopped after " << (*server)->RequestCount() << " requests"
            << std::endl;
  return 0;
}
