#include "context.h"

namespace skilldb::cli {
namespace {

void PrintHuman(const Io& io, const std::string& text, const QueryResult& r) {
  *io.out << "version " << r.version << ": " << r.hits.size()
          << (r.hits.size() == 1 ? " hit" : " hits") << " for \""
          << EscapeLine(text) << "\"\n";
  for (size_t i = 0; i < r.hits.size(); ++i) {
    const Hit& h = r.hits[i];
    *io.out << (i + 1 < 10 ? " " : "") << i + 1 << "  " << FormatScore(h.score)
            << "  " << EscapeLine(h.id) << "  " << EscapeLine(h.title) << "\n";
  }
}

}  // namespace

Result<QueryOptions> MakeQueryOptions(const QueryArgs& a, bool json) {
  // main.cc range-checks --k; this guards callers that build QueryArgs.
  if (a.k == 0 || a.k > kMaxQueryK) {
    return Status::InvalidArgument("--k must be between 1 and " +
                                   std::to_string(kMaxQueryK));
  }
  QueryOptions o;
  o.k = a.k;
  o.as_of = a.as_of;
  o.tags = a.tags;
  o.ops = a.ops;
  o.arch = a.arch;
  if (!a.language.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.language, ParseLanguage(a.language));
  }
  if (!a.status.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.status, ParseSkillStatus(a.status));
  }
  SKILLDB_ASSIGN_OR_RETURN(o.fields, ParseHitFields(a.fields));
  if (!json) o.fields |= HitField::kTitle;  // human output prints titles
  return o;
}

namespace {

// One query per non-empty line of the file, all as of one version.
int RunBatch(const GlobalArgs& g, const QueryArgs& a, const QueryOptions& o,
             Library& library, const Io& io) {
  auto text = ReadInput(a.file, io);
  if (!text.ok()) return Fail(g, io, text.status());
  std::vector<std::string> queries;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) queries.push_back(std::move(line));
    pos = end + 1;
  }
  Progress progress(g.progress, io.err,
                    "running " + std::to_string(queries.size()) + " queries",
                    "");
  progress.StartTicking();
  auto results = library.QueryBatch(o, queries, a.threads);
  progress.Finish();
  if (!results.ok()) return Fail(g, io, results.status());
  for (size_t i = 0; i < queries.size(); ++i) {
    const QueryResult& r = (*results)[i];
    if (g.json) {
      Json line{{"query", queries[i]}};
      line.update(Json::parse(ToJson(r)));
      *io.out << util::DumpLossy(line)
              << "\n";
    } else {
      PrintHuman(io, queries[i], r);
    }
  }
  return kExitOk;
}

}  // namespace

int RunQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io) {
  if (a.text.empty() == a.file.empty()) {
    return Fail(g, io,
                Status::InvalidArgument(
                    "give either a query TEXT or --file FILE, not both "
                    "or neither"));
  }
  if (a.rerank == "dense") return RunDenseQuery(g, a, io);
  if (!a.rerank.empty()) return RunRerankedQuery(g, a, io);
  auto options = MakeQueryOptions(a, g.json);
  if (!options.ok()) return Fail(g, io, options.status());
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  if (!a.file.empty()) return RunBatch(g, a, *options, **library, io);
  auto result = (*library)->Query(*options, a.text);
  if (!result.ok()) return Fail(g, io, result.status());
  if (g.json) {
    PrintJson(io, Json::parse(ToJson(*result)));
  } else {
    PrintHuman(io, a.text, *result);
  }
  return kExitOk;
}

}  // namespace skilldb::cli
