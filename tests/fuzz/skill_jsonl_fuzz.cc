// The JSONL/skill parser on arbitrary bytes: it never crashes, and what it
// accepts survives the round trip it promises (skill.h: SkillToJson is read
// back by ParseSkillJson to an equal Skill, and the result validates).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jsonl.h"
#include "skilldb/skill.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto skills = skilldb::cli::ParseJsonl(text, "fuzz.jsonl");
  if (!skills.ok()) {
    // A rejection names where: "fuzz.jsonl:LINE: ...".
    if (skills.status().message().rfind("fuzz.jsonl:", 0) != 0) std::abort();
    return 0;
  }
  for (const skilldb::Skill& s : *skills) {
    if (!skilldb::ValidateSkill(s).ok()) std::abort();
    auto again = skilldb::ParseSkillJson(skilldb::SkillToJson(s));
    if (!again.ok() || !(*again == s)) std::abort();
  }
  return 0;
}
