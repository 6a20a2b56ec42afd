// Skill selection for the Policy Agent: the small interface the agent
// calls each turn (SkillSelector), a plain BM25 selection that needs no
// model (Bm25Selector), and BM25 followed by any skilldb::Reranker
// (RerankingSelector: the Selection Agent's second stage, e.g. rerank/'s
// listwise LLM reranker).
//
// Retrieval runs in stages so that filters narrow without starving the
// prompt: first with every filter of the request (op family, arch,
// language), then dropping the op filter, then with no filter at all, each
// stage adding the hits not yet retrieved until `retrieve_k` are found (with
// `backfill` false only the first stage runs). The retrieved list is that
// concatenation; a reranker reorders it and the first `select_k` are the
// selection. Every hit comes from one library version (the request's
// as_of, or the head when the first stage ran).
//
// Both selectors are safe for concurrent use when the Library is (it is)
// and, for RerankingSelector, when the Reranker is (each states its own).
#ifndef SKILLDB_POLICY_SELECTION_H_
#define SKILLDB_POLICY_SELECTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/reranker.h"
#include "skilldb/status.h"

namespace skilldb::policy {

// What to select skills for.
struct SelectionRequest {
  std::string query;
  std::vector<std::string> ops;   // op filter, e.g. {"softmax"}
  std::vector<std::string> arch;  // arch filter, e.g. {"sm_90"}
  std::optional<Language> language;
  // Skills to leave out (e.g. ones a test wants absent). Default: none.
  std::vector<std::string> exclude;
  // The library version to read (a training step pins one for all its
  // rollouts); unset = the head when retrieval starts. Default: unset.
  std::optional<Version> as_of;
  // Sampling seed for a model reranker's judgment (RerankRequest::seed);
  // unset = the reranker's own. Default: unset.
  std::optional<uint64_t> seed;
};

struct SelectionOptions {
  size_t retrieve_k = 20;  // BM25 candidates. Default: 20.
  size_t select_k = 3;     // skills put in the prompt. Default: 3.
  bool backfill = true;    // relax the filters when short. Default: true.
  // Pitfall notes shown per selected skill (summarize/pitfalls.h), newest
  // first. Default: 3.
  size_t pitfalls_per_skill = 3;
};

// One selected skill with what the prompt shows of it.
struct SelectedSkill {
  Hit hit;  // title, summary, body, code, tags, ops, arch, language
  // Unverified pitfall notes failed rollouts attached to it, newest first.
  std::vector<std::string> pitfalls;
};

// The outcome of one selection.
struct Selection {
  SelectionRecord record;             // what the rollout store keeps
  std::vector<SelectedSkill> skills;  // record.selected, with content
  double retrieval_ms = 0;
  double rerank_ms = 0;
};

class SkillSelector {
 public:
  virtual ~SkillSelector() = default;
  // Selects skills for `request`. A reranker's failure is not an error (the
  // BM25 order stands, with the reason); errors are the library's (NotFound,
  // IOError, ...) and InvalidArgument for a bad request.
  virtual Result<Selection> Select(const SelectionRequest& request) = 0;
};

// BM25 only. REQUIRES: `library` outlives the selector.
class Bm25Selector : public SkillSelector {
 public:
  Bm25Selector(Library* library, SelectionOptions options = {})
      : library_(library), options_(options) {}
  Result<Selection> Select(const SelectionRequest& request) override;

 private:
  Library* library_;
  SelectionOptions options_;
};

// BM25, then `reranker` over the retrieved candidates. REQUIRES: `library`
// and `reranker` outlive the selector.
class RerankingSelector : public SkillSelector {
 public:
  RerankingSelector(Library* library, Reranker* reranker,
                    SelectionOptions options = {})
      : library_(library), reranker_(reranker), options_(options) {}
  Result<Selection> Select(const SelectionRequest& request) override;

 private:
  Library* library_;
  Reranker* reranker_;
  SelectionOptions options_;
};

// The staged BM25 retrieval both selectors share: fills record.query,
// record.library_version, record.retrieved and returns the hits (with the
// fields a prompt and a reranker read) in retrieved order.
Result<std::vector<Hit>> RetrieveStaged(Library& library,
                                        const SelectionRequest& request,
                                        const SelectionOptions& options,
                                        SelectionRecord* record);

// Completes a selection from `ordered` hits (best first, already cut to
// select_k): their refs, and their pitfall notes read from the library as
// of record.library_version.
Status FinishSelection(Library& library, const SelectionOptions& options,
                       std::vector<RankedHit> ordered, Selection* selection);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_SELECTION_H_
