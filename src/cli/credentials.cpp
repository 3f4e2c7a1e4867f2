#include "cli/credentials.h"

#include <fcntl.h>
#include <libsecret/secret.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace imago::cli {

namespace {

const SecretSchema* schema() {
  static const SecretSchema s = {
      "org.imago.cli.ApiSecret",
      SECRET_SCHEMA_NONE,
      {{"base_url", SECRET_SCHEMA_ATTRIBUTE_STRING}, {nullptr, SECRET_SCHEMA_ATTRIBUTE_STRING}},
      0,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
      nullptr};
  return &s;
}

// Without a session bus libsecret would try to autolaunch one: treat that as "no keyring".
bool keyring_wanted() {
  const char* mode = std::getenv("IMAGO_KEYRING");
  if (mode && std::string(mode) == "file") return false;
  const char* bus = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  return bus && *bus;
}

boost::json::object read_file_json() {
  std::ifstream in(credentials_path());
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  boost::system::error_code ec;
  auto v = boost::json::parse(ss.str(), ec);
  return !ec && v.is_object() ? v.as_object() : boost::json::object{};
}

bool write_file_json(const boost::json::object& o, std::string* error) {
  namespace fs = std::filesystem;
  const fs::path path = credentials_path();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  ::chmod(path.parent_path().c_str(), 0700);
  const std::string tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot write " + tmp;
    return false;
  }
  ::fchmod(fd, 0600);  // whatever the umask
  const std::string text = boost::json::serialize(o) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path.string();
    return false;
  }
  return true;
}

}  // namespace

std::string credentials_path() {
  std::string base;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    base = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::string(h) + "/.config";
  else
    base = ".";
  return base + "/imago/credentials";
}

std::optional<StoredSecret> load_secret(const std::string& base_url, bool include_env) {
  if (include_env) {
    if (const char* e = std::getenv("IMAGO_API_SECRET"); e && *e) return StoredSecret{e, "environment"};
  }
  if (keyring_wanted()) {
    GError* err = nullptr;
    gchar* pw = secret_password_lookup_sync(schema(), nullptr, &err, "base_url", base_url.c_str(), nullptr);
    if (err) g_error_free(err);
    if (pw) {
      StoredSecret s{pw, "keychain"};
      secret_password_free(pw);
      return s;
    }
  }
  auto o = read_file_json();
  if (auto* entry = o.if_contains(base_url); entry && entry->is_object()) {
    if (auto* s = entry->as_object().if_contains("api_secret"); s && s->is_string()) {
      return StoredSecret{std::string(s->as_string()), credentials_path()};
    }
  }
  return std::nullopt;
}

std::string save_secret(const std::string& base_url, const std::string& secret, std::string* error) {
  if (keyring_wanted()) {
    GError* err = nullptr;
    const std::string label = "Imago API key for " + base_url;
    gboolean ok =
        secret_password_store_sync(schema(), SECRET_COLLECTION_DEFAULT, label.c_str(), secret.c_str(),
                                   nullptr, &err, "base_url", base_url.c_str(), nullptr);
    if (err) g_error_free(err);
    if (ok) return "keychain";
  }
  auto o = read_file_json();
  o[base_url] = {{"api_secret", secret}};
  if (!write_file_json(o, error)) return "";
  return credentials_path();
}

bool remove_secret(const std::string& base_url) {
  bool removed = false;
  if (keyring_wanted()) {
    GError* err = nullptr;
    removed = secret_password_clear_sync(schema(), nullptr, &err, "base_url", base_url.c_str(), nullptr);
    if (err) g_error_free(err);
  }
  auto o = read_file_json();
  if (o.erase(base_url) > 0) {
    std::string error;
    removed = write_file_json(o, &error) || removed;
  }
  return removed;
}

}  // namespace imago::cli
