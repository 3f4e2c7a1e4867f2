// ISO-639-1 language codes, the espeak-ng voice that speaks each one, and the start-up check
// that decides which of them are offered (GET /v1/voices) and which are refused.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace imago::speech {

struct LanguageCandidate {
  const char* code;
  const char* espeak_voice;
  const char* name;
  // A native sentence in the language's own script and the phonemes (espeak-ng IPA) a correct
  // reading of it has. At start-up espeak-ng transcribes `sample`; the language is offered only
  // when that transcription stays in the language (no switch to another one, as espeak-ng does
  // for characters it cannot read) and is close to `expected_ipa`.
  const char* sample;
  const char* expected_ipa;
};

// Languages that work only for part of their writing system: a second, harder sentence is
// checked too; when it fails the language is offered with `note` and texts that contain what it
// cannot read are refused (e.g. Japanese with kanji: espeak-ng reads each one as the English
// words "Chinese letter").
struct PartialLanguage {
  const char* code;
  const char* full_sample;
  const char* full_expected_ipa;
  const char* note;  // shown in GET /v1/voices when the full check fails
  // Whether `text` uses what the partial language cannot read (only consulted when partial).
  bool (*unreadable)(std::string_view text);
};

// Every mapping we know; which of them work is decided at start-up by check_transcription.
const std::vector<LanguageCandidate>& language_candidates();
const LanguageCandidate* find_language_candidate(const std::string& code);
const PartialLanguage* find_partial_language(const std::string& code);

// Notes for languages that pass but read only part of what people write (not refused).
const char* language_caveat(const std::string& code);

struct TranscriptionCheck {
  bool passed = false;
  bool switched_language = false;  // espeak-ng fell back to another language, e.g. "(en)"
  double distance = 1;             // normalised edit distance to the expected phonemes, 0..1
  std::string reason;              // why it failed (empty when it passed)
};

// Largest normalised phoneme edit distance still counted as a correct reading: espeak-ng
// versions differ in small details (stress, vowel length, allophones), a wrong reading differs
// in most phonemes.
inline constexpr double kMaxPhonemeDistance = 0.25;

// Compares espeak-ng's IPA transcription (espeak_TextToPhonemes) with the expected one. Stress
// marks, syllable and word boundaries are ignored; the distance counts code points.
TranscriptionCheck check_transcription(std::string_view actual_ipa, std::string_view expected_ipa);

// True when the text contains CJK ideographs (kanji / hanzi).
bool contains_cjk_ideographs(std::string_view text);

}  // namespace imago::speech
