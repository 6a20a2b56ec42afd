#include "expr.h"

#include <cctype>
#include <cmath>
#include <string>

namespace skilldb::verify::internal {
namespace {

// Recursive-descent parser over the whole string; errors carry the offset.
class Parser {
 public:
  Parser(std::string_view text, const Dims& dims,
         const std::map<std::string, double>& params)
      : text_(text), dims_(dims), params_(params) {}

  Result<double> Parse() {
    SKILLDB_ASSIGN_OR_RETURN(double v, Expr());
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected character");
    return v;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::InvalidArgument("expression '" + std::string(text_) +
                                   "': " + std::string(what) + " at offset " +
                                   std::to_string(pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(
                                      text_[pos_]))) {
      ++pos_;
    }
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<double> Expr() {
    SKILLDB_ASSIGN_OR_RETURN(double v, Term());
    while (true) {
      if (Accept('+')) {
        SKILLDB_ASSIGN_OR_RETURN(double r, Term());
        v += r;
      } else if (Accept('-')) {
        SKILLDB_ASSIGN_OR_RETURN(double r, Term());
        v -= r;
      } else {
        return v;
      }
    }
  }

  Result<double> Term() {
    SKILLDB_ASSIGN_OR_RETURN(double v, Factor());
    while (true) {
      if (Accept('*')) {
        SKILLDB_ASSIGN_OR_RETURN(double r, Factor());
        v *= r;
      } else if (Accept('/')) {
        SKILLDB_ASSIGN_OR_RETURN(double r, Factor());
        if (r == 0) return Error("division by zero");
        v /= r;
      } else if (Accept('%')) {
        SKILLDB_ASSIGN_OR_RETURN(double r, Factor());
        if (r == 0 || v != std::floor(v) || r != std::floor(r)) {
          return Error("'%' needs nonzero integers");
        }
        v = std::fmod(v, r);
      } else {
        return v;
      }
    }
  }

  Result<double> Factor() {
    SkipSpace();
    if (Accept('-')) {
      SKILLDB_ASSIGN_OR_RETURN(double v, Factor());
      return -v;
    }
    if (Accept('(')) {
      SKILLDB_ASSIGN_OR_RETURN(double v, Expr());
      if (!Accept(')')) return Error("missing ')'");
      return v;
    }
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(std::string(text_.substr(pos_)), &used);
      } catch (...) {
        return Error("bad number");
      }
      pos_ += used;
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
              text_[pos_] == '_')) {
        ++pos_;
      }
      const std::string name(text_.substr(start, pos_ - start));
      if (auto it = dims_.find(name); it != dims_.end()) {
        return static_cast<double>(it->second);
      }
      if (auto it = params_.find(name); it != params_.end()) return it->second;
      return Error("unknown name '" + name + "'");
    }
    return Error("unexpected character");
  }

  std::string_view text_;
  const Dims& dims_;
  const std::map<std::string, double>& params_;
  size_t pos_ = 0;
};

}  // namespace

Result<double> EvalExpr(std::string_view text, const Dims& dims,
                        const std::map<std::string, double>& params) {
  if (text.empty()) return Status::InvalidArgument("empty expression");
  return Parser(text, dims, params).Parse();
}

Result<int64_t> EvalPositiveInt(std::string_view text, const Dims& dims) {
  SKILLDB_ASSIGN_OR_RETURN(double v, EvalExpr(text, dims));
  if (!(v >= 1) || v != std::floor(v) || v > 9.0e15) {
    return Status::InvalidArgument("expression '" + std::string(text) +
                                   "' is not a positive integer (" +
                                   std::to_string(v) + ")");
  }
  return static_cast<int64_t>(v);
}

}  // namespace skilldb::verify::internal
