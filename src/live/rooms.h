// The node's running sessions (docs/live-protocol.md): rooms keyed by (account, room_id), each
// rendering one agent. Starts a room on the first join, ticks every room's state machine about
// four times a second on one thread (billing, timeouts, grace), reaps ended rooms, enforces the
// node's capacity (--max-live-sessions) and ends everything with reason `shutdown` on stop.
#pragma once
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "live/room.h"
#include "store/agent_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {
class BlobStore;
class FileStore;
class LedgerStore;
}  // namespace imago

namespace imago::live {

struct RoomsOptions {
  SessionTimeouts timeouts;
  int max_sessions = 8;
  int model_side = 512;  // the longest side of the rendered frame (models are scaled at load)
  int jpeg_quality = 75;
};

struct RoomsDeps {
  Clock* clock = nullptr;
  AgentStore* agents = nullptr;
  FileStore* files = nullptr;
  BlobStore* blobs = nullptr;
  LedgerStore* ledger = nullptr;
  speech::SpeechService* speech = nullptr;
};

// Plugs a conversation brain into every new room (the conversation subsystem sets it).
using BrainFactory = std::function<std::shared_ptr<SessionBrain>(Room&, const AgentRecord&)>;

class Rooms {
 public:
  Rooms(RoomsDeps deps, RoomsOptions options);
  ~Rooms();

  void set_brain_factory(BrainFactory f);

  // The running room `room_id` of the account, started for `agent` when there is none.
  // kConflict when the room runs another agent; kUnavailable at capacity; kInvalidArgument when
  // the agent has no model yet. `voice_chat` starts an audio-only session billed at that rate
  // (a running room keeps the mode it started with).
  Result<std::shared_ptr<Room>> join(const std::string& account_id, const std::string& room_id,
                                     const AgentRecord& agent, bool voice_chat = false);
  std::shared_ptr<Room> find(const std::string& account_id, const std::string& room_id) const;
  std::shared_ptr<Room> find_session(const std::string& session_id) const;
  // Running rooms of the account (optionally of one agent, optionally one room).
  std::vector<std::shared_ptr<Room>> list(const std::string& account_id,
                                          const std::optional<std::string>& agent_code = std::nullopt,
                                          const std::optional<std::string>& room_id = std::nullopt) const;
  // Ends a room now (DELETE): tells viewers, stops its threads.
  void end(const std::shared_ptr<Room>& room, EndReason reason);
  int running() const;
  int capacity() const { return options_.max_sessions; }

  // Ends every session with reason `shutdown` (viewers are told) and stops the tick thread.
  void shutdown();

 private:
  void tick_loop();
  Result<std::shared_ptr<const avatar::AvatarModel>> model_for(const AgentRecord& agent);
  std::optional<DynamicsSettings> dynamics_for(const Room& room);

  RoomsDeps d_;
  RoomsOptions options_;
  BrainFactory brains_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Room>> rooms_;
  // Decoded models shared by every room of an agent (keyed by model file id).
  std::map<std::string, std::weak_ptr<const avatar::AvatarModel>> models_;
  std::thread ticker_;
};

}  // namespace imago::live
