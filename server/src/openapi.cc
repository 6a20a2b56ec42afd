// The OpenAPI description, built once. Bodies are described by the API
// layer's codecs (skilldb/json.h), named here as schemas with their main
// members; KernelGYM's routes carry KernelGYM's models.
#include "openapi.h"

#include <nlohmann/json.hpp>

namespace skilldb::server::internal {
namespace {

using OJson = nlohmann::ordered_json;

OJson Ref(const std::string& schema) {
  return OJson{{"$ref", "#/components/schemas/" + schema}};
}

OJson JsonBody(const OJson& schema) {
  return OJson{{"content", {{"application/json", {{"schema", schema}}}}}};
}

OJson Reply(const std::string& description, const OJson& schema) {
  OJson r{{"description", description}};
  if (!schema.is_null()) r.update(JsonBody(schema));
  return r;
}

OJson Param(const std::string& name, const std::string& in,
           const std::string& type, const std::string& description) {
  return OJson{{"name", name},
              {"in", in},
              {"required", in == "path"},
              {"description", description},
              {"schema", {{"type", type}}}};
}

OJson Errors() {
  return OJson{{"400", Reply("bad request", Ref("Error"))},
              {"401", Reply("a token is needed", Ref("Error"))},
              {"404", Reply("not found", Ref("Error"))},
              {"429", Reply("too busy; see Retry-After", Ref("Error"))},
              {"500", Reply("internal error", Ref("Error"))}};
}

OJson Op(const std::string& summary, const OJson& params, const OJson& body,
        const std::string& code, const OJson& reply, bool write) {
  OJson op{{"summary", summary}};
  if (!params.empty()) op["parameters"] = params;
  if (!body.is_null()) op["requestBody"] = JsonBody(body);
  OJson responses = Errors();
  responses[code] = Reply("ok", reply);
  op["responses"] = responses;
  if (write) op["security"] = OJson::array({OJson{{"bearer", OJson::array()}}});
  return op;
}

OJson Object(std::initializer_list<std::pair<const char*, const char*>> props) {
  OJson p = OJson::object();
  for (const auto& [name, type] : props) {
    if (std::string(type).starts_with("#")) {
      p[name] = OJson{{"$ref", std::string("#/components/schemas/") +
                                  (type + 1)}};
    } else if (std::string(type) == "array") {
      p[name] = OJson{{"type", "array"}, {"items", OJson::object()}};
    } else {
      p[name] = OJson{{"type", type}};
    }
  }
  return OJson{{"type", "object"}, {"properties", p}};
}

OJson Schemas() {
  OJson s;
  s["Error"] = Object({{"error", "object"}});
  s["Skill"] = Object({{"id", "string"},
                       {"title", "string"},
                       {"summary", "string"},
                       {"body", "string"},
                       {"code", "string"},
                       {"language", "string"},
                       {"tags", "array"},
                       {"ops", "array"},
                       {"arch", "array"},
                       {"status", "string"},
                       {"evidence", "array"}});
  s["QueryOptions"] = Object({{"k", "integer"},
                              {"as_of", "integer"},
                              {"tags", "array"},
                              {"ops", "array"},
                              {"arch", "array"},
                              {"language", "string"},
                              {"status", "string"},
                              {"all_statuses", "boolean"},
                              {"fields", "string"},
                              {"record_retrieved", "boolean"}});
  s["SearchRequest"] = Object({{"query", "string"},
                               {"queries", "array"},
                               {"options", "#QueryOptions"}});
  s["SearchResponse"] = Object({{"version", "integer"}, {"results", "array"}});
  s["UsageRequest"] = Object({{"records", "array"}});
  s["VerificationRequest"] = Object({{"task", "string"},
                                     {"candidate", "object"},
                                     {"baseline", "object"},
                                     {"rounds", "integer"},
                                     {"timed_calls_per_round", "integer"}});
  s["VerificationReport"] = Object({{"verifier", "string"},
                                    {"passed", "boolean"},
                                    {"speedup", "object"},
                                    {"reasons", "array"}});
  s["QueuedRequest"] = Object({{"candidate", "#Skill"},
                               {"options", "object"},
                               {"verification", "#VerificationRequest"},
                               {"replay_report", "#VerificationReport"}});
  s["QueuedProposal"] = Object({{"id", "string"},
                                {"state", "string"},
                                {"attempts", "integer"},
                                {"request", "#QueuedRequest"},
                                {"outcome", "object"},
                                {"report", "#VerificationReport"},
                                {"reasons", "array"}});
  s["QueuedProposal"]["properties"]["state"]["enum"] = {
      "queued", "verifying", "committed", "rejected", "conflict", "failed"};
  s["EvaluationRequest"] = Object({{"task_id", "string"},
                                   {"reference_code", "string"},
                                   {"kernel_code", "string"},
                                   {"backend", "string"},
                                   {"entry_point", "string"},
                                   {"num_correct_trials", "integer"},
                                   {"num_perf_trials", "integer"},
                                   {"timeout", "integer"},
                                   {"force_refresh", "boolean"},
                                   {"skilldb_task", "string"}});
  s["EvaluationRequest"]["required"] = {"task_id", "kernel_code"};
  s["EvaluationResponse"] = Object({{"task_id", "string"},
                                    {"status", "string"},
                                    {"compiled", "boolean"},
                                    {"correctness", "boolean"},
                                    {"decoy_kernel", "boolean"},
                                    {"reference_runtime", "number"},
                                    {"kernel_runtime", "number"},
                                    {"speedup", "number"},
                                    {"metadata", "object"},
                                    {"error_message", "string"},
                                    {"error_code", "string"},
                                    {"submitted_at", "string"},
                                    {"completed_at", "string"},
                                    {"processing_time", "number"}});
  s["TaskStatusResponse"] = Object({{"task_id", "string"},
                                    {"status", "string"},
                                    {"progress", "number"}});
  return s;
}

OJson Paths() {
  const OJson none = OJson::array();
  const OJson id = OJson::array({Param("id", "path", "string", "skill id")});
  const OJson as_of = Param("as_of", "query", "integer", "library version");
  OJson p;
  p["/healthz"]["get"] = Op("liveness, head version, queue counts", none,
                            nullptr, "200", OJson::object(), false);
  p["/metrics"]["get"] = Op("Prometheus text format", none, nullptr, "200",
                            nullptr, false);
  p["/openapi.json"]["get"] =
      Op("this document", none, nullptr, "200", OJson::object(), false);
  p["/v1/search"]["post"] =
      Op("BM25 search, one query or a batch, as of a version", none,
         Ref("SearchRequest"), "200", Ref("SearchResponse"), false);
  p["/v1/search"]["get"] = Op(
      "BM25 search of one query",
      OJson::array({Param("q", "query", "string", "query text"),
                   Param("k", "query", "integer", "hits"), as_of,
                   Param("fields", "query", "string", "title,body,usage...")}),
      nullptr, "200", Ref("SearchResponse"), false);
  p["/v1/info"]["get"] =
      Op("library settings and head", none, nullptr, "200", OJson::object(),
         false);
  p["/v1/stats"]["get"] = Op("library statistics", OJson::array({as_of}),
                             nullptr, "200", OJson::object(), false);
  p["/v1/skills"]["get"] = Op(
      "skills live at a version, by id, paged",
      OJson::array({as_of, Param("limit", "query", "integer", "at most 10000"),
                   Param("after", "query", "string", "id to start after")}),
      nullptr, "200", OJson::object(), false);
  OJson skill_params = id;
  skill_params.push_back(as_of);
  p["/v1/skills/{id}"]["get"] =
      Op("one skill as of a version", skill_params, nullptr, "200",
         Ref("Skill"), false);
  p["/v1/skills/{id}/history"]["get"] =
      Op("every retained revision, newest first", id, nullptr, "200",
         OJson::object(), false);
  p["/v1/skills/{id}/usage"]["get"] =
      Op("usage counters and utility", id, nullptr, "200", OJson::object(),
         false);
  p["/v1/log"]["get"] = Op(
      "commit log, newest first",
      OJson::array({Param("limit", "query", "integer", "default 100"),
                   Param("from", "query", "integer", "newest version")}),
      nullptr, "200", OJson::object(), false);
  p["/v1/commits/{version}"]["get"] = Op(
      "one commit and what it changed",
      OJson::array({Param("version", "path", "integer", "the commit")}),
      nullptr, "200", OJson::object(), false);
  p["/v1/diff"]["get"] =
      Op("what differs between two versions",
         OJson::array({Param("from", "query", "integer", "version"),
                      Param("to", "query", "integer", "version")}),
         nullptr, "200", OJson::object(), false);
  p["/v1/audit"]["get"] =
      Op("audit log of proposals (accepted, rejected, aborted)",
         OJson::array({Param("limit", "query", "integer", "newest N"),
                      Param("after", "query", "integer", "sequence")}),
         nullptr, "200", OJson::object(), false);
  p["/v1/usage"]["post"] = Op("record usage events in one batch", none,
                              Ref("UsageRequest"), "200", OJson::object(), true);
  p["/v1/proposals"]["post"] =
      Op("queue a proposal (durable); answers at once with its id", none,
         Ref("QueuedRequest"), "202", Ref("QueuedProposal"), true);
  p["/v1/proposals"]["get"] = Op(
      "queued proposals",
      OJson::array({Param("state", "query", "string", "queued, verifying, ..."),
                   Param("limit", "query", "integer", "newest N"),
                   Param("after", "query", "integer", "sequence")}),
      nullptr, "200", OJson::object(), false);
  p["/v1/proposals/{id}"]["get"] =
      Op("one queued proposal and its state",
         OJson::array({Param("id", "path", "string", "q-NNN")}), nullptr, "200",
         Ref("QueuedProposal"), false);
  p["/v1/duplicates"]["post"] =
      Op("exact and near duplicates of a candidate", none, OJson::object(),
         "200", OJson::object(), true);
  p["/v1/verify"]["post"] =
      Op("verify a candidate now (429 when the verifier is saturated)", none,
         Ref("VerificationRequest"), "200", Ref("VerificationReport"), true);
  p["/evaluate"]["post"] =
      Op("KernelGYM: evaluate a kernel (synchronous, idempotent per task_id)",
         none, Ref("EvaluationRequest"), "200", Ref("EvaluationResponse"),
         true);
  const OJson task = OJson::array({Param("task_id", "path", "string", "id")});
  p["/status/{task_id}"]["get"] = Op("KernelGYM: a task's status", task,
                                     nullptr, "200",
                                     Ref("TaskStatusResponse"), false);
  p["/results/{task_id}"]["get"] = Op("KernelGYM: a task's result", task,
                                      nullptr, "200",
                                      Ref("EvaluationResponse"), false);
  p["/health"]["get"] =
      Op("KernelGYM: health", none, nullptr, "200", OJson::object(), false);
  return p;
}

}  // namespace

const std::string& OpenApiJson() {
  static const std::string* doc = [] {
    OJson j{{"openapi", "3.0.3"},
           {"info",
            {{"title", "skilldb"},
             {"version", "1"},
             {"description",
              "A versioned skill library for GPU-kernel agents: search, "
              "verified insertion through a durable queue, usage feedback, "
              "and KernelGYM-compatible evaluation. The web page is at /ui."}}},
           {"paths", Paths()},
           {"components",
            {{"schemas", Schemas()},
             {"securitySchemes",
              {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}}};
    return new std::string(j.dump());
  }();
  return *doc;
}

}  // namespace skilldb::server::internal
