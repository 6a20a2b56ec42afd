// The on-disk layout: column families and key encodings. Internal.
//
// Column families and what they hold (keys big-endian so that RocksDB's
// bytewise order is numeric order):
//   default    meta: format, analyzer, BM25 params, head, counters, manifest
//   revisions  id \0 ~version(8)          -> kind(1) docid(4) skill JSON
//   commits    version(8)                 -> commit record JSON
//   changes    version(8) id              -> change kind(1)
//   dfs        term \0 ~version(8)        -> live document frequency (varint)
//   doctables  segment(4)                 -> doc table (retrieval format)
//   postings   segment(4) term            -> posting list (retrieval format)
//   ends       docid(4)                   -> version the doc stopped being live
//   hashes     content hash(16) id        -> "" (live skills at the head)
//   audit      seq(8)                     -> audit entry JSON
//   usage      id                         -> usage counters (merge operator)
//   tags       name                       -> version(8)
// The meta family also holds the proposal queue ("queue/" seq(8), queue.cc)
// and the usage spools' folded offsets ("spool/" name).
// "~version" is the bitwise complement, so a Seek to key(x, ~V) lands on the
// newest entry at or before V. Ids and terms never contain bytes below 0x20,
// so the \0 separator keeps every id's (term's) entries contiguous.
#ifndef SKILLDB_LIBSKILLDB_KEYS_H_
#define SKILLDB_LIBSKILLDB_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/skill.h"

namespace skilldb::internal {

// Column family names, in the order they are opened. Never rename.
inline constexpr const char* kColumnFamilies[] = {
    "default",  "revisions", "commits", "changes", "dfs",   "doctables",
    "postings", "ends",      "hashes",  "audit",   "usage", "tags"};
enum Cf : int {
  kMeta = 0,
  kRevisions,
  kCommits,
  kChanges,
  kDfs,
  kDocTables,
  kPostings,
  kEnds,
  kHashes,
  kAudit,
  kUsage,
  kTags,
  kNumCfs
};

// Meta keys.
inline constexpr std::string_view kFormatKey = "format";
// Bumped whenever the on-disk layout changes incompatibly.
inline constexpr std::string_view kFormatValue = "skilldb-2";
inline constexpr std::string_view kAnalyzerKey = "analyzer";
inline constexpr std::string_view kK1Key = "bm25.k1";
inline constexpr std::string_view kBKey = "bm25.b";
inline constexpr std::string_view kFieldWeightsKey = "field_weights";
inline constexpr std::string_view kHeadKey = "head";
inline constexpr std::string_view kOldestKey = "oldest";
inline constexpr std::string_view kNextDocidKey = "next_docid";
inline constexpr std::string_view kNextSegmentKey = "next_segment";
inline constexpr std::string_view kManifestKey = "manifest";
inline constexpr std::string_view kStagingKey = "staging";
// A token (increasing) of the newest bulk commit or merge: written by its final
// batch (through the log), and by a table file ingested after all of its
// bulk (through the MANIFEST). A reader that sees the first newer than the
// second opened between the two and must open again.
inline constexpr std::string_view kBulkCommittedKey = "bulk_committed";
inline constexpr std::string_view kBulkLoadedKey = "bulk_loaded";
inline constexpr std::string_view kAuditSeqKey = "audit_seq";
// Per spool file: how many bytes of it are already folded into usage.
inline constexpr std::string_view kSpoolKeyPrefix = "spool/";
// The durable proposal queue (queue.cc): one entry per queued proposal,
// "queue/" seq(8) -> its JSON (QueuedProposal's codec), and the last
// sequence handed out.
inline constexpr std::string_view kQueuePrefix = "queue/";
inline constexpr std::string_view kQueueSeqKey = "queue_seq";

// Revision kinds stored in the first byte of a revision value.
// On disk: never renumber.
enum class RevisionKind : uint8_t { kPut = 1, kDelete = 2 };

void PutBe32(std::string* out, uint32_t v);
void PutBe64(std::string* out, uint64_t v);
uint32_t GetBe32(const char* p);
uint64_t GetBe64(const char* p);
std::string Be32(uint32_t v);
std::string Be64(uint64_t v);
std::string Varint64(uint64_t v);
// False unless `s` is exactly one well-formed varint.
bool ParseVarint64(std::string_view s, uint64_t* v);

std::string RevisionKey(std::string_view id, Version version);
// Splits a revision key; false if malformed.
bool ParseRevisionKey(std::string_view key, std::string_view* id,
                      Version* version);
std::string RevisionPrefix(std::string_view id);  // id \0

std::string ChangeKey(Version version, std::string_view id);
std::string DfKey(std::string_view term, Version version);
std::string DfPrefix(std::string_view term);  // term \0
std::string PostingKey(uint32_t segment, std::string_view term);

// A stored revision value.
struct RevisionValue {
  RevisionKind kind = RevisionKind::kPut;
  uint32_t docid = 0;
  std::string_view skill_json;  // empty for deletes
};
std::string EncodeRevision(RevisionKind kind, uint32_t docid,
                           std::string_view skill_json);
bool DecodeRevision(std::string_view value, RevisionValue* out);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_KEYS_H_
