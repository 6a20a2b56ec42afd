// https against the scripted protocol server behind cpp-httplib's
// SSLServer, with a self-signed certificate made at test time.
#include <stdlib.h>

#include <filesystem>

#include "llm_test_util.h"
#include "self_signed_cert.h"

namespace skilldb::llm::testing {
namespace {

// A fresh directory holding cert.pem and key.pem; removed afterwards.
struct TempCert {
  TempCert() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "skilldb-tls-XXXXXX")
            .string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    cert = dir + "/cert.pem";
    key = dir + "/key.pem";
    REQUIRE(scripted::WriteSelfSignedCertificate(cert, key).ok());
  }
  ~TempCert() { std::filesystem::remove_all(dir); }
  std::string dir, cert, key;
};

std::unique_ptr<ScriptedLlmServer> StartTlsServer(const TempCert& tls) {
  ServerOptions options;
  options.tls_cert_path = tls.cert;
  options.tls_key_path = tls.key;
  return StartServer(options);
}

TEST_CASE("the client talks https to a server whose certificate it trusts") {
  TempCert tls;
  auto server = StartTlsServer(tls);
  server->Add(scripted::TextReply({"over TLS"}));
  REQUIRE(server->base_url().rfind("https://", 0) == 0);
  ClientConfig config = ConfigFor(*server);
  config.ca_cert_path = tls.cert;
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  REQUIRE(r.ok());
  CHECK((*r)[0].samples[0].text == "over TLS");
  CHECK(server->Requests()[0].headers.at("authorization") ==
        "Bearer sk-scripted");
}

TEST_CASE("an untrusted certificate fails without retries or a request") {
  TempCert tls;
  auto server = StartTlsServer(tls);
  ClientConfig config = ConfigFor(*server);  // the system store: not trusted
  config.retry.max_retries = 3;
  auto client = ClientFor(config);
  auto r = client->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kUnavailable);
  CHECK(client->Stats().attempts == 1);
  CHECK(server->RequestCount() == 0);
}

TEST_CASE("verification can be turned off for a self-signed server") {
  TempCert tls;
  auto server = StartTlsServer(tls);
  ClientConfig config = ConfigFor(*server);
  config.verify_tls = false;
  CHECK(ClientFor(config)->Generate(OnePrompt(), Greedy()).ok());
}

TEST_CASE("an unreadable CA file is refused when the client is made") {
  ClientConfig config;
  config.base_url = "https://127.0.0.1:1/v1";
  config.ca_cert_path = "/nonexistent/ca.pem";
  CHECK(OpenAiClient::Create(config).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::llm::testing
