#include "skilldb/summarize/skill_candidate.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "skilldb/util/json.h"
#include "skilldb/util/text.h"

namespace skilldb::summarize {
namespace {

using Json = nlohmann::json;

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Phrases by which text addresses the model that will read it instead of
// describing a technique (matched on lower-cased text with runs of
// whitespace as one space), and the markers of chat templates' turns.
constexpr const char* kInstructionPhrases[] = {
    "system prompt",    "you are now",     "new instructions",
    "<|im_start|>",     "<|im_end|>",      "<|eot_id|>",
    "<|start_header_id|>", "<|endoftext|>", "[inst]",
    "<<sys>>",          "</s>",
};
// A verb of dismissal followed within a few words by what it dismisses.
constexpr const char* kDismissals[] = {"ignore", "disregard"};
constexpr const char* kDismissed[] = {"instruction", "the above", "prompt"};

std::string Normalized(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u)) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(u));
  }
  return out;
}

// What in `text` reads as an instruction to a model, or "".
std::string InstructionLike(std::string_view text) {
  const std::string t = Normalized(text);
  for (const char* phrase : kInstructionPhrases) {
    if (t.find(phrase) != std::string::npos) return phrase;
  }
  for (const char* verb : kDismissals) {
    for (size_t at = t.find(verb); at != std::string::npos;
         at = t.find(verb, at + 1)) {
      if (at > 0 && IsWordChar(t[at - 1])) continue;
      const std::string after = t.substr(at, 32);
      for (const char* what : kDismissed) {
        if (after.find(what) != std::string::npos) {
          return std::string(verb) + " ... " + what;
        }
      }
    }
  }
  // A line that opens a chat role ("system:", "assistant:").
  for (const char* role : {"system:", "assistant:"}) {
    const std::string line_start = "\n" + std::string(role);
    const std::string lower = Lower(text);
    if (lower.rfind(role, 0) == 0 || lower.find(line_start) != std::string::npos) {
      return role;
    }
  }
  return "";
}

// The end (one past the '}') of the balanced object starting at `open`.
size_t ObjectEnd(std::string_view s, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && !IsWordChar(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && IsWordChar(s[j])) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

double ShingleJaccard(std::string_view a, std::string_view b) {
  auto shingles = [](std::string_view s) {
    std::unordered_set<size_t> out;
    const std::vector<std::string> w = Words(s);
    for (size_t i = 0; i + 2 < w.size(); ++i) {
      out.insert(
          std::hash<std::string>()(w[i] + ' ' + w[i + 1] + ' ' + w[i + 2]));
    }
    return out;
  };
  const auto sa = shingles(a), sb = shingles(b);
  if (sa.empty() || sb.empty()) return 0.0;
  size_t common = 0;
  for (size_t h : sa) common += sb.count(h);
  return static_cast<double>(common) / (sa.size() + sb.size() - common);
}

bool IsSlugWord(const std::string& s) {
  if (s.empty() || s.size() > 40) return false;
  if (!(std::islower(static_cast<unsigned char>(s[0])) ||
        std::isdigit(static_cast<unsigned char>(s[0]))))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
           c == '_' || c == '.' || c == '+';
  });
}

bool IsArch(const std::string& s) {
  if (s.size() < 5 || s.substr(0, 3) != "sm_") return false;
  size_t i = 3, digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    ++i, ++digits;
  if (digits < 2 || digits > 3) return false;
  return i == s.size() || (i + 1 == s.size() && s[i] == 'a');
}

// True if `body` has a markdown heading whose text starts with `section`.
bool HasSection(const std::string& body, std::string_view section) {
  const std::string want = Lower(section);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    std::string_view line(body.data() + pos, end - pos);
    pos = end + 1;
    size_t i = 0;
    while (i < line.size() && line[i] == '#') ++i;
    if (i == 0) continue;
    while (i < line.size() && line[i] == ' ') ++i;
    const std::string heading = Lower(line.substr(i));
    if (heading.rfind(want, 0) != 0) continue;
    // "How" must not match only as the start of "How to tell it worked".
    if (want == "how" && heading.rfind("how to tell", 0) == 0) continue;
    return true;
  }
  return false;
}

void CheckKeys(const Json& j, std::vector<std::string>* problems) {
  static const std::set<std::string> library_fields = {
      "id", "provenance", "lineage", "evidence", "status", "extra"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (library_fields.count(key)) {
      problems->push_back("field '" + key +
                          "' is set by the library: leave it out");
      continue;
    }
    if (std::none_of(std::begin(kModelFields), std::end(kModelFields),
                     [&](const char* f) { return key == f; })) {
      problems->push_back("unknown field '" + key +
                          "' (allowed: title, summary, body, code, tags, ops, "
                          "arch, language)");
    }
  }
  for (const char* f :
       {"title", "summary", "body", "code", "tags", "ops", "arch"}) {
    if (!j.contains(f))
      problems->push_back(std::string("field '") + f + "' is missing");
  }
}

}  // namespace

void ScreenModelText(std::string_view field, std::string_view text,
                     bool allow_lines, std::vector<std::string>* problems) {
  const std::string control = util::FindControlCharacter(text, allow_lines);
  if (!control.empty()) {
    problems->push_back(std::string(field) + ": a control character (" +
                        control + ")");
  }
  const std::string instruction = InstructionLike(text);
  if (!instruction.empty()) {
    problems->push_back(std::string(field) +
                        ": reads as an instruction to a model (\"" +
                        instruction + "\"); describe the technique");
  }
}

