#include "avatar/face_mesh.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <opencv2/imgproc.hpp>

#include "avatar/warp_row.h"

namespace imago::avatar::internal {
namespace {

constexpr int kFirstExtra = 68;
// The mouth (deform_mesh): the inner-lip opening per unit of Pose::mouth_open, in eye distances;
// the upper lip's share of it; how much of the jaw's drop the row of points under the jaw takes.
constexpr float kOpenPerUnit = 0.35f, kUpperShare = 0.2f, kUnderJawFollow = 0.1f;
// How much of a photo's open mouth over its teeth (its inner-lip gap at rest) a spoken turn closes.
constexpr float kSpeechRelax = 0.8f;
// Blinks (MeshWarper::draw_lids; docs/avatar.md "How the face moves"). Tuned by looking at the
// shut eyes of the FaceMetrics portraits and at the re-detected eye aspect ratio.
// The crease points sit this share of the way from the upper lid up to the brow: the band below
// them is what a closing lid stretches.
constexpr float kCreaseShare = 0.4f;
// How far the stretched band is blended toward the smooth lid; the lid's brightness (kShadeA,
// reached over kTopRamp of the band from its top) and how much darker it gets toward the margin;
// the share of the band, from its top, whose brightest third gives the lid's tone (below it the
// predictor's lid points often sit on the iris).
constexpr float kLidSmoothing = 0.8f, kShadeA = 1.12f, kShadeB = 0.08f, kTopRamp = 0.5f, kToneShare = 0.6f;
// Above the band the open eye's crease and socket shadow fade toward the lid's tone, over this
// share of the band's height and this strongly.
constexpr float kAboveShare = 0.8f, kAboveSmoothing = 0.6f;
// The lash line: the photo's lashes kept 1:1 while the lid falls (share of the eye's opening),
// how much the drawn line of the shut eye darkens (a soft line, 12-16% of the opening thick,
// tinted by the skin: a hard black bar reads as paint) and the share of the eye over which it
// tapers to the corners.
constexpr float kLashShare = 0.22f, kLashDarkening = 0.85f, kTaper = 0.15f;
// The lower lid rises this share of the opening to meet the upper one (little, as in life: the
// shut eye's lash line then follows the lower lid's curve); its band (kLowerBand of
// the opening) is moved up from kLowerPad below the photo's lid margin (the predictor's lower
// points sit on the wet rim), and the rim fades into the skin below (kLowSmooth, over
// kLowSmoothShare of the band).
constexpr float kLowerRise = 0.25f, kLowerBand = 1.0f, kLowerPad = 0.3f, kLowSmooth = 0.6f,
                kLowSmoothShare = 0.6f;
// Beside the corners: how far out (share of the eye's width), how high (share of the opening)
// and how strongly the open eye's lash line and crease fade toward the lid's tone.
constexpr float kSideExt = 0.2f, kSideUp = 0.8f, kSideSmoothing = 0.6f;

float dist(cv::Point2f a, cv::Point2f b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

bool in_range(const FaceMesh::Tri& t, int lo, int hi) {
  for (int v : t.v)
    if (v < lo || v > hi) return false;
  return true;
}

}  // namespace

namespace {

// The mesh points for landmarks: the landmarks, forehead rows and head rings, with their weights.
void mesh_points(const Landmarks68& lm, FaceMesh& m) {
  m.rest.clear();
  for (const auto& p : lm) m.rest.emplace_back(float(p.x), float(p.y));
  cv::Point2f le(eye_centre(lm, false)), re(eye_centre(lm, true));
  m.ed = dist(le, re);
  m.mw = dist(m.rest[48], m.rest[54]);
  m.fw = dist(m.rest[0], m.rest[16]);
  m.ux = (re - le) / std::max(1e-3f, m.ed);
  m.uy = {-m.ux.y, m.ux.x};
  auto at = [&](double x, double y) { return le + m.ux * float(x * m.ed) + m.uy * float(y * m.ed); };
  m.head_weight.assign(68, 1.0f);
  m.depth.assign(68, 0.55f);
  for (int i = 0; i <= 16; ++i) m.depth[i] = 0.45f * (1 - std::abs(i - 8) / 8.0f);
  for (int i = 27; i <= 35; ++i) m.depth[i] = 0.9f;
  m.depth[27] = 0.7f;
  m.depth[30] = m.depth[33] = 1.0f;
  for (int i = 48; i <= 67; ++i) m.depth[i] = 0.7f;
  // Forehead: two rows above the brows, so raised brows stretch skin rather than hair.
  for (double up : {0.55, 1.15})
    for (int b : {17, 19, 21, 22, 24, 26}) {
      m.rest.push_back(m.rest[b] - m.uy * float(up * m.ed));
      m.head_weight.push_back(1);
      m.depth.push_back(up < 1 ? 0.4f : 0.2f);
    }
  // Rings around the head (hair, ears, neck): the head moves the first fully, the second half
  // (less below the face, where the shoulders begin), the third not at all.
  struct Ring {
    double a, b_up, b_down, w_up, w_down;
  };
  const Ring rings[] = {{1.6, 2.3, 1.55, 1.0, 0.9}, {2.2, 2.9, 2.1, 0.5, 0.3}, {2.9, 3.6, 2.75, 0, 0}};
  const int kRingPoints = 16;
  for (const Ring& r : rings)
    for (int k = 0; k < kRingPoints; ++k) {
      double th = 2 * std::numbers::pi * (k + 0.5) / kRingPoints;
      double s = std::sin(th);
      m.rest.push_back(at(0.5 + r.a * std::cos(th), 0.5 + s * (s < 0 ? r.b_up : r.b_down)));
      m.head_weight.push_back(float(s < 0 ? r.w_up : r.w_up + (r.w_down - r.w_up) * s));
      m.depth.push_back(0);
    }
  m.pivot = at(0.5, 2.6);
  // A row below the jaw line (jaw landmarks 3..13 pushed outward from the nose): an opening jaw
  // carries what lies under the chin (a beard, the neck's shadow) with it, so the skin between
  // the jaw line and the first ring stretches gradually instead of folding at the chin.
  m.under_jaw = int(m.rest.size());
  for (int i = 3; i <= 13; ++i) {
    cv::Point2f d = m.rest[i] - m.rest[30];
    float n = std::max(1e-3f, std::hypot(d.x, d.y));
    m.rest.push_back(m.rest[i] + d * (0.3f * m.ed / n));
    m.head_weight.push_back(1);
    m.depth.push_back(0.15f);
  }
  // A point above each upper-lid point, a third of the way up to the brow (above the lid
  // crease, on the brow bone): a blink stretches only the band between it and the lash line
  // down over the eye, so the brow and the skin under it stay where they are.
  m.crease = int(m.rest.size());
  for (int i : {37, 38, 43, 44}) {
    const int b0 = i < 42 ? 17 : 22;
    auto x_of = [&](cv::Point2f q) { return (q - le).dot(m.ux); };
    auto y_of = [&](cv::Point2f q) { return (q - le).dot(m.uy); };
    float x = x_of(m.rest[i]), by = y_of(m.rest[b0]);
    for (int k = b0; k < b0 + 4; ++k) {
      float xa = x_of(m.rest[k]), xb = x_of(m.rest[k + 1]);
      if (x >= xb && k + 1 < b0 + 4) continue;
      float t = std::clamp((x - xa) / std::max(1e-3f, xb - xa), 0.0f, 1.0f);
      by = y_of(m.rest[k]) + t * (y_of(m.rest[k + 1]) - y_of(m.rest[k]));
      break;
    }
    float up = std::max(0.0f, y_of(m.rest[i]) - by);
    m.rest.push_back(m.rest[i] - m.uy * (kCreaseShare * up));
    m.head_weight.push_back(1);
    m.depth.push_back(0.5f);
  }
}

}  // namespace

Result<FaceMesh> build_face_mesh(const Landmarks68& lm, cv::Size size,
                                 const std::vector<cv::Point2f>& dense) {
  FaceMesh m;
  mesh_points(lm, m);
  if (m.ed < 4 || m.mw < 2 || m.fw < 8) return Status::Invalid("corrupt .imx: face landmarks are degenerate");
  // The lid margins, corner to corner. MediaPipe's eye contours (its canonical indices): the
  // image-left eye from 33 to 133, the image-right one from 362 to 263.
  static constexpr int kUp[2][FaceMesh::kLidPoints] = {{33, 246, 161, 160, 159, 158, 157, 173, 133},
                                                       {362, 398, 384, 385, 386, 387, 388, 466, 263}};
  static constexpr int kLo[2][FaceMesh::kLidPoints] = {{33, 7, 163, 144, 145, 153, 154, 155, 133},
                                                       {362, 382, 381, 380, 374, 373, 390, 249, 263}};
  m.dense = dense.size() >= 468;
  for (int e = 0; e < 2; ++e) {
    const int c0 = e ? 42 : 36;
    for (int k = 0; k < FaceMesh::kLidPoints; ++k) {
      if (m.dense) {
        m.lid_up[e][k] = dense[size_t(kUp[e][k])];
        m.lid_lo[e][k] = dense[size_t(kLo[e][k])];
        continue;
      }
      // Without the mesh: the 68 points' lid polylines (corner, two lid points, corner) resampled.
      const float t = 3.0f * float(k) / (FaceMesh::kLidPoints - 1);
      const int i = std::min(2, int(t));
      const float f = t - float(i);
      const int up[4] = {c0, c0 + 1, c0 + 2, c0 + 3}, lo[4] = {c0, c0 + 5, c0 + 4, c0 + 3};
      m.lid_up[e][k] = m.rest[up[i]] + (m.rest[up[i + 1]] - m.rest[up[i]]) * f;
      m.lid_lo[e][k] = m.rest[lo[i]] + (m.rest[lo[i + 1]] - m.rest[lo[i]]) * f;
    }
    // The 68 points' corners are the mesh's too; kept exact so the lid's axes agree.
    m.lid_up[e][0] = m.lid_lo[e][0] = m.rest[c0];
    m.lid_up[e][FaceMesh::kLidPoints - 1] = m.lid_lo[e][FaceMesh::kLidPoints - 1] = m.rest[c0 + 3];
  }
  m.rest_gap[0] = dist(m.rest[61], m.rest[67]);
  m.rest_gap[1] = dist(m.rest[62], m.rest[66]);
  m.rest_gap[2] = dist(m.rest[63], m.rest[65]);
  m.mouth_open_at_rest = (m.rest_gap[0] + m.rest_gap[1] + m.rest_gap[2]) / 3 > 0.04f * m.mw;

  // The connectivity comes from a canonical face (the mean shape with the mouth open), not from
  // this photo: the mouth opening and each eye then always have triangles of their own, and the
  // same topology holds for every face.
  // Inner lips and each eye sit on empty circles there, so their outlines are Delaunay edges.
  Landmarks68 canon = template_landmarks({0, 0}, {100, 0}, {50, 101});
  auto ring = [&](int first, int count, cv::Point2d c, double r) {
    for (int k = 0; k < count; ++k) {
      double th = std::numbers::pi + 2 * std::numbers::pi * k / count;  // from the left, via the top
      canon[first + k] = c + cv::Point2d(r * std::cos(th), r * std::sin(th));
    }
  };
  ring(48, 12, {50, 101}, 24);  // outer lips 48..59
  ring(60, 8, {50, 101}, 14);   // inner lips 60..67
  ring(36, 6, {0, 0}, 13);      // image-left eye 36..41
  ring(42, 6, {100, 0}, 13);    // image-right eye 42..47
  FaceMesh cm;
  mesh_points(canon, cm);
  const std::vector<cv::Point2f>& tp = cm.rest;
  float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
  for (const auto& p : tp)
    x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
  cv::Rect bounds(int(std::floor(x0)) - 10, int(std::floor(y0)) - 10, int(x1 - x0) + 21, int(y1 - y0) + 21);
  cv::Subdiv2D sub(bounds);
  for (const auto& p : tp) sub.insert(p);
  std::vector<cv::Vec6f> list;
  sub.getTriangleList(list);
  for (const auto& t : list) {
    FaceMesh::Tri tri{{-1, -1, -1}, FaceMesh::kSkin};
    bool ok = true;
    for (int k = 0; k < 3 && ok; ++k) {
      cv::Point2f q(t[2 * k], t[2 * k + 1]);
      int best = -1;
      float bd = 0.25f;
      for (size_t i = 0; i < tp.size(); ++i)
        if (float dd = dist(q, tp[i]); dd < bd) bd = dd, best = int(i);
      ok = best >= 0;
      tri.v[k] = best;
    }
    if (!ok) continue;  // a virtual vertex of the subdivision
    if (in_range(tri, 60, 67))
      tri.kind = FaceMesh::kMouthInterior;
    else if (in_range(tri, 36, 41))
      tri.kind = FaceMesh::kEyeLeft;
    else if (in_range(tri, 42, 47))
      tri.kind = FaceMesh::kEyeRight;
    m.tris.push_back(tri);
  }
  if (m.tris.size() < 100) return Status::Invalid("corrupt .imx: face mesh could not be built");
  x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
  for (const auto& p : m.rest)
    x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
  cv::Rect region(int(std::floor(x0)), int(std::floor(y0)), int(std::ceil(x1 - x0)) + 2,
                  int(std::ceil(y1 - y0)) + 2);
  m.region = region & cv::Rect(0, 0, size.width, size.height);
  if (m.region.area() <= 0) return Status::Invalid("corrupt .imx: face outside the frame");
  return m;
}

void deform_mesh(const FaceMesh& m, const Pose& p, std::vector<cv::Point2f>& full,
                 std::vector<cv::Point2f>& rigid) {
  full = m.rest;
  rigid = m.rest;
  const cv::Point2f ux = m.ux, uy = m.uy;
  auto move = [&](int i, float across, float down) { full[i] += ux * across + uy * down; };
  const float mw = m.mw;

  // Mouth. G is the extra inner-lip opening: 0.34 eye distances at open = 1, so speech (open
  // 0.2..0.85 per viseme) stays a speaking mouth, 0.07..0.29 eye distances. The jaw carries the
  // lower lip (80% of the opening), the upper lip lifts 20%; each inner-lip point's share follows
  // an arc across the mouth ((1 - u^2)^0.3, u from corner to corner: the jaw lowers the
  // lip almost evenly, so a smile's curved lip does not deepen into a V), so both lips stay smooth
  // curves and the corners move only with the jaw's rotation (30%). p/b/m (press) close even a
  // mouth that is open in the photo; pressed lips keep their thickness: thinned lips read as
  // parted to the landmark predictor.
  const float G = float(std::clamp(p.mouth_open, 0.0, 1.2)) * kOpenPerUnit * m.ed;
  float press = float(std::clamp(p.mouth_press, 0.0, 1.0));
  // A photo whose mouth is open at rest over its teeth (a smile): while a turn is spoken the lips
  // come together between sounds (kSpeechRelax of the photo's gap, in proportion to the share of
  // the opening the teeth fill), so what speech opens is measured from lips that meet, not from
  // the photo's open mouth, which stayed open on every quiet sound and was shut only by p/b/m
  // (the smiling test portrait's re-detected opening followed the audio at r = 0.49, now 0.73).
  // A shout's dark opening is left as it is: closing it read as a shut mouth on most sounds.
  if (m.mouth_open_at_rest)
    press = std::max(press, kSpeechRelax * m.teeth_at_rest * float(std::clamp(p.speech_relax, 0.0, 1.0)));
  const cv::Point2f mc = (m.rest[60] + m.rest[64]) * 0.5f;
  const float mh = std::max(1.0f, dist(m.rest[60], m.rest[64]) / 2);
  auto arc = [&](int i) {
    const float u = std::clamp((m.rest[i] - mc).dot(ux) / mh, -1.0f, 1.0f);
    return std::pow(std::max(0.0f, 1 - u * u), 0.3f);
  };
  const float mean_gap = (m.rest_gap[0] + m.rest_gap[1] + m.rest_gap[2]) / 3;
  const int pairs[3][2] = {{61, 67}, {62, 66}, {63, 65}};
  for (int k = 0; k < 3; ++k) {
    const float c = arc(pairs[k][0]) * G - press * m.rest_gap[k];
    move(pairs[k][0], 0, -kUpperShare * c);
    move(pairs[k][1], 0, (1 - kUpperShare) * c);
  }
  const float c = G - press * mean_gap;
  for (int i = 49; i <= 53; ++i) move(i, 0, -kUpperShare * c * std::max(0.5f, arc(i)));
  for (int i = 55; i <= 59; ++i) move(i, 0, (1 - kUpperShare) * c * std::max(0.5f, arc(i)));
  for (int i : {48, 54, 60, 64}) move(i, 0, 0.42f * c);
  for (int i = 2; i <= 14; ++i) {
    const float w = std::max(0.0f, 1 - std::abs(i - 8) / 6.0f);
    move(i, 0, 0.75f * c * w);
    // The row under the jaw follows a little (the soft skin under the chin); the neck, collar
    // and clothes below it do not move with the jaw at all.
    if (i >= 3 && i <= 13) move(m.under_jaw + i - 3, 0, kUnderJawFollow * 0.75f * c * w);
  }
  // f, v: the lower lip rolls up under the upper teeth (it looks thinner) and the upper lip lifts
  // a little to show their edge.
  const float tuck = float(std::clamp(p.lip_tuck, 0.0, 1.0));
  if (tuck > 0) {
    for (int i : {56, 57, 58})
      move(i, 0, -tuck * 0.3f * dist(m.rest[i], m.rest[i == 56 ? 65 : i == 57 ? 66 : 67]));
    for (int i : {50, 51, 52, 61, 62, 63}) move(i, 0, -tuck * 0.03f * mw);
  }
  // Spread (ee) and rounding (oo, kiss): corners out or in; rounded lips also push out (taller).
  float s = float(std::clamp(p.mouth_spread, -1.0, 1.0));
  float out = s >= 0 ? s * 0.10f * mw : s * 0.14f * mw;
  if (s < 0) {
    // The cheeks and the skin under the nose follow puckered lips, so the pull of the corners
    // spreads over the upper lip instead of folding it (a moustache showed a vertical fold).
    for (int i : {4, 5}) move(i, -0.45f * out, 0);
    for (int i : {11, 12}) move(i, 0.45f * out, 0);
    move(31, -0.3f * out, 0);
    move(35, 0.3f * out, 0);
    move(32, -0.12f * out, 0);
    move(34, 0.12f * out, 0);
  }
  for (int i : {48, 60}) move(i, -out, 0);
  for (int i : {54, 64}) move(i, out, 0);
  for (int i : {49, 59, 61, 67}) move(i, -0.55f * out, 0);
  for (int i : {53, 55, 63, 65}) move(i, 0.55f * out, 0);
  for (int i : {50, 58}) move(i, -0.15f * out, 0);
  for (int i : {52, 56}) move(i, 0.15f * out, 0);
  if (s < 0) {
    // Puckered: the lips push out, so they look fuller and the corners come in. The upper lip
    // rises only a little: the skin under the nose has nowhere to go.
    for (int i = 49; i <= 53; ++i) move(i, 0, s * (i == 49 || i == 53 ? 0.015f : 0.025f) * mw);
    for (int i = 55; i <= 59; ++i) move(i, 0, -s * (i == 55 || i == 59 ? 0.04f : 0.06f) * mw);
    // The opening becomes an oval rather than a lens with pointed corners: the corners move to
    // its middle height and the points beside the middle onto its shoulders; the outer lips
    // move with the inner ones so the lips keep their thickness.
    const float r = -s;
    const cv::Point2f c = (full[60] + full[64]) * 0.5f;
    const float a = dist(full[60], full[64]) / 2;
    const float top = (full[62] - c).dot(uy), bot = (full[66] - c).dot(uy);
    const cv::Point2f oc = c + uy * ((top + bot) / 2);
    const float b = std::max(0.0f, (bot - top) / 2);
    auto toward = [&](int i, cv::Point2f target, std::initializer_list<int> outer) {
      const cv::Point2f d = (target - full[i]) * r;
      full[i] += d;
      for (int o : outer) full[o] += d;
    };
    toward(60, oc - ux * a, {48});
    toward(64, oc + ux * a, {54});
    const float sx = 0.62f * a, sy = 0.785f * b;
    toward(61, oc - ux * sx - uy * sy, {49, 50});
    toward(63, oc + ux * sx - uy * sy, {52, 53});
    toward(67, oc - ux * sx + uy * sy, {59, 58});
    toward(65, oc + ux * sx + uy * sy, {55, 56});
  }
  // Smile: corners up and out, the upper lip lifts a little, the cheeks rise (nostril wings
  // and the cheek line along the jaw) and push the lower lids up.
  float sm = float(std::clamp(p.smile, 0.0, 1.0));
  for (int i : {48, 60}) move(i, -0.06f * sm * mw, -0.11f * sm * mw);
  for (int i : {54, 64}) move(i, 0.06f * sm * mw, -0.11f * sm * mw);
  for (int i : {49, 59}) move(i, -0.03f * sm * mw, -0.05f * sm * mw);
  for (int i : {53, 55}) move(i, 0.03f * sm * mw, -0.05f * sm * mw);
  // (The outer edge only: lifting the inner lip would part a photo's own teeth.)
  for (int i : {50, 51, 52}) move(i, 0, -0.025f * sm * mw);
  move(31, -0.02f * sm * mw, -0.02f * sm * mw);
  move(35, 0.02f * sm * mw, -0.02f * sm * mw);
  for (int i : {2, 3}) move(i, -0.01f * sm * mw, -0.035f * sm * mw);
  for (int i : {13, 14}) move(i, 0.01f * sm * mw, -0.035f * sm * mw);

  // Blinks: the lower lid gives a little (5% of the eye's height) and smiles raise it; the upper
  // lid's fall onto it is drawn by MeshWarper (draw_lids), not by moving mesh points, so that
  // only the lid's own band stretches (the triangles from the corners reach up to the brow).
  float eye = float(std::clamp(p.eye_close, 0.0, 1.0));
  const int lids[4][2] = {{37, 41}, {38, 40}, {43, 47}, {44, 46}};
  for (const auto& l : lids) {
    cv::Point2f up = m.rest[l[0]], lo = m.rest[l[1]];
    full[l[1]] += (up - lo) * (0.28f * sm * (1 - eye));
  }
  // Brows up (surprise, hello, emphasis): the forehead's first row follows a little.
  float b = float(std::clamp(p.brow, 0.0, 1.0)) * 0.11f * m.ed;
  for (int i = 17; i <= 26; ++i) {
    float w = (i == 17 || i == 26) ? 0.6f : (i == 18 || i == 25) ? 0.85f : 1.0f;
    move(i, 0, -b * w);
  }
  for (int i = kFirstExtra; i < kFirstExtra + 6; ++i) move(i, 0, -0.3f * b);
  for (int i = m.crease; i < m.crease + 4; ++i) move(i, 0, -0.35f * b);
  for (int i : {37, 38, 43, 44}) move(i, 0, -0.12f * b * (1 - eye));

  // Turning the head (yaw): near points (nose) shift more than far ones (jaw edge).
  float yaw = float(p.head_yaw) / 10.0f * 0.08f * m.fw;
  for (size_t i = 0; i < full.size(); ++i) {
    full[i] += ux * (yaw * m.depth[i]);
    rigid[i] += ux * (yaw * m.depth[i]);
  }
  // Head motion about the neck, weighted per point so it fades out into hair, neck and shoulders.
  double rot = p.head_rot * std::numbers::pi / 180, sc = 1 + p.head_scale;
  if (std::abs(rot) < 1e-6 && std::abs(p.head_scale) < 1e-7 && std::abs(p.head_dx) < 1e-7 &&
      std::abs(p.head_dy) < 1e-7)
    return;
  float ca = float(std::cos(rot) * sc), sa = float(std::sin(rot) * sc);
  cv::Point2f T(float(p.head_dx * m.fw), float(p.head_dy * m.fw));
  auto head = [&](cv::Point2f q) {
    cv::Point2f d = q - m.pivot;
    // Positive angles turn counter-clockwise on screen (y points down).
    return m.pivot + cv::Point2f(ca * d.x + sa * d.y, -sa * d.x + ca * d.y) + T;
  };
  for (size_t i = 0; i < full.size(); ++i) {
    float w = m.head_weight[i];
    if (w <= 0) continue;
    full[i] += (head(full[i]) - full[i]) * w;
    rigid[i] += (head(rigid[i]) - rigid[i]) * w;
  }
}

namespace {

// Affine map taking triangle d onto triangle s; false when d is degenerate.
bool affine(const cv::Point2f d[3], const cv::Point2f s[3], float A[6]) {
  float a = d[1].x - d[0].x, bb = d[2].x - d[0].x, c = d[1].y - d[0].y, dd = d[2].y - d[0].y;
  float det = a * dd - bb * c;
  if (std::abs(det) < 1e-6f) return false;
  float ia = dd / det, ib = -bb / det, ic = -c / det, id = a / det;
  float sa = s[1].x - s[0].x, sb = s[2].x - s[0].x, sc = s[1].y - s[0].y, sd = s[2].y - s[0].y;
  A[0] = sa * ia + sb * ic;
  A[1] = sa * ib + sb * id;
  A[3] = sc * ia + sd * ic;
  A[4] = sc * ib + sd * id;
  A[2] = s[0].x - A[0] * d[0].x - A[1] * d[0].y;
  A[5] = s[0].y - A[3] * d[0].x - A[4] * d[0].y;
  return true;
}

// Calls fn(y, x0, x1) for each pixel row of the triangle (pixel centres at integer coordinates;
// shared edges are drawn by both neighbours, which write the same values there: each edge is
// walked from its upper end, whichever triangle it belongs to, so both compute the same x).
template <class F>
void raster(const cv::Point2f v[3], const cv::Rect& clip, F&& fn) {
  struct Edge {
    float top, bottom;  // the rows it spans, widened by the tolerance
    float x, y, slope;  // its upper end and dx/dy
    float xmin, xmax;   // a horizontal edge: its extent
    bool flat;
  } edges[3];
  for (int e = 0; e < 3; ++e) {
    cv::Point2f a = v[e], b = v[(e + 1) % 3];
    if (b.y < a.y || (b.y == a.y && b.x < a.x)) std::swap(a, b);
    Edge& E = edges[e];
    E.top = a.y - 1e-3f, E.bottom = b.y + 1e-3f;
    E.flat = b.y - a.y < 1e-6f;
    E.x = a.x, E.y = a.y, E.slope = E.flat ? 0.0f : (b.x - a.x) / (b.y - a.y);
    E.xmin = std::min(a.x, b.x), E.xmax = std::max(a.x, b.x);
  }
  const float miny = std::min({v[0].y, v[1].y, v[2].y}), maxy = std::max({v[0].y, v[1].y, v[2].y});
  const int y0 = std::max(clip.y, int(std::ceil(miny - 1e-3f))),
            y1 = std::min(clip.y + clip.height - 1, int(std::floor(maxy + 1e-3f)));
  for (int y = y0; y <= y1; ++y) {
    const float fy = float(y);
    float xl = 1e9f, xr = -1e9f;
    for (const Edge& E : edges) {
      if (fy < E.top || fy > E.bottom) continue;
      if (E.flat) {
        xl = std::min(xl, E.xmin), xr = std::max(xr, E.xmax);
        continue;
      }
      const float x = E.x + E.slope * (fy - E.y);
      xl = std::min(xl, x), xr = std::max(xr, x);
    }
    const int x0 = std::max(clip.x, int(std::ceil(xl - 1e-3f))),
              x1 = std::min(clip.x + clip.width - 1, int(std::floor(xr + 1e-3f)));
    if (x0 <= x1) fn(y, x0, x1);
  }
}

inline void bilinear(const cv::Mat& src, float x, float y, uint8_t* out) {
  x = std::clamp(x, 0.0f, src.cols - 1.001f);
  y = std::clamp(y, 0.0f, src.rows - 1.001f);
  int xi = int(x), yi = int(y);
  float fx = x - xi, fy = y - yi;
  const uint8_t* r0 = src.ptr<uint8_t>(yi) + xi * 3;
  const uint8_t* r1 = r0 + src.step[0];
  float w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
  for (int c = 0; c < 3; ++c)
    out[c] = uint8_t(r0[c] * w00 + r0[c + 3] * w01 + r1[c] * w10 + r1[c + 3] * w11 + 0.5f);
}

double smooth01(double x) {
  x = std::clamp(x, 0.0, 1.0);
  return x * x * (3 - 2 * x);
}

// Linear interpolation along a polyline sorted by x.
float along(const cv::Point2f* pts, int n, float x) {
  if (x <= pts[0].x) return pts[0].y;
  for (int i = 1; i < n; ++i)
    if (x <= pts[i].x) {
      float t = (x - pts[i - 1].x) / std::max(1e-4f, pts[i].x - pts[i - 1].x);
      return pts[i - 1].y + t * (pts[i].y - pts[i - 1].y);
    }
  return pts[n - 1].y;
}

// The photo's open mouth at rest, row by row from the upper inner lip to the lower one: the mean
// luminance of the middle 70% of each row.
std::vector<float> mouth_rows(const FaceMesh& m, const cv::Mat& base, int rows) {
  cv::Point2f o = (m.rest[60] + m.rest[64]) * 0.5f, ax = m.rest[64] - m.rest[60];
  const float half = std::max(1.0f, std::hypot(ax.x, ax.y) / 2);
  ax /= half * 2;
  const cv::Point2f ay(-ax.y, ax.x);
  auto loc = [&](int i) { return cv::Point2f((m.rest[i] - o).dot(ax), (m.rest[i] - o).dot(ay)); };
  const cv::Point2f up[5] = {loc(60), loc(61), loc(62), loc(63), loc(64)};
  const cv::Point2f lo[5] = {loc(60), loc(67), loc(66), loc(65), loc(64)};
  std::vector<float> row(size_t(rows), 0.0f);
  for (int r = 0; r < rows; ++r) {
    const float f = (r + 0.5f) / float(rows);
    int n = 0;
    for (float x = -0.35f * half; x <= 0.35f * half; x += 0.5f, ++n) {
      const float t = along(up, 5, x), b = along(lo, 5, x);
      const cv::Point2f q = o + ax * x + ay * (t + f * (b - t));
      uint8_t px[3];
      bilinear(base, q.x, q.y, px);
      row[size_t(r)] += 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
    }
    row[size_t(r)] /= float(std::max(1, n));
  }
  return row;
}

}  // namespace

void fit_open_mouth(FaceMesh& m, const cv::Mat& base) {
  m.teeth_at_rest = 0;
  if (!m.mouth_open_at_rest) return;
  auto lum = [&](cv::Point2f q) {
    uint8_t px[3];
    bilinear(base, q.x, q.y, px);
    return 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
  };
  // The landmarks' inner upper lip on a smile often lies a few pixels down on the teeth: that
  // strip of teeth then belongs to the upper lip's triangles and goes wherever the lip goes (a
  // jagged sliver over rounded lips). Each inner upper-lip point moves up to where the lip ends:
  // where the luminance, from the teeth below the point up toward the outer lip, first falls
  // halfway to the lip's own (at most kLipEdgeReach of the way to the outer point).
  constexpr float kLipEdgeReach = 0.6f;
  const int upper[3][3] = {{50, 61, 67}, {51, 62, 66}, {52, 63, 65}};
  for (const auto& u : upper) {
    const cv::Point2f outer = m.rest[u[0]], inner = m.rest[u[1]], below = m.rest[u[2]];
    const float teeth = lum(inner + (below - inner) * 0.25f), lip = lum(outer + (inner - outer) * 0.2f);
    if (teeth < lip + 25) continue;
    const float half = (teeth + lip) / 2, len = dist(outer, inner);
    if (len < 1) continue;
    float s = 0;  // how far up from the inner point, share of the way to the outer one
    while (s + 0.5f / len <= kLipEdgeReach && lum(inner + (outer - inner) * (s + 0.5f / len)) > half)
      s += 0.5f / len;
    m.rest[u[1]] = inner + (outer - inner) * s;
  }
  m.rest_gap[0] = dist(m.rest[61], m.rest[67]);
  m.rest_gap[1] = dist(m.rest[62], m.rest[66]);
  m.rest_gap[2] = dist(m.rest[63], m.rest[65]);
  // The lips' own luminance: the middle of each lip, between its outer and inner points.
  float lips = 0;
  const int pairs[6][2] = {{50, 61}, {51, 62}, {52, 63}, {58, 67}, {57, 66}, {56, 65}};
  for (const auto& pr : pairs) {
    const cv::Point2f q = (m.rest[pr[0]] + m.rest[pr[1]]) * 0.5f;
    uint8_t px[3];
    bilinear(base, q.x, q.y, px);
    lips += (0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2]) / 6;
  }
  constexpr int kRows = 24;
  int bright = 0;
  for (float v : mouth_rows(m, base, kRows)) bright += v > lips;
  m.teeth_at_rest = float(bright) / kRows;
}

void fit_lid_creases(FaceMesh& m, const cv::Mat& base) {
  // Stretched down over a shut eye, a band reaching into the crease's shadow (deep-set eyes)
  // drew that shadow as a dark arc across the lid: an open eye's upper outline, which the
  // landmark predictor read as open (the neutral test portrait's shut frames at 109% of the open
  // eye's aspect ratio); a band ending just above the lashes instead is all lashes on eyes whose
  // lid is in shadow (the smiling portrait). The band ends at the brightest skin in between.
  constexpr float kFrom = 0.08f, kStep = 0.02f;
  const int lids[4] = {37, 38, 43, 44};
  for (int k = 0; k < 4; ++k) {
    const cv::Point2f a = m.rest[lids[k]], to_brow = (m.rest[m.crease + k] - a) / kCreaseShare;
    float best = kCreaseShare, best_l = -1;
    for (float s = kFrom; s <= kCreaseShare + 1e-4f; s += kStep) {
      float l = 0;
      for (int d = -1; d <= 1; ++d) {  // three pixels across, along the eye
        const cv::Point2f q = a + to_brow * s + m.ux * float(d);
        uint8_t px[3];
        bilinear(base, q.x, q.y, px);
        l += 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
      }
      if (l > best_l) best_l = l, best = s;
    }
    m.rest[m.crease + k] = a + to_brow * best;
  }
}

namespace {}  // namespace

MeshWarper::MeshWarper(const FaceMesh& m, const cv::Mat& base, WarpPath path)
    : m_(m), path_(path), base_(base), moved_last_(m.tris.size(), 0), lids_{lid_of(0), lid_of(1)} {
  // A photo with its mouth open: where its upper teeth end. The rows above travel with the upper
  // lip (the upper teeth are fixed to the skull), the rows below with the jaw. The line is the
  // darkest row of the middle of the mouth between 30% and 90% of the opening (where the rows
  // of teeth meet, or where the upper teeth end over the dark cavity); without a clear dark row
  // everything the photo shows there is upper teeth.
  if (!m.mouth_open_at_rest) return;
  constexpr int kRows = 24;
  const std::vector<float> row = mouth_rows(m, base_, kRows);
  std::vector<float> sorted = row;
  std::sort(sorted.begin(), sorted.end());
  const float med = sorted[kRows / 2];
  int best = -1;
  for (int r = int(0.3f * kRows); r < int(0.9f * kRows); ++r)
    if (best < 0 || row[r] < row[best]) best = r;
  split_ = best >= 0 && row[best] < 0.8f * med ? (best + 0.5f) / kRows : 1.0f;
}

void MeshWarper::draw(const std::vector<cv::Point2f>& full, const std::vector<cv::Point2f>& rigid,
                      const Pose& p, cv::Mat& canvas) {
  const FaceMesh& m = m_;
  const cv::Rect clip = m.region;
  // The mouth opening in its own axes (corner to corner), for the drawn interior.
  cv::Point2f o = (full[60] + full[64]) * 0.5f, ax = full[64] - full[60];
  float half = std::max(1.0f, std::hypot(ax.x, ax.y) / 2);
  ax /= half * 2;
  cv::Point2f ay(-ax.y, ax.x);
  auto local = [&](cv::Point2f q) { return cv::Point2f((q - o).dot(ax), (q - o).dot(ay)); };
  cv::Point2f upper[5] = {local(full[60]), local(full[61]), local(full[62]), local(full[63]),
                          local(full[64])};
  cv::Point2f lower[5] = {local(full[60]), local(full[67]), local(full[66]), local(full[65]),
                          local(full[64])};
  const float teeth_h =
      p.mouth_teeth > 0.05 ? float(0.4 + 0.6 * std::clamp(p.mouth_teeth, 0.0, 1.0)) * 0.12f * m.mw : 0.0f;
  const float tooth_w = 0.11f * m.mw;
  const float lid = float(std::clamp(p.eye_close, 0.0, 1.0));
  // How rounded the lips are (oo and a kiss fully, o and sh mostly: coarticulation leaves a
  // spoken oo at some -0.6 to -0.9).
  const float rounding = float(smooth01(std::clamp(-p.mouth_spread, 0.0, 1.0) / 0.6));
  // A photo whose mouth is open: its own interior (teeth) moves with the lips it belongs to, the
  // upper half with the upper lip and the lower half with the lower lip; a wider opening shows
  // drawn cavity between them.
  cv::Point2f ro = (m.rest[60] + m.rest[64]) * 0.5f, rax = m.rest[64] - m.rest[60];
  float rhalf = std::max(1.0f, std::hypot(rax.x, rax.y) / 2);
  rax /= rhalf * 2;
  cv::Point2f ray(-rax.y, rax.x);
  auto rlocal = [&](cv::Point2f q) { return cv::Point2f((q - ro).dot(rax), (q - ro).dot(ray)); };
  cv::Point2f rupper[5] = {rlocal(m.rest[60]), rlocal(m.rest[61]), rlocal(m.rest[62]), rlocal(m.rest[63]),
                           rlocal(m.rest[64])};
  cv::Point2f rlower[5] = {rlocal(m.rest[60]), rlocal(m.rest[67]), rlocal(m.rest[66]), rlocal(m.rest[65]),
                           rlocal(m.rest[64])};
  // The mouth interior drawn to fit the opening at (x, y): a cavity shadowed under the lips and
  // towards the corners, the upper teeth when the opening is wide enough, a hint of tongue.
  const float feather = 1.2f;
  // The opening's outline with rounded corners: the inner-lip polylines box-filtered along the
  // mouth axis (a convex polyline filtered this way passes inside its vertices), so the drawn
  // cavity is a smooth lens, not a polygon with pointed corners.
  const float step = 0.15f * half;
  auto rounded = [&](const cv::Point2f* pts, float x) {
    float acc = 0;
    for (int k = -2; k <= 2; ++k) acc += along(pts, 5, x + k * step);
    return acc / 5;
  };
  const float mid_top = rounded(upper, 0);
  // Where the lips continue inside the outline, a photo with its mouth open over its teeth is
  // sampled from the middle of its lips at the least: right at the inner lip, between the
  // landmarks' chords and the curved lip edge, lie teeth (jagged slivers between rounded lips).
  const float lip_up = m.mouth_open_at_rest ? 0.5f * dist(m.rest[51], m.rest[62]) : 0.0f,
              lip_lo = m.mouth_open_at_rest ? 0.5f * dist(m.rest[57], m.rest[66]) : 0.0f;
  auto interior = [&](float x, float y, float* out, bool teeth, bool lower_teeth) {
    cv::Point2f q = local(cv::Point2f(x, y));
    float ptop = along(upper, 5, q.x), pbot = along(lower, 5, q.x);
    // Inset by most of a pixel: where an inner lip runs straight the rounded outline lies on the
    // polygon's edge, whose rasterized pixels would show as stair steps against the cavity.
    float top = rounded(upper, q.x) + 0.8f, bot = rounded(lower, q.x) - 0.8f;
    float h = std::max(0.5f, bot - top);
    float u = std::clamp(q.x / half, -1.0f, 1.0f);
    float fy = std::clamp((q.y - top) / h, 0.0f, 1.0f);
    // The cavity is lit just inside the lips (the inner lips and cheeks catch the light: a warm
    // red) and falls off into the dark of the throat at the back, more slowly toward the lower
    // lip where light gets in. A flat colour reads as a painted hole. (The lit colours stay dark
    // enough to read as an opening: grey levels under 48.)
    const float side = 1 - u * u;
    const float dv = std::min(q.y - top, 1.6f * (bot - q.y)), dh = (1 - std::abs(u)) * half;
    const float depth = float(smooth01(std::min(dv, 0.6f * dh) / std::max(1.5f, 0.45f * h)));
    const float lit = (1 - depth) * (0.75f + 0.25f * side);
    float r = 14 + 84 * lit + 4 * fy, g = 4 + 20 * lit + 2 * fy, bl = 5 + 23 * lit + 2 * fy;
    // The tongue: a dome rising from the lower lip, lit at its front and fading into the dark
    // towards its back, with a soft top edge.
    if (h > 0.07f * m.mw && std::abs(u) < 0.8f) {
      float dome = 1 - (u / 0.8f) * (u / 0.8f);
      float tt = bot - std::min(0.36f * h, 0.09f * m.mw) * dome;
      float ta = float(smooth01((q.y - tt) / (0.18f * h + 1.0f)));
      if (ta > 0) {
        float front = std::clamp((q.y - tt) / std::max(1.0f, bot - tt), 0.0f, 1.0f);
        float tk = (0.45f + 0.55f * front) * (0.6f + 0.4f * side);
        r += ta * (150 * tk - r), g += ta * (66 * tk - g), bl += ta * (60 * tk - bl);
      }
    }
    // The lower teeth show in a wide opening (a laugh): a narrow, shadowed row standing on the
    // lower lip in the middle of the mouth, in front of the tongue.
    if (lower_teeth && h > 0.12f * m.mw && std::abs(u) < 0.55f) {
      float w = std::sqrt(1 - (u / 0.55f) * (u / 0.55f));
      float lth = std::min(0.05f * m.mw, 0.2f * h) * w * float(smooth01((h - 0.12f * m.mw) / (0.06f * m.mw)));
      float la = float(smooth01((q.y - (bot - lth)) / 1.2f + 0.5f));
      if (la > 0 && lth > 1.0f) {
        // In the upper teeth's shadow and further back than they are: a little darker.
        float shade =
            0.74f * (1 - 0.5f * u * u) * (0.85f + 0.15f * std::clamp((q.y - (bot - lth)) / lth, 0.0f, 1.0f));
        float gap = std::abs(q.x / (0.8f * tooth_w) - std::round(q.x / (0.8f * tooth_w))) * 0.8f * tooth_w;
        if (gap < 0.6f) shade *= 0.88f;
        r += la * (208 * shade - r), g += la * (200 * shade - g), bl += la * (186 * shade - bl);
      }
    }
    // The upper teeth hang from the upper lip in the middle of the mouth; their lower edge is a
    // flatter arc than the lip, so they narrow toward the corners instead of lining the lip.
    float th = std::min(teeth_h, 0.5f * h - 0.5f);
    float tbot = mid_top + th * (1 - 0.35f * u * u);
    if (teeth && th > 1.0f && q.y < tbot && std::abs(u) < 0.8f) {
      th = std::max(1.0f, tbot - top);
      float tf = (q.y - top) / th;
      float shade = (1 - 0.7f * u * u) * (0.62f + 0.3f * std::min(1.0f, tf * 2.0f));
      float gap = std::abs(q.x / tooth_w - std::round(q.x / tooth_w)) * tooth_w;
      if (gap < 0.7f) shade *= 0.9f;
      float edge = std::clamp(tbot - q.y, 0.0f, 1.0f);  // soft lower edge of the teeth
      r += edge * (214 * shade - r), g += edge * (206 * shade - g), bl += edge * (192 * shade - bl);
    }
    // A little grain, as a photo has: a smooth gradient reads as drawn.
    uint32_t hsh = uint32_t(int(x)) * 73856093u ^ uint32_t(int(y)) * 19349663u;
    hsh ^= hsh >> 13, hsh *= 0x5bd1e995u, hsh ^= hsh >> 15;
    float grain = (float(hsh & 255) / 255.0f - 0.5f) * 5.0f;
    r += grain, g += grain * 0.8f, bl += grain * 0.8f;
    // The lips' shadow on the interior right at their edge.
    float e = std::clamp(std::min(q.y - top, bot - q.y) / 1.2f, 0.0f, 1.0f);
    float sh = 0.8f + 0.2f * e;
    out[0] = r * sh, out[1] = g * sh, out[2] = bl * sh;
    // Outside the rounded outline (the polygon's corners) and over a pixel of anti-aliasing at
    // it, the lips continue: the photo's lip mirrored about its inner edge, which matches the
    // warped lip pixels at the polygon's edge, so the cavity is feathered into the lips.
    float d = std::min(q.y - top, bot - q.y);
    float a = float(smooth01(d / feather + 0.5)) * float(smooth01((h - 0.5f) / (0.08f * m.mw)));
    if (a < 0.999f) {
      float rx = q.x / half * rhalf;
      bool upper_half = q.y - ptop < pbot - q.y;
      float ry = upper_half ? along(rupper, 5, rx) - std::max(lip_up, q.y - ptop)
                            : along(rlower, 5, rx) + std::max(lip_lo, pbot - q.y);
      cv::Point2f sp = ro + rax * rx + ray * ry;
      uint8_t lp[3];
      bilinear(base_, sp.x, sp.y, lp);
      for (int c = 0; c < 3; ++c) out[c] = lp[c] + a * (out[c] - lp[c]);
    }
  };

  // A photo whose open mouth shows only upper teeth: the jaw's lower teeth are drawn.
  const bool photo_lower_teeth = split_ > 0.9f;
  const bool gazing = std::abs(p.gaze_x) + std::abs(p.gaze_y) > 1e-4;
  const bool restore_eyes = lid_box_[0].area() > 0 || lid_box_[1].area() > 0;
  const RgbImage src{base_.data, base_.step[0], base_.cols, base_.rows};
  for (size_t t = 0; t < m.tris.size(); ++t) {
    const auto& tri = m.tris[t];
    bool eye = tri.kind == FaceMesh::kEyeLeft || tri.kind == FaceMesh::kEyeRight;
    bool moved = false;
    if (restore_eyes) {
      // Triangles under last frame's lids are redrawn (their pixels were drawn over).
      float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
      for (int v : tri.v)
        x0 = std::min(x0, full[v].x), y0 = std::min(y0, full[v].y), x1 = std::max(x1, full[v].x),
        y1 = std::max(y1, full[v].y);
      cv::Rect tb(int(std::floor(x0)) - 1, int(std::floor(y0)) - 1, int(x1 - x0) + 3, int(y1 - y0) + 3);
      for (const auto& b : lid_box_) moved |= (tb & b).area() > 0;
    }
    if (eye && gazing) moved = true;
    for (int v : tri.v) {
      if (std::abs(full[v].x - m.rest[v].x) + std::abs(full[v].y - m.rest[v].y) > 0.01f) moved = true;
      if (eye && std::abs(rigid[v].x - m.rest[v].x) + std::abs(rigid[v].y - m.rest[v].y) > 0.01f)
        moved = true;
    }
    if (!moved && !moved_last_[t]) continue;
    moved_last_[t] = moved;
    cv::Point2f d[3] = {full[tri.v[0]], full[tri.v[1]], full[tri.v[2]]};
    if (tri.kind == FaceMesh::kMouthInterior) {
      raster(d, clip, [&](int y, int x0, int x1) {
        uint8_t* row = canvas.ptr<uint8_t>(y);
        for (int x = x0; x <= x1; ++x) {
          uint8_t* px = row + x * 3;
          if (m.mouth_open_at_rest) {
            cv::Point2f q = local(cv::Point2f(float(x), float(y)));
            float top = along(upper, 5, q.x), bot = along(lower, 5, q.x);
            float rx = q.x / half * rhalf;
            float rtop = along(rupper, 5, rx), rbot = along(rlower, 5, rx);
            float rh = std::max(0.0f, rbot - rtop);
            // Above the split line the photo's rows travel with the upper lip (upper teeth),
            // below it with the lower lip (the jaw); the opening added between them is drawn
            // cavity, anti-aliased as the share of the pixel it covers, so lips back at rest
            // show the photo exactly (no line where the two halves meet).
            const float su = split_ * rh;
            float in_upper = su - (q.y - top), in_lower = (rh - su) - (bot - q.y);
            bool from_upper = in_upper >= in_lower;
            float ry = from_upper ? rtop + (q.y - top) : rbot - (bot - q.y);
            const float extra = std::max(0.0f, (bot - top) - rh);
            const float t = std::max(in_upper, in_lower) + extra / 2;  // from the gap's middle
            const float cover =
                std::max(0.0f, std::min(t + 0.5f, extra / 2) - std::max(t - 0.5f, -extra / 2));
            // Rounded lips (oo, a kiss) cover the teeth: the photo's rows, squeezed between
            // corners pulled in, showed as jagged slivers of teeth; the small opening they leave
            // is drawn cavity instead.
            float a = (1 - std::min(1.0f, cover)) * (1 - rounding);
            // Lips pressed together (p/b/m, a kiss) over a mouth open in the photo: the few rows
            // of the photo's teeth left between them would show as a bright, jagged sliver; the
            // closing mouth shows the dark line where lips meet instead.
            const float closing = 1 - float(smooth01((bot - top) / std::max(1.0f, 0.4f * rh)));
            auto seam = [&] {
              static constexpr float kSeam[3] = {62, 36, 34};
              for (int k = 0; k < 3; ++k) px[k] = uint8_t(px[k] + closing * (kSeam[k] - px[k]));
            };
            if (a > 0.001f) {
              cv::Point2f sp = ro + rax * rx + ray * ry;
              bilinear(base_, sp.x, sp.y, px);
              if (a <= 0.999f) {
                float c[3];
                interior(float(x), float(y), c, false, photo_lower_teeth);
                for (int k = 0; k < 3; ++k)
                  px[k] = uint8_t(std::clamp(c[k] + a * (px[k] - c[k]), 0.0f, 255.0f));
              }
              if (closing > 0) seam();
              continue;
            }
            if (closing > 0) {
              float c[3];
              interior(float(x), float(y), c, false, photo_lower_teeth);
              for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::clamp(c[k], 0.0f, 255.0f));
              seam();
              continue;
            }
          }
          float c[3];
          interior(float(x), float(y), c, !m.mouth_open_at_rest, !m.mouth_open_at_rest);
          for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::clamp(c[k], 0.0f, 255.0f));
        }
      });
      continue;
    }
    cv::Point2f s[3] = {m.rest[tri.v[0]], m.rest[tri.v[1]], m.rest[tri.v[2]]};
    float A[6];
    bool ok = eye ? [&] {
      // The eyeball follows the head only; the lid drawn over it comes from the skin triangles.
      cv::Point2f r[3] = {rigid[tri.v[0]], rigid[tri.v[1]], rigid[tri.v[2]]};
      return affine(r, s, A);
    }()
                  : affine(d, s, A);
    if (!ok) continue;
    if (eye && gazing) {
      // The gaze moves the iris and pupil inside the opening: the eye's pixels are sampled from
      // a place shifted against the gaze, fully in the middle of the eye and not at all at its
      // corners (the sclera there stretches or narrows a little), so the outline never moves.
      const Lid& L = lids_[tri.kind == FaceMesh::kEyeLeft ? 0 : 1];
      const cv::Point2f g = (L.ex * float(p.gaze_x) + L.ey * float(p.gaze_y)) * L.w;
      raster(d, clip, [&](int y, int x0, int x1) {
        uint8_t* row = canvas.ptr<uint8_t>(y);
        float sx = A[0] * x0 + A[1] * y + A[2], sy = A[3] * x0 + A[4] * y + A[5];
        for (int x = x0; x <= x1; ++x, sx += A[0], sy += A[3]) {
          const float u = ((sx - L.o.x) * L.ex.x + (sy - L.o.y) * L.ex.y) / L.w;
          const float b = u <= 0 || u >= 1 ? 0.0f : std::pow(4 * u * (1 - u), 1.5f);
          bilinear(base_, sx - b * g.x, sy - b * g.y, row + x * 3);
        }
      });
      continue;
    }
    raster(d, clip, [&](int y, int x0, int x1) {
      warp_row_on(path_, src, A[0] * x0 + A[1] * y + A[2], A[3] * x0 + A[4] * y + A[5], A[0], A[3],
                  x1 - x0 + 1, canvas.ptr<uint8_t>(y) + x0 * 3);
    });
  }
  draw_lids(lid, full, rigid, canvas);
}

