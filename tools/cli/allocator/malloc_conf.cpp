// jemalloc's options, read by jemalloc when the process starts (the `malloc_conf` global of its
// manual; MALLOC_CONF in the environment still overrides them). Linked only when CMake's
// STRATA_JEMALLOC is on.
//
// Why: a DES of a large job touches tens to hundreds of MB once (GPT-3 175B on 1,024 GPUs: 120,000
// tasks, about 90 MB), and on virtual machines first-touch page faults are expensive: with 4 KiB
// pages that run took 27,000 faults and a fifth of its time in the kernel. thp:always backs jemalloc's
// extents with transparent huge pages (madvise(MADV_HUGEPAGE), which works where the system's THP
// mode is `madvise`, Debian's default), cutting the faults about sixfold (BENCHMARKS.md).
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): the name and type are jemalloc's ABI
const char* malloc_conf = "thp:always,metadata_thp:auto";
}
