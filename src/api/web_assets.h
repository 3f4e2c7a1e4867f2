// Files of web/ (the viewer page), compiled into imagod by src/api/CMakeLists.txt so the binary
// serves them without a build step or a path to find at run time.
#pragma once
#include <string_view>

namespace imago::api {

struct WebAsset {
  std::string_view name;  // file name under web/, e.g. "viewer.js"
  std::string_view content_type;
  std::string_view body;
};

const WebAsset* find_web_asset(std::string_view name);

}  // namespace imago::api
