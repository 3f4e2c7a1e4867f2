#include "agents/video_speech.h"

#include <boost/json.hpp>

namespace imago::agents {

namespace json = boost::json;

std::string encode_speech_blob(const speech::Audio& a) {
  json::array ph, words;
  for (const auto& p : a.phonemes) ph.push_back(json::array{json::value(p.phoneme), p.start_s, p.end_s});
  for (const auto& w : a.words) words.push_back(json::array{json::value(w.text), w.start_s, w.end_s});
  json::object head{{"sample_rate", a.sample_rate},
                    {"samples", static_cast<int64_t>(a.samples.size())},
                    {"phonemes", std::move(ph)},
                    {"words", std::move(words)}};
  std::string out = json::serialize(head);
  out.push_back('\n');
  size_t at = out.size();
  out.resize(at + a.samples.size() * 2);
  for (size_t i = 0; i < a.samples.size(); ++i) {
    auto v = static_cast<uint16_t>(a.samples[i]);
    out[at + 2 * i] = static_cast<char>(v & 0xff);
    out[at + 2 * i + 1] = static_cast<char>(v >> 8);
  }
  return out;
}

Result<speech::Audio> decode_speech_blob(std::string_view bytes) {
  size_t nl = bytes.find('\n');
  if (nl == std::string_view::npos) return Status::Invalid("speech blob: no header");
  boost::system::error_code ec;
  json::value head = json::parse(bytes.substr(0, nl), ec);
  if (ec || !head.is_object()) return Status::Invalid("speech blob: bad header");
  const json::object& h = head.as_object();
  speech::Audio a;
  try {
    a.sample_rate = static_cast<int>(h.at("sample_rate").to_number<int64_t>());
    auto n = static_cast<size_t>(h.at("samples").to_number<int64_t>());
    if (a.sample_rate <= 0 || bytes.size() - nl - 1 != n * 2)
      return Status::Invalid("speech blob: truncated");
    a.samples.resize(n);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + nl + 1);
    for (size_t i = 0; i < n; ++i) a.samples[i] = static_cast<int16_t>(p[2 * i] | (p[2 * i + 1] << 8));
    for (const auto& v : h.at("phonemes").as_array()) {
      const auto& t = v.as_array();
      a.phonemes.push_back(
          {std::string(t.at(0).as_string()), t.at(1).to_number<double>(), t.at(2).to_number<double>()});
    }
    for (const auto& v : h.at("words").as_array()) {
      const auto& t = v.as_array();
      a.words.push_back(
          {std::string(t.at(0).as_string()), t.at(1).to_number<double>(), t.at(2).to_number<double>()});
    }
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("speech blob: ") + e.what());
  }
  return a;
}

std::string video_file_id(const std::string& job_id) {
  std::string_view tail = job_id;
  if (tail.rfind("job_", 0) == 0) tail.remove_prefix(4);
  return "file_v" + std::string(tail);
}

}  // namespace imago::agents
