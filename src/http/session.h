// Private to src/http: one HTTP/1.1 connection, plain or TLS (the Stream parameter, see
// streams.h). All its handlers run on the connection's I/O thread; requests are processed one at a
// time (pipelined ones wait in the read buffer), which answers them in order without any
// reordering queue. The member definitions are in session_impl.h, instantiated once per stream
// type in session_plain.cpp and session_tls.cpp.
#pragma once
#include <array>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "http/server_internal.h"
#include "http/spool_body.h"
#include "http/streams.h"

namespace imago::http::detail {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

template <class Stream>
class Session final : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  // A TLS stream has not done its handshake yet: start() does it (after checking that the client
  // speaks TLS at all), under the handshake timeout.
  Session(Stream&& stream, ServerContext& ctx, std::unique_ptr<ServerContext::Slot> slot);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();
  // Graceful shutdown: closes the connection now when it waits for a new request, otherwise
  // right after the response in progress.
  void begin_shutdown() override;
  // End of the shutdown grace period: closes the connection whatever it is doing.
  void force_close() override;

 private:
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;
  using std::enable_shared_from_this<Session<Stream>>::weak_from_this;

  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }
  void on_detect(beast::error_code ec, bool tls);
  void refuse_plain_http();
  void on_handshake(beast::error_code ec, std::size_t used);
  void next_request();
  void on_first_bytes(beast::error_code ec, std::size_t n);
  void start_request();
  void read_header_section();
  void on_header(beast::error_code ec, std::size_t n);
  const char* check_framing(const bhttp::request_parser<bhttp::empty_body>::value_type& h);
  void precheck(bool expect_continue);
  void continue_body(bool expect_continue);
  void on_continue_written(beast::error_code ec, std::size_t n);
  void read_body();
  void on_body(beast::error_code ec, std::size_t n);
  void dispatch_request();
  void start_upgrade();
  void finish_upgrade(UpgradeDecision decision);
  void send_response(Response res);
  void on_write(bool close, beast::error_code ec, std::size_t n);
  void start_stream(Response res, bool close);
  void pump_stream();
  void on_stream_piece(bool ok, std::optional<std::string> piece);
  void write_stream();
  void release_source();
  void finish_stream();
  void reject(int status, const char* code, const char* message);
  void end_connection();  // after a final response: linger if unread input may remain
  void linger_close();    // half-close, drain what the client still sends, then close
  void drain();
  void close_now();

  ServerContext& ctx_;
  std::unique_ptr<ServerContext::Slot> slot_;  // counted against the connection caps
  Stream stream_;
  beast::flat_buffer buffer_;
  std::string client_ip_;

  std::optional<bhttp::request_parser<bhttp::empty_body>> header_parser_;
  std::optional<bhttp::request_parser<SpoolBody>> body_parser_;
  std::optional<bhttp::request<bhttp::empty_body>> upgrade_request_;  // WebSocket upgrade in progress

  // The request being handled.
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool head_ = false;
  bool unread_input_ = false;  // the request body was not (fully) consumed
  std::string method_;
  std::string path_;
  std::map<std::string, std::string> query_;

  // The response being written: serialized header (and a small body), or a large body apart.
  std::string out_;
  std::string out_body_;
  bhttp::response<bhttp::empty_body> stream_res_;
  std::optional<bhttp::response_serializer<bhttp::empty_body>> stream_sr_;
  bool stream_close_ = false;
  // Shared with the producer running it: a write error or close releases this reference while a
  // call may still be running on the stream pool, and the source must outlive that call. Its last
  // reference is always dropped on the stream pool (release_source, the producer), never here.
  std::shared_ptr<StreamSource> source_;
  std::deque<std::string> stream_out_;  // pieces waiting to be written
  std::size_t stream_buffered_ = 0;     // bytes in stream_out_
  bool stream_producing_ = false;       // a source call is running
  bool stream_done_ = false;            // the source said nullopt
  bool stream_writing_ = false;         // a write (header, piece, last chunk) is in flight

  int framing_status_ = 400;
  HandlerPool pool_ = HandlerPool::kRequest;
  bool idle_ = false;    // waiting for the first byte of a new request
  bool closed_ = false;  // no more I/O on this connection
  std::array<char, 4096> drain_buf_{};
};

extern template class Session<PlainStream>;
extern template class Session<TlsStream>;

}  // namespace imago::http::detail
