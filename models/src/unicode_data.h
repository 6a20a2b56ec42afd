// The Unicode tables behind unicode.h, generated into unicode_data.cc by
// models/tools/gen_unicode_tables.py (see there for what each holds). Plain
// constant data, safe to read from any thread.
#ifndef SKILLDB_MODELS_SRC_UNICODE_DATA_H_
#define SKILLDB_MODELS_SRC_UNICODE_DATA_H_

#include <cstddef>
#include <cstdint>

namespace skilldb::models::internal {

struct CategoryRun {
  uint32_t first;
  uint8_t category;  // index into GeneralCategory (unicode.h)
};
struct CodePointPair {
  uint32_t from;
  uint32_t to;
};
struct LongLowercase {
  uint32_t from;
  uint32_t to[3];  // zero-terminated when shorter
};
struct CombiningClassRun {
  uint32_t first;
  uint32_t last;
  uint8_t combining_class;
};
struct Decomposition {
  uint32_t from;
  uint32_t first;
  uint32_t second;  // 0 for a singleton decomposition
};
struct Composition {
  uint32_t first;
  uint32_t second;
  uint32_t composite;
};

extern const char kUnicodeVersion[];
extern const CategoryRun kCategoryRuns[];
extern const size_t kCategoryRunCount;
extern const CodePointPair kLowercase[];
extern const size_t kLowercaseCount;
extern const LongLowercase kLowercaseLong[];
extern const size_t kLowercaseLongCount;
extern const CombiningClassRun kCombiningClass[];
extern const size_t kCombiningClassCount;
extern const Decomposition kDecomposition[];
extern const size_t kDecompositionCount;
extern const Composition kComposition[];
extern const size_t kCompositionCount;

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_UNICODE_DATA_H_
