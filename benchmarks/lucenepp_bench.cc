// Lucene++ 3.0.8 driver: a speed reference only. Lucene++ (a C++ port of
// Lucene 3.0) has no BM25: it scores with Lucene 3's TF-IDF
// (DefaultSimilarity: sqrt(tf) * idf^2 * lengthNorm, coord, queryNorm), so
// its rankings differ from ours by design. Lucene 3 cannot keep term
// frequencies without positions, so the index carries positions. The field
// is indexed with the WhitespaceAnalyzer (the corpus is pre-tokenized),
// unlimited field length, and the index is optimized to one segment (its
// default LogByteSizeMergePolicy keeps doc ids in insertion order, so doc id =
// line number). Query: BooleanQuery of SHOULD TermQuery clauses, top-k via
// IndexSearcher::search (Lucene 3 has no WAND: every match is scored).
#include <lucene++/LuceneHeaders.h>
#include <lucene++/MMapDirectory.h>

#include <memory>
#include <string>

#include "bench_common.h"

namespace skilldb::bench {
namespace {

using namespace Lucene;  // NOLINT: the port's API lives in one namespace

const wchar_t* kField = L"body";

class LuceneppSearcher : public Searcher {
 public:
  explicit LuceneppSearcher(const IndexReaderPtr& reader)
      : searcher_(newLucene<IndexSearcher>(reader)) {}
  void Search(const Query& q, size_t k) override {
    BooleanQueryPtr bq = newLucene<BooleanQuery>();
    for (const auto& t : q.terms) {
      bq->add(newLucene<TermQuery>(newLucene<Term>(
                  kField, StringUtils::toUnicode(t))),
              BooleanClause::SHOULD);
    }
    top_ = searcher_->search(bq, static_cast<int32_t>(k));
  }
  void Hits(std::vector<Hit>* hits) override {
    hits->clear();
    for (const auto& sd : top_->scoreDocs) {
      hits->push_back({"", sd->doc, sd->score});
    }
  }

 private:
  IndexSearcherPtr searcher_;
  TopDocsPtr top_;
};

class LuceneppEngine : public Engine {
 public:
  std::string name() const override { return "lucene++"; }
  std::string notes() const override {
    return "TF-IDF only (no BM25 in Lucene++ 3.0.8): speed reference; "
           "positions kept (Lucene 3 cannot store tf without them); "
           "optimized to 1 segment; MMapDirectory";
  }
  void Build(const std::string& dir,
             const std::function<void(const DocFn&)>& docs,
             std::map<std::string, std::string>*) override {
    try {
      IndexWriterPtr writer = newLucene<IndexWriter>(
          FSDirectory::open(StringUtils::toUnicode(dir)),
          newLucene<WhitespaceAnalyzer>(), true,
          IndexWriter::MaxFieldLengthUNLIMITED);
      writer->setRAMBufferSizeMB(256);
      docs([&](int64_t, std::string_view, std::string_view text) {
        DocumentPtr doc = newLucene<Document>();
        doc->add(newLucene<Field>(
            kField,
            StringUtils::toUnicode(reinterpret_cast<const uint8_t*>(text.data()),
                                   static_cast<int32_t>(text.size())),
            Field::STORE_NO, Field::INDEX_ANALYZED));
        writer->addDocument(doc);
      });
      writer->optimize();
      writer->close();
    } catch (LuceneException& e) {
      Die("lucene++ build: " + StringUtils::toUTF8(e.getError()));
    }
  }
  void Open(const std::string& dir) override {
    try {
      reader_ = IndexReader::open(
          newLucene<MMapDirectory>(StringUtils::toUnicode(dir)), true);
      first_ = std::make_unique<LuceneppSearcher>(reader_);
    } catch (LuceneException& e) {
      Die("lucene++ open: " + StringUtils::toUTF8(e.getError()));
    }
  }
  std::unique_ptr<Searcher> NewSearcher() override {
    if (first_) return std::move(first_);
    return std::make_unique<LuceneppSearcher>(reader_);
  }

 private:
  IndexReaderPtr reader_;
  std::unique_ptr<LuceneppSearcher> first_;
};

}  // namespace
}  // namespace skilldb::bench

int main(int argc, char** argv) {
  skilldb::bench::LuceneppEngine engine;
  return skilldb::bench::Main(argc, argv, &engine);
}
