#include "sim/report/trace.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>

namespace strata {

namespace {

constexpr double kMicroseconds = 1e6;

/// One event as a JSON object; written by hand because traces reach millions of events and a DOM
/// per event would triple the run's memory.
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

void append_event(std::string& out, const std::string& name, const char* cat, std::int64_t pid, std::int64_t tid,
                  double ts, double dur, const std::string& args) {
  if (out.size() > 1) out += ",\n";
  out += fmt::format(R"({{"name":{},"cat":"{}","ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{}}})",
                     quoted(name), cat, pid, tid, ts * kMicroseconds, dur * kMicroseconds, args);
}

/// Flows overlap on a link, which complete ("X") slices on one thread may not: links get async
/// begin/end pairs, which Perfetto stacks on tracks named after the link.
void append_async(std::string& out, const std::string& link, std::int64_t pid, std::uint64_t id, double start,
                  double finish, const std::string& args) {
  if (out.size() > 1) out += ",\n";
  out += fmt::format(R"({{"name":{},"cat":"link","ph":"b","id":{},"pid":{},"tid":0,"ts":{:.3f},"args":{}}},)"
                     "\n"
                     R"({{"name":{},"cat":"link","ph":"e","id":{},"pid":{},"tid":0,"ts":{:.3f},"args":{{}}}})",
                     quoted(link), id, pid, start * kMicroseconds, args, quoted(link), id, pid, finish * kMicroseconds);
}

void append_meta(std::string& out, const char* what, std::int64_t pid, std::int64_t tid, const std::string& name) {
  if (out.size() > 1) out += ",\n";
  out += fmt::format(R"({{"name":"{}","ph":"M","pid":{},"tid":{},"args":{{"name":{}}}}})", what, pid, tid,
                     quoted(name));
}

void append_counter(std::string& out, const std::string& name, std::int64_t pid, double ts, double bytes) {
  if (out.size() > 1) out += ",\n";
  out += fmt::format(R"({{"name":{},"ph":"C","pid":{},"tid":0,"ts":{:.3f},"args":{{"bytes":{:.0f}}}}})", quoted(name),
                     pid, ts * kMicroseconds, bytes);
}

}  // namespace

std::string trace_json(const TaskDag& dag, const TaskTimes& times, const LinkNamer& link_names) {
  std::string out = "[";
  // Links live in a process numbered after every GPU rank.
  std::int64_t links_pid = dag.represents.empty() ? 0 : dag.represents.rbegin()->first + 1;
  for (const auto& [rank, count] : dag.represents) {
    append_meta(out, "process_name", rank, 0, fmt::format("GPU {} (stands for {})", rank, count));
    for (int s = 0; s < kNumStreams; ++s) append_meta(out, "thread_name", rank, s, to_string(static_cast<Stream>(s)));
  }
  append_meta(out, "process_name", links_pid, 0, "links");
  std::uint64_t async_id = 0;
  std::map<std::int64_t, std::vector<std::tuple<double, int, TaskId>>> memory_events;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    const double dur = times.finish[id] - times.start[id];
    const std::string name = t.layer >= 0 ? fmt::format("{} L{} mb{}", to_string(t.kind), t.layer, t.microbatch)
                                          : fmt::format("{} mb{}", to_string(t.kind), t.microbatch);
    double bytes = 0.0;
    for (const Flow& f : t.flows) bytes += f.bytes;
    const std::string args =
        fmt::format(R"({{"task":{},"kind":"{}","iteration":{},"stage":{},"chunk":{},"flops":{:.6g},"bytes":{:.6g}}})", id,
                    to_string(t.kind), t.iteration, t.stage, t.chunk, t.flops, bytes);
    for (std::int64_t r : t.ranks) {
      append_event(out, name, to_string(t.kind).c_str(), r, static_cast<int>(t.stream), times.start[id], dur, args);
      if (!t.allocate.empty()) memory_events[r].emplace_back(times.start[id], 1, id);
      if (!t.release.empty()) memory_events[r].emplace_back(times.finish[id], 0, id);
    }
    if (!t.flows.empty())
      for (const std::string& link : link_names(id))
        append_async(out, link, links_pid, ++async_id, times.start[id], times.finish[id], args);
  }
  for (auto& [rank, events] : memory_events) {
    std::sort(events.begin(), events.end());
    std::map<Tier, double> current;
    for (const MemoryChange& c : dag.resident.at(rank)) current[c.tier] += c.bytes;
    for (const auto& [tier, b] : current) append_counter(out, "memory " + to_string(tier), rank, 0.0, b);
    for (const auto& [time, alloc, id] : events) {
      const auto& changes = alloc ? dag.tasks[id].allocate : dag.tasks[id].release;
      std::map<Tier, bool> touched;
      for (const MemoryChange& c : changes) {
        current[c.tier] += alloc ? c.bytes : -c.bytes;
        touched[c.tier] = true;
      }
      for (const auto& [tier, yes] : touched) append_counter(out, "memory " + to_string(tier), rank, time, current[tier]);
    }
  }
  out += "\n]\n";
  return out;
}

}  // namespace strata
