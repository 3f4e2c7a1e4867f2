#include "conversation/chat_client.h"

#include <boost/json.hpp>
#include <chrono>

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

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

// Reads the event stream as it arrives and keeps the chat's own limits: cancellation, first
// token, silence, the whole answer (the guarded client asks should_stop() between reads).
class ChatSink : public fetch::StreamSink {
 public:
  ChatSink(const ChatClientOptions& opts, const std::function<bool(std::string_view)>& on_delta,
           const CancelFlag* cancel, ChatResult& result)
      : opts_(opts), on_delta_(on_delta), cancel_(cancel), result_(result) {}

  void on_status(long status) override { status_ = status; }

  bool on_body(std::string_view bytes) override {
    last_bytes_ms_ = now_ms();
    if (status_ != 200) {
      if (error_body_.size() < 65536) error_body_.append(bytes.substr(0, 65536 - error_body_.size()));
      return true;
    }
    bool keep = true;
    bool ok = parser_.feed(bytes, [&](std::string_view delta) {
      if (!keep) return;
      if (result_.first_token_ms < 0) result_.first_token_ms = now_ms() - start_ms_;
      std::string_view piece = delta;
      if (result_.text.size() + piece.size() > opts_.max_answer_chars) {
        piece = piece.substr(0, opts_.max_answer_chars - result_.text.size());
        result_.truncated = true;
      }
      result_.text.append(piece);
      if (!piece.empty() && !on_delta_(piece)) {
        stop_by_caller_ = true;
        keep = false;
      }
      if (result_.truncated) keep = false;
    });
    if (!ok) {
      stream_error_ = true;
      return false;
    }
    // Stop reading at [DONE] (without waiting for the server to close) or when the caller stops.
    return keep && !parser_.done();
  }

  bool should_stop() override {
    if (cancel_ && cancel_->cancelled()) {
      cancelled_ = true;
      return true;
    }
    const int64_t now = now_ms();
    if (now - start_ms_ > opts_.total_timeout_ms) {
      timeout_msg_ =
          "the language model did not finish within " + std::to_string(opts_.total_timeout_ms) + " ms";
    } else if (result_.first_token_ms < 0 && now - start_ms_ > opts_.first_token_timeout_ms) {
      timeout_msg_ =
          "the language model sent no answer within " + std::to_string(opts_.first_token_timeout_ms) + " ms";
    } else if (result_.first_token_ms >= 0 && now - last_bytes_ms_ > opts_.idle_timeout_ms) {
      timeout_msg_ = "the language model went silent for " + std::to_string(opts_.idle_timeout_ms) + " ms";
    }
    return !timeout_msg_.empty();
  }

  const ChatClientOptions& opts_;
  const std::function<bool(std::string_view)>& on_delta_;
  const CancelFlag* cancel_;
  ChatResult& result_;
  ChatStreamParser parser_;
  long status_ = 0;
  std::string error_body_;  // non-200 answers (bounded)
  const int64_t start_ms_ = now_ms();
  int64_t last_bytes_ms_ = start_ms_;
  bool stop_by_caller_ = false;
  bool stream_error_ = false;
  bool cancelled_ = false;
  std::string timeout_msg_;
};

}  // namespace

ChatResult ChatClient::stream(const std::vector<ChatMessage>& messages,
                              const std::function<bool(std::string_view)>& on_delta,
                              const CancelFlag* cancel) const {
  ChatResult result;
  auto fail = [&](ChatOutcome o, std::string msg) {
    result.outcome = o;
    result.message = std::move(msg);
    return result;
  };
  Status valid = validate(opts_);
  if (!valid.ok()) return fail(ChatOutcome::kRefused, valid.message());

  // The guarded client's rules, without redirects: an endpoint that redirects is misconfigured.
  fetch::FetchRequest req;
  req.method = "POST";
  req.url = opts_.base_url + "/chat/completions";
  req.body = chat_request_body(opts_, messages);
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  if (!opts_.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + opts_.api_key);
  req.max_bytes = 0;   // the sink bounds the answer
  req.timeout_ms = 0;  // the sink keeps the chat's limits
  req.connect_timeout_ms = opts_.connect_timeout_ms;
  req.max_redirects = 0;
  ChatSink sink(opts_, on_delta, cancel, result);
  fetch::Fetcher guard(opts_.allow_private);
  auto r = guard.stream(req, sink);
  if (!r.ok()) {
    return fail(r.status().code() == Code::kInvalidArgument ? ChatOutcome::kRefused : ChatOutcome::kFailed,
                "language model endpoint: " + r.status().message());
  }
  const long status = r->status != 0 ? r->status : sink.status_;
  result.http_status = status;

  if (sink.cancelled_ || sink.stop_by_caller_) return fail(ChatOutcome::kCancelled, "cancelled");
  if (!sink.timeout_msg_.empty()) return fail(ChatOutcome::kTimedOut, sink.timeout_msg_);
  if (result.truncated) {
    result.outcome = ChatOutcome::kCompleted;
    return result;
  }
  if (status != 0 && status != 200) {
    return fail(ChatOutcome::kFailed, "the language model endpoint answered HTTP " + std::to_string(status) +
                                          ": " + error_message_from(sink.error_body_));
  }
  if (sink.stream_error_) return fail(ChatOutcome::kFailed, sink.parser_.error());
  if (sink.parser_.done()) {
    result.outcome = ChatOutcome::kCompleted;
    return result;
  }
  if (r->end == fetch::StreamEnd::kTimedOut) {
    return fail(ChatOutcome::kTimedOut, "could not connect to the language model endpoint within " +
                                            std::to_string(opts_.connect_timeout_ms) + " ms");
  }
  if (r->end == fetch::StreamEnd::kFailed) {
    return fail(ChatOutcome::kFailed, "language model endpoint: " + r->error);
  }
  return fail(ChatOutcome::kFailed, "the language model stream ended before [DONE]");
}

}  // namespace imago::conversation
