// skilldb serve: one process owns the library, its proposal queue and the
// verifier, and serves them over HTTP (server/include/skilldb/server).
#include <signal.h>

#include "context.h"
#include "numbers.h"
#include "skilldb/server/server.h"
#include "skilldb/verify/verify.h"

namespace skilldb::cli {
namespace {

// "HOST:PORT" (IPv4 or a name; [v6]:PORT). InvalidArgument otherwise.
Status ParseListen(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument("--listen '" + listen +
                                   "' is not HOST:PORT (e.g. 127.0.0.1:8712)");
  }
  *host = listen.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  auto p = ParseSignedArg("--listen port", listen.substr(colon + 1),
                          IntRange{0, 65535});
  if (!p.ok()) return p.status();
  *port = static_cast<int>(*p);
  return Status::Ok();
}

// The verifier --verifier asks for: cuda, host, none, or auto (cuda where a
// GPU answers, else host). Null for none.
Result<std::unique_ptr<verify::TaskVerifier>> OpenVerifier(
    const ServeArgs& a, const Io& io) {
  if (a.verifier == "none") return std::unique_ptr<verify::TaskVerifier>();
  auto make = [&](verify::Backend backend) {
    verify::VerifierOptions options = verify::DefaultOptions(backend);
    if (backend == verify::Backend::kHost) {
      options.host_workers = a.gpu_workers;
    } else {
      options.devices.clear();
      for (int d = 0; d < a.gpu_workers; ++d) options.devices.push_back(d);
    }
    return verify::MakeVerifier(options);
  };
  if (a.verifier == "cuda") return make(verify::Backend::kCuda);
  if (a.verifier == "host") return make(verify::Backend::kHost);
  auto cuda = make(verify::Backend::kCuda);
  if (cuda.ok()) return cuda;
  *io.err << "skilldb: no CUDA verifier here ("
          << EscapeLine(cuda.status().message())
          << "); using the host verifier\n";
  return make(verify::Backend::kHost);
}

}  // namespace

int RunServe(const GlobalArgs& g, const ServeArgs& a, const Io& io) {
  server::ServerOptions options;
  Status listen = ParseListen(a.listen, &options.host, &options.port);
  if (!listen.ok()) return Fail(g, io, listen);
  auto policy = ParsePolicy(a.policy);
  if (!policy.ok()) return Fail(g, io, policy.status());
  options.min_policy = *policy;
  if (!a.token_file.empty()) {
    auto tokens = server::ReadTokenFile(a.token_file);
    if (!tokens.ok()) return Fail(g, io, tokens.status());
    options.tokens = *tokens;
  }
  options.auth_reads = a.auth_reads;
  options.read_only = a.read_only;
  options.threads = a.threads;
  options.max_body_bytes = static_cast<size_t>(a.max_body_mb) << 20;
  options.allow_replay = !a.no_replay;
  options.accept_active = a.accept_active;
  options.verify_workers = a.gpu_workers;
  options.evaluation_rounds = a.eval_rounds;
  options.proposal_workers =
      a.read_only ? 0 : (a.queue_workers >= 0 ? a.queue_workers : a.gpu_workers);
  if (!a.quiet) {
    std::ostream* err = io.err;
    options.log = [err](const std::string& line) {
      *err << "skilldb serve: " << EscapeLine(line) << "\n";
    };
  }

  auto library = OpenLibrary(g, a.read_only, io);
  if (!library.ok()) return Fail(g, io, library.status());
  std::shared_ptr<Library> shared = std::move(library).value();
  if (a.read_only && a.refresh_ms > 0) {
    options.refresh_ms = a.refresh_ms;
    const Io quiet{io.out, io.err, io.in};
    options.reopen = [global = g, quiet]() {
      return OpenLibrary(global, /*read_only=*/true, quiet);
    };
  }
  std::unique_ptr<verify::TaskVerifier> verifier;
  if (!a.read_only) {
    auto v = OpenVerifier(a, io);
    if (!v.ok()) return Fail(g, io, v.status());
    verifier = std::move(v).value();
    options.verifier = verifier.get();
  }

  // SIGINT and SIGTERM are taken by sigwait below, in this thread only:
  // every thread the server starts inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto server = server::Server::Start(options, shared);
  if (!server.ok()) return Fail(g, io, server.status());
  const std::string url =
      "http://" + options.host + ":" + std::to_string((*server)->port());
  if (g.json) {
    // One line: a supervisor (or a test) reads the port from it.
    *io.out << Json{{"url", url},
                    {"port", (*server)->port()},
                    {"version", shared->CurrentVersion()},
                    {"read_only", a.read_only},
                    {"verifier", verifier ? Json(std::string(verifier->Name()))
                                          : Json(nullptr)}}
                   .dump()
            << "\n";
  } else {
    *io.out << "serving " << EscapeLine(shared->Info().path) << " at " << url
            << " (verifier: "
            << (verifier ? std::string(verifier->Name()) : std::string("none"))
            << "; web page " << url << "/ui)\n";
  }
  io.out->flush();
  int signal = 0;
  sigwait(&signals, &signal);
  *io.err << "skilldb serve: stopping (signal " << signal << ")\n";
  (*server)->Stop();
  return kExitOk;
}

}  // namespace skilldb::cli
