// Typed access to JSON request bodies. Each getter reports a precise VALIDATION_ERROR message
// naming the field, so handlers never hand-roll type checks.
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>

#include "util/status.h"

namespace imago {

namespace json = boost::json;

// Parses a request body that must be one JSON object. Empty body -> empty object when
// `allow_empty` is true.
Result<json::object> parse_json_object(std::string_view body, bool allow_empty = false);

// kInvalidArgument naming the first top-level field of `o` that is not in `known` ("Unknown field
// 'imgae'"): a misspelt field must never silently fall back to a default that costs money.
Status reject_unknown_fields(const json::object& o, std::initializer_list<std::string_view> known);
// parse_json_object() followed by reject_unknown_fields().
Result<json::object> parse_json_object_with(std::string_view body,
                                            std::initializer_list<std::string_view> known,
                                            bool allow_empty = false);

// Each returns nullopt when the field is absent or JSON null; a Status when present with the
// wrong type. `field` is the name used in error messages.
Result<std::optional<std::string>> get_string(const json::object& o, std::string_view field);
Result<std::optional<double>> get_number(const json::object& o, std::string_view field);
Result<std::optional<int64_t>> get_integer(const json::object& o, std::string_view field);
Result<std::optional<bool>> get_bool(const json::object& o, std::string_view field);
Result<const json::object*> get_object(const json::object& o, std::string_view field);

// Serializes like boost::json::serialize, but writes doubles the way people expect ("0.5",
// "166.66666666666666", whole numbers as "500.0" stays "500") using the shortest round-trip form,
// instead of Boost's "5E-1". Every JSON response goes through this.
std::string json_to_string(const json::value& v);

}  // namespace imago
