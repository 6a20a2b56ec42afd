// Helpers for the agents' tests (policy/, summarize/, tests/agents/): an
// in-test Backbone that answers from a queue, the real host verifier with a
// shared compile cache, and libraries holding the seed skills.
#ifndef SKILLDB_TESTS_AGENTS_AGENTS_TEST_UTIL_H_
#define SKILLDB_TESTS_AGENTS_AGENTS_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "skilldb/llm/backbone.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/verify/verify.h"
#include "test_util.h"
#include "build_paths.h"

namespace skilldb::policy::testing {

// A Backbone double: each sample takes the next queued answer (Unavailable
// when none is left). Token ids are the answer's bytes, so a test can check
// what was stored. Records every prompt. Thread-safe.
class QueueBackbone : public llm::Backbone {
 public:
  explicit QueueBackbone(std::vector<std::string> answers = {})
      : answers_(answers.begin(), answers.end()) {}

  void Push(std::string answer) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_.push_back(std::move(answer));
  }
  std::string Model() const override { return "queue-model"; }

  Result<std::vector<llm::Generation>> Generate(
      const std::vector<llm::Chat>& prompts,
      const llm::SamplingOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<llm::Generation> out;
    for (const llm::Chat& chat : prompts) {
      prompts_.push_back(chat);
      llm::Generation g;
      g.prompt_token_ids = {1, 2, 3};
      for (int i = 0; i < options.n; ++i) {
        if (answers_.empty())
          return Status::Unavailable("the queue backbone has no answer left");
        llm::Sample s;
        s.text = answers_.front();
        answers_.pop_front();
        for (unsigned char c : s.text) s.token_ids.push_back(c);
        s.token_logprobs.assign(s.token_ids.size(), -0.5);
        s.finish_reason = "stop";
        usage_.completion_tokens += s.token_ids.size();
        g.samples.push_back(std::move(s));
      }
      usage_.prompt_tokens += 3;
      ++usage_.requests;
      out.push_back(std::move(g));
    }
    return out;
  }
  Result<std::vector<llm::ScoreResult>> Score(
      const std::vector<llm::ScoreRequest>&) override {
    return Status::NotSupported("the queue backbone does not score");
  }
  llm::TokenUsage Usage() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return usage_;
  }
  std::vector<llm::Chat> prompts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return prompts_;
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::string> answers_;
  std::vector<llm::Chat> prompts_;
  llm::TokenUsage usage_;
};

// Host verifier options with a compile cache shared by the test processes.
inline verify::VerifierOptions HostOptions() {
  verify::VerifierOptions o = verify::DefaultOptions(verify::Backend::kHost);
  if (std::getenv("SKILLDB_VERIFY_CACHE") == nullptr) {
    o.cache_dir =
        (std::filesystem::temp_directory_path() / "skilldb-verify-test-cache")
            .string();
  }
  return o;
}

inline std::unique_ptr<verify::TaskVerifier> HostVerifier(
    verify::VerifierOptions o = HostOptions()) {
  auto v = verify::MakeVerifier(o);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(*v);
}

inline PolicyTask HostTask(const std::string& name) {
  auto t = LoadPolicyTask(HostOptions(), name);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return std::move(*t);
}

inline std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A team candidate's source, e.g. ("sum_dim1_fp32", "fast.cc").
inline std::string CandidateSource(const std::string& task,
                                   const std::string& file) {
  return ReadFileText(HostOptions().task_dir + "/" + task + "/candidates/" +
                      file);
}

// The seed skills (data/seed/*.jsonl).
inline std::vector<Skill> SeedSkills() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(SKILLDB_SEED_DIR)) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Skill> skills;
  for (const auto& f : files) {
    std::istringstream lines(ReadFileText(f.string()));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      auto s = ParseSkillJson(line);
      REQUIRE_MESSAGE(s.ok(), s.status().ToString());
      skills.push_back(std::move(*s));
    }
  }
  return skills;
}

// A temporary library holding the seed skills.
class SeedLibrary : public skilldb::testing::TempLibrary {
 public:
  SeedLibrary() : TempLibrary(Weighted()) {
    REQUIRE((*this)->PutMany(SeedSkills()).ok());
  }
  static Options Weighted() {
    Options o = DefaultOptions();
    o.field_weights = kSkillLibraryWeights;  // as the CLI's default library
    return o;
  }
};

// "```cpp\n<source>\n```" with prose around it.
inline std::string Fenced(const std::string& source,
                          const std::string& info = "cpp") {
  return "Here is the kernel.\n\n```" + info + "\n" + source + "\n```\n";
}

}  // namespace skilldb::policy::testing

#endif  // SKILLDB_TESTS_AGENTS_AGENTS_TEST_UTIL_H_
