#include "util/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace imago {

Result<json::object> parse_json_object(std::string_view body, bool allow_empty) {
  if (allow_empty) {
    bool blank = true;
    for (char c : body) {
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') blank = false;
    }
    if (blank) return json::object();
  }
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 64;
  json::value v = json::parse(body, ec, {}, opts);
  if (ec) return Status::Invalid("Request body is not valid JSON: " + ec.message());
  if (!v.is_object()) return Status::Invalid("Request body must be a JSON object");
  return std::move(v.as_object());
}

Status reject_unknown_fields(const json::object& o, std::initializer_list<std::string_view> known) {
  for (const auto& kv : o) {
    if (std::find(known.begin(), known.end(), std::string_view(kv.key())) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      std::string name(kv.key().substr(0, 100));
      return Status::Invalid(
          "Unknown field '" + name + "'" +
          (list.empty() ? std::string(" (this endpoint takes no fields)") : " (known fields: " + list + ")"));
    }
  }
  return Status::Ok();
}

Result<json::object> parse_json_object_with(std::string_view body,
                                            std::initializer_list<std::string_view> known, bool allow_empty) {
  auto o = parse_json_object(body, allow_empty);
  if (!o.ok()) return o;
  if (Status st = reject_unknown_fields(*o, known); !st.ok()) return st;
  return o;
}

Result<std::optional<std::string>> get_string(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end() || it->value().is_null()) return std::optional<std::string>();
  if (!it->value().is_string()) {
    return Status::Invalid("Field '" + std::string(field) + "' must be a string");
  }
  return std::optional<std::string>(std::string(it->value().as_string()));
}

Result<std::optional<double>> get_number(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end() || it->value().is_null()) return std::optional<double>();
  const auto& v = it->value();
  double d;
  if (v.is_double())
    d = v.as_double();
  else if (v.is_int64())
    d = static_cast<double>(v.as_int64());
  else if (v.is_uint64())
    d = static_cast<double>(v.as_uint64());
  else
    return Status::Invalid("Field '" + std::string(field) + "' must be a number");
  if (!std::isfinite(d)) return Status::Invalid("Field '" + std::string(field) + "' must be finite");
  return std::optional<double>(d);
}

Result<std::optional<int64_t>> get_integer(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end() || it->value().is_null()) return std::optional<int64_t>();
  const auto& v = it->value();
  if (v.is_int64()) return std::optional<int64_t>(v.as_int64());
  if (v.is_uint64() && v.as_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    return std::optional<int64_t>(static_cast<int64_t>(v.as_uint64()));
  }
  if (v.is_double() && std::floor(v.as_double()) == v.as_double() && std::fabs(v.as_double()) < 9e15) {
    return std::optional<int64_t>(static_cast<int64_t>(v.as_double()));
  }
  return Status::Invalid("Field '" + std::string(field) + "' must be an integer");
}

Result<std::optional<bool>> get_bool(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end() || it->value().is_null()) return std::optional<bool>();
  if (!it->value().is_bool()) {
    return Status::Invalid("Field '" + std::string(field) + "' must be a boolean");
  }
  return std::optional<bool>(it->value().as_bool());
}

Result<const json::object*> get_object(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end() || it->value().is_null()) return static_cast<const json::object*>(nullptr);
  if (!it->value().is_object()) {
    return Status::Invalid("Field '" + std::string(field) + "' must be an object");
  }
  return &it->value().as_object();
}

namespace {

void append_json(std::string& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        out += json::serialize(json::string_view(kv.key()));
        out.push_back(':');
        append_json(out, kv.value());
      }
      out.push_back('}');
      break;
    }
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        append_json(out, e);
      }
      out.push_back(']');
      break;
    }
    case json::kind::double_: {
      double d = v.get_double();
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no NaN/Infinity
        break;
      }
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, d);
      out.append(buf, res.ptr);
      break;
    }
    default:
      out += json::serialize(v);
  }
}

}  // namespace

std::string json_to_string(const json::value& v) {
  std::string out;
  out.reserve(256);
  append_json(out, v);
  return out;
}

}  // namespace imago
