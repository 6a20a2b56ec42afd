// Tensor-level collectives for the learner (torch inside; private).
#ifndef SKILLDB_TRAINER_DIST_INTERNAL_H_
#define SKILLDB_TRAINER_DIST_INTERNAL_H_

#include <torch/torch.h>

#include <vector>

#include "skilldb/status.h"
#include "skilldb/trainer/distributed.h"

namespace skilldb::trainer {

// Averages `tensor` (one contiguous tensor) over the ranks in place.
Status AllReduceMeanTensor(ProcessGroupHandle& group, torch::Tensor& tensor);
// Rank 0's `tensor` to every rank, in place.
Status BroadcastTensor(ProcessGroupHandle& group, torch::Tensor& tensor);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_DIST_INTERNAL_H_
