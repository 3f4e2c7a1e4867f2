// Test helper: the process-wide espeak-ng Engine shared by the speech unit tests (espeak-ng can
// be initialized once per process). Only for *_test.cpp.
#pragma once
#include <filesystem>
#include <memory>

#include "speech/engine.h"

namespace imago::speech {

inline Engine& test_engine() {
  static std::unique_ptr<Engine> engine = [] {
    auto dir = std::filesystem::temp_directory_path() / ("imago-speech-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto e = Engine::create(dir.string());
    if (!e.ok()) throw std::runtime_error(e.status().message());
    return std::move(e.value());
  }();
  return *engine;
}

}  // namespace imago::speech
