#include "fetch/fetcher.h"

#include <curl/curl.h>
#include <netdb.h>

#include <boost/url.hpp>
#include <chrono>
#include <memory>
#include <mutex>

#include "fetch/address.h"
#include "util/strings.h"

namespace imago::fetch {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string* out;
  size_t max;
  bool truncate;
  bool overflow = false;
};

size_t on_data(char* p, size_t size, size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  size_t len = size * n;
  if (s->out->size() + len > s->max) {
    if (!s->truncate) {
      s->overflow = true;
      return 0;  // aborts the transfer
    }
    s->out->append(p, s->max - s->out->size());
    return len;
  }
  s->out->append(p, len);
  return len;
}

int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<ParsedUrl> parse_fetch_url(std::string_view url) {
  auto r = boost::urls::parse_absolute_uri(url);
  if (!r) return Status::Invalid("not a valid absolute URL");
  const auto& u = *r;
  ParsedUrl out;
  out.scheme = to_lower(u.scheme());
  if (out.scheme != "http" && out.scheme != "https") {
    return Status::Invalid("only http and https URLs are allowed");
  }
  if (u.has_userinfo()) return Status::Invalid("URLs with user information are not allowed");
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
      out.host = u.host_ipv4_address().to_string();
      out.host_is_ip = true;
      break;
    case boost::urls::host_type::ipv6:
      out.host = u.host_ipv6_address().to_string();
      out.host_is_ip = true;
      break;
    case boost::urls::host_type::name:
      out.host = to_lower(u.host_name());
      break;
    default:
      return Status::Invalid("URL has no usable host");
  }
  if (out.host.empty()) return Status::Invalid("URL has no host");
  if (u.has_port()) {
    if (u.port().empty() || u.port_number() == 0) return Status::Invalid("URL has an invalid port");
    out.port = u.port_number();
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  return out;
}

Result<std::string> Fetcher::resolve_checked(const ParsedUrl& u) const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (u.host_is_ip) hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(u.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) {
    return Status::Unavailable("cannot resolve host '" + u.host + "': " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, &freeaddrinfo);
  std::string chosen;
  // Every address the name resolves to must be acceptable: a name that mixes public and
  // internal addresses is refused outright rather than filtered.
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    AddressClass c = classify(ai->ai_addr);
    std::string text = address_to_string(ai->ai_addr);
    if (!address_allowed(c, allow_private_)) {
      return Status::Invalid("refusing to fetch from host '" + u.host + "': its address " + text + " is " +
                             std::string(address_class_name(c)));
    }
    if (chosen.empty()) chosen = text;
  }
  if (chosen.empty()) return Status::Unavailable("host '" + u.host + "' has no IP address");
  return chosen;
}

Status Fetcher::check_target(std::string_view url) const {
  auto u = parse_fetch_url(url);
  if (!u.ok()) return u.status();
  auto a = resolve_checked(*u);
  return a.ok() ? Status::Ok() : a.status();
}

Result<FetchResponse> Fetcher::fetch(const FetchRequest& req) const {
  global_init();
  const int64_t deadline = mono_ms() + req.timeout_ms;
  std::string url = req.url;
  std::string method = req.method;
  std::string body = req.body;
  for (int hop = 0;; ++hop) {
    auto parsed = parse_fetch_url(url);
    if (!parsed.ok()) return parsed.status();
    auto addr = resolve_checked(*parsed);
    if (!addr.ok()) return addr.status();
    int64_t remaining = deadline - mono_ms();
    if (remaining <= 0) return Status::Unavailable("timed out fetching " + url_without_secrets(url));

    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), &curl_easy_cleanup);
    if (!h) return Status::Internal("curl_easy_init failed");
    CURL* c = h.get();
    FetchResponse out;
    Sink sink{&out.body, req.max_bytes, req.truncate_body};
    curl_slist* resolve = nullptr;
    curl_slist* headers = nullptr;
    struct ListFree {
      curl_slist** a;
      curl_slist** b;
      ~ListFree() {
        curl_slist_free_all(*a);
        curl_slist_free_all(*b);
      }
    } list_free{&resolve, &headers};
    if (!parsed->host_is_ip) {
      std::string pin = parsed->host + ":" + std::to_string(parsed->port) + ":" +
                        (addr->find(':') != std::string::npos ? "[" + *addr + "]" : *addr);
      resolve = curl_slist_append(resolve, pin.c_str());
      curl_easy_setopt(c, CURLOPT_RESOLVE, resolve);
    }
    for (const auto& [k, v] : req.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // environment proxies would bypass the pin
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min<int64_t>(remaining, 10000)));
    curl_easy_setopt(c, CURLOPT_USERAGENT, "imagod/0.1");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    if (!req.truncate_body) {
      curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(req.max_bytes));
    }
    if (method == "GET") {
      curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else if (method == "POST") {
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else {
      return Status::Internal("unsupported fetch method " + method);
    }

    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_FILESIZE_EXCEEDED || sink.overflow) {
      return Status(Code::kTooLarge, "content at " + url_without_secrets(url) + " is larger than " +
                                         std::to_string(req.max_bytes / (1 << 20)) + " MB");
    }
    if (rc != CURLE_OK) {
      if (rc == CURLE_OPERATION_TIMEDOUT)
        return Status::Unavailable("timed out fetching " + url_without_secrets(url));
      return Status::Unavailable("cannot fetch " + url_without_secrets(url) + ": " + curl_easy_strerror(rc));
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
    char* ct = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) out.content_type = ct;
    out.final_url = url;
    out.remote_ip = *addr;

    bool redirect =
        out.status == 301 || out.status == 302 || out.status == 303 || out.status == 307 || out.status == 308;
    char* loc = nullptr;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
    if (!redirect || req.max_redirects == 0 || !loc) return out;
    if (hop >= req.max_redirects)
      return Status::Invalid("too many redirects fetching " + url_without_secrets(req.url));
    std::string next = loc;
    if (out.status == 303 || ((out.status == 301 || out.status == 302) && method == "POST")) {
      method = "GET";
      body.clear();
    }
    url = next;
  }
}

}  // namespace imago::fetch
