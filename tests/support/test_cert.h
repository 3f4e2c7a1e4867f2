// A throwaway self-signed certificate for TLS tests, made with OpenSSL at test time (nothing is
// checked in, nothing downloaded). It is valid for 127.0.0.1 and "localhost" and is its own CA:
// clients verify the server against it.
#pragma once
#include <string>

namespace imago::testing {

struct TestCert {
  std::string cert_file;  // PEM certificate
  std::string key_file;   // PEM private key (unencrypted)
};

// Writes cert.pem and key.pem (ECDSA P-256, valid for one day) into `dir`. Throws on failure.
TestCert write_test_cert(const std::string& dir);

}  // namespace imago::testing
