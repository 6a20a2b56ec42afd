#include "skilldb/trainer/sft_data.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "skilldb/trainer/report.h"
#include "skilldb/util/json.h"

namespace skilldb::trainer {

using nlohmann::json;

Result<std::vector<SftRecord>> ReadSftJsonl(const std::string& path) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<SftRecord> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(path + ":" + std::to_string(n) + ": " +
                                     why);
    };
    auto parsed = util::ParseUntrustedJson(line, "record");
    if (!parsed.ok()) return bad(parsed.status().message());
    const json& j = *parsed;
    if (!j.is_object()) return bad("not a JSON object");
    SftRecord r;
    if (!j.contains("agent") || !j["agent"].is_string() ||
        j["agent"].get<std::string>().empty()) {
      return bad("'agent' must be a non-empty string");
    }
    r.agent = j["agent"].get<std::string>();
    if (j.contains("task")) {
      if (!j["task"].is_string()) return bad("'task' must be a string");
      r.task = j["task"].get<std::string>();
    }
    if (!j.contains("messages") || !j["messages"].is_array() ||
        j["messages"].empty()) {
      return bad("'messages' must be a non-empty array");
    }
    for (const json& m : j["messages"]) {
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
          !m.contains("content") || !m["content"].is_string()) {
        return bad("each message needs string 'role' and 'content'");
      }
      r.messages.push_back(
          {m["role"].get<std::string>(), m["content"].get<std::string>()});
    }
    if (!j.contains("completion") || !j["completion"].is_string() ||
        j["completion"].get<std::string>().empty()) {
      return bad("'completion' must be a non-empty string");
    }
    r.completion = j["completion"].get<std::string>();
    out.push_back(std::move(r));
  }
  return out;
}

std::string SftRecordToJson(const SftRecord& r) {
  json m = json::array();
  for (const auto& msg : r.messages) {
    m.push_back({{"role", msg.role}, {"content", msg.content}});
  }
  return util::DumpLossy(json{{"agent", r.agent},
                              {"task", r.task},
                              {"messages", m},
                              {"completion", r.completion}});
}

std::string SftFilterReport::ToJson() const {
  return json{{"read", read},
              {"near_duplicates", near_duplicates},
              {"over_task_cap", over_task_cap},
              {"over_agent_cap", over_agent_cap},
              {"kept", kept},
              {"kept_per_agent", kept_per_agent},
              {"kept_per_task", kept_per_task}}
      .dump();
}

Status ValidateSftFilterOptions(const SftFilterOptions& o) {
  // The signature of every record holds num_hashes values and its
  // shingles span shingle_chars bytes: bounded like the config's keys.
  if (o.shingle_chars < 1 || o.shingle_chars > 64) {
    return Status::InvalidArgument(
        "sft filter: shingle_chars must be between 1 and 64");
  }
  if (o.num_hashes < 1 || o.num_hashes > 1024 || o.bands < 1 ||
      o.num_hashes % o.bands != 0) {
    return Status::InvalidArgument(
        "sft filter: num_hashes must be a multiple of bands, at most 1024");
  }
  if (!(o.max_similarity >= 0)) {
    return Status::InvalidArgument("sft filter: max_similarity must be >= 0");
  }
  return Status::Ok();
}

namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::set<uint64_t> Shingles(std::string_view text, int k) {
  std::set<uint64_t> out;
  if (text.size() <= static_cast<size_t>(k)) {
    out.insert(Fnv(text));
    return out;
  }
  for (size_t i = 0; i + k <= text.size(); ++i) {
    out.insert(Fnv(text.substr(i, k)));
  }
  return out;
}

}  // namespace

std::vector<uint64_t> MinHashSignature(std::string_view text, int shingle_chars,
                                       int num_hashes, uint64_t seed) {
  std::vector<uint64_t> sig(num_hashes, std::numeric_limits<uint64_t>::max());
  for (uint64_t s : Shingles(text, shingle_chars)) {
    for (int h = 0; h < num_hashes; ++h) {
      sig[h] = std::min(sig[h], Mix(s ^ Mix(seed * 1000003ull + h)));
    }
  }
  return sig;
}

