// Encoding of a segment's doc table. Internal to the retrieval module.
//
// Layout, little-endian: u32 magic, u32 base, u32 count, u64 min_start,
// u64 max_start, u32 lengths[count], u32 start_deltas[count],
// u32 id_offsets[count + 1], id bytes.
#ifndef SKILLDB_RETRIEVAL_DOC_TABLE_H_
#define SKILLDB_RETRIEVAL_DOC_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/retrieval/segment.h"

namespace skilldb::retrieval::internal {

std::string EncodeDocTable(uint32_t base, const std::vector<uint32_t>& lengths,
                           const std::vector<DocVersion>& starts,
                           const std::vector<uint32_t>& id_offsets,
                           const std::string& ids);

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_DOC_TABLE_H_
