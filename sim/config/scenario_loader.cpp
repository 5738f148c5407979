#include "sim/config/scenario_loader.hpp"

#include <fmt/format.h>

#include "sim/config/model_spec.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/params.hpp"

namespace strata {

using nlohmann::json;

std::string DocumentResolver::display(const std::filesystem::path& path) const {
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  auto abs = std::filesystem::absolute(path, ec).lexically_normal();
  if (!ec) {
    auto rel = abs.lexically_relative(cwd);
    if (!rel.empty() && !rel.string().starts_with("..")) return rel.string();
  }
  return path.string();
}

std::string Override::label() const {
  constexpr std::size_t kShown = 60;
  std::string shown = value.size() > kShown ? value.substr(0, kShown - 3) + "..." : value;
  return "--set " + path + "=" + shown;
}

Override parse_override(const std::string& text) {
  // Everything downstream keeps text in JSON strings, which must be UTF-8: refuse other bytes here,
  // once, instead of failing wherever a message quotes the value.
  try {
    (void)json(text).dump();
  } catch (const json::type_error&) {
    throw InputError({Diagnostic{"--set", "", "not valid UTF-8 text (expected PATH=VALUE in UTF-8)"}});
  }
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError({Diagnostic{"--set " + text, "", "expected PATH=VALUE (e.g. parallelism.tp=4)"}});
  return {text.substr(0, eq), text.substr(eq + 1)};
}

namespace {

/// "a.b.c" → {"a", "b", "c"}.
std::vector<std::string> split_dotted(const std::string& dotted) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

/// VALUE as JSON, else as a plain string (bf16, 40 GiB). Nesting is capped as for files.
std::optional<json> override_value(const Override& o, Diagnostics& diag) {
  const int depth = json_nesting_depth(o.value);
  if (depth > kMaxInputDepth) {
    diag.add_raw({o.label(), "/", fmt::format("value nested too deep (got depth {}, expected at most {})", depth,
                                              kMaxInputDepth)});
    return std::nullopt;
  }
  try {
    return parse_json_text(o.value, o.label());
  } catch (const InputError&) {
    return json(o.value);
  }
}

void apply_override(json& doc, const Override& o, SourceMap& sources, Diagnostics& diag) {
  std::optional<json> value = override_value(o, diag);
  if (!value) return;
  std::vector<std::string> keys = split_dotted(o.path);
  json* node = &doc;
  std::string pointer;
  // The first key this override creates: an "unknown key" found there is the override's doing.
  std::string created;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (node->is_null()) *node = json::object();
    if (!node->is_object()) {
      diag.add_raw({o.label(), pointer.empty() ? "/" : pointer, "cannot set a key inside a non-object value"});
      return;
    }
    pointer += '/';
    pointer += pointer_escape(keys[i]);
    if (created.empty() && !node->contains(keys[i])) created = pointer;
    node = &(*node)[keys[i]];
  }
  *node = std::move(*value);
  sources.label_prefix(created.empty() ? pointer : created, o.label());
}

/// When a document given as a scenario is another kind of Strata input, what it is and how to use it;
/// one line instead of an "unknown key" per key.
std::optional<std::string> misplaced_document(const json& doc, const std::string& shown) {
  if (doc.contains("model") || doc.contains("training")) return std::nullopt;
  if (is_huggingface_config(doc) || (doc.contains("hidden_size") && doc.contains("num_hidden_layers")))
    return fmt::format("is a model configuration, not a scenario (expected a scenario; use the model in one: "
                       "\"model\": \"{}\" in the scenario file, or --set model={} on a shipped scenario)",
                       shown, shown);
  if (doc.contains("gpus_per_node"))
    return fmt::format("is a hardware profile, not a scenario (expected a scenario; use the profile in one: "
                       "\"hardware\": \"{}\", or --set hardware={})", shown, shown);
  if (doc.contains("base") && (doc.contains("grid") || doc.contains("zip") || doc.contains("sample")))
    return "is a sweep file, not a scenario (expected a scenario; run it with strata sweep FILE --out DIR)";
  if (doc.contains("schema") && doc.at("schema").is_string() &&
      doc.at("schema").get<std::string>().starts_with("strata.report"))
    return "is a Strata report, not a scenario (expected a scenario; compare reports with strata compare A B)";
  return std::nullopt;
}

/// Replaces a "model"/"hardware" name or path by the document's content.
void inline_document(json& doc, const char* key, const char* kind, const std::filesystem::path& base_dir,
                     SourceMap& sources, const DocumentResolver& resolver, Diagnostics& diag) {
  if (!doc.is_object() || !doc.contains(key) || !doc.at(key).is_string()) return;
  std::string ref = doc.at(key).get<std::string>();
  std::string pointer = std::string("/") + key;
  std::optional<std::filesystem::path> path;
  bool looks_like_path = ref.find('/') != std::string::npos || ref.ends_with(".json");
  if (looks_like_path) {
    std::filesystem::path candidate = ref;
    if (candidate.is_relative() && std::filesystem::exists(base_dir / candidate)) candidate = base_dir / candidate;
    if (std::filesystem::exists(candidate)) path = candidate;
  } else {
    path = resolver.find(kind, ref);
  }
  if (!path) {
    std::string names;
    for (const auto& n : resolver.list(kind)) names += (names.empty() ? "" : ", ") + n;
    diag.add(pointer, looks_like_path
                          ? fmt::format("{} file not found (got \"{}\")", kind, ref)
                          : fmt::format("unknown {} (got \"{}\", expected one of: {})", kind, ref, names));
    return;
  }
  std::string shown = resolver.display(*path);
  try {
    doc[key] = read_json_file(*path, shown);
    sources.map_prefix(pointer, shown);
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics()) diag.add_raw(d);
  }
}

}  // namespace

