// Designed voices (SPEC 2.4): an account's voice codes, each a base voice plus tuning axes.
// Codes are account-scoped: another account's code, or a revoked one, is simply not found.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct DesignedVoice {
  std::string code;  // UUID, the voice_code
  std::string account_id;
  std::string name;
  std::string base_voice;  // M1..F5
  std::string description;
  // Tuning offsets (SPEC 2.5).
  double gender = 0;
  double pitch = 0;
  double rate = 0;
  double brightness = 0;
  int64_t created_at = 0;  // Unix seconds
  int64_t updated_at = 0;
};

class VoiceStore {
 public:
  virtual ~VoiceStore() = default;
  // Stores a new voice; `code` must be a fresh UUID. Timestamps are set by the store.
  virtual Result<DesignedVoice> create(const DesignedVoice& v) = 0;
  // kNotFound for unknown, revoked or other accounts' codes.
  virtual Result<DesignedVoice> get(const std::string& account_id, const std::string& code) = 0;
  // The account's live voices, oldest first.
  virtual Result<std::vector<DesignedVoice>> list(const std::string& account_id) = 0;
  // Replaces name, base voice, description and axes; the code stays the same.
  virtual Result<DesignedVoice> update(const DesignedVoice& v) = 0;
  // Revokes the code for good (it never resolves again). kNotFound when not live.
  virtual Status revoke(const std::string& account_id, const std::string& code) = 0;
};

}  // namespace imago
