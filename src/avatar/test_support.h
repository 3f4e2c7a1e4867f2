// Helpers shared by the avatar tests: test data from Debian's opencv-doc, and building models.
#pragma once
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "avatar/builder.h"

namespace imago::avatar::testing {

inline const std::string kOpenCvData = "/usr/share/doc/opencv-doc/examples/data/";
inline const std::string kOpenCvHtml = "/usr/share/doc/opencv-doc/opencv4/html/";
// dlib's example photos (Debian's libdlib19.1, which libdlib-dev installs).
inline const std::string kDlibFaces = "/usr/share/doc/libdlib19.1/examples/faces/";

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

// The standard output of a shell command.
inline std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

struct Probe {
  std::string vcodec, acodec, rate;
  int64_t frames = 0;
  double duration = 0;
  int width = 0, height = 0;
};

// What ffprobe reports about an MP4 file.
inline Probe probe(const std::string& path) {
  std::string js =
      run("ffprobe -v error -count_frames -show_entries "
          "stream=codec_type,codec_name,r_frame_rate,nb_read_frames,width,height:format=duration "
          "-of json '" +
          path + "'");
  Probe p;
  boost::system::error_code ec;
  auto v = boost::json::parse(js, ec);
  if (ec || !v.is_object()) return p;
  for (const auto& s : v.at("streams").as_array()) {
    const auto& o = s.as_object();
    if (o.at("codec_type").as_string() == "video") {
      p.vcodec = std::string(o.at("codec_name").as_string());
      p.rate = std::string(o.at("r_frame_rate").as_string());
      p.frames = std::stoll(std::string(o.at("nb_read_frames").as_string()));
      p.width = static_cast<int>(o.at("width").as_int64());
      p.height = static_cast<int>(o.at("height").as_int64());
    } else {
      p.acodec = std::string(o.at("codec_name").as_string());
    }
  }
  p.duration = std::stod(std::string(v.at("format").at("duration").as_string()));
  return p;
}

// A temporary directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("imago_avatar_" + std::to_string(::getpid()) + "_" +
                                                std::to_string(reinterpret_cast<uintptr_t>(this)));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace imago::avatar::testing
