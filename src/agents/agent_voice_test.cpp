#include "agents/agent_voice.h"

#include <gtest/gtest.h>

#include "avatar/imx.h"

namespace imago::agents {
namespace {

void expect_axes(const std::optional<speech::Axes>& a, double gender, double pitch, double rate,
                 double brightness) {
  ASSERT_TRUE(a.has_value());
  EXPECT_DOUBLE_EQ(a->gender, gender);
  EXPECT_DOUBLE_EQ(a->pitch, pitch);
  EXPECT_DOUBLE_EQ(a->rate, rate);
  EXPECT_DOUBLE_EQ(a->brightness, brightness);
}

TEST(AgentVoiceJson, RoundTripKeepsEveryField) {
  AgentVoice v{"F3", speech::Axes{0.1, -0.2, 0.3, -0.4}, VoiceSource::kVoiceCode,
               "0f8fad5b-d9cb-469f-a165-70867728950e"};
  const std::string text = serialize_agent_voice(v);
  AgentVoice back = parse_agent_voice(text);
  EXPECT_EQ(back.id, "F3");
  expect_axes(back.axes, 0.1, -0.2, 0.3, -0.4);
  EXPECT_EQ(back.source, VoiceSource::kVoiceCode);
  EXPECT_EQ(back.voice_code, "0f8fad5b-d9cb-469f-a165-70867728950e");
  EXPECT_EQ(serialize_agent_voice(back), text);  // the stored bytes survive a read and a write
  for (VoiceSource s :
       {VoiceSource::kRequested, VoiceSource::kMatched, VoiceSource::kFace, VoiceSource::kDefault}) {
    AgentVoice one{"M1", std::nullopt, s, std::nullopt};
    EXPECT_EQ(parse_agent_voice(serialize_agent_voice(one)).source, s);
  }
}

TEST(AgentVoiceJson, WritesTheDocumentedShapeInItsOrder) {
  // The generation's record (docs/api/agents.md): id, axes, source, voice_code.
  AgentVoice built{"M3", speech::Axes{}, VoiceSource::kMatched, std::nullopt};
  EXPECT_EQ(
      serialize_agent_voice(built),
      R"({"id":"M3","axes":{"gender":0E0,"pitch":0E0,"rate":0E0,"brightness":0E0},"source":"matched"})");
  // A built-in voice asked for at generate has no axes yet.
  EXPECT_EQ(serialize_agent_voice(requested_voice("F3", nullptr)), R"({"id":"F3","source":"requested"})");
  EXPECT_EQ(serialize_agent_voice(AgentVoice{}), "{}");  // not decided yet
}

TEST(AgentVoiceJson, ReadsTheShapesAlreadyStored) {
  EXPECT_TRUE(parse_agent_voice("{}").id.empty());
  AgentVoice id_only = parse_agent_voice(R"({"id":"M2"})");
  EXPECT_EQ(id_only.id, "M2");
  EXPECT_FALSE(id_only.axes.has_value());
  EXPECT_EQ(id_only.source, VoiceSource::kUnknown);
  EXPECT_EQ(serialize_agent_voice(id_only), R"({"id":"M2"})");
  // generate with a designed voice wrote source and code before the axes.
  AgentVoice created = parse_agent_voice(
      R"({"id":"M4","source":"voice_code","voice_code":"0f8fad5b-d9cb-469f-a165-70867728950e",)"
      R"("axes":{"gender":0E0,"pitch":-2E-1,"rate":1E-1,"brightness":0E0}})");
  EXPECT_EQ(created.id, "M4");
  expect_axes(created.axes, 0, -0.2, 0.1, 0);
  EXPECT_EQ(created.source, VoiceSource::kVoiceCode);
  EXPECT_EQ(created.voice_code, "0f8fad5b-d9cb-469f-a165-70867728950e");
  // Integers and missing axes read as numbers and 0.
  expect_axes(parse_agent_voice(R"({"id":"F1","axes":{"pitch":1,"rate":"fast"}})").axes, 0, 1, 0, 0);
  EXPECT_EQ(parse_agent_voice(R"({"id":"F1","source":"face"})").source, VoiceSource::kFace);
}

TEST(AgentVoiceJson, GarbageIsAnUndecidedVoice) {
  for (const char* text : {"", "not json", "[]", "\"M1\"", "null", R"({"id":3})", R"({"id":""})",
                           R"({"axes":{"pitch":0.5},"source":"requested"})", "{\"id\":\"M1\""}) {
    AgentVoice v = parse_agent_voice(text);
    EXPECT_TRUE(v.id.empty()) << text;
    EXPECT_FALSE(v.axes.has_value()) << text;
    EXPECT_EQ(serialize_agent_voice(v), "{}") << text;
  }
  // Fields of the wrong type are left out; the voice stays.
  AgentVoice odd = parse_agent_voice(R"({"id":"M5","axes":[1,2],"source":7,"voice_code":false})");
  EXPECT_EQ(odd.id, "M5");
  EXPECT_FALSE(odd.axes.has_value());
  EXPECT_EQ(odd.source, VoiceSource::kUnknown);
  EXPECT_FALSE(odd.voice_code.has_value());
}

TEST(AgentVoiceJson, AnUnknownSourceIsReadAsUnknownAndNotWrittenBack) {
  AgentVoice v = parse_agent_voice(R"({"id":"F2","source":"cloned"})");
  EXPECT_EQ(v.id, "F2");
  EXPECT_EQ(v.source, VoiceSource::kUnknown);
  EXPECT_EQ(serialize_agent_voice(v), R"({"id":"F2"})");
}

TEST(AgentVoiceChoice, ADesignedVoiceWinsWithItsBaseVoiceAndAxes) {
  DesignedVoice d;
  d.code = "0f8fad5b-d9cb-469f-a165-70867728950e";
  d.base_voice = "M4";
  d.pitch = -0.2;
  d.rate = 0.1;
  AgentVoice v = requested_voice("F1", &d);
  EXPECT_EQ(v.id, "M4");
  expect_axes(v.axes, 0, -0.2, 0.1, 0);
  EXPECT_EQ(v.source, VoiceSource::kVoiceCode);
  EXPECT_EQ(v.voice_code, d.code);
}

TEST(AgentVoiceChoice, TheBuiltVoiceSaysWhoChoseIt) {
  avatar::Manifest m;
  m.voice = "F4";
  m.axes = {0, 0.3, 0, 0};
  AgentVoice chosen = built_voice({}, m);
  EXPECT_EQ(chosen.id, "F4");
  expect_axes(chosen.axes, 0, 0.3, 0, 0);
  EXPECT_EQ(chosen.source, VoiceSource::kDefault);
  m.face_estimate = avatar::FaceEstimate{0.9, 30};
  EXPECT_EQ(built_voice({}, m).source, VoiceSource::kFace);
  m.voice_match = avatar::VoiceMatch{};
  EXPECT_EQ(built_voice({}, m).source, VoiceSource::kMatched);  // a sample outranks the face
  EXPECT_EQ(built_voice(requested_voice("F4", nullptr), m).source, VoiceSource::kRequested);
  AgentVoice designed = built_voice({"F4", speech::Axes{}, VoiceSource::kVoiceCode, "abc"}, m);
  EXPECT_EQ(designed.source, VoiceSource::kVoiceCode);
  EXPECT_EQ(designed.voice_code, "abc");
  // A requested voice with a code but no source (never written, but readable) is still a designed one.
  EXPECT_EQ(built_voice(parse_agent_voice(R"({"id":"F4","voice_code":"abc"})"), m).source,
            VoiceSource::kVoiceCode);
}

TEST(AgentVoiceChoice, AModelSpeaksWithItsVoiceUnlessTheCallerNamesOne) {
  avatar::Manifest m;
  m.voice = "F2";
  m.axes = {0.5, 0, 0, 0};
  m.language = "de";
  speech::VoiceSettings own = model_voice_settings(m);
  EXPECT_EQ(own.voice, "F2");
  EXPECT_DOUBLE_EQ(own.axes.gender, 0.5);
  EXPECT_EQ(own.language, "de");
  speech::VoiceSettings other = model_voice_settings(m, std::string("M1"));
  EXPECT_EQ(other.voice, "M1");
  EXPECT_DOUBLE_EQ(other.axes.gender, 0);  // the model's tuning stays with its own voice
  EXPECT_EQ(other.language, "de");
  m.voice.clear();
  m.language.clear();
  speech::VoiceSettings defaults = model_voice_settings(m);
  EXPECT_EQ(defaults.voice, speech::VoiceSettings{}.voice);
  EXPECT_EQ(defaults.language, speech::VoiceSettings{}.language);
}

}  // namespace
}  // namespace imago::agents
