#include "http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace imago::http::detail {

namespace ssl = boost::asio::ssl;

namespace {

// Mozilla's "intermediate" TLS 1.2 list: ECDHE key exchange only (forward secrecy) with AEAD
// ciphers. TLS 1.3 suites are OpenSSL's defaults, all of which are fine.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// The reason OpenSSL gives for the last failure (its error queue), emptied on the way.
std::string openssl_reason() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    const char* reason = ERR_reason_error_string(e);
    out = reason ? reason : buf;  // the last (outermost) reason is the most specific one
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

Status readable(const std::string& path, const char* what) {
  if (path.empty()) return Status::Invalid(std::string("--tls-") + what + " is empty");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return Status::Invalid(std::string("cannot read TLS ") + (what[0] == 'c' ? "certificate" : "key") + " '" +
                           path + "': " + std::strerror(errno));
  }
  std::fclose(f);
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_tls_context(const std::string& cert_file,
                                                       const std::string& key_file) {
  if (Status st = readable(cert_file, "cert"); !st.ok()) return st;
  if (Status st = readable(key_file, "key"); !st.ok()) return st;
  ERR_clear_error();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  // Never prompt on the terminal for a passphrase: an encrypted key fails to load instead.
  SSL_CTX_set_default_passwd_cb(native, [](char*, int, int, void*) { return 0; });
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                   ssl::context::single_dh_use);
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return Status::Internal("TLS: cannot require TLS 1.2: " + openssl_reason());
  }
  SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return Status::Internal("TLS: cipher list rejected: " + openssl_reason());
  }
  if (SSL_CTX_use_certificate_chain_file(native, cert_file.c_str()) != 1) {
    return Status::Invalid("cannot load TLS certificate '" + cert_file +
                           "' (a PEM certificate chain is expected): " + openssl_reason());
  }
  if (SSL_CTX_use_PrivateKey_file(native, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    std::string reason = openssl_reason();
    if (reason.find("mismatch") != std::string::npos) {  // OpenSSL compares it with the certificate
      return Status::Invalid("TLS key '" + key_file + "' does not match the certificate '" + cert_file +
                             "': " + reason);
    }
    return Status::Invalid("cannot load TLS key '" + key_file +
                           "' (an unencrypted PEM private key is expected): " + reason);
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return Status::Invalid("TLS key '" + key_file + "' does not match the certificate '" + cert_file +
                           "': " + openssl_reason());
  }
  return ctx;
}

}  // namespace imago::http::detail
