// What one live room keeps on behalf of its clients, bounded (docs/live-protocol.md, "Bounds"):
// nothing a viewer or an api-secret holder sends may grow a room without limit. The room counts
// the bytes it keeps for clients (queued speech, context) in the same units these bounds use, so
// a test can check the worst case without measuring RSS.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/status.h"

namespace imago::live {

struct RoomLimits {
  // Speech (speak over WebSocket or REST, and user_text spoken without a brain).
  size_t speak_chars = 2000;              // characters (code points) of one speak text
  size_t speech_queue_items = 16;         // utterances queued or playing
  size_t speech_queue_bytes = 32 * 1024;  // bytes of their texts
  // Audio synthesized ahead of playback: the speech thread waits while the renderer holds more.
  double synthesis_ahead_s = 10;
  // Context (add_context over WebSocket or REST): the oldest item is evicted first.
  size_t context_item_chars = 4000;
  size_t context_items = 50;
  size_t context_bytes = 64 * 1024;
  // WebSocket control messages (text frames): token buckets per connection and per room.
  double control_per_s_connection = 10, control_burst_connection = 20;
  double control_per_s_room = 20, control_burst_room = 40;
  // A connection that had this many control messages refused in a row is closed (1008).
  int refusals_before_close = 100;
};

// What the room counts per kept item beyond its text: the utterance's id and bookkeeping (its
// text is held twice while it waits for synthesis), a context item's string header.
inline constexpr size_t kUtteranceOverheadBytes = 128;
inline constexpr size_t kContextItemOverheadBytes = 32;

// The most bytes a room may account for its clients under `l` (Room::accounted_bytes()).
constexpr size_t max_accounted_bytes(const RoomLimits& l) {
  return 2 * l.speech_queue_bytes + l.speech_queue_items * kUtteranceOverheadBytes + l.context_bytes +
         l.context_items * kContextItemOverheadBytes;
}

// The error code of a speak refused because the room's speech queue is full: the WebSocket
// `error` event's code, and the REST envelope's with 429.
inline constexpr std::string_view kSpeechQueueFullCode = "SPEECH_QUEUE_FULL";
// Room::speak reports a full queue as kRateLimited (and nothing else as such).
inline bool is_speech_queue_full(const Status& st) {
  return st.code() == Code::kRateLimited;
}

}  // namespace imago::live
