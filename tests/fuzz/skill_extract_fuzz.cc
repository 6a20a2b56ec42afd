// The Skill Summary Agent's reading of an answer on arbitrary bytes: the
// JSON object in it (fences, prose, fences inside strings) and the
// candidate skill it must be. Never a crash, and an accepted skill is one
// the library takes: it validates, has no control character in its title
// or summary, and survives the JSON round trip.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "skilldb/summarize/skill_candidate.h"
#include "skilldb/util/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skilldb;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto object = summarize::ExtractJsonObject(text);
  if (!object.ok()) return 0;
  if (object->size() > text.size()) std::abort();
  auto skill = summarize::ParseCandidate(*object, "sa-fuzz-00000000", {});
  if (!skill.ok()) return 0;
  if (!ValidateSkill(*skill).ok()) std::abort();
  if (!util::FindControlCharacter(skill->title, false).empty() ||
      !util::FindControlCharacter(skill->summary, false).empty()) {
    std::abort();
  }
  auto again = ParseSkillJson(SkillToJson(*skill));
  if (!again.ok() || !(*again == *skill)) std::abort();
  return 0;
}
