// One conversation between viewers and an agent: the turn-taking engine a live session plugs in
// (src/live's SessionBrain). It owns the session's knowledge and history, answers each viewer
// turn with the operator's language model (streamed, sentence by sentence into speech) or, with
// no model configured, with the built-in responder, and stops an answer at once on an interrupt.
//
// Threads: user_text() and the other calls return at once; answers are produced on the
// conversation's own worker thread, which calls the sink. A new viewer turn while the agent is
// still answering cancels that answer (the viewer spoke over the agent) and answers the new one.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "conversation/chat_client.h"
#include "conversation/prompt.h"

namespace imago::conversation {

// Code of the `error` event sent when the language model fails (the agent also apologises).
inline constexpr const char* kLlmErrorCode = "LLM_UNAVAILABLE";
inline constexpr const char* kApology = "I'm sorry, I can't answer that right now.";

struct ConversationOptions {
  std::string system_prompt;
  std::optional<ChatClientOptions> llm;  // nullopt: the built-in responder answers
  PromptLimits limits;
  // camera_chat with a model that accepts images: the latest camera frame goes with the next turn
  // to the model (an OpenAI image_url part). The built-in responder never looks at images.
  bool attach_images = false;
  // The agent's own knowledge (kept with the agent, docs/api/agents.md): known from the first turn
  // of every session, listed before what the session is told (add_context) and never dropped to
  // make room for it.
  std::vector<std::string> agent_knowledge;
};

// Where a conversation's output goes (the live session). Called on the worker thread.
struct ConversationSink {
  // One sentence of the agent's answer, ready for speech (in order).
  std::function<void(const std::string& sentence)> speak;
  // transcript {role: "user"|"agent", text, final}
  std::function<void(const std::string& role, const std::string& text, bool final)> transcript;
  // The agent started working on an answer (agent.thinking).
  std::function<void()> thinking;
  // An answer failed (the apology is spoken too): error {code, message}.
  std::function<void(const std::string& code, const std::string& message)> error;
};

struct ConversationStats {
  int64_t answers = 0;
  int64_t cancelled = 0;
  int64_t failed = 0;
};

class Conversation {
 public:
  Conversation(ConversationOptions options, ConversationSink sink);
  ~Conversation();  // cancels a running answer and joins the worker
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  // A viewer's turn (typed, or recognised speech). Blank text is ignored.
  void user_text(const std::string& text);
  // Knowledge for the next answers (add_context): no spoken reply.
  void add_context(const std::string& text);
  // The agent was made to say `text` verbatim (speak): it joins the history as the agent's turn.
  void agent_said(const std::string& text);
  // The viewer's latest camera frame (a data: URL): replaces any earlier one not yet sent, and goes
  // with the next turn to the model when attach_images is set (ignored otherwise).
  void camera_frame(std::string data_url);
  // Stops the running answer now (the model request is aborted; nothing more is spoken). The
  // part already handed to speech stays in the history as what the agent said.
  void interrupt();

  bool busy() const;
  // Blocks until no answer is running or queued (tests, shutdown).
  void wait_idle() const;
  ConversationStats stats() const;
  std::vector<Turn> history() const;
  size_t knowledge_items() const;

 private:
  void worker();
  void answer(const std::string& text, uint64_t generation);
  std::string answer_with_model(const std::vector<ChatMessage>& messages, uint64_t generation);

  ConversationOptions opts_;
  ConversationSink sink_;
  std::unique_ptr<ChatClient> client_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<std::string> pending_;  // viewer turns waiting for an answer
  bool running_ = false;             // an answer is being produced
  bool stop_ = false;
  uint64_t generation_ = 0;  // bumped by interrupt and by a new viewer turn
  std::shared_ptr<CancelFlag> cancel_;
  Knowledge knowledge_;
  History history_;
  std::string camera_frame_;  // latest frame not yet sent to the model (camera_chat)
  ConversationStats stats_;
  std::thread thread_;
};

}  // namespace imago::conversation
