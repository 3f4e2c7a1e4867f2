// The node's running sessions (docs/live-protocol.md): rooms keyed by (account, room_id), each
// rendering one agent. Starts a room on the first join, ticks every room's state machine about
// four times a second on one thread (billing, timeouts, grace), reaps ended rooms, enforces the
// node's capacity (--max-live-sessions) and ends everything with reason `shutdown` on stop.
//
// Across nodes (cluster mode) every room is claimed in a RoomDirectory (store/room_directory.h):
// a join for a room another node runs is refused, and REST commands (speak, add-context,
// trigger-dynamics, interrupt) reach rooms on other nodes through it. Rooms does not know whether
// the directory is the single-node one or the database's.
#pragma once
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "live/media_quality.h"
#include "live/minute_billing.h"
#include "live/recording_sink.h"
#include "live/room.h"
#include "live/room_closer.h"
#include "live/session_journal.h"
#include "store/agent_store.h"
#include "store/room_directory.h"
#include "store/session_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {
class BlobStore;
class FileStore;
class LedgerStore;
}  // namespace imago
namespace imago::sessions {
class SessionService;
class SessionSweep;
}  // namespace imago::sessions

namespace imago::live {

struct RoomsOptions {
  SessionTimeouts timeouts;
  int max_sessions = 8;
  // Live sessions one account may run at once (on this node; across the cluster in cluster mode,
  // through the room directory). 0: no share beyond max_sessions.
  int max_sessions_per_account = 0;
  int model_side = 512;  // the longest side of the rendered frame (models are scaled at load)
  int jpeg_quality = 75;
  EncodedMediaOptions encoded;  // H.264 + Opus for viewers that ask for it (live/media_quality.h)
  // How other nodes reach this one (--node-url), recorded with each room's lease so a node that
  // does not own a room can relay a viewer to it. Empty: viewers on other nodes are refused.
  std::string node_url;
  RoomLimits room_limits;  // what each room keeps for its clients (live/room_limits.h)
  // Where recordings are muxed before they go to the blob store (a local directory; empty: no
  // recordings on this node).
  std::string recording_dir;
  // Where this node notes the sessions it runs (live/session_journal.h), so that after a crash
  // recover() ends them and uploads their recordings. Empty: a crash leaves them active.
  std::string journal_dir;
  // Sessions of other nodes whose room lease lapsed this long ago are ended by this node's sweep
  // (sessions/session_sweep.h; cluster mode only, --session-sweep-grace-s).
  int64_t sweep_grace_us = 60'000'000;
};

struct RoomsDeps {
  Clock* clock = nullptr;
  AgentStore* agents = nullptr;
  FileStore* files = nullptr;
  BlobStore* blobs = nullptr;
  LedgerStore* ledger = nullptr;
  speech::SpeechService* speech = nullptr;
  RoomDirectory* directory = nullptr;  // null: a single node (every room is local)
  // Session records, transcripts and recordings (docs/sessions.md); null: none are kept.
  sessions::SessionService* sessions = nullptr;
};

// What a REST command reached (SPEC 4.8, 4.9, 6).
struct Delivery {
  Status status;                     // kNotFound: no active room; kInvalidArgument: a bad action
  int delivered_to_rooms = 0;        // rooms on this node and on others
  bool animation_triggered = false;  // trigger_dynamics
};

// Plugs a conversation brain into every new room (the conversation subsystem sets it).
using BrainFactory = std::function<std::shared_ptr<SessionBrain>(Room&, const AgentRecord&)>;

// A room's state as the JSON object its lease carries to other nodes (RemoteRoom::details):
// state, started_at (unix seconds), viewers, billed_minutes, billing_type, context_items.
std::string room_details_json(const RoomInfo& info);

class Rooms {
 public:
  Rooms(RoomsDeps deps, RoomsOptions options);
  ~Rooms();

  void set_brain_factory(BrainFactory f);

