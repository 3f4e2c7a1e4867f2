// ISO-639-1 language codes and the espeak-ng voice that speaks each one.
#pragma once
#include <string>
#include <vector>

#include "speech/speech_service.h"

namespace imago::speech {

struct LanguageCandidate {
  const char* code;
  const char* espeak_voice;
  const char* name;
  const char* sample;  // a short phrase in the language (checked at startup)
};

// Every mapping we know; which of them work is decided at startup by synthesizing `sample`.
const std::vector<LanguageCandidate>& language_candidates();
const LanguageCandidate* find_language_candidate(const std::string& code);

}  // namespace imago::speech
