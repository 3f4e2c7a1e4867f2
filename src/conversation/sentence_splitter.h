// Turns a model's streamed text into sentences for speech, so the agent starts talking when the
// first sentence is complete instead of when the whole answer is.
//
// A sentence ends at . ! ? (or their CJK forms, or a line break) followed by a space or the end;
// decimals ("3.5"), common abbreviations ("Dr.", "e.g.") and initials ("J. Smith") do not end
// one. Text that runs long without an end (over max_chars) is cut at the last comma, semicolon,
// colon or space so speech never waits for a run-on sentence. Markdown marks (*, _, #, `) that a
// model may emit are removed, since they would be read aloud or garble the reading.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace imago::conversation {

class SentenceSplitter {
 public:
  explicit SentenceSplitter(size_t max_chars = 220) : max_chars_(max_chars) {}

  // Adds streamed text; returns the sentences it completed (possibly none).
  std::vector<std::string> push(std::string_view delta);
  // The rest at the end of the stream (empty when nothing speakable is left).
  std::string flush();

 private:
  std::string buf_;
  size_t max_chars_;
};

// The speakable form of a piece of model text: markdown marks removed, whitespace collapsed.
std::string speakable(std::string_view text);

}  // namespace imago::conversation
