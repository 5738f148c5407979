// DeepSpeed's memory estimators (docs/references.md, DeepSpeed memory estimators):
//   ZeRO-3 (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs):
//     offload params+optimizer: gpu = 4·LLP;            cpu = 18·P·abf / nodes (zero_init)
//     offload optimizer:        gpu = 4·LLP + 2P/N;     cpu = 16·P·abf / nodes (zero_init)
//     no offload:               gpu = 4·LLP + 18P/N
//   ZeRO-2 (stage_1_and_2.py) with optimizer offload: gpu = 2P.
// with LLP the largest layer's parameters and abf = 1.5. Printed examples are GiB labelled "GB".
//
// Where Strata deliberately differs, and why:
//   * CPU memory without zero_init (P·max(4·gpus_per_node, …)): that term is every process loading a
//     full fp32 copy of the model at start-up. Strata models steady-state training, not loading.
//   * ZeRO-3 "no offload" CPU memory (L·4·gpn): initialisation-time buffers, not training state.
//   * ZeRO-2 without offload (2P + 18P/N today, 4P + 16P/N in older versions): the estimator keeps a
//     16-bit gradient partition beside the fp32 one; Strata follows the ZeRO paper (2Ψ + 14Ψ/N with
//     16-bit gradients, Table 1 test) and counts gradients once, in grad_precision.

#include <catch2/catch.hpp>

#include "support.hpp"

using namespace strata;

namespace {

constexpr double kAbf = 1.5;  // DeepSpeed additional_buffer_factor default

// A decoder shaped like bigscience/T0_3B for the estimator's purposes: 2783M parameters whose
// largest layer is the 32128×2048 embedding (65.8M), as in the HF DeepSpeed docs' printout.
nlohmann::json t0_3b_like() {
  return {{"name", "t0-3b-like"}, {"hidden_size", 2048},  {"num_hidden_layers", 24},
          {"num_attention_heads", 32}, {"intermediate_size", 22872}, {"vocab_size", 32128},
          {"hidden_act", "relu"},     {"norm", "layernorm"}, {"tie_word_embeddings", false}};
}

// t5-3b for the ZeRO-2 example: 2851M parameters (memory.rst).
nlohmann::json t5_3b_like() {
  auto m = t0_3b_like();
  m["intermediate_size"] = 23565;
  return m;
}

struct Estimate {
  double gpu = 0.0, cpu = 0.0, params = 0.0, largest = 0.0;
};

Estimate strata_estimate(const nlohmann::json& model, int gpus, int zero, const char* opt, const char* params) {
  nlohmann::json doc = {
      {"model", model},
      {"hardware", "dgx-a100-80g"},
      {"gpus", gpus},
      {"training",
       {{"seq_len", 1024}, {"micro_batch_size", 1}, {"global_batch_size", gpus}, {"precision", "fp16"},
        {"grad_precision", "fp32"}}},
      {"parallelism", {{"zero_stage", zero}}},
      {"memory", {{"offload", {{"optimizer", opt}, {"params", params}, {"host_buffer_factor", kAbf}}}}}};
  Scenario sc = test::load_inline(doc);
  RunResult r = run_scenario(sc);
  const auto& st = r.memory.stages.at(0);
  Estimate e;
  // The estimator counts model states and ZeRO's gathered working set, not activations (nor the
  // loss's transient logits) or buffers.
  e.gpu = st.hbm.params + st.hbm.gradients + st.hbm.optimizer + st.hbm.workspace - st.transient;
  e.cpu = r.memory.tiers.at(Tier::dram).peak_per_node;
  e.params = r.parameters;
  // Largest op: the embedding, V·h.
  e.largest = static_cast<double>(sc.model.vocab_size) * static_cast<double>(sc.model.hidden_size);
  return e;
}

}  // namespace

