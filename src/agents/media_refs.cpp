#include "agents/media_refs.h"

#include "util/strings.h"

namespace imago::agents {

namespace {

bool is_file_id(std::string_view s) {
  if (s.size() != 25 || s.substr(0, 5) != "file_") return false;
  for (char c : s.substr(5)) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> file_id_from_ref(const std::string& public_url, std::string_view value) {
  std::string_view v = trim(value);
  if (is_file_id(v)) return std::string(v);
  std::string prefix = public_url + "/v1/files/";
  if (public_url.empty() || v.size() <= prefix.size() || v.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  std::string_view name = v.substr(prefix.size());
  if (auto q = name.find_first_of("?#"); q != std::string_view::npos) name = name.substr(0, q);
  if (auto dot = name.find('.'); dot != std::string_view::npos) name = name.substr(0, dot);
  if (!is_file_id(name)) return std::nullopt;
  return std::string(name);
}

Result<ResolvedMedia> resolve_media_param(FileStore& files, const std::string& public_url,
                                          const std::string& account_id, std::string_view field,
                                          std::string_view value, fetch::MediaKind kind) {
  std::string f(field);
  ResolvedMedia out;
  if (auto id = file_id_from_ref(public_url, value)) {
    auto rec = files.get(account_id, *id);
    if (!rec.ok()) {
      if (rec.status().code() == Code::kNotFound) return Status::Invalid(f + ": file " + *id + " not found");
      return rec.status();
    }
    if (rec->kind != fetch::media_kind_name(kind)) {
      return Status::Invalid(f + ": file " + *id + " is " + rec->mime + ", not " +
                             std::string(fetch::media_kind_name(kind)));
    }
    out.file = *rec;
    return out;
  }
  auto p = fetch::parse_media_param(field, value, kind);
  if (!p.ok()) return p.status();
  if (p->is_url) {
    out.url = p->url;
  } else {
    out.bytes = std::move(p->bytes);
    out.type = p->type;
  }
  return out;
}

}  // namespace imago::agents
