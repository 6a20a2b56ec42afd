// The OpenAPI 3.0 description of the server's routes (GET /openapi.json).
// Internal.
#ifndef SKILLDB_SERVER_OPENAPI_H_
#define SKILLDB_SERVER_OPENAPI_H_

#include <string>

namespace skilldb::server::internal {

// The document, compact JSON. Stateless.
const std::string& OpenApiJson();

}  // namespace skilldb::server::internal

#endif  // SKILLDB_SERVER_OPENAPI_H_
