// The brain's transport: a streaming client for an operator-configured OpenAI-compatible chat
// endpoint (Ollama, llama.cpp server, vLLM, ...): POST {base}/chat/completions with
// "stream": true, read server-sent events until "data: [DONE]", hand each text delta to the
// caller as it arrives. Cancellable mid-stream from another thread (an interrupt), bounded in
// time (connect, first token, silence between tokens, whole answer) and in size; every failure
// ends as an outcome with a clear message, never an exception or a hang.
//
// The endpoint is reached through the SSRF-guarded outbound client (fetch::Fetcher::stream):
// http(s) only, every resolved address checked and pinned, no redirects, no environment proxies.
// Private and loopback addresses (where local models usually live) need the operator's
// allow_private.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace imago::conversation {

struct ChatMessage {
  std::string role;     // "system", "user", "assistant"
  std::string content;  // text
  // Images for the turn (camera_chat), as data: URLs; sent as OpenAI content parts.
  std::vector<std::string> image_urls;
};

struct ChatClientOptions {
  std::string base_url;        // e.g. "http://127.0.0.1:11434/v1" (no trailing /chat/completions)
  std::string model;           // e.g. "llama3.2"
  std::string api_key;         // sent as "Authorization: Bearer ..." when not empty
  bool allow_private = false;  // the operator allows private/loopback addresses
  int connect_timeout_ms = 5000;
  int first_token_timeout_ms = 30000;  // request sent -> first content (models load lazily)
  int idle_timeout_ms = 15000;         // longest silence between two events once streaming
  int total_timeout_ms = 120000;       // the whole answer
  size_t max_answer_chars = 4000;      // longer answers are cut here (outcome kCompleted, truncated)
  int max_tokens = 300;                // asked of the model
  double temperature = 0.7;
};

// Set from any thread to stop a running chat at once (the transfer is aborted within ~20 ms).
class CancelFlag {
 public:
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  std::atomic<bool> cancelled_{false};
};

enum class ChatOutcome {
  kCompleted,  // [DONE] (or a finish_reason) was received
  kCancelled,  // the CancelFlag was set
  kTimedOut,   // connect / first token / idle / total timeout
  kRefused,    // the endpoint's address is not allowed, or the URL is unusable
  kFailed,     // connection error, HTTP error status, malformed stream, stream cut short
};

std::string_view chat_outcome_name(ChatOutcome o);

struct ChatResult {
  ChatOutcome outcome = ChatOutcome::kFailed;
  std::string text;             // everything received (also on failure: what came before it)
  std::string message;          // why it did not complete (empty on kCompleted)
  long http_status = 0;         // 0 when no response was received
  bool truncated = false;       // the answer hit max_answer_chars
  int64_t first_token_ms = -1;  // request start -> first content delta
  bool ok() const { return outcome == ChatOutcome::kCompleted; }
};

class ChatClient {
 public:
  explicit ChatClient(ChatClientOptions options);

  // Checks the configuration without any network traffic: URL syntax and scheme, model set.
  static Status validate(const ChatClientOptions& options);

  // Streams one answer. `on_delta` gets each piece of text as it arrives, on the calling thread;
  // returning false from it cancels like the flag. Blocks until the answer is complete, failed
  // or cancelled. Thread-safe: each call uses its own connection.
  ChatResult stream(const std::vector<ChatMessage>& messages,
                    const std::function<bool(std::string_view)>& on_delta,
                    const CancelFlag* cancel = nullptr) const;

  const ChatClientOptions& options() const { return opts_; }

 private:
  ChatClientOptions opts_;
};

// The JSON request body (exposed for tests).
std::string chat_request_body(const ChatClientOptions& options, const std::vector<ChatMessage>& messages);

// Incremental server-sent-events parser for chat completion chunks: feed bytes, get content
// deltas; recognises "[DONE]", finish_reason and in-stream error objects (exposed for tests).
class ChatStreamParser {
 public:
  // Returns false when the stream is malformed or reports an error (see error()).
  bool feed(std::string_view bytes, const std::function<void(std::string_view)>& on_content);
  bool done() const { return done_; }
  const std::string& error() const { return error_; }
  bool saw_event() const { return events_ > 0; }

 private:
  bool handle_line(std::string_view line, const std::function<void(std::string_view)>& on_content);
  std::string buf_;
  std::string data_;  // data lines of the current event
  bool done_ = false;
  int events_ = 0;
  std::string error_;
};

}  // namespace imago::conversation
