#include "skilldb/llm/client_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace skilldb::llm {
namespace {

Status BadUrl(std::string_view url, std::string_view why) {
  return Status::InvalidArgument("base URL '" + std::string(url) +
                                 "': " + std::string(why));
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
         c == '_';
}

// Splits "host[:port]" (host may be "[v6]") into its parts.
Status ParseAuthority(std::string_view url, std::string_view authority,
                      BaseUrl* out) {
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "unclosed '['");
    out->host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return BadUrl(url, "junk after ']'");
      port_text = rest.substr(1);
      has_port = true;
    }
    for (char c : out->host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':') {
        return BadUrl(url, "bad IPv6 address");
      }
    }
  } else {
    const size_t colon = authority.find(':');
    out->host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    for (char c : out->host) {
      if (!IsHostChar(c)) return BadUrl(url, "bad character in host");
    }
  }
  if (out->host.empty()) return BadUrl(url, "no host");
  if (has_port) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(),
                                     port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() ||
        port < 1 || port > 65535) {
      return BadUrl(url, "bad port");
    }
    out->port = port;
  }
  return Status::Ok();
}

std::optional<std::string> NonEmpty(const std::optional<std::string>& v) {
  if (v && !v->empty()) return v;
  return std::nullopt;
}

// The first set, non-empty value among the flag and the variables, with the
// name of where it came from (for error messages).
struct Chosen {
  std::optional<std::string> value;
  std::string source;
};
Chosen Choose(const std::optional<std::string>& flag,
              std::string_view flag_name, const EnvLookup& env,
              std::initializer_list<const char*> variables) {
  if (auto v = NonEmpty(flag)) return {v, std::string(flag_name)};
  for (const char* name : variables) {
    if (auto v = NonEmpty(env ? env(name) : std::nullopt)) return {v, name};
  }
  return {std::nullopt, ""};
}

Status Positive(int value, std::string_view field) {
  if (value > 0) return Status::Ok();
  return Status::InvalidArgument("client config: " + std::string(field) +
                                 " must be > 0, got " + std::to_string(value));
}

// A number from the environment: the whole text, in [lo, hi].
Result<double> EnvNumber(const std::string& text, const char* name, double lo,
                         double hi) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(v) || v < lo || v > hi) {
    return Status::InvalidArgument(std::string(name) + " is '" + text +
                                   "'; it must be a number between " +
                                   std::to_string(static_cast<int64_t>(lo)) +
                                   " and " +
                                   std::to_string(static_cast<int64_t>(hi)));
  }
  return v;
}

Result<bool> EnvBool(const std::string& text, const char* name) {
  if (text == "1" || text == "true" || text == "yes") return true;
  if (text == "0" || text == "false" || text == "no") return false;
  return Status::InvalidArgument(std::string(name) + " is '" + text +
                                 "'; it must be 1 or 0 (true or false)");
}

constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;
constexpr int kMaxRetries = 20;

Status ResolveNumbers(const ClientFlags& flags, const EnvLookup& env,
                      ClientConfig* config) {
  auto var = [&](const char* name) {
    return NonEmpty(env ? env(name) : std::nullopt);
  };
  std::optional<double> timeout_s = flags.timeout_s;
  if (!timeout_s) {
    if (auto v = var("SKILLDB_LLM_TIMEOUT")) {
      SKILLDB_ASSIGN_OR_RETURN(
          timeout_s, EnvNumber(*v, "SKILLDB_LLM_TIMEOUT", 0, kMaxTimeoutS));
    }
  }
  if (timeout_s) {
    if (!(*timeout_s > 0) || *timeout_s > kMaxTimeoutS) {
      return Status::InvalidArgument(
          "--llm-timeout must be between 0 and " +
          std::to_string(static_cast<int>(kMaxTimeoutS)) + " seconds");
    }
    config->request_timeout_ms =
        std::max(1, static_cast<int>(*timeout_s * 1000));
  }
  std::optional<int> retries = flags.retries;
  if (!retries) {
    if (auto v = var("SKILLDB_LLM_RETRIES")) {
      SKILLDB_ASSIGN_OR_RETURN(
          double r, EnvNumber(*v, "SKILLDB_LLM_RETRIES", 0, kMaxRetries));
      if (r != static_cast<int>(r)) {
        return Status::InvalidArgument("SKILLDB_LLM_RETRIES must be a whole "
                                       "number");
      }
      retries = static_cast<int>(r);
    }
  }
  if (retries) {
    if (*retries < 0 || *retries > kMaxRetries) {
      return Status::InvalidArgument("--llm-retries must be between 0 and " +
                                     std::to_string(kMaxRetries));
    }
    config->retry.max_retries = *retries;
  }
  std::optional<bool> native_n = flags.native_n;
  if (!native_n) {
    if (auto v = var("SKILLDB_LLM_NATIVE_N")) {
      SKILLDB_ASSIGN_OR_RETURN(native_n, EnvBool(*v, "SKILLDB_LLM_NATIVE_N"));
    }
  }
  if (native_n) config->native_n = *native_n;
  return Status::Ok();
}

}  // namespace

