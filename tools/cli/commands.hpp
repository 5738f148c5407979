#pragma once

/// The CLI's subcommands. Each returns the process exit code: 0 done, 2 invalid input.

#include <string>
#include <vector>

#include "sim/config/folder_catalog.hpp"

namespace strata::cli {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json_out;  ///< "" none, "-" stdout
  bool quiet = false;
  std::string executor = "des";
  bool no_fold = false;
  std::string trace_out;  ///< "" none
};

int run_command(const FolderCatalog& catalog, const RunOptions& options);
int describe_command(const FolderCatalog& catalog, const std::string& what);

/// Prints an InputError's diagnostics to stderr, one per line.
void print_input_error(const std::exception& e);

}  // namespace strata::cli
