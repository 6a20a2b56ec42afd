#include "text_util.h"

#include <libstemmer.h>
#include <unicode/ubrk.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>

#include <memory>

#include "skilldb/retrieval/analyzer.h"

namespace skilldb::retrieval::internal {
namespace {

struct BreakIteratorCloser {
  void operator()(UBreakIterator* it) const { ubrk_close(it); }
};
struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// ICU break iterators are not thread-safe, and opening one costs a rule
// table lookup: keep one per thread, reset onto each new text.
UBreakIterator* ThreadWordIterator() {
  thread_local std::unique_ptr<UBreakIterator, BreakIteratorCloser> it = [] {
    UErrorCode err = U_ZERO_ERROR;
    UBreakIterator* raw = ubrk_open(UBRK_WORD, "en", nullptr, 0, &err);
    return std::unique_ptr<UBreakIterator, BreakIteratorCloser>(
        U_SUCCESS(err) ? raw : nullptr);
  }();
  return it.get();
}

sb_stemmer* ThreadStemmer() {
  thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> stemmer(
      sb_stemmer_new("english", nullptr));
  return stemmer.get();
}

bool IsAscii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

}  // namespace

void ForEachWord(std::string_view text,
                 const std::function<void(std::string_view)>& fn) {
  UBreakIterator* it = ThreadWordIterator();
  if (it == nullptr || text.empty()) return;
  UErrorCode err = U_ZERO_ERROR;
  // With a UTF-8 UText, break positions are byte offsets into `text`.
  UText* ut = utext_openUTF8(nullptr, text.data(),
                             static_cast<int64_t>(text.size()), &err);
  if (U_FAILURE(err)) return;
  ubrk_setUText(it, ut, &err);
  if (U_FAILURE(err)) {
    utext_close(ut);
    return;
  }
  int32_t start = ubrk_first(it);
  for (int32_t end = ubrk_next(it); end != UBRK_DONE;
       start = end, end = ubrk_next(it)) {
    // Rule status below UBRK_WORD_NONE_LIMIT marks spaces and punctuation.
    if (ubrk_getRuleStatus(it) < UBRK_WORD_NONE_LIMIT) continue;
    fn(text.substr(static_cast<size_t>(start),
                   static_cast<size_t>(end - start)));
  }
  // Detach the iterator from the UText before closing it.
  ubrk_setText(it, nullptr, 0, &err);
  utext_close(ut);
}

std::string FoldCase(std::string_view word) {
  if (IsAscii(word)) {
    std::string out(word);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  UErrorCode err = U_ZERO_ERROR;
  int32_t len16 = 0;
  u_strFromUTF8(nullptr, 0, &len16, word.data(),
                static_cast<int32_t>(word.size()), &err);
  err = U_ZERO_ERROR;
  std::u16string in(static_cast<size_t>(len16), u'\0');
  u_strFromUTF8WithSub(in.data(), len16, nullptr, word.data(),
                       static_cast<int32_t>(word.size()), 0xFFFD, nullptr,
                       &err);
  if (U_FAILURE(err)) return std::string(word);
  // Full folding can lengthen a string (e.g. U+00DF -> "ss"): size twice.
  std::u16string folded(in.size() * 3 + 4, u'\0');
  err = U_ZERO_ERROR;
  int32_t folded_len =
      u_strFoldCase(folded.data(), static_cast<int32_t>(folded.size()),
                    in.data(), len16, U_FOLD_CASE_DEFAULT, &err);
  if (U_FAILURE(err)) return std::string(word);
  std::string out(static_cast<size_t>(folded_len) * 3 + 4, '\0');
  int32_t out_len = 0;
  err = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_len,
              folded.data(), folded_len, &err);
  if (U_FAILURE(err)) return std::string(word);
  out.resize(static_cast<size_t>(out_len));
  return out;
}

std::string Stem(std::string_view folded_word) {
  sb_stemmer* stemmer = ThreadStemmer();
  if (stemmer == nullptr) return std::string(folded_word);
  const sb_symbol* stem = sb_stemmer_stem(
      stemmer, reinterpret_cast<const sb_symbol*>(folded_word.data()),
      static_cast<int>(folded_word.size()));
  if (stem == nullptr) return std::string(folded_word);
  return std::string(reinterpret_cast<const char*>(stem),
                     static_cast<size_t>(sb_stemmer_length(stemmer)));
}

void EmitTerm(std::string term, std::vector<std::string>* terms) {
  if (term.empty() || term.size() > kMaxTermBytes) return;
  terms->push_back(std::move(term));
}

}  // namespace skilldb::retrieval::internal
