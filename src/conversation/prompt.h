// What the model is sent for one answer: the agent's system prompt, the knowledge injected into
// the session (add_context), and a bounded history of the conversation. Everything is bounded so
// a long session cannot grow the request (or the built-in responder's index) without limit:
//
//   system prompt     first 6000 characters (cut at a sentence end when one is near)
//   knowledge         the most recent items whose total fits in 12000 characters, at most 50
//                     items, each item cut to 4000; older items are dropped first (trimmed, not
//                     summarised: a summary would need the model and could invent things)
//   agent knowledge   the agent's own items, 12000 characters in all, before the session's
//   history           the last 16 turns (user and agent) whose total fits in 8000 characters;
//                     older turns are dropped first
//   user text         one turn is cut to 2000 characters
//
// The bounds are in PromptLimits and documented in docs/conversation.md.
#pragma once
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "conversation/chat_client.h"

namespace imago::conversation {

struct PromptLimits {
  size_t system_prompt_chars = 6000;
  size_t knowledge_chars = 12000;
  size_t knowledge_items = 50;
  size_t knowledge_item_chars = 4000;
  size_t agent_knowledge_chars = 12000;  // the agent's own items together (not cut one by one)
  size_t history_turns = 16;
  size_t history_chars = 8000;
  size_t user_chars = 2000;
};

// Cuts text to at most `max_chars` bytes on a UTF-8 boundary, at the last sentence end in the
// final quarter when there is one, else at the last space.
std::string clip_text(std::string_view text, size_t max_chars);

// Knowledge injected into a session (SPEC 4.9 add_context), newest last, bounded.
class Knowledge {
 public:
  explicit Knowledge(PromptLimits limits = {}) : limits_(limits) {}
  void add(std::string_view text);
  const std::deque<std::string>& items() const { return items_; }
  size_t chars() const { return chars_; }
  size_t dropped() const { return dropped_; }  // items trimmed away so far

 private:
  PromptLimits limits_;
  std::deque<std::string> items_;
  size_t chars_ = 0;
  size_t dropped_ = 0;
};

// What one answer knows: the agent's own items (agent_knowledge_chars in all) first, then the
// session's. The session's Knowledge is bounded on its own, so together nothing is dropped: a
// long session cannot push out what the agent was given.
Knowledge with_agent_knowledge(const std::vector<std::string>& agent, const Knowledge& session,
                               const PromptLimits& limits = {});

struct Turn {
  std::string role;  // "user" or "assistant"
  std::string text;
};

// The conversation so far, bounded (oldest turns dropped first).
class History {
 public:
  explicit History(PromptLimits limits = {}) : limits_(limits) {}
  void add_user(std::string_view text);
  // The agent's turn as it was actually spoken (an interrupted answer is kept up to where it
  // stopped, so the model knows what the viewer heard).
  void add_agent(std::string_view text);
  const std::deque<Turn>& turns() const { return turns_; }

 private:
  void add(std::string role, std::string_view text);
  PromptLimits limits_;
  std::deque<Turn> turns_;
  size_t chars_ = 0;
};

// The messages for one answer: one system message (system prompt, then the knowledge as a
// list), the history, then the new user text (with images for camera_chat).
std::vector<ChatMessage> build_messages(std::string_view system_prompt, const Knowledge& knowledge,
                                        const History& history, std::string_view user_text,
                                        const std::vector<std::string>& image_urls = {},
                                        const PromptLimits& limits = {});

}  // namespace imago::conversation
