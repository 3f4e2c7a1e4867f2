// imagod imx info|verify|build and imagod render (docs/avatar.md "Command line"): the avatar
// engine's offline tools. They drive the engine through its offline renderer (avatar/offline.h).
#include "main/avatar_commands.h"

#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "avatar/builder.h"
#include "avatar/clip.h"
#include "avatar/imx.h"
#include "avatar/offline.h"
#include "avatar/renderer.h"
#include "speech/phone_recognizer.h"
#include "speech/speech_service.h"
#include "util/strings.h"

namespace imago::avatar {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Internal("cannot write " + path);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::Internal("cannot write " + path);
  return Status::Ok();
}

// --flag value pairs plus positionals; flags without a value are errors.
struct Args {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
  std::string error;
};
Args parse(int argc, char** argv, int from, std::initializer_list<const char*> known) {
  Args a;
  for (int i = from; i < argc; ++i) {
    std::string s = argv[i];
    if (s.size() > 1 && s[0] == '-' && !(s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[1])))) {
      std::string name = s.rfind("--", 0) == 0 ? s.substr(2) : s.substr(1);
      bool ok = false;
      for (const char* k : known) ok |= name == k;
      if (!ok) {
        a.error = "unknown option " + s;
        return a;
      }
      if (i + 1 >= argc) {
        a.error = "option " + s + " needs a value";
        return a;
      }
      a.flags[name] = argv[++i];
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int fail(const std::string& msg) {
  std::cerr << "error: " << msg << "\n";
  return 1;
}

void pretty(std::ostream& os, const boost::json::value& v, int indent = 0) {
  std::string pad(indent, ' ');
  if (v.is_object()) {
    os << "{\n";
    bool first = true;
    for (const auto& [k, x] : v.as_object()) {
      if (!first) os << ",\n";
      first = false;
      os << pad << "  " << boost::json::serialize(boost::json::value(k)) << ": ";
      pretty(os, x, indent + 2);
    }
    os << "\n" << pad << "}";
  } else if (v.is_double()) {
    // Boost.JSON writes doubles as 5.704725E2; people read 570.4725.
    std::ostringstream num;
    num.precision(10);
    num << v.as_double();
    os << num.str();
  } else {
    os << boost::json::serialize(v);
  }
}

const char* kImxUsage =
    "usage: imagod imx info FILE\n"
    "       imagod imx verify FILE\n"
    "       imagod imx build (--image F | --video F) [--audio F] [--model essence|expression]\n"
    "                        [--aspect 16:9|9:16|1:1] [--name N] [--agent-id ID] [--voice M1] -o OUT.imx\n"
    "       (no --image/--video: a procedural default avatar from --agent-id)\n";

const char* kRenderUsage =
    "usage: imagod render MODEL.imx (--text \"...\" [--voice M1] [--language en] | --audio speech.wav)\n"
    "                     [--gesture NAME] [--duration S] [--size WxH] -o out.mp4\n"
    "       imagod render MODEL.imx --gesture NAME --duration S -o clip.mp4\n";

int imx_info(const std::string& path, bool verify_only) {
  auto bytes = read_file(path);
  if (!bytes.ok()) return fail(bytes.status().message());
  auto f = read_imx(*bytes);
  if (!f.ok()) {
    std::cerr << (verify_only ? "INVALID: " : "error: ") << f.status().message() << "\n";
    return 1;
  }
  if (verify_only) {
    // Decoding every image chunk too: a model that verifies must also load.
    auto m = load_model(*bytes);
    if (!m.ok()) {
      std::cerr << "INVALID: " << m.status().message() << "\n";
      return 1;
    }
    std::cout << "OK: " << path << " (imx " << f->version_major << "." << f->version_minor << ", "
              << f->manifest.model_type << ", " << f->manifest.width << "x" << f->manifest.height << ", "
              << f->chunks.size() + 1 << " chunks verified";
    if (!f->skipped.empty()) std::cout << ", " << f->skipped.size() << " unknown skipped";
    std::cout << ")\n";
    return 0;
  }
  boost::system::error_code ec;
  auto v = boost::json::parse(manifest_to_json(f->manifest), ec);
  pretty(std::cout, v);
  std::cout << "\nchunks:\n  MANI (manifest)\n";
  for (const auto& c : f->chunks) std::cout << "  " << c.type << " " << c.data.size() << " bytes\n";
  for (const auto& s : f->skipped) std::cout << "  " << s << " (unknown, skipped)\n";
  // Landmarks: where they came from and the points the renderer animates.
  if (const std::string* lc = f->find(kChunkLandmarks)) {
    auto lm = landmarks_from_json(*lc);
    if (!lm.ok()) return fail(lm.status().message());
    std::cout << "\nlandmarks: " << lm->points.size() << " points, source " << lm->source << "\n";
    if (!lm->note.empty()) std::cout << "  note: " << lm->note << "\n";
    const char* groups[][3] = {{"jaw", "0", "16"},        {"brows", "17", "26"},
                               {"nose", "27", "35"},      {"left eye", "36", "41"},
                               {"right eye", "42", "47"}, {"outer lips", "48", "59"},
                               {"inner lips", "60", "67"}};
    for (const auto& g : groups) {
      std::cout << "  " << g[0] << ":";
      for (int i = std::stoi(g[1]); i <= std::stoi(g[2]); ++i)
        std::cout << " " << std::lround(lm->points[i].x) << "," << std::lround(lm->points[i].y);
      std::cout << "\n";
    }
  } else {
    std::cout
        << "\nlandmarks: none (an .imx 1.0 model; the renderer places a mean face on its eyes and mouth)\n";
  }
  return 0;
}

int imx_build(int argc, char** argv) {
  Args a =
      parse(argc, argv, 1, {"image", "video", "audio", "model", "aspect", "name", "agent-id", "voice", "o"});
  if (!a.error.empty()) return fail(a.error + "\n" + kImxUsage);
  if (!a.flags.count("o")) {
    std::cerr << "error: missing -o OUT.imx\n" << kImxUsage;
    return 1;
  }
  BuildInput in;
  in.agent_id = a.flags.count("agent-id") ? a.flags["agent-id"] : "cli";
  in.name = a.flags.count("name") ? a.flags["name"] : in.agent_id;
  if (a.flags.count("model")) in.model_type = a.flags["model"];
  if (a.flags.count("aspect")) in.aspect_ratio = a.flags["aspect"];
  if (a.flags.count("voice")) in.voice = a.flags["voice"];
  for (auto [flag, dst] :
       {std::pair{"image", &in.image_bytes}, {"video", &in.video_bytes}, {"audio", &in.audio_bytes}}) {
    if (!a.flags.count(flag)) continue;
    auto b = read_file(a.flags[flag]);
    if (!b.ok()) return fail(b.status().message());
    *dst = std::move(*b);
  }
  auto out = build_imx(in, [](std::string_view step, double f, std::string_view msg) {
    std::cerr << "[" << static_cast<int>(f * 100 + 0.5) << "%] " << step << ": " << msg << "\n";
  });
  if (!out.ok()) return fail(out.status().message());
  if (auto s = write_file(a.flags["o"], *out); !s.ok()) return fail(s.message());
  std::cerr << "wrote " << a.flags["o"] << " (" << out->size() << " bytes)\n";
  return 0;
}

bool is_help(const char* a) {
  std::string_view s(a);
  return s == "--help" || s == "-h" || s == "help";
}

}  // namespace
}  // namespace imago::avatar

