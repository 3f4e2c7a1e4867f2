// The measured bars of the landmark-driven renderer (docs/avatar.md "Measured quality"): the same
// 68-point predictor that builds the models re-detects the face on rendered frames of real
// portraits (opencv-doc's photos and one of dlib's examples) and measures detection rate, lip opening against
// the audio, bilabial closures (with the engine's phones and with phones recognised from the audio
// alone), similarity to the photo at rest and during speech, and blinks.
// IMAGO_AVATAR_DUMP=/dir writes the frames looked at (rest, mid-word, blink, each gesture);
// IMAGO_AVATAR_TRACE=1 prints the speech test's per-frame opening, audio level and jaw.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "avatar/clip.h"
#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"
#include "speech/phone_recognizer.h"
#include "speech/speech_service.h"

namespace imago::avatar {
namespace {
using namespace testing;
using internal::Landmarks68;

// Two different real portraits: a neutral face with closed lips, and a smiling one with the
// mouth open and teeth showing (its rest pose is that open mouth).
const std::string kNeutral = kOpenCvHtml + "230501201_1.jpg";
const std::string kSmiling = kOpenCvHtml + "227943776_1.jpg";
// Portraits the renderer was never tuned on: a small face shouting, and one smiling over a tall
// row of teeth (dlib's example photo of Tom Cruise).
const std::string kUnseen = kOpenCvData + "messi5.jpg";
const std::string kUnseenSmiling = kDlibFaces + "Tom_Cruise_avp_2014_4.jpg";

std::string name_of(const std::string& photo) {
  return photo == kNeutral   ? "neutral"
         : photo == kSmiling ? "smiling"
         : photo == kUnseen  ? "unseen"
                             : "unseen_smiling";
}

speech::SpeechService& service() {
  static std::unique_ptr<speech::SpeechService> svc = [] {
    speech::SpeechOptions o;
    o.workers = 1;
    o.queue = 4;
    auto s = speech::make_speech_service(o);
    if (!s.ok()) throw std::runtime_error(s.status().message());
    return std::move(s.value());
  }();
  return *svc;
}

const std::string& model_of(const std::string& photo, const std::string& type = "essence") {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(photo + "/" + type);
  if (it != cache.end()) return it->second;
  BuildInput in;
  in.agent_id = "metrics";
  in.aspect_ratio = "1:1";
  in.model_type = type;
  in.image_bytes = slurp(photo);
  auto r = build_imx(in, {});
  EXPECT_TRUE(r.ok()) << photo << ": " << r.status().message();
  return cache[photo + "/" + type] = r.ok() ? *r : std::string();
}

cv::Mat bgr_of(const Frame& f) {
  cv::Mat rgb(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.rgb.data())), bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  return bgr;
}

void dump(const cv::Mat& bgr, const std::string& name) {
  const char* dir = std::getenv("IMAGO_AVATAR_DUMP");
  if (dir && *dir) cv::imwrite(std::string(dir) + "/" + name + ".png", bgr);
}

std::optional<Landmarks68> detect(const cv::Mat& bgr, int work_px = 400) {
  auto boxes = internal::hog_faces(bgr, work_px);
  if (boxes.empty()) return std::nullopt;
  return internal::predict_landmarks(bgr, boxes[0]);
}

// Least-squares similarity (rotation, uniform scale, translation) taking points a onto b.
cv::Mat similarity(const std::vector<cv::Point2d>& a, const std::vector<cv::Point2d>& b) {
  cv::Point2d ma(0, 0), mb(0, 0);
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= double(a.size()), mb /= double(b.size());
  double sxx = 0, sxy = 0, saa = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cv::Point2d p = a[i] - ma, q = b[i] - mb;
    sxx += p.x * q.x + p.y * q.y;
    sxy += p.x * q.y - p.y * q.x;
    saa += p.x * p.x + p.y * p.y;
  }
  double c = sxx / saa, s = sxy / saa;
  cv::Mat M = (cv::Mat_<double>(2, 3) << c, -s, 0, s, c, 0);
  M.at<double>(0, 2) = mb.x - (c * ma.x - s * ma.y);
  M.at<double>(1, 2) = mb.y - (s * ma.x + c * ma.y);
  return M;
}

// Mean SSIM (Wang et al. 2004, 11x11 Gaussian window, sigma 1.5) of two gray images.
double ssim(const cv::Mat& a8, const cv::Mat& b8) {
  cv::Mat a, b;
  a8.convertTo(a, CV_64F);
  b8.convertTo(b, CV_64F);
  const double C1 = 6.5025, C2 = 58.5225;
  auto blur = [](const cv::Mat& m) {
    cv::Mat o;
    cv::GaussianBlur(m, o, {11, 11}, 1.5);
    return o;
  };
  cv::Mat mu1 = blur(a), mu2 = blur(b);
  cv::Mat mu1_2 = mu1.mul(mu1), mu2_2 = mu2.mul(mu2), mu12 = mu1.mul(mu2);
  cv::Mat s1 = blur(a.mul(a)) - mu1_2, s2 = blur(b.mul(b)) - mu2_2, s12 = blur(a.mul(b)) - mu12;
  cv::Mat num = (2 * mu12 + C1).mul(2 * s12 + C2), den = (mu1_2 + mu2_2 + C1).mul(s1 + s2 + C2);
  cv::Mat map;
  cv::divide(num, den, map);
  return cv::mean(map)[0];
}

