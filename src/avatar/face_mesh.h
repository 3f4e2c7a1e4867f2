// The face mesh behind the renderer (docs/avatar.md "How the face moves"): the 68 landmarks plus
// forehead points and three rings of points around the head, triangulated once per model. Each
// frame moves the points for a pose and warps the photo piecewise-affinely, triangle by
// triangle, from the rest positions. Private to src/avatar.
#pragma once
#include <opencv2/core.hpp>
#include <utility>
#include <vector>

#include "avatar/gestures.h"
#include "avatar/internal.h"
#include "avatar/warp_row.h"
#include "util/status.h"

namespace imago::avatar {
class AvatarModel;
}

namespace imago::avatar::internal {

struct FaceMesh {
  enum Kind : uint8_t { kSkin, kEyeLeft, kEyeRight, kMouthInterior };
  struct Tri {
    int v[3];
    Kind kind;
  };
  std::vector<cv::Point2f> rest;   // 0..67 landmarks, then forehead, ring and under-jaw points
  std::vector<float> head_weight;  // 1 moves with the head, 0 stays (outer ring)
  std::vector<float> depth;        // how far a point shifts when the head turns (yaw)
  std::vector<Tri> tris;
  cv::Rect region;                  // frame pixels the mesh can touch
  cv::Point2f ux, uy;               // face axes: eye line, and down the face
  cv::Point2f pivot;                // head rotation centre (the neck)
  float ed = 0;                     // eye distance, pixels
  float mw = 0;                     // mouth width, pixels
  float fw = 0;                     // jaw width, pixels
  float rest_gap[3] = {0, 0, 0};    // inner-lip openings at rest (61-67, 62-66, 63-65)
  bool mouth_open_at_rest = false;  // the photo's own mouth is open: its interior is warped
  float teeth_at_rest = 0;          // share of that opening's rows brighter than the lips (fit_open_mouth)
  int under_jaw = 0;                // first of the points below jaw landmarks 3..13 (beard, neck)
  int crease = 0;                   // four points above the upper lids (over 37, 38, 43, 44)
  int cheek = 0;                    // four points beside the mouth corners: above and below 48, then 54
  // Each eye's lid margins (0: the image-left eye 36..39, 1: the image-right one 42..45), corner
  // to corner, at rest: MediaPipe's dense lid contours when the model carries its mesh (the 68
  // points give only two points per lid, too few for the curve a closing lid follows), else the
  // 68 points' lids resampled.
  static constexpr int kLidPoints = 9;
  cv::Point2f lid_up[2][kLidPoints], lid_lo[2][kLidPoints];
  bool dense = false;  // the contours come from the dense mesh
};

// Builds the mesh for landmarks in a frame of `size` pixels; `dense` is MediaPipe's 478-point
// mesh in the same pixels (empty for models without one).
Result<FaceMesh> build_face_mesh(const Landmarks68& lm, cv::Size size,
                                 const std::vector<cv::Point2f>& dense = {});

// Measures the photo's open mouth (`base`: the model's RGB photo): how much of the opening its
// teeth fill (FaceMesh::teeth_at_rest).
void fit_open_mouth(FaceMesh& m, const cv::Mat& base);

// Fits the crease points to the photo (`base`: RGB): each ends the band a blink stretches at the
// brightest lid skin between 8% and 40% of the way from the upper lid up to the brow, so the band
// never carries the crease's shadow down over the eye.
void fit_lid_creases(FaceMesh& m, const cv::Mat& base);

// Point positions for a pose: `full` with every deformation (lips, jaw, lids, brows, head), and
// `rigid` with the head motion only (the eyeballs under moving lids follow it).
void deform_mesh(const FaceMesh& m, const Pose& p, std::vector<cv::Point2f>& full,
                 std::vector<cv::Point2f>& rigid);

// The buffers MeshWarper draws the mouth opening with (face_mesh.cpp, draw_opening), kept from
// frame to frame so a speaking frame allocates nothing.
struct OpeningScratch {
  std::vector<float> sd, d2, cross, lip, smooth, src;
  std::vector<uint8_t> touched;
};

// The signed distance from the centre of each pixel of `box` to the closed outline `ring`
// (negative inside), as MeshWarper draws the mouth opening with it: into scratch.sd, row by row.
// Exact within half a pixel of the outline; elsewhere, on the rows within a pixel of the
// outline's, +-1 (half a pixel or more); 1e9 on the rows beyond. Returns the first and last of
// those rows (from box.y; first > last when there are none).
std::pair<int, int> outline_distance(const std::vector<cv::Point2f>& ring, const cv::Rect& box,
                                     OpeningScratch& scratch);

// Re-warps the triangles that moved this frame or last frame into `canvas` (RGB, frame size)
// from `base`. Pixels outside m.region are never written.
class MeshWarper {
 public:
  // `base` is the photo (RGB) that draw() warps; `path` samples its rows (tests compare paths).
  MeshWarper(const FaceMesh& m, const cv::Mat& base, WarpPath path = warp_path());
  void draw(const std::vector<cv::Point2f>& full, const std::vector<cv::Point2f>& rigid, const Pose& p,
            cv::Mat& canvas);

