// A binary media message of a live room as a black-box test reads it off the wire
// (docs/live-protocol.md, "Media framing"), parsed here rather than with the server's own decoder
// so that a framing bug on both sides cannot hide.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "support/ws_client.h"

namespace imago::testing {

struct Media {
  int kind = 0, codec = 0, flags = 0;
  uint32_t index = 0;
  int64_t pts = 0;
  int a = 0, b = 0;  // the header's two kind-specific fields
  std::string payload;
};

// nullopt for a text message or one shorter than the 20-byte header.
inline std::optional<Media> media(const WsMessage& m) {
  if (m.text || m.data.size() < 20) return std::nullopt;
  auto le = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(uint8_t(m.data[at + i])) << (8 * i);
    return v;
  };
  Media x;
  x.kind = uint8_t(m.data[0]);
  x.codec = uint8_t(m.data[1]);
  x.flags = int(le(2, 2));
  x.index = uint32_t(le(4, 4));
  x.pts = int64_t(le(8, 8));
  x.a = int(le(16, 2));
  x.b = int(le(18, 2));
  x.payload = m.data.substr(20);
  return x;
}

}  // namespace imago::testing