cv::Rect bbox(const Landmarks68& l, int from, int to, double grow) {
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (int i = from; i <= to; ++i)
    x0 = std::min(x0, l[i].x), y0 = std::min(y0, l[i].y), x1 = std::max(x1, l[i].x),
    y1 = std::max(y1, l[i].y);
  double gx = (x1 - x0) * grow, gy = (y1 - y0) * grow;
  return cv::Rect(int(x0 - gx), int(y0 - gy), int(x1 - x0 + 2 * gx), int(y1 - y0 + 2 * gy));
}

// SSIM of `frame` against `ref` (whose landmarks are `lr`) in region [from, to] of the frame's
// landmarks, after aligning ref onto the frame by a similarity fitted on all 68 landmarks.
double aligned_ssim(const cv::Mat& ref, const Landmarks68& lr, const cv::Mat& frame, const Landmarks68& lf,
                    int from, int to, int fit_from = 0, int fit_to = 67) {
  std::vector<cv::Point2d> a(lr.begin() + fit_from, lr.begin() + fit_to + 1),
      b(lf.begin() + fit_from, lf.begin() + fit_to + 1);
  cv::Mat warped;
  cv::warpAffine(ref, warped, similarity(a, b), frame.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  cv::Rect r = bbox(lf, from, to, 0.05) & cv::Rect(0, 0, frame.cols, frame.rows);
  cv::Mat g1, g2;
  cv::cvtColor(warped(r), g1, cv::COLOR_BGR2GRAY);
  cv::cvtColor(frame(r), g2, cv::COLOR_BGR2GRAY);
  return ssim(g1, g2);
}

// As aligned_ssim over the whole face, the alignment then refined on the pixels: the similarity
// nudged (shift, scale and rotation about the region's centre, each by coordinate ascent from 2
// px down to a quarter, within kNudge) to the best SSIM. Two separate landmark fits, one on the
// photo and one on the frame, disagree by about a pixel, and on a face enlarged 3x that alone
// cost 0.12 of SSIM; a similarity cannot undo a change inside the face (a jaw, lips, blur).
struct RefinedSsim {
  double by_landmarks, refined;
  double dx, dy, scale, rotation;  // the nudge found: px, ratio, radians
};
RefinedSsim refined_ssim(const cv::Mat& ref, const Landmarks68& lr, const cv::Mat& frame,
                         const Landmarks68& lf) {
  constexpr double kNudgePx = 3, kNudgeScale = 0.02, kNudgeRad = 0.026;  // 1.5 degrees
  const cv::Mat m0 = similarity({lr.begin(), lr.end()}, {lf.begin(), lf.end()});
  const cv::Rect r = bbox(lf, 0, 67, 0.05) & cv::Rect(0, 0, frame.cols, frame.rows);
  cv::Mat target;
  cv::cvtColor(frame(r), target, cv::COLOR_BGR2GRAY);
  const cv::Point2d c(r.x + r.width / 2.0, r.y + r.height / 2.0);
  auto score = [&](double dx, double dy, double sc, double rot) {
    const double cs = sc * std::cos(rot), sn = sc * std::sin(rot);
    cv::Mat nudge = (cv::Mat_<double>(3, 3) << cs, -sn, c.x - cs * c.x + sn * c.y + dx, sn, cs,
                     c.y - sn * c.x - cs * c.y + dy, 0, 0, 1);
    cv::Mat m3 = cv::Mat::eye(3, 3, CV_64F);
    m0.copyTo(m3(cv::Rect(0, 0, 3, 2)));
    cv::Mat warped, gray;
    cv::warpAffine(ref, warped, (nudge * m3)(cv::Rect(0, 0, 3, 2)), frame.size(), cv::INTER_LINEAR,
                   cv::BORDER_REPLICATE);
    cv::cvtColor(warped(r), gray, cv::COLOR_BGR2GRAY);
    return ssim(gray, target);
  };
  RefinedSsim out{score(0, 0, 1, 0), 0, 0, 0, 1, 0};
  double best = out.by_landmarks;
  for (double step : {2.0, 1.0, 0.5, 0.25}) {
    for (bool moved = true; moved;) {
      moved = false;
      for (int k = 0; k < 8; ++k) {
        double dx = out.dx, dy = out.dy, sc = out.scale, rot = out.rotation;
        const double sign = k % 2 ? -1 : 1;
        if (k < 2)
          dx += sign * step;
        else if (k < 4)
          dy += sign * step;
        else if (k < 6)
          sc *= 1 + sign * 0.005 * step;
        else
          rot += sign * 0.005 * step;
        if (std::abs(dx) > kNudgePx || std::abs(dy) > kNudgePx || std::abs(sc - 1) > kNudgeScale ||
            std::abs(rot) > kNudgeRad)
          continue;
        const double v = score(dx, dy, sc, rot);
        if (v > best + 1e-5)
          best = v, out.dx = dx, out.dy = dy, out.scale = sc, out.rotation = rot, moved = true;
      }
    }
  }
  out.refined = best;
  return out;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= a.size(), mb /= b.size();
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// Centred moving average over three frames (120 ms).
std::vector<double> smooth3(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double s = 0;
    int c = 0;
    for (size_t j = i == 0 ? 0 : i - 1; j <= i + 1 && j < x.size(); ++j) s += x[j], ++c;
    y[i] = s / c;
  }
  return y;
}

std::unique_ptr<Renderer> renderer(const std::string& imx, bool idle, uint64_t seed = 5, int size = 512) {
  auto m = load_model(imx, size, size);
  EXPECT_TRUE(m.ok()) << m.status().message();
  RendererOptions o;
  o.idle_motion = idle;
  o.session_seed = seed;
  return std::move(Renderer::create(*m, o).value());
}

const char* kSpeech =
    "Good morning, and thank you for joining us today. My name is Bob, and I will be your guide. "
    "We will begin with a brief overview of the map, then move on to the main points. Please be patient "
    "with me, because maps are big and the paths between places may be complicated. By the end, you "
    "should be able to plan a trip from the museum to the harbour, and back again, without problems. "
    "Before we begin, may I ask you a simple question?";

// The eyes' outlines (landmarks 36..41 and 42..47) filled, as a mask of the frame.
cv::Mat eye_mask(const Landmarks68& l, cv::Size size) {
  cv::Mat mask(size, CV_8UC1, cv::Scalar(0));
  for (int e : {36, 42}) {
    std::vector<cv::Point> poly;
    for (int i = 0; i < 6; ++i)
      poly.emplace_back(cv::Point(int(std::lround(l[e + i].x)), int(std::lround(l[e + i].y))));
    cv::fillConvexPoly(mask, poly, cv::Scalar(255));
  }
  return mask;
}

// The share of the eyes of `rest` (inside `mask`) that `img` still shows unchanged.
double visible_eye(const cv::Mat& img, const cv::Mat& rest, const cv::Mat& mask) {
  cv::Mat diff, gray;
  cv::absdiff(img, rest, diff);
  cv::cvtColor(diff, gray, cv::COLOR_BGR2GRAY);
  return double(cv::countNonZero((gray < 20) & mask)) / std::max(1, cv::countNonZero(mask));
}

class FaceMetrics : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!internal::landmark_detector_available())
      GTEST_SKIP() << "dlib landmark model not installed (libdlib-data); these bars need it";
  }
};

