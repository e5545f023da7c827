// The `stepback` command-line program: dispatches `stepback <subcommand> [args...]`.
#include <cstdio>
#include <string>
#include <string_view>

#include "demo.hpp"
#include "get.hpp"
#include "schedule.hpp"
#include "stdio_guard.hpp"
#include "sim.hpp"
#include "stepback/profiles/active.hpp"
#include "upload.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

int schedule_main(int argc, char** argv) { return run_schedule(argc, argv, stdout, stderr); }

// A subcommand: `run` gets argv from its own name on (argv[0] == name), as main() would,
// and returns the exit code.
struct Subcommand {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
};

// Every subcommand; adding one is adding a row.
constexpr Subcommand kSubcommands[] = {
    {"schedule", schedule_main, "print the retry schedule a device profile yields"},
    {"sim", run_sim, "simulate a fleet of clients retrying against one server"},
    {"get", run_get, "make an HTTPS request, retried per the device profile"},
    {"demo", run_demo, "watch a retried request against a local HTTPS server: 503, 429, 200"},
    {"upload", run_upload, "upload a file with Google's resumable upload protocol"},
};

void print_usage(std::FILE* out) {
  std::fputs(
      "usage: stepback <command> [args...]\n"
      "       stepback help [<command>]\n"
      "       stepback --version\n"
      "\n"
      "Truncated exponential backoff for mobile and embedded HTTPS clients.\n"
      "\n"
      "commands:\n",
      out);
  for (const Subcommand& c : kSubcommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fputs("\nRun 'stepback <command> --help' for the options of one command.\n", out);
}

const Subcommand* find_subcommand(std::string_view name) {
  for (const Subcommand& c : kSubcommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int unknown_command(std::string_view name) {
  std::string allowed;
  for (const Subcommand& c : kSubcommands) allowed += std::string(c.name) + ", ";
  std::fprintf(stderr, "stepback: unknown command '%s' (allowed: %shelp, --version)\n",
               std::string(name).c_str(), allowed.c_str());
  return 2;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    if (command == "help" && argc > 2) {
      // `stepback help schedule` is `stepback schedule --help`.
      const Subcommand* sub = find_subcommand(argv[2]);
      if (sub == nullptr) return unknown_command(argv[2]);
      char help_flag[] = "--help";
      char* help_argv[] = {argv[2], help_flag, nullptr};
      return sub->run(2, help_argv);
    }
    print_usage(stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("stepback %s (profile %s)\n", STEPBACK_VERSION, profiles::active.name);
    return 0;
  }
  const Subcommand* sub = find_subcommand(command);
  if (sub == nullptr) return unknown_command(command);
  return sub->run(argc - 1, argv + 1);
}

}  // namespace
}  // namespace stepback::tools

int main(int argc, char** argv) {
  if (!stepback::tools::ensure_stdio_open()) return 1;
  stepback::tools::ignore_sigpipe();
  return stepback::tools::run(argc, argv);
}
