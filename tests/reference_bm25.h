// An independent, plain BM25 for tests: documents as whitespace-split,
// lower-cased term lists, scores computed from scratch for every query with
// Lucene's formula (k1 1.2, b 0.75). Shares no code with the engine.
#ifndef SKILLDB_TESTS_REFERENCE_BM25_H_
#define SKILLDB_TESTS_REFERENCE_BM25_H_

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace skilldb::testing {

class ReferenceIndex {
 public:
  void Put(const std::string& id, const std::string& text) {
    std::vector<std::string> terms;
    std::istringstream in(text);
    std::string t;
    while (in >> t) {
      for (char& c : t)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      terms.push_back(t);
    }
    docs_[id] = terms;
  }
  void Delete(const std::string& id) { docs_.erase(id); }

  size_t size() const { return docs_.size(); }

  // The top k (id, score) pairs, ties by id ascending.
  std::vector<std::pair<std::string, double>> TopK(const std::string& query,
                                                   size_t k) const {
    if (docs_.empty()) return {};
    std::set<std::string> qterms;
    std::istringstream in(query);
    std::string t;
    while (in >> t) qterms.insert(t);
    const double n = static_cast<double>(docs_.size());
    double total = 0;
    for (const auto& [id, terms] : docs_)
      total += static_cast<double>(terms.size());
    const double avgdl = total / n;
    std::map<std::string, double> df;
    for (const auto& [id, terms] : docs_) {
      std::set<std::string> uniq(terms.begin(), terms.end());
      for (const auto& q : qterms) df[q] += uniq.count(q);
    }
    std::vector<std::pair<std::string, double>> scored;
    for (const auto& [id, terms] : docs_) {
      double score = 0;
      bool matched = false;
      for (const auto& q : qterms) {
        const double tf =
            static_cast<double>(std::count(terms.begin(), terms.end(), q));
        if (tf == 0) continue;
        matched = true;
        const double idf = std::log(1.0 + (n - df[q] + 0.5) / (df[q] + 0.5));
        const double dl = static_cast<double>(terms.size());
        score += idf * tf / (tf + 1.2 * (1.0 - 0.75 + 0.75 * dl / avgdl));
      }
      if (matched) scored.emplace_back(id, score);
    }
    std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (scored.size() > k) scored.resize(k);
    return scored;
  }

 private:
  std::map<std::string, std::vector<std::string>> docs_;
};

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_REFERENCE_BM25_H_
