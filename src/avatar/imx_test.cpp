#include "avatar/imx.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "avatar/gestures.h"
#include "util/crypto.h"

namespace imago::avatar {
namespace {

Manifest sample_manifest() {
  Manifest m;
  m.model_type = "expression";
  m.agent_id = "agent_1";
  m.name = "Ada";
  m.created_at = "2026-11-21T19:00:00Z";
  m.width = 1280;
  m.height = 720;
  m.face = {500, 200, 280, 300};
  m.left_eye = {580, 320};
  m.right_eye = {700, 320};
  m.mouth = {640, 430};
  m.mouth_width = 110;
  m.eyes_detected = true;
  m.voice = "F3";
  m.axes = {0.1, -0.2, 0.05, 0.3};
  m.voice_match = VoiceMatch{210.5, 2400, 4.1, 3.2, 0.7};
  m.visemes = 10;
  m.prosody = true;
  m.seed = 4000000000u;
  return m;
}

std::vector<ImxChunk> sample_chunks() {
  return {
      {"APPR", std::string(1000, 'a')}, {"GEST", "{\"gestures\":{}}"}, {"VOIC", std::string("\0\1\2", 3)}};
}

void put_u32(std::string& b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

TEST(ImxFormat, RoundTripKeepsManifestAndChunks) {
  std::string bytes = write_imx(sample_manifest(), sample_chunks());
  auto f = read_imx(bytes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const Manifest& m = f->manifest;
  EXPECT_EQ(f->version_major, kImxMajor);
  EXPECT_EQ(m.model_type, "expression");
  EXPECT_EQ(m.agent_id, "agent_1");
  EXPECT_EQ(m.name, "Ada");
  EXPECT_EQ(m.voice, "F3");
  EXPECT_DOUBLE_EQ(m.axes.pitch, -0.2);
  EXPECT_DOUBLE_EQ(m.face.w, 280);
  EXPECT_DOUBLE_EQ(m.mouth.y, 430);
  ASSERT_TRUE(m.voice_match.has_value());
  EXPECT_DOUBLE_EQ(m.voice_match->median_f0_hz, 210.5);
  EXPECT_EQ(m.seed, 4000000000u);
  EXPECT_TRUE(m.prosody);
  ASSERT_EQ(f->chunks.size(), 3u);
  EXPECT_EQ(*f->find("APPR"), std::string(1000, 'a'));
  EXPECT_EQ(f->find("VOIC")->size(), 3u);
  EXPECT_EQ(f->find("LIDS"), nullptr);
  // Writing what we read gives the same bytes (stable serialization).
  EXPECT_EQ(write_imx(f->manifest, f->chunks), bytes);
}

TEST(ImxFormat, TheDenseMeshAndTheFaceEstimateRoundTrip) {
  DenseMesh mesh;
  for (size_t i = 0; i < kMeshPointCount; ++i)
    mesh.points.push_back({100.0 + i, 200.5 - i * 0.25, -3.0 + i * 0.01});
  Manifest m = sample_manifest();
  m.face_estimate = FaceEstimate{0.83, 31.4};
  auto chunks = sample_chunks();
  chunks.push_back({std::string(kChunkMesh), mesh_to_json(mesh)});
  auto f = read_imx(write_imx(m, chunks));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->skipped.empty());
  ASSERT_TRUE(f->manifest.face_estimate.has_value());
  EXPECT_DOUBLE_EQ(f->manifest.face_estimate->female, 0.83);
  EXPECT_DOUBLE_EQ(f->manifest.face_estimate->age, 31.4);
  ASSERT_NE(f->find(kChunkMesh), nullptr);
  auto back = mesh_from_json(*f->find(kChunkMesh));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->points.size(), kMeshPointCount);
  EXPECT_EQ(back->source, "mediapipe");
  EXPECT_NEAR(back->points[477].x, 577, 0.01);
  EXPECT_NEAR(back->points[477].z, 1.77, 0.01);
  // A file without the estimate or the mesh (1.1) reads as before.
  auto old = read_imx(write_imx(sample_manifest(), sample_chunks()));
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->manifest.face_estimate.has_value());
  EXPECT_EQ(old->find(kChunkMesh), nullptr);
  // Bad meshes are refused with a clear message.
  EXPECT_FALSE(mesh_from_json("[]").ok());
  EXPECT_FALSE(mesh_from_json(R"({"points": [[1, 2, 3]]})").ok());
  mesh.points.pop_back();
  auto short_mesh = mesh_from_json(mesh_to_json(mesh));
  ASSERT_FALSE(short_mesh.ok());
  EXPECT_EQ(short_mesh.status().message(), "corrupt .imx: mesh chunk needs 478 points");
}

TEST(ImxFormat, UnknownChunksAndManifestFieldsAreKept) {
  auto chunks = sample_chunks();
  chunks.push_back({"ZZZZ", "future data"});
  std::string bytes = write_imx(sample_manifest(), chunks);
  auto f = read_imx(bytes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->chunks.size(), 3u);
  ASSERT_EQ(f->skipped.size(), 1u);
  EXPECT_EQ(f->skipped[0], "ZZZZ");

  // A newer minor version with extra manifest fields still reads, and a rewrite keeps them.
  Manifest m = sample_manifest();
  m.version_minor = 7;
  m.raw_json = R"({"format":"imx","future_field":{"x":1}})";
  auto g = read_imx(write_imx(m, sample_chunks()));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->version_minor, 7);
  EXPECT_NE(manifest_to_json(g->manifest).find("future_field"), std::string::npos);
}

