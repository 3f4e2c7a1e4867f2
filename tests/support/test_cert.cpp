#include "support/test_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace imago::testing {

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Ext = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("write_test_cert: ") + what);
}

void add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  check(ext && X509_add_ext(cert, ext.get(), -1) == 1, "extension");
}

void write_pem(const std::string& path, bool key, EVP_PKEY* k, X509* c) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  check(f != nullptr, "open output file");
  int ok = key ? PEM_write_PrivateKey(f, k, nullptr, nullptr, 0, nullptr, nullptr) : PEM_write_X509(f, c);
  std::fclose(f);
  check(ok == 1, "write PEM");
}

}  // namespace

TestCert write_test_cert(const std::string& dir) {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "key generation");
  Cert cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("imago test"),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "sign");
  TestCert out{dir + "/cert.pem", dir + "/key.pem"};
  write_pem(out.cert_file, false, key.get(), cert.get());
  write_pem(out.key_file, true, key.get(), cert.get());
  return out;
}

}  // namespace imago::testing
