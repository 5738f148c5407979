// Framework overlap switches (issue 14 item 3: parameter prefetch, TP communication overlap, PP
// point-to-point overlap; each set by the preset and overridable) and pipeline partitions as people
// run them (item 4: explicit per-stage or per-chunk block counts, and a partition balanced by
// simulated time within memory).

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "sim/analysis/pipeline_balance.hpp"
#include "sim/analysis/run.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "support.hpp"

using namespace strata;

namespace {

RunResult run(const Scenario& sc) { return run_scenario(sc, {ExecutorKind::list, true, false}); }

double exposed(const RunResult& r, TaskKind kind) {
  const auto& e = r.simulation->analysis.breakdown.exposed_comm;
  const auto it = e.find(kind);
  return it == e.end() ? 0.0 : it->second;
}

// Llama 3 8B (vocabulary 128,256, hidden 4,096: its LM head and loss cost about three blocks) on one
// DGX H100 as four pipeline stages.
const std::vector<std::string> kPipelined8b = {"training.iterations=1", "parallelism.zero_stage=1",
                                               "parallelism.pp=4"};

/// A scenario's layer work (sim/dag/layer_work): one entry per block, in order.
std::vector<LayerWork> work_of(const Scenario& sc) {
  const ComputeGraph graph = build_compute_graph(
      sc.model, {.seq_len = sc.training.seq_len,
                 .micro_batch = sc.training.micro_batch_size,
                 .activation_bytes = std::max(2.0, bytes_per_element(sc.training.precision)),
                 .flash_attention = sc.training.flash_attention});
  return layer_work(sc, graph);
}

std::vector<std::string> plus(std::vector<std::string> sets, std::initializer_list<std::string> more) {
  sets.insert(sets.end(), more);
  return sets;
}

/// Llama 3 8B with the pytorch-fsdp preset at TP 8 with SP over 2 replicas, two sequences of 8192 per
/// micro-batch, no recompute; `more` on top.
Scenario llama_8b_tp8(std::initializer_list<std::string> more) {
  const std::vector<std::string> tp8 = {"training.framework=\"pytorch-fsdp\"", "memory.recompute=\"none\"",
                                        "nodes=2", "parallelism.tp=8", "parallelism.dp=2",
                                        "parallelism.sequence_parallel=true", "training.global_batch_size=4",
                                        "training.micro_batch_size=2", "training.iterations=1"};
  return test::load("llama-3-8b-zero3-h100", plus(tp8, more));
}

}  // namespace

TEST_CASE("Framework presets set each overlap, and each is overridable on its own", "[framework]") {
  const Scenario core = test::load("gpt3-175b-64-h100");
  CHECK(core.training.behaviour.overlap_grad_reduce);
  // --overlap-param-gather, and under the interleaved schedule align_param_gather (core_r0.9.0's default).
  CHECK(core.training.behaviour.overlap_param_gather);
  CHECK(core.training.behaviour.align_param_gather);
  CHECK_FALSE(core.training.behaviour.overlap_tp_comm);  // --tp-comm-overlap is opt-in
  CHECK(core.training.behaviour.overlap_p2p_comm);       // interleaved: Megatron-Bridge turns it on
  const Scenario one_f = test::load("gpt3-175b-64-h100", {"parallelism.schedule=1f1b", "parallelism.virtual_stages=1"});
  CHECK_FALSE(one_f.training.behaviour.overlap_p2p_comm);
  CHECK(one_f.training.behaviour.overlap_param_gather);
  const Scenario old = test::load("gpt3-175b-64-h100", {"training.framework=megatron-lm-2021"});
  CHECK_FALSE(old.training.behaviour.overlap_grad_reduce);
  CHECK_FALSE(old.training.behaviour.overlap_param_gather);
  CHECK_FALSE(old.training.behaviour.overlap_tp_comm);
  CHECK_FALSE(old.training.behaviour.overlap_p2p_comm);
  const Scenario ds = test::load("llama-3-8b-zero3-h100", {"training.framework=deepspeed"});
  CHECK(ds.training.behaviour.overlap_param_gather);
  const Scenario set = test::load("gpt3-175b-64-h100", {"training.overlap_tp_comm=true", "training.overlap_p2p_comm=false",
                                                        "training.overlap_param_gather=false",
                                                        "training.align_param_gather=false"});
  CHECK(set.training.behaviour.overlap_tp_comm);
  CHECK_FALSE(set.training.behaviour.overlap_p2p_comm);
  CHECK_FALSE(set.training.behaviour.overlap_param_gather);
  CHECK_FALSE(set.training.behaviour.align_param_gather);
  CHECK(set.training.behaviour.overlap_grad_reduce);
}

