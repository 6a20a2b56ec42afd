// The static screen: before a candidate's shared object is loaded, its
// dynamic imports and exports are checked against the protocol.
//
// Imports must come from an allowlist (CUDA launch/memory calls on the given
// stream, libc memory/string/printf, libm, the C++ runtime); everything that
// could create streams, threads or processes, touch timers, clocks, events,
// files, sockets or the dynamic loader is refused with the symbol's name.
// Exports may not shadow timing, synchronisation, launch or loader symbols
// (an attempt to interpose on the verifier's timer). The runtime layers
// (launch interposition, CUPTI, seccomp) catch what a static screen cannot,
// such as raw system calls.
//
// Pure functions; thread-safe.
#ifndef SKILLDB_VERIFY_SYMBOL_POLICY_H_
#define SKILLDB_VERIFY_SYMBOL_POLICY_H_

#include <string_view>
#include <vector>

#include "elf_symbols.h"
#include "skilldb/verify/finding.h"
#include "skilldb/verify/task.h"

namespace skilldb::verify::internal {

// True if a candidate in `language` may import `name`.
bool ImportAllowed(SourceLanguage language, std::string_view name);
// True if defining (exporting) `name` would shadow a protected symbol.
bool ExportForbidden(std::string_view name);

// Findings (kForbiddenImport, kForbiddenExport, kLoadError for a missing
// `launch` or an unexpected DT_NEEDED library) for `info`; empty if clean.
std::vector<Finding> ScreenSymbols(SourceLanguage language,
                                   const ElfDynamicInfo& info);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_SYMBOL_POLICY_H_
