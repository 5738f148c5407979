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
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

/// The report's scalar leaves under dotted keys ("throughput.mfu"); arrays (timelines) are left out.
nlohmann::json flatten_report(const nlohmann::json& report);

/// One result line (no newline), canonical: sorted keys, doubles to 10 significant digits.
std::string row_line(const nlohmann::json& row);

class SweepResults {
 public:
  /// Opens (creating) DIR for the sweep document `sweep` of `point_count` points, run with `settings`
  /// (the simulation options that change results: executor, checkpoint window), kept in
  /// DIR/settings.json, and locks it (DIR/.lock) while this object lives, so a second sweep into DIR
  /// is refused instead of running the same points. If DIR already holds a different sweep or was run
  /// with other settings, throws InputError; a partial last line (a kill during a write) is cut off;
  /// a damaged line or a row for a point the sweep does not have is reported with its line number
  /// and left out, so that point runs again.
  SweepResults(std::filesystem::path dir, const nlohmann::json& sweep, const nlohmann::json& settings,
               std::int64_t point_count);
  ~SweepResults();
  SweepResults(const SweepResults&) = delete;
  SweepResults& operator=(const SweepResults&) = delete;

  /// Points already finished, from the JSONL.
  const std::map<std::int64_t, std::string>& done() const { return done_; }
  std::filesystem::path jsonl() const { return dir_ / "results.jsonl"; }
  std::filesystem::path csv() const { return dir_ / "results.csv"; }

  /// Rewrites the JSONL sorted by point and the CSV from the rows now on disk, atomically.
  void finish();

  /// Rows of every DIR (each holding the same sweep, run with the same settings) into `out`: each
  /// point once; a point two shards both ran must agree. Throws InputError on a mismatch, a damaged
  /// line or a row for a point the sweep does not have (with the file and line number).
  /// Every point of the sweep must be in one of them, else InputError naming the missing points,
  /// unless `allow_partial`, which records what is missing in out/settings.json ("partial") and in
  /// a comment line at the top of the CSV.
  static void merge(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                    bool allow_partial = false);

 private:
  void load(bool warn);
  std::filesystem::path dir_;
  std::int64_t point_count_ = 0;
  std::string csv_comment_;  ///< "partial: ..." for a partial merge
  int lock_fd_ = -1;
  std::map<std::int64_t, std::string> done_;  ///< point -> its line
};

/// The `count` ok rows of `rows` (point -> line) with the highest (or, `lowest`, the lowest) value
/// of the flattened report key `metric`, best first; ties go to the lower point. Rows without the
/// metric are skipped.
std::vector<std::int64_t> best_points(const std::map<std::int64_t, std::string>& rows, const std::string& metric,
                                      std::int64_t count, bool lowest);

/// A complete line of a results.jsonl text and its 1-based line number.
struct ResultLine {
  std::size_t number;
  std::string text;
};

/// The complete lines of a results.jsonl text, empty lines skipped; a last line without its newline
/// (a kill mid-write) is left out. Reads text only, so it can be tested and fuzzed without files.
std::vector<ResultLine> complete_lines(const std::string& text);

/// The point of one results.jsonl line of a sweep of `point_count` points, or what is wrong with it
/// (not a whole result row: an object with a point of the sweep, a status, params and, when ok, the
/// report).
std::variant<std::int64_t, std::string> result_point(const std::string& line, std::int64_t point_count);

/// CSV of rows (JSON objects as produced above): point, status, error, then params.* (a swept quantity
/// followed by its SI value in a column `params.PATH [UNIT]`), then the report's keys, the union over
/// rows in sorted order. A non-empty `comment` goes first, as a line starting with "# ".
std::string rows_to_csv(const std::vector<nlohmann::json>& rows, const std::string& comment = "");

}  // namespace strata