TEST_CASE("TP communication overlap hides all but one slice of the TP collectives and slows the GEMMs",
          "[framework][simulation]") {
  const std::vector<std::string> base = {"training.iterations=1"};
  const RunResult blocking = run(test::load("korthikanti-175b-selective", base));
  const RunResult overlapped =
      run(test::load("korthikanti-175b-selective", plus(base, {"training.overlap_tp_comm=true"})));
  const double tp_blocking = exposed(blocking, TaskKind::tp_comm), tp_overlapped = exposed(overlapped, TaskKind::tp_comm);
  INFO("exposed TP comm " << tp_blocking << " s -> " << tp_overlapped << " s; iteration "
                          << blocking.simulation->throughput.iteration_time << " s -> "
                          << overlapped.simulation->throughput.iteration_time << " s");
  // TP 8: one slice in eight stays exposed (latency steps aside).
  CHECK(tp_overlapped < 0.25 * tp_blocking);
  CHECK(overlapped.simulation->throughput.iteration_time < blocking.simulation->throughput.iteration_time);
  // The GEMMs lose the SMs the communication holds: compute time grows.
  CHECK(overlapped.simulation->analysis.breakdown.compute > blocking.simulation->analysis.breakdown.compute);
}

TEST_CASE("Async TP hides the forward's and the recomputation's TP collectives, not the backward's, on no SMs",
          "[framework][simulation]") {
  // Full recompute: each layer's TP collectives run in three passes of equal volume (forward,
  // recomputation, backward). Megatron's asynchronous backward off, so the backward's block unless
  // the overlap pipelines them.
  const std::vector<std::string> base = {"training.iterations=1", "training.async_tp_backward=false",
                                         "parallelism.sequence_parallel=true"};
  const RunResult blocking = run(test::load("korthikanti-175b-full", base));
  const RunResult userbuffers = run(test::load(
      "korthikanti-175b-full",
      plus(base, {"training.overlap_tp_comm=true", "training.tp_overlap_method=userbuffers"})));
  const Scenario async_sc = test::load(
      "korthikanti-175b-full", plus(base, {"training.overlap_tp_comm=true", "training.tp_overlap_method=async-tp"}));
  REQUIRE(async_sc.training.behaviour.tp_overlap_method == TpOverlapMethod::async_tp);
  const RunResult async = run(async_sc);
  const double tp_blocking = exposed(blocking, TaskKind::tp_comm);
  const double tp_userbuffers = exposed(userbuffers, TaskKind::tp_comm), tp_async = exposed(async, TaskKind::tp_comm);
  INFO("exposed TP comm: blocking " << tp_blocking << " s, userbuffers " << tp_userbuffers << " s, async TP "
                                    << tp_async << " s");
  // Per block with SP, in all-reduce equivalents: forward 2, recomputation 2, backward 3 (the input
  // re-gathered for the weight gradients; sim/dag/layer_work.cpp). TP 8: userbuffers leave one slice
  // in eight of every pass exposed (1/8 of the blocking time), async TP the backward's whole and a
  // slice of the others: (3 + 4/8) / 7 = 1/2; NCCL's latency steps of the blocking ones on top.
  CHECK(tp_userbuffers == Approx(tp_blocking / 8.0).epsilon(0.15));
  CHECK(tp_async == Approx(tp_blocking / 2.0).epsilon(0.05));
  CHECK(async.simulation->throughput.iteration_time < blocking.simulation->throughput.iteration_time);
  CHECK(async.simulation->throughput.iteration_time > userbuffers.simulation->throughput.iteration_time);
  // Copy engines move async TP's slices: the GEMMs keep every SM, where userbuffers' take some. Async
  // TP's fused ops add two memory passes per all-reduce equivalent of the forward and of the
  // recomputation: a copy of the rank's shard into symmetric memory (read and write 1/8 of the
  // hidden-state buffer) and the sum of the pulled partials (read all of it, write 1/8), one kernel
  // each at efficiency.memory of the HBM bandwidth. 175B on PP 8: 12 blocks of 2 per stage, 64
  // micro-batches (the embedding's output is reduce-scattered after a lookup: nothing to fuse).
  const HardwareSpec& hw = async_sc.hardware;
  const double hidden = 2.0 * 2048 * 12288;  // bf16, s·b·h
  const double rate = hw.gpu.hbm_bandwidth.value * hw.efficiency.memory;
  const double fused_s = (2.0 * hidden / 8.0 + hidden * (1.0 + 1.0 / 8.0)) / rate + 2.0 * hw.kernels.launch.value;
  const auto& async_time = async.simulation->analysis.breakdown;
  const auto& blocking_time = blocking.simulation->analysis.breakdown;
  CHECK(async_time.compute - blocking_time.compute == Approx(64.0 * 12 * 2 * fused_s).epsilon(0.01));
  CHECK(async_time.recompute - blocking_time.recompute == Approx(64.0 * 12 * 2 * fused_s).epsilon(0.01));
  CHECK(userbuffers.simulation->analysis.breakdown.compute > blocking.simulation->analysis.breakdown.compute);
  // The pytorch-fsdp preset's TP overlap is async TP; Megatron-Core's, userbuffers.
  CHECK(test::load("llama-3-8b-zero3-h100", {"training.framework=pytorch-fsdp"}).training.behaviour.tp_overlap_method ==
        TpOverlapMethod::async_tp);
  CHECK(test::load("gpt3-175b-64-h100").training.behaviour.tp_overlap_method == TpOverlapMethod::userbuffers);
}

