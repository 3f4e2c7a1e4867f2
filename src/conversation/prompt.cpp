#include "conversation/prompt.h"

#include <algorithm>

namespace imago::conversation {

namespace {

// Largest prefix length <= n that does not end inside a UTF-8 sequence.
size_t utf8_floor(std::string_view s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string clip_text(std::string_view text, size_t max_chars) {
  text = trim(text);
  if (text.size() <= max_chars) return std::string(text);
  size_t cut = utf8_floor(text, max_chars);
  std::string_view head = text.substr(0, cut);
  size_t sentence = head.find_last_of(".!?\n");
  if (sentence != std::string_view::npos && sentence + 1 >= cut - cut / 4)
    return std::string(trim(head.substr(0, sentence + 1)));
  size_t space = head.find_last_of(' ');
  if (space != std::string_view::npos && space > cut / 2) return std::string(trim(head.substr(0, space)));
  return std::string(head);
}

void Knowledge::add(std::string_view text) {
  std::string item = clip_text(text, limits_.knowledge_item_chars);
  if (item.empty()) return;
  chars_ += item.size();
  items_.push_back(std::move(item));
  while (items_.size() > 1 && (items_.size() > limits_.knowledge_items || chars_ > limits_.knowledge_chars)) {
    chars_ -= items_.front().size();
    items_.pop_front();
    ++dropped_;
  }
}

Knowledge with_agent_knowledge(const std::vector<std::string>& agent, const Knowledge& session,
                               const PromptLimits& limits) {
  PromptLimits both = limits;
  both.knowledge_items = limits.knowledge_items + agent.size();
  both.knowledge_chars = limits.knowledge_chars + limits.agent_knowledge_chars;
  both.knowledge_item_chars = std::max(limits.knowledge_item_chars, limits.agent_knowledge_chars);
  Knowledge k(both);
  size_t budget = limits.agent_knowledge_chars;
  for (const auto& item : agent) {
    std::string part = clip_text(item, std::min(budget, item.size()));
    if (part.empty()) break;
    budget -= std::min(budget, part.size());
    k.add(part);
  }
  for (const auto& item : session.items()) k.add(item);
  return k;
}

void History::add_user(std::string_view text) {
  add("user", text);
}
void History::add_agent(std::string_view text) {
  add("assistant", text);
}

void History::add(std::string role, std::string_view text) {
  std::string t = clip_text(text, limits_.user_chars);
  if (t.empty()) return;
  chars_ += t.size();
  turns_.push_back({std::move(role), std::move(t)});
  while (turns_.size() > 1 && (turns_.size() > limits_.history_turns || chars_ > limits_.history_chars)) {
    chars_ -= turns_.front().text.size();
    turns_.pop_front();
  }
}

std::vector<ChatMessage> build_messages(std::string_view system_prompt, const Knowledge& knowledge,
                                        const History& history, std::string_view user_text,
                                        const std::vector<std::string>& image_urls,
                                        const PromptLimits& limits) {
  std::string system = clip_text(system_prompt, limits.system_prompt_chars);
  if (system.empty()) system = "You are a helpful assistant.";
  system +=
      "\n\nYou are speaking aloud in a live conversation: answer in a few short, plain sentences, without "
      "lists, markdown or emoji.";
  if (!knowledge.items().empty()) {
    system += "\n\nKnowledge for this conversation (use it when it is relevant):";
    for (const auto& item : knowledge.items()) system += "\n- " + item;
  }
  std::vector<ChatMessage> out;
  out.push_back({"system", std::move(system), {}});
  for (const auto& t : history.turns()) out.push_back({t.role, t.text, {}});
  std::string user = clip_text(user_text, limits.user_chars);
  if (!user.empty() || !image_urls.empty()) out.push_back({"user", std::move(user), image_urls});
  return out;
}

}  // namespace imago::conversation
