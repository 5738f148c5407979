#include "sim/config/policy_catalog.hpp"

#include <stdexcept>

#include "sim/config/checkpoint_policy.hpp"
#include "sim/config/framework.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

const PolicyCategory& PolicyCatalog::category(const std::string& name) const {
  for (const auto& c : categories_)
    if (c.name == name) return c;
  throw std::logic_error("unknown policy category " + name);
}

std::vector<std::string> PolicyCatalog::names(const std::string& category_name) const {
  std::vector<std::string> out;
  for (const auto& p : category(category_name).policies) out.push_back(p.name);
  return out;
}

void register_builtin_policies(PolicyCatalog& catalog) {
  catalog.add({"schedule", "parallelism.schedule", "pipeline schedule",
               {{to_string(Schedule::gpipe), "all forwards then all backwards; every micro-batch's activations in flight (Huang et al. 2019)"},
                {to_string(Schedule::one_f_one_b), "one-forward-one-backward (PipeDream-Flush); stage k holds p-k micro-batches (Narayanan et al. 2021)"},
                {to_string(Schedule::interleaved), "interleaved 1F1B over virtual_stages model chunks per GPU; bubble /v, activations x(1+(p-1)/(pv)) (Narayanan et al. 2021; Korthikanti et al. 2022)"}}});
  catalog.add({"pipeline_partition", "parallelism.pipeline_partition",
               "how blocks are split over pipeline stages (parallelism.pipeline_layers gives them explicitly)",
               {{to_string(PipelinePartitioning::uniform),
                 "equal block counts; spare blocks to the middle chunks, which hold neither the embedding nor the "
                 "LM head (Llama 3 §3.3.2)"},
                {to_string(PipelinePartitioning::balanced),
                 "contiguous blocks per chunk minimising the slowest chunk's forward + backward (+ recompute) "
                 "kernel time, the embedding counted on the first block and the LM head and loss on the last, "
                 "subject to every stage fitting in HBM (binary search over the bound with greedy packing)"}}});
  catalog.add({"recompute", "memory.recompute", "activation recomputation",
               {{to_string(Recompute::none), "save every activation for backward (Korthikanti et al. 2022, Eq. 1-4)"},
                {to_string(Recompute::selective), "recompute the attention core (softmax, its dropout) in backward; saves 5as^2b/t per layer"},
                {to_string(Recompute::full),
                 "keep only each layer's input and recompute the layer in backward (2sbh per layer); with "
                 "memory.recompute_layers N only the first N blocks of each model chunk, the others keeping "
                 "everything (Megatron-Core's block method)"}}});
  catalog.add({"zero_stage", "parallelism.zero_stage", "ZeRO data-parallel sharding (Rajbhandari et al. 2020)",
               {{"0", "plain data parallel: every replica holds all model states"},
                {"1", "P_os: optimizer states sharded over DP"},
                {"2", "P_os+g: optimizer states and gradients sharded over DP"},
                {"3", "P_os+g+p: parameters sharded too, gathered layer by layer"}}});
  catalog.add({"offload", "memory.offload.{optimizer,params,activations}", "where a state lives instead of HBM",
               {{"none", "keep it in HBM"},
                {"cpu", "host DRAM (ZeRO-Offload; vDNN for activations)"},
                {"nvme", "node-local NVMe SSDs (ZeRO-Infinity)"},
                {"cxl", "CXL-attached memory expander"}}});
  // Checkpoint strategies and drains are types: their names and docs come from them.
  PolicyCategory strategies{"checkpoint_strategy", "checkpoint.strategy", "how checkpoints are written", {}};
  for (const auto& [name, doc, params] : checkpoint_strategy_docs()) strategies.policies.push_back({name, doc, params});
  catalog.add(std::move(strategies));
  catalog.add({"checkpoint_drain", "checkpoint.drain", "how a tiered checkpoint's background hops drain",
               {{to_string(DrainPolicy::eager), "as fast as the links allow, sharing them fairly with training and "
                                                "the snapshot"},
                {to_string(DrainPolicy::congestion_aware), "hold data in the tier it reached while other traffic "
                                                           "uses the links (scavenger flows that yield to every "
                                                           "other flow)"}}});
  catalog.add({"checkpoint_tier", "checkpoint.tiers[]", "where checkpoint data can sit",
               {{"dram", "host DRAM"},
                {"cxl", "CXL memory"},
                {"local_ssd", "node-local NVMe"},
                {"object_store", "shared remote storage"}}});
  PolicyCategory frameworks{"framework", "training.framework",
                            "training framework preset (overrides: training.overlap_grad_reduce, overlap_param_gather, "
                            "overlap_tp_comm, tp_overlap_method, sequence_parallel_style, overlap_p2p_comm, "
                            "async_tp_backward, attention_kernel, fused_elementwise, grad_accumulation, grad_sync, "
                            "selective_recompute, cross_entropy, fp8_scaling, fp8_param_gather)",
                            {}};
  for (const auto& f : framework_docs()) frameworks.policies.push_back({to_string(f.framework), f.doc});
  catalog.add(std::move(frameworks));
  PolicyCategory attention{"attention_kernel", "training.attention_kernel",
                           "fused attention kernel (default from the framework preset)", {}};
  for (const auto& k : attention_kernel_docs()) attention.policies.push_back({to_string(k.kernel), k.doc});
  catalog.add(std::move(attention));
  catalog.add({"selective_recompute", "training.selective_recompute",
               "what memory.recompute selective keeps and reruns, as the framework implements it (default from the "
               "framework preset)",
               {{to_string(SelectiveRecompute::attention_core),
                 "Megatron's selective recompute (Korthikanti et al. 2022): keeps every activation but the attention "
                 "core's, which is rerun before the backward"},
                {to_string(SelectiveRecompute::every_other_matmul),
                 "PyTorch's per-op selective checkpointing as torchtitan applies it (selective_ac_option op): keeps "
                 "the block input, the attention kernel's output and every second matmul's output from the "
                 "block's first (wq, wv, w1, w2 of a gated block; wq, wv, w1 of a GeLU one); reruns the others and "
                 "every elementwise op before the backward; under TP with SP also the all-gathers of the block's "
                 "inputs, the reduce-scatters' outputs kept (bias-free dense blocks, standard attention, TP 1 or "
                 "with SP)"}}});
  catalog.add({"sequence_parallel_style", "training.sequence_parallel_style",
               "how sequence parallelism lays out the activations it shards and what the linears keep (default "
               "from the framework preset)",
               {{to_string(SequenceParallelStyle::megatron),
                 "Megatron's: [sequence, batch, hidden], each rank's shard contiguous, the collectives in place; "
                 "the column-parallel linears keep their input's sequence shard and all-gather it again in the "
                 "backward for the weight gradient (three all-reduce equivalents per block backward)"},
                {to_string(SequenceParallelStyle::dtensor),
                 "PyTorch DTensor's (torchtitan): [batch, sequence, hidden] sharded on dim 1; with a batch above 1 "
                 "each all-gather and reduce-scatter not fused by async TP copies the whole tensor into place once; "
                 "the column-parallel linears keep the gathered input (two all-reduce equivalents per block "
                 "backward, the input whole on every TP rank)"}}});
  catalog.add({"fp8_scaling", "training.fp8_scaling",
               "under fp8, how an activation's scale is found before it is cast (default from the framework "
               "preset)",
               {{to_string(Fp8Scaling::delayed),
                 "Transformer Engine's delayed scaling (NeMo 24.x): the scale from the amax history; a fused norm "
                 "writes fp8 directly, other operands one cast-transpose pass"},
                {to_string(Fp8Scaling::current),
                 "current scaling (Transformer Engine's FP8-CS, Megatron-Bridge; torchao's tensor-wise Float8, "
                 "torchtitan): the tensor's amax first, a pass of its own (a fused norm computes it while writing "
                 "16 bits, which a second kernel casts)"}}});
  catalog.add({"tp_overlap_method", "training.tp_overlap_method",
               "how training.overlap_tp_comm pipelines the TP collectives with the GEMMs (default from the framework "
               "preset)",
               {{to_string(TpOverlapMethod::userbuffers),
                 "Transformer Engine's userbuffers (Megatron-Core tp_comm_overlap): each GEMM and its collective cut "
                 "into one slice per TP rank in every pass, forward, recomputation and backward, all but the last "
                 "slice hidden; the communication kernels hold SMs the GEMMs lose"},
                {to_string(TpOverlapMethod::async_tp),
                 "PyTorch's async TP (torch.compile's micro-pipeline TP, torchtitan enable_async_tensor_parallel): "
                 "the forward's and the recomputation's all-gathers and reduce-scatters pipelined the same way on "
                 "copy engines (no SMs held), each fused op with a pass over memory of its own (the shard copied "
                 "into symmetric memory, the partial outputs summed); the backward's block, as measured "
                 "(docs/references.md)"}}});
  catalog.add({"cross_entropy", "training.cross_entropy",
               "how the loss's softmax cross-entropy runs: its passes over the logits and what it holds while it "
               "runs (default from the framework preset)",
               {{to_string(CrossEntropy::vocab_parallel),
                 "Megatron's vocab-parallel cross-entropy as eager kernels (Megatron-LM's default): casts the "
                 "logits to fp32, then max, shift, exp, sum and normalise, one pass each, in place on that copy, "
                 "kept as the softmax (38 bytes per 16-bit logit forward, 14 backward); only the 16-bit logits "
                 "are transient (2 bytes per logit; none for fp32 logits)"},
                {to_string(CrossEntropy::vocab_parallel_fused),
                 "the same compiled into three kernels (Megatron-Core --cross-entropy-loss-fusion; NeMo 2.0 and "
                 "Megatron-Bridge turn it on): cast with max, shift with exp and sum, normalise (22 bytes per "
                 "16-bit logit forward, 10 backward); the same transient"},
                {to_string(CrossEntropy::pytorch),
                 "PyTorch's F.cross_entropy on logits.float() (torchtitan, transformers): the cast, then "
                 "log_softmax's three reads and a write to a new fp32 tensor (22 bytes per 16-bit logit forward, "
                 "26 backward with nll_loss's dense gradient); the 16-bit logits and the fp32 copy are transient "
                 "(6 bytes per logit; 4 for fp32 logits)"},
                {to_string(CrossEntropy::single_kernel),
                 "one CUDA kernel each way on the 16-bit logits (flash-attn's CrossEntropyLoss over apex's xentropy: "
                 "llm-foundry's loss_fn fused_crossentropy): forward reads them twice (max, sum of exp), backward "
                 "reads them and writes the gradient (8 bytes per 16-bit logit); keeps the 16-bit logits, no fp32 "
                 "copy"}}});
  catalog.add({"grad_accumulation", "training.grad_accumulation",
               "how each micro-batch's weight gradients reach the buffer the step reduces, below ZeRO-2 or with "
               "grad_sync last-microbatch (default from the framework preset; add under last-microbatch where the "
               "preset has none)",
               {{to_string(GradAccumulation::none), "no pass of its own: accumulated in the weight-gradient GEMM "
                                                    "(Megatron's gradient_accumulation_fusion, Megatron-Core)"},
                {to_string(GradAccumulation::add), "one elementwise add per weight and micro-batch (Megatron-LM "
                                                   "2021's local-DDP hook, PyTorch autograd): gradient read, buffer "
                                                   "read and written"},
                {to_string(GradAccumulation::cast_add), "cast to an fp32 temporary, then added (DeepSpeed's "
                                                        "BF16_Optimizer): 2 + 4 x 4 = 18 B per parameter"}}});
  catalog.add({"grad_sync", "training.grad_sync",
               "when gradients partitioned over DP (ZeRO-2/3) are reduced across a step's micro-batches (default "
               "every-microbatch)",
               {{to_string(GradientSync::every_microbatch), "each micro-batch's gradients reduce-scattered into the "
                                                            "shards during its backward (DeepSpeed ZeRO-2/3, FSDP)"},
                {to_string(GradientSync::last_microbatch), "no sync before the last micro-batch (FSDP no_sync, "
                                                           "Lightning's no_backward_sync): each rank accumulates the "
                                                           "whole unsharded gradient (an add per weight and "
                                                           "micro-batch), reduce-scattered once after the last "
                                                           "micro-batch"}}});
  catalog.add({"failure_law", "failures.distribution", "time between failures",
               {{to_string(FailureDistribution::exponential), "memoryless failures at rate 1/MTBF"},
                {to_string(FailureDistribution::weibull), "Weibull with the given shape, scaled to the MTBF"}}});
}

const PolicyCatalog& policy_catalog() {
  static const PolicyCatalog catalog = [] {
    PolicyCatalog c;
    register_builtin_policies(c);
    return c;
  }();
  return catalog;
}

}  // namespace strata
