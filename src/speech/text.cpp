#include "speech/text.h"

#include <algorithm>
#include <array>

namespace imago::speech {

namespace {

size_t seq_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 6) return 2;
  if ((c >> 4) == 14) return 3;
  if ((c >> 3) == 30) return 4;
  return 1;
}

// Decodes the code point at s[i] (valid UTF-8 assumed; malformed bytes decode as themselves).
char32_t decode(std::string_view s, size_t i, size_t* len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = std::min(seq_len(c), s.size() - i);
  *len = n;
  if (n == 1) return c;
  char32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

bool is_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x85 ||
         c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200B) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

bool is_terminal(char32_t c) {
  return c == '.' || c == '!' || c == '?' || c == ';' || c == 0x2026;
}
bool is_cjk_terminal(char32_t c) {
  return c == 0x3002 || c == 0xFF01 || c == 0xFF1F || c == 0xFF1B || c == 0x0964 /* danda */;
}
bool is_closer(char32_t c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == 0x201D || c == 0x2019;
}

// "Dr. Smith", "e.g. this": a period after these is not a sentence end.
bool is_abbreviation(std::string_view before) {
  size_t start = before.find_last_of(" \t\n(\"");
  std::string_view w = before.substr(start == std::string_view::npos ? 0 : start + 1);
  if (w.size() == 1 && w[0] >= 'A' && w[0] <= 'Z') return true;  // initials
  static const std::array<std::string_view, 14> kAbbr = {"Mr", "Mrs", "Ms",  "Dr",  "St",  "Prof", "Sr",
                                                         "Jr", "vs",  "etc", "e.g", "i.e", "No",   "Mt"};
  return std::find(kAbbr.begin(), kAbbr.end(), w) != kAbbr.end();
}

// Leading and trailing white space carries nothing for the engine (and shifts its text positions).
std::string_view strip(std::string_view s) {
  while (!s.empty()) {
    size_t len;
    if (!is_space(decode(s, 0, &len))) break;
    s.remove_prefix(len);
  }
  while (!s.empty()) {
    size_t i = s.size() - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;  // start of the last code point
    size_t len;
    if (!is_space(decode(s, i, &len))) break;
    s.remove_suffix(s.size() - i);
  }
  return s;
}

void push_piece(std::vector<std::string>& out, std::string_view piece, size_t max_chars) {
  while (!piece.empty()) {
    piece = strip(piece);
    if (piece.empty()) return;
    if (utf8_length(piece) <= max_chars) {
      out.emplace_back(piece);
      return;
    }
    // Cut at the last comma (else space) before max_chars code points.
    size_t i = 0, chars = 0, last_comma = 0, last_space = 0;
    while (i < piece.size() && chars < max_chars) {
      size_t len;
      char32_t c = decode(piece, i, &len);
      i += len;
      ++chars;
      if (c == ',' || c == 0xFF0C || c == 0x3001)
        last_comma = i;
      else if (is_space(c))
        last_space = i;
    }
    size_t cut = last_comma ? last_comma : last_space ? last_space : i;
    std::string_view head = strip(piece.substr(0, cut));
    if (!head.empty()) out.emplace_back(head);
    piece.remove_prefix(cut);
  }
}

}  // namespace

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool is_blank(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t len;
    if (!is_space(decode(s, i, &len))) return false;
    i += len;
  }
  return true;
}

std::vector<std::string> split_sentences(std::string_view text, size_t max_chars) {
  std::vector<std::string> out;
  size_t start = 0, i = 0;
  while (i < text.size()) {
    size_t len;
    char32_t c = decode(text, i, &len);
    size_t end = 0;  // exclusive end of the sentence when c closes one
    if (c == '\n') {
      end = i + len;
    } else if (is_cjk_terminal(c)) {
      end = i + len;
      while (end < text.size()) {  // keep closing quotes with their sentence
        size_t l2;
        if (!is_closer(decode(text, end, &l2))) break;
        end += l2;
      }
    } else if (is_terminal(c)) {
      size_t j = i + len;
      while (j < text.size()) {  // "?!", "...", closing quotes
        size_t l2;
        char32_t d = decode(text, j, &l2);
        if (!is_terminal(d) && !is_closer(d)) break;
        j += l2;
      }
      size_t l3 = 0;
      bool followed_by_space = j >= text.size() || is_space(decode(text, j, &l3));
      if (followed_by_space && !(c == '.' && is_abbreviation(text.substr(start, i - start)))) end = j;
    }
    if (end) {
      push_piece(out, text.substr(start, end - start), max_chars);
      start = i = end;
    } else {
      i += len;
    }
  }
  if (start < text.size()) push_piece(out, text.substr(start), max_chars);
  return out;
}

}  // namespace imago::speech
