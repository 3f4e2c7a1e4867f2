#include "cli/login.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli/client.h"
#include "cli/credentials.h"
#include "cli/output.h"
#include "util/base64.h"
#include "util/crypto.h"
#include "util/random.h"

extern char** environ;

namespace imago::cli {

namespace {

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string query_value(const std::string& target, const std::string& name) {
  auto q = target.find('?');
  if (q == std::string::npos) return "";
  std::string rest = target.substr(q + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t amp = rest.find('&', pos);
    std::string part = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    auto eq = part.find('=');
    if (eq != std::string::npos && part.substr(0, eq) == name) return part.substr(eq + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return "";
}

// $IMAGO_BROWSER=none: only print addresses, never claim to open them.
bool browser_disabled() {
  const char* b = std::getenv("IMAGO_BROWSER");
  return b && std::string_view(b) == "none";
}

// Opens a URL in the person's browser: $IMAGO_BROWSER ("none" to only print), else xdg-open.
void open_browser(const std::string& url, const Output& out) {
  std::string cmd = "xdg-open";
  if (const char* b = std::getenv("IMAGO_BROWSER"); b && *b) cmd = b;
  if (cmd == "none") return;
  pid_t pid = 0;
  std::string u = url;
  char* argv[] = {cmd.data(), u.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  if (posix_spawnp(&pid, cmd.c_str(), &fa, nullptr, argv, environ) != 0) {
    out.note("(could not start " + cmd + "; open the address above by hand)");
  }
  posix_spawn_file_actions_destroy(&fa);
}

int finish_login(const std::string& base_url, const HttpResult& r, const Output& out) {
  auto v = r.json();
  if (r.status != 200 || !v.is_object()) return out.fail("login failed: " + r.error_text());
  const auto& d = v.at("data").as_object();
  const std::string secret(d.at("api_secret").as_string());
  std::string error;
  const std::string where = save_secret(base_url, secret, &error);
  if (where.empty()) return out.fail("signed in, but could not store the key: " + error);
  const std::string alias(d.at("alias").as_string()), key_id(d.at("key_id").as_string());
  if (out.json) {
    out.data({{"logged_in", true}, {"alias", alias}, {"key_id", key_id}, {"stored_in", where}});
  } else {
    std::cout << "Logged in: key " << alias << " (" << key_id << ") stored in " << where << "\n";
  }
  return 0;
}

}  // namespace

std::string this_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !*buf) return "unknown";
  std::string h;
  for (char* p = buf; *p && h.size() < 63; ++p) {
    char c = *p;
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    h += ok ? c : '-';
  }
  return h;
}

int login_browser(const std::string& base_url, Output& out) {
  // PKCE (RFC 7636, S256): only the challenge travels through the browser.
  const std::string verifier = random_base62(64);
  const std::string challenge = base64url_encode(sha256(verifier));
  const std::string state = random_base62(24);

  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // never reachable from another machine
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return out.fail("cannot listen on 127.0.0.1 for the browser's answer; try: imago login --device");
  }
  const int port = ntohs(addr.sin_port);
  const std::string url = base_url + "/cli-login?challenge=" + challenge +
                          "&hostname=" + url_encode(this_hostname()) + "&port=" + std::to_string(port) +
                          "&state=" + state;
  if (browser_disabled()) {
    out.note("Open this address in a browser to approve this device:\n\n  " + url + "\n");
  } else {
    out.note("Opening your browser to approve this device. If it does not open, visit:\n\n  " + url + "\n");
    open_browser(url, out);
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  std::string code;
  while (code.empty()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::close(fd);
      return out.fail("timed out waiting for the browser (5 minutes)");
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::string req;
    char buf[4096];
    pollfd cp{c, POLLIN, 0};
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384 && ::poll(&cp, 1, 5000) > 0) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
    }
    std::string target;
    if (req.rfind("GET ", 0) == 0) target = req.substr(4, req.find(' ', 4) - 4);
    std::string page, status = "200 OK";
    std::string error = query_value(target, "error");
    if (target.rfind("/callback", 0) != 0) {
      status = "404 Not Found";
      page = "Not found";
    } else if (query_value(target, "state") != state) {
      status = "400 Bad Request";
      page = "This sign-in link does not belong to the waiting imago command.";
    } else if (!error.empty()) {
      page = "Sign-in denied. You can close this tab.";
      code = "-";
    } else {
      code = query_value(target, "code");
      page = code.empty() ? "Missing code." : "The imago CLI is signed in. You can close this tab.";
    }
    const std::string html = "<!doctype html><meta charset=utf-8><title>imago</title><p>" + page + "</p>";
    const std::string resp =
        "HTTP/1.1 " + status +
        "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " + std::to_string(html.size()) +
        "\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n" + html;
    (void)!::write(c, resp.data(), resp.size());
    ::close(c);
    if (!error.empty()) {
      ::close(fd);
      return out.fail("the sign-in was denied in the browser");
    }
  }
  ::close(fd);
  Client anon(base_url, "");
  boost::json::object body{{"code", code}, {"code_verifier", verifier}};
  return finish_login(base_url, anon.call("POST", "/v1/cli/token", boost::json::serialize(body)), out);
}

