#include "api/pagination.h"

#include "util/strings.h"

namespace imago::api {

Result<std::string> parse_agent_code_filter(const http::Request& req) {
  auto a = req.query_param("agent_code");
  if (!a) return std::string();
  if (a->empty() || a->size() > 64) return Status::Invalid("Query 'agent_code' must be 1 to 64 characters");
  return std::string(*a);
}

Result<PageParams> parse_page_params(const http::Request& req, int default_limit, int max_limit) {
  PageParams p;
  p.limit = default_limit;
  if (auto v = req.query_param("limit")) {
    auto n = parse_int(*v);
    if (!n || *n < 1 || *n > max_limit) {
      return Status::Invalid("Query parameter 'limit' must be an integer from 1 to " +
                             std::to_string(max_limit));
    }
    p.limit = static_cast<int>(*n);
  }
  if (auto v = req.query_param("offset")) {
    auto n = parse_int(*v);
    if (!n || *n < 0 || *n > 1'000'000'000) {
      return Status::Invalid("Query parameter 'offset' must be a non-negative integer");
    }
    p.offset = static_cast<int>(*n);
  }
  return p;
}

boost::json::object pagination_json(const PageParams& p, int64_t total) {
  return {{"limit", p.limit},
          {"offset", p.offset},
          {"total", total},
          {"has_more", static_cast<int64_t>(p.offset) + p.limit < total}};
}

}  // namespace imago::api
