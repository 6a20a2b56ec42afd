// A task family a small model can learn within minutes, with rewards from
// the real verifier: a kernel template (trainer/tasks/*.tmpl) whose
// parameters the policy writes as short text ("order=rows tile=64
// unroll=4 tail=loop"). The family renders the parameters into a real
// candidate source for a verifier task; the verifier compiles, checks and
// times it like any other candidate, so the reward (0.5 x correct + 0.5 x
// min(speedup, 3)) is the verifier's, not the template's.
//
// The family file (JSON): name, task (a verifier task), backend ("host" |
// "cuda"), language ("cpp" | "cuda"), template (path relative to the
// file), description, and params: [{name, values: {text: substitution}}].
// {{name}} in the template is replaced by the chosen value's substitution,
// {{PARAMS}} by the canonical parameter text.
#ifndef SKILLDB_TRAINER_PARAM_TASK_H_
#define SKILLDB_TRAINER_PARAM_TASK_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

struct ParamSpec {
  std::string name;
  // (text the policy writes, what the template gets), in file order.
  std::vector<std::pair<std::string, std::string>> values;
};

struct TaskFamily {
  std::string name;
  std::string task;
  std::string backend;   // "host" | "cuda"
  std::string language;  // "cpp" | "cuda"
  std::string description;
  std::string template_path;
  std::string template_text;
  std::vector<ParamSpec> params;
};

// Errors: NotFound / IOError for the files, InvalidArgument naming the
// field (and the file) that is missing or malformed, or a {{name}} of the
// template that no parameter defines.
Result<TaskFamily> LoadTaskFamily(const std::string& json_path);

using ParamValues = std::map<std::string, std::string>;

struct ParsedParams {
  bool ok = false;
  ParamValues values;
  std::string error;  // why not ok (shown to the model as feedback)
};

// Reads "key=value" words (separated by spaces, commas, semicolons or
// newlines; other words ignored) from an untrusted completion, cut to
// max_bytes first. Every parameter must appear once with an allowed value.
ParsedParams ParseParams(const TaskFamily& family, std::string_view completion,
                         size_t max_bytes = 4096);

// "k1=v1 k2=v2 ..." in the family's parameter order.
std::string FormatParams(const TaskFamily& family, const ParamValues& values);

// The candidate source. REQUIRES: values holds an allowed value for every
// parameter (ParseParams's ok result).
std::string Render(const TaskFamily& family, const ParamValues& values);

// Every combination, in lexicographic order of the parameter list.
std::vector<ParamValues> AllCombinations(const TaskFamily& family);

// The answer format and allowed values, for the prompt.
std::string FamilyInstructions(const TaskFamily& family);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_PARAM_TASK_H_
