// The durable proposal queue (proposal_queue.h): entries in the meta column
// family under "queue/" seq(8), each the JSON of a QueuedProposal.
//
// Every state change is one synced write batch, ordered under the write
// lock, so a crash leaves each entry in a state it was acknowledged in. The
// writer keeps the sequence numbers of the queued entries in memory (loaded
// by RecoverQueue on open) so that a claim is a set lookup, not a scan. A
// proposal's final state is written by CommitProposal in the batch of its
// commit or audit entry (proposal.cc, through PutQueued).
#include <algorithm>

#include "batch_writer.h"
#include "library_impl.h"
#include "skilldb/json.h"
#include "skilldb/util/clock.h"

namespace skilldb::internal {
namespace {

std::string QueueKey(uint64_t seq) {
  return std::string(kQueuePrefix) + Be64(seq);
}

void CountState(QueueState state, QueueCounts* c) {
  switch (state) {
    case QueueState::kQueued:
      ++c->queued;
      break;
    case QueueState::kVerifying:
      ++c->verifying;
      break;
    case QueueState::kCommitted:
      ++c->committed;
      break;
    case QueueState::kRejected:
      ++c->rejected;
      break;
    case QueueState::kConflict:
      ++c->conflict;
      break;
    case QueueState::kFailed:
      ++c->failed;
      break;
  }
}

}  // namespace

Result<QueuedProposal> LibraryImpl::DecodeQueued(std::string_view value,
                                                 uint64_t seq) const {
  auto q = FromJson<QueuedProposal>(value);
  if (!q.ok()) {
    return Status::Corruption("queued proposal " + QueueIdFor(seq) +
                              " is malformed: " + q.status().message());
  }
  return q;
}

Result<std::optional<QueuedProposal>> LibraryImpl::ReadQueued(
    uint64_t seq) const {
  SKILLDB_ASSIGN_OR_RETURN(auto value, storage_->Get(kMeta, QueueKey(seq)));
  if (!value) return std::optional<QueuedProposal>();
  SKILLDB_ASSIGN_OR_RETURN(QueuedProposal q, DecodeQueued(*value, seq));
  return std::optional<QueuedProposal>(std::move(q));
}

std::pair<std::string, std::string> LibraryImpl::EncodeQueued(
    QueuedProposal* q) const {
  q->updated_ms = util::NowUnixMs();
  return {QueueKey(q->seq), ToJson(*q)};
}

void LibraryImpl::IndexQueued(const QueuedProposal& q) {
  if (q.state == QueueState::kQueued) {
    queued_seqs_.insert(q.seq);
  } else {
    queued_seqs_.erase(q.seq);
  }
}

Status LibraryImpl::WriteQueued(QueuedProposal* q,
                                std::optional<uint64_t> last_seq) {
  rocksdb::WriteBatch batch;
  auto [key, value] = EncodeQueued(q);
  batch.Put(storage_->cf(kMeta), key, value);
  if (last_seq) {
    batch.Put(storage_->cf(kMeta), std::string(kQueueSeqKey), Be64(*last_seq));
  }
  SKILLDB_RETURN_IF_ERROR(storage_->Write(&batch, /*sync=*/true));
  IndexQueued(*q);
  return Status::Ok();
}

Status LibraryImpl::ScanQueue(
    const std::function<bool(const QueuedProposal&)>& fn) const {
  auto it = storage_->NewIterator(kMeta);
  const std::string prefix(kQueuePrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    if (it->key().size() != prefix.size() + 8) {
      return Status::Corruption("malformed queue key");
    }
    const uint64_t seq = GetBe64(it->key().data() + prefix.size());
    SKILLDB_ASSIGN_OR_RETURN(
        QueuedProposal q,
        DecodeQueued(std::string_view(it->value().data(), it->value().size()),
                     seq));
    if (!fn(q)) break;
  }
  return FromRocks(it->status(), "reading the proposal queue");
}

// A writer's open: proposals a dead writer was verifying are queued again
// (their attempts say so), in one batch, and the queued ones are indexed.
Status LibraryImpl::RecoverQueue() {
  std::lock_guard<std::mutex> lock(write_mu_);
  SKILLDB_ASSIGN_OR_RETURN(auto last, storage_->Get(kMeta, kQueueSeqKey));
  if (last && last->size() != 8) {
    return Status::Corruption("malformed queue sequence");
  }
  queue_seq_ = last ? GetBe64(last->data()) : 0;
  std::vector<QueuedProposal> interrupted;
  SKILLDB_RETURN_IF_ERROR(ScanQueue([&](const QueuedProposal& q) {
    if (q.state == QueueState::kQueued) queued_seqs_.insert(q.seq);
    if (q.state == QueueState::kVerifying) interrupted.push_back(q);
    return true;
  }));
  if (interrupted.empty()) return Status::Ok();
  rocksdb::WriteBatch batch;
  for (QueuedProposal& q : interrupted) {
    q.state = QueueState::kQueued;
    auto [key, value] = EncodeQueued(&q);
    batch.Put(storage_->cf(kMeta), key, value);
  }
  SKILLDB_RETURN_IF_ERROR(storage_->Write(&batch, /*sync=*/true)
                              .WithContext("re-queueing interrupted proposals"));
  for (const QueuedProposal& q : interrupted) IndexQueued(q);
  return Status::Ok();
}

Result<QueuedProposal> LibraryImpl::Enqueue(const QueuedRequest& request) {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateQueuedRequest(request));
  std::lock_guard<std::mutex> lock(write_mu_);
  QueuedProposal q;
  q.seq = queue_seq_ + 1;
  q.id = QueueIdFor(q.seq);
  q.state = QueueState::kQueued;
  q.submitted_ms = util::NowUnixMs();
  q.request = request;
  q.request.options.queue_id.clear();
  SKILLDB_RETURN_IF_ERROR(WriteQueued(&q, q.seq));
  queue_seq_ = q.seq;
  return q;
}

