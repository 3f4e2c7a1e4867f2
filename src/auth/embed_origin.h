// Embed tokens restricted to one site (docs/embed.md, "Keeping it to your site"): the origin a
// token is minted for, and the rule a WebSocket join with such a token must pass. No HTTP here:
// src/api/runtime_tokens.cpp (minting), src/api/live.cpp (the join and the /embed page) call it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

inline constexpr size_t kMaxEmbedOriginChars = 200;

// A web origin as browsers send it in `Origin`: "http" or "https", a host, an optional port;
// nothing after it but one optional "/". Lowercased, the default port (80, 443) dropped:
// "HTTPS://Shop.Example:443/" -> "https://shop.example". kInvalidArgument otherwise.
Result<std::string> normalize_embed_origin(std::string_view origin);

// Whether a join may use a token restricted to `allowed` (normalized). `request_origin` is the
// browser's Origin header (absent: not a browser, refused); `own_site` says it is this server's
// own origin, i.e. the viewer page /embed/{code}, which is then accepted only when it says
// (`viewer_site`, its join's `embed_origin`) that it runs framed by `allowed`: that page was
// served with `frame-ancestors allowed`, so the browser shows it in no other site.
// kForbidden with the reason otherwise.
Status check_embed_origin(const std::string& allowed, std::optional<std::string_view> request_origin,
                          bool own_site, std::optional<std::string_view> viewer_site);

}  // namespace imago
