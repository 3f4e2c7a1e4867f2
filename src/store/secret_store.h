// Named secrets the server itself keeps (the runtime-token signing keys): one small text value per
// name, created once and replaced atomically. On a single node they live in files in the data
// directory (0600); in cluster mode in the database (`cluster_secrets`), so every node signs and
// verifies with the same keys (docs/operations.md, "Cluster mode").
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "util/status.h"

namespace imago {

class SecretStore {
 public:
  virtual ~SecretStore() = default;
  // The stored value; when there is none, stores `initial` first. Atomic: when several nodes start
  // at once, the first one's value wins and every caller gets that one.
  virtual Result<std::string> get_or_create(const std::string& name, const std::string& initial) = 0;
  // The stored value, or kNotFound.
  virtual Result<std::string> get(const std::string& name) = 0;
  // Replaces the value with `next(current)`, with the value locked against concurrent updates (so
  // two rotations at once both take effect, one after the other). kNotFound when there is none;
  // a failed Status from `next` leaves the value as it was. Returns the new value.
  virtual Result<std::string> update(const std::string& name,
                                     const std::function<Result<std::string>(const std::string&)>& next) = 0;
  // True when other processes share the values (they may change under this one).
  virtual bool shared() const = 0;
};

// Files `<dir>/<name>.json`, written 0600 through a temporary file and a rename. One process.
std::unique_ptr<SecretStore> make_file_secret_store(std::string dir);

}  // namespace imago
