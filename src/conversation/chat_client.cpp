#include "conversation/chat_client.h"

#include <curl/curl.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <mutex>

#include "fetch/fetcher.h"

namespace imago::conversation {

namespace json = boost::json;

std::string_view chat_outcome_name(ChatOutcome o) {
  switch (o) {
    case ChatOutcome::kCompleted:
      return "completed";
    case ChatOutcome::kCancelled:
      return "cancelled";
    case ChatOutcome::kTimedOut:
      return "timed_out";
    case ChatOutcome::kRefused:
      return "refused";
    case ChatOutcome::kFailed:
      return "failed";
  }
  return "failed";
}

ChatClient::ChatClient(ChatClientOptions options) : opts_(std::move(options)) {
  while (!opts_.base_url.empty() && opts_.base_url.back() == '/') opts_.base_url.pop_back();
}

Status ChatClient::validate(const ChatClientOptions& o) {
  auto u = fetch::parse_fetch_url(o.base_url);
  if (!u.ok()) return Status::Invalid("--llm-base-url: " + u.status().message());
  if (o.model.empty()) return Status::Invalid("--llm-model is required with --llm-base-url");
  return Status::Ok();
}

std::string chat_request_body(const ChatClientOptions& o, const std::vector<ChatMessage>& messages) {
  json::array msgs;
  for (const auto& m : messages) {
    if (m.image_urls.empty()) {
      msgs.push_back({{"role", m.role}, {"content", m.content}});
      continue;
    }
    json::array parts;
    parts.push_back({{"type", "text"}, {"text", m.content}});
    for (const auto& url : m.image_urls)
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
    msgs.push_back({{"role", m.role}, {"content", std::move(parts)}});
  }
  json::object body{{"model", o.model},
                    {"messages", std::move(msgs)},
                    {"stream", true},
                    {"max_tokens", o.max_tokens},
                    {"temperature", o.temperature}};
  return json::serialize(body);
}

// ---- server-sent events ----

bool ChatStreamParser::feed(std::string_view bytes, const std::function<void(std::string_view)>& on_content) {
  buf_.append(bytes);
  size_t start = 0;
  for (;;) {
    size_t nl = buf_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(buf_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = nl + 1;
    if (!handle_line(line, on_content)) {
      buf_.clear();
      return false;
    }
  }
  buf_.erase(0, start);
  // A line without an end this long is not an event stream.
  if (buf_.size() > (1u << 20)) {
    error_ = "event stream line longer than 1 MiB";
    return false;
  }
  return true;
}

bool ChatStreamParser::handle_line(std::string_view line,
                                   const std::function<void(std::string_view)>& on_content) {
  if (done_) return true;  // anything after [DONE] is ignored
  if (!line.empty()) {
    if (line.front() == ':') return true;  // comment / keep-alive
    if (line.substr(0, 5) == "data:") {
      std::string_view d = line.substr(5);
      if (!d.empty() && d.front() == ' ') d.remove_prefix(1);
      if (!data_.empty()) data_ += '\n';
      data_.append(d);
      return true;
    }
    // event:, id:, retry: carry nothing we need; anything else means this is not SSE.
    if (line.substr(0, 6) == "event:" || line.substr(0, 3) == "id:" || line.substr(0, 6) == "retry:")
      return true;
    error_ = "the endpoint did not answer with server-sent events";
    return false;
  }
  // A blank line dispatches the event.
  if (data_.empty()) return true;
  std::string data = std::move(data_);
  data_.clear();
  ++events_;
  if (data == "[DONE]") {
    done_ = true;
    return true;
  }
  boost::system::error_code ec;
  json::value v = json::parse(data, ec);
  if (ec || !v.is_object()) {
    error_ = "malformed event from the endpoint (not JSON)";
    return false;
  }
  const auto& o = v.as_object();
  if (auto* e = o.if_contains("error")) {
    std::string msg = "the endpoint reported an error";
    if (e->is_object()) {
      if (auto* m = e->as_object().if_contains("message"); m && m->is_string())
        msg += ": " + std::string(m->as_string());
    } else if (e->is_string()) {
      msg += ": " + std::string(e->as_string());
    }
    error_ = msg;
    return false;
  }
  auto* choices = o.if_contains("choices");
  if (!choices || !choices->is_array() || choices->as_array().empty()) return true;  // e.g. a usage chunk
  const auto& c0 = choices->as_array()[0];
  if (!c0.is_object()) return true;
  if (auto* delta = c0.as_object().if_contains("delta"); delta && delta->is_object()) {
    if (auto* content = delta->as_object().if_contains("content"); content && content->is_string()) {
      std::string_view s = content->as_string();
      if (!s.empty()) on_content(s);
    }
  }
  return true;
}

// ---- the transfer ----

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Transfer {
  CURL* curl = nullptr;
  const std::function<bool(std::string_view)>* on_delta = nullptr;
  const ChatClientOptions* opts = nullptr;
  ChatStreamParser parser;
  ChatResult* result = nullptr;
  long status = 0;
  std::string error_body;  // non-200 answers (bounded)
  int64_t start_ms = 0;
  int64_t last_bytes_ms = 0;
  bool stop_by_caller = false;
  bool stream_error = false;
};

std::string error_message_from(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (!ec && v.is_object()) {
    if (auto* e = v.as_object().if_contains("error")) {
      if (e->is_object()) {
        if (auto* m = e->as_object().if_contains("message"); m && m->is_string())
          return std::string(m->as_string());
      }
      if (e->is_string()) return std::string(e->as_string());
    }
  }
  std::string s = body.substr(0, 200);
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

size_t on_data(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  t->last_bytes_ms = now_ms();
  if (t->status == 0) curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
  if (t->status != 200) {
    if (t->error_body.size() < 65536) t->error_body.append(p, std::min(len, 65536 - t->error_body.size()));
    return len;
  }
  bool keep = true;
  bool ok = t->parser.feed(std::string_view(p, len), [&](std::string_view delta) {
    if (!keep) return;
    ChatResult& r = *t->result;
    if (r.first_token_ms < 0) r.first_token_ms = now_ms() - t->start_ms;
    std::string_view piece = delta;
    if (r.text.size() + piece.size() > t->opts->max_answer_chars) {
      piece = piece.substr(0, t->opts->max_answer_chars - r.text.size());
      r.truncated = true;
    }
    r.text.append(piece);
    if (!piece.empty() && !(*t->on_delta)(piece)) {
      t->stop_by_caller = true;
      keep = false;
    }
    if (r.truncated) keep = false;
  });
  if (!ok) {
    t->stream_error = true;
    return 0;
  }
  // Stop reading at [DONE] (without waiting for the server to close) or when the caller stops.
  if (!keep || t->parser.done()) return 0;
  return len;
}

}  // namespace

ChatResult ChatClient::stream(const std::vector<ChatMessage>& messages,
                              const std::function<bool(std::string_view)>& on_delta,
                              const CancelFlag* cancel) const {
  global_init();
  ChatResult result;
  auto fail = [&](ChatOutcome o, std::string msg) {
    result.outcome = o;
    result.message = std::move(msg);
    return result;
  };
  Status valid = validate(opts_);
  if (!valid.ok()) return fail(ChatOutcome::kRefused, valid.message());
  const std::string url = opts_.base_url + "/chat/completions";
  auto parsed = fetch::parse_fetch_url(url);
  if (!parsed.ok()) return fail(ChatOutcome::kRefused, parsed.status().message());
  fetch::Fetcher guard(opts_.allow_private);
  auto addr = guard.resolve_checked(*parsed);
  if (!addr.ok()) {
    return fail(addr.status().code() == Code::kInvalidArgument ? ChatOutcome::kRefused : ChatOutcome::kFailed,
                "language model endpoint: " + addr.status().message());
  }

  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), &curl_easy_cleanup);
  std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> m(curl_multi_init(), &curl_multi_cleanup);
  if (!h || !m) return fail(ChatOutcome::kFailed, "cannot initialise libcurl");
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
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  headers = curl_slist_append(headers, "Expect:");
  if (!opts_.api_key.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + opts_.api_key).c_str());
  const std::string body = chat_request_body(opts_, messages);

  Transfer t;
  t.curl = c;
  t.on_delta = &on_delta;
  t.opts = &opts_;
  t.result = &result;
  t.start_ms = now_ms();
  t.last_bytes_ms = t.start_ms;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts_.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "imagod/0.1");
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  curl_multi_add_handle(m.get(), c);

  CURLcode done_code = CURLE_OK;
  bool finished = false;
  std::string timeout_msg;
  bool cancelled = false;
  while (!finished) {
    int running = 0;
    curl_multi_perform(m.get(), &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m.get(), &left)) {
      if (msg->msg == CURLMSG_DONE) {
        done_code = msg->data.result;
        finished = true;
      }
    }
    if (finished || running == 0) break;
    if (cancel && cancel->cancelled()) {
      cancelled = true;
      break;
    }
    const int64_t now = now_ms();
    if (now - t.start_ms > opts_.total_timeout_ms) {
      timeout_msg =
          "the language model did not finish within " + std::to_string(opts_.total_timeout_ms) + " ms";
      break;
    }
    if (result.first_token_ms < 0 && now - t.start_ms > opts_.first_token_timeout_ms) {
      timeout_msg =
          "the language model sent no answer within " + std::to_string(opts_.first_token_timeout_ms) + " ms";
      break;
    }
    if (result.first_token_ms >= 0 && now - t.last_bytes_ms > opts_.idle_timeout_ms) {
      timeout_msg = "the language model went silent for " + std::to_string(opts_.idle_timeout_ms) + " ms";
      break;
    }
    curl_multi_poll(m.get(), nullptr, 0, 20, nullptr);
  }
  curl_multi_remove_handle(m.get(), c);
  if (t.status == 0) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.status);
  result.http_status = t.status;

  if (cancelled || t.stop_by_caller) return fail(ChatOutcome::kCancelled, "cancelled");
  if (!timeout_msg.empty()) return fail(ChatOutcome::kTimedOut, timeout_msg);
  if (result.truncated) {
    result.outcome = ChatOutcome::kCompleted;
    return result;
  }
  if (t.status != 0 && t.status != 200) {
    return fail(ChatOutcome::kFailed, "the language model endpoint answered HTTP " +
                                          std::to_string(t.status) + ": " + error_message_from(t.error_body));
  }
  if (t.stream_error) return fail(ChatOutcome::kFailed, t.parser.error());
  if (t.parser.done()) {
    result.outcome = ChatOutcome::kCompleted;
    return result;
  }
  if (done_code == CURLE_OPERATION_TIMEDOUT) {
    return fail(ChatOutcome::kTimedOut, "could not connect to the language model endpoint within " +
                                            std::to_string(opts_.connect_timeout_ms) + " ms");
  }
  if (done_code != CURLE_OK) {
    return fail(ChatOutcome::kFailed,
                std::string("language model endpoint: ") + curl_easy_strerror(done_code));
  }
  return fail(ChatOutcome::kFailed, "the language model stream ended before [DONE]");
}

}  // namespace imago::conversation
