// The WebSocket join of live sessions, built against http/websocket.h.
#pragma once
#include "core/services.h"
#include "http/websocket.h"

namespace imago::api {

// GET /v1/runtime/rooms/{room_id}?agent_code=CODE: authenticates the runtime or embed token,
// starts or joins the room, and returns the viewer's handler (docs/live-protocol.md).
http::WebSocketFactory make_room_socket_factory(Services& s);

}  // namespace imago::api
