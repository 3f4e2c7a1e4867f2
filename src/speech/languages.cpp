#include "speech/languages.h"

#include <algorithm>
#include <cstdint>

namespace imago::speech {

const std::vector<LanguageCandidate>& language_candidates() {
  // Samples use each language's own script so that the check exercises its dictionary and rules.
  // Expected phonemes: espeak-ng 1.51 readings reviewed by hand, except where that reading is
  // wrong (zh: hanzi read as English words; my, th: letters mangled), where the expected
  // phonemes are the correct reading, so those languages fail the check and are refused.
  static const std::vector<LanguageCandidate> table = {
      {"af", "af", "Afrikaans", "Goeie môre", "xˈuɪə mˈɔːrə"},
      {"am", "am", "Amharic", "ሰላም", "sˈəlam"},
      {"ar", "ar", "Arabic", "أَنَا أَتَكَلَّمُ الْعَرَبِيَّةَ", "ʔˈanaː ʔatˈakallmˌu alʕarˈabiːtˌa"},
      {"az", "az", "Azerbaijani", "Salam dünya", "saɫˈam dynjˈa"},
      {"bg", "bg", "Bulgarian", "Здравей свят", "zdrˈavej svʲˈat"},
      {"bn", "bn", "Bengali", "নমস্কার", "nˈɔmɔʃkˌaɾ"},
      {"bs", "bs", "Bosnian", "Zdravo svijete", "zdɾˈavo svˈijetɛ"},
      {"ca", "ca", "Catalan", "Hola món", "ˈolɐ mˈon"},
      {"cs", "cs", "Czech", "Ahoj světe", "ˈahoj svjˈete"},
      {"cy", "cy", "Welsh", "Helo byd", "hˈɛlɔ bˈɨːd"},
      {"da", "da", "Danish", "Hej verden", "hˈ?ɑj ʋˈεɐ̯dən"},
      {"de", "de", "German", "Hallo Welt", "hˈaloː vˈɛlt"},
      {"el", "el", "Greek", "Γειά σου κόσμε", "jˈa su kˈosme"},
      {"en", "en-us", "English (US)", "Hello world", "həlˈoʊ wˈɜːld"},
      {"eo", "eo", "Esperanto", "Saluton mondo", "salˈuton mˈondo"},
      {"es", "es", "Spanish", "Hola mundo", "ˈola mˈundo"},
      {"et", "et", "Estonian", "Tere maailm", "tˈerɛ mˈaːilm"},
      {"eu", "eu", "Basque", "Kaixo mundua", "kˈaɪʃo mundˈuˌa"},
      {"fa", "fa", "Persian", "سلام دنیا", "salˈɑm dˈonjɑ"},
      {"fi", "fi", "Finnish", "Hei maailma", "hˈei mˈaːɪlma"},
      {"fr", "fr", "French", "Bonjour le monde", "bɔ̃ʒˈuʁ lə- mˈɔ̃d"},
      {"ga", "ga", "Irish", "Dia duit a dhomhain", "dʲˈiə d̪ˈɪc ə ɣˈaʊɪn"},
      {"gu", "gu", "Gujarati", "નમસ્તે", "nəmˈʌsteː"},
      {"he", "he", "Hebrew", "אני מדבר עברית", "anˈi mˌedabˈeʁ ivʁˈit"},
      {"hi", "hi", "Hindi", "नमस्ते दुनिया", "nəmˈʌsteː dˈʊnɪjˌaː"},
      {"hr", "hr", "Croatian", "Pozdrav svijete", "pˈozdɾæf svˈijetɛ"},
      {"hu", "hu", "Hungarian", "Helló világ", "hˈɛlloː vˈilaːɡ"},
      {"hy", "hy", "Armenian", "Բարեւ աշխարհ", "baɹˈev aʃχˈarh"},
      {"id", "id", "Indonesian", "Halo dunia", "hˈalo dunˈia"},
      {"is", "is", "Icelandic", "Halló heimur", "hˈalloʊ hˈeɪːmyr"},
      {"it", "it", "Italian", "Ciao mondo", "tʃˈao mˈondo"},
      {"ja", "ja", "Japanese", "こんにちは", "kˌo̞nnitɕˈihä"},
      {"ka", "ka", "Georgian", "გამარჯობა", "ɡˈamardʒˌoba"},
      {"kk", "kk", "Kazakh", "Сәлем әлем", "sælˈem ælˈem"},
      {"kn", "kn", "Kannada", "ನಮಸ್ಕಾರ", "nˈɐmɐskˌaːɹɐ"},
      {"ko", "ko", "Korean", "안녕하세요", "ˈɐnnjʌŋhˌɐsejˌo"},
      {"la", "la", "Latin", "Salve munde", "sˈalwɛ mˈʊndɛ"},
      {"lb", "lb", "Luxembourgish", "Moien Welt", "mˈojən vˈælt"},
      {"lt", "lt", "Lithuanian", "Labas pasauli", "l̩ˈabas pasˈauɭi"},
      {"lv", "lv", "Latvian", "Sveika pasaule", "sʋˈeika pˈasaule"},
      {"mi", "mi", "Maori", "Kia ora", "kˈia ˈɔra"},
      {"mk", "mk", "Macedonian", "Здраво свету", "zdrˈavo svˈetʊ"},
      {"ml", "ml", "Malayalam", "നമസ്കാരം", "nˈɐməsɡˌaːɾəm"},
      {"mr", "mr", "Marathi", "नमस्कार जग", "nˌəmskˈaːɾ ɟˈʌɡ"},
      {"ms", "ms", "Malay", "Helo dunia", "hˈɛlo dunˈiə"},
      {"mt", "mt", "Maltese", "Bongu dinja", "bˈonɡu dˌeɪnˈia"},
      {"my", "my", "Burmese", "မင်္ဂလာပါ", "mɪŋɡəlàbà"},
      {"nb", "nb", "Norwegian Bokmal", "Hei verden", "hˈaɪ vˈardən"},
      {"ne", "ne", "Nepali", "नमस्ते संसार", "nəmˈʌsteː sənsˈaːɾə"},
      {"nl", "nl", "Dutch", "Hallo wereld", "hˈɑloː ʋˈɪːrəlt"},
      {"no", "nb", "Norwegian", "Hei verden", "hˈaɪ vˈardən"},
      {"pa", "pa", "Punjabi", "ਸਤ ਸ੍ਰੀ ਅਕਾਲ", "sˈʌt sɾˈi ˌəkˈal"},
      {"pl", "pl", "Polish", "Witaj świecie", "vˈitaj ɕfʲˈɛtɕɛ"},
      {"pt", "pt", "Portuguese", "Olá mundo", "ɔlˈa mˈũŋdʊ"},
      {"ro", "ro", "Romanian", "Salut lume", "salˈut lˈume"},
      {"ru", "ru", "Russian", "Привет мир", "prʲivʲˈet mʲˈir"},
      {"sk", "sk", "Slovak", "Ahoj svet", "ˈahoj svˈet"},
      {"sl", "sl", "Slovenian", "Pozdravljen svet", "pɔzdrˈaːwljən sʋˈeːt"},
      {"sq", "sq", "Albanian", "Përshëndetje botë", "pˌʌrʃəndˈɛtje bˈɔtə"},
      {"sr", "sr", "Serbian", "Zdravo svete", "zdrˈavo svˈɛtɛ"},
      {"sv", "sv", "Swedish", "Hej världen", "hˈɛj vˈɛːrdən"},
      {"sw", "sw", "Swahili", "Habari dunia", "habˈari dunˈia"},
      {"ta", "ta", "Tamil", "வணக்கம் உலகம்", "vˈʌɳʌkkʌm ˈulʌɡʌm"},
      {"te", "te", "Telugu", "హలో ప్రపంచం", "hˈaloː prˈapancan"},
      {"th", "th", "Thai", "สวัสดีชาวโลก", "sawatdiː tɕʰaːwloːk"},
      {"tr", "tr", "Turkish", "Merhaba dünya", "mˈɛrhaba dønjˈa"},
      {"uk", "uk", "Ukrainian", "Привіт світе", "privˈit svˈiti"},
      {"ur", "ur", "Urdu", "ہیلو دنیا", "hˈeːloː dʊnˈiːaː"},
      {"vi", "vi", "Vietnamese", "Xin chào thế giới", "sˈin tʃˈaː2w tˈeɜ zˈəːɜj"},
      {"zh", "cmn", "Chinese (Mandarin)", "你好世界", "ni xau ʂɻ tɕje"},
  };
  return table;
}

const LanguageCandidate* find_language_candidate(const std::string& code) {
  for (const auto& c : language_candidates()) {
    if (code == c.code) return &c;
  }
  return nullptr;
}

const PartialLanguage* find_partial_language(const std::string& code) {
  static const std::vector<PartialLanguage> table = {
      {"ja", "私は日本語を話します", "wataɕi wa nihoŋɡo o hanaɕimasɯ",
       "kana only: text with kanji is refused (espeak-ng cannot read kanji)", &contains_cjk_ideographs},
  };
  for (const auto& p : table) {
    if (code == p.code) return &p;
  }
  return nullptr;
}

const char* language_caveat(const std::string& code) {
  if (code == "ar")
    return "reads vocalised text (with tashkeel) well; unvocalised words may lose short vowels";
  if (code == "he") return "reads unvocalised text by dictionary and rules; rare words may be misread";
  return nullptr;
}

namespace {

// Decodes UTF-8 into code points (invalid bytes are kept as themselves).
std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

// What is compared: phoneme symbols only.
std::vector<uint32_t> normalised(std::string_view ipa) {
  std::vector<uint32_t> out;
  for (uint32_t cp : code_points(ipa)) {
    switch (cp) {
      case ' ':
      case '_':
      case '|':
      case '-':
      case '.':
      case 0x02C8:  // primary stress
      case 0x02CC:  // secondary stress
      case 0x02D0:  // length
      case 0x0361:  // tie bar
        continue;
      default:
        out.push_back(cp);
    }
  }
  return out;
}

size_t edit_distance(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

TranscriptionCheck check_transcription(std::string_view actual_ipa, std::string_view expected_ipa) {
  TranscriptionCheck r;
  // espeak-ng marks a switch to another language's rules with "(xx)" (and back with "(yy)").
  size_t open = actual_ipa.find('(');
  if (open != std::string_view::npos && actual_ipa.find(')', open) != std::string_view::npos) {
    r.switched_language = true;
    size_t close = actual_ipa.find(')', open);
    r.reason = "read with another language's rules " + std::string(actual_ipa.substr(open, close - open + 1));
  }
  auto a = normalised(actual_ipa);
  auto e = normalised(expected_ipa);
  size_t longest = std::max(a.size(), e.size());
  r.distance = longest == 0 ? 1.0 : static_cast<double>(edit_distance(a, e)) / static_cast<double>(longest);
  if (a.empty()) r.reason = "no phonemes";
  if (!r.switched_language && !a.empty() && r.distance > kMaxPhonemeDistance) {
    r.reason =
        "phonemes differ from a correct reading (distance " + std::to_string(r.distance).substr(0, 4) + ")";
  }
  r.passed = r.reason.empty();
  return r;
}

bool contains_cjk_ideographs(std::string_view text) {
  for (uint32_t cp : code_points(text)) {
    if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0x20000 && cp <= 0x2FFFF)) {
      return true;
    }
  }
  return false;
}

}  // namespace imago::speech
