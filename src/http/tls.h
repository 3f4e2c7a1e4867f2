// Private to src/http: the server's TLS configuration (OpenSSL through Boost.Asio).
#pragma once
#include <memory>
#include <string>

#include "util/status.h"

namespace boost::asio::ssl {
class context;
}

namespace imago::http::detail {

// Loads a PEM certificate chain and its private key into a server context with the settings in
// docs/http.md: TLS 1.2 and 1.3 only, forward-secret AEAD ciphers, the server's cipher order, no
// compression, no renegotiation. A clear error names the file and the reason when anything fails.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& cert_file,
                                                                    const std::string& key_file);

}  // namespace imago::http::detail
