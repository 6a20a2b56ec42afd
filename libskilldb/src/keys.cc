#include "keys.h"

namespace skilldb::internal {

void PutBe32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

void PutBe64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

uint32_t GetBe32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t GetBe64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string Be32(uint32_t v) {
  std::string s;
  PutBe32(&s, v);
  return s;
}

std::string Be64(uint64_t v) {
  std::string s;
  PutBe64(&s, v);
  return s;
}

std::string Varint64(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

bool ParseVarint64(std::string_view s, uint64_t* v) {
  uint64_t result = 0;
  for (size_t i = 0; i < s.size() && i < 10; ++i) {
    const uint64_t byte = static_cast<unsigned char>(s[i]);
    result |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *v = result;
      return i + 1 == s.size();
    }
  }
  return false;
}

std::string RevisionPrefix(std::string_view id) {
  std::string key(id);
  key.push_back('\0');
  return key;
}

std::string RevisionKey(std::string_view id, Version version) {
  std::string key = RevisionPrefix(id);
  PutBe64(&key, ~version);
  return key;
}

bool ParseRevisionKey(std::string_view key, std::string_view* id,
                      Version* version) {
  if (key.size() < 10 || key[key.size() - 9] != '\0') return false;
  *id = key.substr(0, key.size() - 9);
  *version = ~GetBe64(key.data() + key.size() - 8);
  return true;
}

std::string ChangeKey(Version version, std::string_view id) {
  std::string key = Be64(version);
  key.append(id);
  return key;
}

std::string DfPrefix(std::string_view term) {
  std::string key(term);
  key.push_back('\0');
  return key;
}

std::string DfKey(std::string_view term, Version version) {
  std::string key = DfPrefix(term);
  PutBe64(&key, ~version);
  return key;
}

std::string PostingKey(uint32_t segment, std::string_view term) {
  std::string key = Be32(segment);
  key.append(term);
  return key;
}

std::string EncodeRevision(RevisionKind kind, uint32_t docid,
                           std::string_view skill_json) {
  std::string value(1, static_cast<char>(kind));
  PutBe32(&value, docid);
  value.append(skill_json);
  return value;
}

bool DecodeRevision(std::string_view value, RevisionValue* out) {
  if (value.size() < 5) return false;
  const uint8_t kind = static_cast<uint8_t>(value[0]);
  if (kind != static_cast<uint8_t>(RevisionKind::kPut) &&
      kind != static_cast<uint8_t>(RevisionKind::kDelete)) {
    return false;
  }
  out->kind = static_cast<RevisionKind>(kind);
  out->docid = GetBe32(value.data() + 1);
  out->skill_json = value.substr(5);
  return true;
}

}  // namespace skilldb::internal
