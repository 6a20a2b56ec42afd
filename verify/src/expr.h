// A tiny arithmetic evaluator for task.json: shape entries and FLOP/byte
// counts are expressions over named dims ("2*M*N*K", "H/2", "(N+1)*D").
//
// Grammar: expr := term (('+'|'-') term)*; term := factor (('*'|'/'|'%')
// factor)*; factor := number | name | '(' expr ')' | '-' factor.
// Evaluation is in double; '/' is true division and '%' needs integers.
// Pure functions; thread-safe.
#ifndef SKILLDB_VERIFY_EXPR_H_
#define SKILLDB_VERIFY_EXPR_H_

#include <string_view>

#include "skilldb/status.h"
#include "skilldb/verify/task.h"

namespace skilldb::verify::internal {

// Evaluates `text` with names bound by `dims` (and `params`, consulted when
// a name is not a dim). InvalidArgument naming the problem for a syntax
// error, an unknown name or division by zero.
Result<double> EvalExpr(std::string_view text, const Dims& dims,
                        const std::map<std::string, double>& params = {});

// Evaluates `text` and requires a positive integer result.
Result<int64_t> EvalPositiveInt(std::string_view text, const Dims& dims);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_EXPR_H_
