// Configuration structs for opening, writing, reading and querying a
// library. Plain values with defaults; pass them by const reference.
#ifndef SKILLDB_OPTIONS_H_
#define SKILLDB_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb {

// How much each field of a skill counts in BM25: a field of weight w
// contributes its terms w times (to term frequencies and to the document
// length), as if its text were repeated w times; 0 leaves it unindexed.
// Weights are integers so that scores stay exactly those of plain BM25 over
// the repeated text. The default (all 1) is plain BM25 over the joined text;
// kSkillLibraryWeights is what the relevance evaluation chose for skill
// libraries (used by the default library the CLI creates).
struct FieldWeights {
  int title = 1;
  int summary = 1;
  int body = 1;
  int tags = 1;
  int ops = 1;
  int code = 1;
  bool operator==(const FieldWeights&) const = default;
};

// The weights the relevance evaluation over the seed library chose
// (data/relevance, scripts/relevance.sh): title 4 and tags 3 lift nDCG@10
// from 0.875 (all 1) to 0.894 with the code analyzer. Leaving code
// unindexed scores higher still (0.920) but loses identifiers that appear
// only in code (cuTensorMapEncodeTiled, do_bench), so code keeps weight 1.
inline constexpr FieldWeights kSkillLibraryWeights{4, 1, 1, 3, 1, 1};

// InvalidArgument unless every weight is in [0, 16] and one is positive.
Status ValidateFieldWeights(const FieldWeights& weights);
// Reads "title=3,summary=2" (fields not named keep weight 1); InvalidArgument
// naming the bad item.
Result<FieldWeights> ParseFieldWeights(std::string_view text);
// "title=3,summary=2,body=1,tags=2,ops=1,code=1"
std::string FormatFieldWeights(const FieldWeights& weights);

// How the index turns text into terms; fixed when a library is created.
// Stored on disk by name (AnalyzerName), so the values are free to change.
enum class Analyzer {
  kWhitespace,  // split on whitespace, nothing else
  kStandard,    // Unicode words, case folding, Snowball English stemming
  kCode,        // standard + identifier splitting (camelCase, snake_case,
                // __shfl_down_sync), keeping tokens such as sm_90 whole
};
std::string_view AnalyzerName(Analyzer analyzer);  // "whitespace", ...
// InvalidArgument naming the accepted names when `name` is unknown.
Result<Analyzer> ParseAnalyzer(std::string_view name);

// How to open a library.
struct Options {
  // Create the library (and missing parent directories) if absent.
  // Default: false.
  bool create_if_missing = false;
  // Fail with AlreadyExists if a library is already there. Default: false.
  bool error_if_exists = false;
  // Open without taking the write lock: works while another process holds
  // the library open for writing, sees the newest commit at open time, and
  // refuses writes with FailedPrecondition. Default: false.
  bool read_only = false;

  // Settings fixed when the library is created (ignored when opening an
  // existing one; Library::Info reports the stored values).
  Analyzer analyzer = Analyzer::kCode;  // Default: code.
  double k1 = 1.2;                      // BM25 k1, finite and >= 0
  double b = 0.75;                      // BM25 b, in [0, 1]
  // Per-field weights, each in [0, 16]. Default: all 1 (plain joined text).
  FieldWeights field_weights;

  // Sync the write-ahead log before a commit is acknowledged, so every
  // acknowledged commit survives a machine crash. With false, commits are
  // grouped and a machine crash (not a process crash) may lose the last
  // acknowledged ones; the library is still consistent. Default: true.
  bool sync_commits = true;

  // A writer that finds the library locked by another process retries for
  // this long before failing with Unavailable. Default: 10 s.
  int lock_timeout_ms = 10000;

  // RocksDB block cache for records and postings. Default: 256 MiB.
  size_t block_cache_bytes = size_t{256} << 20;
  // Posting lists kept in memory, ready to decode, so repeated terms skip
  // the storage lookup (0 disables). Default: 256 MiB.
  size_t posting_cache_bytes = size_t{256} << 20;

  // Merge policy: merge this many adjacent segments of similar size into
  // one. Default: 10.
  int merge_factor = 10;
  // A commit larger than this (encoded bytes) is written in stages before
  // its final atomic batch; staged bytes stay invisible until it commits.
  // Default: 128 MiB.
  size_t stage_bytes = size_t{128} << 20;
  // A commit builds its index in memory one segment at a time: once the
  // segment being built passes this footprint it is written out and the
  // next one begins (Lucene's RAM buffer). With stage_bytes, the bound on
  // what a commit of any size holds beyond its skills; a smaller value makes
  // more segments for the merges to join (same results). Must be positive.
  // Default: 128 MiB.
  size_t segment_build_bytes = size_t{128} << 20;
};

