// Request-body validators shared by more than one resource.
#pragma once
#include <string>

#include "http/message.h"
#include "util/status.h"

namespace imago::api {

// Body {"alias": "..."}: required, 1-100 characters, no control characters.
Result<std::string> parse_alias(const http::Request& req);

}  // namespace imago::api