TEST_CASE("Per-op checkpointing's rerun all-gathers block under async TP and hide under userbuffers",
          "[framework][simulation]") {
  // Llama 3 8B with the pytorch-fsdp preset (per-op selective checkpointing), TP 8 with SP, FSDP over
  // 2 replicas, one micro-batch each.
  const std::vector<std::string> tp8 = {
      "training.framework=\"pytorch-fsdp\"", "memory.recompute=\"selective\"", "nodes=2", "parallelism.tp=8",
      "parallelism.dp=2", "parallelism.sequence_parallel=true", "training.global_batch_size=2",
      "training.micro_batch_size=1", "training.iterations=1"};
  const auto rerun_tp = [&](std::initializer_list<std::string> more) {
    const Scenario sc = test::load("llama-3-8b-zero3-h100", plus(tp8, more));
    REQUIRE(sc.training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul);
    return exposed(run(sc), TaskKind::tp_comm);
  };
  // The recomputation's TP time is two all-gathers per block, exposed whether the TP overlap is off
  // or async TP (which pipelines the forward's only); userbuffers hide them.
  const double blocking = rerun_tp({}), async = rerun_tp({"training.overlap_tp_comm=true"});
  const double userbuffers =
      rerun_tp({"training.overlap_tp_comm=true", "training.tp_overlap_method=userbuffers"});
  INFO("exposed TP comm: blocking " << blocking << " s, async TP " << async << " s, userbuffers "
                                    << userbuffers);
  // Per block in all-reduce equivalents: forward 2, recomputation 1 (two all-gathers), backward 2
  // (DTensor's sequence parallelism gathers nothing again for the weight gradients). Async TP hides
  // 7/8 of the forward's: (5 - 2·7/8) / 5 of the blocking time; userbuffers 1/8.
  CHECK(async == Approx(blocking * (5.0 - 1.75) / 5.0).epsilon(0.05));
  CHECK(userbuffers == Approx(blocking / 8.0).epsilon(0.15));
}

TEST_CASE("DTensor's sequence parallelism copies the tensor around each collective, gathers nothing again and "
          "keeps the gathered inputs",
          "[framework][activations]") {
  // Llama 3 8B with the pytorch-fsdp preset at TP 8 with SP, two sequences of 8192 per micro-batch.
  const auto load = llama_8b_tp8;
  const Scenario dtensor = load({});
  REQUIRE(dtensor.training.behaviour.sequence_parallel_style == SequenceParallelStyle::dtensor);
  const Scenario megatron = load({"training.sequence_parallel_style=megatron"});
  const LayerWork d = work_of(dtensor)[5], m = work_of(megatron)[5];
  // Backward all-reduce equivalents per block: Megatron re-gathers the two column-parallel inputs.
  CHECK(m.tp_fwd == 2);
  CHECK(d.tp_fwd == 2);
  CHECK(m.tp_bwd == 3);
  CHECK(d.tp_bwd == 2);
  // One pass (read and write) over the whole hidden-state buffer per all-gather and per reduce-scatter:
  // four per block forward and four backward, at efficiency.memory of the HBM bandwidth, one kernel each.
  const HardwareSpec& hw = dtensor.hardware;
  const double hidden = 2.0 * 8192 * 2 * 4096;  // bf16, s·b·h
  const double copy_s = 2.0 * hidden / (hw.gpu.hbm_bandwidth.value * hw.efficiency.memory) + hw.kernels.launch.value;
  CHECK(d.fwd_s - m.fwd_s == Approx(4.0 * copy_s));
  CHECK(d.bwd_s - m.bwd_s == Approx(4.0 * copy_s));
  // A batch of one needs no copy (the shards are then contiguous), and async TP's fused matmuls read
  // the forward's shards in place; its backward's collectives block and copy.
  const std::vector<std::string> one = {"training.micro_batch_size=1", "training.global_batch_size=2"};
  const LayerWork d1 = work_of(load({one[0], one[1]}))[5];
  const LayerWork m1 = work_of(load({one[0], one[1], "training.sequence_parallel_style=megatron"}))[5];
  CHECK(d1.fwd_s == Approx(m1.fwd_s));
  const LayerWork async = work_of(load({"training.overlap_tp_comm=true"}))[5];
  CHECK(async.bwd_s - m.bwd_s == Approx(4.0 * copy_s));
  // The fused ops' own passes instead, in either layout, per all-reduce equivalent: the shard copied
  // into symmetric memory (read and write 1/8 of the buffer) and the partials summed (read all of it,
  // write 1/8), one kernel each.
  const double rate = hw.gpu.hbm_bandwidth.value * hw.efficiency.memory;
  const double fused_s = (2.0 * hidden / 8.0 + hidden * (1.0 + 1.0 / 8.0)) / rate + 2.0 * hw.kernels.launch.value;
  CHECK(async.fwd_s - m.fwd_s == Approx(2.0 * fused_s));
  const LayerWork async_megatron =
      work_of(load({"training.overlap_tp_comm=true", "training.sequence_parallel_style=megatron"}))[5];
  CHECK(async_megatron.fwd_s - m.fwd_s == Approx(2.0 * fused_s));
  CHECK(async_megatron.bwd_s == Approx(m.bwd_s));
  // Memory: the QKV and MLP inputs and the LM head's are kept whole on every rank, not as a 1/8
  // sequence shard: 7/8 of a hidden-state tensor more each, two per block of 32 and the head's, one
  // micro-batch in flight.
  const double more = estimate_scenario(dtensor).memory.stages[0].hbm.activations -
                      estimate_scenario(megatron).memory.stages[0].hbm.activations;
  CHECK(more == Approx((32 * 2 + 1) * hidden * 7.0 / 8.0));
}

