// Library::Check: every table file's checksums, every segment's doc table,
// and the index against the records at the head.
#include <rocksdb/sst_file_reader.h>

#include <filesystem>
#include <unordered_map>

#include "library_impl.h"
#include "records.h"

namespace skilldb::internal {
namespace {

// At most this many problems of one kind are listed (a library whose index
// lost a segment would otherwise list every skill in it).
constexpr size_t kMaxListed = 20;

std::string FileName(const rocksdb::LiveFileMetaData& f) {
  std::string name = f.name;
  if (!name.empty() && name.front() == '/') name.erase(0, 1);
  return name;
}

}  // namespace

Result<CheckReport> LibraryImpl::Check() {
  CheckReport report;
  auto problem = [&report](std::string what) {
    report.problems.push_back(std::move(what));
  };

  // 1. Every block of every live table file. One reader per file, so each
  // damaged file is named (DB::VerifyChecksum stops at the first).
  std::vector<rocksdb::LiveFileMetaData> files;
  storage_->db()->GetLiveFilesMetaData(&files);
  rocksdb::Options reader_options;
  for (const auto& f : files) {
    const std::string name = FileName(f);
    const std::string full = (std::filesystem::path(f.db_path) / name).string();
    rocksdb::SstFileReader reader(reader_options);
    rocksdb::Status s = reader.Open(full);
    if (s.ok()) s = reader.VerifyChecksum();
    ++report.tables;
    report.table_bytes += f.size;
    if (!s.ok()) {
      problem("table " + name + " (column family " + f.column_family_name +
              ") is damaged: " + s.ToString());
    }
  }

  // 2. Every segment's doc table, then the index's live documents at the
  // head, by docid.
  auto state = this->state();
  std::unordered_map<uint32_t, std::string> indexed;  // docid -> id
  for (const auto& segment : state->segments) {
    ++report.segments;
    auto docs = segment->Docs(*storage_);
    if (!docs.ok()) {
      problem("index segment " + std::to_string(segment->meta().id) + ": " +
              docs.status().message());
      continue;
    }
    const retrieval::SegmentDocs& d = **docs;
    for (uint32_t docid = d.base(); docid < d.limit(); ++docid) {
      if (!d.dropped(docid) && d.LiveAt(docid, state->head)) {
        indexed.emplace(docid, std::string(d.id(docid)));
      }
    }
  }

  // 3. The records at the head: each live skill's document must be live in
  // the index under its id, and nothing else may be.
  size_t mismatches = 0;
  auto it = storage_->NewIterator(kRevisions, state->snap());
  it->SeekToFirst();
  uint64_t live = 0;
  while (it->Valid()) {
    std::string_view id_view;
    auto rev = DecodeRevisionAt(*it, &id_view);
    if (!rev.ok()) {
      problem("records: " + rev.status().message());
      break;
    }
    const std::string id(id_view);
    StoredRevision current = std::move(*rev);
    bool have = true;
    if (current.version > state->head) {
      it->Seek(RevisionKey(id, state->head));
      have = it->Valid() && it->key().starts_with(RevisionPrefix(id));
      if (have) {
        auto older = DecodeRevisionAt(*it, &id_view);
        if (!older.ok()) {
          problem("records: " + older.status().message());
          break;
        }
        current = std::move(*older);
      }
    }
    if (have && current.kind == RevisionKind::kPut) {
      ++live;
      auto found = indexed.find(current.docid);
      if (found == indexed.end() || found->second != id) {
        if (++mismatches <= kMaxListed) {
          problem("skill '" + id + "' (document " +
                  std::to_string(current.docid) +
                  ") is live in the records but not in the index");
        }
      } else {
        indexed.erase(found);
      }
    }
    it->Seek(id + '\x01');  // past the id's older revisions
  }
  if (!it->status().ok()) {
    problem("records: " + FromRocks(it->status(), "scanning").message());
  }
  for (const auto& [docid, id] : indexed) {
    if (++mismatches <= kMaxListed) {
      problem("document " + std::to_string(docid) + " ('" + id +
              "') is live in the index but not in the records");
    }
  }
  if (mismatches > kMaxListed) {
    problem(std::to_string(mismatches - kMaxListed) +
            " more index/record mismatches");
  }
  report.skills = live;
  if (state->head > 0 && state->head_commit.num_skills != live) {
    problem("the head commit counts " +
            std::to_string(state->head_commit.num_skills) +
            " skills; the records hold " + std::to_string(live));
  }
  if (state->head > 0 && state->head_counts) {
    auto counted = CountsByScan(*state, state->head);
    if (!counted.ok()) {
      problem("counting the head's skills: " + counted.status().message());
    } else if (*counted != *state->head_counts) {
      problem(
          "the head commit's counts by status, language and trust differ "
          "from the records'");
    }
  }
  return report;
}

}  // namespace skilldb::internal
