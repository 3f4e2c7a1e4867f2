#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "store/secret_store.h"

namespace imago {

namespace {

class FileSecretStore final : public SecretStore {
 public:
  explicit FileSecretStore(std::string dir) : dir_(std::move(dir)) {}

  Result<std::string> get_or_create(const std::string& name, const std::string& initial) override {
    std::lock_guard lock(mu_);
    auto v = read_locked(name);
    if (v.ok() || v.status().code() != Code::kNotFound) return v;
    if (Status st = write_locked(name, initial); !st.ok()) return st;
    return initial;
  }

  Result<std::string> get(const std::string& name) override {
    std::lock_guard lock(mu_);
    return read_locked(name);
  }

  Result<std::string> update(const std::string& name,
                             const std::function<Result<std::string>(const std::string&)>& next) override {
    std::lock_guard lock(mu_);
    auto cur = read_locked(name);
    if (!cur.ok()) return cur.status();
    auto v = next(*cur);
    if (!v.ok()) return v.status();
    if (Status st = write_locked(name, *v); !st.ok()) return st;
    return v;
  }

  bool shared() const override { return false; }

 private:
  std::string path(const std::string& name) const { return dir_ + "/" + name + ".json"; }

  Result<std::string> read_locked(const std::string& name) const {
    std::ifstream in(path(name));
    if (!in) return Status::NotFound("no secret " + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  Status write_locked(const std::string& name, const std::string& value) const {
    const std::string p = path(name);
    const std::string tmp = p + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return Status::Internal("cannot write " + tmp);
    ::chmod(tmp.c_str(), 0600);
    bool ok = std::fwrite(value.data(), 1, value.size(), f) == value.size();
    ok = (std::fflush(f) == 0) && ok;
    std::fclose(f);
    if (!ok || std::rename(tmp.c_str(), p.c_str()) != 0) return Status::Internal("cannot write " + p);
    return Status::Ok();
  }

  std::string dir_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<SecretStore> make_file_secret_store(std::string dir) {
  return std::make_unique<FileSecretStore>(std::move(dir));
}

}  // namespace imago
