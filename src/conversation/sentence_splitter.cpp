#include "conversation/sentence_splitter.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace imago::conversation {

namespace {

constexpr std::array<std::string_view, 20> kAbbreviations = {
    "mr",  "mrs",    "ms", "dr",  "prof", "st",  "sr",  "jr",  "vs",   "e.g",
    "i.e", "approx", "mt", "inc", "ltd",  "jan", "feb", "aug", "sept", "oct"};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The word that ends just before position `dot` (lower case, without leading punctuation).
std::string word_before(const std::string& s, size_t dot) {
  size_t b = dot;
  while (b > 0 && !is_space(s[b - 1]) && s[b - 1] != '(' && s[b - 1] != '"') --b;
  std::string w = s.substr(b, dot - b);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return w;
}

// Length of the sentence end at position i (the terminator's bytes), or 0.
size_t terminator_at(const std::string& s, size_t i) {
  char c = s[i];
  if (c == '!' || c == '?' || c == '\n') return 1;
  if (c == '.') {
    std::string w = word_before(s, i);
    if (w.empty()) return 1;
    if (std::find(kAbbreviations.begin(), kAbbreviations.end(), w) != kAbbreviations.end()) return 0;
    if (w.size() == 1 && std::isupper(static_cast<unsigned char>(s[i - 1]))) return 0;  // an initial
    return 1;
  }
  // 。！？ (U+3002, U+FF01, U+FF1F) end a sentence without a following space.
  static constexpr std::array<std::string_view, 3> kCjk = {"\xE3\x80\x82", "\xEF\xBC\x81", "\xEF\xBC\x9F"};
  for (auto t : kCjk) {
    if (s.compare(i, t.size(), t) == 0) return t.size();
  }
  return 0;
}

}  // namespace

std::string speakable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (char c : text) {
    if (c == '*' || c == '#' || c == '`' || c == '_' || c == '~') continue;
    if (is_space(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> SentenceSplitter::push(std::string_view delta) {
  buf_.append(delta);
  std::vector<std::string> out;
  size_t start = 0;
  auto emit = [&](size_t end) {
    std::string s = speakable(std::string_view(buf_).substr(start, end - start));
    if (!s.empty()) out.push_back(std::move(s));
    start = end;
  };
  size_t i = 0;
  while (i < buf_.size()) {
    size_t len = terminator_at(buf_, i);
    if (len == 0) {
      ++i;
      continue;
    }
    size_t end = i + len;
    // Closing quotes/brackets belong to the sentence.
    while (end < buf_.size() && (buf_[end] == '"' || buf_[end] == ')' || buf_[end] == '\'')) ++end;
    bool ascii_terminator = len == 1 && buf_[i] != '\n';
    if (ascii_terminator) {
      // Only a following space ends it ("3.5", "example.com" do not); more punctuation (?!, ...)
      // is part of the same end. At the end of the buffer we cannot know yet: wait.
      while (end < buf_.size() && (buf_[end] == '.' || buf_[end] == '!' || buf_[end] == '?')) ++end;
      if (end >= buf_.size()) break;
      if (!is_space(buf_[end])) {
        i = end;
        continue;
      }
    }
    emit(end);
    i = end;
  }
  // A run-on sentence: cut at the last pause so speech does not wait for it.
  while (buf_.size() - start > max_chars_) {
    std::string_view rest = std::string_view(buf_).substr(start, max_chars_);
    size_t cut = rest.find_last_of(",;:");
    if (cut == std::string_view::npos || cut < max_chars_ / 3) cut = rest.find_last_of(' ');
    if (cut == std::string_view::npos || cut == 0) cut = max_chars_ - 1;
    // Do not cut inside a UTF-8 sequence.
    size_t end = start + cut + 1;
    while (end < buf_.size() && (static_cast<unsigned char>(buf_[end]) & 0xC0) == 0x80) ++end;
    emit(end);
  }
  buf_.erase(0, start);
  return out;
}

std::string SentenceSplitter::flush() {
  std::string s = speakable(buf_);
  buf_.clear();
  return s;
}

}  // namespace imago::conversation
