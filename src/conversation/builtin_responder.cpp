#include "conversation/builtin_responder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "conversation/sentence_splitter.h"

namespace imago::conversation {

namespace {

const std::set<std::string>& stop_words() {
  static const std::set<std::string> words = {
      "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
      "by", "can", "could", "did", "do", "does", "doing", "for", "from", "get", "got", "had", "has", "have",
      "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "know",
      "let", "like", "me", "much", "my", "of", "on", "or", "our", "please", "she", "should", "so", "some",
      "tell", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to",
      "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with",
      "would", "you", "your", "yours", "many", "there's", "it's", "i'm", "you're", "what's", "can't", "don't",
      "do", "way", "tell", "want", "wanted", "need", "one", "s",
      // The other contractions of function words: a recogniser often hears one where a question
      // word was said ("we're" for "where"), and they never carry what the question is about.
      "we're", "they're", "i'd", "you'd", "we'd", "i'll", "you'll", "we'll", "i've", "you've", "we've",
      "he's", "she's", "that's", "isn't", "aren't", "doesn't", "didn't", "won't", "let's", "where's",
      "when's", "how's", "who's", "here's",
      // Light verbs of questions ("can I take ...", "can I bring ..."): they match incidental
      // sentences ("takes place") rather than the thing asked about.
      "take", "bring", "go", "come", "see", "find", "make", "use", "give", "put", "able"};
  return words;
}

std::string stem(std::string w) {
  auto ends = [&](std::string_view suf) {
    return w.size() > suf.size() && w.compare(w.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends("'s")) w.resize(w.size() - 2);
  if (w.size() > 4 && ends("ies")) {
    w.resize(w.size() - 3);
    w += 'y';
  } else if (w.size() > 5 && ends("ing")) {
    w.resize(w.size() - 3);
  } else if (w.size() > 4 && ends("ed")) {
    w.resize(w.size() - 2);
  } else if (w.size() > 3 && ends("es") &&
             (w[w.size() - 3] == 's' || w[w.size() - 3] == 'x' || ends("ches") || ends("shes"))) {
    w.resize(w.size() - 2);
  } else if (w.size() > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is")) {
    w.resize(w.size() - 1);
  }
  if (w.size() > 3 && w.back() == 'e') w.pop_back();  // serve/served/serving -> serv
  return w;
}

// Lower-case words (ASCII letters, digits, apostrophes; other UTF-8 bytes kept inside words).
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && cur.back() == '\'') cur.pop_back();
    while (!cur.empty() && cur.front() == '\'') cur.erase(0, 1);
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c >= 0x80 || (c == '\'' && !cur.empty())) {
      cur += static_cast<char>(std::tolower(c));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

bool contains_phrase(const std::vector<std::string>& words, std::initializer_list<std::string_view> phrase) {
  if (phrase.size() == 0 || words.size() < phrase.size()) return false;
  for (size_t i = 0; i + phrase.size() <= words.size(); ++i) {
    size_t k = 0;
    for (auto p : phrase) {
      if (words[i + k] != p) break;
      ++k;
    }
    if (k == phrase.size()) return true;
  }
  return false;
}

bool only_words_from(const std::vector<std::string>& words, const std::set<std::string>& allowed) {
  if (words.empty()) return false;
  return std::all_of(words.begin(), words.end(), [&](const std::string& w) { return allowed.count(w) > 0; });
}

std::vector<std::string> sentences_of(std::string_view text) {
  SentenceSplitter splitter(400);
  auto out = splitter.push(text);
  out.push_back(splitter.flush());
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return s.empty(); }),
            out.end());
  return out;
}

// Classic question answering: the question word says what kind of answer is wanted, and a
// sentence that contains that kind of thing is preferred (its score is multiplied by 1.5).
enum class AnswerType { kAny, kTime, kPlace, kAmount };

AnswerType answer_type(const std::vector<std::string>& words) {
  if (contains_phrase(words, {"when"}) || contains_phrase(words, {"what", "time"}) ||
      contains_phrase(words, {"how", "late"}) || contains_phrase(words, {"how", "early"}) ||
      contains_phrase(words, {"how", "long"}) || contains_phrase(words, {"what", "hours"})) {
    return AnswerType::kTime;
  }
  if (contains_phrase(words, {"where"})) return AnswerType::kPlace;
  if (contains_phrase(words, {"how", "much"}) || contains_phrase(words, {"how", "many"}) ||
      contains_phrase(words, {"cost"}) || contains_phrase(words, {"price"})) {
    return AnswerType::kAmount;
  }
  return AnswerType::kAny;
}

