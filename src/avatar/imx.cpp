#include "avatar/imx.h"

#include <zlib.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstring>

#include "util/crypto.h"

namespace imago::avatar {
namespace {

namespace json = boost::json;

constexpr char kMagic[8] = {'I', 'M', 'A', 'G', 'O', 'I', 'M', 'X'};

void put_u16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_le(std::string_view b, size_t off, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[off + i]);
  return v;
}

// A chunk's checksum covers its type, flags and length as well as its data, so no bit of the
// file outside the reserved-must-be-zero field goes unchecked.
uint32_t chunk_crc(std::string_view head16, std::string_view data) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  c = ::crc32(c, reinterpret_cast<const Bytef*>(head16.data()), static_cast<uInt>(head16.size()));
  // zlib takes uInt lengths: feed large chunks in pieces.
  for (size_t off = 0; off < data.size(); off += 1u << 30) {
    size_t n = std::min<size_t>(data.size() - off, 1u << 30);
    c = ::crc32(c, reinterpret_cast<const Bytef*>(data.data() + off), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(c);
}

bool printable_type(std::string_view t) {
  for (char c : t)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

// Typed getters that never throw: a missing field keeps the default; a field of the wrong type
// is an error naming it.
struct Reader {
  const json::object& o;
  std::string prefix;
  std::string error;

  const json::value* get(const char* k) { return o.if_contains(k); }
  void num(const char* k, double& out) {
    if (auto* v = get(k)) {
      if (v->is_number())
        out = v->to_number<double>();
      else
        fail(k, "a number");
    }
  }
  void integer(const char* k, int& out) {
    if (auto* v = get(k)) {
      if (v->is_int64() && v->as_int64() >= INT32_MIN && v->as_int64() <= INT32_MAX)
        out = static_cast<int>(v->as_int64());
      else if (v->is_uint64() && v->as_uint64() <= INT32_MAX)
        out = static_cast<int>(v->as_uint64());
      else
        fail(k, "an integer");
    }
  }
  void str(const char* k, std::string& out) {
    if (auto* v = get(k)) {
      if (v->is_string())
        out = std::string(v->as_string());
      else
        fail(k, "a string");
    }
  }
  void boolean(const char* k, bool& out) {
    if (auto* v = get(k)) {
      if (v->is_bool())
        out = v->as_bool();
      else
        fail(k, "a boolean");
    }
  }
  const json::object* obj(const char* k) {
    if (auto* v = get(k)) {
      if (v->is_object()) return &v->as_object();
      fail(k, "an object");
    }
    return nullptr;
  }
  void fail(const char* k, const char* what) {
    if (error.empty()) error = "manifest field " + prefix + k + " must be " + what;
  }
};

// Geometry is stored to 1/100 px: enough for rendering, readable in `imagod imx info`.
double r2(double v) {
  return std::round(v * 100) / 100;
}

json::object point_json(const Point& p) {
  return {{"x", r2(p.x)}, {"y", r2(p.y)}};
}

void read_point(Reader& parent, const char* k, Point& p) {
  if (auto* o = parent.obj(k)) {
    Reader r{*o, parent.prefix + k + "."};
    r.num("x", p.x);
    r.num("y", p.y);
    if (parent.error.empty()) parent.error = r.error;
  }
}

}  // namespace

const std::string* ImxFile::find(std::string_view type) const {
  for (const auto& c : chunks)
    if (c.type == type) return &c.data;
  return nullptr;
}

std::string manifest_to_json(const Manifest& m) {
  json::object o;
  if (!m.raw_json.empty()) {
    // Start from the fields we read, so unknown (newer minor) fields survive a rewrite.
    boost::system::error_code ec;
    auto v = json::parse(m.raw_json, ec);
    if (!ec && v.is_object()) o = v.as_object();
  }
  o["format"] = "imx";
  o["version"] = std::to_string(m.version_major) + "." + std::to_string(m.version_minor);
  o["model_type"] = m.model_type;
  o["agent_id"] = m.agent_id;
  o["name"] = m.name;
  o["created_at"] = m.created_at;
  o["source"] = m.source;
  o["frame"] = json::object{{"width", m.width},
                            {"height", m.height},
                            {"aspect_ratio", m.aspect_ratio},
                            {"fps", m.fps},
                            {"pixel_format", m.pixel_format}};
  o["geometry"] = json::object{
      {"face",
       json::object{{"x", r2(m.face.x)}, {"y", r2(m.face.y)}, {"w", r2(m.face.w)}, {"h", r2(m.face.h)}}},
      {"left_eye", point_json(m.left_eye)},
      {"right_eye", point_json(m.right_eye)},
      {"mouth", point_json(m.mouth)},
      {"mouth_width", r2(m.mouth_width)},
      {"eyes_detected", m.eyes_detected}};
  json::object voice{{"id", m.voice},
                     {"language", m.language},
                     {"axes", json::object{{"gender", m.axes.gender},
                                           {"pitch", m.axes.pitch},
                                           {"rate", m.axes.rate},
                                           {"brightness", m.axes.brightness}}}};
  if (m.voice_match) {
    voice["match"] = json::object{{"method", "nearest-builtin-voice"},
                                  {"median_f0_hz", m.voice_match->median_f0_hz},
                                  {"spectral_centroid_hz", m.voice_match->spectral_centroid_hz},
                                  {"speaking_rate_syl_s", m.voice_match->speaking_rate_syl_s},
                                  {"voiced_seconds", m.voice_match->voiced_seconds},
                                  {"distance", m.voice_match->distance}};
  } else {
    voice["match"] = nullptr;
  }
  if (m.face_estimate) {
    voice["face_estimate"] = json::object{{"female", std::round(m.face_estimate->female * 1000) / 1000},
                                          {"age", std::round(m.face_estimate->age * 10) / 10}};
  }
  o["voice"] = std::move(voice);
  o["renderer"] = json::object{{"visemes", m.visemes},
                               {"mouth_max_open", m.mouth_max_open},
                               {"sway", m.sway},
                               {"blink_min_s", m.blink_min_s},
                               {"blink_max_s", m.blink_max_s},
                               {"prosody", m.prosody},
                               {"seed", m.seed}};
  return json::serialize(o);
}

Result<Manifest> manifest_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Status::Invalid("corrupt .imx: manifest is not a JSON object");
  const json::object& o = v.as_object();
  Manifest m;
  m.raw_json = std::string(text);
  Reader r{o, ""};
  std::string format, version;
  r.str("format", format);
  r.str("version", version);
  if (!r.error.empty()) return Status::Invalid("corrupt .imx: " + r.error);
  if (format != "imx") return Status::Invalid("corrupt .imx: manifest format is not \"imx\"");
  r.str("model_type", m.model_type);
  r.str("agent_id", m.agent_id);
  r.str("name", m.name);
  r.str("created_at", m.created_at);
  r.str("source", m.source);
  if (auto* f = r.obj("frame")) {
    Reader fr{*f, "frame."};
    fr.integer("width", m.width);
    fr.integer("height", m.height);
    fr.str("aspect_ratio", m.aspect_ratio);
    fr.integer("fps", m.fps);
    fr.str("pixel_format", m.pixel_format);
    if (r.error.empty()) r.error = fr.error;
  }
  if (auto* g = r.obj("geometry")) {
    Reader gr{*g, "geometry."};
    if (auto* fo = gr.obj("face")) {
      Reader b{*fo, "geometry.face."};
      b.num("x", m.face.x);
      b.num("y", m.face.y);
      b.num("w", m.face.w);
      b.num("h", m.face.h);
      if (gr.error.empty()) gr.error = b.error;
    }
    read_point(gr, "left_eye", m.left_eye);
    read_point(gr, "right_eye", m.right_eye);
    read_point(gr, "mouth", m.mouth);
    gr.num("mouth_width", m.mouth_width);
    gr.boolean("eyes_detected", m.eyes_detected);
    if (r.error.empty()) r.error = gr.error;
  }
  if (auto* vo = r.obj("voice")) {
    Reader vr{*vo, "voice."};
    vr.str("id", m.voice);
    vr.str("language", m.language);
    if (auto* ax = vr.obj("axes")) {
      Reader ar{*ax, "voice.axes."};
      ar.num("gender", m.axes.gender);
      ar.num("pitch", m.axes.pitch);
      ar.num("rate", m.axes.rate);
      ar.num("brightness", m.axes.brightness);
      if (vr.error.empty()) vr.error = ar.error;
    }
    if (auto* mv = vo->if_contains("match"); mv && mv->is_object()) {
      Reader mr{mv->as_object(), "voice.match."};
      VoiceMatch vm;
      mr.num("median_f0_hz", vm.median_f0_hz);
      mr.num("spectral_centroid_hz", vm.spectral_centroid_hz);
      mr.num("speaking_rate_syl_s", vm.speaking_rate_syl_s);
      mr.num("voiced_seconds", vm.voiced_seconds);
      mr.num("distance", vm.distance);
      m.voice_match = vm;
      if (vr.error.empty()) vr.error = mr.error;
    }
    if (auto* fe = vo->if_contains("face_estimate"); fe && fe->is_object()) {
      Reader er{fe->as_object(), "voice.face_estimate."};
      FaceEstimate e;
      er.num("female", e.female);
      er.num("age", e.age);
      m.face_estimate = e;
      if (vr.error.empty()) vr.error = er.error;
    }
    if (r.error.empty()) r.error = vr.error;
  }
  if (auto* ro = r.obj("renderer")) {
    Reader rr{*ro, "renderer."};
    rr.integer("visemes", m.visemes);
    rr.num("mouth_max_open", m.mouth_max_open);
    rr.num("sway", m.sway);
    rr.num("blink_min_s", m.blink_min_s);
    rr.num("blink_max_s", m.blink_max_s);
    rr.boolean("prosody", m.prosody);
    if (auto* s = ro->if_contains("seed")) {
      if (s->is_uint64())
        m.seed = static_cast<uint32_t>(s->as_uint64());
      else if (s->is_int64() && s->as_int64() >= 0)
        m.seed = static_cast<uint32_t>(s->as_int64());
      else
        rr.fail("seed", "a non-negative integer");
    }
    if (r.error.empty()) r.error = rr.error;
  }
  if (!r.error.empty()) return Status::Invalid("corrupt .imx: " + r.error);
  // Semantic checks: a reader must be able to trust these before allocating frames.
  if (m.model_type != "essence" && m.model_type != "expression")
    return Status::Invalid("corrupt .imx: model_type must be essence or expression");
  if (m.width < 16 || m.height < 16 || m.width > 4096 || m.height > 4096)
    return Status::Invalid("corrupt .imx: frame size out of range");
  if (m.fps != 25) return Status::Invalid("corrupt .imx: fps must be 25");
  if (m.face.w <= 0 || m.face.h <= 0 || m.face.x < 0 || m.face.y < 0 || m.face.x + m.face.w > m.width ||
      m.face.y + m.face.h > m.height)
    return Status::Invalid("corrupt .imx: face box outside the frame");
  auto inside = [&](const Point& p) { return p.x >= 0 && p.y >= 0 && p.x < m.width && p.y < m.height; };
  if (!inside(m.left_eye) || !inside(m.right_eye) || !inside(m.mouth))
    return Status::Invalid("corrupt .imx: eye or mouth anchor outside the frame");
  if (!(m.mouth_width > 0 && m.mouth_width <= m.face.w * 2))
    return Status::Invalid("corrupt .imx: mouth_width out of range");
  if (m.visemes != 6 && m.visemes != 10)
    return Status::Invalid("corrupt .imx: renderer.visemes must be 6 or 10");
  if (!(m.mouth_max_open >= 0 && m.mouth_max_open <= 0.3) || !(m.sway >= 0 && m.sway <= 5) ||
      !(m.blink_min_s > 0.2 && m.blink_max_s >= m.blink_min_s && m.blink_max_s < 60))
    return Status::Invalid("corrupt .imx: renderer parameters out of range");
  return m;
}

std::string write_imx(const Manifest& m, const std::vector<ImxChunk>& chunks) {
  std::string manifest = manifest_to_json(m);
  std::string out;
  size_t total = kImxHeaderSize + kImxChunkHeaderSize + manifest.size();
  for (const auto& c : chunks) total += kImxChunkHeaderSize + c.data.size();
  out.reserve(total);
  out.append(kMagic, 8);
  put_u16(out, m.version_major);
  put_u16(out, m.version_minor);
  put_u32(out, static_cast<uint32_t>(kImxHeaderSize));
  put_u32(out, static_cast<uint32_t>(chunks.size() + 1));
  put_u32(out, 0);  // flags
  put_u32(out, 0);  // reserved
  put_u32(out, crc32(std::string_view(out).substr(0, 28)));
  auto add = [&](std::string_view type, uint32_t flags, std::string_view data) {
    std::string t(type.substr(0, 4));
    t.resize(4, ' ');
    size_t head = out.size();
    out += t;
    put_u32(out, flags);
    put_u64(out, data.size());
    put_u32(out, chunk_crc(std::string_view(out).substr(head, 16), data));
    put_u32(out, 0);
    out.append(data);
  };
  add(kChunkManifest, 0, manifest);
  for (const auto& c : chunks) add(c.type, c.flags, c.data);
  return out;
}

Result<ImxFile> read_imx(std::string_view b) {
  if (b.size() < 8 || std::memcmp(b.data(), kMagic, 8) != 0)
    return Status::Invalid("not an .imx file (bad magic)");
  if (b.size() < kImxHeaderSize)
    return Status::Invalid("truncated .imx: header needs 32 bytes, file has " + std::to_string(b.size()));
  ImxFile f;
  f.version_major = static_cast<uint16_t>(get_le(b, 8, 2));
  f.version_minor = static_cast<uint16_t>(get_le(b, 10, 2));
  uint32_t header_size = static_cast<uint32_t>(get_le(b, 12, 4));
  uint32_t count = static_cast<uint32_t>(get_le(b, 16, 4));
  uint32_t header_crc = static_cast<uint32_t>(get_le(b, 28, 4));
  if (crc32(b.substr(0, 28)) != header_crc) return Status::Invalid("corrupt .imx: header checksum mismatch");
  // Checked after the CRC so a flipped bit is reported as corruption, not as a version.
  if (f.version_major != kImxMajor)
    return Status::Invalid("unsupported .imx version " + std::to_string(f.version_major) + "." +
                           std::to_string(f.version_minor) + " (this build reads " +
                           std::to_string(kImxMajor) + ".x)");
  if (header_size < kImxHeaderSize || header_size > b.size())
    return Status::Invalid("corrupt .imx: bad header size");
  if (count == 0 || count > kImxMaxChunks)
    return Status::Invalid("corrupt .imx: bad chunk count " + std::to_string(count));
  size_t off = header_size;  // a newer minor version may grow the header; skip the rest
  bool have_manifest = false;
  for (uint32_t i = 0; i < count; ++i) {
    if (b.size() - off < kImxChunkHeaderSize)
      return Status::Invalid("truncated .imx: chunk " + std::to_string(i) + " header missing");
    std::string type(b.substr(off, 4));
    uint32_t flags = static_cast<uint32_t>(get_le(b, off + 4, 4));
    uint64_t len = get_le(b, off + 8, 8);
    uint32_t crc = static_cast<uint32_t>(get_le(b, off + 16, 4));
    uint32_t reserved = static_cast<uint32_t>(get_le(b, off + 20, 4));
    std::string_view head16 = b.substr(off, 16);
    off += kImxChunkHeaderSize;
    std::string shown = printable_type(type) ? type : "#" + std::to_string(i);
    if (len > b.size() - off)
      return Status::Invalid("truncated .imx: chunk " + shown + " needs " + std::to_string(len) + " bytes, " +
                             std::to_string(b.size() - off) + " left");
    std::string_view data = b.substr(off, static_cast<size_t>(len));
    off += static_cast<size_t>(len);
    if (chunk_crc(head16, data) != crc)
      return Status::Invalid("corrupt .imx: chunk " + shown + " checksum mismatch");
    if (reserved != 0) return Status::Invalid("corrupt .imx: chunk " + shown + " reserved field is not zero");
    if (i == 0) {
      if (type != kChunkManifest) return Status::Invalid("corrupt .imx: first chunk is not the manifest");
      auto m = manifest_from_json(data);
      if (!m.ok()) return m.status();
      f.manifest = std::move(m).value();
      f.manifest.version_major = f.version_major;
      f.manifest.version_minor = f.version_minor;
      have_manifest = true;
      continue;
    }
    // 1.0's sprite chunks (MINT, LIDS, HAND, HART) are skipped like any unknown type.
    static constexpr std::string_view kKnown[] = {kChunkAppearance, kChunkLandmarks, kChunkGestures,
                                                  kChunkVoiceSample, kChunkMesh};
    bool known = std::find(std::begin(kKnown), std::end(kKnown), type) != std::end(kKnown);
    if (!known) {
      f.skipped.push_back(shown);  // forward compatible: a newer minor version may add types
      continue;
    }
    f.chunks.push_back({type, std::string(data), flags});
  }
  if (!have_manifest) return Status::Invalid("corrupt .imx: no manifest");
  if (off != b.size())
    return Status::Invalid("corrupt .imx: " + std::to_string(b.size() - off) +
                           " unexpected bytes after the last chunk");
  return f;
}

std::string landmarks_to_json(const FaceLandmarks& l) {
  json::array pts;
  for (const Point& p : l.points)
    pts.push_back(json::array{std::round(p.x * 100) / 100, std::round(p.y * 100) / 100});
  json::object o{{"version", 1}, {"layout", "ibug68"}, {"source", l.source}, {"points", std::move(pts)}};
  if (!l.note.empty()) o["note"] = l.note;
  return json::serialize(o);
}

Result<FaceLandmarks> landmarks_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Status::Invalid("corrupt .imx: landmark chunk is not JSON");
  const auto& o = v.as_object();
  FaceLandmarks l;
  if (auto* s = o.if_contains("source"); s && s->is_string()) l.source = std::string(s->as_string());
  if (auto* s = o.if_contains("note"); s && s->is_string()) l.note = std::string(s->as_string());
  auto* pts = o.if_contains("points");
  if (!pts || !pts->is_array() || pts->as_array().size() != kLandmarkCount)
    return Status::Invalid("corrupt .imx: landmark chunk needs 68 points");
  for (const auto& p : pts->as_array()) {
    if (!p.is_array() || p.as_array().size() != 2 || !p.as_array()[0].is_number() ||
        !p.as_array()[1].is_number())
      return Status::Invalid("corrupt .imx: landmark point is not [x, y]");
    Point q{p.as_array()[0].to_number<double>(), p.as_array()[1].to_number<double>()};
    if (!std::isfinite(q.x) || !std::isfinite(q.y) || std::abs(q.x) > 1e5 || std::abs(q.y) > 1e5)
      return Status::Invalid("corrupt .imx: landmark point out of range");
    l.points.push_back(q);
  }
  return l;
}

