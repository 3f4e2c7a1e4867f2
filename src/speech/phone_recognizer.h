// Phones from audio without text: CMU PocketSphinx's phone decoder (`-allphone` with the
// phonetic language model of Debian's pocketsphinx-en-us) turns speech into timed phones in the
// engine-neutral set (espeak-ng mnemonics, docs/speech.md "Phones"), so lip sync can follow the
// sounds of uploaded or pushed audio rather than only its loudness. US English acoustic model:
// other languages give phones of the nearest English sounds, which still close the lips on
// p/b/m and round them on o/u/w.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::speech {

inline constexpr const char* kPhoneModelDir = "/usr/share/pocketsphinx/model/en-us";

struct PhoneRecognizerOptions {
  std::string model_dir = kPhoneModelDir;  // holds en-us/ and en-us-phone.lm.bin
};

// One decoder (the acoustic model, ~110 MB resident, ~0.3 s of CPU to load). recognize() costs
// about 0.8 s of CPU per second of audio (phone_recognizer_benchmark). Calls on one recognizer
// are serialised internally.
class PhoneRecognizer {
 public:
  // kUnavailable when the model files are missing.
  static Result<std::unique_ptr<PhoneRecognizer>> create(const PhoneRecognizerOptions& options = {});
  ~PhoneRecognizer();
  PhoneRecognizer(const PhoneRecognizer&) = delete;
  PhoneRecognizer& operator=(const PhoneRecognizer&) = delete;

  // Timed phones of mono s16 `samples` at any `sample_rate` (resampled to 16 kHz), in seconds
  // from the first sample, in order, without overlaps; silences and noises are the pause "_".
  // Empty when no speech was found. kInvalidArgument for a rate outside 8000..192000.
  Result<std::vector<PhonemeTiming>> recognize(const std::vector<int16_t>& samples, int sample_rate);

 private:
  struct Impl;
  explicit PhoneRecognizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// PocketSphinx's phone name (ARPAbet: "AA", "CH", "SIL", "+NSN+") as an espeak-ng mnemonic
// ("A:", "tS", "_"); silence, fillers and unknown names map to "_". The table is flite's
// (flite_engine.h): both use the CMU phone set.
std::string cmu_phone_to_neutral(std::string_view cmu_phone);

// A process-wide recognizer, loaded on first use; nullptr when the models are missing.
PhoneRecognizer* shared_phone_recognizer();

// For audio that came without text: when `audio` has no phone timing, fills `phonemes` from the
// shared recognizer. Leaves `audio` as it was when recognition is unavailable or finds no
// speech (lip sync then follows loudness). Returns true when phones were added.
bool add_recognized_phones(Audio& audio);

}  // namespace imago::speech