namespace {

// Cubic Hermite interpolation of y(x) through points sorted by x (finite-difference tangents):
// a smooth lid margin through the landmarks instead of the mesh's polyline.
float smooth_along(const cv::Point2f* p, int n, float x) {
  if (x <= p[0].x) return p[0].y;
  if (x >= p[n - 1].x) return p[n - 1].y;
  int i = 0;
  while (i + 2 < n && x > p[i + 1].x) ++i;
  auto slope = [&](int k) {
    int lo = std::max(0, k - 1), hi = std::min(n - 1, k + 1);
    return (p[hi].y - p[lo].y) / std::max(1e-3f, p[hi].x - p[lo].x);
  };
  float h = std::max(1e-3f, p[i + 1].x - p[i].x), t = (x - p[i].x) / h;
  float t2 = t * t, t3 = t2 * t;
  return (2 * t3 - 3 * t2 + 1) * p[i].y + (t3 - 2 * t2 + t) * h * slope(i) + (-2 * t3 + 3 * t2) * p[i + 1].y +
         (t3 - t2) * h * slope(i + 1);
}

}  // namespace

MeshWarper::Lid MeshWarper::lid_of(int e) const {
  const FaceMesh& m = m_;
  Lid L;
  L.c0 = e ? 42 : 36;
  L.cr = m.crease + 2 * e;
  L.o = m.rest[L.c0];
  cv::Point2f d = m.rest[L.c0 + 3] - L.o;
  L.w = std::max(1.0f, std::hypot(d.x, d.y));
  L.ex = d / L.w;
  L.ey = {-L.ex.y, L.ex.x};
  auto loc = [&](cv::Point2f q) { return cv::Point2f((q - L.o).dot(L.ex), (q - L.o).dot(L.ey)); };
  const cv::Point2f top[4] = {loc(m.rest[L.c0]), loc(m.rest[L.cr]), loc(m.rest[L.cr + 1]),
                              loc(m.rest[L.c0 + 3])};
  // The margins per pixel along the eye, from the dense contours (sorted by x in these axes).
  const int n = int(L.w) + 1;
  auto per_pixel = [&](const cv::Point2f* c) {
    std::vector<cv::Point2f> q;
    for (int k = 0; k < FaceMesh::kLidPoints; ++k) q.push_back(loc(c[k]));
    std::sort(q.begin(), q.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    std::vector<float> y(size_t(n), 0.0f);
    for (int i = 0; i < n; ++i) y[size_t(i)] = smooth_along(q.data(), int(q.size()), float(i));
    return y;
  };
  L.up = per_pixel(m.lid_up[e]);
  L.lo = per_pixel(m.lid_lo[e]);
  // The opening: its widest (a downcast eye's is not in the middle).
  L.h = 1;
  for (int i = 0; i < n; ++i) L.h = std::max(L.h, L.lo[size_t(i)] - L.up[size_t(i)]);
  L.lash = std::max(1.2f, kLashShare * L.h);
  // The lid's skin tone along the eye: the brightest third of the upper kToneShare of the
  // photo's band between crease point and lashes (the lit lid and brow-bone skin, not the
  // crease's shadow nor the iris), box-filtered.
  std::vector<float> raw(size_t(n) * 3, 0.0f);
  std::vector<std::pair<float, cv::Vec3f>> col;
  for (int i = 0; i < n; ++i) {
    float a = float(i), t = smooth_along(top, 4, a), u0 = L.up[size_t(i)] - L.lash,
          u = t + kToneShare * (u0 - t);
    col.clear();
    for (float b = t; b <= u || col.empty(); b += 1.0f) {
      cv::Point2f q = L.o + L.ex * a + L.ey * std::min(b, std::max(t, u));
      uint8_t px[3];
      bilinear(base_, q.x, q.y, px);
      col.push_back({px[0] * 2.0f + px[1] * 5.0f + px[2], cv::Vec3f(px[0], px[1], px[2])});
      if (b > u) break;
    }
    size_t k = std::max<size_t>(1, col.size() / 3);
    std::nth_element(col.begin(), col.begin() + (k - 1), col.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t j = 0; j < k; ++j)
      for (int c = 0; c < 3; ++c) raw[i * 3 + c] += col[j].second[c] / float(k);
  }
  // The photo's colour along the eye at height y_at(x) in the eye's axes.
  auto colours_along = [&](auto y_at) {
    std::vector<float> out(size_t(n) * 3, 0.0f);
    for (int i = 0; i < n; ++i) {
      cv::Point2f q = L.o + L.ex * float(i) + L.ey * y_at(float(i));
      uint8_t px[3];
      bilinear(base_, q.x, q.y, px);
      for (int c = 0; c < 3; ++c) out[i * 3 + c] = px[c];
    }
    return out;
  };
  // Box-filtered over 7 pixels along the eye.
  auto smoothed = [&](const std::vector<float>& in) {
    std::vector<float> out(size_t(n) * 3, 0.0f);
    for (int i = 0; i < n; ++i) {
      int cnt = 0;
      for (int j = std::max(0, i - 3); j <= std::min(n - 1, i + 3); ++j, ++cnt)
        for (int c = 0; c < 3; ++c) out[i * 3 + c] += in[j * 3 + c];
      for (int c = 0; c < 3; ++c) out[i * 3 + c] /= float(cnt);
    }
    return out;
  };
  L.tone = smoothed(raw);
  // The skin colour at the top of the band (where the closing lid leaves the photo as it is), and
  // below the lower lid's band.
  L.top = smoothed(colours_along([&](float x) { return smooth_along(top, 4, x); }));
  L.bottom = smoothed(colours_along([&](float x) { return L.lo[size_t(int(x))] + kLowerBand * L.h; }));
  return L;
}

void MeshWarper::draw_lids(float lid, const std::vector<cv::Point2f>& full,
                           const std::vector<cv::Point2f>& rigid, cv::Mat& canvas) {
  // A closing eye, drawn over what the mesh warped there, per pixel in the eye's own axes (from
  // the rest photo's corners, carried by the head motion):
  // - the upper lid: the photo's band between the crease point and the lash line stretched down
  //   to the falling margin (a smooth curve through the lid points), the lashes kept 1:1 at the
  //   margin. Stretched, the thin lid and the crease's shadow would read as streaks and as an
  //   open eye's upper outline; a real closed lid is smooth and convex with its crease unfolded,
  //   so the band is blended toward the lid's skin tone as it closes, shaded darker toward the
  //   margin like a convex lid lit from above;
  // - the lower lid rises a little to meet it (as real lower lids do), its skin and lashes moved
  //   up from just below the photo's lid margin, so no strip of eyeball stays under the line;
  // - where they meet, the lashes darken into the closed eye's lash line, tapering at the
  //   corners; what is left of the eye between them stays where it is and darkens.
  const FaceMesh& m = m_;
  const cv::Rect clip = m.region;
  for (auto& b : lid_box_) b = cv::Rect();
  if (lid <= 0.02f) return;
  const float smoothing = kLidSmoothing * float(smooth01(lid / 0.8));
  const float lash = kLashDarkening * float(smooth01((lid - 0.2) / 0.6));
  const float eyeball = 1 - 0.55f * lid;
  for (int e = 0; e < 2; ++e) {
    const Lid& L = lids_[e];
    // Frame -> the eye's rest axes: the similarity taking the corners' head-only positions onto
    // their rest positions.
    cv::Point2f fo = rigid[L.c0], fd = rigid[L.c0 + 3] - fo;
    float fl = std::max(1e-3f, std::hypot(fd.x, fd.y));
    cv::Point2f fx = fd / fl, fy(-fx.y, fx.x);
    const float k = L.w / fl;
    auto loc = [&](cv::Point2f q) { return cv::Point2f((q - fo).dot(fx) * k, (q - fo).dot(fy) * k); };
    auto rloc = [&](cv::Point2f q) { return cv::Point2f((q - L.o).dot(L.ex), (q - L.o).dot(L.ey)); };
    const int c0 = L.c0, c3 = L.c0 + 3;
    const cv::Point2f top[4] = {loc(full[c0]), loc(full[L.cr]), loc(full[L.cr + 1]), loc(full[c3])};
    const cv::Point2f rtop[4] = {rloc(m.rest[c0]), rloc(m.rest[L.cr]), rloc(m.rest[L.cr + 1]),
                                 rloc(m.rest[c3])};
    // The margins now, per pixel along the eye: the dense rest contours carried by what the
    // pose does to the 68 points' lids (a smile raises the lower lid, raised brows the upper).
    const cv::Point2f dup[4] = {loc(full[c0]), loc(full[c0 + 1]), loc(full[c0 + 2]), loc(full[c3])};
    const cv::Point2f rup[4] = {rloc(m.rest[c0]), rloc(m.rest[c0 + 1]), rloc(m.rest[c0 + 2]),
                                rloc(m.rest[c3])};
    const cv::Point2f dlo[4] = {loc(full[c0]), loc(full[c0 + 5]), loc(full[c0 + 4]), loc(full[c3])};
    const cv::Point2f rlo[4] = {rloc(m.rest[c0]), rloc(m.rest[c0 + 5]), rloc(m.rest[c0 + 4]),
                                rloc(m.rest[c3])};
    const int np = int(L.up.size());
    std::vector<float> cu(static_cast<size_t>(np)), cl(static_cast<size_t>(np));
    for (int i = 0; i < np; ++i) {
      const float x = float(i);
      cu[size_t(i)] = L.up[size_t(i)] + along(dup, 4, x) - along(rup, 4, x);
      cl[size_t(i)] = std::max(cu[size_t(i)], L.lo[size_t(i)] + along(dlo, 4, x) - along(rlo, 4, x));
    }
    auto at = [&](const std::vector<float>& c, float x) {
      x = std::clamp(x, 0.0f, float(np - 1));
      const int i = std::min(np - 2, int(x));
      return c[size_t(i)] + (x - float(i)) * (c[size_t(i) + 1] - c[size_t(i)]);
    };
    // Where the lids meet: the lower lid risen by kLowerRise of the opening, so the shut lid's
    // lash line follows the lower lid's curve (as a closed eye's does).
    auto margin = [&](float x) {
      const float u = at(cu, x), l = at(cl, x);
      return u + lid * (1 - kLowerRise) * (l - u);
    };
    auto lower_now = [&](float x) {
      const float u = at(cu, x), l = at(cl, x);
      return l - lid * kLowerRise * (l - u);
    };
    const float band = kLowerBand * L.h, pad = kLowerPad * L.h * lid;
    float bx0 = 1e9f, by0 = 1e9f, bx1 = -1e9f, by1 = -1e9f;
    for (int i : {c0, c0 + 1, c0 + 2, c3, c0 + 4, c0 + 5, L.cr, L.cr + 1})
      bx0 = std::min(bx0, full[i].x), by0 = std::min(by0, full[i].y), bx1 = std::max(bx1, full[i].x),
      by1 = std::max(by1, full[i].y);
    const int reach = int(std::ceil(band / k)) + 3;
    const int side = int(std::ceil(kSideExt * L.w / k)) + 1;
    bx0 -= side, bx1 += side;
    by0 -= 1.5f * L.h / k;
    cv::Rect box(int(std::floor(bx0)) - 1, int(std::floor(by0)) - 1, int(bx1 - bx0) + 4,
                 int(by1 - by0) + 2 + reach);
    box &= clip;
    lid_box_[e] = box;
    const int n = int(L.tone.size() / 3);
    for (int y = box.y; y < box.y + box.height; ++y) {
      uint8_t* row = canvas.ptr<uint8_t>(y);
      for (int x = box.x; x < box.x + box.width; ++x) {
        const cv::Point2f q = loc({float(x), float(y)});
        if (q.x <= 0 || q.x >= L.w) {
          // Beside the corners the open eye's lash line and crease run on: they fade toward the
          // lid's tone as it closes, so no outline of the open eye is left around the shut one.
          const float d = q.x < 0 ? -q.x : q.x - L.w, ext = kSideExt * L.w;
          if (d >= ext || smoothing <= 0) continue;
          const float f = 1 - d / ext;
          const float cy = q.x < 0 ? at(cu, 0) : at(cu, L.w);
          const float up = kSideUp * L.h * f, down = 0.25f * L.h * f;
          if (q.y < cy - up || q.y > cy + down) continue;
          const float vy = q.y < cy ? (cy - q.y) / std::max(1e-3f, up) : (q.y - cy) / std::max(1e-3f, down);
          const float wv = kSideSmoothing * smoothing * float(smooth01(f / 0.7)) * (1 - float(smooth01(vy)));
          const size_t ci = size_t(std::clamp(int(q.x < 0 ? 0.2f * L.w : 0.8f * L.w), 0, n - 1)) * 3;
          uint8_t* px = row + x * 3;
          for (int c = 0; c < 3; ++c)
            px[c] = uint8_t(std::clamp(px[c] + wv * (L.tone[ci + c] - px[c]), 0.0f, 255.0f));
          continue;
        }
        const float T = smooth_along(top, 4, q.x), M = margin(q.x);
        const float Bf = at(cl, q.x), D = Bf + band;
        if (q.y < T) {
          // Above the lid: the open eye's crease and socket shadow flatten as the lid fills it.
          // (At least as high as most of the opening: near the corners the band is thin, and the
          // open eye's lashes curving into the corner lie above it.)
          const float zone = kAboveShare * std::max(0.6f * L.h, M - T) + 0.5f;
          const float dz = (T - q.y) / zone;
          if (dz >= 1) continue;
          const float uu = q.x / L.w;
          const float wa = kAboveSmoothing * smoothing * (1 - float(smooth01(dz))) *
                           (0.5f + 0.5f * float(smooth01(std::min(uu, 1 - uu) / 0.25)));
          const float* tone = &L.tone[size_t(std::clamp(int(q.x + 0.5f), 0, n - 1)) * 3];
          uint8_t* px = row + x * 3;
          for (int c = 0; c < 3; ++c)
            px[c] = uint8_t(std::clamp(px[c] + wa * (tone[c] - px[c]), 0.0f, 255.0f));
          continue;
        }
        if (q.y > D) continue;
        const float B = std::max(M, lower_now(q.x));
        const float u = q.x / L.w;
        const float taper = float(smooth01(std::min(u, 1 - u) / kTaper));
        uint8_t* px = row + x * 3;
        // The lash line: a soft line hanging just below the margin, not a hard bar.
        const float ls = std::max(1.0f, 0.16f * L.h), ld = (q.y - M - 0.3f * ls) / ls;
        const float dark = lash * taper * std::exp(-ld * ld);
        cv::Point2f sp;
        float w = 0, shade = 1, mul = 1, tv = 0, low_w = 0;
        if (q.y <= M) {
          // The upper lid: the band above the lashes stretched down; while it falls the photo's
          // lashes ride 1:1 at its margin, and as it shuts they give way to the drawn lash line
          // (the lid contour can sit a pixel inside the eye, and copied 1:1 that showed as a
          // pale sliver of eye white along a hard black bar).
          const float Tr = smooth_along(rtop, 4, q.x), Ur = at(L.up, q.x);
          const float lw0 = std::min(L.lash, 0.5f * (M - T)), keep = 1 - float(smooth01((lid - 0.4) / 0.5));
          const float lw = lw0 * keep;
          float v = 1, bs;
          if (q.y >= M - lw)
            bs = Ur - (M - q.y);
          else
            v = (q.y - T) / std::max(1e-3f, M - lw - T), bs = Tr + v * (Ur - lw0 - Tr);
          sp = L.o + L.ex * q.x + L.ey * bs;
          // Faded in from the band's top, so the smooth lid has no visible upper edge.
          w = smoothing * (1 - keep * float(smooth01((v - 0.85f) / 0.15f))) * float(smooth01(v / 0.5f));
          shade = 1 + (kShadeA - 1) * float(smooth01(v / kTopRamp)) - kShadeB * v * v;
          tv = v;
        } else if (q.y <= B) {
          // What is left of the eye: the eyeball, where it is, darkening as the lid passes.
          sp = L.o + L.ex * q.x + L.ey * q.y;
          mul = eyeball;
        } else {
          // The lower lid, moved up from just below the photo's margin.
          const float B0 = at(L.lo, q.x) + pad * 4 * u * (1 - u);
          const float v = (q.y - B) / std::max(1e-3f, D - B);
          sp = L.o + L.ex * q.x + L.ey * (B0 + v * (at(L.lo, q.x) + band - B0));
          // Its wet rim, which shows only while the eye is open, fades into the skin below.
          low_w = kLowSmooth * smoothing * (1 - float(smooth01(v / kLowSmoothShare))) * taper;
        }
        bilinear(base_, sp.x, sp.y, px);
        if (low_w > 0) {
          const float* bc = &L.bottom[size_t(std::clamp(int(q.x + 0.5f), 0, n - 1)) * 3];
          for (int c = 0; c < 3; ++c) px[c] = uint8_t(px[c] + low_w * (bc[c] - px[c]));
        }
        const size_t ci = size_t(std::clamp(int(q.x + 0.5f), 0, n - 1)) * 3;
        const float* tone = &L.tone[ci];
        const float* topc = &L.top[ci];
        // The smooth lid: from the skin at the band's top to the lid's tone, shaded.
        const float g = float(smooth01(tv / kTopRamp));
        float val[3];
        for (int c = 0; c < 3; ++c) {
          float sm = (topc[c] + g * (tone[c] - topc[c])) * shade;
          val[c] = px[c] * mul + w * (sm - px[c] * mul);
        }
        // The lash line is lashes, not eye: where it darkens, the iris colour the photo's lashes
        // lie over goes grey (a blue eye otherwise leaves a blue sliver under a shut lid).
        if (dark > 0) {
          const float grey = 0.299f * val[0] + 0.587f * val[1] + 0.114f * val[2];
          const float ds = std::min(1.0f, dark / std::max(1e-3f, kLashDarkening));
          for (float& v : val) v += ds * (grey - v);
          // Lashes are a dark version of the person's colouring, not black paint.
          for (int c = 0; c < 3; ++c) val[c] += dark * (0.2f * tone[c] - val[c]);
        }
        for (int c = 0; c < 3; ++c) px[c] = uint8_t(std::clamp(val[c], 0.0f, 255.0f));
      }
    }
  }
}

}  // namespace imago::avatar::internal