TEST_CASE("Strata reproduces DeepSpeed's ZeRO-3 estimator formulas at its own P and LLP", "[validation][deepspeed]") {
  test::Comparison table("DeepSpeed ZeRO-3 estimator formulas (Strata's own P and LLP)", "GiB");
  for (int gpus : {1, 2, 8}) {
    Estimate both = strata_estimate(t0_3b_like(), gpus, 3, "cpu", "cpu");
    Estimate opt = strata_estimate(t0_3b_like(), gpus, 3, "cpu", "none");
    Estimate none = strata_estimate(t0_3b_like(), gpus, 3, "none", "none");
    const double P = both.params, LLP = both.largest, N = gpus;
    table.add(fmt::format("{} GPU offload both: gpu", gpus), 4 * LLP / kGiB, both.gpu / kGiB);
    table.add(fmt::format("{} GPU offload both: cpu", gpus), 18 * P * kAbf / kGiB, both.cpu / kGiB);
    table.add(fmt::format("{} GPU offload optimizer: gpu", gpus), (4 * LLP + 2 * P / N) / kGiB, opt.gpu / kGiB);
    table.add(fmt::format("{} GPU offload optimizer: cpu", gpus), 16 * P * kAbf / kGiB, opt.cpu / kGiB);
    table.add(fmt::format("{} GPU no offload: gpu", gpus), (4 * LLP + 18 * P / N) / kGiB, none.gpu / kGiB);
  }
  table.print();
  CHECK(table.max_error() < 1e-9);
}

TEST_CASE("DeepSpeed's printed estimator examples are reproduced within 1 %", "[validation][deepspeed]") {
  test::Comparison table("DeepSpeed estimator printouts (HF DeepSpeed docs; memory.rst)", "GiB");
  Estimate b1 = strata_estimate(t0_3b_like(), 1, 3, "cpu", "cpu");
  Estimate o1 = strata_estimate(t0_3b_like(), 1, 3, "cpu", "none");
  Estimate n1 = strata_estimate(t0_3b_like(), 1, 3, "none", "none");
  Estimate b2 = strata_estimate(t0_3b_like(), 2, 3, "cpu", "cpu");
  Estimate o2 = strata_estimate(t0_3b_like(), 2, 3, "cpu", "none");
  Estimate n2 = strata_estimate(t0_3b_like(), 2, 3, "none", "none");
  std::cout << fmt::format("T0_3B-like model: {:.1f}M parameters, largest layer {:.1f}M\n", b1.params / 1e6,
                           b1.largest / 1e6);
  REQUIRE(b1.params == Approx(2783e6).epsilon(0.001));
  table.add("T0_3B ZeRO-3 1 GPU offload both: cpu", 70.00, b1.cpu / kGiB);
  table.add("T0_3B ZeRO-3 1 GPU offload both: gpu", 0.25, b1.gpu / kGiB);
  table.add("T0_3B ZeRO-3 1 GPU offload opt: cpu", 62.23, o1.cpu / kGiB);
  table.add("T0_3B ZeRO-3 1 GPU offload opt: gpu", 5.43, o1.gpu / kGiB);
  table.add("T0_3B ZeRO-3 1 GPU no offload: gpu", 46.91, n1.gpu / kGiB);
  table.add("T0_3B ZeRO-3 2 GPU offload both: cpu", 70.00, b2.cpu / kGiB);
  table.add("T0_3B ZeRO-3 2 GPU offload opt: cpu", 62.23, o2.cpu / kGiB);
  table.add("T0_3B ZeRO-3 2 GPU offload opt: gpu", 2.84, o2.gpu / kGiB);
  table.add("T0_3B ZeRO-3 2 GPU no offload: gpu", 23.58, n2.gpu / kGiB);
  Estimate z2 = strata_estimate(t5_3b_like(), 8, 2, "cpu", "none");
  REQUIRE(z2.params == Approx(2851e6).epsilon(0.001));
  table.add("t5-3b ZeRO-2 8 GPUs offload opt: gpu", 5.31, z2.gpu / kGiB);
  table.print();
  // The printed 0.25 GiB has two significant digits: compare it at its printed resolution.
  for (const auto& row : table.rows()) {
    INFO(row.label);
    if (row.source < 1.0) CHECK(std::fabs(row.strata - row.source) < 0.01);
    else CHECK(test::Comparison::error(row.source, row.strata) < 0.01);
  }
}
