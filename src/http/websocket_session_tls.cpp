// WebSocket sessions over TLS (wss://): the one instantiation this file compiles.
#include "http/websocket_session_impl.h"

namespace imago::http::detail {
template class WebSocketSession<TlsStream>;
}  // namespace imago::http::detail
