// Xapian 1.4 driver: terms added one occurrence at a time (Document::add_term,
// so wdf = tf and the document length = token count, exactly as ours), no
// positions; BM25Weight(k1 1.2, k2 0, k3 1, b 0.75, min_normlen 0): the
// closest Xapian allows to Lucene's BM25. What still differs: Xapian's idf is
// ln((N - n + 0.5) / (n + 0.5)) (Robertson's, halved towards 1 for frequent
// terms to stay positive) and its tf part carries the (k1 + 1) factor.
// The query is OP_OR of the terms; Xapian prunes with its max-weight bounds.
#include <xapian.h>

#include <memory>
#include <string>

#include "bench_common.h"

namespace skilldb::bench {
namespace {

Xapian::BM25Weight LuceneLikeBm25() {
  return Xapian::BM25Weight(/*k1=*/1.2, /*k2=*/0.0, /*k3=*/1.0, /*b=*/0.75,
                            /*min_normlen=*/0.0);
}

class XapianSearcher : public Searcher {
 public:
  explicit XapianSearcher(const std::string& dir) : db_(dir), enquire_(db_) {
    enquire_.set_weighting_scheme(LuceneLikeBm25());
  }
  void Search(const Query& q, size_t k) override {
    enquire_.set_query(Xapian::Query(Xapian::Query::OP_OR, q.terms.begin(),
                                     q.terms.end()));
    mset_ = enquire_.get_mset(0, static_cast<Xapian::doccount>(k));
  }
  void Hits(std::vector<Hit>* hits) override {
    hits->clear();
    for (auto it = mset_.begin(); it != mset_.end(); ++it) {
      hits->push_back({"", static_cast<int64_t>(*it) - 1, it.get_weight()});
    }
  }

 private:
  Xapian::Database db_;
  Xapian::Enquire enquire_;
  Xapian::MSet mset_;
};

class XapianEngine : public Engine {
 public:
  std::string name() const override { return "xapian"; }
  std::string notes() const override {
    return "BM25Weight(1.2,0,1,0.75,min_normlen=0); idf ln((N-n+.5)/(n+.5)) "
           "(not Lucene's); no positions; glass backend, not compacted";
  }
  void Build(const std::string& dir,
             const std::function<void(const DocFn&)>& docs,
             std::map<std::string, std::string>*) override {
    Xapian::WritableDatabase db(dir, Xapian::DB_CREATE_OR_OVERWRITE);
    docs([&](int64_t docno, std::string_view, std::string_view text) {
      Xapian::Document doc;
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        if (end > start) doc.add_term(std::string(text.substr(start, end - start)));
        start = end + 1;
      }
      // Xapian numbers documents 1, 2, ... in insertion order: line + 1.
      if (db.add_document(doc) != static_cast<Xapian::docid>(docno + 1)) {
        Die("xapian assigned an unexpected docid");
      }
    });
    db.commit();
    db.close();
  }
  void Open(const std::string& dir) override {
    dir_ = dir;
    first_ = std::make_unique<XapianSearcher>(dir);  // Database + Enquire
  }
  std::unique_ptr<Searcher> NewSearcher() override {
    // Xapian::Database is not thread-safe: one per thread.
    if (first_) return std::move(first_);
    return std::make_unique<XapianSearcher>(dir_);
  }

 private:
  std::string dir_;
  std::unique_ptr<XapianSearcher> first_;
};

}  // namespace
}  // namespace skilldb::bench

int main(int argc, char** argv) {
  skilldb::bench::XapianEngine engine;
  return skilldb::bench::Main(argc, argv, &engine);
}
