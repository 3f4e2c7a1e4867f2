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

// RHVoice often reports a short word inside the same output chunk as its neighbour, so it gets
// (almost) no time: such a word (under half of 30 ms per consonant, 60 per vowel) shares the span
// of it and its longer touching neighbour in proportion to their phones.
void spread_crowded_words(std::vector<WordTiming>& words,
                          const std::vector<std::vector<std::string>>& word_phones);

// Moves word boundaries reported at a coarse granularity (RHVoice fires its word callbacks
// between 100 ms output chunks) onto the audio: each boundary between two words goes to the
// quietest 10 ms within `slack_s` of it; then every word is trimmed to its frames louder than
// -40 dB of the loudest frame, so silences inside a word's span become pauses.
void refine_word_times(std::vector<WordTiming>& words, const std::vector<int16_t>& samples, int rate,
                       double slack_s = 0.06);

// As above, but each word's phones are aligned to its audio: the loudness of 5 ms frames is
// matched by a segmental dynamic programme to the phones in order, vowels drawn to the loud
// frames, closures (p b m f v) to the quiet ones, every phone at least 10 ms (vowels 20 ms, lip
// closures p b m 50 ms) and at most 300 ms. Where a word is too short for that, the even placement is kept.
std::vector<PhonemeTiming> align_phones_in_words(const std::vector<WordTiming>& words,
                                                 const std::vector<std::vector<std::string>>& word_phones,
                                                 const std::vector<int16_t>& samples, int rate);

// True for espeak-ng vowel (and diphthong) mnemonics, stress and length marks ignored.
bool is_vowel_phone(std::string_view phone);

// The bytes of `text` from code point `first` for `count` code points (UTF-8).
std::string utf8_slice(const std::string& text, size_t first, size_t count);

}  // namespace imago::speech
