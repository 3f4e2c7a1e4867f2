// The OpenAPI 3.1 description of the public API (docs/openapi.yaml), converted to JSON and compiled
// into imagod by src/api/CMakeLists.txt: GET /openapi.json serves it as is.
#pragma once
#include <string_view>

namespace imago::api {

// The whole document, minified JSON. Always valid JSON (the build fails otherwise).
std::string_view openapi_document_json();

}  // namespace imago::api
