// Private to src/http: the two transports a connection can run on. Session and WebSocketSession
// are templates on these and are instantiated once per stream type, each in its own translation
// unit (session_plain.cpp, session_tls.cpp, websocket_session_plain.cpp, websocket_session_tls.cpp):
// one instantiation per TU keeps the compile time and memory of each file bounded.
#pragma once
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <type_traits>

namespace imago::http::detail {

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

template <class Stream>
inline constexpr bool kIsTls = std::is_same_v<Stream, TlsStream>;

}  // namespace imago::http::detail