TEST_CASE("Under fp8 with SP the column-parallel linears' inputs are gathered as fp8, with Transformer Engine "
          "the output gradients too, the rest in 16 bits",
          "[framework][activations]") {
  // Llama 3 8B at TP 8 with SP, two sequences of 8192 per micro-batch, Megatron's layout and
  // DTensor's. Transformer Engine's LayerNormLinear quantizes before gathering, torchao's Float8Linear
  // gathers float8 for TP: every all-gather of an input (forward, recomputation, Megatron's re-gather)
  // moves 1 byte an element; reduce-scatters 2, and the output gradients' all-gathers 2 under
  // pytorch-fsdp (torchao), 1 under megatron-core (Transformer Engine quantizes them first).
  const auto load = llama_8b_tp8;
  const Scenario megatron_fp8 = load({"training.precision=\"fp8\"", "training.sequence_parallel_style=megatron"});
  const Scenario megatron_bf16 = load({"training.sequence_parallel_style=megatron"});
  const Scenario dtensor_fp8 = load({"training.precision=\"fp8\""});
  REQUIRE(megatron_fp8.training.precision == Precision::fp8);
  const double hidden = 2.0 * 8192 * 2 * 4096;  // the 16-bit hidden-state buffer, s·b·h
  CHECK(hidden_state_bytes(megatron_fp8) == Approx(hidden));
  CHECK(gathered_input_bytes(megatron_fp8) == Approx(hidden / 2.0));
  CHECK(gathered_input_bytes(megatron_bf16) == Approx(hidden));
  // In the buffers of all-reduce equivalents (an all-gather or a reduce-scatter of S counts S/2):
  // forward two gathers of an fp8 input and two 16-bit reduce-scatters; Megatron's backward two
  // reduce-scatters and two gradient all-gathers in 16 bits and two fp8 re-gathers; DTensor's
  // backward gathers nothing again.
  const LayerWork m = work_of(megatron_fp8)[5], b = work_of(megatron_bf16)[5], d = work_of(dtensor_fp8)[5];
  CHECK(m.tp_fwd_bytes == Approx(0.75 * 2.0 * hidden));
  CHECK(m.tp_block_bytes == Approx(m.tp_fwd_bytes));
  CHECK(m.tp_bwd_bytes == Approx(2.5 * hidden));
  CHECK(m.tp_bwd_async_bytes == Approx(0.75 * 2.0 * hidden));  // the re-gathers and the reduce-scatters
  CHECK(m.tp_gather_bytes == Approx(hidden / 2.0));
  CHECK(b.tp_fwd_bytes == Approx(2.0 * hidden));
  CHECK(b.tp_bwd_bytes == Approx(3.0 * hidden));
  CHECK(d.tp_bwd_bytes == Approx(2.0 * hidden));
  // megatron-core's linears are Transformer Engine's: the two output gradients are gathered as fp8,
  // 2 · (1 + 1/2)/2 + the re-gathers' 1/2 = 2 hidden-state buffers where torchao's move 2.5.
  const Scenario te_fp8 = load({"training.precision=\"fp8\"", "training.framework=\"megatron-core\""});
  REQUIRE(te_fp8.training.behaviour.fp8_gathers_output_gradients);
  REQUIRE_FALSE(megatron_fp8.training.behaviour.fp8_gathers_output_gradients);
  CHECK(gathered_output_gradient_bytes(te_fp8) == Approx(hidden / 2.0));
  CHECK(gathered_output_gradient_bytes(megatron_fp8) == Approx(hidden));
  const LayerWork te = work_of(te_fp8)[5];
  CHECK(te.tp_bwd_bytes == Approx(2.0 * hidden));
  CHECK(te.tp_bwd_async_bytes == Approx(m.tp_bwd_async_bytes));  // what moves beside the GEMMs is unchanged
  CHECK(te.tp_fwd_bytes == Approx(m.tp_fwd_bytes));
  CHECK(work_of(load({"training.framework=\"megatron-core\""}))[5].tp_bwd_bytes == Approx(3.0 * hidden));
  // With DTensor's layout nothing is gathered again, and every backward collective may run beside
  // the GEMMs: the two reduce-scatters in 16 bits and the two output gradients in fp8.
  const LayerWork te_dtensor = work_of(load({"training.precision=\"fp8\"", "training.framework=\"megatron-core\"",
                                             "training.sequence_parallel_style=dtensor"}))[5];
  CHECK(te_dtensor.tp_bwd_bytes == Approx(1.5 * hidden));
  CHECK(te_dtensor.tp_bwd_async_bytes == Approx(te_dtensor.tp_bwd_bytes));
  // DTensor's copy after each all-gather copies the fp8 tensor: forward two of hidden/2 and two of
  // hidden, each read and written, four kernels.
  const HardwareSpec& hw = dtensor_fp8.hardware;
  const double rate = hw.gpu.hbm_bandwidth.value * hw.efficiency.memory;
  CHECK(d.fwd_s - m.fwd_s == Approx(2.0 * (2.0 * hidden / 2.0 + 2.0 * hidden) / rate + 4.0 * hw.kernels.launch.value));
  // The DAG moves those bytes: over the 32 blocks, with the embedding's forward collective and the
  // LM head's backward one in 16 bits, fp8 moves (32·(1.5 + 2.5) + 2) / (32·(2 + 3) + 2) of bf16's.
  const auto tp_bytes = [](const Scenario& sc) {
    const ComputeGraph graph = build_compute_graph(sc.model, {.seq_len = sc.training.seq_len,
                                                              .micro_batch = sc.training.micro_batch_size,
                                                              .activation_bytes = 2.0,
                                                              .flash_attention = sc.training.flash_attention});
    const PipelinePartition part = partition_layers(static_cast<int>(sc.model.num_layers), 1, 1);
    const TaskDag dag = build_training_dag(sc, graph, part, estimate_memory(sc, graph, part), {true, -1, 1});
    double bytes = 0.0;
    for (const Task& t : dag.tasks)
      if (t.kind == TaskKind::tp_comm)
        for (const Flow& f : t.flows) bytes += f.bytes;
    return bytes;
  };
  CHECK(tp_bytes(megatron_fp8) / tp_bytes(megatron_bf16) == Approx((32 * 4.0 + 2.0) / (32 * 5.0 + 2.0)));
  // Async TP's copy of the shard into symmetric memory copies the fp8 shard: per pair, read and
  // write hidden/2/8, then the 16-bit partials summed (read hidden, write hidden/8).
  const LayerWork async = work_of(load({"training.precision=\"fp8\"", "training.overlap_tp_comm=true"}))[5];
  const double fused_s = (2.0 * hidden / 2.0 / 8.0 + hidden * (1.0 + 1.0 / 8.0)) / rate + 2.0 * hw.kernels.launch.value;
  CHECK(async.fwd_s - m.fwd_s == Approx(2.0 * fused_s));
  // An MoE block's expert sub-block gathers 16-bit tokens and their 16-bit gradients (the token
  // dispatcher), its attention sub-block an fp8 input and (megatron-core) an fp8 output gradient:
  // Mixtral 8x7B at TP 2 with SP and EP 8.
  const Scenario moe_sc = test::load("mixtral-8x7b-ep-h100",
                                     {"training.precision=\"fp8\"", "parallelism.tp=2", "parallelism.dp=8",
                                      "parallelism.sequence_parallel=true", "training.iterations=1"});
  REQUIRE(moe_sc.model.is_moe());
  const LayerWork moe = work_of(moe_sc)[5];
  REQUIRE(moe.expert_params > 0.0);
  const double moe_hidden = hidden_state_bytes(moe_sc);
  CHECK(moe.tp_gather_bytes == Approx(0.75 * moe_hidden));
  CHECK(moe.tp_fwd_bytes == Approx(0.5 * (0.5 + 1.0) * moe_hidden + moe_hidden));
  REQUIRE(moe_sc.training.behaviour.fp8_gathers_output_gradients);
  CHECK(moe.tp_bwd_bytes == Approx(2.0 * 0.5 * (1.0 + 0.75) * moe_hidden + 0.75 * moe_hidden));
}

