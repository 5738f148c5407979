#pragma once

/// Where a sweep's results go: DIR/sweep.json (the sweep file, its identity), DIR/settings.json (the
/// options it runs with), DIR/results.jsonl (one
/// complete line per finished point, appended as points finish, so a killed sweep loses at most the
/// points in flight) and DIR/results.csv (the same rows as a table, rewritten atomically from the
/// JSONL when a sweep or a merge finishes).
///
/// A row: {"point": i, "status": "ok" | "invalid" | "failed", "params": {path: value},
///         "error": "..." (not ok), "report": {flattened report: "a.b.c": scalar}}.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

/// The report's scalar leaves under dotted keys ("throughput.mfu"); arrays (timelines) are left out.
nlohmann::json flatten_report(const nlohmann::json& report);

/// One result line (no newline), canonical: sorted keys, doubles to 10 significant digits.
std::string row_line(const nlohmann::json& row);

class SweepResults {
 public:
  /// Opens (creating) DIR for the sweep document `sweep`, run with `settings` (the simulation
  /// options that change results: executor, checkpoint window), kept in DIR/settings.json. If DIR
  /// already holds a different sweep or was run with other settings, throws InputError; a partial
  /// last line (a kill during a write) is cut off.
  SweepResults(std::filesystem::path dir, const nlohmann::json& sweep, const nlohmann::json& settings);

  /// Points already finished, from the JSONL.
  const std::map<std::int64_t, std::string>& done() const { return done_; }
  std::filesystem::path jsonl() const { return dir_ / "results.jsonl"; }
  std::filesystem::path csv() const { return dir_ / "results.csv"; }

  /// Rewrites the JSONL sorted by point and the CSV from the rows now on disk, atomically.
  void finish();

  /// Rows of every DIR (each holding the same sweep, run with the same settings) into `out`: each
  /// point once; a point two shards both ran must agree. Throws InputError on a mismatch.
  static void merge(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

 private:
  void load();
  std::filesystem::path dir_;
  std::map<std::int64_t, std::string> done_;  ///< point -> its line
};

/// The `count` ok rows of `rows` (point -> line) with the highest (or, `lowest`, the lowest) value
/// of the flattened report key `metric`, best first; ties go to the lower point. Rows without the
/// metric are skipped.
std::vector<std::int64_t> best_points(const std::map<std::int64_t, std::string>& rows, const std::string& metric,
                                      std::int64_t count, bool lowest);

/// The complete lines of a results.jsonl text, empty lines skipped; a last line without its newline
/// (a kill mid-write) is left out. Reads text only, so it can be tested and fuzzed without files.
std::vector<std::string> complete_lines(const std::string& text);

/// The point number of one results.jsonl line, after checking the line is a whole result row (an
/// object with a point number from 0, a status, and the params and report objects). Throws
/// InputError naming `file` when it is not.
std::int64_t result_point(const std::string& line, const std::string& file);

/// Appends one line with a single write to an O_APPEND descriptor, so concurrent writers never
/// interleave and a line is whole or (after a kill mid-write) cut off at the end of the file.
void append_line(const std::filesystem::path& file, const std::string& line);

/// CSV of rows (JSON objects as produced above): point, status, error, then params.*, then the
/// report's keys, the union over rows in sorted order.
std::string rows_to_csv(const std::vector<nlohmann::json>& rows);

}  // namespace strata