// The speech bars on one portrait (`photo`) speaking `pushed`, whose phones were really spoken at
// `spoken` (the engine's timing: p/b/m are looked for there).
void check_speech(const std::string& photo, const std::string& name, const speech::Audio& pushed,
                  const std::vector<speech::PhonemeTiming>& spoken) {
  auto r = renderer(model_of(photo), true);
  ASSERT_TRUE(r->push_audio(pushed).ok());
  double rest_open = 0;
  {
    auto still = renderer(model_of(photo), false);
    Frame f0;
    still->next_frame(f0);
    auto l0 = detect(bgr_of(f0));
    ASSERT_TRUE(l0);
    rest_open = internal::inner_lip_opening(*l0) /
                cv::norm(internal::eye_centre(*l0, true) - internal::eye_centre(*l0, false));
  }
  int frames = int(std::ceil(pushed.duration_s() * kFps)), found = 0;
  std::vector<double> open, env, pose_open;
  std::vector<bool> have;
  double ed = 0;
  Frame f;
  for (int i = 0; i < frames; ++i) {
    r->next_frame(f);
    cv::Mat bgr = bgr_of(f);
    if (i == 37) dump(bgr, name + "_midword");
    double e = 0;
    for (int16_t s : f.audio) e += double(s) * s;
    env.push_back(std::sqrt(e / f.audio.size()));
    pose_open.push_back(f.mouth_open);
    auto lm = detect(bgr);
    have.push_back(lm.has_value());
    if (lm) {
      ++found;
      ed = cv::norm(internal::eye_centre(*lm, true) - internal::eye_centre(*lm, false));
      open.push_back(internal::inner_lip_opening(*lm) / ed);
    } else {
      open.push_back(0);
    }
  }
  double rate = double(found) / frames;
  std::printf("%s: face found in %d of %d frames (%.1f%%)\n", name.c_str(), found, frames, 100 * rate);
  EXPECT_GE(rate, 0.98);
  // Opening against the audio envelope, both smoothed over 120 ms (three frames, the syllable
  // rate); frames without a face carry their neighbours' mean.
  for (size_t i = 0; i < open.size(); ++i)
    if (!have[i]) {
      double s = 0;
      int c = 0;
      for (size_t j : {i - 1, i + 1})
        if (j < open.size() && have[j]) s += open[j], ++c;
      open[i] = c ? s / c : 0;
    }
  if (std::getenv("IMAGO_AVATAR_TRACE"))
    for (size_t i = 0; i < open.size(); ++i)
      std::printf("trace %s %zu open %.3f env %.0f pose %.2f have %d\n", name.c_str(), i, open[i], env[i],
                  pose_open[i], int(have[i]));
  double corr = pearson(smooth3(open), smooth3(env));
  std::printf("%s: inner-lip opening vs audio envelope (120 ms) r = %.3f\n", name.c_str(), corr);
  // The bar is 0.6. The smiling portrait (teeth showing at rest) read 0.49 while its open mouth
  // stayed open on every quiet sound and only p/b/m shut it; with its lips relaxing toward each
  // other while a turn is spoken it reads 0.73 (neutral 0.72, unseen 0.71), and 0.67 since rounded
  // lips (oo, o) cover its teeth with a small drawn opening (docs/avatar.md).
  EXPECT_GE(corr, 0.6);
  // A speaking mouth, not a scream: the re-detected inner-lip opening over the inter-ocular
  // distance, on the frames that carry speech sound, has its median near 0.1 and opens to about
  // 0.3 only on open vowels (the old loudness-driven jaw read 0.25 median, 0.45 at the 95th).
  // Measured as what speech adds to the rest frame's opening: a photo with an open mouth (the
  // smiling portrait's teeth, the unseen one's shout) keeps it as its rest pose.
  std::vector<double> speaking;
  for (size_t i = 0; i < open.size(); ++i)
    if (have[i] && env[i] > 200) speaking.push_back(std::max(0.0, open[i] - rest_open));
  ASSERT_GT(speaking.size(), open.size() / 2);
  std::vector<double> sorted = speaking;
  std::sort(sorted.begin(), sorted.end());
  const double med = sorted[sorted.size() / 2], p95 = sorted[sorted.size() * 95 / 100];
  int jumps = 0;  // flapping: frame-to-frame changes over half the range
  for (size_t i = 1; i < open.size(); ++i) jumps += std::abs(open[i] - open[i - 1]) > 0.5 * sorted.back();
  std::printf(
      "%s: inner-lip opening / inter-ocular while speaking, beyond rest (%.3f): median %.3f, 95th %.3f, "
      "max %.3f; %d jumps over half the range\n",
      name.c_str(), rest_open, med, p95, sorted.back(), jumps);
  EXPECT_LE(med, 0.15);
  EXPECT_LE(p95, 0.32);
  // Every p, b, m: the lips close within one frame. Closed: within 10% of the speech range of a
  // closed mouth (the rest frame's opening, or 0.05 eye distances where the photo's mouth is
  // open at rest). With speech-sized openings 10% of the maximum alone is about a pixel on the
  // neutral portrait, less than the predictor reads on its rest frame.
  const double peak = *std::max_element(open.begin(), open.end());  // the speech maximum
  const double shut = std::min(rest_open, 0.05) + 0.1 * (peak - rest_open);
  int bilabials = 0, closed = 0;
  double worst = 0;  // the largest of the per-bilabial lowest openings, share of the maximum
  for (const auto& p : spoken) {
    if (viseme_for_phoneme(p.phoneme) != Viseme::kMBP) continue;
    ++bilabials;
    // Frame n shows audio [n/25, (n+1)/25): the frames the phoneme overlaps, and one either side.
    int first = int(std::floor(p.start_s * kFps)),
        last = int(std::floor(std::max(p.start_s, p.end_s - 1e-6) * kFps));
    double lowest = 1e9;
    std::string seen;
    for (int i = std::max(0, first - 1); i <= std::min(frames - 1, last + 1); ++i) {
      if (have[i]) lowest = std::min(lowest, open[i] / peak);
      seen += " " + std::to_string(int(100 * open[i] / peak)) + "%(f" + std::to_string(i) + ")";
    }
    worst = std::max(worst, lowest);
    bool ok = lowest * peak <= shut;
    closed += ok;
    if (!ok)
      std::printf("%s: lips open at '%s' (%.2f s):%s\n", name.c_str(), p.phoneme.c_str(), p.start_s,
                  seen.c_str());
  }
  std::printf(
      "%s: lips closed for %d of %d bilabials (closed: <= %.3f; least closed: %.1f%% of the maximum)\n",
      name.c_str(), closed, bilabials, shut, 100 * worst);
  EXPECT_GE(bilabials, 15);
  EXPECT_GE(closed, bilabials * 9 / 10) << "bar: p/b/m closed within one frame for >= 90%";
}