bool is_number_word(const std::string& w) {
  static const std::set<std::string> numbers = {"one",      "two",    "three",  "four",  "five",   "six",
                                                "seven",    "eight",  "nine",   "ten",   "eleven", "twelve",
                                                "fifteen",  "twenty", "thirty", "forty", "fifty",  "hundred",
                                                "thousand", "half",   "dozen"};
  return numbers.count(w) > 0 || std::isdigit(static_cast<unsigned char>(w[0]));
}

bool has_answer_of_type(const std::vector<std::string>& words, AnswerType t) {
  static const std::set<std::string> time = {
      "o'clock",  "am",     "pm",       "noon",   "midnight", "morning",  "afternoon", "evening",
      "night",    "hour",   "hours",    "minute", "minutes",  "day",      "days",      "week",
      "weeks",    "month",  "months",   "daily",  "weekly",   "monday",   "tuesday",   "wednesday",
      "thursday", "friday", "saturday", "sunday", "weekend",  "weekends", "today",     "tomorrow"};
  static const std::set<std::string> place = {
      "floor",    "room",     "street",   "road",       "next",   "behind",   "near",     "nearest",
      "left",     "right",    "north",    "south",      "east",   "west",     "entrance", "desk",
      "building", "basement", "upstairs", "downstairs", "corner", "opposite", "inside",   "outside",
      "block",    "blocks",   "level",    "wing",       "hall",   "garage",   "station"};
  static const std::set<std::string> amount = {"dollar", "dollars", "euro",  "euros", "pound",
                                               "pounds", "cent",    "cents", "free",  "percent",
                                               "price",  "cost",    "costs"};
  for (const auto& w : words) {
    switch (t) {
      case AnswerType::kTime:
        if (time.count(w) || is_number_word(w)) return true;
        break;
      case AnswerType::kPlace:
        if (place.count(w)) return true;
        break;
      case AnswerType::kAmount:
        if (amount.count(w) || is_number_word(w)) return true;
        break;
      case AnswerType::kAny:
        return false;
    }
  }
  return false;
}

struct Doc {
  std::string sentence;
  bool from_system_prompt = false;
  std::vector<std::string> words;
  std::map<std::string, int> tf;
  size_t length = 0;
};

}  // namespace

std::vector<std::string> index_terms(std::string_view text) {
  std::vector<std::string> out;
  for (auto& w : words_of(text)) {
    if (stop_words().count(w)) continue;
    out.push_back(stem(w));
  }
  return out;
}

std::string first_person(std::string_view sentence) {
  // Word by word, keeping punctuation and spacing.
  std::string out;
  std::string word;
  bool subject_position = true;  // at the start of a clause "you" is the subject ("I")
  auto emit_word = [&] {
    if (word.empty()) return;
    std::string lower = word;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool cap = std::isupper(static_cast<unsigned char>(word[0])) != 0;
    std::string rep;
    if (lower == "you") {
      rep = subject_position ? "I" : "me";
    } else if (lower == "your") {
      rep = "my";
    } else if (lower == "yours") {
      rep = "mine";
    } else if (lower == "yourself") {
      rep = "myself";
    } else if (lower == "you're") {
      rep = "I'm";
    } else if (lower == "you've") {
      rep = "I've";
    } else if (lower == "you'll") {
      rep = "I'll";
    } else if (lower == "are" && !out.empty() && out.size() >= 2 &&
               out.compare(out.size() - 2, 2, "I ") == 0) {
      rep = "am";
    } else if (lower == "were" && out.size() >= 2 && out.compare(out.size() - 2, 2, "I ") == 0) {
      rep = "was";
    } else {
      rep = word;
    }
    if (cap && rep != "I" && rep != "I'm" && rep != "I've" && rep != "I'll" && !rep.empty()) {
      rep[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rep[0])));
    }
    out += rep;
    subject_position =
        lower == "and" || lower == "that" || lower == "when" || lower == "if" || lower == "because";
    word.clear();
  };
  for (char c : sentence) {
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '\'') {
      word += c;
    } else {
      emit_word();
      out += c;
      if (c == ',' || c == ';' || c == ':' || c == '.') subject_position = true;
    }
  }
  emit_word();
  return out;
}

