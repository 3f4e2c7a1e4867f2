// Helpers shared by the avatar tests: test data from Debian's opencv-doc, and building models.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#include "avatar/builder.h"

namespace imago::avatar::testing {

inline const std::string kOpenCvData = "/usr/share/doc/opencv-doc/examples/data/";
inline const std::string kOpenCvHtml = "/usr/share/doc/opencv-doc/opencv4/html/";

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A model from a real photo (messi5.jpg) or the procedural default, cached per process since
// several tests share them.
inline const std::string& photo_model(const std::string& aspect = "16:9",
                                      const std::string& type = "essence") {
  static std::map<std::string, std::string> cache;
  std::string key = aspect + "/" + type;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  BuildInput in;
  in.agent_id = "test_photo";
  in.name = "Photo";
  in.aspect_ratio = aspect;
  in.model_type = type;
  in.image_bytes = slurp(kOpenCvData + "messi5.jpg");
  auto r = build_imx(in, {});
  return cache[key] = r.ok() ? *r : std::string();
}

// A frontal portrait (opencv-doc's face_swapped.jpg, 320x320): the model for lip-sync and
// gesture measurements, where the face must be large.
inline const std::string& portrait_model(const std::string& aspect = "1:1",
                                         const std::string& type = "essence") {
  static std::map<std::string, std::string> cache;
  std::string key = aspect + "/" + type;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  BuildInput in;
  in.agent_id = "test_portrait";
  in.name = "Portrait";
  in.aspect_ratio = aspect;
  in.model_type = type;
  in.image_bytes = slurp(kOpenCvHtml + "face_swapped.jpg");
  auto r = build_imx(in, {});
  return cache[key] = r.ok() ? *r : std::string();
}

inline const std::string& procedural_model(const std::string& aspect = "16:9",
                                           const std::string& type = "essence",
                                           const std::string& id = "agent_default") {
  static std::map<std::string, std::string> cache;
  std::string key = aspect + "/" + type + "/" + id;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  BuildInput in;
  in.agent_id = id;
  in.name = "Default";
  in.aspect_ratio = aspect;
  in.model_type = type;
  in.created_unix_s = 1'800'000'000;
  auto r = build_imx(in, {});
  return cache[key] = r.ok() ? *r : std::string();
}

}  // namespace imago::avatar::testing