std::string BaseUrl::Origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Result<BaseUrl> ParseBaseUrl(std::string_view url) {
  BaseUrl out;
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return BadUrl(url, "no scheme");
  for (char c : url.substr(0, sep)) {
    out.scheme +=
        static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.scheme == "http") {
    out.port = 80;
  } else if (out.scheme == "https") {
    out.port = 443;
  } else {
    return BadUrl(url, "scheme must be http or https");
  }
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return BadUrl(url, "no query or fragment allowed");
  }
  if (rest.find('@') != std::string_view::npos) {
    return BadUrl(url, "no credentials in the URL (use the API key)");
  }
  const size_t slash = rest.find('/');
  SKILLDB_RETURN_IF_ERROR(ParseAuthority(url, rest.substr(0, slash), &out));
  std::string path =
      slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!path.empty() && path.back() == '/') path.pop_back();
  out.path_given = !path.empty();
  out.path = path.empty() ? "/v1" : path;
  return out;
}

Status ValidateClientConfig(const ClientConfig& c) {
  if (auto url = ParseBaseUrl(c.base_url); !url.ok()) return url.status();
  SKILLDB_RETURN_IF_ERROR(Positive(c.connect_timeout_ms, "connect_timeout_ms"));
  SKILLDB_RETURN_IF_ERROR(Positive(c.read_timeout_ms, "read_timeout_ms"));
  SKILLDB_RETURN_IF_ERROR(Positive(c.write_timeout_ms, "write_timeout_ms"));
  SKILLDB_RETURN_IF_ERROR(
      Positive(c.request_timeout_ms, "request_timeout_ms"));
  SKILLDB_RETURN_IF_ERROR(Positive(c.max_in_flight, "max_in_flight"));
  SKILLDB_RETURN_IF_ERROR(
      Positive(c.retry.initial_backoff_ms, "retry.initial_backoff_ms"));
  SKILLDB_RETURN_IF_ERROR(
      Positive(c.retry.max_backoff_ms, "retry.max_backoff_ms"));
  if (c.retry.max_retries < 0) {
    return Status::InvalidArgument("client config: retry.max_retries < 0");
  }
  if (c.retry.max_retry_after_ms < 0) {
    return Status::InvalidArgument(
        "client config: retry.max_retry_after_ms < 0");
  }
  if (!(c.retry.jitter >= 0.0 && c.retry.jitter <= 1.0)) {
    return Status::InvalidArgument("client config: retry.jitter not in [0, 1]");
  }
  if (c.max_response_bytes == 0) {
    return Status::InvalidArgument("client config: max_response_bytes is 0");
  }
  if (c.score_max_tokens < 0) {
    return Status::InvalidArgument("client config: score_max_tokens < 0");
  }
  return Status::Ok();
}

EnvLookup ProcessEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<ClientConfig> ResolveClientConfig(const ClientFlags& flags,
                                         const EnvLookup& env,
                                         const ClientConfig& base) {
  ClientConfig config = base;
  Chosen url = Choose(flags.url, "--llm-url", env,
                      {"SKILLDB_LLM_URL", "OPENAI_BASE_URL"});
  Chosen model = Choose(flags.model, "--llm-model", env, {"SKILLDB_LLM_MODEL"});
  Chosen key = Choose(flags.key, "--llm-key", env,
                      {"SKILLDB_LLM_KEY", "OPENAI_API_KEY"});
  if (url.value) config.base_url = *url.value;
  if (model.value) config.model = *model.value;
  if (key.value) config.api_key = *key.value;
  SKILLDB_RETURN_IF_ERROR(ResolveNumbers(flags, env, &config));
  if (auto parsed = ParseBaseUrl(config.base_url); !parsed.ok()) {
    return parsed.status().WithContext(url.source.empty() ? "default base URL"
                                                          : url.source);
  }
  return config;
}

}  // namespace skilldb::llm