namespace imago {

int imx_main(int argc, char** argv) {
  using namespace avatar;
  if (argc < 1) {
    std::cerr << kImxUsage;
    return 2;
  }
  std::string cmd = argv[0];
  if (is_help(argv[0])) {
    std::cout << kImxUsage;
    return 0;
  }
  if ((cmd == "info" || cmd == "verify") && argc == 2) return imx_info(argv[1], cmd == "verify");
  if (cmd == "build") return imx_build(argc, argv);
  std::cerr << kImxUsage;
  return 2;
}

int render_main(int argc, char** argv) {
  using namespace avatar;
  if (argc >= 1 && is_help(argv[0])) {
    std::cout << kRenderUsage;
    return 0;
  }
  Args a = parse(argc, argv, 0, {"text", "voice", "language", "audio", "gesture", "duration", "size", "o"});
  if (!a.error.empty()) return fail(a.error + "\n" + kRenderUsage);
  if (a.positional.size() != 1 || !a.flags.count("o")) {
    std::cerr << kRenderUsage;
    return 2;
  }
  auto model = read_file(a.positional[0]);
  if (!model.ok()) return fail(model.status().message());
  auto file = read_imx(*model);
  if (!file.ok()) return fail(file.status().message());
  internal::OfflineRender job;
  if (a.flags.count("text") && a.flags.count("audio")) return fail("give --text or --audio, not both");
  if (a.flags.count("size")) {
    auto parts = split(a.flags["size"], 'x');
    auto w = parts.size() == 2 ? parse_int(parts[0]) : std::nullopt;
    auto h = parts.size() == 2 ? parse_int(parts[1]) : std::nullopt;
    if (!w || !h) return fail("--size must be WIDTHxHEIGHT");
    job.width = static_cast<int>(*w);
    job.height = static_cast<int>(*h);
  }
  if (a.flags.count("duration")) {
    auto d = parse_double(a.flags["duration"]);
    if (!d || *d <= 0) return fail("--duration must be a positive number of seconds");
    job.min_duration_s = *d;
    job.gesture_duration_s = *d;
  }
  if (a.flags.count("gesture")) job.gesture = a.flags["gesture"];
  if (a.flags.count("text")) {
    speech::SpeechOptions so;
    so.workers = 1;
    so.queue = 4;
    auto svc = speech::make_speech_service(so);
    if (!svc.ok()) return fail("speech engine: " + svc.status().message());
    speech::VoiceSettings vs;
    const Manifest& m = file->manifest;
    vs.voice = a.flags.count("voice") ? a.flags["voice"] : m.voice;
    vs.axes = a.flags.count("voice") ? speech::Axes{} : m.axes;  // the model's tuning goes with its voice
    vs.language = a.flags.count("language") ? a.flags["language"] : m.language;
    auto audio = (*svc)->synthesize(a.flags["text"], vs, {"", speech::SynthesisPriority::kBatch});
    if (!audio.ok()) return fail(audio.status().message());
    job.speech = std::move(*audio);
    // With speech, --duration only sets a minimum length; the gesture keeps its own duration.
    job.gesture_duration_s = 0;
  } else if (a.flags.count("audio")) {
    auto bytes = read_file(a.flags["audio"]);
    if (!bytes.ok()) return fail(bytes.status().message());
    auto pcm = internal::decode_speech_audio(*bytes);
    if (!pcm.ok()) return fail(pcm.status().message());
    job.speech = std::move(*pcm);
    // Audio without text: the lips follow recognised phones (loudness when none are heard).
    speech::add_recognized_phones(*job.speech);
    job.gesture_duration_s = 0;
  }
  auto r = internal::render_mp4(*model, job, a.flags["o"]);
  if (!r.ok()) return fail(r.status().message());
  std::cerr << "wrote " << a.flags["o"] << " (" << r->frames << " frames, " << r->duration_s
            << " s at 25 FPS)\n";
  return 0;
}

}  // namespace imago
