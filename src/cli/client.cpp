#include "cli/client.h"

#include <curl/curl.h>

namespace imago::cli {

namespace {

struct Sink {
  HttpResult* res;
  const std::function<bool(const char*, size_t)>* stream;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  const size_t len = size * n;
  if (s->stream && s->res->status >= 200 && s->res->status < 300) {
    return (*s->stream)(data, len) ? len : 0;
  }
  s->res->body.append(data, len);
  return len;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* res = static_cast<HttpResult*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    res->headers.clear();
    auto sp = line.find(' ');
    if (sp != std::string::npos) res->status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(value.begin());
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    res->headers[name] = value;
  }
  return size * n;
}

}  // namespace

boost::json::value HttpResult::json() const {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  return ec ? boost::json::value() : v;
}

std::string HttpResult::error_code() const {
  auto v = json();
  if (v.is_object() && v.as_object().contains("error") && v.at("error").is_object()) {
    if (auto* c = v.at("error").as_object().if_contains("code"); c && c->is_string())
      return std::string(c->as_string());
  }
  return "";
}

std::string HttpResult::error_text() const {
  if (status == 0) return "cannot reach the server: " + transport_error;
  auto v = json();
  if (v.is_object() && v.as_object().contains("error") && v.at("error").is_object()) {
    const auto& e = v.at("error").as_object();
    std::string code =
        e.contains("code") && e.at("code").is_string() ? std::string(e.at("code").as_string()) : "";
    std::string msg =
        e.contains("message") && e.at("message").is_string() ? std::string(e.at("message").as_string()) : "";
    return code + ": " + msg + " (HTTP " + std::to_string(status) + ")";
  }
  return "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + body.substr(0, 200));
}

HttpResult Client::call(const std::string& method, const std::string& path, const std::string& body,
                        const std::string& content_type) const {
  return perform(method, base_ + path, body, content_type, nullptr);
}

HttpResult Client::download(const std::string& method, const std::string& path, const std::string& body,
                            const std::function<bool(const char*, size_t)>& sink) const {
  return perform(method, base_ + path, body, "application/json", &sink);
}

HttpResult Client::perform(const std::string& method, const std::string& url, const std::string& body,
                           const std::string& content_type,
                           const std::function<bool(const char*, size_t)>* stream) const {
  HttpResult res;
  CURL* c = curl_easy_init();
  if (!c) {
    res.transport_error = "libcurl failed to initialize";
    return res;
  }
  curl_slist* headers = nullptr;
  if (!secret_.empty()) headers = curl_slist_append(headers, ("api-secret: " + secret_).c_str());
  if (!body.empty() || method == "POST" || method == "PUT") {
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
  }
  headers = curl_slist_append(headers, "Expect:");
  headers = curl_slist_append(headers, "User-Agent: imago-cli/0.1");
  Sink sink{&res, stream};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || method == "PUT" || method == "PATCH" || !body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  if (method == "GET") curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &res);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  // The api-secret goes only where it was sent: never follow a redirect elsewhere (SPEC 5.7).
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && res.status >= 200)) {
    res.transport_error = curl_easy_strerror(rc);
    if (rc != CURLE_WRITE_ERROR) res.status = 0;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  return res;
}

}  // namespace imago::cli
