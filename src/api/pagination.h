// Offset pagination shared by every list endpoint (SPEC 4.5): limit default 20, 1..100 (larger is
// a 400, not a silent clamp, so clients notice), offset >= 0.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

#include "http/message.h"
#include "util/status.h"

namespace imago::api {

struct PageParams {
  int limit = 20;
  int offset = 0;
};

Result<PageParams> parse_page_params(const http::Request& req, int default_limit = 20, int max_limit = 100);
// A list's optional ?agent_code= filter: empty when absent (every agent), 400 when empty or over 64
// characters. An unknown code lists nothing.
Result<std::string> parse_agent_code_filter(const http::Request& req);
// {limit, offset, total, has_more}
boost::json::object pagination_json(const PageParams& p, int64_t total);

}  // namespace imago::api