std::string mesh_to_json(const DenseMesh& m) {
  json::array pts;
  for (const Point3& p : m.points)
    pts.push_back(
        json::array{std::round(p.x * 100) / 100, std::round(p.y * 100) / 100, std::round(p.z * 100) / 100});
  json::object o{
      {"version", 1}, {"layout", "mediapipe478"}, {"source", m.source}, {"points", std::move(pts)}};
  return json::serialize(o);
}

Result<DenseMesh> mesh_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Status::Invalid("corrupt .imx: mesh chunk is not JSON");
  const auto& o = v.as_object();
  DenseMesh m;
  if (auto* s = o.if_contains("source"); s && s->is_string()) m.source = std::string(s->as_string());
  auto* pts = o.if_contains("points");
  if (!pts || !pts->is_array() || pts->as_array().size() != kMeshPointCount)
    return Status::Invalid("corrupt .imx: mesh chunk needs 478 points");
  for (const auto& p : pts->as_array()) {
    if (!p.is_array() || p.as_array().size() != 3 || !p.as_array()[0].is_number() ||
        !p.as_array()[1].is_number() || !p.as_array()[2].is_number())
      return Status::Invalid("corrupt .imx: mesh point is not [x, y, z]");
    Point3 q{p.as_array()[0].to_number<double>(), p.as_array()[1].to_number<double>(),
             p.as_array()[2].to_number<double>()};
    if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) || std::abs(q.x) > 1e5 ||
        std::abs(q.y) > 1e5 || std::abs(q.z) > 1e5)
      return Status::Invalid("corrupt .imx: mesh point out of range");
    m.points.push_back(q);
  }
  return m;
}

}  // namespace imago::avatar
