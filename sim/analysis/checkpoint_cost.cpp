#include "sim/analysis/checkpoint_cost.hpp"

#include <algorithm>

#include "sim/dag/training_dag.hpp"

namespace strata {

/// Simulates a checkpoint after a training iteration and measures what it costs against the same
/// run without it; restore is every simulated GPU reading its shard back at once, from where each
/// failure kind leaves a copy.
CheckpointResult simulate_checkpoint(const Scenario& sc, const CheckpointSimulator& sim) {
  const RunResult& r = sim.training();
  CheckpointResult c;
  const CheckpointSpec& spec = sc.checkpoint;
  const CheckpointBehaviour policy = behaviour(spec.strategy);
  const auto per_rank = checkpoint_bytes_per_rank(sc, r.memory);
  for (std::size_t s = 0; s < per_rank.size(); ++s) {
    c.size_bytes += per_rank[s] * static_cast<double>(sc.parallelism.tp * sc.parallelism.dp * sc.parallelism.cp);
    c.max_rank_bytes = std::max(c.max_rank_bytes, per_rank[s]);
  }
  // Under HSDP the replicas of a shard share its writes, but each reads the whole shard back (a load
  // plan is not deduplicated): dp_replicate times what it wrote.
  std::vector<double> restored = per_rank;
  for (double& bytes : restored) bytes *= static_cast<double>(sc.parallelism.dp_replicate);
  if (!policy.writes_checkpoints) {
    // No checkpoint: the cost is the slower iteration (against the same run without the replicas);
    // a failed rank's state comes from the previous stage's GPU, unless one node held both.
    const double plain = sim.plain_iteration();
    const double T = r.simulation->throughput.iteration_time;
    c.redundant_overhead_s = T - plain;
    c.overhead_fraction = c.redundant_overhead_s / plain;
    const RankLayout ranks = rank_layout(sc);
    bool apart = true;  // every replica on another node than the rank it protects
    for (std::int64_t rank = 0; rank < sc.gpus; ++rank)
      apart = apart && ranks.node(previous_stage_rank(ranks, rank)) != ranks.node(rank);
    const Recovery replica{true, 0.0, sim.restore(RestoreSource::previous_stage, restored)};
    c.recovery["gpu"] = replica;
    c.recovery["network"] = replica;
    c.recovery["node"] = apart ? replica : Recovery{false, 0.0, 0.0};
    c.restore_s = replica.restore_s;
    return c;
  }
  const double T = sim.baseline();
  const double interval = static_cast<double>(spec.interval_iterations) * r.simulation->throughput.iteration_time;
  const bool in_memory = policy.peer_replicas > 0, near = policy.optimizer_on_ssd;
  const CheckpointRun one = sim.run(T, false, spec.interval_iterations);
  // The next snapshot is due one interval after this one's stall; it waits if this persist (which
  // frees the staging pool) has not finished by then.
  auto wait_for = [&](double busy_s, double stall_s, double period_s) {
    return policy.blocks_until_durable ? 0.0 : std::max(0.0, busy_s - stall_s - period_s);
  };
  c.snapshot_stall_s = one.snapshot_stall_s;
  c.interference_s = std::max(0.0, one.stall_s - one.snapshot_stall_s);
  c.persist_s = one.persist_s;
  c.staging = one.staging;
  c.dag = one.dag;
  c.times = one.times;
  c.backpressure_s = wait_for(in_memory ? one.replicated_s : one.persist_s, one.stall_s, interval);
  c.stall_s = one.stall_s + c.backpressure_s;
  if (in_memory) {
    c.replicate_s = one.replicated_s;
    if (spec.tiers.size() > 1) {
      // Every persist_every-th checkpoint also goes on to the later tiers: average the two kinds.
      const CheckpointRun persisting = sim.run(T, true, spec.interval_iterations);
      const double n = static_cast<double>(policy.persist_every);
      const double wait = wait_for(persisting.persist_s, persisting.stall_s, n * interval);
      c.persist_s = persisting.persist_s;
      c.stall_s = ((n - 1.0) * c.stall_s + persisting.stall_s + wait) / n;
      for (const auto& [tier, peak] : persisting.staging)
        if (!c.staging.count(tier) || c.staging.at(tier).bytes < peak.bytes) c.staging[tier] = peak;
    }
  }
  c.overhead_fraction = c.stall_s / interval;

  // Restore, per failure kind, from the nearest copy that kind leaves (gpu and network failures
  // leave every tier; a node failure loses that node's DRAM, CXL and SSD copies).
  auto restore = [&](RestoreSource source) { return sim.restore(source, restored); };
  const bool durable_remote = spec.tiers.back() == Tier::object_store;
  auto& local = c.recovery["gpu"];
  auto& node = c.recovery["node"];
  if (in_memory) {
    local = {true, one.blocking_s, restore(RestoreSource::local_dram)};
    node = {true, one.replicated_s, restore(RestoreSource::peer_dram)};
  } else if (near) {
    local = {true, 0.0, restore(RestoreSource::local_ssd)};
    if (durable_remote) node = {true, c.persist_s, restore(RestoreSource::object_store_near)};
    else node = {false, 0.0, 0.0};
  } else {
    local = {true, c.persist_s, restore(RestoreSource::last_tier)};
    if (durable_remote) node = local;
    else node = {false, 0.0, 0.0};
  }
  c.recovery["network"] = local;
  c.restore_s = local.restore_s;
  return c;
}

}  // namespace strata
