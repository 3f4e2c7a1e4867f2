// Offset pagination shared by every list endpoint (SPEC 4.5): limit default 20, 1..100 (larger is
// a 400, not a silent clamp, so clients notice), offset >= 0.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>

#include "http/message.h"
#include "util/status.h"

namespace imago::api {

struct PageParams {
  int limit = 20;
  int offset = 0;
};

Result<PageParams> parse_page_params(const http::Request& req, int default_limit = 20, int max_limit = 100);
// {limit, offset, total, has_more}
boost::json::object pagination_json(const PageParams& p, int64_t total);

}  // namespace imago::api