ComposedScenario compose_scenario(json scenario, const std::string& display_name,
                                  const std::filesystem::path& base_dir, const std::vector<Override>& overrides,
                                  const DocumentResolver& resolver) {
  ComposedScenario out{std::move(scenario), SourceMap(display_name)};
  Diagnostics diag(&out.sources);
  if (!out.doc.is_object()) {
    diag.add("", fmt::format("wrong type (got {}, expected an object)", show_value(out.doc.dump())));
    diag.throw_if_any();
  }
  if (auto what = misplaced_document(out.doc, display_name)) {
    diag.add("", *what);
    diag.throw_if_any();
  }
  // Overrides of the model or hardware name itself apply before the documents are read.
  auto is_reference = [](const Override& o) { return o.path == "model" || o.path == "hardware"; };
  for (const auto& o : overrides)
    if (is_reference(o)) apply_override(out.doc, o, out.sources, diag);
  inline_document(out.doc, "model", "model", base_dir, out.sources, resolver, diag);
  inline_document(out.doc, "hardware", "hardware", base_dir, out.sources, resolver, diag);
  for (const auto& o : overrides)
    if (!is_reference(o)) apply_override(out.doc, o, out.sources, diag);
  // A HuggingFace config keeps keys Strata ignores; setting one would silently change nothing.
  // (Keys it does not use at all are refused by the importer, under the --set's label.)
  if (out.doc.is_object() && out.doc.contains("model") && is_huggingface_config(out.doc.at("model"))) {
    for (const auto& o : overrides) {
      std::vector<std::string> keys = split_dotted(o.path);
      if (keys.size() < 2 || keys[0] != "model" || huggingface_key_role(keys[1]) != HfKeyRole::ignored) continue;
      diag.add("/model/" + pointer_escape(keys[1]),
               fmt::format("ignored by Strata in a HuggingFace config.json ({}), so setting it changes nothing",
                           huggingface_ignored_reason(keys[1])));
    }
  }
  diag.throw_if_any();
  return out;
}

ComposedScenario compose_scenario(const std::filesystem::path& scenario_file, const std::vector<Override>& overrides,
                                  const DocumentResolver& resolver) {
  std::string shown = resolver.display(scenario_file);
  json doc = read_json_file(scenario_file, shown);
  return compose_scenario(std::move(doc), shown, scenario_file.parent_path(), overrides, resolver);
}

Scenario load_scenario(const std::filesystem::path& scenario_file, const std::vector<Override>& overrides,
                       const DocumentResolver& resolver) {
  ComposedScenario composed = compose_scenario(scenario_file, overrides, resolver);
  return parse_scenario(composed.doc, composed.sources);
}

}  // namespace strata
