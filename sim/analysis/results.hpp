#pragma once

/// What a run produced, before any formatting: the result types every analysis fills and the
/// report, the trace and the planners read.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/analysis/schedule_metrics.hpp"
#include "sim/config/tier.hpp"
#include "sim/dag/task_dag.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

/// Names of the links a task's flows cross (empty for compute), for the trace.
using LinkNamer = std::function<std::vector<std::string>(TaskId)>;

struct Throughput {
  double iteration_time = 0.0;  ///< s
  double tokens_per_s = 0.0, samples_per_s = 0.0;
  double flops_per_gpu = 0.0;     ///< model FLOPs (no recompute) per second per GPU
  double hw_flops_per_gpu = 0.0;  ///< including recomputation
  double mfu = 0.0, hfu = 0.0;
  double bubble_fraction = 0.0;
};

/// The simulated iterations, when the scenario was simulated.
struct SimulationResult {
  std::string executor;
  bool folded = true;
  std::size_t tasks = 0;
  std::int64_t simulated_gpus = 0;
  std::int64_t fold_group = 1;  ///< ranks r, r' were simulated as one iff r / fold_group == r' / fold_group
  double contention_free_iteration_time = 0.0;  ///< every task at its uncontended time, same DAG
  double contention_time = 0.0;                 ///< what bandwidth sharing added (executed − contention-free)
  int checkpoint_window = 0;  ///< iterations simulated behind a checkpoint before its pace is extrapolated
  ScheduleAnalysis analysis;
  Throughput throughput;
  std::shared_ptr<const TaskDag> dag;      ///< kept only when a trace is wanted
  std::shared_ptr<const TaskTimes> times;
  LinkNamer link_names;
};

/// Training-data reads in the simulated iterations (per reading rank: the first stage's).
struct DataResult {
  double bytes_per_iteration = 0.0;  ///< the whole cluster
  double read_s = 0.0;               ///< the steady iteration's read, longest over ranks
  double startup_read_s = 0.0;       ///< until every rank has its first batch (all nodes reading at once)
  double stall_s = 0.0;              ///< a reading GPU idle, waiting for its batch, per iteration
};

/// What a failure of one kind leaves to restart from.
struct Recovery {
  bool survives = true;    ///< some copy of the checkpoint outlives this kind of failure
  double durable_s = 0.0;  ///< from the checkpoint's start until that copy exists
  double restore_s = 0.0;  ///< every GPU reloading from that copy at once
};

/// One checkpoint, simulated on the same platform as training (its flows share the links).
struct CheckpointResult {
  double size_bytes = 0.0;       ///< the whole checkpoint
  double max_rank_bytes = 0.0;   ///< the most one GPU writes
  double stall_s = 0.0;          ///< training time lost to one checkpoint (incl. back-pressure)
  double snapshot_stall_s = 0.0; ///< the iteration with the checkpoint minus one without
  double interference_s = 0.0;   ///< training slowed by the background hops sharing its links
  double backpressure_s = 0.0;   ///< waiting for the previous persist to free the staging pool
  double replicate_s = 0.0;      ///< in_memory: until the peers hold their copies
  double redundant_overhead_s = 0.0;  ///< redundant_compute: what the replicas add to each iteration
  double persist_s = 0.0;        ///< from the snapshot's start until durable in the last tier
  double overhead_fraction = 0.0;
  double restore_s = 0.0;        ///< every GPU reloading after a GPU failure (its nearest copy)
  std::map<std::string, Recovery> recovery;  ///< per failure kind: gpu, node, network
  std::shared_ptr<const TaskDag> dag;      ///< the checkpointing run, kept only when a trace is wanted
  std::shared_ptr<const TaskTimes> times;
  std::map<Tier, NodeTierPeak> staging;  ///< executed per-node tier peaks of the checkpointing run
};

/// Goodput at one checkpoint interval, among those the best-interval search considered.
struct IntervalGoodput {
  double iterations = 0.0, interval_s = 0.0;
  double first_order_goodput = 0.0;  ///< the first-order model with the durability lag (ranks every candidate)
  std::optional<double> simulated_goodput;  ///< the run-level simulation's, where it was run
};

/// The training run over the failure horizon (means over `failures.runs` seeds, with 95 % half-widths).
struct RunLevelResult {
  double job_mtbf_s = 0.0;
  std::int64_t runs = 0;
  double goodput = 0.0, goodput_ci95 = 0.0;
  double first_order_goodput = 0.0;
  double failures = 0.0, lost_work_s = 0.0, restart_s = 0.0, restore_s = 0.0, checkpoint_s = 0.0;
  double effective_tokens_per_s = 0.0;
  double young_interval_s = 0.0, daly_interval_s = 0.0;  ///< optimal time between checkpoints
  double goodput_at_young = 0.0, goodput_at_daly = 0.0;
  double young_daly_delta_s = 0.0;  ///< the checkpoint cost δ Young and Daly were given (the stall)
  /// The interval that maximises goodput on the simulated cost (back-pressure and durability lag
  /// included), the user's unless a searched one beats it, and its goodput.
  double best_interval_iterations = 0.0, best_interval_s = 0.0, goodput_at_best = 0.0;
  double backpressure_at_best_s = 0.0;  ///< the wait for the previous persist each checkpoint costs there
  /// Every interval the search considered, shortest first (the --html report's goodput curve).
  std::vector<IntervalGoodput> interval_curve;
};

/// An overflow and who found it: the static memory model ("static"), the executed timeline
/// ("timeline") or a checkpoint's staging ("checkpoint"), with when it happened for the latter two.
struct FoundOverflow {
  Overflow overflow;
  std::string found_by;
  std::optional<double> time_s;
};

/// Whether the run fits, decided once from every overflow found.
struct Verdict {
  bool fits = true;
  std::vector<FoundOverflow> overflows;  ///< timeline tiers, static, checkpoint staging, timeline HBM
};

/// How sure the answer is (sim/analysis/confidence): which tables it rests on, and one line per
/// reason to doubt it.
struct Confidence {
  bool kernel_tables = false;  ///< the profile has a `kernels` section (else a roofline)
  bool validated_gpu = false;
  bool validated_framework = false;
  bool store_placeholder = false;  ///< hardware.object_store.bandwidth is the profile's placeholder
  std::vector<std::string> warnings;
};

/// Everything a run produced, before formatting.
struct RunResult {
  double parameters = 0.0;
  ParameterBreakdown parameters_by_kind;
  double flops_per_iteration = 0.0;  ///< model FLOPs, whole cluster, no recompute
  PipelinePartition partition;
  MemoryEstimate memory;
  std::optional<SimulationResult> simulation;
  std::optional<CheckpointResult> checkpoint;
  std::optional<DataResult> data;
  std::optional<RunLevelResult> run;
  Verdict verdict;
  Confidence confidence;
};

}  // namespace strata