BuiltinAnswer builtin_answer(std::string_view system_prompt, const Knowledge& knowledge,
                             std::string_view question) {
  BuiltinAnswer a;
  const auto words = words_of(question);
  std::vector<std::string> prompt_sentences = sentences_of(system_prompt);

  static const std::set<std::string> greeting = {
      "hi", "hello", "hey", "good", "morning", "afternoon", "evening", "there", "greetings", "howdy", "hiya"};
  static const std::set<std::string> thanks = {"thanks", "thank", "you",  "so",     "much", "very",
                                               "great",  "ok",    "okay", "cheers", "a",    "lot"};
  static const std::set<std::string> goodbye = {"bye",   "goodbye", "see",   "you",
                                                "later", "good",    "night", "ciao"};
  if (only_words_from(words, greeting)) {
    a.kind = AnswerKind::kGreeting;
    a.text = "Hello! How can I help you?";
    return a;
  }
  if (only_words_from(words, thanks) &&
      (contains_phrase(words, {"thank"}) || contains_phrase(words, {"thanks"}) ||
       contains_phrase(words, {"cheers"}))) {
    a.kind = AnswerKind::kThanks;
    a.text = "You're welcome.";
    return a;
  }
  if (only_words_from(words, goodbye) &&
      (contains_phrase(words, {"bye"}) || contains_phrase(words, {"goodbye"}) ||
       contains_phrase(words, {"later"}) || contains_phrase(words, {"ciao"}))) {
    a.kind = AnswerKind::kGoodbye;
    a.text = "Goodbye! It was nice talking with you.";
    return a;
  }
  if (contains_phrase(words, {"who", "are", "you"}) || contains_phrase(words, {"your", "name"}) ||
      contains_phrase(words, {"what", "are", "you"}) || contains_phrase(words, {"introduce", "yourself"})) {
    a.kind = AnswerKind::kIdentity;
    if (prompt_sentences.empty()) {
      a.text = "I am an assistant. I can answer from what I have been told.";
    } else {
      a.sentence = prompt_sentences.front();
      a.text = first_person(a.sentence);
    }
    return a;
  }

  // BM25 over every sentence of the system prompt and the knowledge.
  std::vector<Doc> docs;
  auto add_doc = [&](const std::string& s, bool from_prompt) {
    Doc d;
    d.sentence = s;
    d.from_system_prompt = from_prompt;
    d.words = words_of(s);
    for (auto& t : index_terms(s)) ++d.tf[t];
    for (auto& [t, n] : d.tf) d.length += static_cast<size_t>(n);
    if (d.length > 0) docs.push_back(std::move(d));
  };
  for (const auto& s : prompt_sentences) add_doc(s, true);
  for (const auto& item : knowledge.items()) {
    for (const auto& s : sentences_of(item)) add_doc(s, false);
  }
  std::vector<std::string> query = index_terms(question);
  std::sort(query.begin(), query.end());
  query.erase(std::unique(query.begin(), query.end()), query.end());
  if (docs.empty() || query.empty()) {
    a.text = kUnknownAnswer;
    return a;
  }
  const double n = static_cast<double>(docs.size());
  double avg_len = 0;
  for (const auto& d : docs) avg_len += static_cast<double>(d.length);
  avg_len /= n;
  std::map<std::string, double> idf;
  double query_weight = 0;
  for (const auto& t : query) {
    double df = 0;
    for (const auto& d : docs) df += d.tf.count(t) ? 1 : 0;
    idf[t] = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    // A term no sentence has still counts in the question's weight (as if it were rare), so a
    // question about something unknown is not answered from one incidental common word.
    query_weight += df > 0 ? idf[t] : std::log(1.0 + (n + 0.5) / 0.5);
  }
  constexpr double k1 = 1.2, b = 0.75;
  const AnswerType wanted = answer_type(words);
  const Doc* best = nullptr;
  double best_score = 0, best_cov = 0;
  for (const auto& d : docs) {
    double score = 0, matched = 0;
    for (const auto& t : query) {
      auto it = d.tf.find(t);
      if (it == d.tf.end()) continue;
      double tf = it->second;
      score += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * static_cast<double>(d.length) / avg_len));
      matched += idf[t];
    }
    if (score > 0 && wanted != AnswerType::kAny && has_answer_of_type(d.words, wanted)) score *= 1.5;
    // Ties keep the earlier sentence (deterministic).
    if (score > best_score + 1e-9) {
      best = &d;
      best_score = score;
      best_cov = matched / query_weight;
    }
  }
  a.score = best_score;
  a.coverage = best_cov;
  if (!best || best_cov < kMinCoverage) {
    a.text = kUnknownAnswer;
    return a;
  }
  a.kind = AnswerKind::kRetrieved;
  a.sentence = best->sentence;
  a.text =
      "Here is what I know: " + (best->from_system_prompt ? first_person(best->sentence) : best->sentence);
  return a;
}

}  // namespace imago::conversation
