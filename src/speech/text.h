// Text handling before synthesis: UTF-8 checks and the sentence splitter that streaming and the
// engine lock granularity rely on.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace imago::speech {

// Number of Unicode code points in valid UTF-8.
size_t utf8_length(std::string_view s);
// True when `s` has no character other than Unicode white space.
bool is_blank(std::string_view s);

// Splits text into sentences (terminal punctuation followed by space, CJK full stops, line
// breaks); a piece longer than `max_chars` is cut at the last comma or space before the limit so
// the engine is never held for long. Pieces keep their punctuation (it drives intonation) and
// blank pieces are dropped.
std::vector<std::string> split_sentences(std::string_view text, size_t max_chars = 400);

}  // namespace imago::speech
