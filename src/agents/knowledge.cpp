// The agent's own knowledge: short texts kept as the agent's files (purpose "knowledge", the
// text as UTF-8 in the blob, the title as the file's name), so they go with the agent's other
// files when it is deleted and count towards the storage quota like them.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

#include "agents/agent_service.h"
#include "blobs/blob_store.h"
#include "limits/storage_quota.h"
#include "speech/text.h"
#include "store/file_store.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::agents {

namespace {

constexpr const char* kPurpose = "knowledge";

std::string lower_ascii(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Removes everything from each `<tag` to its `</tag>` (case-insensitive).
std::string drop_elements(std::string html, std::string_view tag) {
  std::string low = lower_ascii(html);
  std::string open = "<" + std::string(tag), close = "</" + std::string(tag) + ">";
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t a = low.find(open, pos);
    if (a == std::string::npos) break;
    out.append(html, pos, a - pos);
    size_t b = low.find(close, a);
    pos = b == std::string::npos ? html.size() : b + close.size();
  }
  out.append(html, std::min(pos, html.size()));
  return out;
}

std::string html_text(std::string_view html) {
  std::string s = drop_elements(drop_elements(std::string(html), "script"), "style");
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      size_t e = s.find('>', i);
      if (e == std::string::npos) break;
      std::string tag = lower_ascii(s.substr(i + 1, std::min<size_t>(e - i - 1, 12)));
      // Block elements end a line, so their sentences stay apart.
      for (const char* b : {"p", "br", "li", "div", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "dt", "dd"}) {
        std::string_view bs(b);
        if (tag.rfind(bs, 0) == 0 &&
            (tag.size() == bs.size() || !std::isalnum(static_cast<unsigned char>(tag[bs.size()])))) {
          out += '\n';
          break;
        }
      }
      i = e;
      continue;
    }
    if (s[i] == '&') {
      static const std::pair<const char*, const char*> kEntities[] = {
          {"&amp;", "&"}, {"&lt;", "<"},   {"&gt;", ">"},  {"&quot;", "\""},
          {"&#39;", "'"}, {"&apos;", "'"}, {"&nbsp;", " "}};
      bool done = false;
      for (auto [e, r] : kEntities) {
        if (s.compare(i, std::strlen(e), e) == 0) {
          out += r;
          i += std::strlen(e) - 1;
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out += s[i];
  }
  return out;
}

// CRLF to LF, runs of blank lines and spaces squeezed, trimmed.
std::string tidy(std::string_view text) {
  std::string out;
  int newlines = 0;
  bool space = false;
  for (char c : text) {
    if (c == '\r') continue;
    if (c == '\n') {
      ++newlines;
      space = false;
      continue;
    }
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (!out.empty()) {
      if (newlines)
        out += newlines > 1 ? "\n\n" : "\n";
      else if (space)
        out += ' ';
    }
    newlines = 0;
    space = false;
    out += c;
  }
  return out;
}

KnowledgeItem item_of(const FileRecord& f) {
  return {f.id, f.original_name.value_or(""), static_cast<int64_t>(f.size), f.created_at};
}

}  // namespace

Result<std::string> document_text(std::string_view bytes, std::string_view name) {
  if (bytes.find('\0') != std::string_view::npos || !is_valid_utf8(bytes)) {
    return Status(Code::kUnsupportedMedia,
                  "A knowledge document must be UTF-8 text (plain text, Markdown, CSV or HTML)");
  }
  std::string n = lower_ascii(name);
  std::string_view head = bytes.substr(0, std::min<size_t>(bytes.size(), 512));
  std::string lhead = lower_ascii(trim(head));
  bool html = ends_with(n, ".html") || ends_with(n, ".htm") || lhead.rfind("<!doctype html", 0) == 0 ||
              lhead.rfind("<html", 0) == 0;
  return tidy(html ? html_text(bytes) : std::string(bytes));
}

Result<KnowledgeItem> AgentService::add_knowledge(const std::string& account, const std::string& code,
                                                  const NewKnowledge& k) {
  if (k.text && k.document) return Status::Invalid("Send either 'text' or a document 'file', not both");
  if (!k.text && !k.document) return Status::Invalid("Field 'text' (or a document 'file') is required");
  if (k.title && (trim(*k.title).empty() || speech::utf8_length(*k.title) > kMaxKnowledgeTitleChars)) {
    return Status::Invalid("Field 'title' must be 1 to " + std::to_string(kMaxKnowledgeTitleChars) +
                           " characters");
  }
  std::string text;
  if (k.document) {
    if (k.document->size() > kMaxKnowledgeDocumentBytes) {
      return Status(Code::kTooLarge, "A knowledge document may be at most 1 MB");
    }
    auto t = document_text(*k.document, k.document_name.value_or(""));
    if (!t.ok()) return t.status();
    text = std::move(t).value();
  } else {
    if (!is_valid_utf8(*k.text)) return Status::Invalid("Field 'text' must be UTF-8");
    text = tidy(*k.text);
  }
  if (text.empty()) return Status::Invalid("The knowledge text is empty");
  const size_t bytes = text.size();
  std::string title;
  if (k.title) {
    title = std::string(trim(*k.title));
  } else if (k.document_name && !trim(*k.document_name).empty()) {
    title = std::string(trim(*k.document_name)).substr(0, kMaxKnowledgeTitleChars);
  } else {
    // The first words, cut at a character boundary.
    size_t cut = 0, n = 0;
    while (cut < text.size() && n < 60 && text[cut] != '\n') {
      cut += 1;
      while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
      ++n;
    }
    title = text.substr(0, cut) + (n >= 60 && cut < text.size() && text[cut] != '\n' ? "…" : "");
  }

  // The bounds hold across nodes too: the check before the insert keeps this process's adds apart
  // (the mutex), and the check after it catches another node's add that passed its own check at
  // the same time; whoever then sees the agent over a bound takes its own item back, so the
  // bounds are never exceeded (at worst both of two racing adds are refused and may retry).
  auto over_bounds = [&](const std::vector<FileRecord>& items, size_t adding) -> Status {
    if (items.size() + (adding ? 1 : 0) > kMaxKnowledgeItems) {
      return Status::Invalid("An agent keeps at most " + std::to_string(kMaxKnowledgeItems) +
                             " knowledge items; delete one first");
    }
    size_t used = 0;
    for (const auto& f : items) used += static_cast<size_t>(f.size);
    if (used + adding > kMaxKnowledgeBytes) {
      return Status::Invalid("The agent's knowledge may hold at most " + std::to_string(kMaxKnowledgeBytes) +
                             " bytes of text in all (it holds " +
                             std::to_string(used - (adding ? 0 : bytes)) + "; this adds " +
                             std::to_string(bytes) + ")");
    }
    return Status();
  };
  std::lock_guard lock(knowledge_mu_);
  auto agent = d_.agents->get(account, code);
  if (!agent.ok()) return agent.status();
  auto existing = d_.files->list_agent_files(account, code, kPurpose);
  if (!existing.ok()) return existing.status();
  if (Status st = over_bounds(*existing, bytes); !st.ok()) return st;
  if (Status st = check_quota(account, static_cast<int64_t>(text.size()), k.storage_quota_bytes); !st.ok())
    return st;

  FileRecord f;
  f.id = new_id("file");
  f.account_id = account;
  f.agent_code = code;
  f.purpose = kPurpose;
  f.kind = "other";
  f.mime = "text/plain; charset=utf-8";
  f.ext = "txt";
  f.size = static_cast<int64_t>(bytes);
  f.original_name = title;
  f.blob_key = agent_blob_key(account, code, f.id, f.ext);
  f.created_at = d_.clock->now_s();
  if (Status st = d_.blobs->put(f.blob_key, text); !st.ok()) return st;
  if (Status st = d_.files->insert(f); !st.ok()) {
    (void)d_.blobs->remove(f.blob_key);
    return st;
  }
  auto after = d_.files->list_agent_files(account, code, kPurpose);
  Status bounds = after.ok() ? over_bounds(*after, 0) : after.status();
  if (!bounds.ok()) {
    (void)d_.files->remove(account, f.id);
    (void)d_.blobs->remove(f.blob_key);
    return bounds;
  }
  return item_of(f);
}

Result<std::vector<KnowledgeItem>> AgentService::list_knowledge(const std::string& account,
                                                                const std::string& code) {
  auto agent = d_.agents->get(account, code);
  if (!agent.ok()) return agent.status();
  auto files = d_.files->list_agent_files(account, code, kPurpose);
  if (!files.ok()) return files.status();
  std::vector<KnowledgeItem> out;
  for (const auto& f : *files) out.push_back(item_of(f));
  return out;
}

Status AgentService::remove_knowledge(const std::string& account, const std::string& code,
                                      const std::string& id) {
  auto agent = d_.agents->get(account, code);
  if (!agent.ok()) return agent.status();
  auto f = d_.files->get(account, id);
  if (!f.ok() || f->agent_code != code || f->purpose != kPurpose) {
    return Status::NotFound("Knowledge item not found: " + id);
  }
  auto removed = d_.files->remove(account, id);
  if (!removed.ok()) return removed.status();
  (void)d_.blobs->remove(removed->blob_key);
  return Status::Ok();
}

Result<std::vector<std::string>> AgentService::knowledge_texts(const std::string& account,
                                                               const std::string& code) {
  auto files = d_.files->list_agent_files(account, code, kPurpose);
  if (!files.ok()) return files.status();
  std::vector<std::string> out;
  for (const auto& f : *files) {
    auto b = d_.blobs->get(f.blob_key);
    if (!b.ok()) return b.status();
    out.push_back(std::move(b).value());
  }
  return out;
}

}  // namespace imago::agents
