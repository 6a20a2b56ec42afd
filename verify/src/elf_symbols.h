// Reads the dynamic symbol table and DT_NEEDED list of an ELF64 shared
// object, without loading it (loading would run the candidate's
// constructors). Pure functions over a file; thread-safe.
#ifndef SKILLDB_VERIFY_ELF_SYMBOLS_H_
#define SKILLDB_VERIFY_ELF_SYMBOLS_H_

#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

struct DynamicSymbol {
  std::string name;  // without version suffix
  bool defined = false;  // false: an import
  bool weak = false;
  bool function = false;  // STT_FUNC (or GNU_IFUNC)
};

struct ElfDynamicInfo {
  std::vector<DynamicSymbol> symbols;  // global and weak symbols only
  std::vector<std::string> needed;     // DT_NEEDED entries
};

// Corruption for a file that is not a little-endian ELF64 shared object or
// whose tables point outside the file; IOError if it cannot be read.
Result<ElfDynamicInfo> ReadElfDynamicInfo(const std::string& path);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_ELF_SYMBOLS_H_