int login_device(const std::string& base_url, Output& out) {
  Client anon(base_url, "");
  auto start = anon.call("POST", "/v1/cli/device/code",
                         boost::json::serialize(boost::json::object{{"hostname", this_hostname()}}));
  auto d = start.json();
  if (start.status != 200 || !d.is_object())
    return out.fail("could not start the device login: " + start.error_text());
  const std::string device_code(d.at("device_code").as_string());
  const std::string user_code(d.at("user_code").as_string());
  const std::string uri(d.at("verification_uri").as_string());
  int interval = static_cast<int>(d.at("interval").to_number<int64_t>());
  const int expires_in = static_cast<int>(d.at("expires_in").to_number<int64_t>());
  out.note("To sign in, open " + uri +
           " in any browser where you are signed in, and enter the code:\n\n    " + user_code +
           "\n\n(waiting up to " + std::to_string(expires_in / 60) + " minutes)");
  if (out.json) out.data({{"user_code", user_code}, {"verification_uri", uri}, {"expires_in", expires_in}});

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(expires_in + 5);
  const boost::json::object poll_body{{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                                      {"device_code", device_code}};
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::seconds(interval));
    auto r = anon.call("POST", "/v1/cli/device/token", boost::json::serialize(poll_body));
    if (r.status == 200) return finish_login(base_url, r, out);
    const std::string code = r.error_code();
    if (code == "authorization_pending") continue;
    if (code == "slow_down") {
      interval += 5;  // RFC 8628 3.5
      continue;
    }
    if (code == "expired_token")
      return out.fail("the code expired before it was entered; run imago login --device again");
    if (code == "access_denied") return out.fail("the sign-in was denied in the browser");
    if (r.status == 0 || r.status == 429 || r.status >= 500) continue;  // transient: keep polling
    return out.fail("device login failed: " + r.error_text());
  }
  return out.fail("the code expired before it was entered; run imago login --device again");
}

int logout(const std::string& base_url, Output& out) {
  auto stored = load_secret(base_url, false);
  if (!stored) return out.fail("not logged in to " + base_url + " (nothing stored)");
  Client c(base_url, stored->secret);
  auto me = c.call("GET", "/v1/me");
  bool revoked = false;
  std::string key_id;
  if (me.status == 200) {
    key_id = std::string(me.json().at("data").at("key_id").as_string());
    auto del = c.call("DELETE", "/v1/keys/" + key_id);
    if (del.status != 200) return out.fail("could not revoke the key on the server: " + del.error_text());
    revoked = true;
  } else if (me.status != 401) {
    return out.fail("could not reach the server to revoke the key: " + me.error_text());
  }
  remove_secret(base_url);
  if (out.json) {
    out.data({{"logged_out", true}, {"revoked", revoked}, {"key_id", key_id}});
  } else {
    std::cout << (revoked ? "Revoked key " + key_id + " on the server and removed it locally.\n"
                          : "The stored key was no longer valid; removed it locally.\n");
  }
  return 0;
}

}  // namespace imago::cli