TEST(ImxFormat, RejectsNewerMajorVersion) {
  Manifest m = sample_manifest();
  m.version_major = kImxMajor + 1;
  auto f = read_imx(write_imx(m, sample_chunks()));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  EXPECT_NE(f.status().message().find("unsupported .imx version 2."), std::string::npos)
      << f.status().message();
}

TEST(ImxFormat, RejectsNotImx) {
  for (std::string s :
       {std::string(), std::string("hello"), std::string(100, '\0'), std::string("\x89PNG\r\n\x1a\n....")}) {
    auto f = read_imx(s);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("not an .imx"), std::string::npos);
  }
}

TEST(ImxFormat, RejectsEveryTruncation) {
  std::string bytes = write_imx(sample_manifest(), sample_chunks());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto f = read_imx(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(f.ok()) << "accepted a file truncated to " << n << " bytes";
    EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  }
  auto f = read_imx(bytes.substr(0, bytes.size() - 10));
  EXPECT_NE(f.status().message().find("truncated"), std::string::npos) << f.status().message();
}

TEST(ImxFormat, RejectsEverySingleBitFlipInHeadersAndData) {
  std::string bytes = write_imx(sample_manifest(), sample_chunks());
  // Every byte flipped at one bit: the CRCs (or structure checks) catch each one.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string c = bytes;
    c[i] ^= 0x10;
    auto f = read_imx(c);
    EXPECT_FALSE(f.ok()) << "accepted a flip at byte " << i;
  }
  std::string c = bytes;
  c[bytes.size() - 500] ^= 1;  // inside APPR data
  auto f = read_imx(c);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("chunk APPR checksum mismatch"), std::string::npos)
      << f.status().message();
}

TEST(ImxFormat, RejectsTrailingBytesAndHugeLengths) {
  std::string bytes = write_imx(sample_manifest(), sample_chunks());
  EXPECT_FALSE(read_imx(bytes + "x").ok());
  // A chunk length field claiming 2^63 bytes is truncation, not an allocation.
  std::string c = bytes;
  size_t off = kImxHeaderSize + 8;
  c[off + 7] = static_cast<char>(0x80);
  auto f = read_imx(c);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("truncated"), std::string::npos);
}

TEST(ImxFormat, ValidatesManifestSemantics) {
  Manifest m = sample_manifest();
  m.model_type = "photoreal";
  auto f = read_imx(write_imx(m, {}));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("model_type"), std::string::npos);
  m = sample_manifest();
  m.face = {1200, 600, 500, 500};
  EXPECT_FALSE(read_imx(write_imx(m, {})).ok());
  m = sample_manifest();
  m.width = 100000;
  EXPECT_FALSE(read_imx(write_imx(m, {})).ok());

  // A manifest field of the wrong type names the field. Rebuild the MANI chunk by hand.
  std::string json = R"({"format":"imx","version":"1.0","frame":{"width":"wide"}})";
  std::string file = write_imx(sample_manifest(), {});
  std::string head = file.substr(0, kImxHeaderSize);
  std::string chunk = "MANI";
  chunk += std::string(4, '\0');
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  chunk += len;
  chunk += std::string(8, '\0');
  put_u32(chunk, 16, crc32(chunk.substr(0, 16) + json));  // CRC covers type, flags, length, data
  auto g = read_imx(head + chunk + json);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("frame.width"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace imago::avatar

namespace imago::avatar {
namespace {

TEST(ImxFormat, FuzzSeedIsAValidFileWrittenByAnIndependentEncoder) {
  // fuzz_corpus/seed_min.imx was written by a few lines of Python from docs/imx-format.md, so this
  // also checks that the document describes the format exactly.
  std::ifstream in(IMAGO_AVATAR_SOURCE_DIR "/fuzz_corpus/seed_min.imx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  auto f = read_imx(bytes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->manifest.agent_id, "seed");
  EXPECT_EQ(f->manifest.voice, "F1");
  ASSERT_EQ(f->skipped.size(), 1u);
  EXPECT_EQ(f->skipped[0], "ZZZZ");

  std::ifstream in2(IMAGO_AVATAR_SOURCE_DIR "/fuzz_corpus/seed_gestures.imx", std::ios::binary);
  std::string bytes2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  auto g = read_imx(bytes2);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto gestures = internal::parse_gestures(*g->find(kChunkGestures));
  ASSERT_TRUE(gestures.ok());
  EXPECT_EQ(gestures->size(), 5u);
  EXPECT_EQ(*g->find(kChunkGestures), internal::default_gestures_json()) << "regenerate the fuzz seed";
}

}  // namespace
}  // namespace imago::avatar
