// Phones for engines that time only words (RHVoice): the phones of each word come from the text
// (espeak-ng's phonemiser) and are placed inside the word's time span; the gaps between words
// are pauses. Engine-neutral phone set: espeak-ng mnemonics (docs/speech.md, "Phones").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "speech/synthesis.h"

namespace imago::speech {

// `word_phones[i]` are the phones of `words[i]`. Within a word each vowel lasts twice as long
// as a consonant; a gap of 20 ms or more between words, and the edges of the sentence up to
// `total_s`, become the pause "_". Words without phones leave their span to the pause too.
std::vector<PhonemeTiming> place_phones_in_words(const std::vector<WordTiming>& words,
                                                 const std::vector<std::vector<std::string>>& word_phones,
                                                 double total_s);

// Moves word boundaries reported at a coarse granularity (RHVoice fires its word callbacks
// between 100 ms output chunks) onto the audio: each boundary between two words goes to the
// quietest 10 ms within `slack_s` of it; then every word is trimmed to its frames louder than
// -40 dB of the loudest frame, so silences inside a word's span become pauses.
void refine_word_times(std::vector<WordTiming>& words, const std::vector<int16_t>& samples, int rate,
                       double slack_s = 0.06);

// True for espeak-ng vowel (and diphthong) mnemonics, stress and length marks ignored.
bool is_vowel_phone(std::string_view phone);

// The bytes of `text` from code point `first` for `count` code points (UTF-8).
std::string utf8_slice(const std::string& text, size_t first, size_t count);

}  // namespace imago::speech
