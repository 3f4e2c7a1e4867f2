#include "speech/languages.h"

namespace imago::speech {

const std::vector<LanguageCandidate>& language_candidates() {
  // Samples use each language's own script so that the check exercises its dictionary and rules.
  static const std::vector<LanguageCandidate> table = {
      {"af", "af", "Afrikaans", "Goeie môre"},
      {"am", "am", "Amharic", "ሰላም"},
      {"ar", "ar", "Arabic", "مرحبا بالعالم"},
      {"az", "az", "Azerbaijani", "Salam dünya"},
      {"bg", "bg", "Bulgarian", "Здравей свят"},
      {"bn", "bn", "Bengali", "নমস্কার"},
      {"bs", "bs", "Bosnian", "Zdravo svijete"},
      {"ca", "ca", "Catalan", "Hola món"},
      {"cs", "cs", "Czech", "Ahoj světe"},
      {"cy", "cy", "Welsh", "Helo byd"},
      {"da", "da", "Danish", "Hej verden"},
      {"de", "de", "German", "Hallo Welt"},
      {"el", "el", "Greek", "Γειά σου κόσμε"},
      {"en", "en-us", "English (US)", "Hello world"},
      {"eo", "eo", "Esperanto", "Saluton mondo"},
      {"es", "es", "Spanish", "Hola mundo"},
      {"et", "et", "Estonian", "Tere maailm"},
      {"eu", "eu", "Basque", "Kaixo mundua"},
      {"fa", "fa", "Persian", "سلام دنیا"},
      {"fi", "fi", "Finnish", "Hei maailma"},
      {"fr", "fr", "French", "Bonjour le monde"},
      {"ga", "ga", "Irish", "Dia duit a dhomhain"},
      {"gu", "gu", "Gujarati", "નમસ્તે"},
      {"he", "he", "Hebrew", "שלום עולם"},
      {"hi", "hi", "Hindi", "नमस्ते दुनिया"},
      {"hr", "hr", "Croatian", "Pozdrav svijete"},
      {"hu", "hu", "Hungarian", "Helló világ"},
      {"hy", "hy", "Armenian", "Բարեւ աշխարհ"},
      {"id", "id", "Indonesian", "Halo dunia"},
      {"is", "is", "Icelandic", "Halló heimur"},
      {"it", "it", "Italian", "Ciao mondo"},
      {"ja", "ja", "Japanese", "こんにちは"},
      {"ka", "ka", "Georgian", "გამარჯობა"},
      {"kk", "kk", "Kazakh", "Сәлем әлем"},
      {"kn", "kn", "Kannada", "ನಮಸ್ಕಾರ"},
      {"ko", "ko", "Korean", "안녕하세요"},
      {"la", "la", "Latin", "Salve munde"},
      {"lb", "lb", "Luxembourgish", "Moien Welt"},
      {"lt", "lt", "Lithuanian", "Labas pasauli"},
      {"lv", "lv", "Latvian", "Sveika pasaule"},
      {"mi", "mi", "Maori", "Kia ora"},
      {"mk", "mk", "Macedonian", "Здраво свету"},
      {"ml", "ml", "Malayalam", "നമസ്കാരം"},
      {"mr", "mr", "Marathi", "नमस्कार जग"},
      {"ms", "ms", "Malay", "Helo dunia"},
      {"mt", "mt", "Maltese", "Bongu dinja"},
      {"my", "my", "Burmese", "မင်္ဂလာပါ"},
      {"nb", "nb", "Norwegian Bokmal", "Hei verden"},
      {"ne", "ne", "Nepali", "नमस्ते संसार"},
      {"nl", "nl", "Dutch", "Hallo wereld"},
      {"no", "nb", "Norwegian", "Hei verden"},
      {"pa", "pa", "Punjabi", "ਸਤ ਸ੍ਰੀ ਅਕਾਲ"},
      {"pl", "pl", "Polish", "Witaj świecie"},
      {"pt", "pt", "Portuguese", "Olá mundo"},
      {"ro", "ro", "Romanian", "Salut lume"},
      {"ru", "ru", "Russian", "Привет мир"},
      {"sk", "sk", "Slovak", "Ahoj svet"},
      {"sl", "sl", "Slovenian", "Pozdravljen svet"},
      {"sq", "sq", "Albanian", "Përshëndetje botë"},
      {"sr", "sr", "Serbian", "Zdravo svete"},
      {"sv", "sv", "Swedish", "Hej världen"},
      {"sw", "sw", "Swahili", "Habari dunia"},
      {"ta", "ta", "Tamil", "வணக்கம் உலகம்"},
      {"te", "te", "Telugu", "హలో ప్రపంచం"},
      {"th", "th", "Thai", "สวัสดีชาวโลก"},
      {"tr", "tr", "Turkish", "Merhaba dünya"},
      {"uk", "uk", "Ukrainian", "Привіт світе"},
      {"ur", "ur", "Urdu", "ہیلو دنیا"},
      {"vi", "vi", "Vietnamese", "Xin chào thế giới"},
      {"zh", "cmn", "Chinese (Mandarin)", "你好世界"},
  };
  return table;
}

const LanguageCandidate* find_language_candidate(const std::string& code) {
  for (const auto& c : language_candidates()) {
    if (code == c.code) return &c;
  }
  return nullptr;
}

}  // namespace imago::speech
