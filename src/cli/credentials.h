// Where the CLI keeps its key (SPEC 5.3, 5.5): IMAGO_API_SECRET wins; otherwise the OS keychain
// through the Secret Service API (libsecret) when a session bus is there; otherwise
// ~/.config/imago/credentials (honouring XDG_CONFIG_HOME), a JSON file readable only by the user
// (0600, in a 0700 directory). Keys are kept per base URL, so one machine can talk to several
// servers. IMAGO_KEYRING=file skips the keychain.
#pragma once
#include <optional>
#include <string>

namespace imago::cli {

struct StoredSecret {
  std::string secret;
  std::string source;  // "environment", "keychain" or the file path
};

std::optional<StoredSecret> load_secret(const std::string& base_url, bool include_env = true);
// Returns where it went ("keychain" or the file path); empty with *error set on failure.
std::string save_secret(const std::string& base_url, const std::string& secret, std::string* error);
// Removes it from the keychain and the file. True when something was removed.
bool remove_secret(const std::string& base_url);
std::string credentials_path();

}  // namespace imago::cli
