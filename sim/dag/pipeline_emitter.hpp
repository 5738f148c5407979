#pragma once

/// Pipeline parallelism between stages: each unit's output (activation forward, input gradient
/// backward) goes to the stage of the next chunk as one p2p transfer per lane, and a unit may run
/// only once its input has been sent. The schedule driver asks `ready` before emitting a unit.

#include <map>
#include <tuple>
#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/pipeline_schedule.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

class PipelineEmitter {
 public:
  /// `hidden_bytes`: one micro-batch's hidden-state buffer, what a stage sends; `overlap`: sends run
  /// on their own stream beside the compute (training.overlap_p2p_comm).
  PipelineEmitter(DagContext& ctx, const PipelinePartition& part, double hidden_bytes, bool overlap);

  int chunks() const { return chunks_; }
  /// Every iteration exchanges its own transfers.
  void new_iteration() { p2p_.clear(); }
  /// Whether the unit's input is there: it is the first of its direction, or its input was sent.
  bool ready(const PipelineUnit& u) const {
    if (first(u)) return true;
    return p2p_.count({u.forward ? u.chunk - 1 : u.chunk + 1, u.microbatch, u.forward}) > 0;
  }
  /// The unit's stage waits for the transfer that brought its input.
  void receive(int stage, const PipelineUnit& u);
  /// The unit's output to the stage of the next chunk in its direction, if there is one.
  void send_onward(int stage, const PipelineUnit& u);

 private:
  using UnitKey = std::tuple<int, int, bool>;  // (chunk, micro-batch, forward)

  bool first(const PipelineUnit& u) const { return u.forward ? u.chunk == 0 : u.chunk == chunks_ - 1; }
  void send(int stage, const PipelineUnit& u, int to_chunk);

  DagContext& ctx_;
  const PipelinePartition& part_;
  double hidden_bytes_;
  bool overlap_;
  int chunks_;
  std::map<UnitKey, std::vector<TaskId>> p2p_;
};

}  // namespace strata