TEST_P(FaceMetrics, SpeechKeepsTheFaceDetectableAndTheLipsFollowTheAudio) {
  auto audio = service().synthesize(kSpeech, speech::VoiceSettings{});
  ASSERT_TRUE(audio.ok()) << audio.status().message();
  ASSERT_GE(audio->duration_s(), 20.0) << "the speech render must last at least 20 s";
  check_speech(GetParam(), name_of(GetParam()), *audio, audio->phonemes);
}

// The same bars on the same speech as audio alone (an upload or a client's PCM push): the
// renderer takes its phones from the recogniser (speech::add_recognized_phones), and p/b/m are
// looked for where the engine really spoke them.
TEST_P(FaceMetrics, AudioWithoutTextKeepsTheFaceAndTheLipsFollowIt) {
  auto spoken = service().synthesize(kSpeech, speech::VoiceSettings{});
  ASSERT_TRUE(spoken.ok()) << spoken.status().message();
  speech::Audio raw;
  raw.sample_rate = spoken->sample_rate;
  raw.samples = spoken->samples;
  ASSERT_TRUE(speech::add_recognized_phones(raw)) << "no phones recognised";
  // Measured: r = 0.632 / 0.629 / 0.684 / 0.656, p/b/m closed 45 / 45 / 42 / 42 of 46
  // (docs/avatar.md).
  check_speech(GetParam(), name_of(GetParam()) + "_audio_only", raw, spoken->phonemes);
}

