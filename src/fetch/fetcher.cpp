#include "fetch/fetcher.h"

#include <curl/curl.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/url.hpp>
#include <chrono>
#include <cstring>
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

int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Numeric text -> socket address (no lookup); false when the text is not an address.
bool numeric_address(const std::string& text, sockaddr_storage* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(text.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  std::memcpy(out, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof *out));
  freeaddrinfo(res);
  return true;
}

Result<std::vector<std::string>> system_resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) {
    return Status::Unavailable("cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, &freeaddrinfo);
  std::vector<std::string> out;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) out.push_back(address_to_string(ai->ai_addr));
  }
  return out;
}

bool is_redirect_status(long s) {
  return s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

// What the socket libcurl opens must be: the address that was checked. CURLOPT_RESOLVE already
// pins it; this refuses any other (a proxy, a resolve entry libcurl did not use) at connect time.
struct Pin {
  std::string address;
  bool allow_private = false;
  bool refused = false;
};

curl_socket_t open_pinned_socket(void* user, curlsocktype purpose, curl_sockaddr* a) {
  auto* pin = static_cast<Pin*>(user);
  const sockaddr* sa = &a->addr;
  if (purpose != CURLSOCKTYPE_IPCXN || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
      address_to_string(sa) != pin->address || !address_allowed(classify(sa), pin->allow_private)) {
    pin->refused = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

// One hop's transfer: the body goes to the sink unless this response is a redirect to follow.
struct Hop {
  CURL* curl = nullptr;
  StreamSink* sink = nullptr;
  bool follow = false;
  bool status_known = false;
  bool redirect = false;
  bool sink_stopped = false;
  long status = 0;

  // Status and headers are known once the body starts or the response ends. (libcurl fills in
  // CURLINFO_REDIRECT_URL only at the end, so the Location header itself is asked for.)
  void learn_status() {
    if (status_known) return;
    status_known = true;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_header* location = nullptr;
    const bool has_location = curl_easy_header(curl, "Location", 0, CURLH_HEADER, -1, &location) == CURLHE_OK;
    redirect = follow && is_redirect_status(status) && has_location;
    if (!redirect) sink->on_status(status);
  }
};

size_t on_hop_data(char* p, size_t size, size_t n, void* user) {
  auto* h = static_cast<Hop*>(user);
  size_t len = size * n;
  h->learn_status();
  if (h->redirect) return len;  // a redirect's own body is not the answer
  if (!h->sink->on_body(std::string_view(p, len))) {
    h->sink_stopped = true;
    return 0;  // aborts the transfer
  }
  return len;
}

// Collects a whole body for fetch().
class CollectSink : public StreamSink {
 public:
  CollectSink(std::string* out, size_t max, bool truncate) : out_(out), max_(max), truncate_(truncate) {}
  bool on_body(std::string_view b) override {
    if (out_->size() + b.size() > max_) {
      if (!truncate_) {
        overflow_ = true;
        return false;
      }
      out_->append(b.substr(0, max_ - out_->size()));
      return true;
    }
    out_->append(b);
    return true;
  }
  bool overflow() const { return overflow_; }

 private:
  std::string* out_;
  size_t max_;
  bool truncate_;
  bool overflow_ = false;
};

}  // namespace

Fetcher::Fetcher(bool allow_private, Resolver resolver)
    : allow_private_(allow_private), resolver_(resolver ? std::move(resolver) : Resolver(&system_resolve)) {}

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
  std::vector<std::string> found;
  if (u.host_is_ip) {
    found.push_back(u.host);
  } else {
    sockaddr_storage ss{};
    // A name such as "2130706433" is a number to the system's resolver: judged as an address.
    auto r = numeric_address(u.host, &ss) ? Result<std::vector<std::string>>(std::vector<std::string>{u.host})
                                          : resolver_(u.host);
    if (!r.ok()) return r.status();
    found = std::move(*r);
  }
  std::string chosen;
  // Every address the name resolves to must be acceptable: a name that mixes public and
  // internal addresses is refused outright rather than filtered.
  for (const std::string& a : found) {
    sockaddr_storage ss{};
    if (!numeric_address(a, &ss))
      return Status::Unavailable("host '" + u.host + "' resolved to a non-address");
    const auto* sa = reinterpret_cast<const sockaddr*>(&ss);
    AddressClass c = classify(sa);
    std::string text = address_to_string(sa);
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

Result<StreamResult> Fetcher::stream(const FetchRequest& req, StreamSink& sink) const {
  global_init();
  const int64_t deadline = req.timeout_ms > 0 ? mono_ms() + req.timeout_ms : 0;
  std::string url = req.url;
  std::string method = req.method;
  std::string body = req.body;
  if (method != "GET" && method != "POST") return Status::Internal("unsupported fetch method " + method);
  for (int hop = 0;; ++hop) {
    auto parsed = parse_fetch_url(url);
    if (!parsed.ok()) return parsed.status();
    auto addr = resolve_checked(*parsed);
    if (!addr.ok()) return addr.status();
    StreamResult out;
    out.final_url = url;
    out.remote_ip = *addr;
    int64_t remaining = 0;
    if (deadline != 0) {
      remaining = deadline - mono_ms();
      if (remaining <= 0) {
        out.end = StreamEnd::kTimedOut;
        out.error = "timed out";
        return out;
      }
    }

    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), &curl_easy_cleanup);
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> m(curl_multi_init(), &curl_multi_cleanup);
    if (!h || !m) return Status::Internal("cannot initialise libcurl");
    CURL* c = h.get();
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
    Pin pin{*addr, allow_private_};
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, &open_pinned_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &pin);
    for (const auto& [k, v] : req.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // environment proxies would bypass the pin
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    if (remaining > 0) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining));
    int64_t connect_ms = req.connect_timeout_ms;
    if (remaining > 0) connect_ms = std::min<int64_t>(connect_ms, remaining);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_ms));
    curl_easy_setopt(c, CURLOPT_USERAGENT, "imagod/0.1");
    Hop state;
    state.curl = c;
    state.sink = &sink;
    state.follow = req.max_redirects > 0;
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_hop_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
    if (req.max_bytes > 0 && !req.truncate_body) {
      curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(req.max_bytes));
    }
    if (method == "GET") {
      curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }

    // A multi handle rather than curl_easy_perform, so the sink can stop the transfer from the
    // outside (cancellation, its own time limits) within one poll interval.
    curl_multi_add_handle(m.get(), c);
    CURLcode done = CURLE_OK;
    bool finished = false;
    bool interrupted = false;
    for (;;) {
      int running = 0;
      curl_multi_perform(m.get(), &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(m.get(), &left)) {
        if (msg->msg == CURLMSG_DONE) {
          done = msg->data.result;
          finished = true;
        }
      }
      if (finished || running == 0) break;
      if (sink.should_stop()) {
        interrupted = true;
        break;
      }
      curl_multi_poll(m.get(), nullptr, 0, 20, nullptr);
    }
    curl_multi_remove_handle(m.get(), c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
    char* ct = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) out.content_type = ct;

    if (interrupted) {
      out.end = StreamEnd::kInterrupted;
      return out;
    }
    if (state.sink_stopped) {
      out.end = StreamEnd::kStoppedBySink;
      return out;
    }
    if (pin.refused) {
      return Status::Invalid("refusing to connect to host '" + parsed->host + "': not the checked address " +
                             *addr);
    }
    if (done == CURLE_FILESIZE_EXCEEDED) {
      out.end = StreamEnd::kTooLarge;
      return out;
    }
    if (done != CURLE_OK) {
      out.end = done == CURLE_OPERATION_TIMEDOUT ? StreamEnd::kTimedOut : StreamEnd::kFailed;
      out.error = curl_easy_strerror(done);
      return out;
    }
    state.learn_status();
    if (!state.redirect) {
      out.end = StreamEnd::kComplete;
      return out;
    }
    if (hop >= req.max_redirects)
      return Status::Invalid("too many redirects fetching " + url_without_secrets(req.url));
    char* loc = nullptr;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
    if (!loc) return Status::Invalid("unusable redirect fetching " + url_without_secrets(url));
    std::string next = loc;
    if (out.status == 303 || ((out.status == 301 || out.status == 302) && method == "POST")) {
      method = "GET";
      body.clear();
    }
    url = next;
  }
}

Result<FetchResponse> Fetcher::fetch(const FetchRequest& req) const {
  FetchResponse out;
  CollectSink sink(&out.body, req.max_bytes, req.truncate_body);
  auto r = stream(req, sink);
  if (!r.ok()) return r.status();
  const std::string where = url_without_secrets(r->final_url);
  switch (r->end) {
    case StreamEnd::kComplete:
      break;
    case StreamEnd::kStoppedBySink:
    case StreamEnd::kTooLarge:
      return Status(Code::kTooLarge, "content at " + where + " is larger than " +
                                         std::to_string(req.max_bytes / (1 << 20)) + " MB");
    case StreamEnd::kTimedOut:
      return Status::Unavailable("timed out fetching " + where);
    case StreamEnd::kInterrupted:
    case StreamEnd::kFailed:
      return Status::Unavailable("cannot fetch " + where + ": " + r->error);
  }
  out.status = r->status;
  out.content_type = std::move(r->content_type);
  out.final_url = std::move(r->final_url);
  out.remote_ip = std::move(r->remote_ip);
  return out;
}

}  // namespace imago::fetch