TEST_CASE("Pipeline sends off the compute stream and parameter gathers without prefetch", "[framework][simulation]") {
  const std::vector<std::string> base = {"training.iterations=1"};
  const RunResult blocking = run(test::load("korthikanti-175b-selective", base));
  const RunResult async = run(test::load("korthikanti-175b-selective", plus(base, {"training.overlap_p2p_comm=true"})));
  INFO("pipeline sends blocking " << blocking.simulation->throughput.iteration_time << " s, asynchronous "
                                  << async.simulation->throughput.iteration_time << " s");
  CHECK(async.simulation->throughput.iteration_time < blocking.simulation->throughput.iteration_time);
  const RunResult prefetched = run(test::load("llama-3-8b-zero3-h100", {"training.iterations=1"}));
  const RunResult serial =
      run(test::load("llama-3-8b-zero3-h100", {"training.iterations=1", "training.overlap_param_gather=false"}));
  INFO("ZeRO-3 gathers prefetched " << prefetched.simulation->throughput.iteration_time << " s, not "
                                    << serial.simulation->throughput.iteration_time << " s");
  CHECK(serial.simulation->throughput.iteration_time > prefetched.simulation->throughput.iteration_time);
  CHECK(exposed(serial, TaskKind::param_gather) > exposed(prefetched, TaskKind::param_gather));
}

