#include "speech/speech_service.h"

#include <soxr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "config/config.h"
#include "speech/dsp.h"
#include "speech/languages.h"
#include "speech/speech_engines.h"
#include "speech/text.h"
#include "speech/timing_carry.h"
#include "speech/voices.h"
#include "util/cpu_cores.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/thread_name.h"

namespace imago::speech {

SpeechOptions speech_options_from_config(const Config& cfg) {
  SpeechOptions o;
  o.workers = std::max(1, cfg.tts_workers > 0 ? cfg.tts_workers : usable_cores());
  o.queue = std::max(0, cfg.tts_queue);
  o.account_queue = std::max(1, cfg.tts_account_queue);
  o.max_chars = cfg.tts_max_chars;
  o.max_audio_s = cfg.tts_max_audio_s;
  return o;
}

namespace {

// One request: its sentences and where synthesis has got to. A worker advances it one sentence
// per slice (see SynthesisScheduler); only that worker touches next_sentence and raw_used.
struct Job : SynthesisTask {
  std::vector<std::string> sentences;
  size_t next_sentence = 0;
  int64_t raw_used = 0;  // engine samples produced so far (against max_raw_samples)
  VoiceSettings settings;
  SpeechEngine* engine = nullptr;  // chosen for the voice and language (speech_engines.h)
  std::string engine_voice;
  VoiceDefinition definition;
  std::string espeak_voice;
  Quality quality;
  int64_t max_raw_samples = 0;  // engine samples allowed before `speed` (the audio cap)

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Audio> ready;
  bool done = false;
  Status status;
  std::atomic<bool> cancelled{false};
};

// Speed (time-stretch keeping pitch) and output rate (kEngineSampleRate when none is asked for;
// the engines deliver at their own rates). Runs on the thread that reads the stream
// (a handler or stream-producer thread), so it overlaps the worker's engine work on the next
// sentence instead of delaying it. Streams across pieces that continue one another (chunks of a
// sentence, Audio::continues), so a chunk cut inside sound joins without a seam; each sentence's
// end flushes it.
class ReaderFinish {
 public:
  explicit ReaderFinish(const Job& job)
      : speed_(std::abs(job.settings.speed - 1.0) > 1e-4 ? job.settings.speed : 1.0),
        out_rate_(job.settings.output_rate ? job.settings.output_rate : kEngineSampleRate),
        quality_(job.quality),
        carry_(1 / speed_) {}

  Audio operator()(Audio a) {
    if (speed_ == 1.0 && out_rate_ == a.sample_rate) return a;  // nothing to do
    const bool last = !a.continues;
    const int rate = a.sample_rate;
    if (!stretch_) stretch_ = std::make_unique<StreamingStretch>(rate, speed_, quality_);
    if (!resampler_ && out_rate_ != rate) {
      // From an engine's own rate this is the only conversion, made at no less than the voice
      // finisher's high quality that it replaces (fewer steps then save only the stretch).
      Quality q = quality_;
      if (rate != kEngineSampleRate) q.soxr_recipe = std::max(q.soxr_recipe, static_cast<int>(SOXR_HQ));
      resampler_ = std::make_unique<StreamingResampler>(rate, out_rate_, q);
    }
    carry_.add_input(a.words, a.phonemes, a.duration_s());
    std::vector<int16_t> stretched, out;
    stretch_->push(a.samples.data(), a.samples.size(), stretched);
    if (last) stretch_->flush(stretched);
    int out_rate = rate;
    if (resampler_) {
      Status st = resampler_->push(stretched.data(), stretched.size(), out);
      if (st.ok() && last) st = resampler_->flush(out);
      if (st.ok())
        out_rate = out_rate_;
      else
        out = std::move(stretched);  // soxr fails only without memory: keep the engine's rate
    } else {
      out = std::move(stretched);
    }
    Audio r = carry_.emit(std::move(out), out_rate, last);
    r.continues = a.continues;
    return r;
  }

 private:
  double speed_;
  int out_rate_;
  Quality quality_;
  std::unique_ptr<StreamingStretch> stretch_;
  std::unique_ptr<StreamingResampler> resampler_;
  TimingCarry carry_;
};

class JobStream final : public SpeechStream {
 public:
  explicit JobStream(std::shared_ptr<Job> job) : job_(std::move(job)), finish_(*job_) {}
  ~JobStream() override { job_->cancelled = true; }
  Result<std::optional<Audio>> next() override {
    std::unique_lock lock(job_->mu);
    job_->cv.wait(lock, [&] { return !job_->ready.empty() || job_->done; });
    if (job_->ready.empty()) {
      if (!job_->status.ok()) return job_->status;
      return std::optional<Audio>();
    }
    Audio a = std::move(job_->ready.front());
    job_->ready.pop_front();
    lock.unlock();
    return std::optional<Audio>(finish_(std::move(a)));
  }

