// A small synchronous WebSocket client for black-box tests (Boost.Beast stays in ws_client.cpp).
// A reader thread collects incoming messages; read() waits for the next one with a timeout.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace imago::testing {

struct WsMessage {
  bool text = true;
  std::string data;
  std::chrono::steady_clock::time_point at;  // when it was received
};

class WsClient {
 public:
  struct Options {
    std::string bearer;            // sent as Authorization: Bearer unless via_subprotocol
    bool via_subprotocol = false;  // Sec-WebSocket-Protocol: imago.v1, bearer.<token>
    // Not empty: wss://, trusting this PEM (peer and host verified). Over TLS, sends and the reader
    // thread share one OpenSSL stream: send only while no message is expected (tests, not load).
    std::string ca_file;
    std::string origin;  // not empty: sent as the Origin header, as a browser does
  };
  // Connects to ws://127.0.0.1:port<target> (wss:// with ca_file). On a refused upgrade returns null and
  // fills *http_status / *http_body with the server's HTTP answer.
  static std::unique_ptr<WsClient> connect(int port, const std::string& target, const Options& options,
                                           int* http_status = nullptr, std::string* http_body = nullptr,
                                           std::string* subprotocol = nullptr);
  ~WsClient();

  bool send_text(const std::string& message);
  bool send_binary(const std::string& message);  // e.g. microphone PCM
  // The next message within timeout_ms; nullopt on timeout or once the connection is closed and
  // everything received has been read.
  std::optional<WsMessage> read(int timeout_ms = 5000);
  // The next text message whose JSON "type" is `type`, skipping others (binary included).
  std::optional<WsMessage> read_event(const std::string& type, int timeout_ms = 10000);
  bool closed() const;
  int close_code() const;  // the server's close code once closed (0 if none yet)
  void close();            // drops the TCP connection (the server sees 1006)

  struct Impl;

 private:
  explicit WsClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace imago::testing
