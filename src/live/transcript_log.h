// The transcript a room keeps while it runs (docs/sessions.md): every final line once, each with
// a sequence number and its times in milliseconds since the session started (the room's clock).
// The registry takes the new lines about four times a second and writes them to the session's
// record; a failed write puts them back. Thread safe.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "store/session_store.h"

namespace imago::live {

// Where a line came from (the `source` of GET /v1/sessions/{id}/transcript).
inline constexpr std::string_view kSourceSpeech = "speech";        // user: recognised microphone turn
inline constexpr std::string_view kSourceText = "text";            // user: typed (user_text)
inline constexpr std::string_view kSourceSpeak = "speak";          // agent: text given to speak
inline constexpr std::string_view kSourceLlm = "llm";              // agent: the operator's model
inline constexpr std::string_view kSourceResponder = "responder";  // agent: the built-in responder

class TranscriptLog {
 public:
  // The most lines a room keeps waiting for the database; past it the oldest are dropped (the
  // database was down for minutes) rather than grow without bound.
  static constexpr size_t kMaxPending = 2000;

  explicit TranscriptLog(int64_t session_start_us) : start_us_(session_start_us) {}

  // Milliseconds since the session started at `now_us` (never negative).
  int64_t ms_at(int64_t now_us) const;
  // Adds a final line; returns it (with its seq).
  TranscriptEntry add(std::string_view role, std::string_view source, std::string text, int64_t start_ms,
                      int64_t end_ms);
  // The lines not yet written, oldest first.
  std::vector<TranscriptEntry> take();
  // A write of `lines` failed: they are written with the next ones.
  void put_back(std::vector<TranscriptEntry> lines);
  int64_t lines() const;

 private:
  const int64_t start_us_;
  mutable std::mutex mu_;
  int64_t seq_ = 0;
  std::vector<TranscriptEntry> pending_;
};

}  // namespace imago::live