TEST_CASE("The distributed optimizer's updated weights are gathered beside the next forward when overlapped",
          "[framework][simulation]") {
  // Llama 3 8B on one DGX H100, ZeRO-1 over 8 replicas, 8 micro-batches each, Megatron-Core without
  // pipelining: --overlap-param-gather dispatches each layer's gather as the forward reaches the one
  // before, in the first micro-batch only; without it the step is followed by one gather of everything.
  const std::vector<std::string> base = {"training.iterations=1", "parallelism.zero_stage=1",
                                         "training.framework=megatron-core"};
  const Scenario overlapped = test::load("llama-3-8b-zero3-h100", base);
  REQUIRE(overlapped.training.behaviour.overlap_param_gather);  // the preset's
  const RunResult in_forward = run(overlapped);
  const RunResult after_step =
      run(test::load("llama-3-8b-zero3-h100", plus(base, {"training.overlap_param_gather=false"})));
  // Both count the gather as the optimizer's data-parallel traffic, with the gradient reduction.
  const double dp_forward = exposed(in_forward, TaskKind::dp_comm);
  const double dp_after = exposed(after_step, TaskKind::dp_comm);
  INFO("exposed data-parallel traffic " << dp_after << " s after the step, " << dp_forward << " s in the forward; "
                                        << "iteration " << after_step.simulation->throughput.iteration_time << " s -> "
                                        << in_forward.simulation->throughput.iteration_time << " s");
  CHECK(exposed(in_forward, TaskKind::param_gather) == 0.0);  // the ZeRO-3 column stays ZeRO-3's
  CHECK(dp_forward < dp_after);
  CHECK(in_forward.simulation->throughput.iteration_time < after_step.simulation->throughput.iteration_time);

  // Interleaved (Llama 3 70B on 64 H100, TP 8, PP 4 with 5 chunks per stage, DP 2): aligned to the
  // model chunks, every gather is issued behind the step and none waits for the compute, so the
  // chunks' first forwards wait less than when each gather is dispatched by the forward. Two
  // iterations: the second's gathers follow the first's step.
  const std::vector<std::string> two_iterations = {"training.iterations=2"};
  const Scenario aligned = test::load("llama-3-70b-h100-64", two_iterations);
  REQUIRE(aligned.training.behaviour.overlap_param_gather);
  REQUIRE(aligned.training.behaviour.align_param_gather);  // the preset's, core_r0.9.0's default
  const double t_aligned = run(aligned).simulation->throughput.iteration_time;
  const double t_paced =
      run(test::load("llama-3-70b-h100-64", plus(two_iterations, {"training.align_param_gather=false"})))
          .simulation->throughput.iteration_time;
  const double t_exposed =
      run(test::load("llama-3-70b-h100-64", plus(two_iterations, {"training.overlap_param_gather=false"})))
          .simulation->throughput.iteration_time;
  INFO("interleaved: aligned " << t_aligned << " s, paced by the forward " << t_paced << " s, after the step "
                               << t_exposed << " s");
  CHECK(t_aligned < t_paced);
  CHECK(t_aligned < t_exposed);
}

TEST_CASE("Balanced partition: contiguous chunks minimising the slowest", "[partition]") {
  // Seven unit blocks and a head of five on two stages: [6 | 1 + 5] is the best split (max 6).
  const std::vector<double> block = {1, 1, 1, 1, 1, 1, 1, 5};
  const ChunkCost cost = [&](int first, int count) {
    return std::accumulate(block.begin() + first, block.begin() + first + count, 0.0);
  };
  const auto p = balance_partition(8, cost, 2, 1, [](const PipelinePartition&, int) { return true; });
  REQUIRE(p);
  CHECK(chunk_layers(*p) == std::vector<int>{6, 2});
  // Nothing fits: no partition.
  CHECK_FALSE(balance_partition(8, cost, 2, 1, [](const PipelinePartition&, int) { return false; }));
  // Per stage counts spread over the stage's chunks, earlier chunks first.
  CHECK(chunk_layers(partition_from_counts({9, 9, 8, 6}, 4, 2)) == std::vector<int>{5, 5, 4, 3, 4, 4, 4, 3});
}

