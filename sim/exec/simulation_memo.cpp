#include "sim/exec/simulation_memo.hpp"

#include <cstring>
#include <type_traits>

namespace strata {

namespace {

class KeyWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));  // doubles by their bits: equal keys mean equal values
    out_.append(bytes, sizeof(T));
  }
  template <typename T>
  void put_all(const std::vector<T>& values) {
    put(values.size());
    for (const T& v : values) put(v);
  }
  void put(const std::string& text) {
    put(text.size());
    out_.append(text);
  }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::size_t size_of(const TaskTimes& t) { return (t.start.size() + t.finish.size()) * sizeof(double); }

}  // namespace

std::string simulation_key(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  KeyWriter w;
  w.reserve(dag.tasks.size() * 112);  // about what a task takes (the GPT-3 windows)
  // The links' bandwidths first: keys of one DAG at other bandwidths (a sweep's families) differ
  // there, so a lookup tells them apart in the first bytes.
  w.put(costs.used_links().size());
  for (const auto& [link, bandwidth] : costs.used_links()) {
    w.put(link);
    w.put(bandwidth);
    w.put(layout.link(link).name);
  }
  w.put(costs.flops_per_second());
  w.put(costs.point_to_point_cap());
  // A shared DAG is named by its identity: its tasks' costs are the same wherever it is simulated
  // but for the bandwidths above.
  w.put(dag.shared_identity);
  if (!dag.shared_identity.empty()) return w.take();
  w.put(dag.tasks.size());
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    w.put_all(t.deps);
    w.put_all(t.ranks);  // with the stream, the order on each stream (stream_predecessors)
    w.put(static_cast<int>(t.stream));
    w.put(t.flows.size());
    w.put(TaskCosts::on_host(t));
    w.put(costs.compute_seconds(t));
    w.put(costs.latency_seconds(id));
    w.put(costs.sm_share(id));
    const auto& flows = costs.flows(id);
    w.put(flows.size());
    for (const RoutedFlow& f : flows) {
      w.put(f.bytes);
      w.put(f.background);
      w.put(f.rate_cap);
      w.put_all(f.links);
    }
  }
  w.put(dag.represents.size());
  for (const auto& [rank, count] : dag.represents) w.put(rank);
  return w.take();
}

namespace {

bool memo_enabled = false;

}  // namespace

SimulationMemo* process_simulation_memo(ExecutorKind kind) {
  static SimulationMemo des, list;
  if (!memo_enabled) return nullptr;
  return kind == ExecutorKind::des ? &des : &list;
}

void enable_process_simulation_memos() { memo_enabled = true; }

const TaskTimes* SimulationMemo::find(const std::string& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first.size() == key.size() && it->first == key) {
      ++hits_;
      auto entry = std::move(*it);
      entries_.erase(it);
      entries_.push_back(std::move(entry));
      return &entries_.back().second;
    }
  return nullptr;
}

void SimulationMemo::remember(std::string key, const TaskTimes& times) {
  const std::size_t bytes = key.size() + size_of(times);
  if (bytes > kMaxBytes / 4) return;  // one huge DAG would push the others out
  while (!entries_.empty() && (entries_.size() >= kMaxEntries || bytes_ + bytes > kMaxBytes)) {
    bytes_ -= entries_.front().first.size() + size_of(entries_.front().second);
    entries_.pop_front();
  }
  entries_.emplace_back(std::move(key), times);
  bytes_ += bytes;
}

}  // namespace strata
