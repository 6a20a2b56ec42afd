// A throwaway self-signed certificate for TLS tests: an EC P-256 key and a
// certificate for "localhost" and 127.0.0.1, valid for a day.
//
// Safe to call from any thread (OpenSSL 3 initializes itself).
#ifndef SKILLDB_TESTS_LLM_SERVER_SELF_SIGNED_CERT_H_
#define SKILLDB_TESTS_LLM_SERVER_SELF_SIGNED_CERT_H_

#include <string>

#include "skilldb/status.h"

namespace skilldb::scripted {

// Writes the certificate and its private key as PEM files. A client that
// trusts `cert_path` (as its CA file) can verify a server using both.
// Errors: Internal when OpenSSL fails, IOError when a file cannot be
// written.
Status WriteSelfSignedCertificate(const std::string& cert_path,
                                  const std::string& key_path);

}  // namespace skilldb::scripted

#endif  // SKILLDB_TESTS_LLM_SERVER_SELF_SIGNED_CERT_H_