 private:
  // One eye's lid in its rest axes (origin the outer-left corner, x toward the other corner).
  struct Lid {
    int c0 = 0, cr = 0;  // first eye landmark, first crease point
    cv::Point2f o, ex, ey;
    float w = 1;                // corner to corner, pixels
    float h = 1;                // the eye's opening in the middle, pixels
    float lash = 1;             // thickness of the lash line kept 1:1 at the falling margin
    std::vector<float> tone;    // the lid's skin colour per pixel along x (RGB)
    float hue[3] = {1, 1, 1};   // the tone's colour per unit of luminance (middle half of the eye)
    std::vector<float> bottom;  // the skin colour below the lower lid, per pixel along x
    std::vector<float> top;     // the skin colour at the top of the lid's band, per pixel along x
    std::vector<float> up, lo;  // the rest lid margins (y in these axes) per pixel along x
    // The photo's luminance around the eye, blurred (rest pixels; `blur_at` is its origin): a
    // shut lid keeps the skin's fine texture, the photo minus this.
    cv::Mat blur;
    cv::Point blur_at;
  };
  Lid lid_of(int e) const;
  void fit_skin_and_teeth();
  void draw_lids(float lid, const std::vector<cv::Point2f>& full, const std::vector<cv::Point2f>& rigid,
                 cv::Mat& canvas);
  const FaceMesh& m_;
  WarpPath path_;
  cv::Mat base_;  // shares the photo's pixels
  std::vector<uint8_t> moved_last_;
  Lid lids_[2];
  cv::Rect lid_box_[2];               // where last frame drew closing lids: the triangles there are redrawn
  float skin_[3] = {200, 150, 125};   // the face's lit skin (RGB): the shut lids' colour
  float teeth_[3] = {214, 206, 192};  // the drawn teeth's colour in full light (RGB), fitted to the photo
  float split_ = 0.5f;                // photo with an open mouth: share of its opening that is upper teeth
  OpeningScratch opening_;
  std::vector<RowSpan> spans_;  // one triangle's rows (draw)
  std::vector<float> lid_tops_,
      lid_zones_;  // per pixel along an eye: the band's top, the zone above (draw_lids)
};

// One still frame of `model` in pose `p` (RGB, the model's size), from a fresh warper: for tools
// and tests that look at poses directly (renderer.cpp).
cv::Mat render_pose(const AvatarModel& model, const Pose& p, WarpPath path = warp_path());

// Frames of `model` in `poses`, drawn one after the other by one warper as the renderer draws
// them (each redraws only what moved): for tests that compare the result with render_pose.
std::vector<cv::Mat> render_poses(const AvatarModel& model, const std::vector<Pose>& poses,
                                  WarpPath path = warp_path());

// The model's mesh (its rest points in the model's pixels), for tests that measure poses.
const FaceMesh& mesh_of(const AvatarModel& model);

}  // namespace imago::avatar::internal
