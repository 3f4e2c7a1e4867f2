// WebSocket sessions over plain TCP (ws://): the one instantiation this file compiles.
#include "http/websocket_session_impl.h"

namespace imago::http::detail {
template class WebSocketSession<PlainStream>;
}  // namespace imago::http::detail