Result<QueuedProposal> LibraryImpl::GetQueued(std::string_view id) {
  SKILLDB_ASSIGN_OR_RETURN(uint64_t seq, ParseQueueId(id));
  SKILLDB_ASSIGN_OR_RETURN(auto q, ReadQueued(seq));
  if (!q) return Status::NotFound("no queued proposal " + QueueIdFor(seq));
  return std::move(*q);
}

Result<std::vector<QueuedProposal>> LibraryImpl::ListQueued(
    const QueueListOptions& options) {
  std::vector<QueuedProposal> out;
  SKILLDB_RETURN_IF_ERROR(ScanQueue([&](const QueuedProposal& q) {
    if (q.seq <= options.after_seq) return true;
    if (options.state && q.state != *options.state) return true;
    out.push_back(q);
    return true;
  }));
  if (options.limit > 0 && out.size() > options.limit) {
    out.erase(out.begin(), out.end() - static_cast<ptrdiff_t>(options.limit));
  }
  return out;
}

Result<QueueCounts> LibraryImpl::CountQueued() {
  QueueCounts counts;
  SKILLDB_RETURN_IF_ERROR(ScanQueue([&](const QueuedProposal& q) {
    CountState(q.state, &counts);
    return true;
  }));
  return counts;
}

Result<std::optional<QueuedProposal>> LibraryImpl::ClaimQueued() {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  while (!queued_seqs_.empty()) {
    const uint64_t seq = *queued_seqs_.begin();
    SKILLDB_ASSIGN_OR_RETURN(auto q, ReadQueued(seq));
    if (!q || q->state != QueueState::kQueued) {
      queued_seqs_.erase(seq);  // stale index entry
      continue;
    }
    q->state = QueueState::kVerifying;
    q->attempts += 1;
    SKILLDB_RETURN_IF_ERROR(WriteQueued(&*q, std::nullopt));
    return q;
  }
  return std::optional<QueuedProposal>();
}

Status LibraryImpl::FinishQueued(std::string_view id, QueueState state,
                                 const std::vector<std::string>& reasons) {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  if (state != QueueState::kConflict && state != QueueState::kFailed &&
      state != QueueState::kQueued) {
    return Status::FailedPrecondition(
        "FinishQueued ends a proposal as conflict, failed or queued, not " +
        std::string(QueueStateName(state)) + " (a commit decides those)");
  }
  SKILLDB_ASSIGN_OR_RETURN(uint64_t seq, ParseQueueId(id));
  std::lock_guard<std::mutex> lock(write_mu_);
  SKILLDB_ASSIGN_OR_RETURN(auto q, ReadQueued(seq));
  if (!q) return Status::NotFound("no queued proposal " + QueueIdFor(seq));
  if (q->state != QueueState::kVerifying) {
    return Status::FailedPrecondition(
        "queued proposal " + q->id + " is " +
        std::string(QueueStateName(q->state)) + ", not verifying");
  }
  q->state = state;
  q->reasons = reasons;
  return WriteQueued(&*q, std::nullopt);
}

Result<std::optional<QueuedProposal>> LibraryImpl::QueueEntryForCommit(
    const ProposalOptions& options) const {
  if (options.queue_id.empty()) return std::optional<QueuedProposal>();
  SKILLDB_ASSIGN_OR_RETURN(uint64_t seq, ParseQueueId(options.queue_id));
  SKILLDB_ASSIGN_OR_RETURN(auto q, ReadQueued(seq));
  if (!q) return Status::NotFound("no queued proposal " + QueueIdFor(seq));
  if (IsFinalQueueState(q->state)) {
    return Status::FailedPrecondition(
        "queued proposal " + q->id + " is already " +
        std::string(QueueStateName(q->state)));
  }
  return q;
}

}  // namespace skilldb::internal
