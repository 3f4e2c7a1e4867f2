// libFuzzer target for the .imx reader: any input must be rejected cleanly or parse into a model
// that re-serializes and parses again. Build: see docs/imx-format.md "Fuzzing".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "avatar/gestures.h"
#include "avatar/imx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto f = imago::avatar::read_imx(bytes);
  if (!f.ok()) {
    if (f.status().message().empty()) std::abort();  // every rejection carries a reason
    return 0;
  }
  // Accepted input: writing it back must give a file the reader accepts with the same manifest.
  std::string again = imago::avatar::write_imx(f->manifest, f->chunks);
  auto g = imago::avatar::read_imx(again);
  if (!g.ok() || g->chunks.size() != f->chunks.size() ||
      imago::avatar::manifest_to_json(g->manifest) != imago::avatar::manifest_to_json(f->manifest))
    std::abort();
  // The gesture chunk is parsed at load time too: parse it and evaluate every gesture.
  if (const std::string* gest = f->find(imago::avatar::kChunkGestures)) {
    auto gestures = imago::avatar::internal::parse_gestures(*gest);
    if (gestures.ok()) {
      for (const auto& [name, def] : *gestures) {
        for (double u : {0.0, 0.37, 1.0}) {
          imago::avatar::internal::Pose pose;
          imago::avatar::internal::evaluate_gesture(def, u, u * def.default_duration_s, pose);
        }
      }
    }
  }
  // And any input as a gesture chunk on its own.
  (void)imago::avatar::internal::parse_gestures(bytes);
  return 0;
}