 private:
  std::shared_ptr<Job> job_;
  ReaderFinish finish_;
};

// The samples of `a` counted at kEngineSampleRate (the unit of the audio cap).
int64_t at_engine_rate(const Audio& a) {
  return a.sample_rate > 0 ? static_cast<int64_t>(a.samples.size()) * kEngineSampleRate / a.sample_rate
                           : static_cast<int64_t>(a.samples.size());
}

// Appends `b` to `a`, shifting b's timings by a's duration.
void append_audio(Audio& a, const Audio& b) {
  double off = a.duration_s();
  a.samples.insert(a.samples.end(), b.samples.begin(), b.samples.end());
  for (auto w : b.words) {
    w.start_s += off;
    w.end_s += off;
    a.words.push_back(std::move(w));
  }
  for (auto p : b.phonemes) {
    p.start_s += off;
    p.end_s += off;
    a.phonemes.push_back(std::move(p));
  }
}

class SpeechServiceImpl final : public SpeechService {
 public:
  SpeechServiceImpl(SpeechOptions opts, SpeechEngines engines)
      : opts_(std::move(opts)),
        engines_(std::move(engines)),
        scheduler_(SchedulerLimits{opts_.workers + opts_.queue, opts_.account_queue}) {}

  ~SpeechServiceImpl() override {
    stopping_ = true;  // running jobs stop at their next sentence
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    for (auto& j : scheduler_.drain())
      finish(static_cast<Job&>(*j), Status::Unavailable("speech service stopped"));
  }

  // Offers a language only when espeak-ng reads its native sample sentence correctly (phonemes
  // compared with a known reading) and the engine that speaks it for M1 synthesizes audible
  // speech. Partial languages are offered with a note; texts they cannot read are refused in
  // validate().
  void verify_languages() {
    const BuiltinVoice& m1 = *find_builtin_voice("M1");
    EspeakEngine* espeak = engines_.espeak.get();
    std::unique_lock lock(espeak->mutex());
    for (const auto& c : language_candidates()) {
      if (!espeak->has_voice(c.espeak_voice)) continue;
      auto unavailable = [&](const std::string& why) {
        log::warn("speech_language_unavailable",
                  {{"language", c.code}, {"espeak_voice", c.espeak_voice}, {"reason", why}});
      };
      auto ipa = espeak->transcribe_ipa(c.sample, c.espeak_voice);
      if (!ipa.ok()) {
        unavailable(ipa.status().message());
        continue;
      }
      TranscriptionCheck check = check_transcription(*ipa, c.expected_ipa);
      if (!check.passed) {
        unavailable(check.reason + ": " + *ipa);
        continue;
      }
      EngineChoice choice = choose_engine(engines_, m1, c.code);
      EngineRequest r{c.sample, c.espeak_voice, choice.definition, 0, choice.engine_voice};
      Result<EngineResult> res = Status::Internal("not run");
      if (choice.engine == espeak) {
        res = espeak->synthesize(r);  // its mutex is held already
      } else {
        // RHVoice takes espeak-ng's mutex for its phones: release it meanwhile.
        lock.unlock();
        {
          std::lock_guard engine_lock(choice.engine->mutex());
          res = choice.engine->synthesize(r);
        }
        lock.lock();
      }
      if (!res.ok() || active_duration(res->audio.samples, res->audio.sample_rate) < 0.2) {
        unavailable("no audible speech");
        continue;
      }
      LanguageInfo info{c.code, c.espeak_voice, c.name, "", choice.engine->name()};
      if (const char* caveat = language_caveat(c.code)) info.note = caveat;
      if (const PartialLanguage* p = find_partial_language(c.code)) {
        auto full = espeak->transcribe_ipa(p->full_sample, c.espeak_voice);
        if (!full.ok() || !check_transcription(*full, p->full_expected_ipa).passed) {
          info.note = p->note;
          partial_.push_back(c.code);
        }
      }
      languages_.push_back(std::move(info));
    }
    // Leave espeak-ng in the default language, like every later request expects.
    EngineRequest en{"Ready.", "en-us", m1.espeak, 0};
    (void)espeak->synthesize(en);
  }

  void start_workers() {
    for (int i = 0; i < opts_.workers; ++i)
      workers_.emplace_back([this] {
        name_this_thread("synth");
        worker_loop();
      });
  }

