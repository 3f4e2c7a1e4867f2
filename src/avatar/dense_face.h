// Private to src/avatar: the face detector and dense face mesh (docs/avatar.md, "Landmarks and
// licensing"). MediaPipe's BlazeFace finds faces and scores them, MediaPipe's face mesh places 468
// points and scores again whether what it sees is a face, the iris model adds 5 points per eye
// (478 in all), and FaceRes estimates the face's gender and age for the default voice. The models
// come from the npm package @vladmandic/human, converted to ONNX at setup time
// (scripts/face_models/) and run with OpenCV's dnn module.
#pragma once
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <vector>

#include "avatar/internal.h"
#include "util/status.h"

namespace imago::avatar::internal {

// The folder with blazeface.onnx, facemesh.onnx, iris.onnx and faceres.onnx: IMAGO_FACE_MODELS_DIR,
// else the folder scripts/setup.sh writes (/usr/local/share/imago/face-models).
std::string face_models_dir();

// Points of the dense mesh: 468 of the face mesh, then 5 per eye from the iris model (centre
// first), the subject's right eye (image left) before the left one.
inline constexpr int kMeshPoints = 468;
inline constexpr int kMeshPointsWithIrises = 478;

// The acceptance rule (docs/avatar.md "Is there a face?"): BlazeFace's score at least
// kDetectorMinScore and the face mesh's own face score at least kMeshMinScore. On the test
// photos real faces score 0.84-0.93 and 0.9997-1; the best non-faces 0.51 / 0.70 (a toy), 0.48 /
// 0.92 (a squirrel) and 0.66 / 0.998 (a rendered robot).
inline constexpr double kDetectorMinScore = 0.7;
inline constexpr double kMeshMinScore = 0.9;

struct DenseFace {
  cv::Rect2d box;             // BlazeFace's box, image pixels
  double detector_score = 0;  // BlazeFace, 0..1
  double mesh_score = 0;      // the face mesh's face flag, 0..1
  // 478 points (x, y in image pixels; z in the same scale, negative toward the camera); empty
  // when mesh_score is below kMeshMinScore.
  std::vector<cv::Point3d> mesh;
  cv::Mat crop;  // the aligned 192x192 RGB crop the mesh ran on (FaceRes uses it)
};

// Every candidate BlazeFace scores at least `min_detector_score`, accepted faces first, then by
// size and score, each with its mesh score (and mesh when accepted). kInternal when the models
// are missing (scripts/setup.sh).
Result<std::vector<DenseFace>> find_dense_faces(const cv::Mat& bgr,
                                                double min_detector_score = kDetectorMinScore);
bool dense_face_models_available();

// A face that passes the acceptance rule.
inline bool accepted(const DenseFace& f) {
  return f.detector_score >= kDetectorMinScore && f.mesh_score >= kMeshMinScore && !f.mesh.empty();
}

// The 68 points of the iBUG layout taken from the mesh through a fixed index map (kMeshTo68 in
// dense_face.cpp; docs/avatar.md lists it), for the renderer.
Landmarks68 landmarks68_from_mesh(const std::vector<cv::Point3d>& mesh);

// FaceRes on the mesh's crop: probability that the face is a woman's (0..1) and an age in years.
// nullopt when faceres.onnx is not installed (it is optional: the default voice then comes from
// the agent id).
std::optional<FaceEstimate> estimate_face(const DenseFace& face);

}  // namespace imago::avatar::internal
