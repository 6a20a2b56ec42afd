#include <filesystem>

#include "context.h"

namespace skilldb::cli {

int RunInit(const GlobalArgs& g, const InitArgs& a, const Io& io) {
  bool is_default = false;
  const std::string path = ResolveDbPath(g, &is_default);
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.lock_timeout_ms = g.lock_timeout_ms;
  auto analyzer = ParseAnalyzer(a.analyzer);
  if (!analyzer.ok()) return Fail(g, io, analyzer.status());
  options.analyzer = *analyzer;
  options.k1 = a.k1;
  options.b = a.b;
  if (!a.field_weights.empty()) {
    auto weights = ParseFieldWeights(a.field_weights);
    if (!weights.ok()) return Fail(g, io, weights.status());
    options.field_weights = *weights;
  }
  auto library = Library::Open(options, path);
  if (!library.ok()) return Fail(g, io, library.status());
  const LibraryInfo info = (*library)->Info();
  if (g.json) {
    PrintJson(io, Json::parse(ToJson(info)));
  } else {
    *io.out << "created an empty library at " << EscapeLine(info.path)
            << " (analyzer " << AnalyzerName(info.analyzer) << ", k1 "
            << info.k1 << ", b " << info.b << ")\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
