#include "conversation/conversation.h"

#include "conversation/builtin_responder.h"
#include "conversation/sentence_splitter.h"

namespace imago::conversation {

namespace {
bool blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}
}  // namespace

Conversation::Conversation(ConversationOptions options, ConversationSink sink)
    : opts_(std::move(options)), sink_(std::move(sink)), knowledge_(opts_.limits), history_(opts_.limits) {
  if (opts_.llm) client_ = std::make_unique<ChatClient>(*opts_.llm);
  thread_ = std::thread([this] { worker(); });
}

Conversation::~Conversation() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    ++generation_;
    if (cancel_) cancel_->cancel();
  }
  cv_.notify_all();
  thread_.join();
}

void Conversation::user_text(const std::string& text) {
  if (blank(text)) return;
  std::string t = clip_text(text, opts_.limits.user_chars);
  if (sink_.transcript) sink_.transcript("user", t, true);
  {
    std::lock_guard lock(mu_);
    // The viewer spoke over the agent: the running answer stops, only the newest turn waits.
    ++generation_;
    if (cancel_) cancel_->cancel();
    pending_.clear();
    pending_.push_back(std::move(t));
  }
  cv_.notify_all();
}

void Conversation::add_context(const std::string& text) {
  std::lock_guard lock(mu_);
  knowledge_.add(text);
}

void Conversation::agent_said(const std::string& text) {
  std::lock_guard lock(mu_);
  history_.add_agent(text);
}

void Conversation::camera_frame(std::string data_url) {
  std::lock_guard lock(mu_);
  camera_frame_ = std::move(data_url);
}

void Conversation::interrupt() {
  std::lock_guard lock(mu_);
  ++generation_;
  if (cancel_) cancel_->cancel();
  pending_.clear();
}

bool Conversation::busy() const {
  std::lock_guard lock(mu_);
  return running_ || !pending_.empty();
}

void Conversation::wait_idle() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !running_ && pending_.empty(); });
}

ConversationStats Conversation::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<Turn> Conversation::history() const {
  std::lock_guard lock(mu_);
  return {history_.turns().begin(), history_.turns().end()};
}

size_t Conversation::knowledge_items() const {
  std::lock_guard lock(mu_);
  return knowledge_.items().size();
}

void Conversation::worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (stop_) return;
    std::string text = std::move(pending_.front());
    pending_.pop_front();
    uint64_t generation = generation_;
    running_ = true;
    lock.unlock();
    answer(text, generation);
    lock.lock();
    running_ = false;
    cv_.notify_all();
  }
}

void Conversation::answer(const std::string& text, uint64_t generation) {
  if (sink_.thinking) sink_.thinking();
  std::vector<ChatMessage> messages;
  std::string system_prompt;
  Knowledge knowledge_copy;
  {
    std::lock_guard lock(mu_);
    // A frame goes with one turn only: the model sees what the viewer showed when they spoke, and
    // the history stays text (frames would blow the context and the upstream's body limits).
    std::vector<std::string> images;
    if (client_ && opts_.attach_images && !camera_frame_.empty()) images.push_back(std::move(camera_frame_));
    camera_frame_.clear();
    knowledge_copy = with_agent_knowledge(opts_.agent_knowledge, knowledge_, opts_.limits);
    messages = build_messages(opts_.system_prompt, knowledge_copy, history_, text, images, opts_.limits);
    history_.add_user(text);
  }
  auto current = [&] {
    std::lock_guard lock(mu_);
    return generation_ == generation && !stop_;
  };
  std::string spoken;
  if (client_) {
    spoken = answer_with_model(messages, generation);
  } else {
    BuiltinAnswer a = builtin_answer(opts_.system_prompt, knowledge_copy, text);
    SentenceSplitter splitter;
    auto sentences = splitter.push(a.text);
    sentences.push_back(splitter.flush());
    for (const auto& s : sentences) {
      if (s.empty() || !current()) break;
      if (sink_.speak) sink_.speak(s);
      if (sink_.transcript) sink_.transcript("agent", s, false);
      spoken += (spoken.empty() ? "" : " ") + s;
    }
  }
  std::lock_guard lock(mu_);
  if (!spoken.empty()) history_.add_agent(spoken);
  bool cancelled = generation_ != generation;
  if (cancelled) {
    ++stats_.cancelled;
  } else {
    ++stats_.answers;
  }
  if (!spoken.empty() && sink_.transcript) sink_.transcript("agent", spoken, true);
}

std::string Conversation::answer_with_model(const std::vector<ChatMessage>& messages, uint64_t generation) {
  auto cancel = std::make_shared<CancelFlag>();
  {
    std::lock_guard lock(mu_);
    if (generation_ != generation || stop_) return "";
    cancel_ = cancel;
  }
  SentenceSplitter splitter;
  std::string spoken;
  auto say = [&](const std::string& s) {
    if (s.empty() || cancel->cancelled()) return;
    if (sink_.speak) sink_.speak(s);
    if (sink_.transcript) sink_.transcript("agent", s, false);
    spoken += (spoken.empty() ? "" : " ") + s;
  };
  ChatResult r = client_->stream(
      messages,
      [&](std::string_view delta) {
        for (const auto& s : splitter.push(delta)) say(s);
        return !cancel->cancelled();
      },
      cancel.get());
  if (r.outcome == ChatOutcome::kCompleted) {
    say(splitter.flush());
  } else if (r.outcome != ChatOutcome::kCancelled && !cancel->cancelled()) {
    // A failure mid-answer: what was complete has been spoken; finish with an apology.
    {
      std::lock_guard lock(mu_);
      ++stats_.failed;
    }
    if (sink_.error) sink_.error(kLlmErrorCode, r.message);
    say(kApology);
  }
  std::lock_guard lock(mu_);
  if (cancel_ == cancel) cancel_.reset();
  return spoken;
}

}  // namespace imago::conversation