TEST_CASE("Pipeline partitions: explicit counts honoured, the balanced one takes blocks off the LM head's stage",
          "[partition][simulation]") {
  const RunResult uniform = run(test::load("llama-3-8b-zero3-h100", kPipelined8b));
  CHECK(chunk_layers(uniform.partition) == std::vector<int>{8, 8, 8, 8});

  const RunResult explicit_run =
      run(test::load("llama-3-8b-zero3-h100", plus(kPipelined8b, {"parallelism.pipeline_layers=[9,9,8,6]"})));
  CHECK(chunk_layers(explicit_run.partition) == std::vector<int>{9, 9, 8, 6});

  const RunResult balanced =
      run(test::load("llama-3-8b-zero3-h100", plus(kPipelined8b, {"parallelism.pipeline_partition=\"balanced\""})));
  const std::vector<int> layers = chunk_layers(balanced.partition);
  INFO("balanced " << layers[0] << " " << layers[1] << " " << layers[2] << " " << layers[3] << "; iteration "
                   << uniform.simulation->throughput.iteration_time << " s uniform, "
                   << balanced.simulation->throughput.iteration_time << " s balanced");
  CHECK(layers.back() < 8);
  int total = 0;
  for (int n : layers) total += n;
  CHECK(total == 32);
  CHECK(balanced.memory.fits);
  CHECK(balanced.simulation->throughput.iteration_time <= uniform.simulation->throughput.iteration_time);

  // Interleaved: per-chunk balance, each chunk keeps a block.
  const auto interleaved = plus(kPipelined8b, {"parallelism.schedule=interleaved", "parallelism.virtual_stages=2"});
  const RunResult i_uniform = run(test::load("llama-3-8b-zero3-h100", interleaved));
  const RunResult i_balanced =
      run(test::load("llama-3-8b-zero3-h100", plus(interleaved, {"parallelism.pipeline_partition=\"balanced\""})));
  const std::vector<int> chunks = chunk_layers(i_balanced.partition);
  REQUIRE(chunks.size() == 8);
  CHECK(chunks.back() < chunk_layers(i_uniform.partition).back());
  CHECK(i_balanced.simulation->throughput.iteration_time <= i_uniform.simulation->throughput.iteration_time);
  const RunResult i_explicit =
      run(test::load("llama-3-8b-zero3-h100", plus(interleaved, {"parallelism.pipeline_layers=[9,9,8,6]"})));
  CHECK(chunk_layers(i_explicit.partition) == std::vector<int>{5, 5, 4, 3, 4, 4, 4, 3});

  // GPipe too.
  const auto gpipe = plus(kPipelined8b, {"parallelism.schedule=gpipe", "training.global_batch_size=16"});
  const RunResult g_uniform = run(test::load("llama-3-8b-zero3-h100", gpipe));
  const RunResult g_balanced =
      run(test::load("llama-3-8b-zero3-h100", plus(gpipe, {"parallelism.pipeline_partition=\"balanced\""})));
  if (g_uniform.memory.fits) {
    CHECK(chunk_layers(g_balanced.partition).back() < 8);
    CHECK(g_balanced.simulation->throughput.iteration_time <= g_uniform.simulation->throughput.iteration_time);
  }
}

TEST_CASE("A gradient all-reduce that is not overlapped follows each stage's backward, not the pipeline's drain",
          "[framework][simulation]") {
  // Megatron-LM 2021 (local DDP) all-reduces after the pipeline schedule: each of the 64 stages pays its
  // own reduction once, at the end, instead of holding up the gradients it sends to the stage before
  // (which would chain 64 reductions into the drain).
  // The collectives' hold on the SMs is left out: overlapped, it slows every stage's last backward,
  // which the drain chains (a cost the ordering under test is not about).
  const std::vector<std::string> base = {"training.iterations=1", "gpus=1024", "parallelism.dp=2",
                                         "training.global_batch_size=128", "training.framework=\"megatron-lm-2021\"",
                                         "hardware.nvlink.collective_sms=0", "hardware.nic.collective_sms=0"};
  const RunResult after = run(test::load("korthikanti-1t-full", base));
  const RunResult overlapped = run(test::load("korthikanti-1t-full", plus(base, {"training.overlap_grad_reduce=true"})));
  const double t_after = after.simulation->throughput.iteration_time;
  const double t_overlapped = overlapped.simulation->throughput.iteration_time;
  const double reduction = exposed(after, TaskKind::dp_comm);
  INFO("iteration " << t_overlapped << " s overlapped, " << t_after << " s after the backward; one stage's exposed "
                    << "reduction " << reduction << " s");
  REQUIRE(reduction > 0.0);
  CHECK(t_after >= t_overlapped);
  CHECK(t_after - t_overlapped <= 2.0 * reduction);
}

TEST_CASE("Model chunks without blocks: the embedding and the head alone on the first and last (Llama 3 §3.3.2)",
          "[partition][simulation]") {
  // 126 layers on 16 stages of 8 chunks: one block per chunk, the first chunk the embedding's only,
  // the last the head's only, so the first and the last stage hold 7 blocks and the others 8.
  const PipelinePartition llama3 = partition_layers(126, 16, 8);
  const std::vector<int> chunks = chunk_layers(llama3);
  REQUIRE(chunks.size() == 128);
  CHECK(chunks.front() == 0);
  CHECK(chunks.back() == 0);
  CHECK(std::count(chunks.begin(), chunks.end(), 1) == 126);
  CHECK(llama3.layers_on_stage(0) == 7);
  CHECK(llama3.layers_on_stage(15) == 7);
  CHECK(llama3.layers_on_stage(7) == 8);
  CHECK(llama3.ends_apart());
  // One block short: only the first chunk goes without (the head outweighs the embedding).
  const std::vector<int> one_short = chunk_layers(partition_layers(127, 16, 8));
  CHECK(one_short.front() == 0);
  CHECK(one_short.back() == 1);
  CHECK_FALSE(partition_layers(128, 16, 8).ends_apart());
  CHECK_THROWS(partition_layers(125, 16, 8));
  CHECK_THROWS(partition_from_counts({1, 0, 1, 1}, 2, 2));  // an empty chunk in the middle

  // The same work either way: the compute every GPU does, on average, is the model's whatever chunk
  // holds the embedding and the head; the layout with them alone runs and keeps its counts. The
  // updated weights are gathered after the step, where no collective shares the GPU with the compute.
  const auto interleaved = plus(kPipelined8b, {"parallelism.schedule=interleaved", "parallelism.virtual_stages=2",
                                               "training.global_batch_size=8", "training.overlap_param_gather=false"});
  const RunResult folded =
      run(test::load("llama-3-8b-zero3-h100", plus(interleaved, {"parallelism.pipeline_layers=[1,6,6,5,5,4,4,1]"})));
  const RunResult apart =
      run(test::load("llama-3-8b-zero3-h100", plus(interleaved, {"parallelism.pipeline_layers=[0,6,6,5,5,5,5,0]"})));
  CHECK(chunk_layers(apart.partition) == std::vector<int>{0, 6, 6, 5, 5, 5, 5, 0});
  const double folded_compute = folded.simulation->analysis.breakdown.compute;
  const double apart_compute = apart.simulation->analysis.breakdown.compute;
  INFO("mean compute per GPU: " << folded_compute << " s with the ends folded, " << apart_compute << " s apart");
  CHECK(apart_compute == Approx(folded_compute).epsilon(1e-9));
}