  Status validate(const std::string& text, const VoiceSettings& s) const override {
    if (!is_valid_utf8(text)) return Status::Invalid("text must be valid UTF-8");
    if (is_blank(text)) return Status::Invalid("text must not be empty or only whitespace");
    size_t chars = utf8_length(text);
    if (chars > static_cast<size_t>(opts_.max_chars)) {
      return Status::Invalid("text is " + std::to_string(chars) + " characters; the limit is " +
                             std::to_string(opts_.max_chars));
    }
    if (!find_builtin_voice(s.voice)) {
      return Status::Invalid("unknown voice '" + s.voice + "' (built-in voices are M1-M5 and F1-F5)");
    }
    Status a = validate_axes(s.axes);
    if (!a.ok()) return a;
    if (!language_voice(s.language)) {
      return Status::Invalid("unsupported language '" + s.language +
                             "' (GET /v1/voices lists the languages)");
    }
    if (std::find(partial_.begin(), partial_.end(), s.language) != partial_.end()) {
      const PartialLanguage* p = find_partial_language(s.language);
      if (p && p->unreadable(text)) {
        return Status::Invalid("language '" + s.language +
                               "' is supported in part on this server: " + p->note);
      }
    }
    if (!std::isfinite(s.speed) || s.speed < kSpeedMin || s.speed > kSpeedMax) {
      return Status::Invalid("speed must be between 0.25 and 4.0");
    }
    if (s.total_steps < kStepsMin || s.total_steps > kStepsMax) {
      return Status::Invalid("total_steps must be between 1 and 100");
    }
    if (s.output_rate != 0 && (s.output_rate < 8000 || s.output_rate > 48000)) {
      return Status::Invalid("output sample rate must be between 8000 and 48000 Hz");
    }
    return Status::Ok();
  }

  Result<Audio> synthesize(const std::string& text, const VoiceSettings& s,
                           const SynthesisRequester& requester) override {
    Audio all;
    all.sample_rate = s.output_rate ? s.output_rate : kEngineSampleRate;
    // About 15 characters per second of speech: one allocation for most texts.
    all.samples.reserve(std::min<size_t>(text.size() * all.sample_rate / 12, 4u << 20));
    Status st = synthesize_stream(text, s, requester, [&](const Audio& a) {
      append_audio(all, a);
      return true;
    });
    if (!st.ok()) return st;
    return all;
  }

  Status synthesize_stream(const std::string& text, const VoiceSettings& s,
                           const SynthesisRequester& requester,
                           const std::function<bool(const Audio&)>& on_sentence) override {
    auto stream = start(text, s, requester);
    if (!stream.ok()) return stream.status();
    for (;;) {
      auto next = (*stream)->next();
      if (!next.ok()) return next.status();
      if (!next->has_value()) return Status::Ok();
      if (!on_sentence(**next)) return Status::Ok();  // the stream's destructor cancels the rest
    }
  }

  Result<std::unique_ptr<SpeechStream>> start(const std::string& text, const VoiceSettings& s,
                                              const SynthesisRequester& requester) override {
    Status v = validate(text, s);
    if (!v.ok()) return v;
    auto job = std::make_shared<Job>();
    job->requester = requester;
    job->sentences = split_sentences(text);
    job->settings = s;
    EngineChoice choice = choose_engine(engines_, *find_builtin_voice(s.voice), s.language);
    job->engine = choice.engine;
    job->engine_voice = choice.engine_voice;
    job->definition = apply_axes(choice.definition, s.axes);
    job->espeak_voice = *language_voice(s.language);
    job->quality = quality_for_steps(s.total_steps);
    job->max_raw_samples = static_cast<int64_t>(opts_.max_audio_s * s.speed * kEngineSampleRate);
    {
      std::lock_guard lock(mu_);
      // Up to `workers` requests run and `queue` more wait; one account holds `account_queue`.
      Status admitted = scheduler_.admit(job);
      if (!admitted.ok()) {
        ++(admitted.code() == Code::kRateLimited ? rejected_account_ : rejected_);
        return admitted;
      }
    }
    cv_.notify_one();
    return std::unique_ptr<SpeechStream>(new JobStream(std::move(job)));
  }

  std::vector<BuiltinVoiceInfo> builtin_voices() const override {
    std::vector<BuiltinVoiceInfo> out;
    for (const auto& v : builtin_voice_table()) {
      out.push_back({v.id, v.description, choose_engine(engines_, v, "en").engine->name()});
    }
    return out;
  }
  bool is_builtin_voice(const std::string& id) const override { return find_builtin_voice(id) != nullptr; }
  std::vector<LanguageInfo> languages() const override { return languages_; }
  std::vector<AxisInfo> axes() const override { return axis_table(); }
  const SpeechOptions& options() const override { return opts_; }
  SpeechStats stats() const override {
    std::lock_guard lock(mu_);
    return {opts_.workers, opts_.queue, scheduler_.ready(), running_, rejected_, rejected_account_};
  }

 private:
  const std::string* language_voice(const std::string& code) const {
    for (const auto& l : languages_) {
      if (l.code == code) return &l.espeak_voice;
    }
    return nullptr;
  }