namespace {

void CheckText(const Skill& s, const CandidateRules& rules,
               std::vector<std::string>* p) {
  // The skill's text enters every later prompt that selects it: no control
  // characters (a terminal or a prompt would act on them) and nothing
  // addressed to the model reading it.
  ScreenModelText("title", s.title, false, p);
  ScreenModelText("summary", s.summary, false, p);
  ScreenModelText("body", s.body, true, p);
  ScreenModelText("code", s.code, true, p);
  auto one_line = [](const std::string& t) {
    return t.find('\n') == std::string::npos;
  };
  if (s.title.size() < 8 || s.title.size() > 120 || !one_line(s.title))
    p->push_back("title: one line of 8 to 120 characters");
  if (s.summary.size() < 20 || s.summary.size() > 400 || !one_line(s.summary))
    p->push_back("summary: one line of 20 to 400 characters");
  if (s.body.size() < 200 || s.body.size() > 16000)
    p->push_back("body: 200 to 16000 bytes of markdown");
  for (const char* section : kBodySections) {
    if (!HasSection(s.body, section))
      p->push_back(std::string("body: needs a '## ") + section + "' section");
  }
  if (s.code.empty() || s.code.size() > 8000)
    p->push_back("code: a code pattern of 1 to 8000 bytes");
  if (!rules.task_name.empty()) {
    const std::string task = Lower(rules.task_name);
    if (Lower(s.title).find(task) != std::string::npos ||
        Lower(s.summary).find(task) != std::string::npos) {
      p->push_back("title and summary must name the technique, not the task '" +
                   rules.task_name + "'");
    }
  }
  if (!rules.kernel_source.empty() && !s.code.empty() &&
      ShingleJaccard(s.code, rules.kernel_source) >= rules.max_kernel_jaccard) {
    p->push_back(
        "code: restates the verified kernel; give the general pattern (the "
        "loop structure or idiom the technique rests on), not this task's "
        "kernel");
  }
}

void CheckLists(const Skill& s, std::vector<std::string>* p) {
  if (s.tags.empty() || s.tags.size() > 12)
    p->push_back("tags: 1 to 12 entries");
  if (s.ops.empty() || s.ops.size() > 8) p->push_back("ops: 1 to 8 entries");
  for (const std::string& t : s.tags) {
    if (!IsSlugWord(t))
      p->push_back("tags: '" + t + "' is not a lowercase word");
  }
  for (const std::string& o : s.ops) {
    if (!IsSlugWord(o))
      p->push_back("ops: '" + o + "' is not a lowercase word");
  }
  for (const std::string& a : s.arch) {
    if (!IsArch(a))
      p->push_back("arch: '" + a + "' is not like sm_90 or sm_90a");
  }
}

std::string JoinProblems(const std::vector<std::string>& p) {
  std::string out = "the skill is not valid: ";
  for (size_t i = 0; i < p.size(); ++i) out += (i ? "; " : "") + p[i];
  return out;
}

}  // namespace

Result<std::string> ExtractJsonObject(std::string_view completion,
                                      size_t max_bytes) {
  std::string_view text = completion;
  // A ```json fence (any case) says where the object starts. It does not
  // say where it ends: the object's strings may hold fences of their own
  // (a markdown body with a code block), so the end is the object's
  // balanced closing brace, found with strings respected.
  const std::string lower = Lower(completion);
  const size_t fence = lower.find("```json");
  if (fence != std::string::npos) {
    const size_t start = text.find('\n', fence);
    if (start != std::string_view::npos) text = text.substr(start + 1);
  }
  const size_t open = text.find('{');
  if (open == std::string_view::npos) {
    return Status::InvalidArgument("the answer holds no JSON object");
  }
  const size_t end = ObjectEnd(text, open);
  if (end == std::string_view::npos) {
    return Status::InvalidArgument("the JSON object is not closed");
  }
  if (end - open > max_bytes) {
    return Status::InvalidArgument("the JSON object is over " +
                                   std::to_string(max_bytes) + " bytes");
  }
  return std::string(text.substr(open, end - open));
}

Result<Skill> ParseCandidate(std::string_view object_json, std::string_view id,
                             const CandidateRules& rules) {
  auto parsed = util::ParseUntrustedJson(object_json, "the answer",
                                         {.max_bytes = 1 << 20, .max_depth = 16});
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::InvalidArgument("the answer is not one valid JSON object" +
                                   (parsed.ok() ? std::string()
                                                : " (" + parsed.status().message() +
                                                      ")"));
  }
  const Json& j = *parsed;
  std::vector<std::string> problems;
  CheckKeys(j, &problems);
  if (!problems.empty()) return Status::InvalidArgument(JoinProblems(problems));
  // The schema's own reader (types, UTF-8, duplicate keys, list entries)
  // on the model's text with our id in front.
  std::string with_id = "{\"id\":" + util::DumpLossy(Json(std::string(id))) +
                        "," + std::string(object_json.substr(1));
  auto skill = ParseSkillJson(with_id);
  if (!skill.ok()) {
    return Status::InvalidArgument("the skill is not valid: " +
                                   skill.status().message());
  }
  CheckText(*skill, rules, &problems);
  CheckLists(*skill, &problems);
  if (!problems.empty()) return Status::InvalidArgument(JoinProblems(problems));
  return std::move(*skill);
}

std::string DistilledSkillId(std::string_view title, std::string_view salt) {
  std::string slug;
  for (char c : title) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      slug.push_back(static_cast<char>(std::tolower(u)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug.push_back('-');
    }
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  if (slug.empty()) slug = "skill";
  // FNV-1a: stable across runs and builds (std::hash is not).
  uint64_t h = 1469598103934665603ull;
  for (char c : salt) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08llx",
                static_cast<unsigned long long>(h & 0xffffffffull));
  return "sa-" + slug + "-" + hex;
}

}  // namespace skilldb::summarize