// Nothing below the chin moves with the jaw: at the widest vowel of a sentence (head still),
// the region under the jaw line (neck, collar) is the rest frame's, and the face is found.
TEST_P(FaceMetrics, TheCollarStaysWhileTheJawOpens) {
  const std::string name = name_of(GetParam());
  auto r = renderer(model_of(GetParam()), false);
  Frame f;
  r->next_frame(f);
  cv::Mat rest = bgr_of(f);
  auto lr = detect(rest);
  ASSERT_TRUE(lr);
  auto audio = service().synthesize("Ah, what a large garden, father! Are all the apples ours?", {});
  ASSERT_TRUE(audio.ok());
  ASSERT_TRUE(r->push_audio(*audio).ok());
  cv::Mat widest;
  double most = -1;
  for (int i = 0; i < int(audio->duration_s() * kFps); ++i) {
    r->next_frame(f);
    if (f.mouth_open > most) most = f.mouth_open, widest = bgr_of(f);
  }
  dump(widest, name + "_widest_vowel");
  auto lw = detect(widest);
  ASSERT_TRUE(lw) << "face lost at the widest vowel";
  const Landmarks68& l = *lr;
  const double ed = cv::norm(internal::eye_centre(l, true) - internal::eye_centre(l, false));
  const double open = (internal::inner_lip_opening(*lw) - internal::inner_lip_opening(l)) / ed;
  // Under the jaw: from a fifth of an eye distance below the opened chin, across the jaw's width.
  const double chin = std::max(l[8].y, (*lw)[8].y);
  cv::Rect under(int(l[5].x), int(chin + 0.2 * ed), int(l[11].x - l[5].x), int(0.6 * ed));
  under &= cv::Rect(0, 0, rest.cols, rest.rows);
  ASSERT_GT(under.area(), 100);
  cv::Mat g1, g2;
  cv::cvtColor(rest(under), g1, cv::COLOR_BGR2GRAY);
  cv::cvtColor(widest(under), g2, cv::COLOR_BGR2GRAY);
  const double s = ssim(g1, g2);
  std::printf(
      "%s: widest vowel (open %.2f, re-detected %.3f of the eye distance beyond rest): under-jaw SSIM vs "
      "rest %.3f\n",
      name.c_str(), most, open, s);
  EXPECT_LE(open, 0.32);
  EXPECT_GE(s, 0.9);
}

// Rounded vowels narrow the mouth: on the frames in the middle of each oo (u, U, w) of a spoken
// sentence, the re-detected mouth (outer corners, 48-54) is no wider than at rest and on most of
// them narrower (an expression model, whose speech carries a slight smile). The old rounding
// pulled a spike of moustache and lip out at the corners, which the predictor read as corners
// further out on the neutral portrait (96-103% of rest, median 99%; now 87-92%).
TEST_P(FaceMetrics, RoundedVowelsNarrowTheMouth) {
  const std::string name = name_of(GetParam());
  auto r = renderer(model_of(GetParam(), "expression"), false);
  Frame f;
  r->next_frame(f);
  auto lr = detect(bgr_of(f));
  ASSERT_TRUE(lr);
  const double rest_w = cv::norm((*lr)[54] - (*lr)[48]);
  auto audio = service().synthesize("Who knew you would move to the zoo, too? We were few, so we flew.", {});
  ASSERT_TRUE(audio.ok());
  ASSERT_TRUE(r->push_audio(*audio).ok());
  std::vector<int> oo;  // frames in the middle of an oo
  for (const auto& p : audio->phonemes)
    if (viseme_for_phoneme(p.phoneme) == Viseme::kOO && p.end_s - p.start_s >= 0.04)
      oo.push_back(int((p.start_s + p.end_s) / 2 * kFps));
  ASSERT_GE(oo.size(), 5u);
  std::vector<double> widths;
  cv::Mat widest;
  for (int i = 0; i <= oo.back(); ++i) {
    r->next_frame(f);
    if (std::find(oo.begin(), oo.end(), i) == oo.end()) continue;
    const cv::Mat img = bgr_of(f);
    auto l = detect(img);
    if (!l) continue;
    widths.push_back(cv::norm((*l)[54] - (*l)[48]) / rest_w);
    if (widths.back() >= *std::max_element(widths.begin(), widths.end())) widest = img;
  }
  ASSERT_GE(widths.size(), oo.size() * 3 / 4);
  dump(widest, name + "_widest_oo");
  std::vector<double> sorted = widths;
  std::sort(sorted.begin(), sorted.end());
  std::string all;
  for (double w : widths) all += " " + std::to_string(int(std::lround(100 * w)));
  std::printf("%s: mouth width on %zu oo frames, %% of rest:%s (median %.0f%%, widest %.0f%%)\n",
              name.c_str(), widths.size(), all.c_str(), 100 * sorted[sorted.size() / 2], 100 * sorted.back());
  EXPECT_LE(sorted.back(), 1.02) << name << ": an oo widened the mouth";
  EXPECT_LE(sorted[sorted.size() / 2], 0.97) << name << ": the oo's do not narrow the mouth";
}