double EstimatedJaccard(const std::vector<uint64_t>& a,
                        const std::vector<uint64_t>& b) {
  if (a.empty() || a.size() != b.size()) return 0;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return static_cast<double>(same) / a.size();
}

double ShingleJaccard(std::string_view a, std::string_view b,
                      int shingle_chars) {
  auto sa = Shingles(a, shingle_chars), sb = Shingles(b, shingle_chars);
  size_t inter = 0;
  for (uint64_t s : sa) inter += sb.count(s);
  const size_t uni = sa.size() + sb.size() - inter;
  return uni == 0 ? 1.0 : static_cast<double>(inter) / uni;
}

Result<std::vector<SftRecord>> FilterSft(const std::vector<SftRecord>& records,
                                         const SftFilterOptions& o,
                                         SftFilterReport* report) {
  SKILLDB_RETURN_IF_ERROR(ValidateSftFilterOptions(o));
  SftFilterReport rep;
  rep.read = records.size();
  const int rows = o.num_hashes / o.bands;
  std::vector<std::vector<uint64_t>> kept_sigs, kept_prompt_sigs;
  // band index -> band hash -> kept signatures with that band.
  std::vector<std::unordered_map<uint64_t, std::vector<size_t>>> buckets(
      o.bands);
  std::map<std::string, size_t> per_task, per_agent;
  std::vector<SftRecord> out;
  for (const SftRecord& r : records) {
    auto sig =
        MinHashSignature(r.completion, o.shingle_chars, o.num_hashes, o.seed);
    std::vector<uint64_t> band_hash(o.bands);
    for (int b = 0; b < o.bands; ++b) {
      uint64_t h = Mix(b + 1);
      for (int k = 0; k < rows; ++k) h = Mix(h ^ sig[b * rows + k]);
      band_hash[b] = h;
    }
    std::vector<uint64_t> prompt_sig;
    if (o.compare_prompts) {
      std::string prompt;
      for (const ChatMessage& m : r.messages) prompt += m.content + "\n";
      prompt_sig =
          MinHashSignature(prompt, o.shingle_chars, o.num_hashes, o.seed);
    }
    bool dup = false;
    for (int b = 0; b < o.bands && !dup; ++b) {
      auto it = buckets[b].find(band_hash[b]);
      if (it == buckets[b].end()) continue;
      for (size_t idx : it->second) {
        if (EstimatedJaccard(sig, kept_sigs[idx]) >= o.max_similarity &&
            (!o.compare_prompts ||
             EstimatedJaccard(prompt_sig, kept_prompt_sigs[idx]) >=
                 o.max_similarity)) {
          dup = true;
          break;
        }
      }
    }
    if (dup) {
      ++rep.near_duplicates;
      continue;
    }
    if (o.max_per_task > 0 && !r.task.empty() &&
        per_task[r.task] >= o.max_per_task) {
      ++rep.over_task_cap;
      continue;
    }
    if (o.max_per_agent > 0 && per_agent[r.agent] >= o.max_per_agent) {
      ++rep.over_agent_cap;
      continue;
    }
    const size_t idx = kept_sigs.size();
    for (int b = 0; b < o.bands; ++b) buckets[b][band_hash[b]].push_back(idx);
    kept_sigs.push_back(std::move(sig));
    kept_prompt_sigs.push_back(std::move(prompt_sig));
    ++per_task[r.task];
    ++per_agent[r.agent];
    out.push_back(r);
  }
  rep.kept = out.size();
  for (const auto& r : out) {
    ++rep.kept_per_agent[r.agent];
    if (!r.task.empty()) ++rep.kept_per_task[r.task];
  }
  if (report) *report = rep;
  return out;
}

}  // namespace skilldb::trainer
