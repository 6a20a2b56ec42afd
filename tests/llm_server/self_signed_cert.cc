#include "self_signed_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace skilldb::scripted {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// A self-signed certificate for `key`, or nullptr.
Owned<X509> MakeCertificate(EVP_PKEY* key) {
  Owned<X509> cert(X509_new());
  if (!cert) return nullptr;
  X509_NAME* name = X509_get_subject_name(cert.get());
  const auto* cn = reinterpret_cast<const unsigned char*>("localhost");
  const bool ok =
      X509_set_version(cert.get(), 2) == 1 &&
      ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1) == 1 &&
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400) != nullptr &&
      X509_set_pubkey(cert.get(), key) == 1 &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0) ==
          1 &&
      X509_set_issuer_name(cert.get(), name) == 1 &&
      AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") &&
      AddExtension(cert.get(), NID_key_usage,
                   "critical,digitalSignature,keyCertSign") &&
      AddExtension(cert.get(), NID_subject_alt_name,
                   "DNS:localhost,IP:127.0.0.1") &&
      X509_sign(cert.get(), key, EVP_sha256()) > 0;
  if (!ok) return nullptr;
  return cert;
}

}  // namespace

Status WriteSelfSignedCertificate(const std::string& cert_path,
                                  const std::string& key_path) {
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return Status::Internal("self-signed cert: key generation failed");
  Owned<X509> cert = MakeCertificate(key.get());
  if (!cert) return Status::Internal("self-signed cert: signing failed");
  Owned<BIO> cert_out(BIO_new_file(cert_path.c_str(), "w"));
  if (!cert_out || PEM_write_bio_X509(cert_out.get(), cert.get()) != 1) {
    return Status::IOError("self-signed cert: cannot write " + cert_path);
  }
  Owned<BIO> key_out(BIO_new_file(key_path.c_str(), "w"));
  if (!key_out || PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr,
                                           nullptr, 0, nullptr, nullptr) != 1) {
    return Status::IOError("self-signed cert: cannot write " + key_path);
  }
  return Status::Ok();
}

}  // namespace skilldb::scripted