TEST_P(FaceMetrics, RestMatchesThePhotoAndSpeechKeepsTheUpperFaceStill) {
  const std::string name = name_of(GetParam());
  cv::Mat photo = cv::imread(GetParam());
  // The source photo enlarged: the unseen one is a wide scene with a small face.
  auto lp = detect(photo, 1200);
  ASSERT_TRUE(lp);
  auto r = renderer(model_of(GetParam()), false);
  Frame f;
  r->next_frame(f);  // frame 0: rest, eyes open (the first blink comes later)
  cv::Mat rest = bgr_of(f);
  dump(rest, name + "_rest");
  auto lr = detect(rest);
  ASSERT_TRUE(lr);
  const RefinedSsim s_rest = refined_ssim(photo, *lp, rest, *lr);
  std::printf(
      "%s: rest frame vs photo SSIM %.3f aligned by landmarks, %.3f refined (%.2f, %.2f px, scale %.4f, "
      "%.2f deg)\n",
      name.c_str(), s_rest.by_landmarks, s_rest.refined, s_rest.dx, s_rest.dy, s_rest.scale,
      s_rest.rotation * 180 / CV_PI);
  // At rest the frames are the model's pixels bit for bit (Renderer.AtRestOnlyTheLidsMove): what
  // this measures is the builder's framing. Aligned by the landmarks alone it read 0.943 / 0.959 /
  // 0.855 / 0.916, the unseen portrait's 50 px face enlarged 3x and its landmarks a pixel apart.
  EXPECT_GE(s_rest.refined, 0.92);
  // The refinement cannot pass a changed face: the same frame with everything below the nose 4 px
  // lower (a jaw dropped a little) reads below the bar.
  {
    const cv::Rect face = bbox(*lr, 0, 67, 0.0) & cv::Rect(0, 0, rest.cols, rest.rows);
    const int nose = int((*lr)[33].y);
    const cv::Rect below(face.x, nose, face.width, face.y + face.height - nose - 4);
    cv::Mat dropped = rest.clone();
    rest(below).copyTo(dropped(below + cv::Point(0, 4)));
    auto ld = detect(dropped);
    ASSERT_TRUE(ld);
    const double s_dropped = refined_ssim(photo, *lp, dropped, *ld).refined;
    std::printf("%s: the rest frame with its lower face 4 px down vs photo: SSIM %.3f refined\n",
                name.c_str(), s_dropped);
    EXPECT_LT(s_dropped, 0.92);
  }

  auto audio = service().synthesize("Maybe we should go to the beach before the weather changes again.", {});
  ASSERT_TRUE(audio.ok());
  ASSERT_TRUE(r->push_audio(*audio).ok());
  std::vector<double> scores;
  cv::Mat worst_img;
  int blinking = 0;
  const cv::Mat eyes = eye_mask(*lr, rest.size());
  for (int i = 0; i < int(audio->duration_s() * kFps); ++i) {
    r->next_frame(f);
    cv::Mat img = bgr_of(f);
    auto l = detect(img);
    ASSERT_TRUE(l) << "frame " << i;
    // Blinks change the eyes inside this region by design: those frames are left out (the head
    // is still here, so changed eye pixels mean lids in motion, which the EAR flags only near shut).
    if (visible_eye(img, rest, eyes) < 0.85) {
      ++blinking;
      continue;
    }
    // Aligned on the upper face (brows, nose, eyes): the jaw moves with speech by design.
    scores.push_back(aligned_ssim(rest, *lr, img, *l, 17, 35, 17, 47));
    if (scores.size() == 1 || scores.back() < *std::min_element(scores.begin(), scores.end() - 1))
      worst_img = img;
  }
  double worst = *std::min_element(scores.begin(), scores.end());
  double mean = std::accumulate(scores.begin(), scores.end(), 0.0) / scores.size();
  std::printf(
      "%s: brows-and-nose SSIM during speech: mean %.3f, worst %.3f (%zu frames, %d blinking left out)\n",
      name.c_str(), mean, worst, scores.size(), blinking);
  EXPECT_LE(blinking, int(scores.size() / 4));
  dump(worst_img, name + "_speech_worst_upper_face");
  // The bar is 0.85 in 90% of the frames; the tuned portraits are held to 0.88 in all.
  // The unseen smiling portrait's worst frame (0.874-0.877) raises its brows on a stressed syllable.
  EXPECT_GE(worst, name == "unseen_smiling" ? 0.85 : 0.88);
}

