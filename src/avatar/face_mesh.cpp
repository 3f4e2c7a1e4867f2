#include "avatar/face_mesh.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <opencv2/imgproc.hpp>
#include <tuple>

#include "avatar/warp_row.h"

namespace imago::avatar::internal {
namespace {

constexpr int kFirstExtra = 68;
// The mouth (deform_mesh): the inner-lip opening per unit of Pose::mouth_open, in eye distances;
// the upper lip's share of it; how much of the jaw's drop the row of points under the jaw takes.
constexpr float kOpenPerUnit = 0.35f, kUpperShare = 0.2f, kUnderJawFollow = 0.1f;
// Rounded lips (oo, the kiss; deform_mesh): the share by which every lip point's distance from the
// lips' middle shrinks at full rounding; the share of the opening left at the points beside its
// middle (a small O); how much of its side's corner travel the jaw points beside the mouth
// follow; how far the outer lips next to the corners come to the corners' height; how far
// corners that sit above the lips' middle (a smile in the photo) come down toward it.
constexpr float kRoundNarrow = 0.28f, kRoundShoulder = 0.6f, kRoundCheek = 0.45f, kRoundCornerTaper = 0.7f,
                kRoundLevel = 0.6f;
// The points beside the mouth corners (FaceMesh::cheek): how far out from the corner along the
// mouth's axis and how far up or down they lie (mouth widths), and how much of their corner's
// motion they follow: across, down (the point below; the one above when the corner rises), and
// down for the point above.
constexpr float kCheekOut = 0.25f, kCheekUp = 0.25f, kCheekFollow = 0.5f, kCheekFollowDown = 0.4f,
                kCheekFollowUp = 0.3f;
// Where pressed or rounded lips meet over a photo's open mouth (MeshWarper::draw): how much darker
// the line between them is, and how much of the upper lip's edge (mouth widths) is drawn over.
constexpr float kSeamDark = 0.45f, kFringe = 0.04f;
// How much of a photo's open mouth over its teeth (its inner-lip gap at rest) a spoken turn closes.
constexpr float kSpeechRelax = 0.8f;
// Blinks (MeshWarper::draw_lids; docs/avatar.md "How the face moves"). Tuned by looking at the
// shut eyes of the FaceMetrics portraits and at the re-detected eye aspect ratio.
// The crease points sit this share of the way from the upper lid up to the brow: the band below
// them is what a closing lid stretches.
constexpr float kCreaseShare = 0.4f;
// ... and at most this share of the eye's width above the lid.
constexpr float kMaxBand = 0.3f;
// How far the stretched band is blended toward the smooth lid; the lid's brightness (kShadeA,
// reached over kTopRamp of the band from its top) and how much darker it gets toward the margin;
// the share of the band, from its top, whose brightest third gives the lid's tone (below it the
// predictor's lid points often sit on the iris).
constexpr float kLidSmoothing = 0.8f, kShadeA = 1.12f, kShadeB = 0.08f, kTopRamp = 0.5f, kToneShare = 0.6f;
// Above the band the open eye's crease and socket shadow fade toward the lid's tone, over this
// share of the band's height, this strongly (nearly all: a shut lid unfolds the crease, and what
// is left of it and of the lashes curving above the band at the corners drew the open eye's
// outline around the shut one), and (share of that) right up to the corners.
constexpr float kAboveShare = 0.8f, kAboveSmoothing = 0.9f, kAboveCorner = 1.0f;
// The lash line: the photo's lashes kept 1:1 while the lid falls (share of the eye's opening);
// the drawn line of the shut eye: how strongly it darkens, toward what (kLashShade of the lid
// tone's luminance, in the skin's hue), how thick (a Gaussian profile, kLashWidth of the opening
// and at least kLashMin px: soft, a few pixels at 3x, not a hard black bar); the share of the
// eye over which it tapers to the corners.
constexpr float kLashShare = 0.22f, kLashDarkening = 0.8f, kLashShade = 0.3f, kLashWidth = 0.22f,
                kLashMin = 1.3f, kTaper = 0.15f;
// A shut lid is skin: how fully it takes the face's skin hue (keeping its luminance), and the lit
// bulge over it: how far (kLidLift of the way) its luminance is lifted toward kLidLit of the
// lit skin's, over an ellipse kLitRx of the eye's width across, full inside kLitCore of its
// radius; the dome's shading across and down.
constexpr float kLidSkinHue = 1.0f, kLidLift = 0.7f, kLidLit = 0.8f, kLitRx = 0.7f, kLitCore = 0.5f,
                kLitShadeX = 0.15f, kLitShadeY = 0.12f;
// The shut lid keeps the skin's fine texture: what smoothing and the lift take out of the
// photo's luminance minus its blur (Gaussian, kDetailSigma px) is put back, each pixel's at most
// kDetailClamp grey levels (pores and fine lines, not the crease's shadow or the lashes).
constexpr float kDetailSigma = 1.5f, kDetailClamp = 8.0f;
// The shut lid's hue: the face's lit skin's moved this share toward the lid's own (its tone: a
// tanned or ruddy lid is not the cheek's pink).
constexpr float kLidOwnHue = 0.3f;
// The lower lid rises this share of the opening to meet the upper one (little, as in life: the
// shut eye's lash line then follows the lower lid's curve); its band (kLowerBand of
// the opening) is moved up from kLowerPad below the photo's lid margin (the predictor's lower
// points sit on the wet rim), and the rim fades into the skin below (kLowSmooth, over
// kLowSmoothShare of the band).
constexpr float kLowerRise = 0.25f, kLowerBand = 1.0f, kLowerPad = 0.3f, kLowSmooth = 0.6f,
                kLowSmoothShare = 0.6f;
// Small eyes (fully under kSmallEye px wide, in proportion up to twice that): a few pixels of lid have no
// texture to show (none is put back), a lash line of kLashMin px would be some 3 mm of lashes there, so it
// thins to kSmallLashMin px and darkens to keep its ink (kSmallLashDarkening toward kSmallLashShade of the
// lid tone), and the lower lid neither rises nor keeps its wet rim: its skin comes up from kSmallLowerPad of
// the opening below the rim, the rim fully faded (kSmallLowSmooth). On an eye 12 px wide the lids' open and
// shut outlines differ by some 1.5 px; a thick line with the rim under it read as a slit still open.
constexpr float kSmallEye = 16.0f, kSmallLashMin = 0.7f, kSmallLashDarkening = 1.0f, kSmallLashShade = 0.1f,
                kSmallLowerRise = 0.0f, kSmallLowerPad = 1.0f, kSmallLowSmooth = 1.0f;
// Beside the corners: how far out (share of the eye's width), how high and low (share of the
// opening) and how strongly the open eye's lash line and crease fade toward the lid's tone (as
// strongly as above the band: at 60% their tails drew the open eye's outer corner).
constexpr float kSideExt = 0.2f, kSideUp = 0.8f, kSideDown = 0.25f, kSideSmoothing = 0.9f;

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
  // Two points beside each mouth corner, out from it along the mouth's axis and up toward the
  // nostril's wing or down toward the chin (kCheekOut, kCheekUp of the mouth width): they follow
  // part of the corner's motion, so what the corner does is spread over the cheek. Without them
  // the skin between a corner and the jaw line lay in long thin triangles from the outer lip to
  // the jaw, which a corner moving against the upper lip stretched into streaks (a moustache's
  // end dragged out as a spike). One point straight out from the corner would lie on the lips'
  // outline extended and make slivers of its own; above and below it the triangles at the corner
  // are well shaped.
  m.cheek = int(m.rest.size());
  for (int c : {48, 54}) {
    const cv::Point2f mid = (m.rest[48] + m.rest[54]) * 0.5f, d = m.rest[c] - mid;
    const cv::Point2f out = d / std::max(1e-3f, std::hypot(d.x, d.y)),
                      up(out.y * (c == 48 ? -1.0f : 1.0f), out.x * (c == 48 ? 1.0f : -1.0f));
    for (float side : {1.0f, -1.0f}) {
      m.rest.push_back(m.rest[c] + (out * kCheekOut + up * (side * kCheekUp)) * m.mw);
      m.head_weight.push_back(1);
      m.depth.push_back(0.5f);
    }
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
  // Rounded lips (oo, the kiss: mouth_spread below 0) open as a small O in the middle: beside it
  // the lips stay closer together (kRoundShoulder of the opening at the points beside the middle),
  // so the opening's ends are rounded while the lips meet toward the corners, and the corners
  // themselves move only with the jaw, together with the inner corners (pulling the opening's
  // corners away from the lips' corners stretched the thin sliver of lip between them into a
  // streak).
  const float s = float(std::clamp(p.mouth_spread, -1.0, 1.0)), r = std::max(0.0f, -s);
  const float shoulder = 1 - r * r * (1 - kRoundShoulder);
  const float mean_gap = (m.rest_gap[0] + m.rest_gap[1] + m.rest_gap[2]) / 3;
  const int pairs[3][2] = {{61, 67}, {62, 66}, {63, 65}};
  for (int k = 0; k < 3; ++k) {
    const float c = arc(pairs[k][0]) * G * (k == 1 ? 1 : shoulder) - press * m.rest_gap[k];
    move(pairs[k][0], 0, -kUpperShare * c);
    move(pairs[k][1], 0, (1 - kUpperShare) * c);
  }
  const float c = G - press * mean_gap;
  auto outer = [&](int i) {
    return (i == 51 || i == 57 ? G : shoulder * G) * std::max(0.5f, arc(i)) - press * mean_gap;
  };
  for (int i = 49; i <= 53; ++i) move(i, 0, -kUpperShare * outer(i));
  for (int i = 55; i <= 59; ++i) move(i, 0, (1 - kUpperShare) * outer(i));
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
  // Spread (ee): the corners move out.
  if (s > 0) {
    const float out = s * 0.10f * mw;
    for (int i : {48, 60}) move(i, -out, 0);
    for (int i : {54, 64}) move(i, out, 0);
    for (int i : {49, 59, 61, 67}) move(i, -0.55f * out, 0);
    for (int i : {53, 55, 63, 65}) move(i, 0.55f * out, 0);
    for (int i : {50, 58}) move(i, -0.15f * out, 0);
    for (int i : {52, 56}) move(i, 0.15f * out, 0);
  }
  if (r > 0) {
    // Rounding narrows: the lips gather toward their middle, every lip point's distance from it
    // along the eye line shrinking by the same share (kRoundNarrow at full rounding), so no lip
    // point overtakes another and each side shrinks in proportion to its width (on a turned face
    // the far side is the narrower). Offsets per point instead dragged the outer upper lip past
    // a corner coming in: the triangle between them flipped and pulled a spike of moustache out
    // at the corner.
    // The share eases off toward the corners (the quintic f below: f(1) = 1 with a flat end), so
    // the corners and the lips beside them move together and the skin beyond (the cheek points)
    // continues that motion smoothly rather than across a kink.
    const auto x_of = [&](cv::Point2f q) { return q.dot(ux); };
    const float cx = x_of(m.rest[51] + m.rest[57] + m.rest[62] + m.rest[66]) / 4;
    const float reach[2] = {std::max(1.0f, cx - x_of(m.rest[48])), std::max(1.0f, x_of(m.rest[54]) - cx)};
    for (int i = 48; i <= 67; ++i) {
      const float d = x_of(m.rest[i]) - cx, D = reach[d > 0];
      const float t = std::min(1.0f, std::abs(d) / D), f = t + 0.5f * t * t * t * (1 - t * t);
      move(i, -std::copysign(kRoundNarrow * r * D * f, d), 0);
    }
    // The cheeks, the nostril wings and the skin under the nose follow the corner on their side,
    // so the pull spreads over the upper lip instead of folding it.
    const float tl = x_of(full[48] - m.rest[48]), tr = x_of(full[54] - m.rest[54]);
    for (int i : {4, 5}) move(i, kRoundCheek * tl, 0);
    for (int i : {11, 12}) move(i, kRoundCheek * tr, 0);
    move(31, 0.3f * tl, 0);
    move(35, 0.3f * tr, 0);
    move(32, 0.12f * tl, 0);
    move(34, 0.12f * tr, 0);
    // Puckered: the lips push out, so they look fuller. The upper lip rises only a little: the
    // skin under the nose has nowhere to go.
    for (int i = 49; i <= 53; ++i) move(i, 0, -r * (i == 49 || i == 53 ? 0.01f : 0.025f) * mw);
    for (int i = 55; i <= 59; ++i) move(i, 0, r * (i == 55 || i == 59 ? 0.03f : 0.06f) * mw);
    // A rounded mouth cannot keep a smile: corners that sit above the lips' middle in the photo
    // come down toward its height (the opening's ends at its middle height, an O rather than a
    // V), inner and outer corner together so the thin lip between them is not stretched.
    const float level = (m.rest[62] + m.rest[66]).dot(uy) / 2;
    for (const auto& [o, in] : {std::pair{48, 60}, std::pair{54, 64}}) {
      const float up = level - (m.rest[o] + m.rest[in]).dot(uy) / 2;
      if (up > 0) move(o, 0, r * kRoundLevel * up), move(in, 0, r * kRoundLevel * up);
    }
    // The outer lips next to the corners come most of the way to the corners' height: the lips'
    // outline rounds toward the corners, and the thin sliver of lip and moustache between the
    // outer lip and a corner moving down with the jaw is not stretched open.
    // (Never closer to their inner lip than half the lip's thickness: a wide rounded opening
    // lifts the inner lip past an outer one coming down; nor closer to the line from the corner
    // to the opening's corner than half as far as at rest: the thin lip there would fold over.)
    const int taper[4][4] = {{49, 48, 61, 60}, {59, 48, 67, 60}, {53, 54, 63, 64}, {55, 54, 65, 64}};
    for (const auto& [o, cn, in, ic] : taper) {
      full[o] += uy * (r * kRoundCornerTaper * (full[cn] - m.rest[cn] - (full[o] - m.rest[o])).dot(uy));
      // The outer lip lies above the upper inner lip, below the lower one.
      const float sign = o < 55 ? -1.0f : 1.0f;
      const float thick = 0.5f * sign * (m.rest[o] - m.rest[in]).dot(uy),
                  now = sign * (full[o] - full[in]).dot(uy);
      if (now < thick) full[o] += uy * (sign * (thick - now));
      // Its height above (below) the line from the corner to the opening's corner.
      auto off_line = [&](const std::vector<cv::Point2f>& q) {
        const cv::Point2f a = q[size_t(cn)], d = q[size_t(ic)] - a;
        const float t = std::abs(d.dot(ux)) < 1e-3f ? 0.0f : (q[size_t(o)] - a).dot(ux) / d.dot(ux);
        return sign * (q[size_t(o)] - (a + d * t)).dot(uy);
      };
      const float h0 = off_line(m.rest), h = off_line(full);
      if (h0 > 0 && h < 0.5f * h0) full[o] += uy * (sign * (0.5f * h0 - h));
    }
  }
  // Rounded lips cannot smile at the same time: the corners' part of a smile (speech on
  // expression models carries a slight one) fades as they round, or it pulls the corners of a
  // pucker back out into a grimace.
  float sm = float(std::clamp(p.smile, 0.0, 1.0));
  const float sl = sm * (1 - r);
  for (int i : {48, 60}) move(i, -0.06f * sl * mw, -0.11f * sl * mw);
  for (int i : {54, 64}) move(i, 0.06f * sl * mw, -0.11f * sl * mw);
  for (int i : {49, 59}) move(i, -0.03f * sl * mw, -0.05f * sl * mw);
  for (int i : {53, 55}) move(i, 0.03f * sl * mw, -0.05f * sl * mw);
  // (The outer edge only: lifting the inner lip would part a photo's own teeth.)
  for (int i : {50, 51, 52}) move(i, 0, -0.025f * sl * mw);
  move(31, -0.02f * sm * mw, -0.02f * sm * mw);
  move(35, 0.02f * sm * mw, -0.02f * sm * mw);
  for (int i : {2, 3}) move(i, -0.01f * sm * mw, -0.035f * sm * mw);
  for (int i : {13, 14}) move(i, 0.01f * sm * mw, -0.035f * sm * mw);

  // The cheek beside each corner follows part of the corner's motion (speech, rounding, smiles).
  // The point above takes less of a drop (the jaw pulls the cheek below the corner, not above).
  for (int k = 0; k < 4; ++k) {
    const int corner = k < 2 ? 48 : 54;
    const cv::Point2f d = full[corner] - m.rest[corner];
    const float dy = d.dot(uy);
    full[m.cheek + k] += ux * (kCheekFollow * d.dot(ux)) +
                         uy * ((k % 2 == 0 && dy > 0 ? kCheekFollowUp : kCheekFollowDown) * dy);
  }

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

// std::ceil and std::floor of a float within int's range, as ints: without SSE4.1 (roundss) the
// compiler expands std::ceil and std::floor into long sequences, and raster takes two per row
// (a frame has some 11000 triangle rows).
inline int ceil_int(float v) {
  const int i = int(v);
  return i + (float(i) < v);
}
inline int floor_int(float v) {
  const int i = int(v);
  return i - (float(i) > v);
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
  const int y0 = std::max(clip.y, ceil_int(miny - 1e-3f)),
            y1 = std::min(clip.y + clip.height - 1, floor_int(maxy + 1e-3f));
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
    const int x0 = std::max(clip.x, ceil_int(xl - 1e-3f)),
              x1 = std::min(clip.x + clip.width - 1, floor_int(xr + 1e-3f));
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

// The drawn teeth (MeshWarper::draw), seen from the front: where each tooth ends, from the
// midline outward, in mouth widths. The upper row is a dental arch of radius half the mouth
// width with central incisors, laterals, canines and premolars at their usual sizes (8.5, 6.5,
// 7.5, 7 and 6.5 mm for a 50 mm mouth), projected: the teeth narrow toward the corners as they
// turn away, instead of a row of equal tiles. The lower row is smaller (5.4, 5.9, 7, 7 mm on a
// tighter arch).
constexpr float kUpperTeeth[7] = {0, 0.167f, 0.282f, 0.392f, 0.462f, 0.496f, 0.52f};
constexpr float kLowerTeeth[6] = {0, 0.107f, 0.217f, 0.325f, 0.40f, 0.45f};
// Each tooth's length against the central incisor's (a lateral is shorter, a canine's cusp
// nearly as long), upper row.
constexpr float kToothLength[6] = {1.0f, 0.9f, 0.96f, 0.84f, 0.8f, 0.8f};

struct Tooth {
  int k = 0;       // which tooth from the midline (0: central incisor)
  float f = 0;     // where across it, 0 at the side toward the midline, 1 at the other
  float w = 1;     // its width, pixels
  float var = 1;   // its own brightness (teeth are not all alike)
  float tint = 0;  // and a little more or less yellow
};

// The tooth at `dx` pixels from the midline, in a row laid out by `edges` (mouth widths).
template <size_t N>
Tooth tooth_at(const float (&edges)[N], float dx, float mw, uint32_t seed) {
  Tooth t;
  const float a = std::abs(dx) / std::max(1.0f, mw);
  while (t.k + 2 < int(N) && a > edges[t.k + 1]) ++t.k;
  t.w = std::max(0.5f, (edges[t.k + 1] - edges[t.k]) * mw);
  t.f = std::clamp((a - edges[t.k]) / (edges[t.k + 1] - edges[t.k]), 0.0f, 1.0f);
  uint32_t h = (uint32_t(t.k) * 2u + (dx < 0 ? 1u : 0u) + seed) * 0x9e3779b1u;
  h ^= h >> 15, h *= 0x85ebca6bu, h ^= h >> 13;
  t.var = 0.95f + 0.1f * float(h & 255) / 255.0f;
  t.tint = float((h >> 8) & 255) / 255.0f - 0.5f;
  return t;
}

// How bright a tooth is at (across f, down tf: 0 at the lip, 1 at its biting edge), before the
// row's own light: convex across (lit in the middle, turning away at its sides), in the lip's
// shadow at the top, and between neighbours a soft shadow `dg` pixels from the seam, deeper
// toward the biting edge where the teeth part.
float tooth_shade(const Tooth& t, float tf, float dg) {
  const float c = 2 * t.f - 1;
  float s = (0.62f + 0.3f * std::min(1.0f, tf * 2.0f)) * (1 - 0.12f * c * c) * t.var;
  s *= 1 - (0.05f + 0.1f * std::clamp(tf, 0.0f, 1.0f)) * std::exp(-(dg * dg) / 0.8f);
  return s;
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
  // most of the way to the lip's own (at most kLipEdgeReach of the way to the outer point).
  // (Where the luminance is kLipEdgeLevel of the way from the lip's to the teeth's: at the
  // halfway point the bottom pixel of the lip's triangles still held teeth, which lips brought
  // together for a kiss showed as a thin light line between them.)
  constexpr float kLipEdgeReach = 0.6f, kLipEdgeLevel = 0.3f;
  const int upper[3][3] = {{50, 61, 67}, {51, 62, 66}, {52, 63, 65}};
  for (const auto& u : upper) {
    const cv::Point2f outer = m.rest[u[0]], inner = m.rest[u[1]], below = m.rest[u[2]];
    const float teeth = lum(inner + (below - inner) * 0.25f), lip = lum(outer + (inner - outer) * 0.2f);
    if (teeth < lip + 25) continue;
    const float edge = lip + kLipEdgeLevel * (teeth - lip), len = dist(outer, inner);
    if (len < 1) continue;
    float s = 0;  // how far up from the inner point, share of the way to the outer one
    while (s + 0.5f / len <= kLipEdgeReach && lum(inner + (outer - inner) * (s + 0.5f / len)) > edge)
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
    const float eye_w = dist(m.rest[k < 2 ? 36 : 42], m.rest[k < 2 ? 39 : 45]);
    const float reach = std::min(kCreaseShare, kMaxBand * eye_w / std::max(1e-3f, dist(to_brow, {0, 0})));
    float best = reach, best_l = -1;
    for (float s = std::min(kFrom, reach); s <= reach + 1e-4f; s += kStep) {
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

std::pair<int, int> outline_distance(const std::vector<cv::Point2f>& ring, const cv::Rect& box,
                                     OpeningScratch& scratch) {
  float y0 = 1e9f, y1 = -1e9f;
  for (const auto& q : ring) y0 = std::min(y0, q.y), y1 = std::max(y1, q.y);
  const size_t n = ring.size();
  const int W = box.width, H = box.height;
  // Only the sign and, within half a pixel of the outline, the value are used (draw_opening's
  // coverage, `touched` and inside rows), so the sign comes from each row's crossings of the
  // outline and the distance is measured only near the edges. (Measured to every edge for every
  // pixel of the outline's rows it was a tenth of a speaking frame.)
  std::vector<float>& sd = scratch.sd;
  sd.assign(size_t(box.area()), 1e9f);
  const int ry0 = std::max(0, int(std::ceil(y0 - 1)) - box.y),
            ry1 = std::min(H - 1, int(std::floor(y1 + 1)) - box.y);
  if (ry0 > ry1 || n == 0) return {ry0, std::min(ry1, ry0 - 1)};
  std::vector<float>& d2 = scratch.d2;  // squared distance to the nearest edge, if under a pixel or so
  d2.assign(size_t(W) * size_t(ry1 - ry0 + 1), 1e18f);
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const cv::Point2f a = ring[j], b = ring[i], ab = b - a;
    // The pixels within half a pixel of the edge lie in its box widened by that (by one here,
    // so rounding cannot leave one out).
    const int ex0 = std::max(0, int(std::floor(std::min(a.x, b.x))) - 1 - box.x),
              ex1 = std::min(W - 1, int(std::ceil(std::max(a.x, b.x))) + 1 - box.x),
              ey0 = std::max(ry0, int(std::floor(std::min(a.y, b.y))) - 1 - box.y),
              ey1 = std::min(ry1, int(std::ceil(std::max(a.y, b.y))) + 1 - box.y);
    for (int y = ey0; y <= ey1; ++y)
      for (int x = ex0; x <= ex1; ++x) {
        const cv::Point2f p(float(box.x + x), float(box.y + y));
        const float t = std::clamp((p - a).dot(ab) / std::max(1e-9f, ab.dot(ab)), 0.0f, 1.0f);
        const cv::Point2f e = p - (a + ab * t);
        float& d = d2[size_t((y - ry0) * W + x)];
        d = std::min(d, e.dot(e));
      }
  }
  std::vector<float>& cross = scratch.cross;
  for (int y = ry0; y <= ry1; ++y) {
    const float py = float(box.y + y);
    cross.clear();
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
      const cv::Point2f a = ring[j], b = ring[i];
      if ((a.y > py) != (b.y > py)) cross.push_back(a.x + (py - a.y) / (b.y - a.y) * (b.x - a.x));
    }
    for (int x = 0; x < W; ++x) {
      const float px = float(box.x + x), d = d2[size_t((y - ry0) * W + x)];
      bool inside = false;
      for (float c : cross) inside ^= px < c;
      const float v = d < 0.25f ? std::sqrt(d) : 1.0f;
      sd[size_t(y * W + x)] = inside ? -v : v;
    }
  }
  return {ry0, ry1};
}

namespace {

// Draws the mouth opening (the polygon `ring`) over the warped lips, each pixel blended by the
// share of it the opening covers (from the signed distance of its centre to the outline), so the
// rim is a soft lip edge instead of the stair steps of the pixels whose centres it holds. Only
// the outline's box is visited.
// Pixels whose centres lie inside still hold last frame's colours (the mesh's interior triangles
// are not warped), and where the drawn cavity's rounded outline lies inside the polygon (its
// corners, the dip of a rounded lower lip) the lip must continue to it: in each column the warped
// lip next to the outline, from the outline out over as many rows again plus two, is stretched
// inward over the inside rows of its half (up for the upper lip's half, `upper(x, y)`, down for
// the lower's) up to the first the opening draws itself (`drawn(x, y)`), so the lip's own edge
// comes to lie on the cavity and meets the untouched lip further out without a step.
// `shade(x, y, out, lip)` gives the opening's colour next to `lip`.
// `scratch` holds the buffers, kept from frame to frame.
template <class Upper, class Drawn, class Shade>
void draw_opening(const std::vector<cv::Point2f>& ring, const cv::Rect& clip, cv::Mat& canvas,
                  OpeningScratch& scratch, Upper&& upper, Drawn&& drawn, Shade&& shade) {
  float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
  for (const auto& q : ring)
    x0 = std::min(x0, q.x), y0 = std::min(y0, q.y), x1 = std::max(x1, q.x), y1 = std::max(y1, q.y);
  // Room for the stretched lip beyond the outline: at most the outline's height plus two rows.
  const int pad = int(std::ceil(y1 - y0)) + 4;
  const cv::Rect box = cv::Rect(int(std::floor(x0)) - 2, int(std::floor(y0)) - pad,
                                int(std::ceil(x1 - x0)) + 5, int(std::ceil(y1 - y0)) + 2 * pad + 1) &
                       clip;
  if (box.area() <= 0) return;
  const int W = box.width, H = box.height;
  const auto [ry0, ry1] = outline_distance(ring, box, scratch);
  if (ry0 > ry1) return;
  const std::vector<float>& sd = scratch.sd;
  // The lip under the box (as warped, then stretched), which pixels the opening or its lip
  // touch, and how strongly a stretched pixel is smoothed along the row (below).
  std::vector<float>& lip = scratch.lip;
  std::vector<float>& smooth = scratch.smooth;
  lip.resize(size_t(W * H) * 3);
  smooth.assign(size_t(W * H), 0.0f);
  std::vector<uint8_t>& touched = scratch.touched;
  touched.resize(size_t(W * H));
  for (int y = 0; y < H; ++y) {
    const uint8_t* c = canvas.ptr<uint8_t>(box.y + y) + box.x * 3;
    for (int x = 0; x < W; ++x) {
      for (int k = 0; k < 3; ++k) lip[size_t(y * W + x) * 3 + k] = c[x * 3 + k];
      touched[size_t(y * W + x)] = sd[size_t(y * W + x)] < 0.5f;
    }
  }
  std::vector<float>& src = scratch.src;  // one half's lip rows beyond the outline (stretch, below)
  for (int x = 0; x < W; ++x) {
    auto at = [&](int y) { return sd[size_t(y * W + x)]; };
    auto L = [&](int y) { return &lip[size_t(y * W + x) * 3]; };
    int ya = -1, yb = -1;  // the inside rows (only the outline's rows can be)
    for (int y = ry0; y <= ry1; ++y)
      if (at(y) <= 0) {
        if (ya < 0) ya = y;
        yb = y;
      }
    if (ya < 0) continue;
    int split = ya;  // first row of the lower lip's half
    while (split <= yb && upper(box.x + x, box.y + split)) ++split;
    // One half's inside rows, from the deepest (`inner`) to the outline (beyond it `edge`, dir:
    // outward): those the opening leaves to the lip, from the outline in, are stretched from the
    // lip beyond `edge`; the rest (the opening's own) take the lip at the outline.
    auto stretch = [&](int inner, int edge, int dir) {
      const int all = std::abs(edge - inner);
      int K = 0;  // rows left to the lip
      while (K < all && !drawn(box.x + x, box.y + edge - dir * (K + 1))) ++K;
      for (int y = inner; y != edge - dir * K; y += dir) {
        std::copy_n(L(edge), 3, L(y));
        touched[size_t(y * W + x)] = 1;
      }
      if (K <= 0) return;
      int R = K + 2;  // lip rows beyond the outline that are squeezed
      while (R > 0 && (edge + dir * R < 0 || edge + dir * R >= H)) --R;
      src.resize(size_t(R + 1) * 3);
      for (int r = 0; r <= R; ++r) std::copy_n(L(edge + dir * r), 3, &src[size_t(r) * 3]);
      const int first = edge - dir * K;
      for (int i = 0; i < K + R; ++i) {
        const int y = first + dir * i;
        const float f = float(i) * float(R) / float(K + R);
        const int f0 = std::min(std::max(0, R - 1), int(f));
        const float w = R > 0 ? f - float(f0) : 0.0f;
        float* d = L(y);
        const float *s0 = &src[size_t(f0) * 3], *s1 = &src[size_t(std::min(R, f0 + 1)) * 3];
        for (int k = 0; k < 3; ++k) d[k] = s0[k] + w * (s1[k] - s0[k]);
        touched[size_t(y * W + x)] = 1;
        smooth[size_t(y * W + x)] = 1 - float(i) / float(K + R);
      }
    };
    // The upper half's rows ya..split-1 (outline above ya), the lower's split..yb (below yb).
    if (split > ya && ya > 0) stretch(split - 1, ya - 1, -1);
    if (split <= yb && yb + 1 < H) stretch(split, yb + 1, 1);
  }
  // Stretched column by column, the lip's texture ran down as streaks: it is averaged along the
  // row over the stretched pixels beside it (weights 1 2 3 2 1), fully where it meets the cavity
  // and not at all where it meets the untouched lip. (Only the touched pixels are written.)
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) {
      if (!touched[size_t(y * W + x)]) continue;
      float v[3];
      std::copy_n(&lip[size_t(y * W + x) * 3], 3, v);
      if (const float s0 = smooth[size_t(y * W + x)]; s0 > 0) {
        float acc[3] = {0, 0, 0}, wsum = 0;
        for (int j = std::max(0, x - 2); j <= std::min(W - 1, x + 2); ++j) {
          if (smooth[size_t(y * W + j)] <= 0) continue;
          const float w = float(3 - std::abs(j - x));
          for (int k = 0; k < 3; ++k) acc[k] += w * lip[size_t(y * W + j) * 3 + k];
          wsum += w;
        }
        for (int k = 0; k < 3; ++k) v[k] += s0 * (acc[k] / wsum - v[k]);
      }
      uint8_t l[3], c[3];
      for (int k = 0; k < 3; ++k) l[k] = uint8_t(std::lround(std::clamp(v[k], 0.0f, 255.0f)));
      const float cov = std::clamp(0.5f - sd[size_t(y * W + x)], 0.0f, 1.0f);
      uint8_t* o = canvas.ptr<uint8_t>(box.y + y) + (box.x + x) * 3;
      if (cov <= 0) {
        std::copy_n(l, 3, o);
        continue;
      }
      shade(box.x + x, box.y + y, c, l);
      for (int k = 0; k < 3; ++k) o[k] = uint8_t(std::lround(l[k] + cov * (c[k] - l[k])));
    }
  }
}

}  // namespace

MeshWarper::MeshWarper(const FaceMesh& m, const cv::Mat& base, WarpPath path)
    : m_(m), path_(path), base_(base), moved_last_(m.tris.size(), 0), lids_{lid_of(0), lid_of(1)} {
  fit_skin_and_teeth();
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

void MeshWarper::fit_skin_and_teeth() {
  // The face's skin colour (the shut lids take its hue), and the drawn teeth lit like the face: an ivory
  // whose brightness and cast come from the lit skin of the nose and of the cheeks under the eyes (beard-free
  // on most faces), the pixels between the 60th and 90th percentile of luminance there (lit, not shine). A
  // photo that shows its own teeth gives their colour directly.
  const FaceMesh& m = m_;
  auto lum = [](const cv::Vec3f& c) { return 0.299f * c[0] + 0.587f * c[1] + 0.114f * c[2]; };
  auto lit_mean = [&](std::vector<cv::Vec3f>& px, float from, float to) {
    std::sort(px.begin(), px.end(), [&](const auto& a, const auto& b) { return lum(a) < lum(b); });
    cv::Vec3f acc(0, 0, 0);
    const size_t a = size_t(from * float(px.size())), b = std::max(a + 1, size_t(to * float(px.size())));
    for (size_t i = a; i < b && i < px.size(); ++i) acc += px[i];
    return acc / float(std::max<size_t>(1, std::min(b, px.size()) - a));
  };
  std::vector<cv::Vec3f> px;
  auto patch = [&](cv::Point2f c, float rad) {
    for (float dy = -rad; dy <= rad; dy += 1)
      for (float dx = -rad; dx <= rad; dx += 1) {
        uint8_t v[3];
        bilinear(base_, c.x + dx, c.y + dy, v);
        px.emplace_back(v[0], v[1], v[2]);
      }
  };
  const float rad = std::max(1.0f, 0.06f * m.ed);
  for (float t : {0.3f, 0.6f}) patch(m.rest[27] + (m.rest[30] - m.rest[27]) * t, rad);
  patch((m.rest[36] + m.rest[31]) * 0.5f, rad);
  patch((m.rest[45] + m.rest[35]) * 0.5f, rad);
  const cv::Vec3f skin = lit_mean(px, 0.6f, 0.9f);
  for (int k = 0; k < 3; ++k) skin_[k] = std::max(1.0f, skin[k]);
  // An ivory as bright against a typical lit skin (luminance 162) as the photo's skin is, with
  // an eighth of the skin's own colour in it (the light's cast on both).
  const cv::Vec3f ivory(218, 206, 184);
  const float bright = std::clamp(lum(skin) / 162.0f, 0.55f, 1.05f);
  for (int k = 0; k < 3; ++k) teeth_[k] = std::min(240.0f, 0.875f * bright * ivory[k] + 0.125f * skin[k]);
  px.clear();
  if (m.mouth_open_at_rest && m.teeth_at_rest >= 0.3f) {
    // The photo's opening, its middle half across and the middle 60% down.
    for (int i = 0; i < 3; ++i) {
      const cv::Point2f up = m.rest[61 + i], lo = m.rest[67 - i];
      for (float t = 0.2f; t <= 0.8f; t += 0.1f) patch(up + (lo - up) * t, 0.5f);
    }
    const cv::Vec3f c = lit_mean(px, 0.6f, 1.0f) / 0.85f;
    for (int k = 0; k < 3; ++k) teeth_[k] = std::min(245.0f, c[k]);
    return;
  }
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
  const float lid = float(std::clamp(p.eye_close, 0.0, 1.0));
  // How rounded the lips are (oo and a kiss fully, o and sh mostly: coarticulation leaves a
  // spoken oo at some -0.6 to -0.9).
  const float rounding = float(smooth01(std::clamp(-p.mouth_spread, 0.0, 1.0) / 0.6));
  // The lower lip tucked under the upper teeth (f, v).
  const float tuck = float(std::clamp(p.lip_tuck, 0.0, 1.0));
  // How much the lips are brought forward together (rounded: oo, the kiss): where they meet over
  // a photo's open mouth, the line between them is drawn. (Lips only pressed, p/b/m, keep the
  // photo's closing seam below: drawn there too, the line read as parted lips to the landmark
  // predictor on the unseen portrait's small mouth, 44 of 46 closures.)
  const float meet = rounding;
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
  // The teeth's midline: under the middle of the upper lip.
  const float mid_x = local(full[62]).x;
  // `lip` is the lip's colour beside the pixel (the warped lip just outside the opening), which
  // the lips continue with inside the outline's rounded corners. `room`, on a photo open at rest,
  // is the gap speech added there (the photo's own opening shows its own mouth).
  auto interior = [&](float x, float y, float* out, bool teeth, bool lower_teeth, const uint8_t* lip,
                      float room = -1) {
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
    // lower lip in the middle of the mouth, in front of the tongue, a little darker than the
    // upper row (in its shadow and further back).
    if (lower_teeth && h > 0.12f * m.mw && std::abs(u) < 0.55f) {
      float w = std::sqrt(1 - (u / 0.55f) * (u / 0.55f));
      // Rounded lips (oo, a kiss) and a lower lip tucked under the upper teeth (f, v) cover it:
      // in a small O it showed as a lone tooth, in an f as a white line. On a photo open at rest
      // it takes at most 40% of the gap speech added (the photo's opening shows its own mouth).
      float lth = std::min(0.05f * m.mw, 0.2f * h) * w *
                  float(smooth01((h - 0.12f * m.mw) / (0.06f * m.mw))) * (1 - rounding) * (1 - tuck);
      if (room >= 0) lth = std::min(lth, 0.4f * room);
      if (lth > 1.0f) {
        const Tooth t = tooth_at(kLowerTeeth, q.x - mid_x, m.mw, 7);
        // Each tooth's biting edge rounds off at its corners, so the row's top edge dips
        // between teeth.
        const float c = 2 * t.f - 1, ltop = bot - lth * (1 - 0.1f * c * c * c * c);
        const float la = float(smooth01((q.y - ltop) / 1.2f + 0.5f));
        if (la > 0) {
          const float tf = 1 - std::clamp((q.y - ltop) / lth, 0.0f, 1.0f);  // 1 at the biting edge
          const float dg = std::min(t.f, 1 - t.f) * t.w;
          const float shade = 0.8f * (1 - 0.5f * u * u) * tooth_shade(t, 0.6f + 0.4f * (1 - tf), dg);
          r += la * (teeth_[0] * shade - r), g += la * (teeth_[1] * shade - g),
              bl += la * (teeth_[2] * (shade - 0.03f * t.tint) - bl);
        }
      }
    }
    // The upper teeth hang from the upper lip in the middle of the mouth; their lower edge is a
    // flatter arc than the lip, so they narrow toward the corners instead of lining the lip.
    // Each tooth has its own width, length, shading and biting edge (rounded corners on the
    // incisors, a cusp on the canine), so the row reads as teeth rather than as tiles.
    float th = std::min(teeth_h, 0.5f * h - 0.5f);
    if (teeth && th > 1.0f && std::abs(u) < 0.8f) {
      const Tooth t = tooth_at(kUpperTeeth, q.x - mid_x, m.mw, 3);
      const float c = std::abs(2 * t.f - 1);
      const float drop = t.k == 2 ? 0.14f * std::pow(c, 1.3f) : t.k < 2 ? 0.1f * c * c * c * c : 0.1f * c * c;
      const float len = kToothLength[std::min(t.k, 5)] * (1 - 0.35f * u * u) - drop;
      const float tbot = mid_top + th * len;
      if (q.y < tbot) {
        const float tf = (q.y - top) / std::max(1.0f, tbot - top);
        const float dg = std::min(t.f, 1 - t.f) * t.w;
        float shade = (1 - 0.7f * u * u) * tooth_shade(t, tf, dg);
        // The biting edge is thin enamel, a little translucent: greyer and cooler.
        const float tl = 0.3f * float(smooth01((tf - 0.75f) / 0.25f));
        const float edge = std::clamp(tbot - q.y, 0.0f, 1.0f);  // soft lower edge of the teeth
        const float tr = teeth_[0] * shade * (1 - tl * 0.25f), tg = teeth_[1] * shade * (1 - tl * 0.18f),
                    tb = teeth_[2] * (shade - 0.04f * t.tint) * (1 - tl * 0.05f);
        r += edge * (tr - r), g += edge * (tg - g), bl += edge * (tb - bl);
      }
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
    // it, the lips continue: the warped lip's own colour next to the opening, so the cavity is
    // feathered into the lip it borders. (The photo's lip mirrored about its inner edge matched
    // the warped lip only at the polygon's edge: further in it showed the lip's pale inner band or
    // highlight, a light triangle where the outline dips below the rounded one, and dots along it.)
    float d = std::min(q.y - top, bot - q.y);
    float a = float(smooth01(d / feather + 0.5)) * float(smooth01((h - 0.5f) / (0.08f * m.mw)));
    if (a < 0.999f)
      for (int c = 0; c < 3; ++c) out[c] = lip[c] + a * (out[c] - lip[c]);
    // A photo's open mouth with the lips pressed or rounded (a kiss, oo) where too little is open
    // for the cavity to show: they meet along a soft, dark line, the lips' own colour in shadow,
    // rather than leaving a band of lip colour between them (on a pale lip over the photo's
    // teeth it read as teeth). A closed mouth's photo has that line of its own.
    if (meet > 0 && m.mouth_open_at_rest) {
      const float thin = 1 - float(smooth01((h - 0.5f) / (0.08f * m.mw)));
      const float w = 0.7f + 0.2f * std::max(0.0f, pbot - ptop), dl = (q.y - 0.5f * (ptop + pbot)) / w;
      const float k = 1 - kSeamDark * meet * thin * std::exp(-dl * dl);
      for (int c = 0; c < 3; ++c) out[c] *= k;
    }
  };

  // A photo whose open mouth shows only upper teeth: the jaw's lower teeth are drawn.
  const bool photo_lower_teeth = split_ > 0.9f;
  const bool gazing = std::abs(p.gaze_x) + std::abs(p.gaze_y) > 1e-4;
  const bool restore_eyes = lid_box_[0].area() > 0 || lid_box_[1].area() > 0;
  const RgbImage src{base_.data, base_.step[0], base_.cols, base_.rows};
  // One pixel of the mouth opening at (x, y) into `px`, next to lip coloured `lip`.
  auto shade_mouth = [&](int x, int y, uint8_t* px, const uint8_t* lip) {
    float room = -1;  // on a photo open at rest, the gap speech added here
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
      room = extra;
      const float t = std::max(in_upper, in_lower) + extra / 2;  // from the gap's middle
      const float cover = std::max(0.0f, std::min(t + 0.5f, extra / 2) - std::max(t - 0.5f, -extra / 2));
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
          interior(float(x), float(y), c, false, photo_lower_teeth, lip, room);
          for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::clamp(c[k] + a * (px[k] - c[k]), 0.0f, 255.0f));
        }
        if (closing > 0) seam();
        return;
      }
      if (closing > 0) {
        // Rounded lips closing over the photo's teeth (a kiss): none of the photo's rows show,
        // and the lips continue to where they meet along the interior's dark line. (Painted
        // with the closing seam's colour too, the whole gap left between them, some 5 px at
        // 512x512 over a tall row of teeth, read as a flat brown lens.)
        float c[3];
        interior(float(x), float(y), c, false, photo_lower_teeth, lip, room);
        for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::clamp(c[k], 0.0f, 255.0f));
        return;
      }
    }
    // The whole pixel is drawn interior: on a photo open at rest, the gap speech adds, where the
    // jaw's lower teeth stand when the photo shows none.
    float c[3];
    interior(float(x), float(y), c, !m.mouth_open_at_rest, m.mouth_open_at_rest ? photo_lower_teeth : true,
             lip, room);
    for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::clamp(c[k], 0.0f, 255.0f));
  };
  bool mouth_moved = false;
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
      mouth_moved = true;  // drawn after the skin, as the opening's current outline (below)
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
    spans_.clear();
    raster(d, clip, [&](int y, int x0, int x1) { spans_.push_back({y, x0, x1}); });
    warp_rows(path_, src, A, spans_.data(), int(spans_.size()), canvas.data, canvas.step[0]);
  }
  if (mouth_moved) {
    // The opening is drawn as its current outline (the inner lips, 60..67) cut into triangles
    // here, not as the mesh's interior triangles: those come from the canonical face, whose
    // inner lips are a convex ring, and on a photo whose upper inner lip sags below the line
    // between the corners (a smile) some of them lie over the upper lip, where they drew the
    // interior in jagged steps over the lip's own pixels.
    // Over a photo's open mouth, lips pressed or rounded also cover the last pixels of the lips'
    // own triangles (kFringe of the mouth width from the inner lips) with the lips continued from
    // further in: the photo's teeth reach into them (between the landmarks and the lips' curved
    // edges), and lips brought together for a kiss showed them as a thin light line between.
    const float fringe = m.mouth_open_at_rest ? meet * kFringe * m.mw : 0.0f;
    std::vector<cv::Point2f> ring;
    for (int i = 60; i <= 67; ++i)
      ring.push_back(full[i] + (i == 60   ? ax * -fringe
                                : i == 64 ? ax * fringe
                                          : ay * (i < 64 ? -fringe : fringe)));
    auto upper_half = [&](int x, int y) {
      const cv::Point2f q = local(cv::Point2f(float(x), float(y)));
      return q.y < 0.5f * (along(upper, 5, q.x) + along(lower, 5, q.x));
    };
    // What the opening draws itself: the photo's open mouth (unless rounded lips cover it), else
    // the cavity inside its rounded outline (interior's).
    auto drawn = [&](int x, int y) {
      if (m.mouth_open_at_rest && rounding < 0.999f) return true;
      const cv::Point2f q = local(cv::Point2f(float(x), float(y)));
      return q.y > rounded(upper, q.x) + 0.8f && q.y < rounded(lower, q.x) - 0.8f;
    };
    draw_opening(ring, clip, canvas, opening_, upper_half, drawn, shade_mouth);
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
  // By the corners the band is a sliver in the corner's shadow: the lid there takes the tone a
  // fifth of the way in (a darker tone by the corners drew dark lines down the shut lid's sides).
  auto hold_corners = [&](std::vector<float>& v) {
    const int a = int(0.2f * float(n - 1)), b = int(0.8f * float(n - 1));
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) v[size_t(i) * 3 + c] = v[size_t(std::clamp(i, a, b)) * 3 + c];
  };
  hold_corners(L.tone);
  // Its hue: the tone's colour per unit of luminance over the middle half of the eye.
  float t[3] = {0, 0, 0};
  for (int i = n / 4; i < n - n / 4; ++i)
    for (int c = 0; c < 3; ++c) t[c] += L.tone[size_t(i) * 3 + c];
  const float ty = std::max(1.0f, 0.299f * t[0] + 0.587f * t[1] + 0.114f * t[2]);
  for (int c = 0; c < 3; ++c) L.hue[c] = t[c] / ty;
  // The skin colour at the top of the band (where the closing lid leaves the photo as it is), and
  // below the lower lid's band.
  L.top = smoothed(colours_along([&](float x) { return smooth_along(top, 4, x); }));
  hold_corners(L.top);
  L.bottom = smoothed(colours_along([&](float x) { return L.lo[size_t(int(x))] + kLowerBand * L.h; }));
  // The blurred luminance over everything draw_lids samples: the eye and beside its corners,
  // from above the crease points to below the lower lid's band.
  float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
  for (float ax : {-kSideExt * L.w - 2, L.w + kSideExt * L.w + 2})
    for (float ay : {-3 * L.h - 4, L.h + kLowerBand * L.h + 4})
      for (float cy : {0.0f, std::min(top[1].y, top[2].y)}) {
        const cv::Point2f q = L.o + L.ex * ax + L.ey * (ay + cy);
        x0 = std::min(x0, q.x), y0 = std::min(y0, q.y), x1 = std::max(x1, q.x), y1 = std::max(y1, q.y);
      }
  const int pad = int(std::ceil(3 * kDetailSigma)) + 2;
  const cv::Rect r = cv::Rect(int(std::floor(x0)) - pad, int(std::floor(y0)) - pad,
                              int(x1 - x0) + 2 * pad + 2, int(y1 - y0) + 2 * pad + 2) &
                     cv::Rect(0, 0, base_.cols, base_.rows);
  if (r.area() > 0) {
    cv::Mat gray;
    cv::cvtColor(base_(r), gray, cv::COLOR_RGB2GRAY);
    gray.convertTo(gray, CV_32F);
    cv::GaussianBlur(gray, L.blur, {0, 0}, kDetailSigma);
    L.blur_at = r.tl();
  }
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
  // The face's skin hue: its colour per unit of luminance (per eye below, moved toward the lid's).
  const float skin_y = std::max(1.0f, 0.299f * skin_[0] + 0.587f * skin_[1] + 0.114f * skin_[2]);
  const float face_hue[3] = {skin_[0] / skin_y, skin_[1] / skin_y, skin_[2] / skin_y};
  float skin_hue_[3] = {face_hue[0], face_hue[1], face_hue[2]};
  // Gives `val` (RGB) the skin's hue by `wgt`, keeping its luminance.
  auto skin_hue = [&](float* val, float wgt) {
    if (wgt <= 0) return;
    const float y = 0.299f * val[0] + 0.587f * val[1] + 0.114f * val[2];
    for (int c = 0; c < 3; ++c) val[c] += wgt * (skin_hue_[c] * y - val[c]);
  };
  const float lash_in = float(smooth01((lid - 0.2) / 0.6));
  const float eyeball = 1 - 0.55f * lid;
  for (int e = 0; e < 2; ++e) {
    const Lid& L = lids_[e];
    // How small the eye is (kSmallEye), and what that makes of its lash line and lower lid.
    const float small = 1 - float(smooth01((L.w - kSmallEye) / kSmallEye));
    auto mix = [small](float large_eye, float small_eye) {
      return large_eye + small * (small_eye - large_eye);
    };
    const float darkening = mix(kLashDarkening, kSmallLashDarkening), lash = darkening * lash_in;
    const float lash_shade = mix(kLashShade, kSmallLashShade), lash_min = mix(kLashMin, kSmallLashMin);
    const float rise = mix(kLowerRise, kSmallLowerRise), low_smooth = mix(kLowSmooth, kSmallLowSmooth);
    // The shut lid's hue: the face's lit skin's moved toward the lid's own.
    for (int c = 0; c < 3; ++c) skin_hue_[c] = face_hue[c] + kLidOwnHue * (L.hue[c] - face_hue[c]);
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
    // Where the lids meet: the lower lid risen by `rise` of the opening, so the shut lid's
    // lash line follows the lower lid's curve (as a closed eye's does).
    auto margin = [&](float x) {
      const float u = at(cu, x), l = at(cl, x);
      return u + lid * (1 - rise) * (l - u);
    };
    auto lower_now = [&](float x) {
      const float u = at(cu, x), l = at(cl, x);
      return l - lid * rise * (l - u);
    };
    const float band = kLowerBand * L.h, pad = mix(kLowerPad, kSmallLowerPad) * L.h * lid;
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
    // How much of it: none on an eye under kSmallEye px wide (a lid of a few pixels has no
    // texture to show, and on a small dark eye what was put back left the shut eye's pixels
    // close to the open eye's), all from twice that.
    const float fine_share = 1 - small;
    // The photo's fine texture at rest pixel `sp` whose colour is `raw`: its luminance minus the
    // blurred one, clamped.
    auto detail = [&](cv::Point2f sp, const uint8_t* raw) {
      if (L.blur.empty() || fine_share <= 0) return 0.0f;
      const float bx = sp.x - float(L.blur_at.x), by = sp.y - float(L.blur_at.y);
      const int ix = std::clamp(int(std::floor(bx)), 0, L.blur.cols - 2),
                iy = std::clamp(int(std::floor(by)), 0, L.blur.rows - 2);
      const float fx = std::clamp(bx - float(ix), 0.0f, 1.0f), fy = std::clamp(by - float(iy), 0.0f, 1.0f);
      const float* r0 = L.blur.ptr<float>(iy) + ix;
      const float* r1 = L.blur.ptr<float>(iy + 1) + ix;
      const float b0 = r0[0] + fx * (r0[1] - r0[0]), b1 = r1[0] + fx * (r1[1] - r1[0]);
      const float b = b0 + fy * (b1 - b0);
      const float y = 0.299f * raw[0] + 0.587f * raw[1] + 0.114f * raw[2];
      return std::clamp(y - b, -kDetailClamp, kDetailClamp);
    };
    // A shut lid bulges out of the socket's shadow into the light: over an ellipse from the
    // crease to the lash line, corner to corner, feathered at its edge, what the lid code drew is
    // lifted toward the face's skin at kLidLit of its lit luminance (kLidLift of the way). A
    // smooth mask over everything drawn there, so no edge of the construction shows.
    const float mx = 0.5f * L.w, mT = smooth_along(top, 4, mx), mM = margin(mx);
    const float ecy = 0.5f * (mT + mM), erx = kLitRx * L.w, ery = 0.5f * (mM - mT) + 0.35f * L.h;
    const float lit_w = kLidLift * smoothing / kLidSmoothing, lit_y = kLidLit * skin_y;
    // Writes `val` to `px`: lifted (unless it is what is left of the eye) and then darkened
    // toward the lash line's colour by `dark` (a darker shade of the skin, `lash_y` luminance
    // times `lash_shade`: a soft line, not black paint).
    // `fine` is the photo's texture there and `flat` the share of it that smoothing took out:
    // it is put back as far as smoothing and the lift took it out.
    auto finish = [&](uint8_t* px, float* val, cv::Point2f q, float dark, float lash_y = 0,
                      bool eyeball_px = false, float fine = 0, float flat = 0) {
      float kept = 1 - flat;  // the share of the photo's texture still in `val`
      if (lit_w > 0.002f && !eyeball_px) {
        const float ex = (q.x - mx) / erx, ey = (q.y - ecy) / ery, r = std::sqrt(ex * ex + ey * ey);
        const float wl = lit_w * (1 - float(smooth01((r - kLitCore) / (1 - kLitCore))));
        const float y = 0.299f * val[0] + 0.587f * val[1] + 0.114f * val[2];
        // Shaded as a dome lit from above: brightest a little above its middle, darker toward
        // the lash line and the corners.
        const float ty = lit_y * (1 - kLitShadeX * ex * ex - kLitShadeY * (ey + 0.2f) * (ey + 0.2f));
        if (wl > 0 && y < ty) {
          for (int c = 0; c < 3; ++c) val[c] += wl * (skin_hue_[c] * ty - val[c]);
          kept *= 1 - wl;
        }
      }
      if (fine != 0 && !eyeball_px) {
        const float add = (1 - kept) * (1 - std::min(1.0f, dark / darkening)) * fine_share * fine;
        for (int c = 0; c < 3; ++c) val[c] += add;
      }
      if (dark > 0)
        for (int c = 0; c < 3; ++c) val[c] += dark * (lash_shade * lash_y * skin_hue_[c] - val[c]);
      for (int c = 0; c < 3; ++c) px[c] = uint8_t(std::clamp(val[c], 0.0f, 255.0f));
    };
    // One point of the lid, the lash line, what is left of the eye or the lower lid (`q` in the
    // eye's axes, between the band's top and the lower lid's band), into `px`.
    auto lid_px = [&](cv::Point2f q, uint8_t* px) {
      const float T = smooth_along(top, 4, q.x), M = margin(q.x);
      const float D = at(cl, q.x) + band;
      q.y = std::clamp(q.y, T, std::max(T, D));  // (T < D but for a degenerate eye)
      const float B = std::max(M, lower_now(q.x));
      const float u = q.x / L.w;
      const float taper = float(smooth01(std::min(u, 1 - u) / kTaper));
      // The lash line: a soft line hanging just below the margin, not a hard bar.
      const float ls = std::max(lash_min, kLashWidth * L.h), ld = (q.y - M - 0.3f * ls) / ls;
      const float dark = lash * taper * std::exp(-ld * ld);
      cv::Point2f sp, fine_at;
      bool fine_from_top = false;  // the band: its texture from `fine_at`, not from `sp`
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
        // The texture put back comes 1:1 from the band's top down (mirrored at its foot), not
        // stretched: stretched, the skin's fine lines ran down the lid as streaks.
        const float span = std::max(1.0f, Ur - lw0 - Tr), d = std::fmod(std::max(0.0f, q.y - T), 2 * span);
        fine_at = L.o + L.ex * q.x + L.ey * (Tr + (d > span ? 2 * span - d : d));
        fine_from_top = true;
        // From the band's top as smooth as the crease above it (no edge between them), fully
        // further down.
        w = smoothing * (1 - keep * float(smooth01((v - 0.85f) / 0.15f))) *
            (kAboveSmoothing + (1 - kAboveSmoothing) * float(smooth01(v / 0.5f)));
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
        low_w = low_smooth * smoothing * (1 - float(smooth01(v / kLowSmoothShare))) * taper;
      }
      bilinear(base_, sp.x, sp.y, px);
      float fine = 0;
      if (mul >= 1 && fine_share > 0) {
        if (fine_from_top) {
          uint8_t raw[3];
          bilinear(base_, fine_at.x, fine_at.y, raw);
          fine = detail(fine_at, raw);
        } else {
          fine = detail(sp, px);
        }
      }
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
      // The shut lid is skin: its hue is the face's, moved a little toward the lid's own (the
      // photo's lid in a deep socket is grey or violet in shadow), its brightness what the smooth lid gives,
      // which the landmark predictor reads (on grey levels). Under the lash line too: the iris the photo's
      // lashes lie over leaves no blue sliver under a shut lid.
      const float ds = dark > 0 ? std::min(1.0f, dark / std::max(1e-3f, darkening)) : 0.0f;
      skin_hue(val, std::max(kLidSkinHue * w, ds));
      const bool eyeball_px = mul < 1;
      const float flat = low_w > 0 ? low_w : w;
      finish(px, val, q, eyeball_px ? 0 : dark, 0.299f * tone[0] + 0.587f * tone[1] + 0.114f * tone[2],
             eyeball_px, fine, flat);
    };
    // Above the band's top the open eye's crease and socket shadow flatten as the lid fills it,
    // fading with the distance from the band's top (a union of discs along it, each as high as
    // kAboveShare of the band there and at least of most of the opening or a quarter of the
    // eye's width: near the corners the band is thin, and the open eye's lashes curving into the
    // corner lie above it). Measured straight up, the fade was as narrow across as the band's
    // steep sides by the corners are steep, and the shut lid showed as a patch with hard sides.
    std::vector<float>& tops = lid_tops_;
    std::vector<float>& zones = lid_zones_;
    tops.resize(size_t(np)), zones.resize(size_t(np));
    float widest = 0;
    for (int i = 0; i < np; ++i) {
      tops[size_t(i)] = smooth_along(top, 4, float(i));
      zones[size_t(i)] =
          kAboveShare * std::max({0.6f * L.h, 0.25f * L.w, margin(float(i)) - tops[size_t(i)]}) + 0.5f;
      widest = std::max(widest, zones[size_t(i)]);
    }
    auto above = [&](cv::Point2f q) {
      float most = 0;
      const int i0 = std::max(0, int(std::floor(q.x - widest))),
                i1 = std::min(np - 1, int(std::ceil(q.x + widest)));
      for (int i = i0; i <= i1; ++i) {
        const float dx = q.x - float(i), dy = tops[size_t(i)] - q.y, z = zones[size_t(i)];
        if (std::abs(dx) >= z || dy <= -z) continue;
        const float d = std::sqrt(dx * dx + dy * dy) / z;
        if (d < 1) {
          const float uu = float(i) / L.w;
          most = std::max(
              most, (1 - float(smooth01(d))) *
                        (kAboveCorner + (1 - kAboveCorner) * float(smooth01(std::min(uu, 1 - uu) / 0.25))));
        }
      }
      return kAboveSmoothing * smoothing * most;
    };
    for (int y = box.y; y < box.y + box.height; ++y) {
      uint8_t* row = canvas.ptr<uint8_t>(y);
      for (int x = box.x; x < box.x + box.width; ++x) {
        const cv::Point2f q = loc({float(x), float(y)});
        // Pixels the lid leaves as they are are still under the lit bulge's mask.
        auto unchanged = [&] {
          uint8_t* px = row + x * 3;
          float val[3] = {float(px[0]), float(px[1]), float(px[2])};
          finish(px, val, q, 0);
        };
        if (q.x <= 0 || q.x >= L.w) {
          // Beside the corners the open eye's lash line and crease run on: they fade toward the
          // lid's tone as it closes, so no outline of the open eye is left around the shut one.
          // (And the zone above the band reaches round them.)
          const float d = q.x < 0 ? -q.x : q.x - L.w, ext = kSideExt * L.w;
          const float cy = q.x < 0 ? at(cu, 0) : at(cu, L.w);
          float wv = q.y < cy && smoothing > 0 ? above(q) : 0.0f;
          if (d < ext && smoothing > 0) {
            const float f = 1 - d / ext;
            const float up = kSideUp * L.h * f, down = kSideDown * L.h * f;
            if (q.y >= cy - up && q.y <= cy + down) {
              const float vy =
                  q.y < cy ? (cy - q.y) / std::max(1e-3f, up) : (q.y - cy) / std::max(1e-3f, down);
              wv = std::max(
                  wv, kSideSmoothing * smoothing * float(smooth01(f / 0.7)) * (1 - float(smooth01(vy))));
            }
          }
          if (wv <= 0) {
            unchanged();
            continue;
          }
          const size_t ci = size_t(std::clamp(int(q.x < 0 ? 0.2f * L.w : 0.8f * L.w), 0, n - 1)) * 3;
          uint8_t* px = row + x * 3;
          float val[3];
          const float fine = detail(L.o + L.ex * q.x + L.ey * q.y, px);
          for (int c = 0; c < 3; ++c) val[c] = px[c] + wv * (L.tone[ci + c] - px[c]);
          skin_hue(val, kLidSkinHue * wv);
          finish(px, val, q, 0, 0, false, fine, wv);
          continue;
        }
        const float T = smooth_along(top, 4, q.x), M = margin(q.x);
        const float Bf = at(cl, q.x), D = Bf + band;
        if (q.y < T) {
          // Above the lid (the zone above).
          const float wa = above(q);
          if (wa <= 0) {
            unchanged();
            continue;
          }
          const float* tone = &L.tone[size_t(std::clamp(int(q.x + 0.5f), 0, n - 1)) * 3];
          uint8_t* px = row + x * 3;
          float val[3];
          const float fine = detail(L.o + L.ex * q.x + L.ey * q.y, px);
          for (int c = 0; c < 3; ++c) val[c] = px[c] + wa * (tone[c] - px[c]);
          skin_hue(val, kLidSkinHue * wa);
          finish(px, val, q, 0, 0, false, fine, wa);
          continue;
        }
        if (q.y > D) {
          unchanged();
          continue;
        }
        // Between the lid's margin and what is left of the eye, and between that and the lower
        // lid, a pixel takes the mean of four samples down its height: a falling margin drawn
        // pixel by pixel showed as stair steps with the lashes 1:1 along it.
        const float B = std::max(M, lower_now(q.x)), near = 0.75f * k;
        uint8_t* px = row + x * 3;
        if (std::abs(q.y - M) >= near && std::abs(q.y - B) >= near) {
          lid_px(q, px);
          continue;
        }
        int acc[3] = {0, 0, 0};
        for (float o : {-0.375f, -0.125f, 0.125f, 0.375f}) {
          uint8_t sub[3];
          lid_px(loc({float(x), float(y) + o}), sub);
          for (int c = 0; c < 3; ++c) acc[c] += sub[c];
        }
        for (int c = 0; c < 3; ++c) px[c] = uint8_t((acc[c] + 2) / 4);
      }
    }
  }
}

}  // namespace imago::avatar::internal
