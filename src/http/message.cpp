#include "http/message.h"

#include <boost/json/serialize.hpp>

#include "util/json.h"
#include "util/log.h"
#include "util/strings.h"

namespace imago::http {

void Headers::set(std::string name, std::string value) {
  // Keep the position of the first occurrence, drop the rest: "set" means exactly one value.
  bool replaced = false;
  for (auto it = items_.begin(); it != items_.end();) {
    if (iequals(it->first, name)) {
      if (!replaced) {
        it->second = std::move(value);
        replaced = true;
        ++it;
      } else {
        it = items_.erase(it);
      }
    } else {
      ++it;
    }
  }
  if (!replaced) items_.emplace_back(std::move(name), std::move(value));
}

void Headers::add(std::string name, std::string value) {
  items_.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [k, v] : items_) {
    if (iequals(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

const std::string& Request::param(const std::string& name) const {
  static const std::string kEmpty;
  auto it = params.find(name);
  return it == params.end() ? kEmpty : it->second;
}

std::optional<std::string_view> Request::query_param(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::string_view Request::content_type() const {
  // The lower-cased copy must outlive the returned view, so it is cached per thread: callers use
  // the result immediately (comparisons), never store it.
  auto raw = headers.get("Content-Type");
  if (!raw) return {};
  std::string_view v = *raw;
  if (auto semi = v.find(';'); semi != std::string_view::npos) v = v.substr(0, semi);
  v = trim(v);
  bool lower = std::none_of(v.begin(), v.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  if (lower) return v;
  thread_local std::string buf;
  buf = to_lower(v);
  return buf;
}

Response Response::json(int status, const boost::json::value& body) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", "application/json");
  r.body = json_to_string(body);  // plain numbers ("0.5", not Boost's "5E-1")
  return r;
}

Response Response::bytes(int status, std::string content_type, std::string body) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

Response Response::error(int status, std::string code, std::string message) {
  // boost::json::object keeps insertion order, so the serialized key order is the SPEC 7 one.
  boost::json::object err;
  err["code"] = code;
  err["message"] = message;
  err["httpStatus"] = status;
  boost::json::object env;
  env["error"] = std::move(err);
  env["status"] = "error";
  env["status_code"] = status;
  Response r = json(status, env);
  r.error_code = std::move(code);
  return r;
}

Response Response::from_status(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument:
      return error(400, "VALIDATION_ERROR", s.message());
    case Code::kUnauthenticated:
      return error(401, "UNAUTHORIZED", s.message());
    case Code::kInsufficientFunds:
      return error(402, "INSUFFICIENT_BALANCE", s.message());
    case Code::kForbidden:
      return error(403, "FORBIDDEN", s.message());
    case Code::kQuotaExceeded:
      return error(403, "STORAGE_QUOTA_EXCEEDED", s.message());
    case Code::kNotFound:
      return error(404, "NOT_FOUND", s.message());
    case Code::kConflict:
      return error(409, "CONFLICT", s.message());
    case Code::kTooLarge:
      return error(413, "PAYLOAD_TOO_LARGE", s.message());
    case Code::kUnsupportedMedia:
      return error(415, "UNSUPPORTED_MEDIA_TYPE", s.message());
    case Code::kRateLimited:
      return error(429, "RATE_LIMITED", s.message());
    case Code::kUnavailable:
      return error(503, "SERVICE_UNAVAILABLE", s.message());
    case Code::kOk:  // a success is not an error: reaching here is a handler bug
    case Code::kInternal:
      break;
  }
  // Internal details (SQL errors, paths) stay in the log, never in the response.
  log::error("internal_error", {{"message", s.ok() ? "from_status called with OK" : s.message()}});
  return error(500, "INTERNAL_ERROR", "Internal server error");
}

}  // namespace imago::http