// Blinks. The bar: at each blink the re-detected eye aspect ratio (EAR, mean of both eyes)
// falls below half its open value, and is back within 10% of it afterwards. The shut frames
// show the person's lid drawn down to a lash line on the lower lid's curve (docs/avatar.md, "How
// the face moves": some 200 variants of the shut lid were measured here). Pixels back it up: the
// share of the rest frame's eye (inside the landmarks' eye outline) still visible falls below
// half at each blink and comes back.
TEST_P(FaceMetrics, BlinksCloseTheRealLidsAndReopen) {
  const std::string name = name_of(GetParam());
  auto r = renderer(model_of(GetParam()), false, 11);
  Frame f;
  r->next_frame(f);
  cv::Mat rest = bgr_of(f);
  auto lr = detect(rest);
  ASSERT_TRUE(lr);
  cv::Mat mask = eye_mask(*lr, rest.size());
  ASSERT_GT(cv::countNonZero(mask), 50);
  std::vector<double> visible, ear;  // per frame; ear < 0 where no face was found
  cv::Mat most_closed;
  for (int i = 1; i < 25 * 12; ++i) {
    r->next_frame(f);
    cv::Mat img = bgr_of(f);
    visible.push_back(visible_eye(img, rest, mask));
    if (visible.back() <= *std::min_element(visible.begin(), visible.end())) most_closed = img;
    auto l = detect(img);
    ear.push_back(l ? (internal::eye_aspect_ratio(*l, false) + internal::eye_aspect_ratio(*l, true)) / 2
                    : -1);
  }
  dump(most_closed, name + "_blink");
  std::vector<double> open_ears;
  for (size_t i = 0; i < ear.size(); ++i)
    if (ear[i] > 0 && visible[i] > 0.95) open_ears.push_back(ear[i]);
  ASSERT_GT(open_ears.size(), ear.size() / 2);
  std::sort(open_ears.begin(), open_ears.end());
  const double open_ear = open_ears[open_ears.size() / 2];
  // Measured (each test in a process of its own, every model built on one thread): neutral
  // 40-44% of open, smiling 25%, unseen 45%, unseen smiling 48%. The unseen smiling portrait
  // (never tuned on) is held to 0.53: its 2 points of margin could flip on another CPU's
  // floating point. The smiling one is held to its own figure's neighbourhood.
  const double bar = name == "smiling" ? 0.35 : name == "unseen_smiling" ? 0.53 : 0.5;
  // The unseen portrait's eyes (messi5.jpg: looking down, 10-14 px wide, 2-3 px open) are mostly
  // lid and lashes already when open, and dlib's eye outline there is wider than the eye: at the
  // blink's deepest 55% of it is still the rest frame's, so a blink counts there below 60%.
  const double shut = name == "unseen" ? 0.6 : 0.5;
  int blinks = 0;
  double lowest_ear = 1, highest_ear = 0, worst_low = 0;
  bool reopened = true;  // one blink per closing: counted again only once the eye has reopened
  for (size_t i = 3; i + 8 < visible.size(); ++i) {
    if (visible[i] > 0.85) reopened = true;
    if (reopened && visible[i] < shut && visible[i - 1] >= shut) {
      reopened = false;
      ++blinks;
      // A blink lasts 0.22 s: open again within 0.3 s.
      double after = *std::max_element(visible.begin() + i + 3, visible.begin() + i + 9);
      EXPECT_GT(after, 0.85) << name << ": eyes stay shut after the blink at frame " << i;
      std::string seq;
      double low = 1, high = 0, back = 0;
      for (size_t k = i - 2; k <= i + 6; ++k) {
        char buf[48];
        std::snprintf(buf, sizeof buf, " %.3f(%.0f%%)", ear[k], 100 * visible[k]);
        seq += buf;
        if (ear[k] > 0 && k <= i + 4) low = std::min(low, ear[k]), high = std::max(high, ear[k]);
        if (ear[k] > 0 && k >= i + 5) back = ear[k];
      }
      lowest_ear = std::min(lowest_ear, low), highest_ear = std::max(highest_ear, high);
      worst_low = std::max(worst_low, low);
      std::printf("%s: blink at frame %zu, re-detected EAR (eye visible):%s\n", name.c_str(), i + 1,
                  seq.c_str());
      std::printf(
          "%s: blink at frame %zu: lowest EAR %.3f = %.0f%% of open (bar 50%%), back to %.3f (%.0f%%)\n",
          name.c_str(), i + 1, low, 100 * low / open_ear, back, 100 * back / open_ear);
      EXPECT_LT(low, bar * open_ear) << name << ": the eyes did not read as shut at the blink at frame " << i;
      EXPECT_NEAR(back, open_ear, 0.1 * open_ear)
          << name << ": EAR did not return after the blink at frame " << i;
    }
  }
  std::printf(
      "%s: %d blinks in 12 s, least visible eye %.0f%%; re-detected EAR open %.3f, lowest %.3f (%.0f%%), "
      "the least shut blink's lowest %.3f (%.0f%%), highest %.3f (%.0f%%)\n",
      name.c_str(), blinks, 100 * *std::min_element(visible.begin(), visible.end()), open_ear, lowest_ear,
      100 * lowest_ear / open_ear, worst_low, 100 * worst_low / open_ear, highest_ear,
      100 * highest_ear / open_ear);
  EXPECT_GE(blinks, 2);
  EXPECT_LE(blinks, 8);
}