// Metadata and checks attached to one commit.
struct CommitOptions {
  std::string message;  // free text for the log
  std::string author;   // person or agent; "" = $USER or "unknown"
  std::string kind;     // "" = derived from the change ("put", "import", ...)
  // If set, the commit fails with Aborted unless the head is still exactly
  // this version (optimistic concurrency for read-modify-write callers).
  std::optional<Version> expected_head;
  // Run under the write lock with the head the commit will build on; a
  // non-OK result aborts the commit and is returned as is. It may read the
  // library as of that head (the read methods take no write lock) but must
  // not call the write methods.
  std::function<Status(Version head)> precondition;
};

// Which version a read sees.
struct ReadOptions {
  std::optional<Version> as_of;  // unset = the newest version
};

// The parts of a skill a query hit carries (QueryOptions::fields), so that
// an agent can build its prompt from the hits without a read per hit.
enum class HitField : uint32_t {
  kTitle = 1u << 0,
  kSummary = 1u << 1,
  kBody = 1u << 2,
  kCode = 1u << 3,
  kTags = 1u << 4,
  kOps = 1u << 5,
  kArch = 1u << 6,
  kLanguage = 1u << 7,
  kStatus = 1u << 8,
  kUsage = 1u << 9,  // the usage counters and the utility estimate
};

// A set of HitFields (a bit set; cheap to copy).
class HitFields {
 public:
  constexpr HitFields() = default;
  constexpr HitFields(std::initializer_list<HitField> fields) {
    for (HitField f : fields) bits_ |= static_cast<uint32_t>(f);
  }
  static constexpr HitFields None() { return HitFields(); }
  // Every field, usage included.
  static constexpr HitFields All() { return FromBits((1u << 10) - 1); }
  static constexpr HitFields FromBits(uint32_t bits) {
    HitFields f;
    f.bits_ = bits & ((1u << 10) - 1);
    return f;
  }

  constexpr bool has(HitField f) const {
    return (bits_ & static_cast<uint32_t>(f)) != 0;
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }
  // True when any field stored in the skill's record is wanted (everything
  // but kUsage), i.e. the hit needs one record read.
  constexpr bool needs_record() const {
    return (bits_ & ~static_cast<uint32_t>(HitField::kUsage)) != 0;
  }
  constexpr HitFields& operator|=(HitField f) {
    bits_ |= static_cast<uint32_t>(f);
    return *this;
  }
  constexpr bool operator==(const HitFields&) const = default;

 private:
  uint32_t bits_ = 0;
};

// "title", "summary", ... (the names ParseHitFields accepts).
std::string_view HitFieldName(HitField field);
// Reads a comma-separated list of field names ("title,body,usage"), or
// "all" or "none"; InvalidArgument naming the unknown item.
Result<HitFields> ParseHitFields(std::string_view text);
// The names of the fields in `fields`, comma-separated ("" for none).
std::string FormatHitFields(HitFields fields);

// The most hits one query may ask for; a larger k is InvalidArgument.
inline constexpr size_t kMaxQueryK = 100000;

// A BM25 query.
struct QueryOptions {
  // Hits wanted, at most kMaxQueryK (0 asks for none). Default: 10.
  size_t k = 10;
  std::optional<Version> as_of;  // unset = the newest version
  // Filters: a hit must carry every tag, every op and every arch listed
  // (case-insensitive), and the language if set.
  std::vector<std::string> tags;
  std::vector<std::string> ops;
  std::vector<std::string> arch;
  std::optional<Language> language;
  // Status filter: unset = active and candidate skills (deprecated and
  // pruned ones are hidden); set = exactly that status.
  std::optional<SkillStatus> status;
  // Search skills of every status (overrides `status`). Default: false.
  bool all_statuses = false;
  // What each hit carries besides id and score: fields of the skill's
  // record (one record read per hit, as of the queried version) and its
  // usage counters. Default: the title.
  HitFields fields = {HitField::kTitle};
  // Record one `retrieved` usage event for every hit returned (one batched
  // write; see Library::RecordUsage). Default: false.
  bool record_retrieved = false;
  // Score every match instead of block-max pruning; same results, slower.
  // For tests and benchmarks.
  bool exhaustive = false;
  // Traverse with block-max WAND instead of the default windowed block-max
  // MaxScore; same results. For tests and benchmarks comparing the two.
  // Ignored when `exhaustive` is set.
  bool block_max_wand = false;
};

}  // namespace skilldb

#endif  // SKILLDB_OPTIONS_H_
