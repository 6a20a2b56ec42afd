// KernelGYM compatibility: the request's validation and defaults, the
// result's meaning, and the client flow Dr. Kernel's reward client follows
// (POST /evaluate, poll GET /status, then GET /results).
#include "server_test_util.h"
#include "skilldb/server/evaluation.h"

namespace skilldb::server {
namespace {

using testing::ParseJson;
using testing::ScriptedReport;
using testing::ScriptedVerifier;
using testing::TestServer;
using testing::TJson;

const char* kKernel =
    "extern \"C\" int launch(const Tensor* in, int n_in, Tensor* out, int "
    "n_out, void* stream) { return 0; }";

TJson DrKernelPayload(const std::string& task_id) {
  // What drkernel/kernel/rewards/reward_client.py sends, plus the
  // extension naming the verifier task.
  return TJson{{"task_id", task_id},
               {"reference_code", "class Model: pass  # reference"},
               {"kernel_code", kKernel},
               {"backend", "cuda"},
               {"num_correct_trials", 5},
               {"num_perf_trials", 100},
               {"timeout", 600},
               {"priority", "normal"},
               {"entry_point", "Model"},
               {"is_valid", false},
               {"verbose_errors", true},
               {"enable_profiling", true},
               {"detect_decoy_kernel", true},
               {"reference_backend", nullptr},
               {"skilldb_task", "sum_dim1_fp32"}};
}

TEST_CASE("a KernelGYM request takes KernelGYM's defaults and bounds") {
  auto r = ParseEvaluationRequest(
      "{\"task_id\":\"t1\",\"reference_code\":\"class Model: pass\","
      "\"kernel_code\":\"class ModelNew: pass\",\"unknown_field\":1}");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->backend == "triton");
  CHECK(r->num_correct_trials == 5);
  CHECK(r->num_perf_trials == 100);
  CHECK(r->num_warmup == 3);
  CHECK(r->timeout == 300);
  CHECK(r->entry_point == "Model");
  CHECK_FALSE(r->force_refresh);
  for (const char* bad :
       {"{\"kernel_code\":\"class ModelNew: pass\"}",
        "{\"task_id\":\"\",\"kernel_code\":\"class ModelNew: pass\"}",
        "{\"task_id\":\"t\",\"kernel_code\":\"short\"}",
        "{\"task_id\":\"t\",\"kernel_code\":\"class ModelNew: pass\"}",
        "{\"task_id\":\"t\",\"reference_code\":\"class Model: pass\","
        "\"kernel_code\":\"class ModelNew: pass\",\"num_perf_trials\":0}",
        "{\"task_id\":\"t\",\"reference_code\":\"class Model: pass\","
        "\"kernel_code\":\"class ModelNew: pass\",\"timeout\":5}",
        "{\"task_id\":\"t\",\"reference_code\":\"class Model: pass\","
        "\"kernel_code\":\"class ModelNew: pass\",\"backend\":\"tilelang\"}"}) {
    CHECK_MESSAGE(ParseEvaluationRequest(bad).status().code() ==
                      StatusCode::kInvalidArgument,
                  bad);
  }
  std::string big(100001, 'x');
  TJson j{{"task_id", "t"}, {"reference_code", "class Model: pass"},
          {"kernel_code", big}};
  CHECK_FALSE(ParseEvaluationRequest(j.dump()).ok());
}

TEST_CASE("a report becomes KernelGYM's compiled, correctness, speedup and error code") {
  auto pass = ResultFromReport(ScriptedReport("t", 2.0));
  CHECK(pass.status == "completed");
  CHECK(*pass.compiled);
  CHECK(*pass.correctness);
  CHECK_FALSE(*pass.decoy_kernel);
  CHECK(*pass.reference_runtime == doctest::Approx(2.0));
  CHECK(*pass.kernel_runtime == doctest::Approx(1.0));
  CHECK(*pass.speedup == doctest::Approx(2.0));
  CHECK_FALSE(pass.error_code.has_value());
  TJson meta = ParseJson(pass.metadata_json);
  CHECK(meta["skilldb"]["ci_low"] == doctest::Approx(1.9));

  auto broken = ResultFromReport(ScriptedReport("t", 2.0, /*compiled=*/false));
  CHECK(broken.status == "failed");
  CHECK_FALSE(*broken.compiled);
  CHECK(*broken.error_code == "COMPILATION_ERROR");
  CHECK(broken.error_message->find("expected ';'") != std::string::npos);
  CHECK(*broken.speedup == 0.0);

  auto wrong = ResultFromReport(
      ScriptedReport("t", 2.0, /*compiled=*/true, /*correct=*/false));
  CHECK(wrong.status == "completed");
  CHECK_FALSE(*wrong.correctness);
  CHECK(*wrong.error_code == "CORRECTNESS_ERROR");
  CHECK(*wrong.reference_runtime == -1.0);
  CHECK(*wrong.speedup == 0.0);

  VerificationReport decoy = ScriptedReport("t", 3.0);
  decoy.passed = false;
  decoy.reasons = {"[no_kernel_launched] launch() ran no kernel"};
  auto hack = ResultFromReport(decoy);
  CHECK(*hack.decoy_kernel);
  CHECK(*hack.kernel_runtime == -1.0);
  CHECK(*hack.speedup == 0.0);
}

TEST_CASE("Dr. Kernel's client flow: evaluate, status, results, idempotent per task_id") {
  ScriptedVerifier verifier(2.0);
  ServerOptions options;
  options.verifier = &verifier;
  TestServer server(options);
  auto client = server.Client();
  auto first = client.Post("/evaluate", DrKernelPayload("drk_000001").dump(),
                           "application/json");
  REQUIRE(first);
  REQUIRE(first->status == 200);
  TJson r = ParseJson(first->body);
  CHECK(r["task_id"] == "drk_000001");
  CHECK(r["status"] == "completed");
  CHECK(r["compiled"] == true);
  CHECK(r["correctness"] == true);
  CHECK(r["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(r["metadata"]["skilldb"]["verifier"] == "scripted");
  CHECK(r.contains("submitted_at"));
  CHECK(r.contains("processing_time"));
  auto status = client.Get("/status/drk_000001");
  REQUIRE(status);
  CHECK(status->status == 200);
  CHECK(ParseJson(status->body)["status"] == "completed");
  auto results = client.Get("/results/drk_000001");
  REQUIRE(results);
  CHECK(ParseJson(results->body)["speedup"] == r["speedup"]);
  // A retried POST returns the stored result without evaluating again;
  // force_refresh evaluates again.
  auto again = client.Post("/evaluate", DrKernelPayload("drk_000001").dump(),
                           "application/json");
  REQUIRE(again);
  CHECK(ParseJson(again->body)["submitted_at"] == r["submitted_at"]);
  CHECK(verifier.calls == 1);
  TJson refresh = DrKernelPayload("drk_000001");
  refresh["force_refresh"] = true;
  REQUIRE(client.Post("/evaluate", refresh.dump(), "application/json"));
  CHECK(verifier.calls == 2);
  // Unknown tasks are KernelGYM's 404.
  auto unknown = client.Get("/status/never-submitted");
  REQUIRE(unknown);
  CHECK(unknown->status == 404);
  CHECK(ParseJson(unknown->body)["detail"] == "Task never-submitted not found");
}

TEST_CASE("a request that fails validation is KernelGYM's 400, not 422") {
  TestServer server;
  auto res = server.Client().Post("/evaluate", "{\"task_id\":\"x\"}",
                                  "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK(res->get_header_value("X-Error-Code") == "VALIDATION_ERROR");
  TJson j = ParseJson(res->body);
  CHECK(j["error"] == "RequestValidationError");
  CHECK(j["error_code"] == "VALIDATION_ERROR");
}

TEST_CASE("a KernelBench-format answer says it needs the KernelBench runner") {
  ScriptedVerifier verifier(2.0);
  ServerOptions options;
  options.verifier = &verifier;
  TestServer server(options);
  TJson payload = DrKernelPayload("kb_1");
  payload.erase("skilldb_task");
  payload["backend"] = "triton";
  payload["kernel_code"] = "class ModelNew(nn.Module): pass";
  auto res = server.Client().Post("/evaluate", payload.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  TJson j = ParseJson(res->body);
  CHECK(j["status"] == "failed");
  CHECK(j["error_code"] == "SYSTEM_ERROR");
  CHECK(j["error_message"].get<std::string>().find("KernelBench runner") !=
        std::string::npos);
  CHECK(verifier.calls == 0);
}

TEST_CASE("an evaluation past the verifier's capacity gets 429 and the next one runs") {
  testing::BlockingVerifier verifier;
  ServerOptions options;
  options.verifier = &verifier;
  options.max_pending_verifications = 0;
  TestServer server(options);
  int first_status = 0;
  std::thread first([&] {
    auto res = server.Client().Post(
        "/evaluate", DrKernelPayload("busy_1").dump(), "application/json");
    first_status = res ? res->status : -1;
  });
  verifier.WaitEntered(1);
  auto status = server.Client().Get("/status/busy_1");
  REQUIRE(status);
  CHECK(ParseJson(status->body)["status"] == "processing");
  auto second = server.Client().Post(
      "/evaluate", DrKernelPayload("busy_2").dump(), "application/json");
  REQUIRE(second);
  CHECK(second->status == 429);
  CHECK(second->has_header("Retry-After"));
  verifier.Release();
  first.join();
  CHECK(first_status == 200);
}

}  // namespace
}  // namespace skilldb::server