// Each gesture keeps the face: re-detected in 95% of its frames, and at its peak (the frame
// furthest from rest inside the face) the face is found with plausible landmarks that stay
// within bounds of the rest frame's: eyes where they were give or take a head tilt, the same
// size (no stretched face), the mouth open at most as far as the widest speech, the jaw no
// wider or longer than a tenth more (no cut or stretched chin).
TEST_P(FaceMetrics, GesturesMoveFaceAndHeadAndKeepTheFace) {
  const std::string name = name_of(GetParam());
  for (const auto& g : gesture_names()) {
    auto r = renderer(model_of(GetParam()), false);
    ASSERT_TRUE(r->trigger_gesture(g).ok());
    int frames = int(r->gesture_default_s(g) * kFps), found = 0;
    Frame f;
    cv::Mat rest, peak;
    std::optional<Landmarks68> lr;
    double most = -1;
    for (int i = 0; i < frames; ++i) {
      r->next_frame(f);
      cv::Mat img = bgr_of(f);
      auto l = detect(img);
      found += l.has_value();
      if (i == 0) {
        rest = img.clone(), lr = l;
        ASSERT_TRUE(lr) << name << " " << g << ": no face at the gesture's first frame";
        continue;
      }
      const double moved =
          cv::norm(img(bbox(*lr, 0, 67, 0.1) & cv::Rect(0, 0, img.cols, img.rows)),
                   rest(bbox(*lr, 0, 67, 0.1) & cv::Rect(0, 0, img.cols, img.rows)), cv::NORM_L1);
      if (moved > most) most = moved, peak = img.clone();
    }
    EXPECT_GE(found, frames * 95 / 100) << name << " " << g << ": face lost during the gesture";
    dump(peak, name + "_gesture_peak_" + g);
    auto boxes = internal::hog_faces(peak, 400);
    ASSERT_FALSE(boxes.empty()) << name << " " << g << ": no face at the gesture's peak";
    auto lp = internal::predict_landmarks(peak, boxes[0]);
    ASSERT_TRUE(lp) << name << " " << g << ": no landmarks at the gesture's peak";
    const Landmarks68& a = *lr;
    const Landmarks68& b = *lp;
    const double ed = cv::norm(internal::eye_centre(a, true) - internal::eye_centre(a, false));
    const double ed_p = cv::norm(internal::eye_centre(b, true) - internal::eye_centre(b, false));
    const double eyes_moved =
        std::max(cv::norm(internal::eye_centre(b, true) - internal::eye_centre(a, true)),
                 cv::norm(internal::eye_centre(b, false) - internal::eye_centre(a, false))) /
        ed;
    const double open = (internal::inner_lip_opening(b) - internal::inner_lip_opening(a)) / ed;
    const double jaw_w = cv::norm(b[16] - b[0]) / cv::norm(a[16] - a[0]);
    const double jaw_l = cv::norm(b[8] - (b[21] + b[22]) * 0.5) / cv::norm(a[8] - (a[21] + a[22]) * 0.5);
    const std::string why = internal::implausible_landmarks(b, boxes[0]);
    std::printf(
        "%s: %s peak: eye distance %.0f%% of rest, eyes moved %.2f eye distances, mouth open %+.3f, jaw "
        "width "
        "%.0f%%, brow-to-chin %.0f%% of rest%s%s\n",
        name.c_str(), g.c_str(), 100 * ed_p / ed, eyes_moved, open, 100 * jaw_w, 100 * jaw_l,
        why.empty() ? "" : ": ", why.c_str());
    EXPECT_TRUE(why.empty()) << name << " " << g << ": implausible landmarks at the peak: " << why;
    // Measured: eye distance 92-102% of rest, eyes moved 0.07-0.29 eye distances (the head's
    // tilt and lean), mouth at most 0.21 wider open (the laugh), jaw width 99-103%, brow-to-chin
    // 99-109% (the laugh's jaw). The bounds leave room for other faces, not for a torn one.
    EXPECT_NEAR(ed_p / ed, 1.0, 0.15) << name << " " << g;
    EXPECT_LT(eyes_moved, 0.4) << name << " " << g;
    EXPECT_LE(open, 0.35) << name << " " << g;
    EXPECT_NEAR(jaw_w, 1.0, 0.1) << name << " " << g;
    EXPECT_NEAR(jaw_l, 1.0, 0.15) << name << " " << g;
  }
}

INSTANTIATE_TEST_SUITE_P(Portraits, FaceMetrics,
                         ::testing::Values(kNeutral, kSmiling, kUnseen, kUnseenSmiling));

}  // namespace
}  // namespace imago::avatar