  static void finish(Job& job, Status st) {
    {
      std::lock_guard lock(job.mu);
      job.done = true;
      job.status = std::move(st);
    }
    job.cv.notify_all();
  }

  // One slice per turn: the scheduler's pick synthesizes one sentence, then goes back to its
  // account's queue (or is finished), so the next pick may be another account's request.
  void worker_loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || scheduler_.has_ready(); });
      if (stop_) return;
      std::shared_ptr<SynthesisTask> task = scheduler_.next();
      ++running_;
      lock.unlock();
      Job& job = static_cast<Job&>(*task);
      bool more = false;
      Status st = run(job, more);
      lock.lock();
      --running_;
      if (st.ok() && more) {
        scheduler_.requeue(std::move(task));
        continue;  // this worker is free: it takes the next pick itself
      }
      // Admission freed before the caller learns the job is done, so its next request finds room.
      scheduler_.retire(job);
      lock.unlock();
      finish(job, std::move(st));
      lock.lock();
    }
  }

  // Synthesizes the job's next sentence; `more` says whether sentences remain.
  Status run(Job& job, bool& more) {
    more = false;
    if (job.cancelled) return Status::Ok();
    if (stopping_) return Status::Unavailable("speech service is shutting down");
    if (job.next_sentence >= job.sentences.size()) return Status::Ok();
    const std::string& sentence = job.sentences[job.next_sentence++];
    {
      EngineRequest req{sentence, job.espeak_voice, job.definition,
                        std::max<int64_t>(1, job.max_raw_samples - job.raw_used), job.engine_voice};
      if (job.next_sentence == 1 && opts_.chunk_first_sentence) {
        // The first sentence is handed to the reader in chunks as the engine makes them, so its
        // first words play while the engine works on the rest (later sentences are made while the
        // earlier ones play). The worker keeps the engine for the whole sentence: a chunk is not
        // a turn.
        req.on_chunk = [&job](Audio chunk) {
          if (job.cancelled) return false;
          job.raw_used += at_engine_rate(chunk);
          {
            std::lock_guard lock(job.mu);
            job.ready.push_back(std::move(chunk));
          }
          job.cv.notify_all();
          return true;
        };
      }
      Result<EngineResult> r = Status::Internal("not run");
      {
        // The engine is held for one sentence only, so concurrent requests interleave (and
        // requests on different engines run in parallel).
        std::lock_guard lock(job.engine->mutex());
        r = job.engine->synthesize(req);
      }
      if (!r.ok()) return r.status();
      if (job.cancelled) return Status::Ok();  // the reader went away (perhaps mid-sentence)
      if (r->truncated) {
        return Status::Invalid("the text would produce more than " +
                               std::to_string(static_cast<int>(opts_.max_audio_s)) +
                               " seconds of audio (the per-request limit); split it into smaller requests");
      }
      job.raw_used += at_engine_rate(r->audio);
      Audio a = std::move(r->audio);  // post-processed by the reader (JobStream::next)
      {
        std::lock_guard lock(job.mu);
        job.ready.push_back(std::move(a));
      }
      job.cv.notify_all();
    }
    more = job.next_sentence < job.sentences.size();
    return Status::Ok();
  }

  SpeechOptions opts_;
  SpeechEngines engines_;
  std::vector<LanguageInfo> languages_;  // written once before the workers start
  std::vector<std::string> partial_;     // codes offered in part (see PartialLanguage)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  SynthesisScheduler scheduler_;
  std::vector<std::thread> workers_;
  int running_ = 0;  // slices being synthesized
  int64_t rejected_ = 0;
  int64_t rejected_account_ = 0;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};
};

}  // namespace

Result<std::unique_ptr<SpeechService>> make_speech_service(const SpeechOptions& options) {
  SpeechOptions opts = options;
  opts.workers = std::max(1, opts.workers);
  opts.queue = std::max(0, opts.queue);
  auto engines = open_speech_engines(opts.scratch_dir);
  if (!engines.ok()) return engines.status();
  if (!engines->rhvoice) {
    std::string fallbacks;
    for (const auto& f : voices_falling_back(*engines)) fallbacks += (fallbacks.empty() ? "" : ", ") + f;
    log::warn("speech_rhvoice_unavailable",
              {{"reason", engines->rhvoice_missing}, {"fallback_to_flite", fallbacks}});
  }
  auto svc = std::make_unique<SpeechServiceImpl>(opts, std::move(engines.value()));
  svc->verify_languages();
  svc->start_workers();
  log::info("speech_ready", {{"workers", opts.workers},
                             {"queue", opts.queue},
                             {"languages", static_cast<int64_t>(svc->languages().size())},
                             {"max_audio_s", opts.max_audio_s}});
  return std::unique_ptr<SpeechService>(std::move(svc));
}

}  // namespace imago::speech
