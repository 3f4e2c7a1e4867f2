// The agent lifecycle as a domain service (SPEC 2.1, 2.2, 4.2-4.7, 4.10-4.12): create (validate,
// charge, store inputs, enqueue: all or nothing), prompt updates, delete (with the refund rule of
// docs/api/agents.md) and the dynamics configuration. No HTTP here: handlers in src/api parse the
// request into these structs, call one method and render the result.
#pragma once
#include <boost/json.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/media_refs.h"
#include "store/agent_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {
class BlobStore;
class FileStore;
class VoiceStore;
}  // namespace imago

namespace imago::agents {

inline constexpr size_t kMaxPromptChars = 20000;
inline constexpr double kMaxSourceSeconds = 120;
inline constexpr double kMaxGestureSeconds = 10;
inline constexpr size_t kMaxDynamicsConfigBytes = 64 * 1024;

// POST /v1/agent/generate, as parsed from the body (absent fields are nullopt).
struct GenerateRequest {
  std::optional<std::string> prompt;
  std::optional<std::string> aspect_ratio, video_aspect_ratio, model;
  std::optional<double> duration;
  std::optional<std::string> name;
  std::optional<std::string> agent_id;             // a custom code
  std::optional<std::string> image, video, audio;  // file URL / id, external URL or inline data
  std::optional<std::string> idempotency_key;      // the Idempotency-Key header
  // The voice the agent speaks with: a built-in id (M1..M5, F1..F5), or a designed voice of the
  // account (voice_code: its base voice and axes, which win over `voice`). Neither: matched from the
  // audio/video sample, else chosen to fit the face.
  std::optional<std::string> voice;
  std::optional<std::string> voice_code;
  int64_t storage_quota_bytes = 0;  // the caller's quota (0: unlimited)
};

struct Generated {
  std::string agent_id;
  bool replayed = false;  // an earlier request with the same Idempotency-Key made it
};

// POST /v1/dynamics/generate.
struct DynamicsRequest {
  std::optional<std::string> agent_id;
  std::optional<double> duration;
  std::optional<std::string> model;
  std::optional<std::string> image_url;
  int64_t storage_quota_bytes = 0;  // the caller's quota (0: unlimited)
};

// PUT /v1/dynamics/{agent_id}.
struct DynamicsUpdate {
  const boost::json::object* patch = nullptr;  // required
  std::optional<bool> toggle_enabled;
};
struct DynamicsUpdated {
  std::string agent_id;
  bool regeneration_started = false;
  std::string regeneration_error;  // why it could not start
};

// POST /v1/studio/face-check: where the face is, or why a generation would refuse the picture.
// Nothing is stored or charged.
struct FaceCheck {
  bool found = false;
  std::string reason;  // why not, when !found (the message generate would answer with)
  int image_width = 0, image_height = 0;
  double x = 0, y = 0, width = 0, height = 0;  // the face's box in the picture's pixels
};

// The agent's own knowledge (docs/api/agents.md "Knowledge"): texts kept as the agent's files
// (purpose "knowledge") and given to every session of the agent, beside what a room is told
// through add-context. Bounded so all of it fits in what a session sends the model.
inline constexpr size_t kMaxKnowledgeItems = 20;
// UTF-8 bytes of all items of one agent together: a session's own add-context knowledge is
// bounded the same way (docs/conversation.md), so the agent's never crowds it out.
inline constexpr size_t kMaxKnowledgeBytes = 12000;
inline constexpr size_t kMaxKnowledgeTitleChars = 200;
inline constexpr size_t kMaxKnowledgeDocumentBytes = 1 << 20;  // an uploaded document, before extraction

struct KnowledgeItem {
  std::string id;  // the file id
  std::string title;
  int64_t bytes = 0;  // UTF-8 bytes of its text
  int64_t created_at = 0;
};

struct NewKnowledge {
  std::optional<std::string> title;
  std::optional<std::string> text;  // typed text
  // An uploaded document instead: its bytes and name (plain text, Markdown, CSV or HTML).
  std::optional<std::string> document;
  std::optional<std::string> document_name;
  int64_t storage_quota_bytes = 0;  // the caller's quota (0: unlimited)
};

// A document's text: UTF-8 plain text, Markdown or CSV as they are; HTML without its tags,
// scripts and styles. Anything else (binary, PDF, invalid UTF-8) is kUnsupportedMedia.
Result<std::string> document_text(std::string_view bytes, std::string_view name);

struct AgentServiceDeps {
  AgentStore* agents = nullptr;
  FileStore* files = nullptr;
  BlobStore* blobs = nullptr;
  VoiceStore* voices = nullptr;  // designed voices, for voice_code (none: every code is unknown)
  Clock* clock = nullptr;
  const std::string* public_url = nullptr;  // to recognise the service's own file URLs
  std::function<void()> wake_workers;       // new work was queued
};

class AgentService {
 public:
  explicit AgentService(AgentServiceDeps deps) : d_(std::move(deps)) {}

  Result<Generated> generate(const std::string& account_id, const GenerateRequest& r);
  Result<AgentRecord> get(const std::string& account_id, const std::string& code);
  Result<AgentPage> list(const std::string& account_id, const std::optional<std::string>& status, int limit,
                         int offset);
  Status update_prompt(const std::string& account_id, const std::string& code,
                       const std::optional<std::string>& prompt);
  Status remove(const std::string& account_id, const std::string& code);

  Result<FaceCheck> check_face_of(const std::string& account_id, const std::string& image);

  Result<KnowledgeItem> add_knowledge(const std::string& account_id, const std::string& code,
                                      const NewKnowledge& k);
  Result<std::vector<KnowledgeItem>> list_knowledge(const std::string& account_id, const std::string& code);
  Status remove_knowledge(const std::string& account_id, const std::string& code, const std::string& id);
  // The texts every session of the agent starts with, oldest first.
  Result<std::vector<std::string>> knowledge_texts(const std::string& account_id, const std::string& code);

  // Charges and queues a dynamics generation; returns the agent's code.
  Result<std::string> start_dynamics(const std::string& account_id, const DynamicsRequest& r);
  Result<DynamicsUpdated> update_dynamics(const std::string& account_id, const std::string& code,
                                          const DynamicsUpdate& u);

 private:
  Result<std::string> new_code(const std::string& account_id);
  // kInvalidArgument when a generation from this image would fail for want of a face.
  Status check_face(const ResolvedMedia& image);
  // The work will keep `adding` bytes of inputs plus what it produces (a model, clips).
  Status check_quota(const std::string& account_id, int64_t adding, int64_t quota);
  void wake() {
    if (d_.wake_workers) d_.wake_workers();
  }
  AgentServiceDeps d_;
  // Knowledge adds of this process (one service per process) one at a time: two cannot both pass
  // the bounds here; other nodes are caught by the check after the insert (knowledge.cpp).
  std::mutex knowledge_mu_;
};

// Custom agent ids: 3-64 characters of letters, digits, '_' and '-', starting with a letter or
// digit; "generate" and "status" are reserved path words.
Status check_custom_code(const std::string& id);

}  // namespace imago::agents