  // The running room `room_id` of the account, started for `agent` when there is none.
  // kConflict when the room runs another agent; kUnavailable at capacity; kRateLimited when the
  // account holds its share (max_sessions_per_account); kInvalidArgument when
  // the agent has no model yet. `mode` voice_chat starts an audio-only session, camera_chat one that takes
  // the viewer's camera, each billed at its rate (a running room keeps the mode it started with).
  // `quality` sets the encoded media of a room this join starts (a running room keeps its own).
  // `record`: the session is recorded (see record()), also when the room was already running.
  Result<std::shared_ptr<Room>> join(const std::string& account_id, const std::string& room_id,
                                     const AgentRecord& agent, ChatMode mode = ChatMode::kAvatar,
                                     VideoQuality quality = VideoQuality::kStandard, bool record = false);
  // Starts recording the account's room `room_id` wherever it runs (POST /v1/rooms/{id}/recording):
  // here at once, on another node through the directory. A room already recorded stays so (Ok).
  // kNotFound when it runs nowhere; kUnavailable when this node keeps no recordings.
  Result<std::string> record(const std::string& account_id, const std::string& room_id);
  std::shared_ptr<Room> find(const std::string& account_id, const std::string& room_id) const;
  std::shared_ptr<Room> find_session(const std::string& session_id) const;
  // Running rooms of the account (optionally of one agent, optionally one room).
  std::vector<std::shared_ptr<Room>> list(const std::string& account_id,
                                          const std::optional<std::string>& agent_code = std::nullopt,
                                          const std::optional<std::string>& room_id = std::nullopt) const;
  // A REST command for every active room of `agent` (or only `room_id`) on any node: kind is
  // "speak", "add_context" or "trigger_dynamics". Rooms here run it at once; rooms on other nodes
  // get it through the directory (delivered within about a second).
  // A text over the room limits (speak_chars, context_item_chars) is kInvalidArgument before any
  // room is looked at. A speak skips rooms whose speech queue is full and counts the others; when
  // every room it reached was full it is kRateLimited (is_speech_queue_full).
  Delivery deliver(const AgentRecord& agent, const std::optional<std::string>& room_id,
                   const std::string& kind, const std::string& text);
  // The node URL of the node that runs the account's room `room_id`, when another node does and
  // has one (a viewer who reached this node is relayed there).
  std::optional<std::string> owner_url(const std::string& account_id, const std::string& room_id) const;
  // This node's URL for other nodes (known once the server has bound its port).
  void set_node_url(std::string url);
  // The account's rooms (or only `room_id`) with a live lease on another node, each with its
  // owner's last snapshot of the room's state (cluster mode; empty on a single node).
  Result<std::vector<RemoteRoom>> remote_list(const std::string& account_id,
                                              const std::optional<std::string>& room_id = std::nullopt) const;
  // Interrupts the account's room `room_id` wherever it runs. kNotFound when it runs nowhere.
  Status interrupt(const std::string& account_id, const std::string& room_id);
  // Ends a room now (DELETE): tells viewers and bills the end at once; its threads are joined
  // by the closer (room_closer.h), so this returns whatever the room's recogniser or model does.
  void end(const std::shared_ptr<Room>& room, EndReason reason);
  // At start, before any room: the sessions a crash of this node left running (journal_dir) are
  // ended with reason `shutdown` at their last sign of life (at most a tick, a quarter second, before the
  // crash), with the session.ended webhook, and what their recorders flushed is uploaded as
  // their recording. Returns how many were found. Files the database did not take stay for the
  // next start. A session another node's sweep ended meanwhile (sessions/session_sweep.h) stays as
  // the sweep ended it, but its recording is still uploaded and becomes ready.
  int recover();
  // Ends the account's room `room_id` wherever it runs (DELETE /v1/rooms/{id}): here at once, on
  // another node through the directory, waiting up to kRemoteEndWaitMs for that node to let the
  // room's lease go. kNotFound when it runs nowhere; kUnavailable when the owner did not confirm
  // in time (the command stays queued for it).
  struct Ended {
    std::string room_id, session_id;
    int64_t billed_minutes = 0;
  };
  static constexpr int64_t kRemoteEndWaitMs = 5000;
  Result<Ended> terminate(const std::string& account_id, const std::string& room_id);
  int running() const;
  int capacity() const { return options_.max_sessions; }

  // Ends every session with reason `shutdown` (viewers are told) and stops the tick thread.
  void shutdown();

 private:
  void tick_loop();
  // join()'s work once it holds a slot: loads the model, creates, claims and starts the room.
  Result<std::shared_ptr<Room>> join_room(const std::string& account_id, const std::string& room_id,
                                          const AgentRecord& agent, ChatMode mode, VideoQuality quality);
  Result<std::shared_ptr<Room>> start_room(const std::string& account_id, const std::string& room_id,
                                           const AgentRecord& agent, ChatMode mode, VideoQuality quality);
  Result<std::shared_ptr<const avatar::AvatarModel>> model_for(const AgentRecord& agent);
  std::optional<DynamicsSettings> dynamics_for(const Room& room);
  // A command from another node for one of this node's sessions.
  void on_command(const RoomCommand& cmd);
  void release(const Room& room);
  // Session records (docs/sessions.md): the room's new transcript lines and progress, written on
  // each tick; the end, once, when the room applies it.
  SessionRecord record_of(const Room& room) const;
  void sync_session(Room& room);
  // The journal file goes once the session's end and (when recorded) its recording's upload were
  // written: each holds a reference.
  void release_journal(const std::string& session_id);
  void session_ended(Room& room, const SessionAction& end);
  Status start_recording(const std::shared_ptr<Room>& room);

  RoomsDeps d_;
  RoomsOptions options_;
  BrainFactory brains_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Room>> rooms_;
  // Slots taken by joins still starting their room (outside the lock: the model loads), counted
  // with the running rooms so the capacity and the account's share hold under concurrent joins.
  int starting_ = 0;
  std::map<std::string, int> starting_by_account_;
  // Decoded models shared by every room of an agent (keyed by model file id).
  std::map<std::string, std::weak_ptr<const avatar::AvatarModel>> models_;
  // Recorders still writing or uploading (each finishes on its own thread after its room ended);
  // the session ids recorded.
  struct Recorder {
    std::shared_ptr<RecordingSink> sink;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::vector<Recorder> recorders_;
  std::set<std::string> recorded_;
  SessionJournal journal_;
  std::map<std::string, int> journal_refs_;  // under mu_
  // What was last written for each running session (minutes charged, viewers peak).
  std::mutex sync_mu_;
  std::map<std::string, std::pair<int64_t, int>> synced_;
  // Ends sessions of dead nodes (cluster mode), on the tick thread; null without a directory or
  // session records.
  std::unique_ptr<sessions::SessionSweep> sweep_;
  // The only place ended rooms are joined: never the tick thread, never a request's worker.
  RoomCloser closer_;
  std::thread ticker_;
};

}  // namespace imago::live