TEST_CASE("Below ZeRO-2, Megatron-LM 2021 and DeepSpeed accumulate each micro-batch's gradients by a pass of "
          "their own; Megatron-Core has none",
          "[framework]") {
  // bf16 with fp32 gradients (Megatron's main_grad with --accumulate-allreduce-grads-in-fp32).
  const Scenario core = test::load("gpt3-175b-64-h100", {"training.grad_precision=fp32"});
  const Scenario old =
      test::load("gpt3-175b-64-h100", {"training.framework=megatron-lm-2021", "training.grad_precision=fp32"});
  REQUIRE(core.training.grad_precision == Precision::fp32);
  CHECK(core.training.behaviour.grad_accumulation == GradAccumulation::none);
  CHECK(old.training.behaviour.grad_accumulation == GradAccumulation::add);
  const auto fused = work_of(core), hooked = work_of(old);
  REQUIRE(fused.size() == hooked.size());
  for (std::size_t e = 0; e < fused.size(); ++e) {
    INFO("entry " << e);
    // main_grad.add_(grad): the bf16 gradient read, the fp32 buffer read and written.
    CHECK(hooked[e].bwd_bytes - fused[e].bwd_bytes == Approx(fused[e].params * (2.0 + 2.0 * 4.0)));
    CHECK(hooked[e].bwd_s > fused[e].bwd_s);
    CHECK(hooked[e].fwd_s == fused[e].fwd_s);
  }
  // DeepSpeed: fp32 gradients of a bf16 model are its BF16_Optimizer's, a cast to fp32 and an add.
  const Scenario bf16 = test::load("llama-3-8b-zero3-h100", {"training.framework=deepspeed", "parallelism.zero_stage=1",
                                                             "training.grad_precision=fp32"});
  const Scenario half = test::load("llama-3-8b-zero3-h100", {"training.framework=deepspeed", "parallelism.zero_stage=1",
                                                             "training.grad_precision=bf16"});
  CHECK(bf16.training.behaviour.grad_accumulation == GradAccumulation::cast_add);
  CHECK(half.training.behaviour.grad_accumulation == GradAccumulation::add);
  const auto cast = work_of(bf16), added = work_of(half);
  CHECK(cast.front().bwd_bytes - added.front().bwd_bytes ==
        Approx(cast.front().params * ((2.0 + 4.0 * 4.0) - (2.0 + 2.0 * 2.0))));
  // ZeRO-2/3 reduce-scatter every micro-batch's gradients: no full-size pass.
  const Scenario zero2 = test::load("llama-3-8b-zero3-h100", {"training.framework=deepspeed", "parallelism.zero_stage=2",
                                                              "training.grad_precision=fp32"});
  const Scenario zero2_core = test::load("llama-3-8b-zero3-h100", {"training.framework=megatron-core",
                                                                   "parallelism.zero_stage=2", "training.grad_precision=fp32"});
  CHECK(work_of(zero2).front().bwd_bytes == Approx(work_of(zero2_core).front().bwd_bytes));
  // An offloaded optimizer is DeepSpeed's ZeRO optimizer, not BF16_Optimizer: autograd's add.
  const Scenario offloaded = test::load("llama-3-8b-zero3-h100", {"training.framework=deepspeed", "parallelism.zero_stage=1",
                                                                  "training.grad_precision=fp32", "memory.offload.optimizer=cpu"});
  CHECK(offloaded.training.behaviour.grad_accumulation == GradAccumulation::add);
  // The scenario's own choice wins over the preset's.
  const Scenario chosen = test::load("gpt3-175b-64-h100", {"training.framework=megatron-lm-2021",
                                                           "training.grad_accumulation=\"none\""});
  CHECK(chosen.training.behaviour.grad_accumulation == GradAccumulation::none);
}
