// The CLI's HTTP client (libcurl): JSON calls with the api-secret header, SPEC 7 errors turned
// into one readable line, and streaming downloads for audio.
#pragma once
#include <boost/json.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace imago::cli {

struct HttpResult {
  long status = 0;  // 0: no answer (connection refused, timeout)
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string transport_error;
  boost::json::value json() const;  // null when the body is not JSON
  // "CODE: message (HTTP 404)" from the SPEC 7 envelope, or a transport description.
  std::string error_text() const;
  std::string error_code() const;
};

class Client {
 public:
  Client(std::string base_url, std::string secret) : base_(std::move(base_url)), secret_(std::move(secret)) {}
  const std::string& base_url() const { return base_; }
  const std::string& secret() const { return secret_; }

  HttpResult call(const std::string& method, const std::string& path, const std::string& body = "",
                  const std::string& content_type = "application/json") const;
  // Streams the response body into `sink` when the status is 2xx (errors are buffered instead).
  HttpResult download(const std::string& method, const std::string& path, const std::string& body,
                      const std::function<bool(const char*, size_t)>& sink) const;

 private:
  HttpResult perform(const std::string& method, const std::string& url, const std::string& body,
                     const std::string& content_type,
                     const std::function<bool(const char*, size_t)>* sink) const;
  std::string base_;
  std::string secret_;
};

}  // namespace imago::cli
